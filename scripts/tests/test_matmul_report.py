"""scripts/reports/matmul_report.py on a made-up run: the findings, the sweep tables, the figures."""
import json

from scripts.lib.bench_json import load
from scripts.reports import matmul_report as mr
from scripts.tests import tool


def fixture(name, ms, **counters):
    b = {"name": name + "/min_time:0.050/manual_time", "run_name": name + "/min_time:0.050/manual_time",
         "run_type": "iteration", "real_time": ms, "time_unit": "ms"}
    b.update(counters)
    return b


def test_report_from_a_made_up_run(tmp_path):
    benches = [fixture("matmul/cpu_single_core/M:512/N:512/K:512", 200.0, tflops=0.0013)]
    for y in (1, 2, 4, 8, 16, 32):
        for x in (1, 2, 4, 8, 16, 32):
            t = 10.0 if (y, x) == (8, 8) else 0.001 if (y, x) == (32, 32) else 1.0
            for size in (512, 4096):
                benches.append(fixture(f"matmul/register_tile_{y}x{x}/M:{size}/N:{size}/K:{size}", 1.0, tflops=t,
                                       registers=64, spill_bytes=0, occupancy=0.5, cublas_fraction=t / 50))
    for L in (1, 2, 4, 8, 16, 32, 64):
        benches.append(fixture(f"matmul/register_length_{L}/M:512/N:512/K:512", 1.0, tflops=4.0 if L < 64 else 1.0,
                               registers=32 * L, spill_bytes=0 if L < 64 else 100, occupancy=0.5))
    # Beyond the seed: a hand-written fp32 kernel at 0.8 of cuBLAS SGEMM and a tuned one at 0.96, a
    # tensor-core kernel at 0.5 of cuBLAS FP16 (fractions from the fixtures' times), and CUTLASS.
    shape = "M:4096/N:4096/K:4096"
    benches += [fixture(f"matmul/cublas_sgemm/{shape}", 2.0, tflops=68.7, input_bits=32),
                fixture(f"matmul/cublas_f16/{shape}", 0.2, tflops=687, input_bits=16),
                fixture(f"matmul/warp_tiled_sgemm/{shape}", 2.5, tflops=55, input_bits=32, block_threads=256,
                        registers=128, spill_bytes=0, shared_bytes=16384, blocks_per_sm=2, occupancy=0.25),
                fixture(f"matmul/tuned_sgemm_128x256x16_w64x64_t8x16_s3/{shape}", 2.08333, tflops=66, input_bits=32,
                        block_threads=256, registers=219, spill_bytes=0, shared_bytes=74496, blocks_per_sm=1,
                        occupancy=0.12),
                fixture(f"matmul/mma_f16_128x128/{shape}", 0.4, tflops=344, input_bits=16, block_threads=128,
                        registers=230, spill_bytes=0, shared_bytes=75776, blocks_per_sm=2, occupancy=0.12),
                fixture(f"matmul/cutlass_f16/{shape}", 0.3, tflops=458, input_bits=16)]
    run = tmp_path / "m.json"
    run.write_text(json.dumps({"context": {"gpu": "Test GPU", "distancies_commit": "abc", "date": "2026-11-23"},
                               "benchmarks": benches}))
    out = tmp_path / "out"
    tool.run("scripts.reports.matmul_report", str(run), "--out", str(out), check=True)
    md = (out / "matmul.md").read_text()
    assert "| best tile at 512³ | 8 × 8 | 8 × 8 (10 TFLOP/s) |" in md
    assert "| tiles slower than one CPU core (0.0013 TFLOP/s) | 32 × 32 | 32×32 |" in md
    assert "best at 2 + 2; 128 + 128 is 4.00× slower than the best" in md
    tuned = "tuned_sgemm_128x256x16_w64x64_t8x16_s3"
    assert f"| best hand-written fp32 kernel ≥ 70% of the best cuBLAS fp32 | {tuned} | 66 | 0.960 | met |" in md
    assert f"| best hand-written fp32 kernel ≥ 95% of the best cuBLAS fp32 | {tuned} | 66 | 0.960 | met |" in md
    assert f"| {tuned} | fp32 | 256 | 219 | 0 | 74496 | 1 | 0.12 |" in md
    assert "| warp_tiled_sgemm | 55 (0.80) |" in md
    assert mr.best_name(mr.collect(load(str(run))), "tuned_sgemm_") == tuned  # the ladder's SIMT rung
    assert ("| best tensor-core kernel (FP16 inputs, fp32 sums) ≥ 60% of the best cuBLAS FP16 | mma_f16_128x128 "
            "| 344 | 0.500 | missed |") in md
    assert "| mma_f16_128x128 | fp16 | 128 | 230 | 0 | 75776 | 2 | 0.12 |" in md
    assert "| cutlass_f16 | 458 (0.67) |" in md
    for png in ("matmul_tiles_512.png", "matmul_tiles_4096.png", "matmul_length.png", "matmul_ladder.png"):
        assert (out / png).stat().st_size > 5000, png


