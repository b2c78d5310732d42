"""scripts/ci/compare.py: the regression gate's decisions, exit codes and the U test itself."""
import itertools
import json
import math
import os
import random
import re
import subprocess
import sys

import pytest

from scripts.ci.compare import Rule, decide, evidence, mann_whitney
from scripts.ci.gate import bench_filter, expected_names, load_gate
from scripts.lib.bench_json import base_name, higher_is_better
from scripts.tests import gbfake, tool

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)

BASE = [10.0, 10.1, 9.9, 10.05, 9.95]          # median 10.0, tight


def samples(times, **counters):
    """One sample per repetition: real_time and kernel_ms = t; each counter scales with 1/t or t."""
    out = []
    for t in times:
        s = {"real_time": t, "kernel_ms": t}
        s.update({k: f(t) for k, f in counters.items()})
        out.append(s)
    return out


def gate(tmp_path, base_entries, new_entries, *args, base_ctx=None):
    b = gbfake.write(tmp_path / "base.json", gbfake.document(base_entries, **(base_ctx or {})))
    n = gbfake.write(tmp_path / "new.json", gbfake.document(new_entries))
    p = tool.run("scripts.ci.compare", b, n, *args,
                 check=False, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def row(out, name):
    return next(line for line in out.splitlines() if line.startswith(name + " "))


def test_regression_detected(tmp_path):
    new = [t * 1.2 for t in BASE]
    rc, out, _ = gate(tmp_path, gbfake.entries("dot/warp_shuffle_dot", samples(BASE)),
                      gbfake.entries("dot/warp_shuffle_dot", samples(new)))
    assert rc == 1
    line = row(out, "dot/warp_shuffle_dot")
    assert "REGRESSION" in line and "+20.0%" in line and "5/5" in line
    assert "0.00397" in line                       # exact U test: 1 / C(10, 5)
    assert "FAIL" in out


def test_noise_within_spread_passes(tmp_path):
    base = [10.0, 12.0, 8.0, 11.0, 9.0]             # median 10.0, wide
    new = [10.6, 8.2, 12.1, 9.1, 11.3]              # median 10.6: +6% > 5%, but all overlap
    rc, out, _ = gate(tmp_path, gbfake.entries("pipeline/V4", samples(base)),
                      gbfake.entries("pipeline/V4", samples(new)))
    assert rc == 0, out
    line = row(out, "pipeline/V4")
    assert "+6.0%" in line and "within noise" in line and "REGRESSION" not in line


def test_small_significant_change_below_threshold_passes(tmp_path):
    new = [t * 1.03 for t in BASE]                  # clearly shifted, but only 3%
    rc, out, _ = gate(tmp_path, gbfake.entries("dot/x", samples(BASE)), gbfake.entries("dot/x", samples(new)))
    assert rc == 0 and "ok" in row(out, "dot/x")


def test_improvement(tmp_path):
    new = [t * 0.8 for t in BASE]
    rc, out, _ = gate(tmp_path, gbfake.entries("dot/x", samples(BASE)), gbfake.entries("dot/x", samples(new)))
    assert rc == 0
    line = row(out, "dot/x")
    assert "improved" in line and "-20.0%" in line and "PASS" in out


def test_single_sample_falls_back_to_threshold(tmp_path):
    def one(t):
        return gbfake.entries("pipeline/V4", samples([t]))
    rc, out, _ = gate(tmp_path, one(10.0), one(10.8))
    assert rc == 1
    assert "REGRESSION (threshold only)" in row(out, "pipeline/V4")
    assert "decided by the 5% threshold alone" in out
    rc, out, _ = gate(tmp_path, one(10.0), one(10.3))
    assert rc == 0 and "ok (threshold only)" in row(out, "pipeline/V4")
    rc, out, _ = gate(tmp_path, one(10.0), one(10.8), "--threshold", "0.10")
    assert rc == 0


def test_two_repetitions_are_not_enough_for_the_u_test(tmp_path):
    rc, out, _ = gate(tmp_path, gbfake.entries("dot/x", samples([10.0, 10.0])),
                      gbfake.entries("dot/x", samples([11.0, 11.0])))
    assert rc == 1 and "threshold only" in row(out, "dot/x")


def test_missing_benchmarks_listed_not_failed(tmp_path):
    base = gbfake.entries("dot/a", samples(BASE)) + gbfake.entries("dot/b", samples(BASE))
    new = gbfake.entries("dot/a", samples(BASE)) + gbfake.entries("dot/c", samples(BASE))
    rc, out, _ = gate(tmp_path, base, new)
    assert rc == 0
    assert "only in the baseline: dot/b" in out and "only in the new run: dot/c" in out


def test_new_error_fails(tmp_path):
    rc, out, _ = gate(tmp_path, gbfake.entries("pipeline/V1", samples(BASE)),
                      gbfake.errored("pipeline/V1", "out of memory"))
    assert rc == 1 and "FAIL: pipeline/V1: errors in the new run (out of memory)" in out


def test_filter_excludes(tmp_path):
    base = gbfake.entries("dot/x", samples(BASE)) + gbfake.entries("topk/first_merge/k:10", samples(BASE))
    new = gbfake.entries("dot/x", samples(BASE)) + \
        gbfake.entries("topk/first_merge/k:10", samples([t * 2 for t in BASE]))
    assert gate(tmp_path, base, new)[0] == 1
    rc, out, _ = gate(tmp_path, base, new, "--filter", "^(floor|dot|pipeline/V4)")
    assert rc == 0 and "topk" not in out


@pytest.mark.parametrize("metric", ["distances_per_ms", "gb_per_s"])
def test_rate_metrics_higher_is_better(tmp_path, metric):
    rate = {metric: lambda t: 1000.0 / t}
    slow = [t * 1.25 for t in BASE]                # rate drops 20%
    fast = [t * 0.8 for t in BASE]                 # rate rises 25%
    old = gbfake.entries("dot/x", samples(BASE, **rate))
    rc, out, _ = gate(tmp_path, old, gbfake.entries("dot/x", samples(slow, **rate)), "--metric", metric)
    assert rc == 1 and "REGRESSION" in row(out, "dot/x") and "-20.0%" in row(out, "dot/x")
    assert "higher is better" in out
    rc, out, _ = gate(tmp_path, old, gbfake.entries("dot/x", samples(fast, **rate)), "--metric", metric)
    assert rc == 0 and "improved" in row(out, "dot/x") and "+25.0%" in row(out, "dot/x")


def test_counter_metric_and_time_units(tmp_path):
    base = gbfake.entries("dot/x", [{"real_time": t * 1e6, "kernel_ms": t} for t in BASE], time_unit="ns")
    new = gbfake.entries("dot/x", samples(BASE))
    rc, out, _ = gate(tmp_path, base, new)         # 1e7 ns == 10 ms: no change
    assert rc == 0 and "+0.0%" in row(out, "dot/x")
    rc, out, _ = gate(tmp_path, new, gbfake.entries("dot/x", samples([t * 1.5 for t in BASE])),
                      "--metric", "kernel_ms")
    assert rc == 1 and "metric: kernel_ms ms (lower is better)" in out


def test_context_mismatch_warns(tmp_path):
    e = gbfake.entries("dot/x", samples(BASE))
    rc, out, _ = gate(tmp_path, e, e, base_ctx={"model_rows": "1000"})
    assert rc == 0 and "warning: context 'model_rows' differs" in out


def test_device_mismatch_refused_unless_forced(tmp_path):
    e = gbfake.entries("dot/x", samples(BASE))
    rc, out, err = gate(tmp_path, e, e, base_ctx={"gpu": "NVIDIA H200"})
    assert rc == 2 and err.strip().count("\n") == 0 and "different devices" in err and "H200" in err
    rc, out, _ = gate(tmp_path, e, e, "--force", base_ctx={"gpu": "NVIDIA H200"})
    assert rc == 0 and "warning: context 'gpu' differs" in out


@pytest.mark.parametrize("base_text,args,message", [
    ("not json at all", (), "not JSON"),
    ('{"benchmarks": []}', (), "not Google Benchmark JSON"),
    (None, ("--filter", "(unclosed"), "bad regex"),
    (None, ("--filter", "^nothing-matches"), "nothing to compare"),
    (None, ("--threshold", "-1"), "--threshold"),
])
def test_bad_input_exit_2(tmp_path, base_text, args, message):
    good = gbfake.write(tmp_path / "good.json", gbfake.document(gbfake.entries("dot/x", samples(BASE))))
    base = good
    if base_text is not None:
        (tmp_path / "bad.json").write_text(base_text)
        base = str(tmp_path / "bad.json")
    p = tool.run("scripts.ci.compare", base, good, *args,
                 check=False, capture_output=True, text=True)
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr


def test_missing_file_exit_2(tmp_path):
    p = tool.run("scripts.ci.compare", str(tmp_path / "a.json"),
                 str(tmp_path / "b.json"), check=False, capture_output=True, text=True)
    assert p.returncode == 2 and "cannot read" in p.stderr


def test_real_google_benchmark_output_against_itself(tmp_path):
    real = os.path.join(HERE, "data", "cpu_only_gb171.json")
    p = tool.run("scripts.ci.compare", real, real,
                 check=False, capture_output=True, text=True)
    assert p.returncode == 0
    assert row(p.stdout, "cpu/sequential").split()[-1] == "ok"   # '/iterations:3/manual_time' stripped
    assert "sequence/CPU" in p.stdout


# -- units ---------------------------------------------------------------------------------

def test_base_name_strips_only_google_benchmark_suffixes():
    assert base_name("pipeline/V1/iterations:10/manual_time") == "pipeline/V1"
    assert base_name("topk/first_merge/k:10/manual_time") == "topk/first_merge/k:10"
    assert base_name("dot/x/repeats:5/threads:1/real_time") == "dot/x"


def test_direction():
    assert higher_is_better("distances_per_ms") and higher_is_better("gb_per_s")
    assert not higher_is_better("real_time") and not higher_is_better("floor_ratio")
    assert not higher_is_better("kernel_ms")


def brute_force(x, y):
    """P(U >= u_obs) over every split of the pooled samples (ties count 1/2)."""
    pooled, n = x + y, len(x)
    def u(a, b):
        return sum((p > q) + 0.5 * (p == q) for p in a for q in b)
    obs, hits, total = u(x, y), 0, 0
    for idx in itertools.combinations(range(len(pooled)), n):
        a = [pooled[i] for i in idx]
        b = [pooled[i] for i in range(len(pooled)) if i not in idx]
        hits += u(a, b) >= obs - 1e-9
        total += 1
    return hits / total


@pytest.mark.parametrize("x,y", [
    ([3, 4, 5], [1, 2, 3]),
    ([1, 1, 2, 2], [1, 2, 2, 3, 3]),
    ([5.0, 5.0, 5.0], [5.0, 5.0, 5.0]),
    ([0.3, 0.1, 0.9, 0.4, 0.7], [0.2, 0.5, 0.6, 0.8, 0.05, 0.15]),
])
def test_u_test_exact_matches_permutation(x, y):
    greater, less = mann_whitney(x, y)
    assert math.isclose(greater, brute_force(x, y))
    assert math.isclose(less, brute_force([-v for v in x], [-v for v in y]))


def test_u_test_known_values_and_normal_approximation():
    assert mann_whitney([4, 5, 6], [1, 2, 3])[0] == pytest.approx(1 / 20)   # smallest p with 3 + 3
    assert mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])[0] == pytest.approx(1 / 252)
    # 25 + 25 samples: the normal approximation; scipy.stats.mannwhitneyu(x, y, alternative='greater',
    # method='asymptotic') gives 0.008963.
    x = [i + 0.5 for i in range(25)]
    y = [i - 5.0 for i in range(25)]
    assert mann_whitney(x, y)[0] == pytest.approx(0.008963, abs=1e-6)


