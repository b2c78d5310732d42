"""results/manifest.json: the canonical result files per study and GPU, and what left the tree.

The manifest names every file kept under results/ (its study, GPU, role, the commit and command
that made it, the device and date from the JSON's own context) and, under "archived", the logs,
consoles, sanitizer tails, probe runs and run scripts that were removed from the main tree with
the commit they were last in, so `git show COMMIT:PATH` still reaches them. Large runs are kept
gzip-compressed (`X.json.gz`); read any named file with scripts/lib/bench_json.py (read_json,
read_text), which also opens `X.json.gz` when asked for `X.json`.

    python3 -m scripts.lib.manifest list [--study S] [--gpu G]
    python3 -m scripts.lib.manifest canonical STUDY GPU          # the path of the main run (for scripts)
    python3 -m scripts.lib.manifest add FILE --study S --gpu G --command "distancies-bench ..." [--role R]
    python3 -m scripts.lib.manifest check                        # every named file exists; counts unnamed ones

In Python (scripts/ci/compare.py, report.py, dashboard.py): `manifest.canonical("embeddings", "h100")`.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

from scripts.lib import bench_json  # the loader of result files, plain or gzip

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = Path("results") / "manifest.json"
# Files under results/ that document the folder rather than a run (and results/goals/, the goals
# scripts/docs/goals.py checks).
_SELF = {"results/README.md", "results/manifest.json"}
# A Google Benchmark JSON larger than this (compact) is stored gzip-compressed by `add`.
GZIP_OVER = 40 * 1024


class ManifestError(Exception):
    """The manifest does not name what was asked for."""


def load(root: Path = ROOT) -> dict:
    try:
        return bench_json.read_json(Path(root) / MANIFEST)
    except bench_json.BenchError as e:
        raise ManifestError(str(e)) from None


def save(doc: dict, root: Path = ROOT) -> None:
    doc["files"] = dict(sorted(doc["files"].items()))
    path = Path(root) / MANIFEST
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def files(study: str | None = None, gpu: str | None = None, role: str | None = None,
          root: Path = ROOT, doc: dict | None = None) -> list:
    """Paths (relative to the repository root) of the named files that match, in path order."""
    doc = load(root) if doc is None else doc
    return [p for p, e in sorted(doc["files"].items())
            if (study is None or e.get("study") == study) and (gpu is None or e.get("gpu") == gpu)
            and (role is None or e.get("role") == role)]


def canonical(study: str, gpu: str, root: Path = ROOT, doc: dict | None = None) -> Path:
    """The main run of a study on a GPU (e.g. ("embeddings", "h100")): the gate's baseline,
    the report's input. Absolute path; ManifestError when the manifest names none."""
    main = files(study, gpu, "main", root, doc)
    if len(main) != 1:
        raise ManifestError(f"manifest names {len(main)} main runs for study {study!r} on {gpu!r}"
                            f" (studies: {', '.join(studies(root, doc))})")
    return Path(root) / main[0]


def parts(study: str, gpu: str, root: Path = ROOT, doc: dict | None = None) -> list:
    """The main run and the files that complete it (one sweep split over calls), as paths."""
    return [Path(root) / p for p in files(study, gpu, "main", root, doc)
            + files(study, gpu, "part", root, doc)]


def studies(root: Path = ROOT, doc: dict | None = None) -> list:
    doc = load(root) if doc is None else doc
    return sorted({e["study"] for e in doc["files"].values()})


def context_of(path: Path) -> dict:
    """commit / device / date from a Google Benchmark JSON's context (empty when it has none)."""
    try:
        d = bench_json.read_json(path)
    except bench_json.BenchError:
        return {}
    c = d.get("context") if isinstance(d, dict) else None
    if not isinstance(c, dict):
        return {}
    out = {"commit": c.get("distancies_commit") or c.get("commit"), "device": c.get("gpu"),
           "date": c.get("date")}
    return {k: v for k, v in out.items() if v}


