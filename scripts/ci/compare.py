#!/usr/bin/env python3
"""Regression gate: compares two distancies-bench JSON files benchmark by benchmark.

    python -m scripts.ci.compare BASELINE.json NEW.json [--threshold 0.05] [--alpha 0.05]
                              [--filter REGEX] [--metric real_time|<counter>]
    python -m scripts.ci.compare --gate [scripts/gate.json] BASELINE.json NEW.json [--noise FILE]
    python -m scripts.ci.compare --gate [scripts/gate.json] --base B1.json B2.json ... --new N1.json ... --noise FILE
    python -m scripts.ci.compare --calibration DIR [DIR ...] [--gate GATE.json] [--out-dir DIR]

A benchmark regresses when its new median is worse than the baseline median by more than
--threshold and, where both sides have >= 3 repetitions, a one-sided Mann-Whitney U test says
the new samples are worse with p <= --alpha. With fewer samples the threshold alone decides.
Exit status: 1 on any regression (or a benchmark that errors now but did not before; one that
is skipped now, because it cannot do its case, is a note), benchmarks with throttled samples noted,
0 otherwise, 2 on bad input (also: two different GPUs without --force, or a baseline run with an
injected slowdown). With --gate the fixture set and the rule come from scripts/gate.json: a gated
fixture regresses when the U test over the pooled repetitions agrees (p <= alpha) and the median
ratio of its runs is worse by more than max(min_effect, noise_k x sigma x sqrt(1/N + 1/M)), N and M
the runs a side and sigma the fixture's between-run noise from --noise (a calibration's noise.json);
host-bound fixtures are reported, never gated. --calibration measures that rule's false-positive
and detection rates (scripts/gate_calibrate.sh).
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
from scripts.lib.bench_json import BenchError, Run, higher_is_better, is_json_name, load, read_json

MIN_SAMPLES = 3    # per side, for the U test
EXACT_MAX_N = 40   # exact permutation distribution up to this many samples in all
GRID_MAX_RUNS = 8  # --calibration's grid tries 1 .. this many runs a side, as the cycles allow
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


def median_noise(values: list) -> float:
    """The relative standard deviation of one run's median, from its own repetitions (a median of
    n normal samples spreads sqrt(pi / 2) ~ 1.25 times a mean's sigma / sqrt(n))."""
    return 1.25 * rel_spread(values) / math.sqrt(len(values)) if len(values) >= MIN_SAMPLES else 0.0


@dataclass
class Evidence:
    """What the rule needs of one fixture's comparison, computed once (the calibration reuses it
    for every rule it tries). A side is one run or several runs of the same binary."""
    name: str
    base: float          # the median of the baseline runs' medians
    new: float
    change: float        # the median of new / base over every pair of runs, minus 1
    worse: float         # > 0: the new side is worse
    p_worse: float | None
    p_better: float | None
    noise: float         # the relative sigma of one run's median: --noise's (between runs) or the runs' own
    n_base: int          # runs
    n_new: int


def _as_runs(side: list) -> list:
    """One run's samples ([t, ...]) or several runs' ([[t, ...], ...]) -> a list of runs."""
    return [list(r) for r in side] if side and isinstance(side[0], (list, tuple)) else [list(side)]


