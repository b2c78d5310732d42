"""scripts/gpu_check.sh with a stand-in portable folder: --lane=I/N splits the test binaries, the
sanitizer runs and the benchmark so that N lanes run each exactly once, longest first to the least
loaded lane (--plan prints it), and a bad lane is refused."""
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "gpu_check.sh")

FAKE_TEST = """#!/bin/sh
echo "$(basename "$0") $*" >> "$RAN"
echo "[  PASSED  ] 1 test."
"""
FAKE_TOOL = """#!/bin/sh
echo "$*" >> "$RAN"
echo "========= ERROR SUMMARY: 0 errors"
"""
FAKE_BENCH = """#!/bin/sh
echo "bench" >> "$RAN"
"""
TESTS = ["test_a", "test_b", "test_c", "test_gpu_variants", "test_batch"]


def make_portable(tmp_path):
    root = tmp_path / "portable"
    root.mkdir()
    (root / "gpu_env.sh").write_text("true\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for path, text in [(root / t, FAKE_TEST) for t in TESTS] + [
            (root / "distancies-bench", FAKE_BENCH), (bin_dir / "compute-sanitizer", FAKE_TOOL),
            (bin_dir / "nvidia-smi", "#!/bin/sh\necho name\n")]:
        path.write_text(text)
        path.chmod(0o755)
    return root, bin_dir


def run(tmp_path, root, bin_dir, *args, ran="ran.txt"):
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", OUT=str(tmp_path / "out"),
               RAN=str(tmp_path / ran))
    return subprocess.run(["bash", SCRIPT, str(root), *args], env=env, capture_output=True, text=True)


def lines(path):
    return path.read_text().splitlines() if path.exists() else []


def test_lanes_split_every_job_once(tmp_path):
    root, bin_dir = make_portable(tmp_path)
    whole = run(tmp_path, root, bin_dir, ran="whole.txt")
    assert whole.returncode == 0, whole.stderr
    every = lines(tmp_path / "whole.txt")
    # Five binaries, the four tools over the eight sanitized binaries (two of them packed here:
    # the tool stand-in runs whatever it is given), and the benchmark.
    assert len(every) == len(TESTS) + 4 * 8 + 1
    parts = []
    for i in range(3):
        r = run(tmp_path, root, bin_dir, f"--lane={i}/3", ran=f"lane{i}.txt")
        assert r.returncode == 0, r.stderr
        parts.append(lines(tmp_path / f"lane{i}.txt"))
    assert sorted(sum(parts, [])) == sorted(every)
    # The plan the lanes followed: every job in one lane, the longest first to the least loaded,
    # so no lane ends more than one job's seconds after the mean.
    plan = run(tmp_path, root, bin_dir, "--lane=0/3", "--plan", ran="plan.txt")
    assert plan.returncode == 0, plan.stderr
    assert not (tmp_path / "plan.txt").exists(), "--plan runs nothing"
    rows = [line.split(" ", 2) for line in plan.stdout.splitlines()]
    assert len(rows) == len(every)
    loads = [sum(int(s) for lane, s, _ in rows if lane == str(i)) for i in range(3)]
    assert max(loads) <= sum(loads) / 3 + max(int(s) for _, s, _ in rows), loads
    for i in range(3):
        assert sum(1 for lane, _, _ in rows if lane == str(i)) == len(parts[i])


def test_a_bad_lane_is_refused(tmp_path):
    root, bin_dir = make_portable(tmp_path)
    for bad in ("--lane=3/3", "--lane=1/0", "--lane=x/2", "--lanes"):
        r = run(tmp_path, root, bin_dir, bad)
        assert r.returncode == 2, (bad, r.stdout, r.stderr)
        assert r.stderr.startswith("gpu_check.sh: "), r.stderr
        assert not (tmp_path / "ran.txt").exists(), bad
