"""scripts/data/intersect_index.py on a made-up corpus: the documents its globs select, the index
format, the queries' co-occurrence, and the error lines."""
import struct

import pytest

from scripts.data import intersect_index


def corpus(tmp_path):
    (tmp_path / "sub").mkdir(parents=True)
    (tmp_path / "a.c").write_text("int alpha_one(void) { return beta; }  /* gamma */")
    (tmp_path / "b.h").write_text("#define ALPHA_ONE beta gamma")
    (tmp_path / "sub" / "c.c").write_text("beta delta")
    (tmp_path / "d.py").write_text("beta = gamma")
    return tmp_path


def read_lists(path):
    data = path.read_bytes()
    lists, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from("<I", data, at)
        lists.append(list(struct.unpack_from(f"<{n}I", data, at + 4)))
        at += 4 * (n + 1)
    return lists


def test_globs_choose_the_documents_and_lists_are_sorted(tmp_path, capsys):
    root = corpus(tmp_path / "corpus")
    out = tmp_path / "idx"
    intersect_index.main(["--root", str(root), "--glob", "*.c", "--glob", "*.h", "--out", str(out),
                          "--queries", "20"])
    terms = (tmp_path / "idx.terms").read_text().split()
    lists = read_lists(tmp_path / "idx.bin")
    # documents in path order: a.c (0), b.h (1), sub/c.c (2); d.py is not one
    assert dict(zip(terms, lists, strict=True)) == {"alpha_one": [0, 1], "beta": [0, 1, 2], "gamma": [0, 1]}
    for line in (tmp_path / "idx.queries").read_text().splitlines():
        q = [int(t) for t in line.split()]
        assert 2 <= len(q) <= 5 and len(set(q)) == len(q)
        assert set.intersection(*(set(lists[t]) for t in q))  # drawn from one document
    assert "3 documents" in capsys.readouterr().out


def test_default_glob_is_python_files(tmp_path):
    root = corpus(tmp_path / "corpus")
    (root / "e.py").write_text("gamma beta")
    intersect_index.main(["--root", str(root), "--out", str(tmp_path / "idx"), "--queries", "5"])
    assert (tmp_path / "idx.terms").read_text().split() == ["beta", "gamma"]


def test_no_matching_file_is_one_error_line(tmp_path):
    root = corpus(tmp_path / "corpus")
    with pytest.raises(SystemExit) as e:
        intersect_index.main(["--root", str(root), "--glob", "*.rs", "--out", str(tmp_path / "idx")])
    assert str(e.value) == f"intersect_index.py: error: no *.rs files under {root}"
