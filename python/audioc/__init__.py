"""audio.c from Python: speech recognition, voice activity detection and
voice generation on the CPU, over the shared library libaudioc.

    import audioc
    with audioc.Model("models/hviske-tiny-da") as asr:
        print(asr.transcribe("speech.flac").text)

Audio goes in as a file path, the bytes of a file, or a numpy array with its
rate; audio comes out as Audio(samples, rate), float32 mono. Errors raise
AudiocError subclasses carrying the library's message. The library is
found at the path given to use_library(), at $AUDIOC_LIBRARY, through
`pkg-config audioc`, or on the usual library path; its log messages go to
the "audioc" logger."""
from ._audio import Audio, load_audio
from ._lib import (ArgumentError, AudiocError, AudioIOError, Cancelled, FormatError, LibraryNotFound, ModelError,
                   UnsupportedError, use_library)
from ._model import Model, Segment, SpeechSegment, Transcription, VadResult, Word

__all__ = ["Audio", "load_audio", "Model", "Segment", "SpeechSegment", "Transcription", "VadResult", "Word",
           "AudiocError", "ArgumentError", "AudioIOError", "Cancelled", "FormatError", "LibraryNotFound",
           "ModelError", "UnsupportedError", "use_library", "library_version"]


def library_version() -> str:
    """The version of the loaded libaudioc (ac_version)."""
    from ._lib import version
    return version()


def __getattr__(name: str):
    # __version__ is the library's, read when first asked for (importing needs no library)
    if name == "__version__":
        return library_version()
    raise AttributeError(f"module 'audioc' has no attribute {name!r}")
