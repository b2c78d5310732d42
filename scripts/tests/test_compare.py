"""scripts/compare.py: the regression gate's decisions, exit codes and the U test itself."""
import itertools
import math
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path[:0] = [SCRIPTS, os.path.join(HERE, "data")]
import gbfake  # noqa: E402
from bench_json import base_name, higher_is_better  # noqa: E402
from compare import mann_whitney  # noqa: E402

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
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "compare.py"), b, n, *args],
                       capture_output=True, text=True)
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
    one = lambda t: gbfake.entries("pipeline/V4", samples([t]))
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
    rc, out, _ = gate(tmp_path, e, e, base_ctx={"gpu": "NVIDIA A100-SXM4-80GB"})
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
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "compare.py"), base, good, *args],
                       capture_output=True, text=True)
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr


def test_missing_file_exit_2(tmp_path):
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "compare.py"), str(tmp_path / "a.json"),
                        str(tmp_path / "b.json")], capture_output=True, text=True)
    assert p.returncode == 2 and "cannot read" in p.stderr


def test_real_google_benchmark_output_against_itself(tmp_path):
    real = os.path.join(HERE, "data", "cpu_only_gb171.json")
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "compare.py"), real, real],
                       capture_output=True, text=True)
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
    u = lambda a, b: sum((p > q) + 0.5 * (p == q) for p in a for q in b)
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
    hot = [dict(s, throttled_samples=t) for s, t in zip(samples(BASE), [0, 3, 0, 0, 1])]
    rc, out, _ = gate(tmp_path, gbfake.entries("dot/x", samples(BASE)), gbfake.entries("dot/x", hot))
    assert rc == 0
    assert "throttled samples in the new run" in out and "dot/x (4)" in out
    assert "throttled samples in the baseline" not in out
