"""A Hviske package folder (make_tiny.py) as one GGUF file in the layout
and with the type rule of the ggml audio runtime's converter (spec
hviske_asr.md §1.6), written by tests/ref/gguf_np.py: the tensors under
their own names, every other file of the folder embedded.

usage: make_gguf.py PACKAGE OUT.gguf [--type f16|q8_0]
--type f16: every float tensor of rank >= 1 as F16; q8_0: the rank-2
'.weight' tensors whose rows are whole blocks and whose name has no
'embed'/'codebook' as Q8_0, those with 'embed'/'codebook' as F16, the rest
as stored (gguf_np.pick). audioc quantize writes the same layout by the
family's own rule instead."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gguf_np  # noqa: E402
import st_io  # noqa: E402

SKIP = (".safetensors", ".gguf", ".bin", ".pt", ".pth")


def make(pkg, out, kind):
    tensors, dtypes, _ = st_io.load(os.path.join(pkg, "model.safetensors"), with_dtypes=True)
    types = {}
    for name, a in tensors.items():
        if a.dtype.kind != "f":
            continue
        t = gguf_np.pick(name, a.shape, kind.upper())
        types[name] = dtypes[name] if t == "F32" or not a.shape else t  # "the rest as stored"
    files = [(n, open(os.path.join(pkg, n), "rb").read()) for n in sorted(os.listdir(pkg))
             if os.path.isfile(os.path.join(pkg, n)) and not n.endswith(SKIP)]
    return gguf_np.write(out, list(tensors.items()), files, kind.upper(), types=types)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pkg")
    ap.add_argument("out")
    ap.add_argument("--type", default="f16", choices=["f16", "q8_0"])
    a = ap.parse_args()
    make(a.pkg, a.out, a.type)


if __name__ == "__main__":
    main()
