"""scripts/lib/bench_json.py as the one loader of result files: plain, gzip (X.json.gz), the
fallback from X.json to X.json.gz, and one clear BenchError line for a corrupt file; and the
readers built on it (manifest, goals, check_docs, dashboard, family_report) seeing .json.gz."""
import gzip
import json
from pathlib import Path

import pytest

from scripts.ci import check_docs
from scripts.docs import goals
from scripts.lib import bench_json, manifest
from scripts.reports import dashboard, family_report
from scripts.tests import gbfake, tool

DOC = gbfake.document(gbfake.entries("batch/fast/batch:16", [{"real_time": t} for t in (0.5, 0.6, 0.55)]))


def gz(path: Path, data: bytes) -> Path:
    path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    return path


def test_plain_json(tmp_path):
    p = tmp_path / "run.json"
    p.write_text(json.dumps(DOC))
    assert bench_json.read_json(p) == DOC
    assert bench_json.load(str(p)).get("batch/fast/batch:16").center("real_time") == pytest.approx(0.55)


def test_gzip_json(tmp_path):
    p = gz(tmp_path / "run.json.gz", json.dumps(DOC).encode())
    assert bench_json.read_json(p) == DOC
    assert bench_json.load(str(p)).get("batch/fast/batch:16") is not None
    assert bench_json.read_text(p) == json.dumps(DOC)


def test_json_name_falls_back_to_its_gz(tmp_path):
    gz(tmp_path / "run.json.gz", json.dumps(DOC).encode())
    asked = tmp_path / "run.json"
    assert not asked.exists()
    assert bench_json.resolve(asked) == str(asked) + ".gz"
    assert bench_json.exists(asked)
    assert bench_json.read_json(asked) == DOC
    assert bench_json.load(str(asked)).get("batch/fast/batch:16") is not None


def test_plain_file_wins_over_its_gz(tmp_path):
    (tmp_path / "a.json").write_text('{"which": "plain"}')
    gz(tmp_path / "a.json.gz", b'{"which": "gz"}')
    assert bench_json.read_json(tmp_path / "a.json") == {"which": "plain"}
    assert bench_json.read_json(tmp_path / "a.json.gz") == {"which": "gz"}


def test_text_gz_and_open_text(tmp_path):
    gz(tmp_path / "console.txt.gz", "suite main: 3 fixtures in 1:02\nß\n".encode())
    with bench_json.open_text(tmp_path / "console.txt") as f:
        assert f.read().splitlines() == ["suite main: 3 fixtures in 1:02", "ß"]


def test_gzip_under_a_plain_name_is_read_by_its_magic(tmp_path):
    p = gz(tmp_path / "run.json", json.dumps(DOC).encode())
    assert bench_json.read_json(p) == DOC


@pytest.mark.parametrize("content", [b"\x1f\x8bnot really gzip", b"plain bytes, no gzip header",
                                     gzip.compress(b"{\"a\": 1}" * 100, mtime=0)[:-6]])
