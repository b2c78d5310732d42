"""Loading Google Benchmark JSON (--benchmark_out, v1.7/1.8) as written by distancies-bench.

Entries are grouped by base name: the registered name without the suffixes Google Benchmark
appends ("/iterations:10", "/manual_time", "_median", ...). Each group keeps its per-repetition
samples (run_type "iteration") and its aggregates (mean, median, stddev, cv).

It is also the one loader of committed result files (results/ keeps the large ones as
gzip, `X.json.gz`): read_bytes / read_text / open_text / read_json decompress a gzip file
transparently and, asked for `X.json` when only `X.json.gz` exists, read that, so old citations
and commands keep working. Errors are one BenchError line, never a traceback.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import re
import statistics
import zlib
from dataclasses import dataclass, field

# Suffixes Google Benchmark adds to a registered name (ours, like "k:10", are kept).
_GB_SUFFIX = re.compile(
    r"/(?:iterations:\d+|repeats:\d+|threads:\d+|min_time:[0-9.]+s?|min_warmup_time:[0-9.]+s?"
    r"|manual_time|real_time|process_time)$")
# Keys of an entry that are bookkeeping, not measurements.
_NOT_METRICS = {"family_index", "per_family_instance_index", "repetitions", "repetition_index",
                "threads", "iterations"}
_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


class BenchError(Exception):
    """The input is not usable benchmark JSON."""


# -- reading committed result files (plain or gzip) ----------------------------------------------

GZ = ".gz"
_GZ_MAGIC = b"\x1f\x8b"


def resolve(path) -> str:
    """The file that holds PATH's content: PATH itself, or PATH.gz when only that exists."""
    p = os.fspath(path)
    if not p.endswith(GZ) and not os.path.exists(p) and os.path.exists(p + GZ):
        return p + GZ
    return p


def exists(path) -> bool:
    """PATH or its gzip copy PATH.gz is a file."""
    return os.path.isfile(resolve(path))


def plain_name(path) -> str:
    """The name without the .gz a compressed result adds: 'moments/h200.json.gz' -> 'moments/h200.json'."""
    p = os.fspath(path)
    return p[:-len(GZ)] if p.endswith(GZ) else p


def result_stem(path) -> str:
    """The file's name without .gz and its own suffix: 'h200-aniso-0.95.json.gz' -> 'h200-aniso-0.95'."""
    return os.path.splitext(os.path.basename(plain_name(path)))[0]


def is_json_name(name) -> bool:
    """A JSON result, plain or compressed (X.json, X.json.gz)."""
    return os.fspath(name).endswith((".json", ".json" + GZ))


