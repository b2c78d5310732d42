"""The tiled matmul study's report from distancies-bench JSON (the matmul/ fixtures):
OUT/matmul.md (the tile sweep and the register-length sweep at 512^3 and 4096^3 with each
variant's registers, spills and occupancy; the anchors at every shape and what cuBLASLt chose; the
kernels beyond the seed with their resources and the issue's goals; every row's fraction of the
best cuBLAS row and of the dense peak at its own SM clock; the study's findings beside ours) and the
figures: a heat-map of the tile sweep, a line plot of the length sweep and the ladder from the
naive kernel to the libraries at 4096^3.

    python3 -m scripts.reports.matmul_report "$(python3 -m scripts.lib.manifest canonical matmul h100)" \
        --out results/matmul
"""
import argparse
import os
import re
import sys

from scripts.lib.atomic_write import write_text
from scripts.lib.bench_json import BenchError, load
from scripts.lib.plot_style import distinct_colours, stamp

STUDY_HARDWARE = "an Intel GPU on Intel DevCloud through oneAPI/SYCL (the seed does not name the model)"
STUDY_FINDINGS = [
    ("best tile", "8 x 8", "tile"),
    ("tile slower than the CPU", "32 x 32", "cpu"),
    ("register inputs", "better up to 64 + 64, about 4 x slower at 128 + 128", "length"),
]
NAME = re.compile(r"^matmul/([^/]+)/M:(\d+)/N:(\d+)/K:(\d+)$")
SIDES = [1, 2, 4, 8, 16, 32]
LENGTHS = [1, 2, 4, 8, 16, 32, 64]


def collect(run):
    """{(variant, m, n, k): Bench}"""
    out = {}
    for name, b in run.family("matmul/").items():
        g = NAME.match(name)
        if g:
            out[(g[1], int(g[2]), int(g[3]), int(g[4]))] = b
    return out


def c(b, key):
    return b.center(key) if b is not None and b.has(key) else None


CUBLAS = ("cublas_", "cublaslt_")
BITS_NAME = {32: "fp32", 19: "TF32", 16: "FP16"}

# Dense FLOP per clock and SM, by compute capability major and input bits. sm_90 (H100): the
# Hopper whitepaper and the H100 datasheet give 989.4 dense FP16 tensor TFLOP/s (fp32
# accumulate) and 494.7 TF32 at 132 SMs and 1,830 MHz (989.4e12 / (132 x 1.83e9) = 4,096 FLOP, i.e.
# 2 x A100's 2,048 = 4 tensor cores x 256 FP16 FMA x 2), and 128 FP32 lanes an SM (256 FLOP, FMA).
DENSE_FLOP_PER_CLOCK_SM = {9: {16: 4096, 19: 2048, 32: 256}}


def dense_peak_tflops(bits, sm_count, clock_mhz, cc_major):
    """The card's dense peak for these input bits at this SM clock (None where unknown)."""
    per = DENSE_FLOP_PER_CLOCK_SM.get(cc_major, {}).get(bits)
    if not per or not sm_count or not clock_mhz:
        return None
    return per * sm_count * clock_mhz * 1e6 / 1e12


def output_bits(b):
    return c(b, "output_bits") or 32  # runs before the counter: every C was fp32


def best_cublas(data, shape, bits):
    """(name, Bench) of the fastest cuBLAS or cuBLASLt fixture (median time) at this shape with
    these input bits and fp32 C, as the kernels write: what every row is measured against."""
    cands = [(c(b, "real_time"), n, b) for (n, *sh), b in data.items() if tuple(sh) == tuple(shape)
             and n.startswith(CUBLAS) and c(b, "input_bits") == bits and output_bits(b) == 32 and c(b, "real_time")]
    if not cands:
        return None, None
    _, n, b = min(cands, key=lambda t: t[0])
    return n, b


