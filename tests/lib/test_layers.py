"""The layer rules of docs/architecture.md hold in the code, and the doc
stands on its own (no path outside the repository): every
`#include "..."` of src/ and tools/ points down the layer table the doc
draws (read from the doc itself, so the two cannot drift apart), a family
includes no other family (only the model modules the doc names), and the
tools see only include/audioc.h (which every layer may include for the
public types) and the tools' own headers."""
import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
DOC = os.path.join(ROOT, "docs/architecture.md")
# the model modules that families may include (the doc's departures name them)
MODULES = {"qwen2", "whisper"}

def doc_layers(doc):
    """[(layer, allowed set)] from the diagram under '## Layers', top first."""
    block = re.search(r"## Layers[^\n]*\n+```\n(.*?)```", doc, re.S)
    assert block is not None, "docs/architecture.md has the layer diagram"
    rows = []
    for line in block.group(1).splitlines():
        m = re.match(r"(\S+)\s.*?->\s*(.+)$", line)
        if not m:
            continue
        path, deps = m.groups()
        name = "tools" if path.startswith("tools") else path.split("/")[1]
        rows.append((name, deps.strip()))
    names = [n for n, _ in rows]
    layers = []
    for i, (name, deps) in enumerate(rows):
        if deps.startswith("everything below"):
            allowed = set(names[i + 1:])
        else:
            words = re.sub(r"\(.*?\)", "", deps.replace(" only", "")).replace(" and ", ", ")
            allowed = {w.strip() for w in words.split(",") if w.strip()}
        layers.append((name, allowed))
    return layers


def layer_of(path):
    rel = os.path.relpath(path, ROOT)
    if rel.startswith("include/"):
        return "audioc.h"
    if rel.startswith("tools/"):
        return "tools"
    return rel.split("/")[1]


def resolve(src, inc):
    """The file an #include "INC" of SRC names, as the build's include paths find it."""
    here = os.path.dirname(src)
    for base in (here, os.path.join(ROOT, "src"), os.path.join(ROOT, "include"), os.path.join(ROOT, "tools/common")):
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(p):
            return p
    return None


def test_doc_layers():
    """The doc draws the layers the rules below read, top first, and names the model modules."""
    doc = open(DOC).read()
    layers = doc_layers(doc)
    assert [n for n, _ in layers] == ["tools", "api", "hub", "models", "nn", "text", "audio", "io", "tensor", "base"], f"the diagram's layers, top first: {[n for n, _ in layers]}"
    assert "Every layer may also include `include/audioc.h`" in doc, "the doc lets every layer use audioc.h"
    for module in MODULES:
        assert f"`{module}/`" in doc, f"the doc names the model module {module}/"


def test_doc_stands_alone():
    """No path out of the checkout, no founding document the repository does not carry."""
    outside = re.findall(r"\.\./\S+|DESIGN\.md|specs/\S+", open(DOC).read())
    assert not outside, f"the doc refers to files outside the repository: {outside}"


def test_includes_follow_the_layers():
    """Every #include of src/ and tools/ goes down the doc's layer table."""
    allowed = dict(doc_layers(open(DOC).read()))
    sources = []
    for top in ("src", "tools"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            sources += [os.path.join(d, f) for f in files if f.endswith((".c", ".h"))]
    assert len(sources) > 100, f"{len(sources)} source files read"
    edges = 0
    for src in sorted(sources):
        rel = os.path.relpath(src, ROOT)
        layer = layer_of(src)
        for n, line in enumerate(open(src, errors="replace"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            target = resolve(src, m.group(1))
            where = f"{rel}:{n} includes \"{m.group(1)}\""
            assert target is not None, f"{where}: no such file"
            if target is None:
                continue
            edges += 1
            to = layer_of(target)
            if to == "audioc.h":  # the public types, which every layer may use
                continue
            if to == layer:
                if layer == "models":  # a family includes no other family, only the modules
                    own, other = rel.split("/")[2], os.path.relpath(target, ROOT).split("/")[2]
                    assert other == own or (other in MODULES and own not in MODULES), f"{where}: models/{own} may not include models/{other}"
                if layer == "tools":  # a program's own headers and tools/common
                    own, other = rel.split("/")[1], os.path.relpath(target, ROOT).split("/")[1]
                    assert other in (own, "common"), f"{where}: tools/{own} may not include tools/{other}"
                continue
            assert to in allowed[layer], (f"{where}: {layer} -> {to} is not in the doc's layer rules "
                                          f"({layer} -> {', '.join(sorted(allowed[layer]))})")
    assert edges > 500, f"{edges} includes checked"
