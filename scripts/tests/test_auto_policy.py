"""scripts/codegen/auto_policy.py: the planner's table from runs (a later run's median wins), its errors,
and --check (batch_auto against the best pipeline of the same runs, 5 % tolerance)."""
import json
import os

from scripts.tests import tool

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "scripts.codegen.auto_policy"
CTX = {"gpu": "Test GPU", "distancies_commit": "0123456789ab"}


def median(name, ms, label=None):
    b = {"name": name + "/manual_time_median", "run_name": name + "/manual_time", "run_type": "aggregate",
         "aggregate_name": "median", "real_time": ms, "time_unit": "ms"}
    if label:
        b["label"] = label
    return b


def write(tmp_path, fname, benches):
    p = tmp_path / fname
    p.write_text(json.dumps({"context": CTX, "benchmarks": benches}))
    return str(p)


def one_query():
    return [median("pipeline/fused", 0.9), median("pipeline/fused_f16", 0.5), median("floor/read_model", 0.87),
            median("floor/read_model_16bit", 0.45)]


def run(*args):
    return tool.run(SCRIPT, *args, capture_output=True, text=True)


def test_table_from_runs_later_median_wins(tmp_path):
    first = write(tmp_path, "a.json",
                  one_query() + [median("batch/p_one/batch:1", 2.0), median("batch/p_two/batch:1", 3.0)])
    second = write(tmp_path, "b.json", [median("batch/p_two/batch:1", 1.5), median("batch/p_two/batch:16", 4.0)])
    out = tmp_path / "policy.inc"
    p = run(first, second, "--out", str(out))
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert '{"p_one", 1, 2},' in text and '{"p_two", 1, 1.5},' in text and '{"p_two", 16, 4},' in text
    assert "kOneQuery{0.9, 0.5, 0.87, 0.45}" in text and 'kPolicyMeasuredOn = "Test GPU"' in text


def test_table_needs_the_one_query_figures(tmp_path):
    run_json = write(tmp_path, "a.json", [median("batch/p/batch:1", 1.0)])
    p = run(run_json, "--out", str(tmp_path / "x.inc"))
    assert p.returncode != 0 and "has no median for pipeline/fused" in p.stderr
    assert not (tmp_path / "x.inc").exists()


def test_check_holds_auto_to_five_percent(tmp_path):
    good = write(tmp_path, "good.json", [
        median("batch/fast/batch:16", 1.00), median("batch/slow/batch:16", 2.0),
        median("batch_auto/batch:16", 1.04, label="fast"),
        median("batch/fast/batch:1024", 6.0), median("batch_auto/batch:1024", 6.1, label="fast")])
    p = run("--check", good)
    assert p.returncode == 0, p.stderr
    assert "| 16 | 1.040 | `fast` | `fast` | 1.000 | 1.040 |" in p.stdout
    assert "| 1024 | 6.100 | `fast` | `fast` | 6.000 | 1.017 |" in p.stdout
    bad = write(tmp_path, "bad.json", [
        median("batch/fast/batch:16", 1.0), median("batch/slow/batch:16", 1.2),
        median("batch_auto/batch:16", 1.2, label="slow")])
    p = run("--check", bad)
    assert p.returncode == 1 and "more than 5% slower" in p.stderr
    assert "| 16 | 1.200 | `slow` | `fast` | 1.000 | 1.200 |" in p.stdout


def test_check_without_auto_figures_is_one_error(tmp_path):
    p = run("--check", write(tmp_path, "a.json", [median("batch/fast/batch:16", 1.0)]))
    assert p.returncode != 0 and "has no batch_auto/batch:B" in p.stderr
