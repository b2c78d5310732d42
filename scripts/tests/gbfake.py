"""Builds made-up Google Benchmark JSON (the --benchmark_out layout of v1.7/1.8) for the tests."""
import json
import statistics

CONTEXT = {
    "date": "2026-01-01T00:00:00+00:00", "host_name": "fake-runner", "executable": "distancies-bench",
    "num_cpus": 16, "mhz_per_cpu": 3000, "cpu_scaling_enabled": False, "caches": [],
    "library_build_type": "release", "distancies_commit": "abc1234", "distancies_version": "0.1.0",
    "build_type": "Release", "cuda_architectures": "90-real,75-virtual", "model_source": "synthetic seed 840",
    "model_rows": "2196016", "model_dim": "300", "model_bytes": "2635219200", "query": "king", "k": "10",
    "gpu": "NVIDIA H100 80GB HBM3", "gpu_sm_count": "132", "gpu_compute_capability": "9.0",
    "gpu_memory_gib": "79.1", "gpu_l2_bytes": "52428800", "gpu_max_sm_clock_mhz": "1980",
    "gpu_memory_clock_mhz": "2619", "gpu_memory_bus_bits": "5120", "cuda_driver": "12.8",
    "cuda_runtime": "12.8", "floor_ms": "0.8", "floor_gb_per_s": "3294",
}


def entries(name, samples, suffix="/manual_time", aggregates=True, time_unit="ms"):
    """Iteration entries for each sample (a dict with real_time and counters), then GB's aggregates."""
    full = name + suffix
    out = []
    for i, s in enumerate(samples):
        e = {"name": full, "family_index": 0, "per_family_instance_index": 0, "run_name": full,
             "run_type": "iteration", "repetitions": len(samples), "repetition_index": i, "threads": 1,
             "iterations": 10, "real_time": s["real_time"], "cpu_time": s["real_time"], "time_unit": time_unit}
        e.update({k: v for k, v in s.items() if k != "real_time"})
        out.append(e)
    if aggregates and len(samples) > 1:
        keys = list(samples[0])
        fns = {"mean": statistics.fmean, "median": statistics.median, "stddev": statistics.stdev,
               "cv": lambda v: statistics.stdev(v) / statistics.fmean(v)}
        for agg, fn in fns.items():
            e = {"name": f"{full}_{agg}", "family_index": 0, "per_family_instance_index": 0, "run_name": full,
                 "run_type": "aggregate", "repetitions": len(samples), "threads": 1, "aggregate_name": agg,
                 "aggregate_unit": "percentage" if agg == "cv" else "time", "iterations": 10,
                 "time_unit": time_unit}
            vals = {k: fn([s[k] for s in samples]) for k in keys}
            e["real_time"] = vals.pop("real_time")
            e["cpu_time"] = e["real_time"]
            e.update(vals)
            out.append(e)
    return out


def errored(name, message, suffix="/manual_time"):
    return [{"name": name + suffix, "family_index": 0, "per_family_instance_index": 0,
             "run_name": name + suffix, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
             "threads": 1, "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ms",
             "error_occurred": True, "error_message": message}]


def document(benchmarks, **context):
    return {"context": {**CONTEXT, **context}, "benchmarks": benchmarks}


def write(path, doc):
    path.write_text(json.dumps(doc, indent=1))
    return str(path)