def evidence(name: str, base: list, new: list, metric: str, noise: float | None = None) -> Evidence:
    """base and new: one run's samples or a list of runs' samples. noise: the fixture's measured
    between-run sigma (a run median's relative spread), None where not measured."""
    up = higher_is_better(metric)
    br, nr = [r for r in _as_runs(base) if r], [r for r in _as_runs(new) if r]
    mb = statistics.median(statistics.median(r) for r in br)
    mn = statistics.median(statistics.median(r) for r in nr)
    # Every pair of runs gives a ratio; their median (Hodges-Lehmann) is robust to one odd run.
    ratios = [statistics.median(n) / statistics.median(b) for b in br for n in nr if statistics.median(b)]
    change = statistics.median(ratios) - 1 if ratios else (0.0 if mn == mb else math.copysign(math.inf, mn - mb))
    pb, pn = [v for r in br for v in r], [v for r in nr for v in r]
    p_w = p_b = None
    if len(pb) >= MIN_SAMPLES and len(pn) >= MIN_SAMPLES:
        sign = -1 if up else 1
        p_w, p_b = mann_whitney([sign * v for v in pn], [sign * v for v in pb])
    # A calibrated between-run sigma already holds each run's own noise; without one, the runs'.
    sigma = noise if noise is not None else max(median_noise(r) for r in br + nr)
    return Evidence(name, mb, mn, change, -change if up else change, p_w, p_b, sigma, len(br), len(nr))


def limit_of(e: Evidence, rule: Rule) -> float:
    """The change the rule needs: max(min_effect, noise_k x the sigma of the two sides' difference)."""
    return max(rule.min_effect, rule.noise_k * e.noise * math.sqrt(1 / e.n_base + 1 / e.n_new))


def decide(e: Evidence, rule: Rule) -> Row:
    """The gate's rule: regression when p(worse) <= alpha (U test over the pooled repetitions) AND
    worse > limit_of(e). Fewer than MIN_SAMPLES repetitions on a side: the limit alone."""
    limit = limit_of(e, rule)
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


def gate_evidence(base: list, new: list, gate: Gate, metric: str, noise: dict | None, default_noise: float = 0.0):
    """Evidence for every fixture of the gate present on both sides (each a list of runs), by
    kind, plus the notes: (gated, host, failures, notes, only_base, only_new). noise: the measured
    between-run sigma by fixture; a gated fixture it lacks gets default_noise. None: not measured."""
    def names(side):
        return list(dict.fromkeys(n for r in side for n in r.benches))
    kinds = {n: gate.kind(n) for n in names(base) + names(new)}
    def in_gate(ns):
        return [n for n in ns if kinds[n]]
    def in_all(side, n):
        return all(n in r.benches for r in side)
    only_base = [n for n in in_gate(names(base)) if not any(n in r.benches for r in new)]
    only_new = [n for n in in_gate(names(new)) if not any(n in r.benches for r in base)]
    gated, host, failures, notes = [], [], [], []
    for name in in_gate(names(base)):
        if not in_all(new, name) or not in_all(base, name):
            continue
        be = next((r.benches[name].error for r in base if r.benches[name].error is not None), None)
        bad = [r.benches[name] for r in new if r.benches[name].error is not None]
        if bad or be is not None:
            ne = bad[0].error if bad else None
            if bad and be is None and not bad[0].skipped and kinds[name] == "gated":
                failures.append(f"{name}: errors in the new run ({ne})")
            else:
                notes.append(f"{name}: not compared ({'skipped' if bad and bad[0].skipped else 'error'}: {ne or be})")
            continue
        sb = [_samples(r, name, metric) for r in base]
        sn = [_samples(r, name, metric) for r in new]
        if not all(sb) or not all(sn):
            continue
        between = None if noise is None else noise.get(name, default_noise)
        ev = evidence(name, sb, sn, metric, between)
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
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(c) for c in body])


def _gate_table(rows: list) -> str:
    head = ("benchmark", "baseline", "new", "change", "limit", "runs", "p(worse)", "verdict")
    body = [(r.name, _fmt(r.base), _fmt(r.new), f"{r.change * 100:+.1f}%", f"{r.limit * 100:.1f}%",
             f"{r.n_base}/{r.n_new}", "-" if r.p is None else f"{r.p:.3g}", r.verdict) for r in rows]
    widths = [max(len(str(c[i])) for c in [head] + body) for i in range(len(head))]
    def line(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(c) for c in body])


def _side(runs: list) -> str:
    r = runs[0]
    more = f" and {len(runs) - 1} more run(s)" if len(runs) > 1 else ""
    return f"{r.path}{more} ({r.context.get('gpu', '?')}, commit {r.context.get('distancies_commit', '?')})"


