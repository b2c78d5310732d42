"""scripts/matmul_report.py on a made-up run: the findings, the sweep tables, the figures."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
    # Beyond the seed: a hand-written fp32 kernel at 0.8 of cuBLAS SGEMM, a tensor-core kernel at
    # 0.5 of cuBLAS FP16 (fractions from the fixtures' times), and CUTLASS.
    shape = "M:4096/N:4096/K:4096"
    benches += [fixture(f"matmul/cublas_sgemm/{shape}", 2.0, tflops=68.7, input_bits=32),
                fixture(f"matmul/cublas_f16/{shape}", 0.2, tflops=687, input_bits=16),
                fixture(f"matmul/warp_tiled_sgemm/{shape}", 2.5, tflops=55, input_bits=32, block_threads=256,
                        registers=128, spill_bytes=0, shared_bytes=16384, blocks_per_sm=2, occupancy=0.25),
                fixture(f"matmul/mma_f16_128x128/{shape}", 0.4, tflops=344, input_bits=16, block_threads=128,
                        registers=230, spill_bytes=0, shared_bytes=75776, blocks_per_sm=2, occupancy=0.12),
                fixture(f"matmul/cutlass_f16/{shape}", 0.3, tflops=458, input_bits=16)]
    run = tmp_path / "m.json"
    run.write_text(json.dumps({"context": {"gpu": "Test GPU", "distancies_commit": "abc", "date": "2026-11-23"},
                               "benchmarks": benches}))
    out = tmp_path / "out"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "matmul_report.py"), str(run), "--out", str(out)], check=True)
    md = (out / "matmul.md").read_text()
    assert "| best tile at 512³ | 8 × 8 | 8 × 8 (10 TFLOP/s) |" in md
    assert "| tiles slower than one CPU core (0.0013 TFLOP/s) | 32 × 32 | 32×32 |" in md
    assert "best at 2 + 2; 128 + 128 is 4.00× slower than the best" in md
    assert "| best hand-written fp32 kernel ≥ 70% of cuBLAS SGEMM | warp_tiled_sgemm | 55 | 0.800 | met |" in md
    assert "| best tensor-core kernel (FP16 inputs, fp32 sums) ≥ 60% of cuBLAS FP16 | mma_f16_128x128 | 344 | 0.500 | missed |" in md
    assert "| mma_f16_128x128 | fp16 | 128 | 230 | 0 | 75776 | 2 | 0.12 |" in md
    assert "| cutlass_f16 | 458 (0.67) |" in md
    for png in ("matmul_tiles_512.png", "matmul_tiles_4096.png", "matmul_length.png", "matmul_ladder.png"):
        assert (out / png).stat().st_size > 5000, png