def _git(root: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                              text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def compact_json(doc: dict) -> str:
    """Google Benchmark JSON with one benchmark entry a line (every repetition kept): about a
    quarter smaller than the indented form, and a diff still shows which entries changed."""
    parts = []
    for k, v in doc.items():
        if k == "benchmarks":
            rows = ",\n".join("  " + json.dumps(b, separators=(",", ":"), ensure_ascii=False) for b in v)
            parts.append(f"{json.dumps(k)}: [\n{rows}\n]")
        else:
            parts.append(f"{json.dumps(k)}: {json.dumps(v, indent=1, ensure_ascii=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def add(file: Path, study: str, gpu: str, command: str, role: str = "main", purpose: str = "",
        dest: str | None = None, root: Path = ROOT) -> Path:
    """Copies FILE to results/<study>/<gpu>.json (or <gpu>-<role>.json; or DEST) and names it.
    A Google Benchmark run is written one entry a line, gzip-compressed (`.json.gz`; level 9, no
    timestamp, so the same run gives the same bytes) when DEST ends in .gz or, without DEST, when
    it is over GZIP_OVER bytes.
    A main run replaces the previous main run of that study and GPU and its parts; a part the
    previous part: the old entries move to "archived" with the commit they were last in (HEAD),
    and a file at another path is deleted (commit its removal with `git rm`)."""
    root = Path(root)
    doc = load(root)
    try:
        doc_in = bench_json.read_json(file)
    except bench_json.BenchError:
        doc_in = None
    is_run = isinstance(doc_in, dict) and isinstance(doc_in.get("benchmarks"), list)
    text = compact_json(doc_in) if is_run else None
    if dest is None:
        dest = f"results/{study}/{gpu}.json" if role == "main" else f"results/{study}/{gpu}-{role}.json"
        if text is not None and len(text.encode("utf-8")) > GZIP_OVER:
            dest += bench_json.GZ
    target = root / dest
    head = _git(root, "rev-parse", "--short", "HEAD")
    # A new main run replaces the old one and the parts that completed it (add the new parts
    # after it, --role part); a new part replaces the old part.
    replaced = files(study, gpu, "main", root, doc) + files(study, gpu, "part", root, doc) if role == "main" \
        else files(study, gpu, "part", root, doc) if role == "part" else []
    for old in replaced:
        entry = doc["files"].pop(old)
        doc.setdefault("archived", []).append(
            {"path": old, "commit": head, "what": f"the previous {entry['role']} {study} run on {gpu}"
             f" (made at {entry.get('commit', '?')})"})
        if old != dest and (root / old).exists():
            (root / old).unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    if Path(file).resolve() != target.resolve():
        if text is not None and dest.endswith(bench_json.GZ):
            target.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
        elif text is not None:
            target.write_text(text, encoding="utf-8")
        else:
            shutil.copyfile(file, target)
    entry = {"study": study, "gpu": gpu, "role": role, "kind": "run", "command": command}
    entry.update(context_of(target))
    if purpose:
        entry["purpose"] = purpose
    doc["files"][dest] = entry
    save(doc, root)
    return target


def archived_runs(manifest_path: Path, repo: Path, dest: Path) -> list:
    """Writes the archived JSON files (read from git history at the commit each was last in)
    under dest, keeping their paths, and returns [dest] when there were any (for the dashboard's
    trends across commits). A file with the same content as a current one (compared uncompressed:
    a run that was only gzipped since is the same run) is left out."""
    try:
        doc = bench_json.read_json(manifest_path)
    except bench_json.BenchError:
        return []
    current = set()
    for p in Path(manifest_path).parent.rglob("*"):
        if p.is_file() and bench_json.is_json_name(p.name):
            try:
                current.add(hashlib.sha1(bench_json.read_bytes(p)).hexdigest())
            except bench_json.BenchError:
                continue
    wrote = False
    for a in doc.get("archived", []):
        for name in _git(repo, "ls-tree", "-r", "--name-only", a["commit"], "--", a["path"]).splitlines():
            if not bench_json.is_json_name(name):
                continue
            try:
                data = subprocess.run(["git", "-C", str(repo), "show", f"{a['commit']}:{name}"], check=True,
                                      capture_output=True).stdout
            except (OSError, subprocess.CalledProcessError):
                continue
            try:
                plain = gzip.decompress(data) if name.endswith(bench_json.GZ) else data
            except (OSError, EOFError, zlib.error):
                continue
            if hashlib.sha1(plain).hexdigest() in current:
                continue
            out = Path(dest) / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            wrote = True
    return [Path(dest)] if wrote else []


def check(root: Path = ROOT) -> tuple:
    """(missing named files, files under results/ the manifest does not name)."""
    root = Path(root)
    doc = load(root)
    missing = [p for p in doc["files"] if not (root / p).is_file()]
    on_disk = {p.relative_to(root).as_posix() for p in (root / "results").rglob("*") if p.is_file()}
    unnamed = sorted(p for p in on_disk - set(doc["files"]) - _SELF if not p.startswith("results/goals/"))
    return missing, unnamed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ls = sub.add_parser("list", help="the named files")
    ls.add_argument("--study")
    ls.add_argument("--gpu")
    cn = sub.add_parser("canonical", help="the main run's path")
    cn.add_argument("study")
    cn.add_argument("gpu")
    ad = sub.add_parser("add", help="make FILE the canonical run (or a named role) of STUDY on GPU")
    ad.add_argument("file", type=Path)
    ad.add_argument("--study", required=True)
    ad.add_argument("--gpu", required=True, help="short name: h100, h200, h200x2, ...")
    ad.add_argument("--command", required=True, help="the command that wrote FILE")
    ad.add_argument("--role", default="main", help="main (default), part, peers, check, ...")
    ad.add_argument("--purpose", default="")
    ad.add_argument("--dest", help="path under results/ (default results/<study>/<gpu>[-<role>].json)")
    sub.add_parser("check", help="named files exist; list files the manifest does not name")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "list":
            doc = load()
            for p in files(a.study, a.gpu, doc=doc):
                e = doc["files"][p]
                print(f"{p}\t{e['study']}\t{e['gpu']}\t{e['role']}\t{e.get('commit', '-')}")
        elif a.cmd == "canonical":
            print(canonical(a.study, a.gpu).relative_to(ROOT))
        elif a.cmd == "add":
            before = len(load().get("archived", []))
            out = add(a.file, a.study, a.gpu, a.command, a.role, a.purpose, a.dest)
            gone = [e["path"] for e in load().get("archived", [])[before:] if not (ROOT / e["path"]).exists()]
            print(f"manifest: {out.relative_to(ROOT)} is {a.study}/{a.gpu} {a.role}; commit it with "
                  f"results/manifest.json" + (f"; `git rm {' '.join(gone)}`" if gone else "")
                  + "; then python3 -m scripts.docs.render_docs --write")
        else:
            missing, unnamed = check()
            for p in missing:
                print(f"manifest: missing: {p}")
            print(f"manifest: {len(unnamed)} file(s) under results/ not named"
                  + "".join(f"\n  {p}" for p in unnamed))
            return 1 if missing else 0
    except ManifestError as e:
        print(f"manifest: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