@pytest.mark.parametrize("entry", [
    # Google Benchmark 1.8: SkipWithMessage
    [{"name": "topk/s/k:1024/manual_time", "run_name": "topk/s/k:1024/manual_time", "run_type": "iteration",
      "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ms", "skipped": True,
      "skip_message": "the fallback flag is up"}],
    # 1.7: distancies-bench marks its skips in the error message
    gbfake.errored("topk/s/k:1024", "skipped: the fallback flag is up"),
])
def test_new_skip_is_a_note_not_a_failure(tmp_path, entry):
    rc, out, _ = gate(tmp_path, gbfake.entries("topk/s/k:1024", samples(BASE)) + gbfake.entries("dot/x", samples(BASE)),
                      entry + gbfake.entries("dot/x", samples(BASE)))
    assert rc == 0 and "note: topk/s/k:1024: skipped in the new run" in out and "FAIL" not in out


def test_refusal_is_a_failure(tmp_path):
    rc, out, _ = gate(tmp_path, gbfake.entries("dot/x", samples(BASE)),
                      gbfake.errored("dot/x", "refused: a sample of 0.001 ms is faster than ..."))
    assert rc == 1 and "FAIL: dot/x: errors in the new run (refused" in out


def test_throttled_fixtures_noted(tmp_path):
    hot = [dict(s, throttled_samples=t) for s, t in zip(samples(BASE), [0, 3, 0, 0, 1], strict=True)]
    rc, out, _ = gate(tmp_path, gbfake.entries("dot/x", samples(BASE)), gbfake.entries("dot/x", hot))
    assert rc == 0
    assert "throttled samples in the new run" in out and "dot/x (4)" in out
    assert "throttled samples in the baseline" not in out


