#!/usr/bin/python3
"""Writes real torch.save files for tests/unit/test_torch_file.c into OUT_DIR,
with what the C reader must find in them:

  expected.safetensors  every tensor of every good file, named FILE/NAME, in
                        the type the reader hands out (doubles as F32, integer
                        and bool types as I64), contiguous
  expected.json         {FILE: the saved object as JSON}, tensors written as
                        {"tensor": NAME} and tuples as lists

and hostile files the reader must refuse (see HOSTILE below).

  make_torch_files.py OUT_DIR           (tests)
  make_torch_files.py --seeds SEED_DIR  (the small committed fuzz seeds)
"""
import collections
import io
import json
import os
import pickle
import struct
import sys
import zipfile

import numpy as np
import torch

OUT = None
EXPECTED = collections.OrderedDict()  # FILE/NAME -> np.ndarray
VALUES = {}

NP_OF = {torch.float32: np.float32, torch.float64: np.float32, torch.float16: np.float16}


def table_array(t):
    """The tensor as the reader hands it out."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16), "BF16"
    if t.dtype in NP_OF:
        return t.numpy().astype(NP_OF[t.dtype]), {np.float16: "F16"}.get(NP_OF[t.dtype], "F32")
    return t.numpy().astype(np.int64), "I64"


def describe(obj, fname, depth, path):
    """The JSON form of OBJ; records its tensors under their table names."""
    if isinstance(obj, torch.Tensor):
        name = ".".join(path if depth == 1 else path[1:])
        EXPECTED[fname + "/" + name] = obj
        return {"tensor": name}
    if isinstance(obj, dict):
        return {str(k): describe(v, fname, depth + 1, path + [str(k)]) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [describe(v, fname, depth + 1, path + [str(i)]) for i, v in enumerate(obj)]
    return obj


def save(fname, obj, **kw):
    torch.save(obj, os.path.join(OUT, fname), **kw)
    VALUES[fname] = describe(obj, fname, 0, [])


def write_safetensors(path, arrays):
    header, data = {}, b""
    for name, t in arrays.items():
        arr, dtype = table_array(t)
        raw = arr.tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


class Tiny(torch.nn.Module):
    """OpenAI Whisper's names, tiny shapes."""

    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Module()
        self.encoder.conv1 = torch.nn.Conv1d(4, 6, 3, padding=1)
        self.encoder.blocks = torch.nn.ModuleList([torch.nn.Module()])
        self.encoder.blocks[0].attn = torch.nn.Module()
        self.encoder.blocks[0].attn.query = torch.nn.Linear(6, 6)
        self.encoder.blocks[0].attn.key = torch.nn.Linear(6, 6, bias=False)
        self.encoder.ln_post = torch.nn.LayerNorm(6)
        self.decoder = torch.nn.Module()
        self.decoder.token_embedding = torch.nn.Embedding(10, 6)


def good_files():
    g = torch.Generator().manual_seed(1)
    save("whisper_stats.pt", {"mean": torch.randn(1024, generator=g), "std": torch.rand(1024, generator=g) + 0.5})
    model = Tiny().half()
    dims = {"n_mels": 80, "n_vocab": 51865, "n_audio_ctx": 1500, "n_audio_state": 1024, "n_audio_head": 16,
            "n_audio_layer": 24, "n_text_ctx": 448, "n_text_state": 1024, "n_text_head": 16, "n_text_layer": 24}
    save("medium.pt", {"dims": dims, "model_state_dict": model.state_dict()})
    save("dtypes.pt", {
        "f32": torch.randn(3, 4, generator=g), "f16": torch.randn(5, generator=g).half(),
        "bf16": torch.randn(2, 3, generator=g).bfloat16(), "i64": torch.tensor([-3, 0, 2**40, -2**62]),
        "f64": torch.randn(4, generator=g).double(), "i32": torch.tensor([-7, 1 << 30], dtype=torch.int32),
        "i16": torch.tensor([-300, 5], dtype=torch.int16), "i8": torch.tensor([-128, 127], dtype=torch.int8),
        "u8": torch.tensor([0, 255], dtype=torch.uint8), "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(3.5), "empty": torch.zeros(0, 3),
        "param": torch.nn.Parameter(torch.randn(2, 2, generator=g)),
        "meta": {"epoch": 3, "lr": 1e-3, "name": "tiny // not a comment", "betas": (0.9, 0.99),
                 "flags": [True, False, None], "big": 2**40, "neg": -5, "neg_big": -2**40, 7: "int key"},
    })
    x = torch.arange(20, dtype=torch.float32).reshape(4, 5)
    save("views.pt", {"base": x, "row": x[1], "cols": x[:, 1:3], "t": x.t(), "tail": x.view(-1)[7:],
                      "tied": x, "step": x[::2, ::2], "expand_row": x[1:2].expand(3, 5).clone()})
    # a state dict one level down, with a parameter (torch._utils._rebuild_parameter)
    lin = torch.nn.Linear(3, 2)
    save("checkpoint.pt", {"model": collections.OrderedDict(lin.named_parameters()), "step": 10})


