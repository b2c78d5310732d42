"""PyTorch batch peer: B queries at once as `torch.mm(Q, Xn.T)` + `torch.topk`, fp32 and bf16, on the GPU.

Query b is model row (b * 104729) % rows (the C++ batch benchmark's rule). Each batch is timed end
to end with CUDA events: the float32 queries uploaded from pinned host memory, normalised, scores
`Q @ Xn.T` (true fp32: TF32 off; or bf16), top k per query, values and rows downloaded. A batch
whose scores do not fit in half the free GPU memory (or have 2^31 elements or more: topk's 32-bit
indexing) runs in chunks of queries (a power of two, recorded as `chunk`). Up to 32 queries of each
batch are checked against an fp64 CPU oracle (`exact_fraction`: share with the same top-k row set).
Writes Google Benchmark-shaped JSON with `peer/torch_mm_topk_{fp32,bf16}/batch:B` entries
(scripts/peers/batch_peers.py has the details).

    python -m scripts.peers.peer_torch_batch MODEL.dsv --batches 1,16,128,1024,8192 -k 10 --out peers-batch.json
"""
import argparse
import functools
import sys

import numpy as np

from scripts.peers.batch_peers import (
    add_common_args,
    default_reps,
    entries,
    largest_pow2_at_most,
    load_model_and_oracle,
    parse_batches,
    query_rows,
    write_json,
)
from scripts.peers.peer_torch import timed

PROG = "peer_torch_batch"
INT32_MAX = 2**31 - 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap)
    ap.add_argument("--dtypes", default="fp32,bf16", help="fp32, bf16 or both (default both)")
    ap.add_argument("--chunk", type=int, help="force this chunk of queries (default: from free memory)")
    ap.add_argument("--huge-chunks", action="store_true",
                    help="let one chunk's scores exceed 2^31 - 1 elements (by default chunks stay below, "
                         "where topk's 32-bit indexing holds)")
    args = ap.parse_args(argv)
    batches = parse_batches(args.batches, PROG)
    dtypes = [d.strip() for d in args.dtypes.split(",")]
    if any(d not in ("fp32", "bf16") for d in dtypes):
        raise SystemExit(f"{PROG}: --dtypes: expected fp32, bf16 or fp32,bf16, got {args.dtypes!r}")
    if args.k < 1 or (args.reps is not None and args.reps < 1) or (args.chunk is not None and args.chunk < 1):
        raise SystemExit(f"{PROG}: -k, --reps and --chunk must be positive")
    try:
        import torch
    except ImportError as e:
        raise SystemExit(f"{PROG}: cannot import torch ({e})") from None
    if not torch.cuda.is_available():
        raise SystemExit(f"{PROG}: no CUDA GPU visible to PyTorch")

    norms, vectors, normalised, oracle = load_model_and_oracle(args, batches, PROG)
    rows, dim = vectors.shape

    torch.backends.cuda.matmul.allow_tf32 = False          # fp32 means fp32, not TF32
    dev = torch.device("cuda")
    xn = torch.from_numpy(np.array(vectors, dtype=np.float32)).to(dev)     # a writable copy
    if not normalised:     # rows / stored norms; a zero row (norm 0) stays 0
        xn.div_(torch.from_numpy(np.array(norms, dtype=np.float32)).to(dev).clamp_min(1e-30).unsqueeze(1))
    mats = {"fp32": (xn, torch.float32, 4)}
    if "bf16" in dtypes:
        mats["bf16"] = (xn.to(torch.bfloat16), torch.bfloat16, 2)
    q_all = torch.from_numpy(np.ascontiguousarray(vectors[query_rows(max(batches), rows)], dtype=np.float32))
    q_all = q_all.pin_memory()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    free, total = torch.cuda.mem_get_info()

    def search(batch, mat, dtype, chunk):
        q = q_all[:batch].to(dev, non_blocking=True)
        q = (q / torch.linalg.vector_norm(q, dim=1, keepdim=True).clamp_min(1e-30)).to(dtype)
        if chunk >= batch:
            vals, idx = torch.topk(torch.mm(q, mat.t()), args.k, dim=1)
        else:
            vals = torch.empty((batch, args.k), dtype=dtype, device=dev)
            idx = torch.empty((batch, args.k), dtype=torch.int64, device=dev)
            for s in range(0, batch, chunk):
                scores = torch.mm(q[s:s + chunk], mat.t())
                v, i = torch.topk(scores, args.k, dim=1)
                del scores                      # one chunk of scores alive at a time
                vals[s:s + chunk], idx[s:s + chunk] = v, i
        return vals.cpu(), idx.cpu()

    benches = []
    for dname in dtypes:
        mat, dtype, width = mats[dname]
        name = f"peer/torch_mm_topk_{dname}"
        for batch in batches:
            chunk = args.chunk or largest_pow2_at_most(free // 2 // (rows * width))
            if not args.chunk and not args.huge_chunks:
                chunk = min(chunk, largest_pow2_at_most(INT32_MAX // rows))
            if chunk < 1:
                raise SystemExit(f"{PROG}: one query's {rows} scores do not fit in half the free GPU memory")
            chunk = min(chunk, batch)
            while True:
                try:
                    _, idx = search(batch, mat, dtype, chunk)
                    reps = args.reps or default_reps(batch)
                    med, samples = timed(torch, functools.partial(search, batch, mat, dtype, chunk), reps,
                                         warmup=2 if batch <= 1024 else 1)
                    break
                except torch.cuda.OutOfMemoryError:
                    torch.cuda.empty_cache()
                    if chunk == 1:
                        raise SystemExit(f"{PROG}: out of GPU memory even with one query at a time") from None
                    chunk //= 2
                    print(f"{PROG}: out of GPU memory at B={batch}; chunk halved to {chunk}", flush=True)
            frac, checked = oracle.fraction(batch, idx.numpy())
            benches += entries(name, samples, batch, rows, frac, checked, chunk)
            print(f"{name}/batch:{batch}: median {med:.3f} ms ({batch / med * 1e3:,.0f} queries/s, "
                  f"{batch * rows / med:,.0f} distances/ms), chunk {chunk}, exact {frac:.3f} of {checked}",
                  flush=True)
            torch.cuda.empty_cache()

    context = {"peer": "pytorch " + torch.__version__, "gpu": torch.cuda.get_device_name(0),
               "cuda_runtime": str(torch.version.cuda), "model_source": args.model, "model_rows": str(rows),
               "model_dim": str(dim), "model_normalised": normalised, "k": str(args.k), "batches": batches,
               "query_rule": "model row (b * 104729) % rows", "exact_checked_per_batch": "up to 32, evenly spread",
               "allow_tf32": torch.backends.cuda.matmul.allow_tf32,
               "allow_bf16_reduced_precision_reduction":
                   torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
               "bf16_scores_dtype": "bfloat16 (torch.mm output; topk over bf16 scores)",
               "chunk_rule": "largest power of two whose scores fit in half the free GPU memory"
                             + ("" if args.huge_chunks else " and have at most 2^31 - 1 elements"),
               "gpu_free_bytes_after_load": free, "gpu_total_bytes": total,
               "timer": "CUDA events around upload + normalise + mm + topk + download (peer_torch.timed)"}
    write_json(args.out, context, benches, PROG)
    print(f"{PROG}: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