# -- the calibrated gate (--gate, scripts/gate.json) and its calibration ------------------------

GATE = os.path.join(SCRIPTS, "gate.json")
RULE = Rule(alpha=0.01, min_effect=0.02, noise_k=3.0)


def noisy(rng, center, rsd, n=6):
    """n repetitions around center with a relative standard deviation rsd."""
    return [center * (1 + rng.gauss(0, rsd)) for _ in range(n)]


def test_rule_detects_three_percent_and_ignores_identical_distributions():
    rng = random.Random(37)
    detected = flagged = 0
    trials = 200
    for _ in range(trials):
        base = noisy(rng, 1.0, 0.002)
        flagged += decide(evidence("f", base, noisy(rng, 1.0, 0.002), "real_time"), RULE).regression
        detected += decide(evidence("f", base, noisy(rng, 1.03, 0.002), "real_time"), RULE).regression
    assert flagged == 0
    assert detected / trials >= 0.95


def test_rule_limit_follows_the_measured_spread():
    rng = random.Random(5)
    base, new = noisy(rng, 1.0, 0.02), noisy(rng, 1.03, 0.02)   # 2 % noise: 3 % is within it
    row = decide(evidence("f", base, new, "real_time"), RULE)
    assert row.limit > 0.03 and not row.regression
    quiet = decide(evidence("f", [1.0, 1.001, 0.999, 1.0, 1.0005], [1.05] * 5, "real_time"), RULE)
    assert quiet.limit == pytest.approx(0.02) and quiet.regression


