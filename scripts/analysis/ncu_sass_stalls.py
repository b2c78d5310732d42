"""Where a kernel's warps wait, from Nsight Compute's per-instruction source page.

Reads `ncu --import REPORT --page source --csv --print-source sass > sass.csv` and prints the
instructions with the most warp-stall samples (their top reasons, their executions), then the
samples of each --region NAME:FIRST:LAST (SASS instruction indices as printed, LAST exclusive)
by reason. A region's share is of all the kernel's samples.

    python -m scripts.analysis.ncu_sass_stalls sass.csv --top 30 --region mainloop:400:641
"""
import argparse
import collections
import csv
import sys


def fail(msg):
    raise SystemExit(f"ncu_sass_stalls.py: error: {msg}")


def load(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    # The first line names the kernel; the header follows.
    for i, r in enumerate(rows[:3]):
        if "Source" in r and "Warp Stall Sampling (All Samples)" in r:
            return r, rows[i + 1:]
    fail(f"{path}: not an ncu source page with warp stall sampling (--page source --csv --print-source sass)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--region", action="append", default=[], metavar="NAME:FIRST:LAST")
    a = ap.parse_args(argv)
    hdr, data = load(a.csv)
    src, samp = hdr.index("Source"), hdr.index("Warp Stall Sampling (All Samples)")
    ex = hdr.index("Instructions Executed")
    reasons = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
    num = lambda r, i: float(r[i] or 0)  # noqa: E731
    total = sum(num(r, samp) for r in data) or 1.0
    print(f"{len(data)} instructions, {total:.0f} samples")
    for k in sorted(range(len(data)), key=lambda k: -num(data[k], samp))[:a.top]:
        r = data[k]
        top = sorted(((num(r, i), hdr[i][6:]) for i in reasons), reverse=True)[:3]
        print(f"{k:5d} {100 * num(r, samp) / total:5.2f}% ex={r[ex]:>9} {r[src].strip()[:58]:58} "
              + " ".join(f"{n}:{100 * v / total:.1f}" for v, n in top if v))
    for spec in a.region:
        name, _, rest = spec.partition(":")
        first, _, last = rest.partition(":")
        if not (name and first.isdigit() and last.isdigit()):
            fail(f"--region {spec!r}: NAME:FIRST:LAST expected")
        c = collections.Counter()
        for r in data[int(first):int(last)]:
            for i in reasons:
                c[hdr[i][6:]] += num(r, i)
        share = sum(c.values()) / total
        print(f"{name:10} {100 * share:5.1f}%  " + " ".join(f"{k}:{100 * v / total:.1f}" for k, v in c.most_common(7)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
