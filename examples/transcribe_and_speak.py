"""Transcribes an audio file, then says a sentence in a voice, with the
audioc Python package (python/).

    python3 transcribe_and_speak.py ASR_MODEL AUDIO [VOICE_MODEL VOICE TEXT OUT.wav]

ASR_MODEL: e.g. models/hviske-tiny-da; VOICE_MODEL: a Vevo2 package;
VOICE: a few seconds of the voice to speak in."""
import sys
import wave

import numpy as np

import audioc


def main(argv):
    if len(argv) not in (3, 7):
        sys.exit(__doc__)
    print(f"audio.c {audioc.__version__}")
    with audioc.Model(argv[1]) as asr:
        for segment in asr.transcribe(argv[2]).segments:
            print(f"[{segment.start:.2f} - {segment.end:.2f}] {segment.text}")
    if len(argv) == 7:
        with audioc.Model(argv[3]) as voice_model:
            samples, rate = voice_model.speak(argv[5], voice=argv[4])
        with wave.open(argv[6], "wb") as w:   # 16-bit PCM with the standard library
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
        print(f"{argv[6]}: {len(samples) / rate:.2f} s at {rate} Hz")


if __name__ == "__main__":
    main(sys.argv)