def test_every_row_against_the_best_cublas_and_the_dense_peak_at_its_clock(tmp_path):
    """A made-up 4096^3 run: cuBLASLt's best FP16 (0.16 ms) beats cublasGemmEx (0.2 ms), so every
    FP16 row is measured against it; the fp16-C row is not a reference (the kernels write fp32);
    the peak uses each row's own sm_clock_mhz (132 SMs x 4,096 FLOP x 1,500 MHz = 811.008 TFLOP/s)."""
    shape = "M:4096/N:4096/K:4096"
    flops = 2.0 * 4096 ** 3
    def row(name, ms, bits, clock, out=32, **more):
        return fixture(f"matmul/{name}/{shape}", ms, tflops=flops / (ms * 1e9), input_bits=bits, output_bits=out,
                       sm_clock_mhz=clock, **more)
    benches = [row("cublas_f16", 0.2, 16, 1500), row("cublaslt_f16_best", 0.16, 16, 1500, algo_rank=3, algo_id=66,
                                                         k_run=4096, algo_candidates=8, setup_best_ms=0.161),
               row("cublaslt_f16_out16_best", 0.1, 16, 1500, out=16), row("mma_f16_128x128", 0.32, 16, 1200),
               row("cublas_tf32", 0.4, 19, 1800), row("cublaslt_tf32_best", 0.5, 19, 1800),
               fixture(f"matmul/cublas_sgemm/{shape}", 2.0, tflops=flops / 2e9, input_bits=32)]  # no clock
    doc = {"context": {"gpu": "Test GPU", "gpu_sm_count": "132", "gpu_compute_capability": "9.0",
                       "gpu_max_sm_clock_mhz": "1980"}, "benchmarks": benches}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    run = load(str(path))
    data = mr.collect(run)
    key = ("mma_f16_128x128", 4096, 4096, 4096)
    assert mr.best_cublas(data, key[1:], 16)[0] == "cublaslt_f16_best"
    frac, best, peak, clock, assumed = mr.row_context(data, key, run.context)
    assert best == "cublaslt_f16_best" and abs(frac - 0.5) < 1e-12
    assert clock == 1200 and not assumed
    assert abs(peak - flops / 0.32e9 / (132 * 4096 * 1200e6 / 1e12)) < 1e-9
    assert abs(mr.dense_peak_tflops(16, 132, 1500, 9) - 811.008) < 1e-9
    assert mr.dense_peak_tflops(16, 132, 1500, 8) is None  # no table for that architecture
    # The fp16-C row runs faster than its reference: 160 % of the best fp32-C cuBLAS.
    assert abs(mr.row_context(data, ("cublaslt_f16_out16_best", 4096, 4096, 4096), run.context)[0] - 1.6) < 1e-12
    # TF32: cublasGemmEx beats cuBLASLt's pick here, so it is the reference.
    assert mr.best_cublas(data, key[1:], 19)[0] == "cublas_tf32"
    # No sm_clock_mhz: the card's maximum clock, flagged (132 x 256 x 1,980 MHz = 66.908 TFLOP/s).
    frac, best, peak, clock, assumed = mr.row_context(data, ("cublas_sgemm", 4096, 4096, 4096), run.context)
    assert assumed and clock == 1980 and frac == 1.0 and abs(peak - flops / 2e9 / 66.90816) < 1e-9
    out = tmp_path / "out"
    tool.run("scripts.reports.matmul_report", str(path), "--out", str(out), check=True)
    md = (out / "matmul.md").read_text()
    assert "| mma_f16_128x128 | FP16 | fp32 | 429 | 1200 | 50.0 % (cublaslt_f16_best) | 66.2 % |" in md
    assert "| cublaslt_f16_out16_best | FP16 | fp16 | 1.37e+03 | 1500 | 160.0 % (cublaslt_f16_best) |" in md
    assert "| cublas_sgemm | fp32 | fp32 | 68.7 | 1980* | 100.0 % | 102.7 % |" in md
    assert "| cublaslt_f16_best | 4096×4096×4096 | 3 | 66 |" in md
