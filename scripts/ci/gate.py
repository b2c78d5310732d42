"""The regression gate's fixture set and rule, from scripts/gate.json (docs/regression.md).

    python -m scripts.ci.gate filter [GATE.json] [--host]   # the bench's --benchmark_filter for the set
    python -m scripts.ci.gate expected LIST.json [GATE.json] # names the registry says the set must hold

`distancies list --json` gives LIST.json; compare.py --gate reads the same file for its rule.
"""
from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass

from scripts.lib.bench_json import BenchError, read_json

DEFAULT_GATE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gate.json")
# Google Benchmark's suffixes after a registered name, as the bench's filter sees them (POSIX ERE).
_GB_TAIL = "(/(iterations|repeats|threads|min_time|min_warmup_time|manual_time|real_time|process_time)[^/]*)*$"


@dataclass
class Rule:
    metric: str = "real_time"
    repetitions: int = 5
    runs: int = 1               # runs a side, alternated (scripts/gate_ab.sh)
    alpha: float = 0.01
    min_effect: float = 0.02
    noise_k: float = 3.0
    default_noise: float = 0.0  # the between-run sigma of a fixture the noise file lacks


@dataclass
class Gate:
    path: str
    gated: list        # compiled patterns
    host: list
    rule: Rule
    entries: list      # the "gated" objects as written (registry expansion)

    def kind(self, name: str) -> str | None:
        """'host' (reported, never gated), 'gated', or None (outside the gate). Host wins."""
        if any(p.search(name) for p in self.host):
            return "host"
        if any(p.search(name) for p in self.gated):
            return "gated"
        return None


def _patterns(doc: dict, key: str, path: str) -> list:
    out = []
    for i, e in enumerate(doc.get(key, [])):
        try:
            out.append(re.compile(e["pattern"]))
        except (KeyError, TypeError, re.error) as err:
            raise BenchError(f"{path}: {key}[{i}] has no usable 'pattern' ({err})") from None
    return out


def load_gate(path: str = DEFAULT_GATE) -> Gate:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise BenchError(f"{path}: cannot read ({e.strerror or e})") from None
    except json.JSONDecodeError as e:
        raise BenchError(f"{path}: not JSON ({e})") from None
    if not isinstance(doc, dict) or not doc.get("gated"):
        raise BenchError(f"{path}: needs a non-empty 'gated' list")
    known = Rule.__dataclass_fields__
    rule = Rule(**{k: v for k, v in doc.get("rule", {}).items() if k in known})
    return Gate(path, _patterns(doc, "gated", path), _patterns(doc, "host", path), rule, doc["gated"])


def bench_filter(gate: Gate, host: bool = False) -> str:
    """One regex for --benchmark_filter: the gated patterns (and the host ones with host=True)."""
    pats = [p.pattern for p in gate.gated] + ([p.pattern for p in gate.host] if host else [])
    return "|".join("(" + (p[:-1] + _GB_TAIL if p.endswith("$") else p) + ")" for p in pats)


def expected_names(gate: Gate, registry: dict) -> list:
    """The gated names the registry (distancies list --json) says a full run registers."""
    out = []
    for e in gate.entries:
        if "registry" not in e:
            continue
        rows = registry
        for part in e["registry"].split("."):
            rows = rows.get(part, {}) if isinstance(rows, dict) else {}
        names = [r["name"] for r in rows if isinstance(r, dict) and "name" in r] if isinstance(rows, list) else []
        for n in names:
            if n in e.get("except", []):
                continue
            values = e.get("values", {}).get("B", [None])
            out += [e["name"].format(name=n, B=b) for b in values]
    return out


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["filter"]:
            host = "--host" in argv
            rest = [a for a in argv[1:] if a != "--host"]
            print(bench_filter(load_gate(rest[0] if rest else DEFAULT_GATE), host))
            return 0
        if argv[:1] == ["expected"] and len(argv) >= 2:
            registry = read_json(argv[1])
            print("\n".join(expected_names(load_gate(argv[2] if len(argv) > 2 else DEFAULT_GATE), registry)))
            return 0
    except (BenchError, OSError, json.JSONDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