def test_corrupt_gz_is_one_bench_error(tmp_path, content):
    p = tmp_path / "run.json.gz"
    p.write_bytes(content)
    with pytest.raises(bench_json.BenchError) as e:
        bench_json.read_json(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: corrupt gzip") and "\n" not in msg
    with pytest.raises(bench_json.BenchError, match="corrupt gzip"):   # through the fallback too
        bench_json.read_json(tmp_path / "run.json")


def test_corrupt_gz_on_the_command_line_is_one_line_no_traceback(tmp_path):
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    good = gbfake.write(tmp_path / "good.json", DOC)
    p = tool.run("scripts.ci.compare", bad, good, check=False, capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().count("\n") == 0 and "bad.json.gz: corrupt gzip" in p.stderr


def test_not_json_inside_gz_and_missing_file(tmp_path):
    with pytest.raises(bench_json.BenchError, match="not JSON"):
        bench_json.read_json(gz(tmp_path / "x.json.gz", b"{nope"))
    with pytest.raises(bench_json.BenchError, match="cannot read"):
        bench_json.read_json(tmp_path / "absent.json")


def test_names():
    assert bench_json.result_stem("results/families/h200-aniso-0.95.json.gz") == "h200-aniso-0.95"
    assert bench_json.result_stem("h200-aniso-0.95.json") == "h200-aniso-0.95"
    assert bench_json.plain_name("a/b.json.gz") == "a/b.json"
    assert bench_json.is_json_name("a.json.gz") and bench_json.is_json_name("a.json")
    assert not bench_json.is_json_name("a.txt.gz") and not bench_json.is_json_name("a.png")


def _repo(tmp_path: Path, compressed: bool) -> Path:
    root = tmp_path / "repo"
    (root / "results/study").mkdir(parents=True)
    (root / "results/goals").mkdir()
    name = "results/study/h100.json" + (".gz" if compressed else "")
    data = json.dumps(DOC).encode()
    if compressed:
        gz(root / name, data)
    else:
        (root / name).write_bytes(data)
    manifest.save({"files": {name: {"study": "study", "gpu": "h100", "role": "main", "kind": "run"}},
                   "archived": []}, root)
    (root / "results/goals/study.json").write_text(json.dumps([
        {"id": "old_name", "text": "cited by its old name",
         "evidence": {"file": "results/study/h100.json", "fixture": "^batch/fast/batch:16$"},
         "comparison": "<=", "threshold": 0.6, "unit": "ms"},
        {"id": "canonical", "text": "through the manifest",
         "evidence": {"file": "canonical:study/h100", "fixture": "^batch/fast/batch:16$"},
         "comparison": "<=", "threshold": 0.6, "unit": "ms"}]))
    return root


def test_goals_read_the_same_value_plain_or_compressed(tmp_path):
    root = _repo(tmp_path / "a", False)
    plain = [goals.evaluate(g, root) for g in goals.load_goals(root)]
    root = _repo(tmp_path / "b", True)
    packed = [goals.evaluate(g, root) for g in goals.load_goals(root)]
    assert [(r["status"], r["value"]) for r in plain] == [(r["status"], r["value"]) for r in packed]
    assert all(r["status"] == "met" for r in packed)
    assert manifest.canonical("study", "h100", root) == root / "results/study/h100.json.gz"
    assert manifest.context_of(root / "results/study/h100.json.gz")["commit"] == "abc1234"
    assert manifest.check(root) == ([], [])


def test_manifest_add_compresses_a_large_run_deterministically(tmp_path):
    root = _repo(tmp_path, False)
    big = gbfake.document(gbfake.entries("batch/fast/batch:16", [{"real_time": 0.5 + i / 1e4} for i in range(400)]))
    src = tmp_path / "big.json"
    src.write_text(json.dumps(big))
    out = manifest.add(src, "study", "h200", "distancies-bench --x", root=root)
    assert out == root / "results/study/h200.json.gz"
    first = out.read_bytes()
    assert first[:2] == b"\x1f\x8b" and bench_json.read_json(out) == big
    manifest.add(src, "study", "h200", "distancies-bench --x", root=root)   # same input, same bytes
    assert out.read_bytes() == first
    (tmp_path / "small.json").write_text(json.dumps(DOC))   # under GZIP_OVER: stays plain
    small = manifest.add(tmp_path / "small.json", "study", "h300", "distancies-bench --y", root=root)
    assert small == root / "results/study/h300.json" and bench_json.read_json(small) == DOC


def test_check_docs_wants_the_gz_name(tmp_path):
    root = _repo(tmp_path, True)
    (root / "docs").mkdir()
    (root / "docs/a.md").write_text("Old `results/study/h100.json`, new `results/study/h100.json.gz`.\n")
    findings = check_docs.check(root)
    assert len(findings) == 1 and "stored gzip-compressed" in findings[0] and "results/study/h100.json " in findings[0]


def test_dashboard_and_family_report_read_gz(tmp_path):
    root = _repo(tmp_path, True)
    runs = dashboard.collect([root / "results"], {})
    assert [Path(r.path).name for r in runs] == ["h100.json.gz"]
    fam = gz(tmp_path / "h200-aniso-0.95.json.gz", json.dumps(DOC).encode())
    assert family_report.family_of(fam, {}) == "aniso-0.95"
    assert list(family_report.load([fam])) == ["aniso-0.95"]
