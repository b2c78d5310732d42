"""scripts/device_ab.sh with a stand-in pack: run passes the environment and the filter to the
binary and keeps its console and JSON, gtest keeps the log and its verdict, save tars the folder."""
import os
import subprocess
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
HELPER = os.path.join(os.path.dirname(HERE), "device_ab.sh")

FAKE_BENCH = """#!/bin/sh
out=""
for a in "$@"; do case "$a" in --benchmark_out=*) out="${a#--benchmark_out=}";; esac; done
echo '{"knob": "'"${KNOB:-unset}"'"}' > "$out"
echo "batch/x/batch:1024/manual_time_median 2.88 ms 2.9 ms 3 fallbacks=0 args=$*"
"""
FAKE_TESTS = """#!/bin/sh
echo "filter $1 knob ${KNOB:-unset}"
echo "[  PASSED  ] 3 tests."
"""


def make_pack(tmp_path, name):
    root = tmp_path / "packsrc" / name / "portable"
    root.mkdir(parents=True)
    (root / "gpu_env.sh").write_text("export FAKE_GPU_ENV=1\n")
    for exe, text in (("distancies-bench", FAKE_BENCH), ("test_batch", FAKE_TESTS)):
        (root / exe).write_text(text)
        (root / exe).chmod(0o755)
    pack = tmp_path / f"{name}.tgz"
    with tarfile.open(pack, "w:gz") as t:
        t.add(root, arcname="portable")
    return pack


def test_run_gtest_and_save(tmp_path):
    pack = make_pack(tmp_path, "new")
    out = tmp_path / "out"
    out.mkdir()
    label = "o99"
    script = f""". {HELPER} {label} {pack}
run base $NEW X=1 '^batch/x/'
run knobbed $NEW KNOB=7 '^batch/x/'
gtest t 30 '*Gemm*' KNOB=3
echo "env=$FAKE_GPU_ENV"
"""
    root = tmp_path / "root"
    env = {**os.environ, "OUT": str(out), "AB_ROOT": str(root)}
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert "== base rc=0" in p.stdout and "manual_time_median 2.88 ms" in p.stdout
    assert "1 fallbacks=0" in p.stdout and "env=1" in p.stdout
    assert "== t" in p.stdout and "PASSED" in p.stdout and "rc=0" in p.stdout
    folder = root / label
    assert open(f"{folder}/knobbed.json").read().strip() == '{"knob": "7"}'
    assert "--benchmark_filter=^batch/x/" in open(f"{folder}/base.txt").read()
    assert "filter --gtest_filter=*Gemm* knob 3" in open(f"{folder}/t.log").read()
    with tarfile.open(out / f"{label}.tgz") as t:
        names = set(t.getnames())
    assert {f"{label}/base.txt", f"{label}/knobbed.json", f"{label}/t.log"} <= names
    assert (root / "pp" / "portable" / "gpu_env.sh").exists()
