"""How the tests run a tool: as the docs do, `python -m scripts.<kind>.<tool>` from the repository root."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(module, *args, **kwargs):
    """subprocess.run of `python -m MODULE ARGS...` (each argument str()'d) in the repository root."""
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT, **kwargs)
