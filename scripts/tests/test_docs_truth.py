"""scripts/lib/manifest.py, scripts/docs/goals.py and render_docs.py, scripts/ci/check_docs.py on a small repository
in tmp."""
import json
from pathlib import Path

from scripts.ci import check_docs
from scripts.docs import goals, render_docs
from scripts.lib import manifest


def bench(name, times, **counters):
    entries = [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": len(times),
                "repetition_index": i, "iterations": 1, "real_time": t, "cpu_time": t, "time_unit": "ms",
                **counters} for i, t in enumerate(times)]
    return entries


def write_run(path: Path, benches: list, commit="abc1234"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"context": {"distancies_commit": commit, "gpu": "NVIDIA H100",
                                            "date": "2026-01-01T00:00:00"}, "benchmarks": benches}))


def make_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_run(root / "results/study/h100.json",
              bench("batch/fast/batch:16", [0.5, 0.6, 0.55]) + bench("batch/slow/batch:16", [2.0, 2.1, 2.2]))
    for fam, auto in (("a", 0.56), ("b", 0.8)):   # auto at the best on family a, 1.6 x it on b
        write_run(root / f"results/study/h100-{fam}.json",
                  bench("batch/fast/batch:16", [0.5]) + bench("batch_auto/batch:16", [auto]))
    (root / "results").mkdir(exist_ok=True)
    manifest.save({"files": {"results/study/h100.json": {"study": "study", "gpu": "h100", "role": "main",
                                                         "kind": "run", "commit": "abc1234"},
                             **{f"results/study/h100-{fam}.json": {"study": "study", "gpu": "h100", "role": fam,
                                                                  "kind": "run", "commit": "abc1234"}
                                for fam in "ab"}},
                   "archived": [{"path": "results/history/", "commit": "0000000", "what": "old runs"}]}, root)
    (root / "results/goals").mkdir()
    (root / "results/goals/study.json").write_text(json.dumps([
        {"id": "met", "text": "fast",
         "evidence": {"file": "results/study/h100.json", "fixture": "^batch/fast/batch:16$"},
         "comparison": "<=", "threshold": 0.6, "unit": "ms"},
        {"id": "missed", "text": "slow", "evidence": {"file": "results/study/h100.json", "fixture": "^batch/slow/"},
         "comparison": "<=", "threshold": 1.0, "unit": "ms"},
        {"id": "best", "text": "best of all", "evidence": {"file": "results/study/h100.json",
                                                           "fixture": "^batch/[^/]+/batch:16$", "over": "min"},
         "comparison": "<=", "threshold": 0.6},
        {"id": "via_manifest", "text": "fast, the canonical run", "evidence": {"file": "canonical:study/h100",
                                                                              "fixture": "^batch/fast/batch:16$"},
         "comparison": "<=", "threshold": 0.6},
        {"id": "unknown", "text": "no file", "evidence": {"file": None}, "comparison": ">=", "threshold": 1},
        {"id": "each_family", "text": "auto within 1.1 x the best on every family",
         "evidence": {"files": ["results/study/h100-a.json", "results/study/h100-b.json"],
                      "fixture": "^batch/[^/]+/batch:16$", "over": "min",
                      "ratio_to": {"fixture": "^batch_auto/batch:16$"}},
         "comparison": "<=", "threshold": 1.1}]))
    (root / "docs").mkdir()
    (root / "docs/a.md").write_text("# A\n\n<!-- generated: scripts/docs/render_docs.py results-files from x -->\n"
                                    "<!-- end generated -->\n")
    (root / "scripts/docs").mkdir(parents=True)
    (root / "scripts/tool.py").write_text('"""A tool."""\nx = 1  # reads results/study/h100.json\n')
    for name in ("docs/render_docs.py", "report.py"):   # named by the docs below
        (root / "scripts" / name).write_text("")
    render_docs.process(root, write=True)
    return root


def test_manifest_canonical_and_add(tmp_path):
    root = make_repo(tmp_path)
    assert manifest.canonical("study", "h100", root) == root / "results/study/h100.json"
    new = tmp_path / "new.json"
    write_run(new, bench("batch/fast/batch:16", [0.4]), commit="def5678")
    out = manifest.add(new, "study", "h100", "distancies-bench --x", root=root)
    assert out == root / "results/study/h100.json"
    doc = manifest.load(root)
    assert doc["files"]["results/study/h100.json"]["commit"] == "def5678"
    assert doc["files"]["results/study/h100.json"]["command"] == "distancies-bench --x"
    assert any("previous main study run" in a["what"] for a in doc["archived"])
    assert manifest.check(root) == ([], [])
    assert json.loads(out.read_text())["benchmarks"][0]["real_time"] == 0.4   # written compact, same data


