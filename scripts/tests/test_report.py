"""scripts/reports/report.py on made-up JSON: the three study tables, every variant, the plots, bad input."""
import os
import re

import pytest

from scripts.tests import gbfake, tool

HERE = os.path.dirname(os.path.abspath(__file__))

MULT = [0.98, 1.0, 1.05]   # three repetitions; the median is the base value, the mean is not
QUERIES = ["ring", "key", "key", "key", "ring", "king", "king", "ring", "barca", "messi"]


def reps(**base):
    return [{k: v * m for k, v in base.items()} for m in MULT]


def pipeline(dot, fm, bms, h2d, overhead, model_h2d=None, stage="first_merge"):
    st = {"dot_ms": dot, f"{stage}_ms": fm}
    if bms is not None:
        st["botched_merge_sort_ms"] = bms
    tr = {"query_h2d_ms": h2d / 2, "result_d2h_ms": h2d / 2}
    if model_h2d:
        tr["model_h2d_ms"] = model_h2d
    kernel, transfer = sum(st.values()), sum(tr.values())
    total = kernel + transfer + overhead
    # The stage-by-stage search (the breakdown) carries 0.02 ms of stage events more than the
    # search timed end to end (total_ms).
    return reps(real_time=total, **st, **tr, kernel_ms=kernel, transfer_ms=transfer, overhead_ms=overhead + 0.02,
                staged_total_ms=total + 0.02, total_ms=total, wall_ms=total * 1.1, distances_per_ms=2196016 / total,
                floor_ratio=total / 0.8)


def sequence(per_query):
    s = {f"q{i + 1:02d}_{w}_ms": per_query * (1 + i / 100) for i, w in enumerate(QUERIES)}
    s["total_ms"] = s["real_time"] = sum(s.values())
    return [s]


def dot(ms):
    return reps(real_time=ms, kernel_ms=ms, gb_per_s=2.635 / ms * 1e3, floor_ratio=ms / 0.8,
                distances_per_ms=2196016 / ms)


def full_doc(skip=()):
    b = []
    def add(name, samples, suffix="/manual_time"):
        if not any(name.startswith(s) for s in skip):
            b.extend(gbfake.entries(name, samples, suffix))
    add("floor/read_model", reps(real_time=0.8, kernel_ms=0.8, gb_per_s=3294.0))
    add("dot/thread_per_row_dot", dot(4.0))
    add("dot/shared_reduce_dot", dot(1.2))
    add("dot/warp_shuffle_dot", dot(1.0))
    add("dot/coalesced_dot_32t", dot(0.9))
    add("dot/made_up_new_dot", dot(0.85))     # not in the study: must show up anyway
    b.extend(gbfake.errored("dot/broken_dot", "made-up failure"))
    for stage, base in (("first_merge", 0.2), ("botched_merge_sort", 0.1), ("cub_radix_sort", 3.0)):
        for k in (1, 10, 100, 1024):
            add(f"topk/{stage}/k:{k}", reps(real_time=base * k ** 0.25, kernel_ms=base * k ** 0.25, k=k))
    add("pipeline/V1", pipeline(4.0, 0.2, 0.1, 0.02, 2.0, model_h2d=50.0), "/iterations:10/manual_time")
    add("pipeline/V2", pipeline(4.0, 0.2, 0.1, 0.02, 1.0))
    add("pipeline/V3", pipeline(1.2, 0.2, 0.1, 0.02, 0.48))
    add("pipeline/V4", pipeline(0.5, 0.2, 0.1, 0.05, 0.15))          # total 1.0
    add("pipeline/V4_cub_sort", pipeline(0.5, 3.0, None, 0.05, 0.45, stage="cub_radix_sort"))  # total 4.0
    add("cpu/sequential", reps(real_time=1000.0, total_ms=1000.0, distances_per_ms=2196.016),
        "/iterations:3/manual_time")
    for v, ms in (("V1", 56.0), ("V2", 5.0), ("V3", 2.0), ("V4", 1.0), ("CPU", 1000.0)):
        add(f"sequence/{v}", sequence(ms), "/iterations:1/manual_time")
    return gbfake.document(b)


def run_report(tmp_path, doc, *extra):
    src = gbfake.write(tmp_path / "results.json", doc)
    out = tmp_path / "out"
    p = tool.run("scripts.reports.report", src, "--out-dir", str(out), *extra,
                 capture_output=True, text=True)
    return p, out


