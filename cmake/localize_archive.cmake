# libaudioc.a as one object whose only global symbols are the ac_* ones:
# OBJECTS partially linked (cc -r) into OUT's folder, every other global
# symbol they define made local (objcopy), and the object archived as OUT.
# Calls between the library's files were resolved by the partial link, so
# the internal names need not be global to work; references to the
# libraries audioc.pc names (cblas_sgemm, sf_open, ...) stay undefined.
get_filename_component(dir ${OUT} DIRECTORY)
set(obj ${dir}/libaudioc.o)
execute_process(COMMAND ${CC} -r -nostdlib -o ${obj} ${OBJECTS} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "partial link of libaudioc.o failed")
endif()
execute_process(COMMAND ${OBJCOPY} --wildcard --keep-global-symbol=ac_* ${obj} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "objcopy --keep-global-symbol=ac_* libaudioc.o failed")
endif()
file(REMOVE ${OUT})
execute_process(COMMAND ${AR} rcs ${OUT} ${obj} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "ar rcs libaudioc.a failed")
endif()
