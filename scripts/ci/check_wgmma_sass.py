"""Guard: the wgmma walk's MMAs are issued back to back, not serialised by ptxas.

A condition around a `wgmma`, even a warp-uniform one, can make ptxas serialise every wgmma of a
kernel (its info line C7520, not a warning): each HGMMA then waits for its own result
(`WARPGROUP.DEPBAR.LE gsb0, 0x0` right after it), and the filtered scan's B = 1,024 batch went
from 2.9 to 3.6 ms (docs/batch.md). This reads the SASS of an object (cuobjdump: on PATH, in the
CUDA toolkit, or from the nvidia-cuda-cuobjdump wheel, with nvidia-cuda-nvdisasm's beside it) and,
for every function whose name holds PATTERN, fails if an HGMMA is followed directly by that full
wait, or if none of its HGMMAs is issued without waiting (every one carrying gsb0). --require
REGEX: each of those functions must also hold an instruction matching it (the cluster rows: a
multicast TMA copy); --forbid REGEX: none may (local memory: spills). Exit 0: pipelined (and
the rules kept); 1: serialised or a rule broken; 2: bad input; 77: no cuobjdump (the test says
it skipped).

    python -m scripts.ci.check_wgmma_sass OBJECT.o [--pattern wgmma_filter_kernel]
    python -m scripts.ci.check_wgmma_sass OBJECT.o --pattern ELi2EEEEEv --require UTMALDG.2D.MULTICAST
    python -m scripts.ci.check_wgmma_sass --sass dump.txt      # SASS text already dumped
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
RULE = "rule: "  # a --require / --forbid finding, not a serialisation


def find_cuobjdump():
    found = shutil.which("cuobjdump")
    if found:
        return found
    for root in [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]:
        path = os.path.join(root, "bin", "cuobjdump")
        if root and os.access(path, os.X_OK):
            return path
    for site in sys.path:
        for path in glob.glob(os.path.join(site, "nvidia", "cu*", "bin", "cuobjdump")):
            if os.access(path, os.X_OK):
                return path
    return None


def functions(sass):
    """{name: [instruction text]} from cuobjdump -sass output."""
    out, name = {}, None
    for line in sass.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if m and name is not None:
            out[name].append(m.group(1))
    return out


def problems(instructions, require=(), forbid=()):
    """Why this function's HGMMAs are serialised or a rule is broken (empty: neither)."""
    hg = [i for i, text in enumerate(instructions) if "HGMMA" in text]
    if not hg:
        return []
    why = []
    for i in hg:
        nxt = instructions[i + 1] if i + 1 < len(instructions) else ""
        if re.search(r"WARPGROUP\.DEPBAR\.LE\s+gsb0,\s*0x0\b", nxt):
            why.append(f"HGMMA waited on at once: {instructions[i]} / {nxt}")
    if all("gsb0" in instructions[i] for i in hg):
        why.append(f"all {len(hg)} HGMMAs wait (gsb0 on each)")
    why += [f"{RULE}no instruction matches {r!r}" for r in require if not any(re.search(r, t) for t in instructions)]
    for r in forbid:
        hit = next((t for t in instructions if re.search(r, t)), None)
        if hit is not None:
            why.append(f"{RULE}forbidden {r!r}: {hit}")
    return why


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("object", nargs="?", help="object or binary holding the kernels' SASS")
    ap.add_argument("--sass", help="read SASS text from this file instead of running cuobjdump")
    ap.add_argument("--pattern", default="wgmma_filter_kernel", help="function names to check (substring)")
    ap.add_argument("--require", action="append", default=[], help="an instruction each function must hold (regex)")
    ap.add_argument("--forbid", action="append", default=[], help="an instruction no function may hold (regex)")
    a = ap.parse_args(argv)
    if a.sass:
        try:
            with open(a.sass, encoding="utf-8", errors="replace") as f:
                sass = f.read()
        except OSError as e:
            print(f"check_wgmma_sass.py: error: {a.sass}: {e.strerror}", file=sys.stderr)
            return 2
    elif a.object:
        tool = find_cuobjdump()
        if tool is None:
            print("check_wgmma_sass.py: skipped: no cuobjdump (PATH, CUDA_HOME, /usr/local/cuda or the "
                  "nvidia-cuda-cuobjdump wheel)")
            return SKIP
        env = dict(os.environ)
        # cuobjdump runs nvdisasm: the wheel's sits beside it.
        env["PATH"] = os.path.dirname(tool) + os.pathsep + env.get("PATH", "")
        p = subprocess.run([tool, "-sass", a.object], capture_output=True, text=True, env=env)
        if p.returncode != 0:
            print(f"check_wgmma_sass.py: error: {tool} -sass {a.object}: {p.stderr.strip()}", file=sys.stderr)
            return 2
        sass = p.stdout
    else:
        ap.error("an object file or --sass")
    fns = {n: ins for n, ins in functions(sass).items() if a.pattern in n}
    checked = {n: ins for n, ins in fns.items() if any("HGMMA" in t for t in ins)}
    if not checked:
        print(f"check_wgmma_sass.py: error: no function matching {a.pattern!r} with HGMMAs", file=sys.stderr)
        return 2
    bad = 0
    for name, ins in sorted(checked.items()):
        why = problems(ins, a.require, a.forbid)
        n = sum("HGMMA" in t for t in ins)
        if why:
            bad += 1
            tag = "BROKEN    " if why[0].startswith(RULE) else "SERIALISED"
            print(f"{tag} {name[:90]}: {why[0]}" + (f" (+{len(why) - 1} more)" if len(why) > 1 else ""))
        else:
            print(f"pipelined  {name[:90]}: {n} HGMMAs")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