def rewrite_zip64(src, dst):
    """SRC's entries again, every size and offset in zip64 extra fields, as
    archives over 4 GB carry them."""
    z = zipfile.ZipFile(os.path.join(OUT, src))
    out, central = b"", b""
    for info in z.infolist():
        data, name = z.read(info), info.filename.encode()
        crc = zipfile.crc32(data)
        local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(name), 20)
        offset = len(out)
        out += local + name + struct.pack("<HHQQ", 1, 16, len(data), len(data)) + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                               len(name), 28, 0, 0, 0, 0, 0xFFFFFFFF)
        central += name + struct.pack("<HHQQQ", 1, 24, len(data), len(data), offset)
    n, cd_offset = len(z.infolist()), len(out)
    out += central
    eocd64 = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(central), cd_offset)
    out += struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(os.path.join(OUT, dst), "wb") as f:
        f.write(out)
    VALUES[dst] = VALUES[src]
    for key in [k for k in EXPECTED if k.startswith(src + "/")]:
        EXPECTED[dst + key[len(src):]] = EXPECTED[key]
    assert torch.equal(torch.load(os.path.join(OUT, dst))["t"], torch.load(os.path.join(OUT, src))["t"])


# ---- hostile files: crafted pickles in real zip archives ----

class Storage:
    def __init__(self, key, numel, kind=torch.FloatStorage):
        self.key, self.numel, self.kind = key, numel, kind


class View:
    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, size, stride)

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.args + (False, collections.OrderedDict()))


class Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", obj.kind, obj.key, "cpu", obj.numel)
        return None