def test_goals_met_missed_unknown(tmp_path):
    root = make_repo(tmp_path)
    res = {r["id"]: r for r in (goals.evaluate(g, root) for g in goals.load_goals(root))}
    assert res["met"]["status"] == "met" and abs(res["met"]["value"] - 0.55) < 1e-9
    assert res["missed"]["status"] == "missed"
    assert res["best"]["status"] == "met" and res["best"]["where"] == "batch/fast/batch:16"
    assert res["via_manifest"]["status"] == "met" and res["via_manifest"]["file"] == "results/study/h100.json"
    assert res["unknown"]["status"] == "unknown" and "no evidence file" in res["unknown"]["why"]
    each = res["each_family"]   # the worst family is kept, and named
    assert each["status"] == "missed" and abs(each["value"] - 1.6) < 1e-9
    assert each["where"].startswith("results/study/h100-b.json: ") and each["id"] == "each_family"
    assert goals.main(["--root", str(root)]) == 0
    assert goals.main(["--root", str(root), "--strict"]) == 1


def test_rendered_block_in_step(tmp_path):
    root = make_repo(tmp_path)
    assert "`study/h100.json`" in (root / "docs/a.md").read_text()
    assert render_docs.process(root) == []
    assert check_docs.check(root) == []


def test_block_out_of_step_is_caught(tmp_path):
    root = make_repo(tmp_path)
    doc = root / "docs/a.md"
    doc.write_text(doc.read_text().replace("| h100 |", "| h200 |"))
    findings = check_docs.check(root)
    assert any("docs/a.md: generated block results-files" in f for f in findings)
    assert render_docs.main(["--check", "--root", str(root)]) == 1


def test_missing_path_is_caught_in_comments_and_docs(tmp_path):
    root = make_repo(tmp_path)
    (root / "scripts/tool.py").write_text('"""Reads kernels/gone2.cuh."""\nx = 1  # see kernels/gone.cuh\n'
                                          'y = "kernels/a_string_not_a_comment.cuh"\n')
    (root / "docs/b.md").write_text("The run is `results/study/h200.json`.\n")
    findings = check_docs.check(root)
    assert any("scripts/tool.py:1" in f and "kernels/gone2.cuh" in f for f in findings)
    assert any("scripts/tool.py:2" in f and "kernels/gone.cuh" in f for f in findings)
    assert not any("a_string_not_a_comment" in f for f in findings)
    assert any("docs/b.md:1" in f and "results/study/h200.json" in f for f in findings)


def test_modules_named_must_exist(tmp_path):
    root = make_repo(tmp_path)
    (root / "scripts/kind").mkdir()
    (root / "scripts/kind/__init__.py").write_text("")
    (root / "scripts/kind/tool.py").write_text("")
    (root / "docs/b.md").write_text("Run `python -m scripts.kind.tool X` or `python3 -m scripts.kind`.\n")
    assert check_docs.check(root) == []
    (root / "docs/b.md").write_text("Run `python -m scripts.kind.gone X`.\n")
    (root / "scripts/tool.py").write_text('"""Usage: python -m scripts.tool_gone ARGS"""\n')
    findings = check_docs.check(root)
    assert any("docs/b.md:1" in f and "module that does not exist: scripts.kind.gone" in f for f in findings)
    assert any("scripts/tool.py:1" in f and "scripts.tool_gone" in f for f in findings)


def test_generated_blocks_are_held_to_their_json_not_to_the_tree(tmp_path):
    # A command in the manifest names a script where it was at its commit; it may have moved since.
    root = make_repo(tmp_path)
    doc = manifest.load(root)
    doc["files"]["results/study/h100.json"]["command"] = "scripts/moved_since.py results/study/h100.json"
    manifest.save(doc, root)
    render_docs.process(root, write=True)
    assert "scripts/moved_since.py" in (root / "docs/a.md").read_text()
    assert check_docs.check(root) == []


def test_globs_placeholders_outputs_and_archived_paths_pass(tmp_path):
    root = make_repo(tmp_path)
    (root / "docs/b.md").write_text(
        "Runs: `results/*/h100.json`, `results/<study>/<gpu>.json`, results/{a,b}.json.\n"
        "Old ones in `results/history/h100-old.json`.\n"
        "```sh\ndistancies-bench --benchmark_out=results/new.json\n"
        "scripts/report.py results/new.json\n```\n")
    assert check_docs.check(root) == []
    # A comment may not cite an archived file: it should cite the docs or the manifest.
    (root / "scripts/tool.py").write_text("x = 1  # results/history/h100-old.json\n")
    assert any("archived" in f for f in check_docs.check(root))


