"""scripts/analysis/ncu_sass_stalls.py: the top instructions and the regions' shares from a source page."""
import os

from scripts.tests import tool

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "scripts.analysis.ncu_sass_stalls"

CSV = ('"Kernel Name","k"\n'
       '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_wait","stall_barrier",'
       '"stall_wait (Not Issued)"\n') + '''"0x0","FMUL R1, R2, R3","10","100","10","0","9"
"0x10","WARPGROUP.DEPBAR.LE gsb0, 0x0","60","100","0","60","60"
"0x20","BRA 0x0","30","50","20","10","0"
'''


def run(tmp_path, *args):
    path = tmp_path / "sass.csv"
    path.write_text(CSV)
    return tool.run(SCRIPT, str(path), *args, capture_output=True, text=True)


def test_top_and_regions(tmp_path):
    p = run(tmp_path, "--top", "2", "--region", "first:0:2", "--region", "last:2:3")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "3 instructions, 100 samples"
    assert "60.00%" in lines[1] and "DEPBAR" in lines[1] and "barrier:60.0" in lines[1]
    assert "30.00%" in lines[2] and "wait:20.0 barrier:10.0" in lines[2]
    assert lines[3].split()[:2] == ["first", "70.0%"] and "barrier:60.0 wait:10.0" in lines[3]
    assert lines[4].split()[:2] == ["last", "30.0%"]


def test_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    p = tool.run(SCRIPT, str(bad), capture_output=True, text=True)
    assert p.returncode != 0 and p.stderr.count("\n") == 1
    p = run(tmp_path, "--region", "oops")
    assert p.returncode != 0 and "NAME:FIRST:LAST" in p.stderr
