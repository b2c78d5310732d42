"""scripts/reports/dashboard.py: step detection, commit order, GPUs kept apart, and the built site opened
in a real headless Chromium (Debian's chromium + chromium-driver, driven by Selenium): every
page loads with no console errors and each chart holds the points of the history made here.

DASHBOARD_SCREENSHOTS=DIR also builds the site of the committed runs and saves its screenshots
there (docs/dashboard/ holds the committed ones).
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scripts.reports import dashboard

ROOT = Path(__file__).resolve().parents[2]


def bench(name, reps):
    out = [{"name": f"{name}/manual_time", "run_name": f"{name}/manual_time", "run_type": "iteration",
            "real_time": ms, "time_unit": "ms", "floor_ratio": 1.0 + ms / 100} for ms in reps]
    med = sorted(reps)[len(reps) // 2]
    out.append({"name": f"{name}/manual_time_median", "run_name": f"{name}/manual_time", "run_type": "aggregate",
                "aggregate_name": "median", "real_time": med, "time_unit": "ms"})
    return out


def write_run(path, gpu, commit, date, fixtures):
    doc = {"context": {"gpu": gpu, "distancies_commit": commit, "date": date},
           "benchmarks": [b for name, reps in fixtures.items() for b in bench(name, reps)]}
    path.write_text(json.dumps(doc))


@pytest.fixture
def history(tmp_path):
    """A git repository of four commits and runs on two GPUs: pipeline/fused steps at the third
    commit on GPU A; GPU B ran the first and the last commit only."""
    repo = tmp_path / "repo"
    repo.mkdir()
    def git(*a):
        return subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, text=True).stdout
    git("init", "-q")
    commits = []
    for i in range(4):
        (repo / "f").write_text(str(i))
        git("add", "f")
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", f"c{i}")
        commits.append(git("rev-parse", "--short=12", "HEAD").strip())
    runs = tmp_path / "results"
    runs.mkdir()
    times = [[1.00, 1.01, 0.99], [1.00, 1.02, 1.00], [1.30, 1.31, 1.29], [1.30, 1.30, 1.31]]
    for i, c in enumerate(commits):
        write_run(runs / f"a-{i}.json", "GPU A", c + ("-dirty" if i == 1 else ""), f"2026-11-0{i + 1}T00:00:00",
                  {"pipeline/fused": times[i], "floor/read_model": [0.9, 0.9, 0.91], "moments/one_pass/rows:8": [0.5]})
    for i in (0, 3):
        write_run(runs / f"b-{i}.json", "GPU B", commits[i], f"2026-11-0{i + 1}T01:00:00",
                  {"pipeline/fused": [0.5, 0.51, 0.49]})
    (runs / "not-a-run.json").write_text('{"something": 1}')
    return repo, runs, commits


def test_steps_are_found_beyond_the_noise_only():
    P = dashboard.Point
    pts = [("a", P(1.0, 0.99, 1.01, 3)), ("b", P(1.02, 1.0, 1.04, 3)), ("c", P(1.3, 1.29, 1.31, 3)),
           ("d", P(1.25, 1.0, 1.5, 3))]
    assert dashboard.detect_steps(pts) == [2]  # b is within a's noise; d's own spread covers the move


def test_steps_are_told_apart_by_direction():
    """A synthetic history: 1.0 -> 1.3 ms is a regression, 1.3 -> 0.8 ms an improvement; for a
    higher-is-better counter the same moves swap."""
    P = dashboard.Point
    pts = [("a", P(1.0, 0.99, 1.01, 3)), ("b", P(1.3, 1.29, 1.31, 3)), ("c", P(0.8, 0.79, 0.81, 3))]
    steps = dashboard.detect_steps(pts)
    assert steps == [1, 2]
    kinds = [dashboard.classify_step(pts[s - 1][1].median, pts[s][1].median) for s in steps]
    assert kinds == ["regression", "improvement"]
    assert dashboard.classify_step(1.0, 1.3, higher_is_better=True) == "improvement"
    assert dashboard.classify_step(1.3, 0.8, higher_is_better=True) == "regression"
    traces = dashboard.step_traces("G", pts, steps)
    style = {t["name"]: (t["marker"]["color"], t["marker"]["symbol"], t["x"]) for t in traces}
    assert style == {"\u25b2 regression (G)": ("#D55E00", "triangle-up", ["b"]),
                     "\u25bc improvement (G)": ("#0072B2", "triangle-down", ["c"])}
    assert "+30.0 %" in traces[0]["text"][0] and "-38.5 %" in traces[1]["text"][0]
    html = dashboard.steps_html([("f/x", "G", "a", "b", 1.0, 1.3, "regression"),
                                 ("f/x", "G", "b", "c", 1.3, 0.8, "improvement")])
    assert html.index("<h2>Regressions (1)") < html.index("<h2>Improvements (1)")
    assert "(+30.0 %)" in html and "(-38.5 %)" in html


def test_a_data_family_is_its_own_series(tmp_path):
    def run(family, ms):
        doc = {"context": {"gpu": "GPU X", "distancies_commit": "abc", "model_family": family},
               "benchmarks": [{"name": "batch/p/batch:16", "run_type": "iteration", "real_time": ms,
                               "time_unit": "ms"}]}
        path = tmp_path / f"{family.replace(':', '-')}.json"
        path.write_text(json.dumps(doc))
        return dashboard.load_run(path)

    iid, aniso = run("iid", 1.0), run("aniso:0.95", 12.0)
    assert iid.device == "GPU X"
    assert aniso.device == "GPU X · aniso:0.95"


def test_runs_follow_git_order_and_gpus_stay_apart(history):
    repo, runs, commits = history
    ordered = dashboard.collect([runs], dashboard.commit_order(repo))
    assert len(ordered) == 6  # the JSON that is not a run is left out
    a = [r for r in ordered if r.device == "GPU A"]
    assert [dashboard.short(r.commit) for r in a] == [c[:7] for c in commits]
    s = dashboard.series(ordered)
    assert set(s["pipeline"]["pipeline/fused"]) == {"GPU A", "GPU B"}
    assert len(s["pipeline"]["pipeline/fused"]["GPU B"]) == 2


def chromium_driver():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -r scripts/requirements.txt)")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        pytest.skip("no chromium / chromedriver (apt-get install chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1600",
              "--allow-file-access-from-files"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=opts)


def open_page(drv, page):
    drv.get(page.resolve().as_uri())
    severe = [e for e in drv.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, f"{page.name}: console errors {severe}"


def test_site_in_a_real_browser(history, tmp_path):
    repo, runs, commits = history
    site = tmp_path / "site"
    assert dashboard.main(["--results", str(runs), "--out", str(site), "--repo", str(repo), "--no-tables"]) == 0
    drv = chromium_driver()
    try:
        for page in sorted(site.glob("*.html")):
            open_page(drv, page)
        open_page(drv, site / "family-pipeline.html")
        counts = drv.execute_script(
            "return Object.fromEntries(document.getElementById('chart-0').data.map(t => [t.name, t.x.length]));")
        assert counts == {"GPU A": 4, "GPU B": 2, "\u25b2 regression (GPU A)": 1}
        step = drv.find_element("css selector", "#regressions li.step.regression").text
        assert f"at {commits[2][:7]}" in step and "pipeline/fused on GPU A" in step and "+30.0 %" in step, step
        assert not drv.find_elements("css selector", "li.step.improvement")
        drv.save_screenshot(str(tmp_path / "pipeline.png"))
        assert (tmp_path / "pipeline.png").stat().st_size > 10_000
        # The GPU filter hides GPU B's line.
        drv.find_element("css selector", "input.gpu[value='GPU B']").click()
        visible = drv.execute_script("return document.getElementById('chart-0').data.map(t => t.visible);")
        assert visible == [True, True, False]
        open_page(drv, site / "index.html")
        rows = drv.execute_script("return [...document.querySelectorAll('#families tr[data-study]')]"
                                  ".map(r => [...r.cells].map(c => c.textContent));")
        assert len(rows) == 3  # floor, moments, pipeline
        pipeline = next(r for r in rows if r[0] == "pipeline")
        assert pipeline[2] == commits[3][:7] and pipeline[3] == "1"  # latest commit with a run, fixtures
        assert "regression: pipeline/fused" in pipeline[5] and pipeline[6] == "+30.0 %"
        assert pipeline[7] == commits[2][:7]
    finally:
        drv.quit()


@pytest.mark.skipif(not os.environ.get("DASHBOARD_SCREENSHOTS"), reason="set DASHBOARD_SCREENSHOTS=DIR to refresh")
def test_screenshots_of_the_committed_runs(tmp_path):
    out = Path(os.environ["DASHBOARD_SCREENSHOTS"])
    out.mkdir(parents=True, exist_ok=True)
    site = tmp_path / "site"
    assert dashboard.main(["--results", str(ROOT / "results"), "--out", str(site), "--repo", str(ROOT)]) == 0
    drv = chromium_driver()
    try:
        for name in ("index", "family-pipeline", "family-batch", "family-moments"):
            open_page(drv, site / f"{name}.html")
            drv.save_screenshot(str(out / f"{name}.png"))
    finally:
        drv.quit()
