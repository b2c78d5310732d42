"""FAISS GPU peer: exact search with GpuIndexFlatIP over the normalised rows, B queries at once.

Same model, query rule (row (b * 104729) % rows), oracle check and JSON shape as
peer_torch_batch.py: entries `peer/faiss_flat_ip/batch:B` (rows stored as float32) and
`peer/faiss_flat_ip_f16/batch:B` (useFloat16: rows stored as float16, fp32 accumulation). Each
batch is one `index.search(Q, k)` with Q the normalised float32 queries on the host; the results
come back to the host before the call returns, and the time is the wall clock around the call with
the device synchronised on both sides. FAISS tiles large batches itself (`chunk` = B).

    python -m scripts.peers.peer_faiss MODEL.dsv --batches 1,16,128,1024,8192 -k 10 --out peers-faiss.json
    python -m scripts.peers.peer_faiss MODEL.dsv --faiss-dir /tmp/faiss-h100 ... (a carried bundle: docs/batch-peers.md)
"""
import argparse
import ctypes
import os
import sys
import time

import numpy as np

from scripts.peers.batch_peers import (
    add_common_args,
    default_reps,
    entries,
    load_model_and_oracle,
    normalised_queries,
    normalised_rows,
    parse_batches,
    query_rows,
    write_json,
)

PROG = "peer_faiss"
GPU_MAX_K = 2048        # faiss GPU's selection limit (k and nprobe)


def preload(faiss_dir):
    """Makes a bundle importable: DIR on sys.path, and each library named in DIR/preload.txt (one path a
    line, relative to DIR, in order) loaded RTLD_GLOBAL so faiss's NEEDED entries resolve to them.
    A line 'find:NAME' loads NAME from the first nvidia/*/lib folder of sys.path that has it."""
    listing = os.path.join(faiss_dir, "preload.txt")
    if not os.path.isdir(faiss_dir):
        raise SystemExit(f"{PROG}: --faiss-dir {faiss_dir}: not a folder")
    sys.path.insert(0, faiss_dir)
    if not os.path.exists(listing):
        return
    with open(listing, encoding="utf-8") as f:
        names = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    for name in names:
        if name.startswith("find:"):
            lib = name[len("find:"):]
            found = [os.path.join(p, "nvidia", d, "lib", lib) for p in sys.path
                     if os.path.isdir(os.path.join(p, "nvidia")) for d in sorted(os.listdir(os.path.join(p, "nvidia")))]
            found = [p for p in found if os.path.exists(p)]
            if not found:
                raise SystemExit(f"{PROG}: {listing}: {lib} is in no nvidia/*/lib folder of this Python")
            path = found[0]
        else:
            path = os.path.join(faiss_dir, name)
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            raise SystemExit(f"{PROG}: cannot load {path} ({e})") from None


def import_faiss():
    try:
        import faiss
    except ImportError as e:
        raise SystemExit(f"{PROG}: cannot import faiss ({e}); see docs/batch-peers.md") from None
    if not hasattr(faiss, "StandardGpuResources") or not hasattr(faiss, "GpuIndexFlatIP"):
        raise SystemExit(f"{PROG}: faiss {getattr(faiss, '__version__', '?')} has no GPU support "
                         "(a faiss-cpu build?)")
    if faiss.get_num_gpus() < 1:
        raise SystemExit(f"{PROG}: faiss {faiss.__version__} sees no GPU")
    return faiss


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap)
    ap.add_argument("--no-f16", action="store_true", help="only the float32 index")
    ap.add_argument("--cuvs", action="store_true", help="let a cuVS build use cuVS for the flat index")
    ap.add_argument("--faiss-dir", help="import faiss from this unpacked bundle (docs/batch-peers.md)")
    args = ap.parse_args(argv)
    batches = parse_batches(args.batches, PROG)
    if not 1 <= args.k <= GPU_MAX_K:
        raise SystemExit(f"{PROG}: -k must be in 1..{GPU_MAX_K} (faiss GPU's limit)")
    if args.reps is not None and args.reps < 1:
        raise SystemExit(f"{PROG}: --reps must be positive")
    if args.faiss_dir:
        preload(args.faiss_dir)
    faiss = import_faiss()
    try:
        import torch  # only to synchronise the whole device and name it
        sync, gpu = torch.cuda.synchronize, torch.cuda.get_device_name(0)
    except Exception:                     # noqa: BLE001 - torch is optional here
        sync, gpu = (lambda: None), "unknown (no torch to ask)"

    norms, vectors, normalised, oracle = load_model_and_oracle(args, batches, PROG)
    rows, dim = vectors.shape
    xn = normalised_rows(vectors, norms, normalised)
    q_all = np.ascontiguousarray(normalised_queries(np.asarray(vectors[query_rows(max(batches), rows)])))

    res = faiss.StandardGpuResources()
    variants = [("faiss_flat_ip", False)]
    if not args.no_f16:
        if hasattr(faiss.GpuIndexFlatConfig(), "useFloat16"):
            variants.append(("faiss_flat_ip_f16", True))
        else:
            print(f"{PROG}: this faiss has no GpuIndexFlatConfig.useFloat16; float32 only", flush=True)
    benches, cuvs_used = [], None
    for vname, f16 in variants:
        cfg = faiss.GpuIndexFlatConfig()
        cfg.device = 0
        cfg.useFloat16 = f16
        if hasattr(cfg, "use_cuvs"):
            cfg.use_cuvs = args.cuvs
            cuvs_used = args.cuvs
        index = faiss.GpuIndexFlatIP(res, dim, cfg)
        index.add(xn)
        name = f"peer/{vname}"
        for batch in batches:
            q = q_all[:batch]

            def search(index=index, q=q):
                sync()
                start = time.perf_counter()
                _, idx = index.search(q, args.k)
                sync()
                return (time.perf_counter() - start) * 1e3, idx

            for _ in range(2 if batch <= 1024 else 1):
                _, idx = search()
            samples = [search()[0] for _ in range(args.reps or default_reps(batch))]
            frac, checked = oracle.fraction(batch, idx)
            med = float(np.median(samples))
            benches += entries(name, samples, batch, rows, frac, checked, batch)
            print(f"{name}/batch:{batch}: median {med:.3f} ms ({batch / med * 1e3:,.0f} queries/s, "
                  f"{batch * rows / med:,.0f} distances/ms), exact {frac:.3f} of {checked}", flush=True)
        index.reset()
        del index

    context = {"peer": f"faiss {faiss.__version__}", "gpu": gpu, "model_source": args.model,
               "model_rows": str(rows), "model_dim": str(dim), "model_normalised": normalised, "k": str(args.k),
               "batches": batches, "query_rule": "model row (b * 104729) % rows",
               "exact_checked_per_batch": "up to 32, evenly spread", "faiss_dir": args.faiss_dir or "",
               "use_cuvs": "n/a (not a cuVS build)" if cuvs_used is None else cuvs_used,
               "f16": "GpuIndexFlatConfig.useFloat16: rows stored as float16, fp32 accumulation",
               "chunk": "FAISS tiles the batch itself; chunk = B",
               "timer": "wall clock around index.search (host float32 in, host results out), device "
                        "synchronised before and after"}
    write_json(args.out, context, benches, PROG)
    print(f"{PROG}: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
