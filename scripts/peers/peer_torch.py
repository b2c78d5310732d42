"""PyTorch peer: `mv` + `topk` over the same model and query as distancies-bench, on the GPU.

Times one query end to end (query upload, similarities, top k, result download) with CUDA
events, fp32 and fp16, and writes Google Benchmark-shaped JSON (`peer/torch_*` entries with
total_ms and distances_per_ms counters) that scripts/reports/report.py reads beside ours. Also checks
each peer's top k against an fp64 oracle on the CPU (`exact` counter: 1 = same rows).

    python -m scripts.peers.peer_torch MODEL.dsv --query king -k 10 --out peers.json
"""
import argparse
import functools
import struct
import sys

import numpy as np

from scripts.lib.atomic_write import write_json


def load_native(path):
    """Native format (docs/formats.md): returns (words, norms, vectors[rows, dim])."""
    with open(path, "rb") as f:
        head = f.read(96)
    if len(head) < 96 or head[:8] != b"DSTNCIES":
        raise SystemExit(f"peer_torch: {path}: not a distancies native model")
    version, flags, rows, dim, ld = struct.unpack_from("<IIQII", head, 8)
    offs = struct.unpack_from("<8Q", head, 32)
    if version != 1:
        raise SystemExit(f"peer_torch: {path}: unsupported native version {version}")
    mm = np.memmap(path, dtype=np.uint8, mode="r")
    voff = np.frombuffer(mm[offs[0]:offs[0] + offs[1]], dtype="<u8")
    vocab = bytes(mm[offs[2]:offs[2] + offs[3]])
    words = [vocab[voff[i]:voff[i + 1]].decode("utf-8", "replace") for i in range(rows)]
    norms = np.frombuffer(mm[offs[4]:offs[4] + offs[5]], dtype="<f4")
    vectors = np.frombuffer(mm[offs[6]:offs[6] + offs[7]], dtype="<f4").reshape(rows, ld)[:, :dim]
    return words, norms, vectors


def timed(torch, fn, reps, warmup=5):
    """Median and all samples (ms) of fn() between CUDA events, after warm-up."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        samples.append(a.elapsed_time(b))
    return float(np.median(samples)), samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--query", default="king")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--reps", type=int, default=5, help="repetitions (each the mean of --iters)")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("peer_torch: no CUDA GPU visible to PyTorch")
    words, norms, vectors = load_native(args.model)
    try:
        row = words.index(args.query)
    except ValueError:
        raise SystemExit(f"peer_torch: unknown word: '{args.query}'") from None
    q = np.array(vectors[row], dtype=np.float32)
    dev = torch.device("cuda")
    m32 = torch.from_numpy(np.ascontiguousarray(vectors)).to(dev)
    n32 = torch.from_numpy(np.array(norms)).to(dev)
    m16 = m32.half()
    qn = float(np.linalg.norm(q.astype(np.float64)))
    q_host = torch.from_numpy(q).pin_memory()

    # fp64 oracle on the CPU: the exact top k (similarity desc, row asc).
    sims64 = (vectors.astype(np.float64) @ q.astype(np.float64)) / (
        np.linalg.norm(vectors.astype(np.float64), axis=1) * np.linalg.norm(q.astype(np.float64)))
    oracle = np.lexsort((np.arange(len(sims64)), -sims64))[: args.k]

    def query(mat, dtype):
        qd = q_host.to(dev, non_blocking=True).to(dtype)
        sims = (mat @ qd).float() / (n32 * qn)
        vals, idx = torch.topk(sims, args.k)
        return vals.cpu(), idx.cpu()

    entries = []
    for name, mat, dtype in (("torch_mv_topk_fp32", m32, torch.float32), ("torch_mv_topk_fp16", m16, torch.float16)):
        _, idx = query(mat, dtype)
        exact = int(np.array_equal(np.sort(idx.numpy()), np.sort(oracle)))
        reps = []
        for r in range(args.reps):
            _, samples = timed(torch, functools.partial(query, mat, dtype), args.iters)
            mean = float(np.mean(samples))
            reps.append(mean)
            entries.append(entry(f"peer/{name}", "iteration", mean, len(vectors), exact, repetition=r,
                                 iters=args.iters))
        entries.append(entry(f"peer/{name}", "aggregate", float(np.median(reps)), len(vectors), exact, agg="median"))
        entries.append(entry(f"peer/{name}", "aggregate", float(np.std(reps, ddof=1)) if len(reps) > 1 else 0.0,
                             len(vectors), exact, agg="stddev"))
        print(f"{name}: median {np.median(reps):.4f} ms, same top {args.k} rows as fp64: {bool(exact)}")
    context = {"peer": "pytorch " + torch.__version__, "gpu": torch.cuda.get_device_name(0),
               "cuda_runtime": torch.version.cuda, "model_source": args.model, "model_rows": str(len(vectors)),
               "model_dim": str(vectors.shape[1]), "query": args.query, "k": str(args.k)}
    write_json(args.out, {"context": context, "benchmarks": entries}, indent=1)


def entry(name, run_type, ms, rows, exact, repetition=0, iters=1, agg=None):
    e = {"name": f"{name}/manual_time" + (f"_{agg}" if agg else ""), "run_name": f"{name}/manual_time",
         "run_type": run_type, "repetitions": 0, "repetition_index": repetition, "threads": 1,
         "iterations": iters, "real_time": ms, "cpu_time": ms, "time_unit": "ms",
         "total_ms": ms, "distances_per_ms": rows / ms if ms > 0 else 0.0, "exact": exact}
    if agg:
        e["aggregate_name"] = agg
        if agg == "stddev":
            e["distances_per_ms"] = 0.0
    return e


if __name__ == "__main__":
    sys.exit(main())
