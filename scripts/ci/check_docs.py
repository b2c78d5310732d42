"""Truth checks for the docs and the comments, run by ctest (`docs.truth`) and so by .ci/run.

1. Every generated block in README.md, docs/*.md and results/README.md is what
   scripts/docs/render_docs.py renders from the committed JSON now.
2. A doc paragraph that cites one committed result file and names commits names the commit in
   that file's context (`distancies_commit` / `commit`) among them.
3. Every repository path named in a doc or in a comment (C++, CUDA, Python, shell, CMake) exists.
   Only tokens that start with a top-level folder (kernels/, harness/, variants/, scripts/,
   results/, docs/, tests/, cmake/) count; globs and placeholders (`*`, `<study>`, `{a,b}`, `…`)
   are skipped; a doc may name a path the results manifest lists as archived (it is reachable in
   git history), a comment may not: it should cite the docs or the manifest instead. A generated
   block is held to its JSON instead (check 1): the commands it shows ran at their commits.
   A result stored gzip-compressed is cited by its name, `X.json.gz`, not `X.json`.
   A tool named as a module (`python -m scripts.ci.check_docs`) must exist too.

    python3 -m scripts.ci.check_docs [--root DIR]     # exit 1 with one line per finding
"""
from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

from scripts.docs import render_docs
from scripts.lib import bench_json

ROOT = Path(__file__).resolve().parents[2]
TOP = ("kernels", "harness", "variants", "scripts", "results", "docs", "tests", "cmake")
PATH = re.compile(r"(?<![\w/.$-])(?:" + "|".join(TOP) + r")/[\w./*<>{}…,+-]*")
GLOB = re.compile(r"[*<>{}…]|\.\.\.")
# Folders that commands create (setup.sh's local run, CI's run): named in docs, absent from the tree.
CREATED = ("results/local", "results/ci")
CODE_EXT = {".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp", ".inc", ".py", ".sh", ".cmake"}
# A path a command in the doc writes (`--benchmark_out=P`, `--out P`, `> P`): it need not exist.
# A tool run as a module: `python -m scripts.<kind>.<tool>`.
MODULE = re.compile(r"(?<![\w.-])-m (scripts(?:\.\w+)+)")
OUTPUT = re.compile(r"(?:_out=|--out[= ]|--md |> ?)((?:" + "|".join(TOP) + r")/[\w./-]+)")
COMMIT = re.compile(r"\bcommits?\s+`?([0-9a-f]{7,40})\b|`([0-9a-f]{7,12})`")


def tracked(root: Path) -> list:
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files"], check=True, capture_output=True,
                             text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]
    return [p for p in out if (root / p).is_file()]


def archived(root: Path) -> list:
    try:
        doc = bench_json.read_json(root / "results" / "manifest.json")
    except bench_json.BenchError:
        return []
    return [a["path"].rstrip("/") for a in doc.get("archived", [])]


def python_comments(text: str) -> list:
    """(line, text) of a Python file's comments and docstrings (strings standing as statements)."""
    out, prev = [], tokenize.NEWLINE
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
            elif tok.type == tokenize.STRING and prev in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                                          tokenize.ENCODING):
                out += [(tok.start[0] + i, line) for i, line in enumerate(tok.string.splitlines())]
            if tok.type not in (tokenize.NL, tokenize.COMMENT):
                prev = tok.type
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


def comments(path: Path, text: str) -> list:
    """(line number, comment text) of a source file."""
    if path.suffix == ".py":
        return python_comments(text)
    out = []
    hash_style = path.suffix in (".py", ".sh", ".cmake") or path.name == "CMakeLists.txt"
    in_block = False
    for i, line in enumerate(text.splitlines(), 1):
        if hash_style:
            j = line.find("#")
            if j >= 0:
                out.append((i, line[j:]))
            elif path.suffix == ".py" and ('"""' in line or in_block):
                out.append((i, line))   # docstrings are the Python files' prose
            if path.suffix == ".py" and line.count('"""') % 2 == 1:
                in_block = not in_block
            continue
        if in_block:
            end = line.find("*/")
            out.append((i, line if end < 0 else line[:end]))
            in_block = end < 0
            continue
        j = line.find("//")
        k = line.find("/*")
        if j >= 0 and (k < 0 or j < k):
            out.append((i, line[j:]))
        elif k >= 0:
            end = line.find("*/", k)
            out.append((i, line[k:] if end < 0 else line[k:end]))
            in_block = end < 0
    return out