def compare_gate(base: list, new: list, gate: Gate, rule: Rule, noise: dict | None, registry: list) -> int:
    """--gate: the gated fixtures decided by the rule, host-bound ones reported; 0, 1 or 2."""
    gated, host, failures, notes, only_base, only_new = gate_evidence(
        base, new, gate, rule.metric, noise, rule.default_noise)
    if not gated:
        print("error: no gated fixture is in both files; nothing to compare", file=sys.stderr)
        return 2
    rows = [decide(e, rule) for e in gated]
    source = "--noise's between-run sigma" if noise is not None else "the runs' own spread (no --noise)"
    print(f"gate: {gate.path}; metric {rule.metric}; regression when p(worse) <= {rule.alpha:g} and "
          f"worse > max({rule.min_effect:.1%}, {rule.noise_k:g} x sigma x sqrt(1/runs + 1/runs)), sigma from {source}")
    print(f"baseline: {_side(base)}")
    print(f"new:      {_side(new)}\n")
    print(_gate_table(rows))
    if host:
        def pool(side, n):
            return [v for r in side for v in _samples(r, n, rule.metric)]
        print("\nhost-bound (reported, never gated):\n"
              + _table([judge(e.name, pool(base, e.name), pool(new, e.name), rule.metric, rule.min_effect, rule.alpha)
                        for e in host]))
    for title, names in (("only in the baseline (not gated)", only_base),
                         ("only in the new run (not gated)", only_new)):
        if names:
            print(f"\n{title}: {', '.join(names)}")
    missing = [n for n in registry if not all(n in r.benches for r in new)]
    if missing:
        print(f"\nnote: registered but not in the new run: {', '.join(missing)}")
    for n in notes:
        print(f"note: {n}")
    hot = {n: t for r in new for n, t in r.throttled().items() if gate.kind(n) == "gated"}
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


# -- calibration (--calibration DIR...): the rule's false-positive and detection rates -----------
#
# A folder holds one device call's runs of one binary, in cycles: NN-aC.json, NN-bC.json (plain)
# and NN-iC.json (--inject-slowdown), C the cycle. A window of `runs` consecutive cycles gives
# the gate's two sides: a against b and b against a are A/A trials (every flag a false alarm), a
# and b against i are detection trials. The between-run sigma that judges one folder is measured
# on the other folders (cross-fitted), so no rate is judged with noise measured on its own runs.

GOAL_FP, GOAL_DETECT = 0.01, 0.95
_TAG = re.compile(r"-([abi])(\d+)\.json$")


def _cycles(runs: list) -> list:
    """[{'a': Run, 'b': Run, 'i': Run}, ...] in cycle order, from the files' tags."""
    tagged = {}
    for r in runs:
        m = _TAG.search(os.path.basename(r.path))
        if not m:
            raise BenchError(f"{r.path}: a calibration run is named NN-aC.json, NN-bC.json or NN-iC.json "
                             f"(scripts/gate_calibrate.sh)")
        tagged.setdefault(int(m.group(2)), {})[m.group(1)] = r
    for d in tagged.values():
        if "i" in d and inject_pct(d["i"]) <= 0:
            raise BenchError(f"{d['i'].path}: an i run without --inject-slowdown")
    return [tagged[c] for c in sorted(tagged)]


def between_run_noise(cycles: list, gate: Gate, metric: str) -> dict:
    """Each gated fixture's between-run sigma (a run median's relative spread): the RMS of
    ln(a / b) over the cycles, over sqrt(2). Pairing a and b of one cycle cancels slow drift."""
    sq: dict = {}
    for c in cycles:
        if "a" not in c or "b" not in c:
            continue
        for e in gate_evidence([c["a"]], [c["b"]], gate, metric, None)[0]:
            if e.base > 0 and e.new > 0:
                sq.setdefault(e.name, []).append(math.log(e.new / e.base) ** 2)
    return {n: math.sqrt(statistics.fmean(v) / 2) for n, v in sorted(sq.items())}


