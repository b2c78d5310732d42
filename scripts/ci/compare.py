"""Regression gate: compares two distancies-bench JSON files benchmark by benchmark.

    python -m scripts.ci.compare BASELINE.json NEW.json [--threshold 0.05] [--alpha 0.05]
                              [--filter REGEX] [--metric real_time|<counter>]
    python -m scripts.ci.compare --gate [scripts/gate.json] BASELINE.json NEW.json [--noise FILE]
    python -m scripts.ci.compare --calibration DIR [--gate GATE.json] [--out-dir DIR]

A benchmark regresses when its new median is worse than the baseline median by more than
--threshold and, where both sides have >= 3 repetitions, a one-sided Mann-Whitney U test says
the new samples are worse with p <= --alpha. With fewer samples the threshold alone decides.
Exit status: 1 on any regression (or a benchmark that errors now but did not before; one that
is skipped now, because it cannot do its case, is a note), benchmarks with throttled samples noted,
0 otherwise, 2 on bad input (also: two different GPUs without --force, or a baseline run with an
injected slowdown). With --gate the fixture set and the rule come from scripts/gate.json: a gated
fixture regresses when the U test agrees (p <= alpha) and its median is worse by more than
max(min_effect, noise_k x its measured spread); host-bound fixtures are reported, never gated.
--calibration measures that rule's false-positive and detection rates (scripts/gate_calibrate.sh).
docs/regression.md has the details.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import statistics
import sys
from dataclasses import dataclass

from scripts.ci.gate import DEFAULT_GATE, Gate, Rule, load_gate
from scripts.lib.bench_json import BenchError, Run, higher_is_better, load

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
    limit: float | None = None   # --gate: the change the rule needed (max(min_effect, k x spread))
    kind: str = ""               # --gate: "gated" or "host"


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


# -- the gate (--gate): a calibrated rule over the fixture set of scripts/gate.json ---------------

def rel_spread(values: list) -> float:
    """A run's relative spread: 1.4826 x the median absolute deviation over the median (a robust
    standard deviation); 0 with fewer than 3 values or a median of 0."""
    if len(values) < MIN_SAMPLES:
        return 0.0
    med = statistics.median(values)
    if not med:
        return 0.0
    return 1.4826 * statistics.median(abs(v - med) for v in values) / abs(med)


@dataclass
class Evidence:
    """What the rule needs of one fixture's comparison, computed once (the calibration reuses it
    for every rule it tries)."""
    name: str
    base: float
    new: float
    change: float
    worse: float         # > 0: the new run is worse
    p_worse: float | None
    p_better: float | None
    spread: float        # the larger of the two runs' relative spreads (and --noise's, if given)
    n_base: int
    n_new: int


def evidence(name: str, base: list, new: list, metric: str, noise: float = 0.0) -> Evidence:
    up = higher_is_better(metric)
    mb, mn = statistics.median(base), statistics.median(new)
    change = (mn - mb) / abs(mb) if mb else (0.0 if mn == mb else math.copysign(math.inf, mn - mb))
    p_w = p_b = None
    if len(base) >= MIN_SAMPLES and len(new) >= MIN_SAMPLES:
        sign = -1 if up else 1
        p_w, p_b = mann_whitney([sign * v for v in new], [sign * v for v in base])
    spread = max(rel_spread(base), rel_spread(new), noise)
    return Evidence(name, mb, mn, change, -change if up else change, p_w, p_b, spread, len(base), len(new))


def decide(e: Evidence, rule: Rule) -> Row:
    """The gate's rule: regression when p(worse) <= alpha AND worse > max(min_effect, k x spread).
    Fewer than MIN_SAMPLES repetitions on a side: the limit alone (noise not judged)."""
    limit = max(rule.min_effect, rule.noise_k * e.spread)
    if e.p_worse is None:
        reg = e.worse > limit
        verdict = ("REGRESSION" if reg else "improved" if -e.worse > limit else "ok") + " (threshold only)"
    elif e.worse > limit and e.p_worse <= rule.alpha:
        verdict, reg = "REGRESSION", True
    elif e.worse > limit:
        verdict, reg = f"worse, within noise (p>{rule.alpha:g})", False
    elif e.p_worse <= rule.alpha and e.worse > 0:
        verdict, reg = "worse, under the limit", False
    elif -e.worse > limit and e.p_better is not None and e.p_better <= rule.alpha:
        verdict, reg = "improved", False
    else:
        verdict, reg = "ok", False
    return Row(e.name, e.base, e.new, e.change, e.n_base, e.n_new, e.p_worse, verdict, reg, limit)


def inject_pct(run: Run) -> float:
    try:
        return float(run.context.get("inject_slowdown_pct", 0) or 0)
    except (TypeError, ValueError):
        return 0.0


def check_runs(base: Run, new: Run, force: bool) -> str | None:
    """Why the two runs must not be compared (one line), or None. Prints the warnings."""
    if inject_pct(base) > 0:
        return (f"the baseline {base.path} was run with --inject-slowdown {inject_pct(base):g} "
                f"(a calibration run): it cannot be a baseline")
    if inject_pct(new) > 0:
        print(f"warning: the new run has an injected slowdown of {inject_pct(new):g} % (a calibration run)")
    bg, ng = base.context.get("gpu"), new.context.get("gpu")
    if bg != ng and not force:
        return f"different devices: baseline {bg!r}, new {ng!r} (--force compares them anyway)"
    for key in CONTEXT_KEYS:
        bv, nv = base.context.get(key), new.context.get(key)
        if bv != nv:
            print(f"warning: context '{key}' differs: baseline {bv!r}, new {nv!r}")
    return None


def gate_evidence(base: Run, new: Run, gate: Gate, metric: str, noise: dict):
    """Evidence for every fixture of the gate present in both runs, by kind, plus the notes:
    (gated, host, failures, notes, only_base, only_new)."""
    kinds = {n: gate.kind(n) for n in list(base.benches) + list(new.benches)}
    def in_gate(names):
        return [n for n in names if kinds[n]]
    only_base = [n for n in in_gate(base.benches) if n not in new.benches]
    only_new = [n for n in in_gate(new.benches) if n not in base.benches]
    gated, host, failures, notes = [], [], [], []
    for name in in_gate(base.benches):
        if name not in new.benches:
            continue
        be, ne = base.benches[name].error, new.benches[name].error
        if ne is not None or be is not None:
            if ne is not None and be is None and not new.benches[name].skipped and kinds[name] == "gated":
                failures.append(f"{name}: errors in the new run ({ne})")
            else:
                notes.append(f"{name}: not compared ({'skipped' if new.benches[name].skipped else 'error'}: "
                             f"{ne or be})")
            continue
        sb, sn = _samples(base, name, metric), _samples(new, name, metric)
        if not sb or not sn:
            continue
        ev = evidence(name, sb, sn, metric, noise.get(name, 0.0))
        (gated if kinds[name] == "gated" else host).append(ev)
    return gated, host, failures, notes, only_base, only_new


def _fmt(v: float) -> str:
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.4e}"


def _table(rows: list) -> str:
    head = ("benchmark", "baseline", "new", "change", "n", "p(worse)", "verdict")
    body = [(r.name, _fmt(r.base), _fmt(r.new), f"{r.change * 100:+.1f}%", f"{r.n_base}/{r.n_new}",
             "-" if r.p is None else f"{r.p:.3g}", r.verdict) for r in rows]
    widths = [max(len(str(c[i])) for c in [head] + body) for i in range(len(head))]
    def line(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(c) for c in body])


def _gate_table(rows: list) -> str:
    head = ("benchmark", "baseline", "new", "change", "limit", "n", "p(worse)", "verdict")
    body = [(r.name, _fmt(r.base), _fmt(r.new), f"{r.change * 100:+.1f}%", f"{r.limit * 100:.1f}%",
             f"{r.n_base}/{r.n_new}", "-" if r.p is None else f"{r.p:.3g}", r.verdict) for r in rows]
    widths = [max(len(str(c[i])) for c in [head] + body) for i in range(len(head))]
    def line(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(c) for c in body])


def compare_gate(base: Run, new: Run, gate: Gate, rule: Rule, noise: dict, registry: list) -> int:
    """--gate: the gated fixtures decided by the rule, host-bound ones reported; 0, 1 or 2."""
    gated, host, failures, notes, only_base, only_new = gate_evidence(base, new, gate, rule.metric, noise)
    if not gated:
        print("error: no gated fixture is in both files; nothing to compare", file=sys.stderr)
        return 2
    rows = [decide(e, rule) for e in gated]
    print(f"gate: {gate.path}; metric {rule.metric}; regression when p(worse) <= {rule.alpha:g} and "
          f"worse > max({rule.min_effect:.1%}, {rule.noise_k:g} x spread)")
    print(f"baseline: {base.path} ({base.context.get('gpu', '?')}, "
          f"commit {base.context.get('distancies_commit', '?')})")
    print(f"new:      {new.path} ({new.context.get('gpu', '?')}, commit {new.context.get('distancies_commit', '?')})\n")
    print(_gate_table(rows))
    if host:
        print("\nhost-bound (reported, never gated):\n"
              + _table([judge(e.name, _samples(base, e.name, rule.metric), _samples(new, e.name, rule.metric),
                              rule.metric, rule.min_effect, rule.alpha) for e in host]))
    for title, names in (("only in the baseline (not gated)", only_base),
                         ("only in the new run (not gated)", only_new)):
        if names:
            print(f"\n{title}: {', '.join(names)}")
    missing = [n for n in registry if n not in new.benches]
    if missing:
        print(f"\nnote: registered but not in the new run: {', '.join(missing)}")
    for n in notes:
        print(f"note: {n}")
    hot = {n: t for n, t in new.throttled().items() if gate.kind(n) == "gated"}
    if hot:
        print("note: throttled samples in the new run (reduced clocks): "
              + ", ".join(f"{n} ({t})" for n, t in hot.items()))
    for f in failures:
        print(f"FAIL: {f}")
    regressions = [r for r in rows if r.regression]
    if regressions or failures:
        print(f"\n{len(regressions)} regression(s) in {len(rows)} gated fixture(s), {len(failures)} new error(s): FAIL")
        return 1
    print(f"\nno regression in {len(rows)} gated fixture(s): PASS")
    return 0


# -- calibration (--calibration DIR): the rule's false-positive and detection rates --------------

GOAL_FP, GOAL_DETECT = 0.01, 0.95


def _pairs(runs: list) -> tuple:
    """A/A pairs (every two plain runs, the earlier file as baseline) and detection pairs (every
    plain run against every injected one)."""
    plain = [r for r in runs if inject_pct(r) == 0]
    injected = [r for r in runs if inject_pct(r) > 0]
    return list(itertools.combinations(plain, 2)), [(p, i) for p in plain for i in injected]


def rates(trials: list, rule: Rule) -> tuple:
    """(flagged, judged) over every (pair, fixture) evidence in trials."""
    flags = sum(decide(e, rule).regression for e in trials)
    return flags, len(trials)


def _grid(aa: list, det: list, rule: Rule) -> list:
    out = []
    for alpha, min_effect, k in itertools.product((0.01, 0.05), (0.01, 0.015, 0.02, 0.025), (0.0, 2.0, 3.0, 4.0)):
        r = Rule(rule.metric, rule.repetitions, alpha, min_effect, k)
        (fa, na), (fd, nd) = rates(aa, r), rates(det, r)
        fp, dr = fa / na if na else float("nan"), fd / nd if nd else float("nan")
        out.append({"alpha": alpha, "min_effect": min_effect, "noise_k": k, "false_positive_rate": fp,
                    "detection_rate": dr, "goals_met": fp < GOAL_FP and dr >= GOAL_DETECT})
    return out


def calibration_summary(runs: list, gate: Gate, rule: Rule) -> dict:
    aa_pairs, det_pairs = _pairs(runs)
    aa = [e for b, n in aa_pairs for e in gate_evidence(b, n, gate, rule.metric, {})[0]]
    det = [e for b, n in det_pairs for e in gate_evidence(b, n, gate, rule.metric, {})[0]]
    (fa, na), (fd, nd) = rates(aa, rule), rates(det, rule)
    shifts: dict = {}
    for e in aa:
        shifts.setdefault(e.name, []).append(abs(e.change))
    injected = [e.worse for e in det]
    return {
        "runs": [os.path.basename(r.path) for r in runs],
        "inject_slowdown_pct": sorted({inject_pct(r) for r in runs if inject_pct(r) > 0}),
        "gpu": sorted({str(r.context.get("gpu")) for r in runs}),
        "rule": vars(rule),
        "aa_pairs": len(aa_pairs), "detection_pairs": len(det_pairs),
        "false_positive": {"flagged": fa, "judged": na, "rate": fa / na if na else None, "goal": f"< {GOAL_FP:.0%}",
                           "flagged_fixtures": sorted({e.name for e in aa if decide(e, rule).regression})},
        "detection": {"flagged": fd, "judged": nd, "rate": fd / nd if nd else None, "goal": f">= {GOAL_DETECT:.0%}",
                      "missed_fixtures": sorted({e.name for e in det if not decide(e, rule).regression}),
                      "median_injected_shift": statistics.median(injected) if injected else None},
        "aa_max_shift_by_fixture": {n: max(v) for n, v in sorted(shifts.items())},
        # Between-run noise in the units of `spread` (a median's shift over two runs has sqrt(2)
        # times one run's spread): what --noise takes. Measured on these runs, so the rates above
        # were computed without it.
        "aa_between_run_spread": {n: math.sqrt(statistics.fmean(x * x for x in v) / 2)
                                  for n, v in sorted(shifts.items())},
        "grid": _grid(aa, det, rule),
    }


def calibration_markdown(s: dict) -> str:
    def pct(v):
        return "-" if v is None else f"{v * 100:.2f} %"
    fp, dt = s["false_positive"], s["detection"]
    r = s["rule"]
    lines = [f"# Regression gate calibration ({', '.join(s['gpu'])})", "",
             f"Runs: {', '.join(s['runs'])}; injected slowdown {s['inject_slowdown_pct']} %.",
             f"Rule: p(worse) <= {r['alpha']:g} and worse > max({r['min_effect']:.1%}, {r['noise_k']:g} x spread).", "",
             "| rate | flagged / judged | rate | goal |", "|---|---|---|---|",
             f"| false positives (A/A, {s['aa_pairs']} pairs) | {fp['flagged']} / {fp['judged']} | "
             f"{pct(fp['rate'])} | {fp['goal']} |",
             f"| detection ({s['detection_pairs']} pairs) | {dt['flagged']} / {dt['judged']} | "
             f"{pct(dt['rate'])} | {dt['goal']} |",
             "", f"Median measured shift of the injected runs: {pct(dt['median_injected_shift'])}.", "",
             "| alpha | min_effect | noise_k | false positives | detection | both goals |", "|---|---|---|---|---|---|"]
    lines += [f"| {g['alpha']:g} | {g['min_effect']:.1%} | {g['noise_k']:g} | {pct(g['false_positive_rate'])} | "
              f"{pct(g['detection_rate'])} | {'yes' if g['goals_met'] else 'no'} |" for g in s["grid"]]
    noisy = sorted(s["aa_between_run_spread"].items(), key=lambda kv: -kv[1])[:8]
    if noisy:
        lines += ["", "Largest between-run spreads (A/A): " + ", ".join(f"{n} {v * 100:.2f} %" for n, v in noisy)]
    if fp["flagged_fixtures"]:
        lines += ["", "Flagged in an A/A pair: " + ", ".join(fp["flagged_fixtures"])]
    if dt["missed_fixtures"]:
        lines += ["", "Missed in a detection pair: " + ", ".join(dt["missed_fixtures"])]
    return "\n".join(lines) + "\n"


def calibrate(folder: str, gate: Gate, rule: Rule, out_dir: str) -> int:
    names = sorted(f for f in os.listdir(folder) if f.endswith(".json") and not f.startswith("calibration"))
    runs = [load(os.path.join(folder, f)) for f in names]
    if len({str(r.context.get("gpu")) for r in runs}) > 1:
        raise BenchError(f"{folder}: runs from different devices")
    aa_pairs, det_pairs = _pairs(runs)
    if not aa_pairs or not det_pairs:
        raise BenchError(f"{folder}: needs two runs without and one with --inject-slowdown")
    s = calibration_summary(runs, gate, rule)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "calibration.json"), "w", encoding="utf-8") as f:
        json.dump(s, f, indent=1)
    with open(os.path.join(out_dir, "noise.json"), "w", encoding="utf-8") as f:
        json.dump(s["aa_between_run_spread"], f, indent=1)
    md = calibration_markdown(s)
    with open(os.path.join(out_dir, "calibration.md"), "w", encoding="utf-8") as f:
        f.write(md)
    print(md)
    return 0


def compare(base: Run, new: Run, metric: str, threshold: float, alpha: float, pattern) -> int:
    """Prints the comparison; returns the exit status (0 or 1)."""
    def keep(names):
        return [n for n in names if pattern.search(n)]
    b_names, n_names = keep(base.benches), keep(new.benches)
    common = [n for n in b_names if n in new.benches and n in n_names]
    only_base = [n for n in b_names if n not in new.benches]
    only_new = [n for n in n_names if n not in base.benches]

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


def _args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="*", help="BASELINE.json NEW.json")
    ap.add_argument("--threshold", type=float, default=0.05,
                    help="relative change of the median that counts (default 0.05 = 5%%; not with --gate)")
    ap.add_argument("--alpha", type=float, default=None,
                    help="U test significance level (default 0.05, --gate: its rule)")
    ap.add_argument("--filter", default="", help="regex searched in base names (e.g. '^(floor|dot)'; not with --gate)")
    ap.add_argument("--metric", default=None,
                    help="real_time (default), cpu_time or a counter, e.g. kernel_ms, gb_per_s")
    ap.add_argument("--gate", nargs="?", const=DEFAULT_GATE, default=None,
                    help="the gated set and rule from this file (default scripts/gate.json)")
    ap.add_argument("--min-effect", type=float, default=None, help="--gate: the smallest change that counts")
    ap.add_argument("--noise-k", type=float, default=None, help="--gate: the limit in units of the measured spread")
    ap.add_argument("--noise", help="--gate: JSON {fixture: relative spread} measured between runs (a floor)")
    ap.add_argument("--registry", help="--gate: `distancies list --json`, to name registered fixtures missing")
    ap.add_argument("--calibration", metavar="DIR", help="false-positive and detection rates of the runs in DIR")
    ap.add_argument("--out-dir", help="--calibration: where calibration.{json,md} go (default DIR)")
    ap.add_argument("--force", action="store_true", help="compare runs from different GPUs anyway")
    return ap.parse_args(argv)


def _rule(a, gate: Gate) -> Rule:
    r = gate.rule
    def pick(v, d):
        return d if v is None else v
    return Rule(pick(a.metric, r.metric), r.repetitions, pick(a.alpha, r.alpha), pick(a.min_effect, r.min_effect),
                pick(a.noise_k, r.noise_k))


def _run_gate(a) -> int:
    gate = load_gate(a.gate or DEFAULT_GATE)
    rule = _rule(a, gate)
    if not (0 < rule.alpha < 1 and rule.min_effect >= 0 and rule.noise_k >= 0):
        raise BenchError("--alpha must be in (0, 1), --min-effect and --noise-k >= 0")
    if a.calibration:
        return calibrate(a.calibration, gate, rule, a.out_dir or a.calibration)
    if len(a.runs) != 2:
        raise BenchError("give BASELINE.json and NEW.json")
    base, new = load(a.runs[0]), load(a.runs[1])
    why = check_runs(base, new, a.force)
    if why:
        raise BenchError(why)
    noise, registry = {}, []
    if a.noise:
        with open(a.noise, encoding="utf-8") as f:
            noise = {k: float(v) for k, v in json.load(f).items()}
    if a.registry:
        from scripts.ci.gate import expected_names
        with open(a.registry, encoding="utf-8") as f:
            registry = expected_names(gate, json.load(f))
    return compare_gate(base, new, gate, rule, noise, registry)


def main(argv=None) -> int:
    try:
        a = _args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        if a.gate or a.calibration:
            return _run_gate(a)
        alpha, metric = 0.05 if a.alpha is None else a.alpha, a.metric or "real_time"
        if len(a.runs) != 2:
            raise BenchError("give BASELINE.json and NEW.json")
        if not (a.threshold >= 0 and 0 < alpha < 1):
            raise BenchError("--threshold must be >= 0 and --alpha in (0, 1)")
        try:
            pattern = re.compile(a.filter)
        except re.error as e:
            raise BenchError(f"--filter: bad regex ({e})") from None
        base, new = load(a.runs[0]), load(a.runs[1])
        why = check_runs(base, new, a.force)
        if why:
            raise BenchError(why)
    except (BenchError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return compare(base, new, metric, a.threshold, alpha, pattern)


if __name__ == "__main__":
    sys.exit(main())
