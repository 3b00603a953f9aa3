#!/usr/bin/env python3
"""Checks that the library's modules import downward only.

Every module of apiserver/src belongs to one layer of LAYERS (the longest
matching pattern wins: `a` is module `a` and everything below it, `a::*`
only what is below it). A module may import its own layer or a lower one;
an import of a higher layer is an upward import, and the modules of one
layer may not import each other in a cycle. Imports are the `use` items and
the `crate::`/`super::` paths in the source, without `#[cfg(test)]` modules.

Usage: tools/check-layers.py [--graph]   (exit status 1 on a violation)
The layers are described in ARCHITECTURE.md.
"""
import collections
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "apiserver", "src")

# Bottom to top: the order in which a request meets them, reversed.
LAYERS = [
    ("machinery", ["apimachinery", "body", "pki", "protobuf", "metrics", "logging"]),
    ("transport", ["transport"]),
    ("traces", ["traces"]),
    ("request", ["request"]),
    ("auth interfaces", ["authentication", "authorization"]),
    ("audit", ["audit"]),
    ("cel", ["cel"]),
    ("schema", ["schema"]),
    ("fieldmanager", ["fieldmanager"]),
    ("storage", ["storage"]),
    ("registry", ["registry"]),
    ("admission", ["admission"]),
    ("endpoints", ["endpoints"]),
    ("authenticators and authorizers", ["authentication::*", "authorization::*"]),
    ("flow control", ["flowcontrol"]),
    ("filters", ["filters"]),
    ("publishing and delegation", ["openapi", "proxy", "client"]),
    ("audit backends", ["audit::backends", "audit::backends::*"]),
    ("server", ["server", "lib", "fuzzing"]),
]


def modules():
    mods = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), ROOT)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib"):
                rel = rel[:-1]
            mods[tuple(rel)] = os.path.join(dirpath, f)
    return mods


def strip(src):
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    src = re.sub(r'"(\\.|[^"\\])*"', '""', src)
    # test modules are not part of the layering
    out, depth, i = [], 0, 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", src):
        if m.start() < i:
            continue
        out.append(src[i:m.start()])
        j, depth = m.end(), 1
        while j < len(src) and depth:
            depth += {"{": 1, "}": -1}.get(src[j], 0)
            j += 1
        i = j
    out.append(src[i:])
    return "".join(out)


def split_tree(body):
    body = body.strip()
    if not body.startswith("{"):
        m = re.match(r"([A-Za-z_]\w*)\s*(?:::\s*(.*))?$", body, re.S)
        if not m:
            return [[]]
        if m.group(2) is None:
            return [[m.group(1)]]
        return [[m.group(1)] + rest for rest in split_tree(m.group(2))]
    parts, depth, cur = [], 0, ""
    for ch in body[1:-1]:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for part in parts if part.strip() for p in split_tree(part)]


def resolve(mods, mod, path):
    if path[0] == "crate":
        full = path[1:]
    elif path[0] in ("super", "self"):
        base, rest = list(mod), list(path)
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
        full = base + rest
    else:
        return None
    for i in range(len(full), -1, -1):
        if tuple(full[:i]) in mods:
            return tuple(full[:i])
    return ()


def imports(mods):
    edges = collections.defaultdict(set)
    for mod, f in mods.items():
        src = strip(open(f, encoding="utf-8").read())
        paths = []
        for m in re.finditer(r"\buse\s+((?:crate|super|self)\b[^;]*);", src, re.S):
            paths += split_tree(m.group(1))
        for m in re.finditer(r"\b((?:crate|super)(?:\s*::\s*[A-Za-z_]\w*)+)", src):
            paths.append([x.strip() for x in m.group(1).split("::")])
        for p in paths:
            t = resolve(mods, mod, [x.strip() for x in p])
            if t is not None and t != mod:
                edges[mod].add(t)
    return edges


def unit_of(mod):
    """(layer index, pattern) of the longest pattern matching `mod`."""
    best, best_len = None, -1.0
    name = list(mod) or ["lib"]
    for i, (_, patterns) in enumerate(LAYERS):
        for p in patterns:
            parts = p.split("::")
            if parts[-1] == "*":
                base = parts[:-1]
                if len(name) > len(base) and name[: len(base)] == base and len(base) + 0.5 > best_len:
                    best, best_len = (i, p), len(base) + 0.5
            elif name[: len(parts)] == parts and len(parts) > best_len:
                best, best_len = (i, p), len(parts)
    return best


def test_modules(mods):
    """Modules declared under `#[cfg(test)]`, and everything below them."""
    out = set()
    for mod, f in mods.items():
        src = open(f, encoding="utf-8").read()
        for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:#\[path\s*=\s*\"[^\"]*\"\]\s*)?mod\s+(\w+)\s*;", src):
            out.add(mod + (m.group(1),))
    return {m for m in mods if any(m[: len(t)] == t for t in out)}


def main():
    mods = modules()
    for t in test_modules(mods):
        del mods[t]
    edges = imports(mods)
    bad = []
    for m in sorted(mods):
        if unit_of(m) is None:
            bad.append(f"module {'::'.join(m) or 'lib'} is in no layer")
    # Between units (the patterns of LAYERS): downward, or sideways within
    # a layer without a cycle. Inside one unit, modules are one package (as
    # the files of a Go package) and may use each other.
    same_layer = collections.defaultdict(set)
    for a, bs in sorted(edges.items()):
        ua = unit_of(a)
        for b in sorted(bs):
            ub = unit_of(b)
            if ua is None or ub is None or ua == ub:
                continue
            if ub[0] > ua[0]:
                bad.append(
                    f"upward import: {'::'.join(a) or 'lib'} -> {'::'.join(b) or 'lib'}"
                    f"   [{LAYERS[ua[0]][0]} -> {LAYERS[ub[0]][0]}]"
                )
            elif ub[0] == ua[0]:
                same_layer[ua[1]].add(ub[1])
    for scc in sccs(same_layer):
        bad.append("import cycle: " + " <-> ".join(scc))
    if "--graph" in sys.argv:
        for a, bs in sorted(edges.items()):
            for b in sorted(bs):
                print("::".join(a) or "lib", "->", "::".join(b) or "lib")
    for line in bad:
        print(line)
    print(f"{len(mods)} modules, {sum(len(b) for b in edges.values())} imports, {len(bad)} violations")
    return 1 if bad else 0


def sccs(g):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    nodes = set(g) | {b for bs in g.values() for b in bs}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
