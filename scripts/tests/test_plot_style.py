"""scripts/lib/plot_style.py: colours never repeat within a figure; every figure names its run."""

import pytest

from scripts.lib.plot_style import distinct_colours, stamp_text


def test_colours_are_distinct_and_never_wrap():
    for n in range(1, 31):
        cs = distinct_colours(n)
        assert len(cs) == n and len(set(c.lower() for c in cs)) == n
    with pytest.raises(ValueError):
        distinct_colours(31)


def test_stamp_names_gpu_commit_and_date():
    s = stamp_text({"gpu": "NVIDIA H100 80GB HBM3", "distancies_commit": "abc1234",
                    "date": "2026-11-23T21:56:02+00:00"})
    assert s == "NVIDIA H100 80GB HBM3 · commit abc1234 · run 2026-11-23 21:56"
    assert "unknown GPU" in stamp_text({})