def _pooled_noise(parts: list) -> dict:
    """RMS of several folders' sigmas, weighted by their cycles: [(noise, cycles), ...]."""
    acc: dict = {}
    for noise, n in parts:
        for k, v in noise.items():
            s, w = acc.get(k, (0.0, 0))
            acc[k] = (s + v * v * n, w + n)
    return {k: math.sqrt(s / w) for k, (s, w) in sorted(acc.items()) if w}


def _trials(cycles: list, gate: Gate, rule: Rule, noise: dict | None, runs: int) -> tuple:
    """(A/A evidence, detection evidence) over every window of `runs` cycles."""
    aa, det = [], []
    for w in range(0, max(len(cycles) - runs, 0) + 1):
        win = cycles[w:w + runs]
        side = {k: [c[k] for c in win if k in c] for k in "abi"}
        def ev(b, n):
            return gate_evidence(b, n, gate, rule.metric, noise, rule.default_noise)[0]
        if side["a"] and side["b"]:
            aa += ev(side["a"], side["b"]) + ev(side["b"], side["a"])
        for k in "ab":
            if side[k] and side["i"]:
                det += ev(side[k], side["i"])
    return aa, det


def rates(trials: list, rule: Rule) -> tuple:
    """(flagged, judged) over every (comparison, fixture) evidence in trials."""
    return sum(decide(e, rule).regression for e in trials), len(trials)


def _rate(f: int, n: int) -> float:
    return f / n if n else float("nan")


def calibration_summary(folders: list, gate: Gate, rule: Rule) -> dict:
    """folders: [(path, [Run, ...]), ...]. The rates of the rule, judged folder by folder with the
    other folders' noise, and a grid of other rules over the same trials."""
    cycles = [_cycles(runs) for _, runs in folders]
    own = [between_run_noise(c, gate, rule.metric) for c in cycles]
    n_cyc = [sum(1 for x in c if "a" in x and "b" in x) for c in cycles]
    cross = len(folders) > 1
    per_folder, noise_used = [], []
    for i in range(len(folders)):
        others = [(own[j], n_cyc[j]) for j in range(len(folders)) if j != i] if cross else [(own[i], n_cyc[i])]
        noise_used.append(_pooled_noise(others))
    grid_runs = sorted({r for r in (*range(1, GRID_MAX_RUNS + 1), rule.runs) if r <= max(len(c) for c in cycles)})
    trials = {r: [_trials(c, gate, rule, noise_used[i], r) for i, c in enumerate(cycles)] for r in grid_runs}
    judged = trials.get(rule.runs, trials[grid_runs[-1]])   # the rule's runs, or all a folder has
    aa = [e for a, _ in judged for e in a]
    det = [e for _, d in judged for e in d]
    (fa, na), (fd, nd) = rates(aa, rule), rates(det, rule)
    for i, (path, runs) in enumerate(folders):
        a_i, d_i = judged[i]
        (f1, n1), (f2, n2) = rates(a_i, rule), rates(d_i, rule)
        per_folder.append({"folder": os.path.basename(os.path.normpath(path)),
                           "runs": [os.path.basename(r.path) for r in runs],
                           "cycles": len(cycles[i]), "false_positive": [f1, n1], "detection": [f2, n2]})
    grid = []
    for r, a, k, me in itertools.product(grid_runs, sorted({0.01, 0.05, rule.alpha}), (1.5, 2.0, 3.0),
                                         (0.01, 0.015, 0.02, 0.025)):
        g = Rule(rule.metric, rule.repetitions, r, a, me, k, rule.default_noise)
        ga = [e for a, _ in trials[r] for e in a]
        gd = [e for _, d in trials[r] for e in d]
        fp, dr = _rate(*rates(ga, g)), _rate(*rates(gd, g))
        grid.append({"runs": r, "alpha": a, "noise_k": k, "min_effect": me, "false_positive_rate": fp,
                     "detection_rate": dr, "judged": [len(ga), len(gd)],
                     "goals_met": fp < GOAL_FP and dr >= GOAL_DETECT})
    pooled = _pooled_noise(list(zip(own, n_cyc, strict=False)))
    all_runs = [r for _, runs in folders for r in runs]
    return {
        "folders": per_folder,
        "inject_slowdown_pct": sorted({inject_pct(r) for r in all_runs if inject_pct(r) > 0}),
        "gpu": sorted({str(r.context.get("gpu")) for r in all_runs}),
        "commit": sorted({str(r.context.get("distancies_commit")) for r in all_runs}),
        "rule": vars(rule),
        "noise_source": "cross-fitted: each folder judged with the others' between-run sigma" if cross
                        else "in-sample: one folder, judged with its own between-run sigma",
        "false_positive": {"flagged": fa, "judged": na, "rate": _rate(fa, na), "goal": f"< {GOAL_FP:.0%}",
                           "flagged_fixtures": sorted({e.name for e in aa if decide(e, rule).regression})},
        "detection": {"flagged": fd, "judged": nd, "rate": _rate(fd, nd), "goal": f">= {GOAL_DETECT:.0%}",
                      "missed_fixtures": sorted({e.name for e in det if not decide(e, rule).regression}),
                      "median_injected_shift": statistics.median(e.worse for e in det) if det else None},
        "between_run_noise": pooled,
        "grid": grid,
    }