def read_bytes(path) -> bytes:
    """The content of a result file, gunzipped when it is gzip (by its .gz name or its magic bytes)."""
    p = resolve(path)
    try:
        with open(p, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BenchError(f"{os.fspath(path)}: cannot read ({e.strerror or e})") from None
    if p.endswith(GZ) or data[:2] == _GZ_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise BenchError(f"{p}: corrupt gzip ({e or type(e).__name__})") from None
    return data


def read_text(path) -> str:
    """A result file's text (UTF-8), decompressed."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BenchError(f"{resolve(path)}: not UTF-8 text ({e})") from None


def open_text(path) -> io.StringIO:
    """A result file opened for reading text (decompressed): `with open_text(p) as f: ...`."""
    return io.StringIO(read_text(path))


def read_json(path):
    """A result file's decoded JSON (decompressed); BenchError with one line when unusable."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise BenchError(f"{resolve(path)}: not JSON ({e})") from None


def base_name(name: str) -> str:
    """'pipeline/V1/iterations:10/manual_time' -> 'pipeline/V1'."""
    while True:
        stripped = _GB_SUFFIX.sub("", name)
        if stripped == name:
            return name
        name = stripped


def higher_is_better(metric: str) -> bool:
    """Rates (distances_per_ms, gb_per_s, ..._per_s) improve upwards; times and ratios downwards."""
    return "_per_" in metric


@dataclass
class Bench:
    """One benchmark: its repetitions and aggregates, metrics in ms for times."""
    name: str
    samples: list = field(default_factory=list)      # one dict of metrics per repetition
    aggregates: dict = field(default_factory=dict)   # "median" -> dict of metrics
    error: str | None = None
    skipped: bool = False   # the fixture could not do its case (error holds the reason)
    label: str | None = None  # the fixture's label (what it chose), where it set one

    def values(self, metric: str) -> list:
        return [s[metric] for s in self.samples if metric in s]

    def has(self, metric: str) -> bool:
        return bool(self.values(metric)) or metric in self.aggregates.get("median", {}) \
            or metric in self.aggregates.get("mean", {})

    def metrics(self) -> list:
        seen = {}
        for d in self.samples + list(self.aggregates.values()):
            seen.update(dict.fromkeys(d))
        return list(seen)

    def center(self, metric: str):
        """The median aggregate when there is one, else the mean of the repetitions (or None)."""
        for agg in ("median", "mean"):
            if metric in self.aggregates.get(agg, {}):
                return self.aggregates[agg][metric]
        vals = self.values(metric)
        return statistics.fmean(vals) if vals else None

    def spread(self, metric: str):
        """Standard deviation over repetitions (the aggregate, else computed), or None."""
        if metric in self.aggregates.get("stddev", {}) and self.repetitions() > 1:
            return self.aggregates["stddev"][metric]
        vals = self.values(metric)
        return statistics.stdev(vals) if len(vals) > 1 else None

    def repetitions(self) -> int:
        return max(len(self.samples), 1 if self.aggregates else 0)

    def throttled_samples(self) -> int:
        """Samples taken at reduced clocks, over all repetitions (counter throttled_samples)."""
        return int(sum(self.values("throttled_samples")))


@dataclass
class Run:
    """A whole JSON file: the context and the benchmarks by base name, in file order."""
    path: str
    context: dict
    benches: dict

    def family(self, prefix: str) -> dict:
        """Benchmarks whose base name starts with prefix (e.g. 'dot/'), errors left out."""
        return {n: b for n, b in self.benches.items() if n.startswith(prefix) and b.error is None}

    def get(self, name: str):
        b = self.benches.get(name)
        return b if b is not None and b.error is None else None

    def errors(self) -> dict:
        return {n: b.error for n, b in self.benches.items() if b.error is not None}

    def throttled(self) -> dict:
        """Benchmarks with throttled samples: name -> how many."""
        return {n: t for n, b in self.benches.items() if (t := b.throttled_samples()) > 0}

    def ctx_float(self, key: str):
        try:
            return float(self.context[key])
        except (KeyError, TypeError, ValueError):
            return None


def _metrics(entry: dict) -> dict:
    scale = _TO_MS.get(entry.get("time_unit", "ms"), 1.0)
    out = {}
    for k, v in entry.items():
        if k in _NOT_METRICS or isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        out[k] = v * scale if k in ("real_time", "cpu_time") else float(v)
    return out


def parse(doc, path: str = "<json>") -> Run:
    """Builds a Run from an already-decoded JSON document; BenchError if it is not GB output."""
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list) \
            or not isinstance(doc.get("context"), dict):
        raise BenchError(f"{path}: not Google Benchmark JSON (needs a 'context' object and a "
                         f"'benchmarks' list; write it with --benchmark_out_format=json)")
    benches: dict = {}
    for i, e in enumerate(doc["benchmarks"]):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            raise BenchError(f"{path}: benchmarks[{i}] has no 'name'")
        run_type = e.get("run_type", "iteration")
        full = e["name"]
        if run_type == "aggregate":
            agg = str(e.get("aggregate_name", ""))
            full = e.get("run_name") or (full[:-len(agg) - 1] if agg and full.endswith("_" + agg) else full)
        b = benches.setdefault(base_name(full), Bench(base_name(full)))
        if isinstance(e.get("label"), str) and e["label"]:
            b.label = e["label"]
        if e.get("error_occurred") or e.get("skipped"):
            b.error = str(e.get("error_message") or e.get("skip_message") or "skipped")
            # GB >= 1.8 SkipWithMessage; with 1.7 distancies-bench marks a skip "skipped: <reason>".
            b.skipped = bool(e.get("skipped")) and not e.get("error_occurred") \
                or b.error.startswith("skipped: ")
        elif run_type == "aggregate":
            b.aggregates[agg] = _metrics(e)
        else:
            b.samples.append(_metrics(e))
    return Run(path, doc["context"], benches)


def load(path: str) -> Run:
    """Reads a --benchmark_out JSON file (or its .json.gz); BenchError with one clear line when it
    is unusable."""
    return parse(read_json(path), os.fspath(path))


def describe_context(ctx: dict, short: bool = False) -> str:
    """One line naming the device and the run: GPU, driver, clocks, commit (short), model, host."""
    g = ctx.get
    parts = [f"device {g('gpu', 'unknown')}"]
    hw = [f"{g('gpu_sm_count')} SMs" if g("gpu_sm_count") else "",
          f"CC {g('gpu_compute_capability')}" if g("gpu_compute_capability") else "",
          f"{float(g('gpu_memory_gib')):.0f} GiB" if _isnum(g("gpu_memory_gib")) else ""]
    if any(hw):
        parts[0] += " (" + ", ".join(x for x in hw if x) + ")"
    if g("cuda_driver") or g("cuda_runtime"):
        parts.append(f"CUDA driver {g('cuda_driver', '?')} / runtime {g('cuda_runtime', '?')}")
    if g("gpu_max_sm_clock_mhz") or g("gpu_memory_clock_mhz"):
        parts.append(f"max SM clock {g('gpu_max_sm_clock_mhz', '?')} MHz, memory clock "
                     f"{g('gpu_memory_clock_mhz', '?')} MHz")
    if short:
        return "; ".join(parts + [f"commit {g('distancies_commit', '?')}"])
    if g("nvidia_smi_driver_sm_mem_maxsm_power_pstate"):
        parts.append(f"nvidia-smi (driver, SM, mem, max SM, power, pstate): "
                     f"{g('nvidia_smi_driver_sm_mem_maxsm_power_pstate')}")
    parts.append(f"commit {g('distancies_commit', '?')} ({g('build_type', '?')})")
    if g("model_rows"):
        parts.append(f"model {g('model_source', '?')}, {g('model_rows')}×{g('model_dim', '?')}, "
                     f"query '{g('query', '?')}', k={g('k', '?')}")
    if g("host_name") or g("date"):
        parts.append(f"host {g('host_name', '?')}, {g('date', '?')}")
    return "; ".join(parts)


def _isnum(v) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False
