"""Markdown table of every registered variant with its time and floor ratio from benchmark JSON.

    build/harness/cli/distancies list > list.txt
    python -m scripts.reports.variants_table "$(python3 -m scripts.lib.manifest canonical embeddings h100)" list.txt
docs/variants.md embeds its output.
"""
import re
import sys

from scripts.lib.bench_json import BenchError, load, open_text


def registry(path):
    """(section, name, origin, description) rows from `distancies list` (a file, plain or .gz)."""
    rows, section = [], None
    for line in open_text(path):
        if line.endswith(":\n") and not line.startswith(" "):
            # "embeddings / dot (dot variants):" names the section in brackets; older lists did not.
            s = re.search(r"\((.+)\):$", line.rstrip("\n"))
            section = s[1] if s else line[:-2]
            continue
        m = re.match(r"\s+(\S+)\s+(.+?)\s{2,}(.+?)(?: \[[^]]*\])?$", line.rstrip("\n"))
        if m and section:
            rows.append((section, *m.groups()))
    return rows


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        run = load(argv[1])
        rows = registry(argv[2])
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    fixture = {"dot variants": "dot/{}", "top-k stages": "topk/{}/k:10", "pipelines": "pipeline/{}",
               "batch pipelines": "batch/{}/batch:1024"}
    out = ["| kind | name | from | what | ms (median) | floor ratio |", "|---|---|---|---|---|---|"]
    for section, name, origin, desc in rows:
        if section not in fixture:
            continue  # the other studies' registries have their own tables
        b = run.benches.get(fixture.get(section, "-").format(name))
        ms = b.center("total_ms") if b and b.has("total_ms") else b.center("kernel_ms") if b else None
        ratio = b.center("floor_ratio") if b and b.has("floor_ratio") else None
        out.append(f"| {section[:-1]} | `{name}` | {origin} | {desc} | "
                   f"{'%.3f' % ms if ms is not None else '—'} | {'%.3f' % ratio if ratio is not None else '—'} |")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