def lib_fraction(data, name, shape):
    """The best cuBLAS median time at the same shape and precision over this kernel's median (both
    fixtures of this run; the fixtures' own cublas_fraction counter times cublasGemmEx apart)."""
    b = data.get((name,) + tuple(shape))
    _, lib = best_cublas(data, shape, c(b, "input_bits") or 32)
    t, tl = c(b, "real_time"), c(lib, "real_time")
    return tl / t if t and tl else None


def row_context(data, key, context):
    """(fraction of the best cuBLAS row, its name, fraction of the dense peak at the row's own
    recorded SM clock, the clock, whether the clock is the card's maximum for want of a reading)."""
    b = data.get(key)
    bits = c(b, "input_bits") or 32
    best, _ = best_cublas(data, key[1:], bits)
    clock, assumed = c(b, "sm_clock_mhz"), False
    if not clock:
        clock, assumed = _float(context.get("gpu_max_sm_clock_mhz")), True
    cc = _float(str(context.get("gpu_compute_capability", "")).split(".")[0])
    peak = dense_peak_tflops(bits, _float(context.get("gpu_sm_count")), clock, int(cc) if cc else None)
    t = c(b, "tflops")
    return (lib_fraction(data, key[0], key[1:]), best, t / peak if t and peak else None, clock, assumed)


