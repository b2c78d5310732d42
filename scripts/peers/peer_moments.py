"""Peers of the moments study: column mean, variance, skewness and kurtosis of the same
float32 matrices as distancies-bench's moments/* fixtures (kernels/moments/moments_data.cuh's
generator, reproduced here bit for bit), computed by PyTorch (GPU and CPU), CuPy, SciPy and
NumPy, biased estimators and Fisher kurtosis as our fixtures use.

Writes Google Benchmark-shaped JSON: one entry `peer_moments/<peer>/rows:R/cols:C` per peer
and shape, with
  kernel_ms     device time of the computation (CUDA events; CPU peers: wall time), the data
                already resident, as the study measured
  total_ms      the same call with the host-to-device copy of the matrix and the copy back of
                the results included (CPU peers: equal to kernel_ms)
  elements_per_ms, rows, cols, elements, and rel_error_{mean,variance,skewness,kurtosis}
                against an fp64 NumPy two-pass oracle (the error measure of harness/moments).
Peers whose library is missing are skipped with a note.

    python -m scripts.peers.peer_moments --out peers_moments.json [--max-log2 28] [--peers torch_gpu,cupy]
"""
import argparse
import platform
import statistics
import sys
import time

import numpy as np

from scripts.lib.atomic_write import write_json

COLS = [1, 2, 8, 31, 32, 33, 300, 1024, 4096]
LOG2_ELEMENTS = [10, 14, 18, 22, 26, 28]
SEED = 1
PEERS = ["torch_gpu", "cupy", "torch_cpu", "numpy", "scipy"]


def splitmix64(z):
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def moments_matrix(seed, rows, cols, chunk=1 << 24):
    """The benchmark matrix, row-major float32: element (r, c) from hash((seed << 40) + r*cols + c)."""
    n = rows * cols
    out = np.empty(n, dtype=np.float32)
    base = np.uint64(seed) << np.uint64(40)
    with np.errstate(over="ignore"):
        for start in range(0, n, chunk):
            i = np.arange(start, min(n, start + chunk), dtype=np.uint64)
            h = splitmix64(base + i)
            u = (h >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)
            out[start:start + len(i)] = u * u
    return out.reshape(rows, cols)


def rows_for(log2_elements, cols):
    return max(1, ((1 << log2_elements) + cols - 1) // cols)


def oracle(x):
    """fp64 two-pass with the correction term, biased, Fisher; NaN policy as ours."""
    x = x.astype(np.float64)
    n = x.shape[0]
    mean = x.mean(axis=0)
    d = x - mean
    s1 = d.sum(axis=0)
    d2 = d * d
    s2, s3, s4 = d2.sum(axis=0), (d2 * d).sum(axis=0), (d2 * d2).sum(axis=0)
    a = s1 / n
    m2 = s2 - a * s1
    m3 = s3 - 3 * a * s2 + 2 * a * a * s1
    m4 = s4 - 4 * a * s3 + 6 * a * a * s2 - 3 * a ** 3 * s1
    var = m2 / n
    with np.errstate(divide="ignore", invalid="ignore"):
        skew = np.where(m2 > 0, (m3 / n) / var ** 1.5, np.nan)
        kurt = np.where(m2 > 0, (m4 / n) / var ** 2 - 3, np.nan)
    return mean + a, var, skew, kurt


def rel_errors(got, want):
    """harness/moments/oracle.hpp's measure: mean scaled by max(|mean|, sd), variance relative,
    skewness and kurtosis by max(|value|, 1); NaN on both sides agrees."""
    mean, var, skew, kurt = (np.asarray(g, dtype=np.float64) for g in got)
    wm, wv, ws, wk = want
    sd = np.sqrt(np.maximum(wv, 0))

    def err(g, w, scale):
        both = np.isnan(g) & np.isnan(w)
        one = np.isnan(g) ^ np.isnan(w)
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.where(g == w, 0.0, np.abs(g - w) / np.where(scale > 0, scale, 1.0))
        e = np.where(both, 0.0, e)
        return float(np.inf) if one.any() else float(np.max(e)) if e.size else 0.0

    return {"rel_error_mean": err(mean, wm, np.maximum(np.abs(wm), sd)),
            "rel_error_variance": err(var, wv, np.abs(wv)),
            "rel_error_skewness": err(skew, ws, np.maximum(np.abs(ws), 1)),
            "rel_error_kurtosis": err(kurt, wk, np.maximum(np.abs(wk), 1))}


def four_moments(lib, x):
    """Biased mean, variance, skewness, Fisher kurtosis from library ops (two passes)."""
    mean = x.mean(0)
    d = x - mean
    d2 = d * d
    var = d2.mean(0)
    m3 = (d2 * d).mean(0)
    m4 = (d2 * d2).mean(0)
    return mean, var, m3 / var ** 1.5, m4 / (var * var) - 3


def torch_four_moments(torch, x):
    var, mean = torch.var_mean(x, dim=0, correction=0)  # biased; Welford inside, as the study noted
    d = x - mean
    d2 = d * d
    m3 = (d2 * d).mean(0)
    m4 = (d2 * d2).mean(0)
    return mean, var, m3 / var ** 1.5, m4 / (var * var) - 3


def repeat_count(first_ms, budget_ms, most):
    return max(1, min(most, int(budget_ms / max(first_ms, 1e-3))))


def time_gpu(sync, event, elapsed, fn, budget_ms, most):
    """Median ms of fn() between device events (elapsed(a, b) reads them), after warm-ups;
    returns (ms, last result)."""
    for _ in range(3):
        out = fn()
    sync()

    def once():
        a, b = event(), event()
        a.record()
        r = fn()
        b.record()
        b.synchronize()
        return elapsed(a, b), r
    first, out = once()
    samples = []
    for _ in range(repeat_count(first, budget_ms, most)):
        ms, out = once()
        samples.append(ms)
    return statistics.median(samples), out


def time_cpu(fn, budget_ms, most):
    t0 = time.perf_counter()
    out = fn()
    first = (time.perf_counter() - t0) * 1e3
    samples = [first]
    for _ in range(repeat_count(first, budget_ms, most) - 1):
        t0 = time.perf_counter()
        out = fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples), out


