"""Speech with the true start of every word: espeak-ng's library (libespeak-ng, the one the
espeak-ng program runs; its samples are the program's) reports a word event at the sample where
it begins synthesizing each word. synth.py records them (training aligns the decoder's
cross-attention with them) and tests check word timestamps against them."""
import ctypes

import numpy as np

RATE, VOLUME, PITCH, WORDGAP = 1, 2, 3, 7  # espeak_PARAMETER
EVENT_END, EVENT_WORD = 0, 1              # espeakEVENT_LIST_TERMINATED, espeakEVENT_WORD
SYNCHRONOUS, POS_CHARACTER, CHARS_UTF8 = 2, 1, 1


class Event(ctypes.Structure):            # espeak_EVENT
    _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint), ("text_position", ctypes.c_int),
                ("length", ctypes.c_int), ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", ctypes.c_char * 8)]


Callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(Event))


class Speaker:
    def __init__(self):
        self.lib = ctypes.CDLL("libespeak-ng.so.1")
        self.rate = self.lib.espeak_Initialize(SYNCHRONOUS, 0, None, 0)
        if self.rate <= 0:
            raise RuntimeError("espeak-ng: initialization failed")
        self.pcm, self.starts = [], []
        self.callback = Callback(self._collect)   # kept alive as long as the library may call it
        self.lib.espeak_SetSynthCallback(self.callback)

    def _collect(self, wav, n, events):
        if n > 0:
            self.pcm.append(np.ctypeslib.as_array(wav, (n,)).copy())
        i = 0
        while events[i].type != EVENT_END:
            if events[i].type == EVENT_WORD:
                self.starts.append((events[i].text_position, events[i].sample))
            i += 1
        return 0

    def say(self, text, voice="da", speed=160, pitch=50, gap=0, amp=100):
        """-> (int16 samples at self.rate, the first sample of each word of TEXT.split()); the
        espeak-ng program with -v VOICE -s SPEED -p PITCH -g GAP -a AMP gives the same samples (and
        some silence after). Word events are matched to the words by their character position:
        the library may report a stray one (after a word gap, at the end)."""
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise RuntimeError(f"espeak-ng: no voice {voice}")
        for p, v in ((RATE, speed), (PITCH, pitch), (WORDGAP, gap), (VOLUME, amp)):
            self.lib.espeak_SetParameter(p, v, 0)
        self.pcm, self.starts = [], []
        b = text.encode()
        if self.lib.espeak_Synth(b, len(b) + 1, 0, POS_CHARACTER, 0, CHARS_UTF8, None, None) != 0:
            raise RuntimeError(f"espeak-ng: cannot say {text!r}")
        self.lib.espeak_Synchronize()
        pcm = np.concatenate(self.pcm) if self.pcm else np.zeros(0, np.int16)
        at = {}
        for pos, sample in self.starts:
            at.setdefault(pos, sample)
        starts, pos = [], 0
        for w in text.split():
            pos = text.index(w, pos)
            if pos + 1 not in at:   # positions count characters from 1
                raise RuntimeError(f"espeak-ng: no word event for {w!r} in {text!r}")
            starts.append(at[pos + 1])
            pos += len(w)
        return pcm, starts