def _float(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def fmt(v, spec=".3g"):
    return "—" if v is None else format(v, spec)


def sweep_table(data, size):
    rows = [f"### Register tiles at {size}³ (TFLOP/s; registers / spill bytes / occupancy)", "",
            "| tileY \\ tileX | " + " | ".join(str(x) for x in SIDES) + " |", "|---" * (len(SIDES) + 1) + "|"]
    for y in SIDES:
        cells = []
        for x in SIDES:
            b = data.get((f"register_tile_{y}x{x}", size, size, size))
            cells.append("—" if b is None else f"{fmt(c(b, 'tflops'))} ({fmt(c(b, 'registers'), '.0f')} / "
                         f"{fmt(c(b, 'spill_bytes'), '.0f')} / {fmt(c(b, 'occupancy'), '.2f')})")
        rows.append(f"| {y} | " + " | ".join(cells) + " |")
    rows += ["", f"### Register length at tile 2x2, {size}³", "",
             "| inputs | TFLOP/s | registers | spill bytes | occupancy |", "|---|---|---|---|---|"]
    for L in LENGTHS:
        b = data.get((f"register_length_{L}", size, size, size))
        rows.append(f"| {2 * L} + {2 * L} | {fmt(c(b, 'tflops'))} | {fmt(c(b, 'registers'), '.0f')} | "
                    f"{fmt(c(b, 'spill_bytes'), '.0f')} | {fmt(c(b, 'occupancy'), '.2f')} |")
    return rows


def anchors_table(data):
    shapes = sorted({(m, n, k) for (_, m, n, k) in data}, key=lambda s: (s[0] * s[1] * s[2], s))
    names = ["cublas_sgemm", "cublas_tf32", "cublaslt_tf32_best", "cublas_f16", "cublaslt_f16_best", "naive",
             "three_loop_tile_8x8", "register_tile_4x4", "register_tile_8x8", "register_length_8"]
    rows = ["### Every shape: TFLOP/s (fraction of the best cuBLAS row's speed at the same precision)", "",
            "| shape | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for s in shapes:
        cells = []
        for n in names:
            b = data.get((n,) + s)
            frac = lib_fraction(data, n, s)
            note = f" ({frac:.2f})" if frac and not n.startswith("cublas") else ""
            cells.append("—" if b is None else fmt(c(b, "tflops")) + note)
        rows.append(f"| {s[0]}×{s[1]}×{s[2]} | " + " | ".join(cells) + " |")
    return rows


def pct(v):
    return "—" if v is None else f"{100 * v:.1f} %"


def shapes_of(data):
    return sorted({tuple(k[1:]) for k in data}, key=lambda s: (s[0] * s[1] * s[2], s))


def context_tables(data, context):
    """Every row at every shape, fastest first: TFLOP/s, its SM clock, the fraction of the best
    cuBLAS row (same shape, input bits, fp32 C) and of the dense peak at that clock."""
    rows = ["## Every row in context", "",
            "Per shape, fastest first. *of the best cuBLAS*: that row's median time over this row's (same input "
            "precision, fp32 C). *of dense peak*: TFLOP/s over SMs × the row's mean SM clock (counter "
            "`sm_clock_mhz`; * where absent: the card's maximum) × dense FLOP a clock and SM for its input "
            "precision (sm_90: FP16 4,096, TF32 2,048, FP32 256).", ""]
    for sh in shapes_of(data):
        keys = sorted((k for k in data if tuple(k[1:]) == sh and c(data[k], "tflops")),
                      key=lambda k: -c(data[k], "tflops"))
        if not keys:
            continue
        rows += [f"### {sh[0]}×{sh[1]}×{sh[2]}", "",
                 "| row | inputs | C | TFLOP/s | SM MHz | of the best cuBLAS | of dense peak |",
                 "|---|---|---|---|---|---|---|"]
        for k in keys:
            b = data[k]
            frac, best, peak, clock, assumed = row_context(data, k, context)
            rows.append(f"| {k[0]} | {BITS_NAME.get(c(b, 'input_bits'), '?')} | fp{output_bits(b):.0f} | "
                        f"{fmt(c(b, 'tflops'))} | {fmt(clock, '.0f')}{'*' if assumed else ''} | "
                        f"{pct(frac)}{f' ({best})' if best and best != k[0] else ''} | {pct(peak)} |")
        rows.append("")
    return rows


LT_COUNTERS = [("algo_rank", "rank"), ("algo_id", "algo"), ("algo_tile_id", "tile"), ("algo_stages_id", "stages"),
               ("algo_splitk", "split-K"), ("algo_cluster_id", "cluster"), ("k_run", "K run"),
               ("workspace_mib", "workspace MiB")]


def lt_choices_table(data):
    """What the cuBLASLt anchors chose at set-up and what their alternatives took."""
    keys = [k for k in data if k[0].startswith("cublaslt_")]
    if not keys:
        return []
    rows = ["### What cuBLASLt chose (set-up: the heuristic's top candidates, each timed; ms medians of 5 calls)", "",
            "| row | shape | " + " | ".join(h for _, h in LT_COUNTERS) +
            " | candidates | winner ms | heuristic's first ms | best at K ms | best at K↑8 ms |",
            "|---" * (len(LT_COUNTERS) + 7) + "|"]
    for k in sorted(keys, key=lambda k: (k[1] * k[2] * k[3], k)):
        b = data[k]
        rows.append(f"| {k[0]} | {k[1]}×{k[2]}×{k[3]} | " + " | ".join(fmt(c(b, n), ".0f") for n, _ in LT_COUNTERS) +
                    f" | {fmt(c(b, 'algo_candidates'), '.0f')} | {fmt(c(b, 'setup_best_ms'), '.4g')} | "
                    f"{fmt(c(b, 'setup_first_choice_ms'), '.4g')} | {fmt(c(b, 'setup_best_exact_k_ms'), '.4g')} | "
                    f"{fmt(c(b, 'setup_best_padded_k_ms') or None, '.4g')} |")
    return rows


SEED_PREFIXES = ("naive", "three_loop_", "register_tile_", "register_length_", "cpu_")
LIBRARIES = ("cublas_", "cublaslt_", "cutlass_")


def beyond_names(data):
    """The kernels beyond the seed, in registration (first appearance) order."""
    seen = []
    for (name, *_s) in data:
        if not name.startswith(SEED_PREFIXES + LIBRARIES) and name not in seen:
            seen.append(name)
    return seen


def best_of(data, size, bits, hand_written=True):
    """(name, Bench) of the fastest hand-written (or library) kernel with these input bits at size^3."""
    cands = [(n, b) for (n, m, nn, k), b in data.items() if (m, nn, k) == (size, size, size)
             and c(b, "input_bits") == bits and c(b, "tflops") and n.startswith(LIBRARIES) != hand_written]
    return max(cands, key=lambda nb: c(nb[1], "tflops")) if cands else (None, None)


def beyond_tables(data):
    names = beyond_names(data) + ["cutlass_simt_f32", "cutlass_f16"]
    shapes = sorted({(m, n, k) for (v, m, n, k) in data if v in names}, key=lambda s: (s[0] * s[1] * s[2], s))
    rows = ["### Beyond the seed, and CUTLASS: TFLOP/s (fraction of the best cuBLAS at the same precision)", "",
            "| kernel | " + " | ".join(f"{m}×{n}×{k}" for m, n, k in shapes) + " |", "|---" * (len(shapes) + 1) + "|"]
    for name in names:
        cells = []
        for s in shapes:
            b = data.get((name,) + s)
            frac = lib_fraction(data, name, s)
            cells.append("—" if b is None else fmt(c(b, "tflops")) + (f" ({frac:.2f})" if frac else ""))
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    rows += ["", "### Their resources (from the compiler and the occupancy calculator)", "",
             "| kernel | inputs | threads | registers | spill bytes | shared bytes | blocks / SM | occupancy |",
             "|---|---|---|---|---|---|---|---|"]
    for name in beyond_names(data):
        b = next((data[key] for key in data if key[0] == name), None)
        rows.append(f"| {name} | {'fp16' if c(b, 'input_bits') == 16 else 'fp32'} | "
                    f"{fmt(c(b, 'block_threads'), '.0f')} | "
                    f"{fmt(c(b, 'registers'), '.0f')} | {fmt(c(b, 'spill_bytes'), '.0f')} | "
                    f"{fmt(c(b, 'shared_bytes'), '.0f')} | {fmt(c(b, 'blocks_per_sm'), '.0f')} | "
                    f"{fmt(c(b, 'occupancy'), '.2f')} |")
    return rows


GOALS = [("best hand-written fp32 kernel", 32, 0.70, "the best cuBLAS fp32"),
         ("best hand-written fp32 kernel", 32, 0.95, "the best cuBLAS fp32"),
         ("best tensor-core kernel (FP16 inputs, fp32 sums)", 16, 0.60, "the best cuBLAS FP16")]


def goals(data, size=4096):
    rows = [f"### Goals at {size}³ (fractions: the library fixture's median time over the kernel's, this run)", "",
            "| goal | kernel | TFLOP/s | fraction of the library | met |", "|---|---|---|---|---|"]
    for what, bits, need, lib in GOALS:
        name, b = best_of(data, size, bits)
        frac = lib_fraction(data, name, (size, size, size)) if name else None
        rows.append(f"| {what} ≥ {need:.0%} of {lib} | {name or '—'} | {fmt(c(b, 'tflops'))} | "
                    f"{fmt(frac, '.3f')} | {'—' if frac is None else 'met' if frac >= need else 'missed'} |")
    return rows


def findings(data, run):
    size = 512
    tiles = {(y, x): c(data.get((f"register_tile_{y}x{x}", size, size, size)), "tflops") for y in SIDES for x in SIDES}
    tiles = {k: v for k, v in tiles.items() if v}
    cpu = data.get(("cpu_single_core", 512, 512, 512))
    cpu_t = c(cpu, "tflops")
    lens = {L: c(data.get((f"register_length_{L}", size, size, size)), "tflops") for L in LENGTHS}
    rows = ["| finding | the study (" + STUDY_HARDWARE + ") | this run (" + run.context.get("gpu", "?") + ") |",
            "|---|---|---|"]
    best = max(tiles, key=tiles.get) if tiles else None
    rows.append(f"| best tile at 512³ | 8 × 8 | {best[0]} × {best[1]} ({tiles[best]:.3g} TFLOP/s) |" if best
                else "| best tile | 8 × 8 | — |")
    big = {(y, x): data.get((f"register_tile_{y}x{x}", 4096, 4096, 4096)) for y in SIDES for x in SIDES}
    big = {k: b for k, b in big.items() if b is not None and c(b, "tflops")}
    if big:
        bb = max(big, key=lambda k: c(big[k], "tflops"))
        frac = lib_fraction(data, f"register_tile_{bb[0]}x{bb[1]}", (4096, 4096, 4096))
        rows.append(f"| best tile at 4096³ (not in the study) | — | {bb[0]} × {bb[1]} ({c(big[bb], 'tflops'):.3g} "
                    f"TFLOP/s, {fmt(frac, '.2f')} of cuBLAS SGEMM's speed) |")
    slower = sorted(k for k, v in tiles.items() if cpu_t and v < cpu_t)
    rows.append(f"| tiles slower than one CPU core ({fmt(cpu_t)} TFLOP/s) | 32 × 32 | "
                f"{', '.join(f'{y}×{x}' for y, x in slower) if slower else 'none'} |")
    if all(lens.values()):
        peak_l = max(lens, key=lens.get)
        rows.append(f"| register inputs | better up to 64 + 64, ~4× slower at 128 + 128 | "
                    f"best at {2 * peak_l} + {2 * peak_l}; "
                    f"128 + 128 is {lens[peak_l] / lens[64]:.2f}× slower than the best |")
    return rows


def length_plot(data, run, out):
    """The register-length sweep's line plot, or nothing when the run has no length rows."""
    import matplotlib.pyplot as plt
    sizes = [s for s in (512, 4096) if any((f"register_length_{L}", s, s, s) in data for L in LENGTHS)]
    if not sizes:
        return []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for size, colour in zip(sizes, distinct_colours(len(sizes)), strict=True):
        pts = [(2 * L, c(data.get((f"register_length_{L}", size, size, size)), "tflops")) for L in LENGTHS]
        pts = [p for p in pts if p[1]]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=colour, label=f"{size}³")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("register inputs per side (2L + 2L at tile 2×2)")
    ax.set_ylabel("TFLOP/s (fp32)")
    ax.set_title("register length sweep", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    stamp(fig, run.context, "study: Intel GPU (oneAPI), 512³")
    fig.savefig(os.path.join(out, "matmul_length.png"), dpi=110)
    plt.close(fig)
    return ["matmul_length.png"]


def plots(data, run, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = []
    for size in (512, 4096):
        grid = [[c(data.get((f"register_tile_{y}x{x}", size, size, size)), "tflops") for x in SIDES] for y in SIDES]
        if not any(v for row in grid for v in row):
            continue
        fig, ax = plt.subplots(figsize=(6.5, 5.2))
        vals = [[v if v else float("nan") for v in row] for row in grid]
        im = ax.imshow(vals, cmap="viridis", origin="upper")
        ax.set_xticks(range(len(SIDES)), SIDES)
        ax.set_yticks(range(len(SIDES)), SIDES)
        ax.set_xlabel("tileX")
        ax.set_ylabel("tileY")
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                if v:
                    ax.text(j, i, f"{v:.2g}", ha="center", va="center", fontsize=7, color="white" if v < 0.6 * max(
                        x for r in grid for x in r if x) else "black")
        fig.colorbar(im, ax=ax, label="TFLOP/s")
        ax.set_title(f"register tiles, {size}³ fp32", fontsize=10)
        fig.tight_layout(rect=(0, 0.04, 1, 1))
        stamp(fig, run.context, "study: Intel GPU (oneAPI), 512³")
        name = f"matmul_tiles_{size}.png"
        fig.savefig(os.path.join(out, name), dpi=110)
        plt.close(fig)
        names.append(name)
    names += length_plot(data, run, out)
    ladder = [("naive", "naive")] + [(lbl, best_name(data, pfx)) for lbl, pfx in (
        ("best three-loop tile", "three_loop_"), ("best register tile", "register_tile_"),
        ("best register length", "register_length_"), ("best shared-memory tile", "shared_tile_"))] + [
        ("warp-tiled SGEMM", "warp_tiled_sgemm"), ("best tuned SIMT SGEMM", best_name(data, "tuned_sgemm_")),
        ("CUTLASS SIMT fp32", "cutlass_simt_f32"),
        ("cuBLAS SGEMM", "cublas_sgemm"), ("cuBLAS TF32", "cublas_tf32"),
        ("cuBLASLt TF32, best of 8", "cublaslt_tf32_best"),
        ("best mma.sync FP16", best_name(data, "mma_f16")), ("CUTLASS FP16 (mma.sync)", "cutlass_f16"),
        ("best wgmma FP16", best_name(data, "wgmma_f16")),
        ("cuBLAS FP16", "cublas_f16"), ("cuBLASLt FP16, best of 8", "cublaslt_f16_best")]
    pts = [(lbl, n, c(data.get((n, 4096, 4096, 4096)), "tflops")) for lbl, n in ladder if n]
    pts = [p for p in pts if p[2]]
    if pts:
        fig, ax = plt.subplots(figsize=(8, 5))
        ax.barh(range(len(pts)), [p[2] for p in pts], color=distinct_colours(len(pts)))
        ax.set_yticks(range(len(pts)), [f"{p[0]} ({p[1]})" if p[0] != p[1] else p[0] for p in pts], fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        for i, p in enumerate(pts):
            ax.text(p[2], i, f" {p[2]:.3g}", va="center", fontsize=7)
        ax.set_xlabel("TFLOP/s at 4096³ (log)")
        ax.set_title("from the study's naive kernel to the libraries", fontsize=10)
        fig.tight_layout(rect=(0, 0.04, 1, 1))
        stamp(fig, run.context, "fp32 rows fp32 FMA; TF32/FP16 rows tensor cores")
        fig.savefig(os.path.join(out, "matmul_ladder.png"), dpi=110)
        plt.close(fig)
        names.append("matmul_ladder.png")
    return names


def best_name(data, prefix, size=4096):
    cands = [(c(b, "tflops"), n) for (n, m, nn, k), b in data.items()
             if n.startswith(prefix) and (m, nn, k) == (size, size, size) and c(b, "tflops")]
    return max(cands)[1] if cands else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    try:
        run = load(a.bench)
    except BenchError as e:
        sys.exit(f"matmul_report.py: error: {e}")
    data = collect(run)
    if not data:
        sys.exit(f"matmul_report.py: error: {a.bench} has no matmul/ fixtures")
    os.makedirs(a.out, exist_ok=True)
    figs = plots(data, run, a.out)
    md = ["# Tiled matrix multiplication: the study beside this run", "",
          f"Source: `{a.bench}` ({run.context.get('gpu', '?')}, commit {run.context.get('distancies_commit', '?')}, "
          f"{run.context.get('date', '?')}). The study: {STUDY_HARDWARE}.", "", "## The study's findings", ""]
    md += findings(data, run) + [""]
    md += [f"![{f}]({f})" for f in figs] + [""]
    for size in (512, 4096):
        md += sweep_table(data, size) + [""]
    md += anchors_table(data) + [""]
    md += lt_choices_table(data) + [""]
    if beyond_names(data):
        md += ["## Beyond the seed", ""] + goals(data) + [""] + beyond_tables(data) + [""]
    md += context_tables(data, run.context)
    write_text(os.path.join(a.out, "matmul.md"), "\n".join(md) + "\n")
    print(f"wrote {os.path.join(a.out, 'matmul.md')} and {len(figs)} figures")


if __name__ == "__main__":
    main()
