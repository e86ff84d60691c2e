#!/usr/bin/python3
"""Check the cohere_asr reference against itself and against SentencePiece.

usage: selftest.py --tokenizer tokenizer.model [--base-config config.json] [--audio WAV ...]

Builds a tiny package (make_tiny, seed 0) in a temporary folder and checks:
 a) rel-position attention by direct i-j indexing == the rel-shift trick (with padding)
 b) greedy == beam search with B=1 (§4.5 makes them the same) on synthetic + given audio
 c) detokenization == sentencepiece DecodeIds on NORMAL/BYTE id lists, the spec example
 d) prompt ids of the real tokenizer (da, pnc / nopnc, 10 and 9 tokens)
 e) the real base config.json parses (vocab_size / min_energy_window_samples defaulted)
 plus: safetensors round trip, frontend vs a plain numpy STFT, stored vs computed mel
 matrix and window, padded query rows, sampling distribution, the §5 splitter.
Exit status 0 when every check passes.
"""
import argparse
import json
import math
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cohere_ref as ref  # noqa: E402
import make_tiny  # noqa: E402
import st_io  # noqa: E402

torch.set_num_threads(1)
FAILED = []


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")
    if not ok:
        FAILED.append(name)


def synth(seconds, seed=0, sr=16000):
    """Deterministic 'speech-like' test signal: gliding tones + noise bursts."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(round(seconds * sr))) / sr
    x = 0.2 * np.sin(2 * np.pi * (200 + 150 * np.sin(2 * np.pi * 1.3 * t)) * t)
    x += 0.1 * np.sin(2 * np.pi * 1100 * t) * (np.sin(2 * np.pi * 2.1 * t) > 0)
    x += 0.03 * rng.standard_normal(t.shape)
    return np.round(x * 32767) / 32768.0                       # 16-bit PCM values


def test_safetensors(tmp):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    tensors = {"a": a, "h": ("F16", a.astype(np.float16)), "b": ("BF16", a),
               "n": np.array(7, dtype=np.int64), "odd": rng.standard_normal(3).astype(np.float32)}
    path = os.path.join(tmp, "t.safetensors")
    st_io.save(path, tensors, {"format": "pt"})
    back, dt, meta = st_io.load(path, with_dtypes=True)
    with open(path, "rb") as f:
        hlen = int.from_bytes(f.read(8), "little")
    bf = st_io.bf16_bits_to_f32(st_io.f32_to_bf16_bits(a))
    ok = (hlen % 8 == 0 and meta == {"format": "pt"} and np.array_equal(back["a"], a)
          and np.array_equal(back["h"], a.astype(np.float16)) and np.array_equal(back["b"], bf)
          and back["n"].shape == () and int(back["n"]) == 7 and dt["b"] == "BF16"
          and np.abs(bf - a).max() <= np.abs(a).max() * 2 ** -8)
    # torch's own bf16 rounding must agree with ours (round to nearest even)
    tb = torch.from_numpy(a).to(torch.bfloat16).to(torch.float32).numpy()
    check("safetensors round trip (F32/F16/BF16/I64, padded header, metadata)", ok and np.array_equal(tb, bf))


def test_frontend(model):
    cfg = model.cfg
    x = synth(1.234, 1)
    feat, t_valid = model.features(x)
    # Plain numpy STFT: zero-pad 256 both sides, 400-sample Hann centred in the 512 frame.
    y = np.concatenate([x[:1], x[1:] - 0.97 * x[:-1]])
    yp = np.pad(y, (256, 256))
    n_frames = 1 + len(x) // 160
    w512 = np.zeros(512)
    w512[56:456] = model.window.numpy()                       # the stored (float32) values
    frames = np.stack([yp[t * 160:t * 160 + 512] * w512 for t in range(n_frames)])
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    logm = np.log(model.fb.numpy()[0] @ power.T + 2.0 ** -24)
    v = logm[:, :t_valid]
    norm = (v - v.mean(1, keepdims=True)) / (v.std(1, ddof=1, keepdims=True) + 1e-5)
    err = np.abs(feat[:, :t_valid].numpy() - norm).max()
    # Own Slaney matrix + Hann when the package has no frontend tensors (float32 rounding apart).
    feat_own, _ = ref.frontend(x, cfg)
    own_err = float((feat_own - feat).abs().max())
    pad_ok = (feat.shape[1] % 16 == 0 and feat.shape[1] >= n_frames
              and float(feat[:, t_valid:].abs().max()) == 0.0)
    check("frontend == numpy STFT/mel/log/normalize", err < 1e-9 and pad_ok,
          f"max err {err:.2e}, T_valid {t_valid}, T_feat {feat.shape[1]}")
    check("frontend: computed fb/window ~ stored", own_err < 1e-4, f"max diff {own_err:.1e}")
    fb_err = np.abs(model.fb.numpy()[0] - ref.slaney_mel()).max()
    win_err = np.abs(model.window.numpy() - ref.hann_symmetric(400)).max()
    check("stored fb / window == computed (float32 rounding)", fb_err < 1e-8 and win_err < 1e-7,
          f"{fb_err:.1e} / {win_err:.1e}")
    # The fb has no empty filter (each filter has a positive peak).
    check("mel filters all non-empty", bool((ref.slaney_mel().max(axis=1) > 0).all()))
    # One-frame clip: std falls back to 1e-5, so the single valid frame becomes 0.
    f1, tv1 = ref.frontend(np.ones(319) * 0.1, cfg)
    check("T_valid = 1 clip", tv1 == 1 and float(f1.abs().max()) == 0.0)


def test_rel_attention(model):
    cfg, w = model.cfg, model.w
    rng = np.random.default_rng(3)
    t, n_valid = 13, 9
    x = torch.from_numpy(rng.standard_normal((t, cfg.d_model)))
    pe = ref.rel_pos_table(t, cfg.d_model, x.dtype)
    p = "encoder.layers.0.self_attn."
    direct = ref.rel_attention(x, pe, w, p, cfg.n_heads, n_valid, use_rel_shift=False)
    shifted = ref.rel_attention(x, pe, w, p, cfg.n_heads, n_valid, use_rel_shift=True)
    err = float((direct - shifted).abs().max())
    check("rel attention: direct i-j indexing == rel-shift trick", err < 1e-12, f"max diff {err:.1e}")
    pad_rows = direct[n_valid:] - w[p + "linear_out.bias"]
    check("padded query rows == linear_out.bias", float(pad_rows.abs().max()) < 1e-12)
    # Whole encoder both ways, on a clip with padded encoder frames (L = 32000 -> T3 26, valid 25).
    x2 = synth(2.0, 2)
    keep_a, keep_b = {}, {}
    model.encode(x2, keep_a, use_rel_shift=False)
    model.encode(x2, keep_b, use_rel_shift=True)
    err2 = float((keep_a["encoder_proj"] - keep_b["encoder_proj"]).abs().max())
    t3, t3v = keep_a["encoder_proj"].shape[0], ref.conv_len(ref.conv_len(ref.conv_len(200)))
    check("encoder: direct == rel-shift", err2 < 1e-12 and (t3, t3v) == (26, 25),
          f"max diff {err2:.1e}, T3 {t3}, T3_valid {t3v}")
    # Valid rows must not depend on how much zero padding follows (pad_to 16 vs 64).
    cfg64 = ref.Config.__new__(ref.Config)
    cfg64.__dict__.update(cfg.__dict__)
    cfg64.pad_to = 64
    feat, tv = ref.frontend(x2, cfg64, model.fb, model.window)
    enc64, n3 = ref.encode(feat, tv, w, cfg64)
    err3 = float((enc64[:n3] - keep_a["encoder_proj"][:n3]).abs().max())
    check("valid encoder rows independent of padding length", err3 < 1e-10 and enc64.shape[0] == 32,
          f"max diff {err3:.1e}")


def test_greedy_vs_beam1(model, waves):
    prompt = model.tok.prompt("da")
    eos = model.cfg.eos_id
    for name, x in waves:
        enc, _, n3 = model.encode(x)
        dec = model.decoder(enc, n3)
        g, margins, _ = ref.greedy(dec, prompt, 40, eos)
        b = ref.beam_search(dec, prompt, 40, eos, 1)
        check(f"greedy == beam(B=1) [{name}]", g == b["ids"],
              f"{len(g)} ids, stopped on eos: {len(margins) > len(g)}")


def test_detok(tok, sp):
    rng = np.random.default_rng(7)
    normal = [i for i, t in enumerate(tok.types) if t == ref.NORMAL]
    byte = [i for i, t in enumerate(tok.types) if t == ref.BYTE]
    bad = 0
    for trial in range(400):
        n = int(rng.integers(1, 20))
        pool = byte if trial % 4 == 0 else normal + byte * (trial % 2)
        ids = [int(v) for v in rng.choice(pool, n)]
        if tok.decode_raw(ids) != sp.DecodeIds(ids):
            bad += 1
            if bad < 4:
                print("   mismatch", ids, repr(tok.decode_raw(ids)), repr(sp.DecodeIds(ids)))
    # Valid multi-byte UTF-8 spelled with byte pieces, and invalid leftovers.
    for text in ["går", "æøå ÆØÅ", "€", "😀x", "日本"]:
        ids = [byte[0] + b for b in text.encode("utf-8")]
        bad += tok.decode_raw(ids) != sp.DecodeIds(ids) or tok.decode(ids) != text
    for raw in [b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xff\xfe", b"\xed\xa0\x80", b"\xc0\xaf", b"a\x80b"]:
        ids = [byte[0] + b for b in raw]
        if tok.decode_raw(ids) != sp.DecodeIds(ids):
            bad += 1
            print("   mismatch", raw, repr(tok.decode_raw(ids)), repr(sp.DecodeIds(ids)))
    check("detokenize == sentencepiece DecodeIds (NORMAL/BYTE lists)", bad == 0, f"{bad} mismatches")
    ex = [1247, 13794, 1574, 2577, 13784, 532, 13787, 853, 526, 549, 450, 420, 13772, 3491, 13819]
    got = tok.decode(ex)
    check("spec example ids -> 'Hej med dig, hvordan går det?'", got == "Hej med dig, hvordan går det?", repr(got))
    check("lone byte piece -> U+FFFD", tok.decode([byte[0] + 0xC3]) == "\ufffd")
    specials = [0, 1, 2, 3, 5, 58, 13764]
    check("special ids dropped", tok.decode(specials + ex[:3] + specials) == tok.decode(ex[:3]),
          repr(tok.decode(specials + ex[:3])))


def test_prompt(tok, sp):
    pnc, nopnc = tok.prompt("da", True), tok.prompt("da", False)
    check("prompt da+pnc", pnc == [13764, 7, 4, 16, 58, 58, 5, 9, 11, 13], str(pnc))
    check("prompt da+nopnc", nopnc == [13764, 7, 4, 16, 58, 58, 6, 9, 11, 13], str(nopnc))
    check("prompt 9-token form", tok.prompt("da", True, False) == pnc[1:])
    check("prompt en", tok.prompt("en")[4:6] == [62, 62])
    text = "<|startofcontext|><|startoftranscript|><|emo:undefined|><|da|><|da|><|pnc|><|noitn|><|notimestamp|><|nodiarize|>"
    check("prompt == sentencepiece Encode(prompt text)", sp.EncodeAsIds(text) == pnc)
    pieces_ok = all(tok.pieces[i] == sp.IdToPiece(i) for i in range(len(tok)))
    check("piece table == sentencepiece", pieces_ok and len(tok) == sp.GetPieceSize() == 16384)


def test_base_config(path, n_pieces):
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    cfg = ref.Config(raw, None, n_pieces)
    ok = (cfg.vocab_size == 16384 and cfg.min_energy_window_samples == 1600 and cfg.d_model == 1280
          and cfg.n_layers == 48 and cfg.dec_hidden == 1024 and cfg.win_length == 400 and cfg.hop == 160
          and cfg.max_audio_clip_s == 35 and cfg.overlap_chunk_second == 5 and cfg.head_log_softmax
          and "vocab_size" not in raw and "min_energy_window_samples" not in raw)
    check("real base config.json parses with defaults", ok,
          f"vocab {cfg.vocab_size}, energy window {cfg.min_energy_window_samples}, langs {cfg.supported_languages}")


def test_sampling():
    rng = np.random.default_rng(11)
    x = rng.standard_normal(1000) * 3
    p = ref.sampling_distribution(x, 0.8, 20, 0.9)
    order = np.argsort(-x)
    q = np.exp(x[order[:20]] / 0.8)
    q /= q.sum()
    n = int(np.argmax(np.cumsum(q) >= 0.9)) + 1
    want = np.zeros(1000)
    want[order[:n]] = q[:n] / q[:n].sum()
    full = ref.sampling_distribution(x, 1.0, 0, 1.0)
    soft = np.exp(x - x.max())
    soft /= soft.sum()
    one = ref.sampling_distribution(x, 1.0, 50, 1e-9)
    check("sampling distribution (top-k, T, top-p)",
          np.allclose(p, want, atol=1e-15) and np.allclose(full, soft) and (one > 0).sum() == 1
          and abs(p.sum() - 1) < 1e-12, f"kept {n}")


def test_splitter(cfg):
    sr = 16000
    x = synth(7.3, 4)
    x[int(4.1 * sr):int(4.5 * sr)] = 0.0                      # a silent gap the split should find
    spans = ref.split_audio(x, cfg)
    contiguous = spans[0][0] == 0 and spans[-1][1] == len(x) and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    chunk = int(cfg.max_audio_clip_s * sr)
    sizes_ok = all(0 < e - s <= chunk for s, e in spans)
    in_gap = any(int(4.1 * sr) <= s < int(4.5 * sr) for s, _ in spans[1:])
    check("splitter: contiguous, <= max_audio_clip_s, finds the silent gap",
          contiguous and sizes_ok and in_gap, str(spans))
    short = ref.split_audio(x[:int(1.9 * sr)], cfg)
    check("splitter: <= clip - overlap is one span", short == [(0, int(1.9 * sr))])
    # digital silence: every window ties, the first minimum wins
    z = np.zeros(int(5 * sr))
    check("splitter: ties pick the first window", ref.split_audio(z, cfg)[0] == (0, 32000))
    check("joiner", ref.join_texts([" a ", "", "  ", "b"], "da") == "a b"
          and ref.join_texts(["a", "b"], "ja") == "ab")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokenizer", required=True, help="the real Cohere tokenizer.model")
    ap.add_argument("--base-config", help="the real base config.json (check e)")
    ap.add_argument("--audio", nargs="*", default=[], help="16 kHz WAVs for the greedy/beam check")
    a = ap.parse_args()
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    tok = ref.Tokenizer(a.tokenizer)

    with tempfile.TemporaryDirectory() as tmp:
        test_safetensors(tmp)
        pkg = os.path.join(tmp, "tiny")
        tensors = make_tiny.make_weights(len(tok), tok.piece_id("<|endoftext|>"), 0)
        make_tiny.write_package(pkg, a.tokenizer, make_tiny.make_config(len(tok)),
                                make_tiny.make_generation_config(tok), tensors, "f32")
        model = ref.Model(pkg)
        test_frontend(model)
        test_rel_attention(model)
        waves = [("synth 1.5 s", synth(1.5, 9)), ("synth 0.1 s", synth(0.1, 10))]
        waves += [(os.path.basename(p), ref.read_wav(p)[:48000]) for p in a.audio]
        test_greedy_vs_beam1(model, waves)
        test_splitter(model.cfg)
    test_detok(tok, sp)
    test_prompt(tok, sp)
    test_sampling()
    if a.base_config:
        test_base_config(a.base_config, len(tok))
    print(f"selftest: {'all passed' if not FAILED else str(len(FAILED)) + ' FAILED: ' + ', '.join(FAILED)}")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
