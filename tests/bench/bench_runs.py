#!/usr/bin/env python3
"""distancies-bench's run machinery on CPU fixtures (no GPU needed): progress lines, a JSON file
valid after SIGTERM and SIGKILL that holds every finished fixture, --resume adding only the
new fixtures, and scripts/reports/report.py reading a partial file.

usage: bench_runs.py BENCH WORKDIR CASE   (CASE: progress, sigterm, sigkill, resume, report)
No timing thresholds: DISTANCIES_BENCH_TEST_PAUSE_MS holds each fixture after the first before
its report, so a signal sent after the first progress line lands mid-run."""
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

BENCH, WORK, CASE = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--rows", "2000", "--dim", "16", "--benchmark_repetitions=1"]
FIRST = "^(cpu/sequential|intersect/svs/serial/set:small)/"
ALL = "^(cpu/sequential|intersect/svs/serial/set:small|sequence/CPU|intersect/adp/serial/set:small)/"
LINE = re.compile(r"^\[(\d+)/(\d+)\] (\S+)  [0-9.]+ s.*  elapsed \d\d:\d\d  ETA \d\d:\d\d$")


def fixtures(path):
    doc = json.loads(Path(path).read_text())
    assert "context" in doc and isinstance(doc["benchmarks"], list), doc.keys()
    return [b["fixture"] for b in doc["benchmarks"]], doc


def run(out, filt, *extra, pause=0, model=SMALL):
    env = {**os.environ, "DISTANCIES_BENCH_TEST_PAUSE_MS": str(pause)}
    return subprocess.run([BENCH, *model, f"--benchmark_filter={filt}", "--out", str(out), *extra],
                          capture_output=True, text=True, env=env, timeout=300)


def progress():
    r = run(WORK / "progress.json", ALL)
    assert r.returncode == 0, r.stderr
    lines = [m for m in map(LINE.match, r.stderr.splitlines()) if m]
    assert [int(m[1]) for m in lines] == [1, 2, 3, 4] and all(m[2] == "4" for m in lines), r.stderr
    assert re.search(r"suite full: 4 fixtures in \d\d:\d\d: 4 ran, 0 skipped, 0 errors; JSON: ", r.stderr), r.stderr
    names, doc = fixtures(WORK / "progress.json")
    assert sorted(names) == sorted(m[3] for m in lines) and doc["context"]["suite_state"] == "complete", doc["context"]
    assert all(b["fixture_wall_s"] >= 0 for b in doc["benchmarks"])


def interrupt(sig):
    out = WORK / f"interrupted-{sig.name}.json"
    out.unlink(missing_ok=True)
    env = {**os.environ, "DISTANCIES_BENCH_TEST_PAUSE_MS": "60000"}
    p = subprocess.Popen([BENCH, *SMALL, f"--benchmark_filter={ALL}", "--out", str(out)], stderr=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, text=True, env=env)
    finished = []
    for line in p.stderr:
        m = LINE.match(line.strip())
        if m:
            finished.append(m[3])
            break
    assert finished, "no fixture finished"
    p.send_signal(sig)
    rest = p.stderr.read()
    assert p.wait(timeout=60) == -sig, p.returncode
    names, doc = fixtures(out)  # valid JSON after the signal
    assert names == finished, (names, finished)
    assert doc["context"]["suite_state"] == "running", doc["context"]
    assert not list(WORK.glob(out.name + ".tmp.*")), "a temporary was left"
    if sig == signal.SIGTERM:
        assert "interrupted: 1 of 4 fixtures are in" in rest and "--resume" in rest, rest
    # The killed run resumes: only the other three run, each fixture once.
    r = run(out, ALL, "--resume", str(out))
    assert r.returncode == 0, r.stderr
    assert "3 fixtures (1 already in" in r.stderr, r.stderr
    names, doc = fixtures(out)
    assert sorted(names) == sorted(set(names)) and len(names) == 4 and doc["context"]["suite_state"] == "complete"


def resume():
    out = WORK / "resume.json"
    out.unlink(missing_ok=True)
    assert run(out, FIRST).returncode == 0
    first, _ = fixtures(out)
    assert sorted(first) == ["cpu/sequential", "intersect/svs/serial/set:small"], first
    r = run(out, ALL, "--resume", str(out))
    assert r.returncode == 0, r.stderr
    ran = [m[3] for m in map(LINE.match, r.stderr.splitlines()) if m]
    assert sorted(ran) == ["intersect/adp/serial/set:small", "sequence/CPU"], r.stderr
    names, _ = fixtures(out)
    assert sorted(names) == sorted(set(names)) and len(names) == 4, names
    r = run(out, ALL, "--resume", str(out))  # nothing left
    assert r.returncode == 0 and "nothing to run" in r.stderr, r.stderr
    more = ALL.replace("sequence/CPU|", "sequence/CPU|intersect/hash/serial/set:small|")
    # Another model: refused, the file kept.
    other = run(out, more, "--resume", str(out), model=["--rows", "2000", "--dim", "8"])
    assert other.returncode != 0 and "resume needs the same settings" in other.stderr, other.stderr
    assert len(fixtures(out)[0]) == 4


def report():
    py = ROOT / ".venv/bin/python"
    if not py.exists():
        print("SKIPPED: no .venv (scripts/setup.sh makes it) for scripts/reports/report.py")
        sys.exit(77)
    out = WORK / "interrupted-SIGKILL.json"
    if not out.exists():
        interrupt(signal.SIGKILL)
    part = WORK / "partial.json"
    doc = json.loads(out.read_text())
    doc["benchmarks"] = doc["benchmarks"][:1]
    part.write_text(json.dumps(doc))
    r = subprocess.run([str(py), "-m", "scripts.reports.report", str(part), "--out-dir", str(WORK / "report"),
                        "--md", str(WORK / "report/tables.md")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


WORK.mkdir(parents=True, exist_ok=True)
{"progress": progress, "sigterm": lambda: interrupt(signal.SIGTERM), "sigkill": lambda: interrupt(signal.SIGKILL),
 "resume": resume, "report": report}[CASE]()
print(f"bench runs {CASE} ok")