def calibration_markdown(s: dict) -> str:
    def pct(v):
        return "-" if v is None or v != v else f"{v * 100:.2f} %"
    fp, dt, r = s["false_positive"], s["detection"], s["rule"]
    lines = [f"# Regression gate calibration ({', '.join(s['gpu'])})", "",
             "Folders (one device call each): " + "; ".join(
                 f"{f['folder']} ({len(f['runs'])} runs, {f['cycles']} cycles)" for f in s["folders"]) + ".",
             f"Injected slowdown {s['inject_slowdown_pct']} %. Noise: {s['noise_source']}.",
             f"Rule: {r['runs']} runs a side, p(worse) <= {r['alpha']:g} and worse > max({r['min_effect']:.1%}, "
             f"{r['noise_k']:g} x sigma x sqrt(2 / {r['runs']})).", "",
             "| rate | flagged / judged | rate | goal |", "|---|---|---|---|",
             f"| false positives (A/A) | {fp['flagged']} / {fp['judged']} | {pct(fp['rate'])} | {fp['goal']} |",
             f"| detection | {dt['flagged']} / {dt['judged']} | {pct(dt['rate'])} | {dt['goal']} |",
             "", f"Median measured shift of the injected runs: {pct(dt['median_injected_shift'])}.", "",
             "| runs a side | alpha | noise_k | min_effect | false positives | detection | both goals |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {g['runs']} | {g.get('alpha', r['alpha']):g} | {g['noise_k']:g} | {g['min_effect']:.1%} | "
              f"{pct(g['false_positive_rate'])} | "
              f"{pct(g['detection_rate'])} | {'yes' if g['goals_met'] else 'no'} |" for g in s["grid"]]
    noisy = sorted(s["between_run_noise"].items(), key=lambda kv: -kv[1])[:8]
    if noisy:
        lines += ["", "Largest between-run sigmas: " + ", ".join(f"{n} {v * 100:.2f} %" for n, v in noisy)]
    if fp["flagged_fixtures"]:
        lines += ["", "Flagged in an A/A trial: " + ", ".join(fp["flagged_fixtures"])]
    if dt["missed_fixtures"]:
        lines += ["", "Missed in a detection trial: " + ", ".join(dt["missed_fixtures"])]
    return "\n".join(lines) + "\n"


