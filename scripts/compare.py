#!/usr/bin/env python3
"""Regression gate: compares two distancies-bench JSON files benchmark by benchmark.

    python scripts/compare.py BASELINE.json NEW.json [--threshold 0.05] [--alpha 0.05]
                              [--filter REGEX] [--metric real_time|<counter>]

A benchmark regresses when its new median is worse than the baseline median by more than
--threshold and, where both sides have >= 3 repetitions, a one-sided Mann-Whitney U test says
the new samples are worse with p <= --alpha. With fewer samples the threshold alone decides.
Exit status: 1 on any regression (or a benchmark that errors now but did not before; one that
is skipped now, because it cannot do its case, is a note), benchmarks with throttled samples noted,
0 otherwise, 2 on bad input. docs/regression.md has the details.
"""
from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from dataclasses import dataclass

from bench_json import BenchError, Run, higher_is_better, load

MIN_SAMPLES = 3    # per side, for the U test
EXACT_MAX_N = 40   # exact permutation distribution up to this many samples in all
CONTEXT_KEYS = ("gpu", "model_rows", "model_dim", "k", "query", "build_type")


def _doubled_midranks(values: list) -> list:
    """Ranks of values (1-based, ties get their mean rank), doubled so they stay integers."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for t in range(i, j + 1):
            ranks[order[t]] = (i + 1) + (j + 1)   # 2 * mean of ranks i+1..j+1
        i = j + 1
    return ranks


def mann_whitney(x: list, y: list) -> tuple:
    """One-sided Mann-Whitney U p-values (x tends larger than y, x tends smaller than y).

    Exact (the permutation distribution of x's rank sum, ties as mid-ranks) up to EXACT_MAX_N
    samples in all; beyond that the normal approximation with tie and continuity corrections.
    """
    n, m = len(x), len(y)
    if n == 0 or m == 0:
        return 1.0, 1.0
    ranks = _doubled_midranks(list(x) + list(y))
    w_obs = sum(ranks[:n])
    total = n + m
    if total <= EXACT_MAX_N:
        # ways[j][s]: subsets of j of the ranks whose (doubled) sum is s.
        top = sum(sorted(ranks)[-n:])
        ways = [[0] * (top + 1) for _ in range(n + 1)]
        ways[0][0] = 1
        for r in ranks:
            for j in range(n, 0, -1):
                row, prev = ways[j], ways[j - 1]
                for s in range(top, r - 1, -1):
                    if prev[s - r]:
                        row[s] += prev[s - r]
        all_ = math.comb(total, n)
        return sum(ways[n][w_obs:]) / all_, sum(ways[n][:w_obs + 1]) / all_
    u = w_obs / 2 - n * (n + 1) / 2
    counts: dict = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    ties = sum(t ** 3 - t for t in counts.values())
    var = n * m / 12 * ((total + 1) - ties / (total * (total - 1)))
    if var <= 0:
        return 1.0, 1.0
    sd = math.sqrt(var)
    z_hi, z_lo = (u - n * m / 2 - 0.5) / sd, (u - n * m / 2 + 0.5) / sd
    return 0.5 * math.erfc(z_hi / math.sqrt(2)), 0.5 * math.erfc(-z_lo / math.sqrt(2))


@dataclass
class Row:
    name: str
    base: float
    new: float
    change: float        # (new - base) / base
    n_base: int
    n_new: int
    p: float | None      # one-sided p that new is worse; None when the threshold alone decided
    verdict: str
    regression: bool


def _samples(run: Run, name: str, metric: str) -> list:
    b = run.benches[name]
    vals = b.values(metric)
    if vals:
        return vals
    c = b.center(metric)   # aggregates only (--benchmark_report_aggregates_only)
    return [c] if c is not None else []


def judge(name: str, base: list, new: list, metric: str, threshold: float, alpha: float) -> Row:
    """Decides one benchmark from its baseline and new samples of one metric."""
    up = higher_is_better(metric)
    mb, mn = statistics.median(base), statistics.median(new)
    change = (mn - mb) / abs(mb) if mb else (0.0 if mn == mb else math.copysign(math.inf, mn - mb))
    worse = -change if up else change        # > 0: new is worse
    if len(base) >= MIN_SAMPLES and len(new) >= MIN_SAMPLES:
        sign = -1 if up else 1
        xs, ys = [sign * v for v in new], [sign * v for v in base]
        p_worse, p_better = mann_whitney(xs, ys)
        if worse > threshold and p_worse <= alpha:
            verdict, reg = "REGRESSION", True
        elif worse > threshold:
            verdict, reg = f"worse, within noise (p>{alpha:g})", False
        elif -worse > threshold and p_better <= alpha:
            verdict, reg = "improved", False
        else:
            verdict, reg = "ok", False
        p = p_worse
    else:
        p = None
        if worse > threshold:
            verdict, reg = "REGRESSION (threshold only)", True
        elif -worse > threshold:
            verdict, reg = "improved (threshold only)", False
        else:
            verdict, reg = "ok (threshold only)", False
    return Row(name, mb, mn, change, len(base), len(new), p, verdict, reg)


def _fmt(v: float) -> str:
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.4e}"


def _table(rows: list) -> str:
    head = ("benchmark", "baseline", "new", "change", "n", "p(worse)", "verdict")
    body = [(r.name, _fmt(r.base), _fmt(r.new), f"{r.change * 100:+.1f}%", f"{r.n_base}/{r.n_new}",
             "-" if r.p is None else f"{r.p:.3g}", r.verdict) for r in rows]
    widths = [max(len(str(c[i])) for c in [head] + body) for i in range(len(head))]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(c) for c in body])


def compare(base: Run, new: Run, metric: str, threshold: float, alpha: float, pattern) -> int:
    """Prints the comparison; returns the exit status (0 or 1)."""
    keep = lambda names: [n for n in names if pattern.search(n)]
    b_names, n_names = keep(base.benches), keep(new.benches)
    common = [n for n in b_names if n in new.benches and n in n_names]
    only_base = [n for n in b_names if n not in new.benches]
    only_new = [n for n in n_names if n not in base.benches]

    for key in CONTEXT_KEYS:
        bv, nv = base.context.get(key), new.context.get(key)
        if bv != nv:
            print(f"warning: context '{key}' differs: baseline {bv!r}, new {nv!r}")
    if not common:
        print("error: no benchmark is in both files (after --filter); nothing to compare",
              file=sys.stderr)
        return 2

    rows, failures, notes = [], [], []
    for name in common:
        be, ne = base.benches[name].error, new.benches[name].error
        if ne is not None:
            if be is None and new.benches[name].skipped:
                notes.append(f"{name}: skipped in the new run ({ne})")
            elif be is None:
                failures.append(f"{name}: errors in the new run ({ne})")
            else:
                notes.append(f"{name}: errors in both runs ({ne})")
            continue
        if be is not None:
            notes.append(f"{name}: errored in the baseline ({be}); not compared")
            continue
        sb, sn = _samples(base, name, metric), _samples(new, name, metric)
        if not sb and not sn:
            continue   # the metric is not one of this benchmark's counters
        if not sb or not sn:
            notes.append(f"{name}: '{metric}' only in the {'new' if sn else 'baseline'} run")
            continue
        rows.append(judge(name, sb, sn, metric, threshold, alpha))

    unit = " ms" if metric in ("real_time", "cpu_time") or metric.endswith("_ms") else ""
    better = "higher" if higher_is_better(metric) else "lower"
    print(f"metric: {metric}{unit} ({better} is better); medians; threshold {threshold:.0%}, "
          f"alpha {alpha:g}, U test where both sides have >= {MIN_SAMPLES} repetitions")
    print(f"baseline: {base.path} ({base.context.get('gpu', '?')}, commit "
          f"{base.context.get('distancies_commit', '?')})")
    print(f"new:      {new.path} ({new.context.get('gpu', '?')}, commit "
          f"{new.context.get('distancies_commit', '?')})\n")
    print(_table(rows) if rows else f"(no benchmark has the metric '{metric}')")
    single = [r.name for r in rows if r.p is None]
    if single:
        print(f"\nnote: {len(single)} benchmark(s) have fewer than {MIN_SAMPLES} repetitions on a side; "
              f"decided by the {threshold:.0%} threshold alone, noise not judged "
              f"(run with --benchmark_repetitions=5 or more): {', '.join(single)}")
    for title, names in (("only in the baseline", only_base), ("only in the new run", only_new)):
        if names:
            print(f"\n{title}: {', '.join(names)}")
    for n in notes:
        print(f"note: {n}")
    for label, run in (("baseline", base), ("new run", new)):
        hot = {n: t for n, t in run.throttled().items() if n in common}
        if hot:
            print(f"note: throttled samples in the {label} (reduced clocks; not comparable): "
                  + ", ".join(f"{n} ({t})" for n, t in hot.items()))
    for f in failures:
        print(f"FAIL: {f}")
    regressions = [r.name for r in rows if r.regression]
    if regressions or failures:
        print(f"\n{len(regressions)} regression(s), {len(failures)} new error(s): FAIL")
        return 1
    print(f"\nno regression in {len(rows)} benchmark(s): PASS")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("baseline")
    ap.add_argument("new")
    ap.add_argument("--threshold", type=float, default=0.05,
                    help="relative change of the median that counts (default 0.05 = 5%%)")
    ap.add_argument("--alpha", type=float, default=0.05, help="U test significance level (default 0.05)")
    ap.add_argument("--filter", default="", help="regex searched in base names (e.g. '^(floor|dot)')")
    ap.add_argument("--metric", default="real_time",
                    help="real_time (default), cpu_time or a counter, e.g. kernel_ms, gb_per_s")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        if not (a.threshold >= 0 and 0 < a.alpha < 1):
            raise BenchError("--threshold must be >= 0 and --alpha in (0, 1)")
        try:
            pattern = re.compile(a.filter)
        except re.error as e:
            raise BenchError(f"--filter: bad regex ({e})") from None
        base, new = load(a.baseline), load(a.new)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return compare(base, new, a.metric, a.threshold, a.alpha, pattern)


if __name__ == "__main__":
    sys.exit(main())