def section(md, heading):
    """The rows of the first table after a '## heading...' line, keyed by their first cell."""
    text = md.split("## " + heading, 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")]
    header, body = rows[0], rows[2:]
    return {r[0]: dict(zip(header, r, strict=True)) for r in body}, text


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("full")
    p, out = run_report(tmp, full_doc())
    assert p.returncode == 0, p.stderr
    return (out / "report.md").read_text(), out


def test_table2_totals_speedups_distances(full):
    rows, text = section(full[0], "Table 2")
    v4 = rows["V4"]
    assert v4["total ms ours"] == "1.00 ± 0.036"           # the median (1.0), not the mean (1.01)
    assert v4["× CPU ours"] == "1000.00"                   # cpu/sequential 1000 ms / 1 ms
    v3_total = 1.2 + 0.3 + 0.02 + 0.48
    assert v4["× previous ours"] == f"{v3_total / 1.0:.2f}"
    assert v4["distances/ms ours"] == "2,196,016"
    assert (v4["total ms study"], v4["× CPU study"], v4["× previous study"], v4["distances/ms study"]) == \
        ("10", "242.59", "1.70", "219601.6")
    assert rows["CPU"]["total ms study"] == "2425.9 ± 7.91"
    assert rows["V1"]["× previous ours"] == f"{1000 / 56.32:.2f}"   # V1 over the CPU
    assert rows["V4_cub_sort"]["× CPU ours"] == "250.00" and rows["V4_cub_sort"]["total ms study"] == "—"
    assert list(rows)[:5] == ["CPU", "V1", "V2", "V3", "V4"]
    assert "NVIDIA H100 80GB HBM3" in text and "commit abc1234" in text and "1980 MHz" in text


def test_table3_breakdown_ours_and_study(full):
    rows, text = section(full[0], "Table 3")
    v4 = rows["V4 ours"]
    assert list(v4) == ["version", "DotProduct", "FirstMerge", "BotchedMergeSort", "CubRadixSort",
                        "transfers", "overhead", "transfers + overhead", "total", "total without stage events"]
    assert (v4["DotProduct"], v4["FirstMerge"], v4["BotchedMergeSort"]) == ("0.500 ± 0.018", "0.200 ± 0.00721",
                                                                              "0.100 ± 0.00361")
    assert v4["transfers"] == "0.050 ± 0.0018" and v4["overhead"].startswith("0.170 ± ")
    assert v4["transfers + overhead"] == "0.220" and v4["total"].startswith("1.02 ± ")
    assert v4["total without stage events"] == "1.00 ± 0.036"
    assert rows["V1 ours"]["transfers"].startswith("50.02")
    assert rows["V1 study"]["DotProduct"] == "22.6" and rows["V1 study"]["transfers + overhead"] == "236.2"
    assert rows["V4 study"]["total"] == "10" and rows["V4 study"]["CubRadixSort"] == "—"
    assert rows["V4_cub_sort ours"]["CubRadixSort"] == "3.00 ± 0.108"
    assert "203 ms" in text and "NVIDIA H100 80GB HBM3" in text


def test_table1_sequence_beside_study_ranges(full):
    rows, text = section(full[0], "Table 1")
    assert "NVIDIA H100 80GB HBM3" in text and "CUDA driver 12.8" in text
    assert rows["1"]["query"] == "ring" and rows["10"]["query"] == "messi"
    assert rows["1"]["V4 ours"] == "1.00" and rows["10"]["V4 ours"] == "1.09"   # one run: no ±
    assert rows["1"]["CPU study"] == "2400–2470" and rows["1"]["V1 study"] == "237–276"
    assert rows["1"]["V4 study"] == "10" and rows["1"]["V3 study"] == "17"
    assert [k for k in rows["1"] if k.endswith("ours")] == ["CPU ours", "V1 ours", "V2 ours", "V3 ours", "V4 ours"]
    assert rows[""]["CPU ours"] == f"{sum(1000 * (1 + i / 100) for i in range(10)):,.0f}"


def test_every_variant_stage_and_pipeline_listed(full):
    md = full[0]
    dots, text = section(md, "Dot-product variants")
    assert list(dots) == ["`floor/read_model`", "`dot/thread_per_row_dot`", "`dot/shared_reduce_dot`",
                          "`dot/warp_shuffle_dot`", "`dot/coalesced_dot_32t`", "`dot/made_up_new_dot`"]
    assert dots["`dot/warp_shuffle_dot`"]["floor ratio"] == "1.25" and "Floor (reading the model once): 0.8" in text
    topk, _ = section(md, "Top-k stages")
    assert list(topk) == ["`first_merge`", "`botched_merge_sort`", "`cub_radix_sort`"]
    assert topk["`cub_radix_sort`"]["k=1"].startswith("3.00") and "k=1024" in topk["`first_merge`"]
    pipes, _ = section(md, "Every pipeline")
    assert list(pipes["`V4`"]) == ["pipeline", "reps", "DotProduct", "FirstMerge", "BotchedMergeSort",
                                   "CubRadixSort", "query_h2d", "result_d2h", "model_h2d", "kernel_ms",
                                   "transfer_ms", "overhead_ms", "staged_total_ms", "total_ms", "wall_ms",
                                   "distances_per_ms", "floor_ratio"]
    assert list(pipes) == ["`V1`", "`V2`", "`V3`", "`V4`", "`V4_cub_sort`"]
    assert pipes["`V1`"]["model_h2d"] == "50.00" and pipes["`V4`"]["model_h2d"] == "—"
    assert "`dot/broken_dot`: made-up failure" in md


def test_plots_written_and_linked(full):
    md, out = full
    for name in ("breakdown.png", "dot_vs_floor.png", "distances_per_ms.png"):
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
        assert f"]({name})" in md


def test_missing_fixtures_give_notes(tmp_path):
    p, out = run_report(tmp_path, full_doc(skip=("sequence/", "cpu/", "dot/")))
    assert p.returncode == 0, p.stderr
    md = (out / "report.md").read_text()
    assert "no `sequence/*` benchmarks" in md
    assert "No `cpu/sequential` in this JSON" in md
    assert "`dot_vs_floor.png` not drawn" in md and not (out / "dot_vs_floor.png").exists()
    assert (out / "breakdown.png").stat().st_size > 0
    rows, _ = section(md, "Table 2")
    assert rows["V4"]["× CPU ours"] == "—" and rows["V4"]["× previous ours"] != "—"


def test_md_elsewhere_links_plots_relatively(tmp_path):
    p, out = run_report(tmp_path, full_doc(), "--md", str(tmp_path / "docs" / "r.md"))
    assert p.returncode == 0, p.stderr
    assert "](../out/breakdown.png)" in (tmp_path / "docs" / "r.md").read_text()
    assert (out / "breakdown.png").exists() and not (out / "report.md").exists()


def test_real_google_benchmark_171_output(tmp_path):
    """Real distancies-bench output (CPU only, GB 1.7.1): '/iterations:3/manual_time' names."""
    out = tmp_path / "out"
    p = tool.run("scripts.reports.report", os.path.join(HERE, "data", "cpu_only_gb171.json"), "--out-dir", str(out),
                 capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows, _ = section((out / "report.md").read_text(), "Table 2")
    assert rows["CPU"]["total ms ours"].startswith("0.336 ±")


@pytest.mark.parametrize("content,message", [
    ("this is not json", "not JSON"),
    ('[1, 2]', "not Google Benchmark JSON"),
    ('{"context": {}, "benchmarks": [{"real_time": 1}]}', "has no 'name'"),
])
def test_bad_input_exit_2(tmp_path, content, message):
    src = tmp_path / "bad.json"
    src.write_text(content)
    p = tool.run("scripts.reports.report", str(src),
                 capture_output=True, text=True)
    assert p.returncode == 2
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not re.search("Traceback", p.stderr)


def test_missing_file_exit_2(tmp_path):
    p = tool.run("scripts.reports.report", str(tmp_path / "nope.json"),
                 capture_output=True, text=True)
    assert p.returncode == 2 and "cannot read" in p.stderr


def test_peer_table_ratios(tmp_path):
    peers = gbfake.document(gbfake.entries("peer/torch_mv_topk_fp32",
                                           reps(real_time=12.0, total_ms=12.0, distances_per_ms=183001.3, exact=1)),
                            peer="pytorch 2.x")
    ppath = gbfake.write(tmp_path / "peers.json", peers)
    p, out = run_report(tmp_path, full_doc(), "--peers", ppath)
    assert p.returncode == 0, p.stderr
    md = (out / "report.md").read_text()
    rows, text = section(md, "Peers in the same run")
    row = rows["`torch_mv_topk_fp32`"]
    assert row["exact"] == "yes"
    assert row["peer ÷ `V4`"] == "12.00×"   # V4's made-up total is 1.0 ms
    assert "pytorch 2.x" in text


def test_throttled_fixtures_flagged(tmp_path):
    doc = full_doc()
    for e in doc["benchmarks"]:
        if e["name"].startswith("dot/warp_shuffle_dot") and e["run_type"] == "iteration":
            e["throttled_samples"] = 2
    p, out = run_report(tmp_path, doc)
    assert p.returncode == 0, p.stderr
    md = (out / "report.md").read_text()
    assert "## Throttled fixtures" in md and "`dot/warp_shuffle_dot`: 6 throttled sample(s)" in md


def test_no_throttled_section_without_throttling(full):
    assert "Throttled fixtures" not in full[0]