def archive(fname, obj=None, storages=(), raw_pickle=None, byteorder=None, compression=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    Pickler(buf, protocol=2).dump(obj)
    pkl = raw_pickle if raw_pickle is not None else buf.getvalue()
    name = fname.split(".")[0]
    with zipfile.ZipFile(os.path.join(OUT, fname), "w", compression) as z:
        z.writestr(name + "/data.pkl", pkl)
        if byteorder:
            z.writestr(name + "/byteorder", byteorder)
        for key, raw in storages:
            z.writestr(name + "/data/" + key, raw)
        z.writestr(name + "/version", "3\n")


class Evil:
    def __init__(self, fn, arg):
        self.fn, self.arg = fn, arg

    def __reduce__(self):
        return (self.fn, (self.arg,))


def hostile_files():
    ten = np.arange(10, dtype=np.float32).tobytes()
    s = Storage("0", 10)
    # a sane crafted file first: the crafting itself must be right
    archive("crafted_ok.pt", {"w": View(s, 2, (2, 3), (3, 1))}, [("0", ten)])
    VALUES["crafted_ok.pt"] = {"w": {"tensor": "w"}}
    EXPECTED["crafted_ok.pt/w"] = torch.load(os.path.join(OUT, "crafted_ok.pt"))["w"]
    torch.save({"x": Evil(os.system, "true")}, os.path.join(OUT, "evil_system.pt"))
    torch.save({"x": Evil(eval, "1")}, os.path.join(OUT, "evil_eval.pt"))
    with open(os.path.join(OUT, "medium.pt"), "rb") as f:
        blob = f.read()
    with open(os.path.join(OUT, "truncated.pt"), "wb") as f:
        f.write(blob[:len(blob) // 2])
    archive("lying_storage.pt", {"w": View(Storage("0", 12), 0, (10,), (1,))}, [("0", ten)])
    archive("out_of_bounds.pt", {"w": View(s, 8, (4,), (1,))}, [("0", ten)])
    archive("strided_out.pt", {"w": View(s, 0, (2, 3), (6, 2))}, [("0", ten)])
    archive("expanded.pt", {"w": View(s, 0, (4, 10), (0, 1))}, [("0", ten)])
    archive("missing_storage.pt", {"w": View(Storage("1", 10), 0, (10,), (1,))}, [("0", ten)])
    archive("deflated.pt", {"w": View(s, 0, (10,), (1,))}, [("0", ten)], compression=zipfile.ZIP_DEFLATED)
    archive("big_endian.pt", {"w": View(s, 0, (10,), (1,))}, [("0", ten)], byteorder="big")
    archive("two_models.pt", {"model": {"w": View(s, 0, (10,), (1,))}, "ema": {"w": View(s, 0, (10,), (1,))}},
            [("0", ten)])
    # protocol 0's INT opcode, which torch.save never writes
    archive("old_opcode.pt", raw_pickle=b"\x80\x02}q\x00X\x01\x00\x00\x00aI1\ns.", storages=[])
    torch.save({"w": torch.zeros(2)}, os.path.join(OUT, "legacy.pt"), _use_new_zipfile_serialization=False)
    # one byte of the pickle changed behind the CRC's back
    z = zipfile.ZipFile(os.path.join(OUT, "whisper_stats.pt"))
    info = [i for i in z.infolist() if i.filename.endswith("data.pkl")][0]
    with open(os.path.join(OUT, "whisper_stats.pt"), "rb") as f:
        blob = bytearray(f.read())
    nlen, xlen = struct.unpack("<HH", blob[info.header_offset + 26:info.header_offset + 30])
    blob[info.header_offset + 30 + nlen + xlen + 5] ^= 1
    with open(os.path.join(OUT, "bad_crc.pt"), "wb") as f:
        f.write(blob)


def seeds(folder):
    """Small real files for tests/fuzz/seeds/torch_file, and bare pickles."""
    global OUT
    OUT = folder
    g = torch.Generator().manual_seed(2)
    torch.save({"mean": torch.randn(4, generator=g), "std": torch.rand(4, generator=g)},
               os.path.join(folder, "stats.pt"))
    model = Tiny().half()
    torch.save({"dims": {"n_mels": 80, "n_audio_ctx": 1500},
                "model_state_dict": collections.OrderedDict(list(model.state_dict().items())[:3])},
               os.path.join(folder, "medium.pt"))
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    torch.save({"t": x.t(), "row": x[1], "b": torch.tensor([True]), "d": torch.ones(2).double(),
                "p": torch.nn.Parameter(torch.ones(1)), "meta": {"lr": 0.5, "n": -2**40, "s": "x", "l": [None]}},
               os.path.join(folder, "views.pt"))
    # bare pickles over the four 64-byte storages the harness supplies
    f16, f32, i64 = Storage("0", 32, torch.HalfStorage), Storage("1", 16), Storage("2", 8, torch.LongStorage)
    state = collections.OrderedDict([("enc.w", View(f16, 0, (4, 8), (8, 1))), ("enc.t", View(f32, 1, (3, 5), (1, 3))),
                                     ("n", View(i64, 7, (), ()))])
    for name, obj in (("state.pkl", {"dims": {"n_mels": 80, "lr": 0.5}, "model_state_dict": state}),
                      ("list.pkl", {"x": [View(Storage("3", 64, torch.BoolStorage), 0, (8, 8), (8, 1)), None, (1, "s")]})):
        buf = io.BytesIO()
        Pickler(buf, protocol=2).dump(obj)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(buf.getvalue())


def main():
    global OUT
    if sys.argv[1] == "--seeds":
        seeds(sys.argv[2])
        return
    OUT = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    good_files()
    rewrite_zip64("views.pt", "zip64.pt")
    hostile_files()
    write_safetensors(os.path.join(OUT, "expected.safetensors"), EXPECTED)
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(VALUES, f, indent=1)


if __name__ == "__main__":
    main()
