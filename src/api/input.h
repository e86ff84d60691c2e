/* What the public calls share: versioned structs and audio inputs. */
#ifndef AC_API_INPUT_H
#define AC_API_INPUT_H

#include "audio/reader.h"

/* DST (FULL bytes, already holding the defaults) takes the first
 * SRC->struct_size bytes of SRC: fields a caller's older header lacks keep
 * their defaults. AC_ERR_ARG when struct_size is 0 (the struct was not
 * filled by its _default function) or too small to hold struct_size. WHAT
 * names the struct in messages. */
ac_status ac_struct_take(void *dst, size_t full, const void *src, const char *what);

/* Opens IN as a mono stream at RATE. */
ac_status ac_input_open(const ac_audio_input *in, int rate, ac_audio_reader **r);
/* The whole of IN as mono at RATE (0: its own) in *OUT (*N samples, free()
 * it), or its first KEEP_S seconds when KEEP_S > 0 (the rest is not
 * read); more than MAX_S seconds kept (0: no limit) is an error. INFO may
 * be NULL. */
ac_status ac_input_read_all(const ac_audio_input *in, int rate, double max_s, double keep_s, float **out, int64_t *n,
                            ac_audio_info *info);
/* S, with a file input's path in front of the message (once). */
ac_status ac_input_error(const ac_audio_input *in, ac_status s);

#endif
