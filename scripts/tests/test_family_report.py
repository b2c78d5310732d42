"""scripts/reports/family_report.py and scripts/data/data_stats.py on made-up runs and models."""
import json

import numpy as np

from scripts.data import data_stats
from scripts.reports import family_report


def run(family, rows):
    """A Google Benchmark-shaped run of one family: (name, ms, fallbacks, label[, widened]) medians."""
    return {"context": {"model_family": family, "gpu": "GPU X", "distancies_commit": "abc"},
            "benchmarks": [{"name": n + "/manual_time_median", "run_name": n + "/manual_time",
                            "aggregate_name": "median", "real_time": ms, "time_unit": "ms",
                            **({"fallbacks": fb} if fb else {}), **({"label": lab} if lab else {}),
                            **({"widened": w[0]} if w else {})}
                           for n, ms, fb, lab, *w in rows]}


def test_table_names_families_cells_and_auto_ratio(tmp_path):
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps(run("iid", [("batch/p/batch:16", 1.0, 0, ""), ("batch/q/batch:16", 2.0, 0, ""),
                                        ("batch_auto/batch:16", 1.0, 0, "p")])))
    b.write_text(json.dumps(run("aniso:0.95", [("batch/p/batch:16", 8.0, 16, ""), ("batch/q/batch:16", 2.0, 0, "", 3),
                                               ("batch_auto/batch:16", 2.2, 0, "q")])))
    text = family_report.markdown(family_report.load([a, b]))
    assert "| `batch/p/batch:16` | 1.000 | 8.000 (16) |" in text
    assert "| `batch/q/batch:16` | 2.000 | 2.000 [3] |" in text  # answered by the wide re-rank
    assert "square ones" in text
    assert "`p` 1.00" in text and "`q` 1.10" in text  # auto over the best of its own run
    assert "GPU X" in text


def test_stats_of_iid_and_anisotropic_rows():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3000, 100))
    s = data_stats.model_stats(x, 20)
    assert abs(s["mean_cosine"]) < 0.01 and 0.08 < s["sd_cosine"] < 0.12
    assert s["z10_median"] > 2 and s["gap_10_11_median"] >= 0
    u = np.ones(100) / 10.0
    a = (0.95 * 100 / 0.05) ** 0.5  # mean cosine 0.95 for unit-variance noise
    s = data_stats.model_stats(x + a * u, 20)
    assert abs(s["mean_cosine"] - 0.95) < 0.01


def test_faiss_ratios_over_every_family_for_the_goals(tmp_path):
    from types import SimpleNamespace
    ours = {"iid": 2.0, "aniso:0.95": 4.0}
    paths = []
    for fam, ms in ours.items():
        p = tmp_path / f"h200-{fam.replace(':', '-')}.json"
        doc = run(fam, [("batch_auto/batch:1024", ms - 0.5, 0, "p"), ("batch_auto/batch:16", 0.4, 0, "p")])
        for b in doc["benchmarks"]:
            b["wall_ms"] = b["real_time"] + 0.5   # the host clock, what FAISS's time is set against
        p.write_text(json.dumps(doc))
        peer = tmp_path / f"h200-peers-faiss-{fam.replace(':', '-')}.json"
        prun = run(fam, [("peer/faiss_flat_ip/batch:1024", 40.0, 0, ""), ("peer/faiss_flat_ip/batch:16", 8.0, 0, "")])
        prun["context"] = {"peer": "faiss", "gpu": {"name": "GPU X"}}
        peer.write_text(json.dumps(prun))
        paths += [p, peer]
    runs = [SimpleNamespace(path=str(p)) for p in paths]
    value, where = family_report.faiss_least_at_1024(runs)
    assert abs(value - 10.0) < 1e-9 and where.startswith("aniso:0.95")   # 40 / 4.0 (wall), not 40 / 3.5
    value, _ = family_report.faiss_least_any(runs)
    assert abs(value - 8.0 / 0.9) < 1e-9
    try:
        family_report.faiss_least_at_1024(runs[:3])   # aniso:0.95 without its peer
    except ValueError as e:
        assert "aniso:0.95" in str(e) and "iid" not in str(e)
    else:
        raise AssertionError("a family without its peer cannot meet a goal on every family")
