"""A word2vec binary file's words and float32 rows (`rows dim` header, then each word, a space and
dim little-endian floats, an optional newline): the one reader the scripts share. Raises
ValueError naming what is wrong, OSError if it cannot be read."""
import numpy as np


def read_w2v(path):
    """(words, rows as a float32 array) of the file at path."""
    with open(path, "rb") as f:
        head = f.readline().split()
        data = f.read()
    if len(head) != 2 or not all(h.isdigit() for h in head):
        raise ValueError("not a word2vec binary file (no 'rows dim' header)")
    rows, dim = map(int, head)
    vecs = np.empty((rows, dim), dtype=np.float32)
    words, pos = [], 0
    for i in range(rows):
        sp = data.find(b" ", pos)
        if sp < 0 or sp + 1 + 4 * dim > len(data):
            raise ValueError(f"cut short at row {i} of {rows}")
        words.append(data[pos:sp].decode("utf-8", errors="replace"))
        vecs[i] = np.frombuffer(data, dtype="<f4", count=dim, offset=sp + 1)
        pos = sp + 1 + 4 * dim
        if data[pos:pos + 1] == b"\n":
            pos += 1
    return words, vecs