def test_cited_commit_must_match_the_file(tmp_path):
    root = make_repo(tmp_path)
    (root / "docs/b.md").write_text("The run `results/study/h100.json` (commit `1234567`) is fast.\n")
    assert any("context commit abc1234" in f for f in check_docs.check(root))
    (root / "docs/b.md").write_text("The run `results/study/h100.json` (commit `abc1234`) is fast.\n")
    assert check_docs.check(root) == []


def test_ab_block_is_the_medians_of_every_sample_of_each_side(tmp_path):
    root = make_repo(tmp_path)
    for side, rounds in (("old", ([1.0, 1.2, 1.1], [1.05])), ("new", ([1.3, 1.25, 1.2], [1.4]))):
        for i, times in enumerate(rounds, 1):
            write_run(root / f"results/ab/ab-fam-{side}-{i}.json", bench("batch/x/batch:16/manual_time", times),
                      commit=side + "123")
    srcs, body = render_docs.render("ab:ab", render_docs.Ctx(root))
    assert len(srcs) == 4
    assert "before `old123`" in body and "after `new123`" in body
    # old: median of 1.0, 1.05, 1.1, 1.2 = 1.075; new: median of 1.2, 1.25, 1.3, 1.4 = 1.275
    assert "| `fam` | `batch/x/batch:16` | 1.0750 | 1.2750 | 1.186 | 1.0000–1.2000 | 1.2000–1.4000 |" in body
    assert "Largest after / before: 1.186 (`batch/x/batch:16` on `fam`)." in body


def test_intersect_peers_block_takes_a_set_and_the_faster_peer(tmp_path):
    root = make_repo(tmp_path)
    rows = {"svs/serial": 30.0, "roaring/allcores": 0.5, "simd_gallop/allcores": 1.5, "probe/coarse_batch": 0.02,
            "hash/coarse_batch": 0.05, "bitmap/coarse_batch": 0.04}
    write_run(root / "results/intersection/h200-x.json",
              [{"name": f"intersect/{r}/set:real/manual_time_median", "run_name": f"intersect/{r}/set:real/manual_time",
                "run_type": "aggregate", "aggregate_name": "median", "real_time": t, "time_unit": "ms",
                "floor_ratio": 2.0, "distinct_read_ratio": 1.5} for r, t in rows.items()])
    srcs, body = render_docs.render("intersect-peers:h200-x@real", render_docs.Ctx(root))
    assert srcs == ["results/intersection/h200-x.json"]
    # the faster peer here is CRoaring (0.5 ms): the probing row is 25 x it, 1,500 x serial SVS
    assert "| `intersect/probe/coarse_batch/set:real` | 0.020 | 1,500.0 | 25.00 | 2.0 | 1.50 |" in body
    assert "| `intersect/simd_gallop/allcores/set:real` | 1.500 | 20.0 | 0.33 |" in body


def _median(name, t, **counters):
    return {"name": f"{name}/manual_time_median", "run_name": f"{name}/manual_time", "run_type": "aggregate",
            "aggregate_name": "median", "real_time": t, "time_unit": "ms", **counters}


def test_intersect_packed_and_latency_blocks_read_the_run(tmp_path):
    root = make_repo(tmp_path)
    write_run(root / "results/intersection/h200-p.json", [
        _median("intersect/probe/coarse_batch/set:gov2", 0.05, lists_mb=160.0, index_mb=320.0, min_read_mb=10.9),
        _median("intersect/packed/coarse_batch/set:gov2", 0.08, lists_mb=74.0, index_mb=228.5, min_read_mb=5.3),
        _median("intersect_latency/probe/coarse_batch/set:real", 13.0, p50_us=12.5, p90_us=14.0, p99_us=24.5,
                max_us=57.0),
        _median("intersect_latency/roaring/one_core/set:real", 5.0, p50_us=1.6, p90_us=15.6, p99_us=37.9,
                max_us=93.6)])
    srcs, body = render_docs.render("intersect-packed:h200-p", render_docs.Ctx(root))
    assert srcs == ["results/intersection/h200-p.json"]
    assert body.splitlines()[2] == ("| GOV2-shaped | 0.0500 | 0.0800 | 1.60 × | 160.0 → 74.0 | 320.0 → 228.5 "
                                    "| 10.90 → 5.30 |")
    assert len(body.splitlines()) == 3  # the sets the run lacks are left out
    for name, packed in (("packed-search/h200-step1-x", 0.15), ("h200-packed", 0.08)):
        write_run(root / f"results/intersection/{name}.json", [
            _median("intersect/probe/coarse_batch/set:gov2", 0.05),
            _median("intersect/packed/coarse_batch/set:gov2", packed),
            _median("intersect_latency/probe/coarse_batch/set:gov2", 20.0, p50_us=19.5)])
    srcs, body = render_docs.render("intersect-packed-steps", render_docs.Ctx(root))
    assert srcs == ["results/intersection/packed-search/h200-step1-x.json", "results/intersection/h200-packed.json"]
    assert "| `results/intersection/packed-search/h200-step1-x.json` | — | 3.00 × | — | 19.5 | — |" in body
    assert "| `results/intersection/h200-packed.json` | — | 1.60 × | — | 19.5 | — |" in body
    _, body = render_docs.render("intersect-latency:h200-p", render_docs.Ctx(root))
    assert "| Linux source | `probe/coarse_batch` | 12.5 | 14.0 | 24.5 | 57.0 |" in body
    assert "| Linux source | `roaring/one_core` | 1.6 | 15.6 | 37.9 | 93.6 |" in body


