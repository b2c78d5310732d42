"""Results files written atomically: to a temporary name in the same folder, then renamed, so an
interrupted or failed run never leaves a half-written JSON under its name (docs/hardening.md).
Standard library only."""
import json
import os
import tempfile


def write_text(path, text, encoding="utf-8"):
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding=encoding) as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_json(path, obj, **kwargs):
    write_text(path, json.dumps(obj, **kwargs))
