"""scripts/ci/check_wgmma_sass.py on SASS as cuobjdump prints it: the walk's pipelined mainloop passes,
the serialised one (C7520: each HGMMA waited on at once, as in run 34) fails."""
import os

from scripts.tests import tool

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "scripts.ci.check_wgmma_sass"


def sass(name, body):
    lines = [f"\t\tFunction : {name}"]
    for n, text in enumerate(body):
        lines.append(f"        /*{16 * n:04x}*/                   {text} ;   /* 0x000000000000 */")
        lines.append("                                                                   /* 0x000000000000 */")
    return "\n".join(lines) + "\n"


PIPELINED = ["WARPGROUP.ARRIVE", "HGMMA.64x256x16.F32 R24, gdesc[UR12], R24, UP0",
             "HGMMA.64x256x16.F32 R24, gdesc[UR12], R24", "HGMMA.64x256x16.F32 R24, gdesc[UR12], R24, gsb0",
             "WARPGROUP.DEPBAR.LE gsb0, 0x1", "IADD3 R1, R1, 0x1, RZ", "WARPGROUP.DEPBAR.LE gsb0, 0x0"]
SERIALISED = ["WARPGROUP.ARRIVE", "HGMMA.64x256x16.F32 R24, gdesc[UR12], R24, UP0, gsb0",
              "WARPGROUP.DEPBAR.LE gsb0, 0x0", "WARPGROUP.ARRIVE", "HGMMA.64x256x16.F32 R24, gdesc[UR12], R24, gsb0",
              "WARPGROUP.DEPBAR.LE gsb0, 0x0"]


def run(tmp_path, text, *args):
    path = tmp_path / "dump.txt"
    path.write_text(text)
    return tool.run(SCRIPT, "--sass", str(path), *args, capture_output=True, text=True)


def test_pipelined_passes_and_serialised_fails(tmp_path):
    ok = sass("_Z19wgmma_filter_kernelILi256E", PIPELINED) + sass("_Z5otherv", SERIALISED)
    p = run(tmp_path, ok)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "pipelined" in p.stdout and "3 HGMMAs" in p.stdout and "other" not in p.stdout
    bad = ok + sass("_Z19wgmma_filter_kernelILi128E", SERIALISED)
    p = run(tmp_path, bad)
    assert p.returncode == 1
    assert "SERIALISED _Z19wgmma_filter_kernelILi128E" in p.stdout and "waited on at once" in p.stdout


def test_no_matching_function_is_an_error_not_a_pass(tmp_path):
    p = run(tmp_path, sass("_Z5otherv", PIPELINED))
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    p = run(tmp_path, sass("_Z5otherv", PIPELINED), "--pattern", "other")
    assert p.returncode == 0


def test_require_and_forbid_rules(tmp_path):
    multicast = sass("_Z5c2_kernelv", PIPELINED + ["UTMALDG.2D.MULTICAST [UR12], [UR18], UR4"])
    plain = sass("_Z5c2_plainv", PIPELINED + ["UTMALDG.2D [UR12], [UR18]"])
    rule = ["--pattern", "c2_", "--require", r"UTMALDG\.2D\.MULTICAST", "--forbid", r"\b(STL|LDL)\b"]
    p = run(tmp_path, multicast, *rule)
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(tmp_path, multicast + plain, *rule)
    assert p.returncode == 1 and "BROKEN     _Z5c2_plainv: rule: no instruction matches" in p.stdout
    spilled = sass("_Z5c2_spillv", PIPELINED + ["UTMALDG.2D.MULTICAST [UR12], [UR18], UR4", "STL [R1], R2"])
    p = run(tmp_path, spilled, *rule)
    assert p.returncode == 1 and "forbidden" in p.stdout and "STL [R1], R2" in p.stdout