def test_certificate_trace_block_shows_passed_and_failed_queries(tmp_path):
    root = make_repo(tmp_path)
    counters = {"trace_K": 64, "trace_bound": 0.0, "trace_certified": 639, "trace_uncertified": 385,
                "trace_certified_candidates_median": 6379, "trace_uncertified_candidates_median": 6800,
                "trace_certified_margin_median": 6.4e-5, "trace_uncertified_margin_median": -4.3e-5}
    write_run(root / "results/families/certificate-trace/aniso-0.98.json",
              [{"name": "batch/batch_i8_filter/batch:1024/min_time:0.050/manual_time", "run_type": "iteration",
                "real_time": 5.0, "time_unit": "ms", **counters}])
    srcs, body = render_docs.render("certificate-trace", render_docs.Ctx(root))
    assert srcs == ["results/families/certificate-trace/aniso-0.98.json"]
    assert "| `batch_i8_filter` | 1024 | 639 / 385 | 6,379 / 6,800 | 6.4e-05 / -4.3e-05 | 0.0e+00 |" in body


def test_projected_bound_block_shows_each_familys_candidates(tmp_path):
    root = make_repo(tmp_path)
    one = {"median": 30.0, "p90": 37.0, "max": 90, "over_k_list": 0.025}
    names = [t + n for t in ("", "tiled_") for n in ("plain", "centred", "projected52", "fp32_term")]
    (root / "results/families").mkdir(parents=True)
    (root / "results/families/projected-bound.json").write_text(json.dumps(
        {"families": {"aniso:0.95": {"rows": 200000, "dim": 300, **{n: one for n in names}}}}))
    srcs, body = render_docs.render("projected-bound", render_docs.Ctx(root))
    assert srcs == ["results/families/projected-bound.json"]
    assert body.splitlines()[2].startswith("| `aniso:0.95` | 200,000 | 30 / 37 (2 %) | 30 / 37 (2 %) |")
    # a file with some variants only: the columns it has
    (root / "results/families/projected-bound-full.json").write_text(json.dumps(
        {"families": {"aniso:0.98": {"rows": 2196016, "dim": 300, "tiled_fp32_term": one}}}))
    srcs, body = render_docs.render("projected-bound:full", render_docs.Ctx(root))
    assert srcs == ["results/families/projected-bound-full.json"]
    assert body.splitlines()[0] == "| family | rows | exact fp32 term |"
    assert body.splitlines()[2] == "| `aniso:0.98` | 2,196,016 | 30 / 37 (2 %) |"


def test_settings_block_shows_each_setting_against_the_first(tmp_path):
    root = make_repo(tmp_path)
    for n, setting, times in ((1, "off", [2.0, 2.2, 2.1]), (2, "both", [1.8, 1.9, 1.85])):
        write_run(root / f"results/sw/set-{n}-{setting}-aniso-0.98.json",
                  bench("batch/x/batch:1024/min_time:0.050/manual_time", times), commit="def5678")
    srcs, body = render_docs.render("settings:sw", render_docs.Ctx(root))
    assert srcs == ["results/sw/set-1-off-aniso-0.98.json", "results/sw/set-2-both-aniso-0.98.json"]
    assert "One build (`def5678`)" in body and "| family | fixture | `off` | `both` |" in body
    assert "| `aniso-0.98` | `batch/x/batch:1024` | 2.100 | 1.850 (0.881) |" in body