def _run_files(folder: str) -> list:
    names = sorted(f for f in os.listdir(folder) if is_json_name(f) and not f.startswith(("calibration", "noise")))
    return [load(os.path.join(folder, f)) for f in names]


def calibrate(folders: list, gate: Gate, rule: Rule, out_dir: str) -> int:
    loaded = [(f, _run_files(f)) for f in folders]
    all_runs = [r for _, runs in loaded for r in runs]
    if len({str(r.context.get("gpu")) for r in all_runs}) > 1:
        raise BenchError(f"{', '.join(folders)}: runs from different devices")
    for f, runs in loaded:
        c = _cycles(runs)
        if not any("a" in x and "b" in x for x in c) or not any("i" in x for x in c):
            raise BenchError(f"{f}: needs two runs without and one with --inject-slowdown")
    s = calibration_summary(loaded, gate, rule)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "calibration.json"), "w", encoding="utf-8") as f:
        json.dump(s, f, indent=1)
    with open(os.path.join(out_dir, "noise.json"), "w", encoding="utf-8") as f:
        json.dump(s["between_run_noise"], f, indent=1)
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
    ap.add_argument("--base", nargs="+", metavar="JSON",
                    help="--gate: the baseline's runs (several: alternated with --new's)")
    ap.add_argument("--new", nargs="+", metavar="JSON", help="--gate: the new build's runs")
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
    ap.add_argument("--noise-k", type=float, default=None, help="--gate: the limit in units of the between-run sigma")
    ap.add_argument("--noise",
                    help="--gate: JSON {fixture: between-run sigma} from a calibration (results/regression/)")
    ap.add_argument("--registry", help="--gate: `distancies list --json`, to name registered fixtures missing")
    ap.add_argument("--calibration", nargs="+", metavar="DIR",
                    help="false-positive and detection rates of the runs in DIR (one folder per device call)")
    ap.add_argument("--out-dir", help="--calibration: where calibration.{json,md} go (default the first DIR)")
    ap.add_argument("--force", action="store_true", help="compare runs from different GPUs anyway")
    return ap.parse_args(argv)


def _rule(a, gate: Gate) -> Rule:
    r = gate.rule
    def pick(v, d):
        return d if v is None else v
    return Rule(pick(a.metric, r.metric), r.repetitions, r.runs, pick(a.alpha, r.alpha),
                pick(a.min_effect, r.min_effect), pick(a.noise_k, r.noise_k), r.default_noise)


def _run_gate(a) -> int:
    gate = load_gate(a.gate or DEFAULT_GATE)
    rule = _rule(a, gate)
    if not (0 < rule.alpha < 1 and rule.min_effect >= 0 and rule.noise_k >= 0):
        raise BenchError("--alpha must be in (0, 1), --min-effect and --noise-k >= 0")
    if a.calibration:
        return calibrate(a.calibration, gate, rule, a.out_dir or a.calibration[0])
    if a.base or a.new:
        if not (a.base and a.new) or a.runs:
            raise BenchError("give --base JSON... and --new JSON... (or BASELINE.json NEW.json)")
        base_files, new_files = a.base, a.new
    elif len(a.runs) == 2:
        base_files, new_files = [a.runs[0]], [a.runs[1]]
    else:
        raise BenchError("give BASELINE.json and NEW.json")
    base, new = [load(f) for f in base_files], [load(f) for f in new_files]
    for b in base:
        for n in new:
            why = check_runs(b, n, a.force)
            if why:
                raise BenchError(why)
    noise, registry = None, []
    if a.noise:
        try:
            noise = {k: float(v) for k, v in read_json(a.noise).items()}
        except (BenchError, ValueError, TypeError, AttributeError) as e:
            raise BenchError(f"--noise {a.noise}: not a JSON object of fixture -> sigma ({e})") from None
    if a.registry:
        from scripts.ci.gate import expected_names
        registry = expected_names(gate, read_json(a.registry))
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