def test_rule_needs_the_u_test_too():
    base, new = [1.0, 1.1, 0.9, 1.05, 0.95], [1.06, 0.9, 1.12, 0.96, 1.04]   # median +4 %, all overlap
    row = decide(evidence("f", base, new, "real_time"), Rule(alpha=0.01, min_effect=0.02, noise_k=0.0))
    assert not row.regression and "within noise" in row.verdict


def fixtures(rng, scale=1.0,
             names=("pipeline/fused", "batch/batch_f16/batch:16", "moments/one_pass/rows:223697/cols:300")):
    out = []
    for i, n in enumerate(names):
        out += gbfake.entries(n, samples(noisy(rng, (i + 1) * scale, 0.002)))
    return out


def run_gate(tmp_path, base, new, *args, base_ctx=None, new_ctx=None):
    b = gbfake.write(tmp_path / "base.json", gbfake.document(base, **(base_ctx or {})))
    n = gbfake.write(tmp_path / "new.json", gbfake.document(new, **(new_ctx or {})))
    p = tool.run("scripts.ci.compare", "--gate", GATE, b, n, *args,
                 check=False, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def test_gate_flags_a_slowdown_of_a_gated_fixture(tmp_path):
    rng = random.Random(1)
    rc, out, _ = run_gate(tmp_path, fixtures(rng), fixtures(rng, 1.04))
    assert rc == 1 and out.count("REGRESSION") == 3 and "3 gated fixture(s)" in out
    rc, out, _ = run_gate(tmp_path, fixtures(rng), fixtures(rng))
    assert rc == 0 and "PASS" in out


def test_gate_reports_host_bound_and_one_sided_fixtures_without_gating(tmp_path):
    rng = random.Random(2)
    def host(t):
        return gbfake.entries("load/native_resident/cache:warm", samples(noisy(rng, t, 0.001)))
    other = gbfake.entries("dot/warp_shuffle_dot", samples(BASE))        # outside the gate
    only = gbfake.entries("pipeline/fused_i8", samples(BASE))
    rc, out, _ = run_gate(tmp_path, fixtures(rng) + host(100) + other + only,
                          fixtures(rng) + host(200)
                          + gbfake.entries("dot/warp_shuffle_dot", samples([t * 2 for t in BASE])))
    assert rc == 0, out
    assert "host-bound (reported, never gated)" in out and "load/native_resident/cache:warm" in out
    assert "only in the baseline (not gated): pipeline/fused_i8" in out
    assert "dot/warp_shuffle_dot" not in out


def test_gate_new_error_fails_skip_does_not(tmp_path):
    rng = random.Random(3)
    base = fixtures(rng) + gbfake.entries("pipeline/V4", samples(BASE)) + gbfake.entries("pipeline/V3", samples(BASE))
    new = fixtures(rng) + gbfake.errored("pipeline/V4", "out of memory") + \
        gbfake.errored("pipeline/V3", "skipped: needs the host copy")
    rc, out, _ = run_gate(tmp_path, base, new)
    assert rc == 1 and "FAIL: pipeline/V4: errors in the new run" in out and "pipeline/V3: not compared" in out


def test_injected_run_is_never_a_baseline(tmp_path):
    rng = random.Random(4)
    rc, _, err = run_gate(tmp_path, fixtures(rng), fixtures(rng), base_ctx={"inject_slowdown_pct": "3"})
    assert rc == 2 and "cannot be a baseline" in err and "Traceback" not in err
    rc, out, _ = run_gate(tmp_path, fixtures(rng), fixtures(rng), new_ctx={"inject_slowdown_pct": "3"})
    assert rc in (0, 1) and "injected slowdown of 3 %" in out
    e = gbfake.entries("dot/x", samples(BASE))
    rc, _, err = gate(tmp_path, e, e, base_ctx={"inject_slowdown_pct": "3"})   # the plain compare too
    assert rc == 2 and "cannot be a baseline" in err


def test_gate_device_mismatch(tmp_path):
    rng = random.Random(6)
    rc, _, err = run_gate(tmp_path, fixtures(rng), fixtures(rng), base_ctx={"gpu": "NVIDIA H200"})
    assert rc == 2 and "different devices" in err


def calibration_folder(folder, rng, cycles=4, offsets=None):
    """cycles of a, b (plain) and i (+3 %, injected) runs; offsets[name]: the amplitude of each
    run's own offset (a fixed pattern, so that the noise two folders measure is alike)."""
    pattern = (1.0, -1.0, 0.5, -0.5, 0.0, 0.8, -0.8)
    folder.mkdir()
    n = 0
    for c in range(1, cycles + 1):
        for kind, scale, pct in (("a", 1.0, "0"), ("b", 1.0, "0"), ("i", 1.03, "3")):
            n += 1
            ents = []
            names = ("pipeline/fused", "batch/batch_f16/batch:16", "moments/one_pass/rows:223697/cols:300")
            for i, name in enumerate(names):
                off = 1 + (offsets or {}).get(name, 0.0) * pattern[n % len(pattern)]
                ents += gbfake.entries(name, samples(noisy(rng, (i + 1) * scale * off, 0.002)))
            gbfake.write(folder / f"{n:02d}-{kind}{c}.json", gbfake.document(ents, inject_slowdown_pct=pct))
    return folder


def calibrate(*folders, out=None):
    args = ["--calibration", *folders, "--gate", GATE] + (["--out-dir", out] if out else [])
    p = tool.run("scripts.ci.compare", *args, check=False, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(((out or folders[0]) / "calibration.json").read_text())


def test_calibration_rates(tmp_path):
    folder = calibration_folder(tmp_path / "cal", random.Random(7), cycles=6)
    s = calibrate(folder)
    assert s["rule"]["runs"] == 5 and s["folders"][0]["cycles"] == 6
    assert "in-sample" in s["noise_source"]
    # 2 windows of 5 cycles, a->b and b->a: 4 A/A comparisons of 3 fixtures; a->i and b->i likewise.
    assert s["false_positive"]["judged"] == 12 and s["false_positive"]["flagged"] == 0
    assert s["detection"]["judged"] == 12 and s["detection"]["rate"] >= 0.95
    assert "| false positives" in (folder / "calibration.md").read_text()
    assert any(g["goals_met"] for g in s["grid"]) and {g["runs"] for g in s["grid"]} == {1, 2, 3, 4, 5, 6}
    assert {g["alpha"] for g in s["grid"]} == {0.01, 0.05}
    assert set(json.loads((folder / "noise.json").read_text())) == set(s["between_run_noise"])


def test_calibration_refuses_runs_not_named_by_cycle(tmp_path):
    folder = calibration_folder(tmp_path / "cal", random.Random(8), cycles=2)
    (folder / "01-a1.json").rename(folder / "run.json")
    p = tool.run("scripts.ci.compare", "--calibration", folder, "--gate", GATE,
                 check=False, capture_output=True, text=True)
    assert p.returncode == 2 and "is named NN-aC.json" in p.stderr and "Traceback" not in p.stderr


def test_calibration_cross_fits_the_noise_of_another_call(tmp_path):
    # One fixture has a 2 % offset in each process: its noise, measured on the other folder,
    # must widen its limit so that the A/A trials stay quiet; the quiet fixtures still detect 3 %.
    loud = {"pipeline/fused": 0.02}
    rng = random.Random(11)
    f1 = calibration_folder(tmp_path / "call1", rng, cycles=5, offsets=loud)
    f2 = calibration_folder(tmp_path / "call2", rng, cycles=5, offsets=loud)
    s = calibrate(f1, f2, out=tmp_path / "both")
    assert "cross-fitted" in s["noise_source"] and [f["folder"] for f in s["folders"]] == ["call1", "call2"]
    assert s["between_run_noise"]["pipeline/fused"] > 0.01 > s["between_run_noise"]["batch/batch_f16/batch:16"]
    assert "pipeline/fused" in s["detection"]["missed_fixtures"]
    assert "batch/batch_f16/batch:16" not in s["detection"]["missed_fixtures"]
    assert "pipeline/fused" not in s["false_positive"]["flagged_fixtures"]


def test_gate_runs_a_side_and_the_noise_file(tmp_path):
    rng = random.Random(12)
    def write(name, scale, off):
        ents = gbfake.entries("pipeline/fused", samples(noisy(rng, scale * off, 0.001)))
        return gbfake.write(tmp_path / name, gbfake.document(ents))
    base = [write(f"b{k}.json", 1.0, o) for k, o in enumerate((1.0, 1.03, 0.99))]
    new = [write(f"n{k}.json", 1.0, o) for k, o in enumerate((1.04, 1.0, 1.01))]     # the same binary
    noise = tmp_path / "noise.json"
    noise.write_text(json.dumps({"pipeline/fused": 0.02}))
    cmd = ["--gate", GATE, "--base", *base, "--new", *new]
    p = tool.run("scripts.ci.compare", *cmd, "--noise", noise, check=False, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    line = row(p.stdout, "pipeline/fused")
    assert "3/3" in line and "3.3%" in line        # limit noise_k 2 x 2 % x sqrt(2/3)
    slow = [write(f"s{k}.json", 1.08, o) for k, o in enumerate((1.0, 1.01, 0.99))]
    p = tool.run("scripts.ci.compare", *cmd[:-4], "--new", *slow, "--noise", noise,
                 check=False, capture_output=True, text=True)
    assert p.returncode == 1 and "REGRESSION" in row(p.stdout, "pipeline/fused")
    p = tool.run("scripts.ci.compare", *cmd, "--noise", tmp_path / "none.json",
                 check=False, capture_output=True, text=True)
    assert p.returncode == 2 and "--noise" in p.stderr and "Traceback" not in p.stderr


def test_gate_file_filter_and_registry():
    g = load_gate(GATE)
    f = re.compile(bench_filter(g))
    for full in ("pipeline/fused/manual_time", "pipeline/V1/iterations:10/manual_time",
                 "batch_auto/batch:16/manual_time", "moments/floor/rows:223697/cols:300/min_time:0.050/manual_time",
                 "matmul/cublas_f16/M:4096/N:4096/K:4096/min_time:0.050/manual_time"):
        assert f.search(full), full
    for full in ("pipeline/fused/k:100/manual_time", "batch/batch_f16/batch:2/manual_time", "dot/x/manual_time"):
        assert not f.search(full), full
    assert g.kind("pipeline/V1") == "host" and g.kind("pipeline/fused") == "gated" and g.kind("dot/x") is None
    reg = {"embeddings": {"pipeline": [{"name": "V1"}, {"name": "fused"}], "batch": [{"name": "batch_f16"}]}}
    names = expected_names(g, reg)
    assert "pipeline/fused" in names and "pipeline/V1" not in names and "batch/batch_f16/batch:1024" in names


FAKE_BENCH = '''#!/usr/bin/env python3
import importlib.util, pathlib, random, sys
spec = importlib.util.spec_from_file_location("gbfake", {gbfake!r})
gbfake = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gbfake)
args = sys.argv[1:]
pct = float(args[args.index("--inject-slowdown") + 1]) if "--inject-slowdown" in args else 0.0
opt = lambda k: next(a.split("=", 1)[1] for a in args if a.startswith(k + "="))
assert "--no-host-copy" in args and "pipeline" in opt("--benchmark_filter")
rng, reps = random.Random(), int(opt("--benchmark_repetitions"))
ents = []
for i, n in enumerate(["pipeline/fused", "batch/batch_f16/batch:16", "load/native_resident/cache:warm"]):
    ents += gbfake.entries(n, [{{"real_time": (i + 1) * (1 + pct / 100) * (1 + rng.gauss(0, 0.002))}}
                               for _ in range(reps)])
gbfake.write(pathlib.Path(opt("--benchmark_out")), gbfake.document(ents, inject_slowdown_pct=f"{{pct:g}}"))
'''


def fake_bench(tmp_path, name="bench"):
    bench = tmp_path / name
    bench.write_text(FAKE_BENCH.format(gbfake=gbfake.__file__))
    bench.chmod(0o755)
    return bench


def test_gate_calibrate_script_with_a_fake_bench(tmp_path):
    bench, out = fake_bench(tmp_path), tmp_path / "out"
    p = subprocess.run(["bash", os.path.join(SCRIPTS, "gate_calibrate.sh"), str(out), str(bench)],
                       cwd=os.path.dirname(SCRIPTS), env={**os.environ, "BUDGET_S": "6", "PYTHON": sys.executable},
                       check=False, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    files = sorted(os.listdir(out))
    runs = [f for f in files if f[0].isdigit()]
    assert runs[:3] == ["01-a1.json", "02-b1.json", "03-i1.json"] and len(runs) % 3 == 0
    assert {"calibration.json", "calibration.md", "noise.json", "runs.tar.gz"} <= set(files)
    s = json.loads((out / "calibration.json").read_text())
    assert s["false_positive"]["judged"] > 0 and s["detection"]["rate"] >= 0.95
    assert "load/native_resident/cache:warm" not in s["between_run_noise"]   # host-bound: not gated


def test_gate_ab_script_alternates_the_two_benches(tmp_path):
    base, new, out = fake_bench(tmp_path, "base"), fake_bench(tmp_path, "new"), tmp_path / "ab"
    env = {**os.environ, "RUNS": "2", "PYTHON": sys.executable}
    p = subprocess.run(["bash", os.path.join(SCRIPTS, "gate_ab.sh"), str(base), str(new), str(out)],
                       cwd=os.path.dirname(SCRIPTS), env=env, check=False, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert [ln.split()[1] for ln in p.stdout.splitlines()] == ["base-1", "new-1", "base-2", "new-2"]
    p = subprocess.run(["bash", os.path.join(SCRIPTS, "gate_ab.sh"), str(base), str(tmp_path / "nope"), str(out)],
                       cwd=os.path.dirname(SCRIPTS), env=env, check=False, capture_output=True, text=True)
    assert p.returncode == 2 and "is not an executable bench" in p.stderr