def run_peer(name, x, budget_ms, most):
    """(kernel_ms, total_ms, results as numpy) for one peer, or None when its library is absent."""
    if name in ("torch_gpu", "torch_cpu"):
        import torch
        if name == "torch_cpu":
            t = torch.from_numpy(x)
            ms, out = time_cpu(lambda: torch_four_moments(torch, t), budget_ms, most)
            return ms, ms, [o.numpy() for o in out]
        if not torch.cuda.is_available():
            return None
        dev = torch.from_numpy(x).cuda()
        event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
        elapsed = lambda a, b: a.elapsed_time(b)  # noqa: E731
        ms, out = time_gpu(torch.cuda.synchronize, event, elapsed, lambda: torch_four_moments(torch, dev),
                           budget_ms, most)
        pinned = torch.from_numpy(x).pin_memory()

        def with_transfer():
            return [o.cpu() for o in torch_four_moments(torch, pinned.cuda(non_blocking=True))]
        total, _ = time_gpu(torch.cuda.synchronize, event, elapsed, with_transfer, budget_ms, most)
        return ms, total, [o.cpu().numpy() for o in out]
    if name == "cupy":
        import cupy as cp
        dev = cp.asarray(x)
        sync, elapsed = cp.cuda.Device().synchronize, cp.cuda.get_elapsed_time
        ms, out = time_gpu(sync, cp.cuda.Event, elapsed, lambda: four_moments(cp, dev), budget_ms, most)
        total, _ = time_gpu(sync, cp.cuda.Event, elapsed,
                            lambda: [cp.asnumpy(o) for o in four_moments(cp, cp.asarray(x))], budget_ms, most)
        return ms, total, [cp.asnumpy(o) for o in out]
    if name == "numpy":
        ms, out = time_cpu(lambda: four_moments(np, x), budget_ms, most)
        return ms, ms, out
    if name == "scipy":
        from scipy import stats

        def scipy_moments():
            return (x.mean(0), x.var(0), stats.skew(x, axis=0, bias=True),
                    stats.kurtosis(x, axis=0, fisher=True, bias=True))
        ms, out = time_cpu(scipy_moments, budget_ms, most)
        return ms, ms, out
    raise SystemExit(f"peer_moments: unknown peer {name!r} (known: {', '.join(PEERS)})")


def context(peers):
    ctx = {"date": time.strftime("%Y-%m-%dT%H:%M:%S"), "host_name": platform.node(),
           "executable": "scripts/peers/peer_moments.py", "python": platform.python_version(),
           "numpy": np.__version__, "peers": ",".join(peers)}
    for mod in ("torch", "cupy", "scipy"):
        try:
            ctx[mod] = __import__(mod).__version__
        except ImportError:
            ctx[mod] = "absent"
    try:
        import torch
        if torch.cuda.is_available():
            ctx["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    return ctx


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="JSON output path")
    ap.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of " + ",".join(PEERS))
    ap.add_argument("--cols", default=",".join(map(str, COLS)), help="column counts")
    ap.add_argument("--max-log2", type=int, default=28, help="largest matrix, log2 of its elements")
    ap.add_argument("--cpu-max-log2", type=int, default=28, help="largest matrix the CPU peers run")
    ap.add_argument("--budget-ms", type=float, default=300, help="time per peer and shape (sets the repeats)")
    ap.add_argument("--most", type=int, default=50, help="at most this many timed repeats")
    a = ap.parse_args(argv)
    peers = [p for p in a.peers.split(",") if p]
    for p in peers:
        if p not in PEERS:
            raise SystemExit(f"peer_moments: unknown peer {p!r} (known: {', '.join(PEERS)})")
    absent = set()
    entries = []
    for cols in (int(c) for c in a.cols.split(",")):
        for lg in (e for e in LOG2_ELEMENTS if e <= a.max_log2):
            rows = rows_for(lg, cols)
            x = moments_matrix(SEED, rows, cols)
            want = oracle(x)
            for p in peers:
                if p in absent or (p in ("torch_cpu", "numpy", "scipy") and lg > a.cpu_max_log2):
                    continue
                try:
                    r = run_peer(p, x, a.budget_ms, a.most)
                except ImportError as e:
                    print(f"peer_moments: skipping {p}: {e}", file=sys.stderr)
                    absent.add(p)
                    continue
                if r is None:
                    print(f"peer_moments: skipping {p}: no GPU", file=sys.stderr)
                    absent.add(p)
                    continue
                ms, total, out = r
                e = {"name": f"peer_moments/{p}/rows:{rows}/cols:{cols}", "run_type": "iteration",
                     "iterations": 1, "real_time": ms, "cpu_time": ms, "time_unit": "ms",
                     "kernel_ms": ms, "total_ms": total, "rows": rows, "cols": cols,
                     "elements": rows * cols, "elements_per_ms": rows * cols / ms}
                e.update(rel_errors(out, want))
                entries.append(e)
                print(f"{e['name']}: {ms:.4f} ms (with transfer {total:.4f} ms), "
                      f"skewness error {e['rel_error_skewness']:.1e}", file=sys.stderr)
    write_json(a.out, {"context": context(peers), "benchmarks": entries}, indent=1)


if __name__ == "__main__":
    main()