def path_findings(root: Path, where: str, lineno: int, text: str, gone: list, allow_archived: bool,
                  created: frozenset = frozenset()) -> list:
    out = []
    for tok in PATH.findall(text):
        tok = tok.rstrip(".,;:)'\"`")
        if not tok or GLOB.search(tok) or tok.startswith(CREATED):
            continue
        if (root / tok).exists():
            continue
        if tok in created:
            continue
        if (root / (tok + bench_json.GZ)).is_file():
            out.append(f"{where}:{lineno}: names a file stored gzip-compressed by its old name: {tok} "
                       f"(cite {tok}{bench_json.GZ})")
            continue
        if allow_archived and any(tok == a or tok.startswith(a + "/") or a.startswith(tok.rstrip("/") + "/")
                                  for a in gone):
            continue
        why = "names an archived file (cite the docs or results/manifest.json)" if any(
            tok == a or tok.startswith(a + "/") for a in gone) else "names a path that does not exist"
        out.append(f"{where}:{lineno}: {why}: {tok}")
    for mod in MODULE.findall(text):
        rel = mod.replace(".", "/")
        if not ((root / f"{rel}.py").is_file() or (root / rel / "__init__.py").is_file()):
            out.append(f"{where}:{lineno}: names a module that does not exist: {mod}")
    return out


def commit_findings(root: Path, doc: Path, text: str) -> list:
    """Paragraphs citing one committed result JSON whose commits all differ from its context's."""
    out = []
    line = 1
    for para in re.split(r"\n\s*\n", text):
        start, line = line, line + para.count("\n") + 2
        if "<!-- generated:" in para:
            continue
        files = {t.rstrip(".,;:)`") for t in PATH.findall(para)}
        files = [f for f in files if f.startswith("results/") and bench_json.is_json_name(f)
                 and (root / f).is_file()
                 and render_docs.manifest.context_of(root / f).get("commit")]
        named = {a or b for a, b in COMMIT.findall(para)}
        if len(files) != 1 or not named:
            continue
        ctx = render_docs.manifest.context_of(root / files[0]).get("commit")
        if not ctx:
            continue
        ctx = ctx.split("-")[0]
        if not any(ctx.startswith(c) or c.startswith(ctx) for c in named):
            out.append(f"{doc.relative_to(root)}:{start}: cites {files[0]} (context commit {ctx[:7]}) "
                       f"beside commit(s) {', '.join(sorted(named))}")
    return out


def check(root: Path = ROOT) -> list:
    root = Path(root)
    findings = [f"{f.relative_to(root)}: generated block {tid}: {why} (python3 -m scripts.docs.render_docs --write)"
                for f, tid, why in render_docs.process(root)]
    gone = archived(root)
    for f in render_docs.doc_files(root):
        text = f.read_text(encoding="utf-8")
        rel = f.relative_to(root).as_posix()
        created = frozenset(OUTPUT.findall(text))
        generated = {n for m in render_docs.BLOCK.finditer(text)
                     for n in range(text.count("\n", 0, m.start()) + 1, text.count("\n", 0, m.end()) + 1)}
        for i, line in enumerate(text.splitlines(), 1):
            if i not in generated:
                findings += path_findings(root, rel, i, line, gone, allow_archived=True, created=created)
        findings += commit_findings(root, f, text)
    for rel in tracked(root):
        p = root / rel
        if rel.startswith(("results/", "build/", "scripts/tests/data/")) or not (
                p.suffix in CODE_EXT or p.name == "CMakeLists.txt"):
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for i, c in comments(p, text):
            findings += path_findings(root, rel, i, c, gone, allow_archived=False)
    return findings


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT)
    a = ap.parse_args(argv)
    findings = check(a.root)
    for f in findings:
        print(f"check_docs: {f}")
    print(f"check_docs: {len(findings)} finding(s)", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
