"""Build a real inverted index for the posting-list study from a real text corpus.

The corpus is Debian's Python standard library (/usr/lib/python3.X, from the libpython3.X-minimal
and libpython3.X-stdlib packages; else this interpreter's sysconfig 'stdlib' path), or any --root: every file
matching --glob (*.py unless given; repeatable) is one document (doc ids in sorted-path order), its
terms the lower-cased identifiers and words of three or more letters. A larger real corpus from a
package: Debian's Linux kernel source (linux-source-6.1: `apt-get download linux-source-6.1`,
`dpkg -x`, untar /usr/src/linux-source-6.1.tar.xz) with `--glob '*.c' --glob '*.h'`. Writes, next to --out:
  OUT.bin      the study's index format: little-endian uint32 [len][ids...], list i = term i
  OUT.terms    term i on line i (the vocabulary)
  OUT.queries  queries of 2-5 terms that co-occur (all drawn from one random document, so every
               answer has at least that document), term ids separated by spaces
Terms in fewer than --min-df documents are dropped. Deterministic for a given corpus and --seed.
"""
import argparse
import random
import re
import struct
import sys
import sysconfig
from pathlib import Path

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def debian_stdlib():
    """The newest /usr/lib/python3.X that holds os.py (Debian's libpython3.X-minimal/-stdlib)."""
    found = sorted((p for p in Path("/usr/lib").glob("python3.*") if (p / "os.py").is_file()),
                   key=lambda p: [int(x) for x in p.name[len("python"):].split(".") if x.isdigit()])
    return [str(found[-1])] if found else []


def documents(roots, max_files, globs=("*.py",)):
    files = sorted({p for r in roots for g in globs for p in Path(r).rglob(g) if p.is_file()})
    return files[:max_files] if max_files else files


def build(files, min_df):
    postings = {}
    for doc, path in enumerate(files):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            sys.exit(f"intersect_index.py: error: cannot read {path}: {e}")
        for term in {t.lower() for t in TOKEN.findall(text)}:
            postings.setdefault(term, []).append(doc)  # docs visited in order: lists stay sorted
    terms = sorted(t for t, docs in postings.items() if len(docs) >= min_df)
    return terms, [postings[t] for t in terms]


def sample_queries(terms, lists, ndocs, count, seed):
    rng = random.Random(seed)
    by_doc = [[] for _ in range(ndocs)]
    for tid, lst in enumerate(lists):
        for d in lst:
            by_doc[d].append(tid)
    docs = [d for d in range(ndocs) if len(by_doc[d]) >= 2]
    if not docs:
        sys.exit("intersect_index.py: error: no document has two indexed terms")
    queries = []
    for _ in range(count):
        d = rng.choice(docs)
        k = rng.randint(2, min(5, len(by_doc[d])))
        queries.append(rng.sample(by_doc[d], k))
    return queries


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", action="append", help="corpus folder (repeatable); default: this Python's stdlib")
    ap.add_argument("--out", required=True, help="output path prefix")
    ap.add_argument("--glob", action="append", help="the documents' file pattern (repeatable; default *.py)")
    ap.add_argument("--max-files", type=int, default=0, help="only the first N files in path order (0: all)")
    ap.add_argument("--min-df", type=int, default=2, help="drop terms in fewer documents")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261123)
    a = ap.parse_args(argv)
    roots = a.root or debian_stdlib() or [sysconfig.get_paths()["stdlib"]]
    for r in roots:
        if not Path(r).is_dir():
            sys.exit(f"intersect_index.py: error: corpus folder {r} does not exist")
    globs = a.glob or ["*.py"]
    files = documents(roots, a.max_files, globs)
    if not files:
        sys.exit(f"intersect_index.py: error: no {' or '.join(globs)} files under {', '.join(roots)}")
    terms, lists = build(files, a.min_df)
    if not terms:
        sys.exit("intersect_index.py: error: no term is in --min-df documents")
    out = Path(a.out)
    with open(f"{out}.bin", "wb") as f:
        for lst in lists:
            f.write(struct.pack(f"<{len(lst) + 1}I", len(lst), *lst))
    Path(f"{out}.terms").write_text("".join(t + "\n" for t in terms))
    queries = sample_queries(terms, lists, len(files), a.queries, a.seed)
    Path(f"{out}.queries").write_text("".join(" ".join(map(str, q)) + "\n" for q in queries))
    total = sum(map(len, lists))
    print(f"{out}.bin: {len(files)} documents under {', '.join(roots)}, {len(terms)} terms, {total} postings "
          f"(mean list {total / len(terms):.1f}); {out}.queries: {len(queries)} queries (seed {a.seed})")


if __name__ == "__main__":
    main()
