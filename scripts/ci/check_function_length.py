"""No function over 80 lines outside kernels/ (issue 36): a brace scanner, not a parser.

A function is a brace block whose head (the text since the last `;`, `{` or `}`) ends in a
parameter list, optionally followed by qualifiers, a trailing return type or a constructor's
initialiser list, and is not a control statement, a class, namespace or enum, or a lambda. Its
length counts from the line of its `{` to the line of its `}`. Lambdas and blocks inside a
function count towards it. Comments and string literals are blanked first. GoogleTest's
`TEST(...)` bodies are functions too.

    python3 -m scripts.ci.check_function_length [--limit 80] [--root DIR] [FILE ...]

Exit 1 with one line per function over the limit (`path:line: name is N lines (limit L)`).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 80
EXEMPT = ("kernels/",)   # device code: long unrolled kernels are the norm there
SUFFIXES = ("*.cpp", "*.hpp", "*.cu", "*.cuh", "*.h")
CONTROL = re.compile(r"(?:^|[^\w])(if|for|while|switch|catch|do|else|try)\s*(\(|$)")
AGGREGATE = re.compile(r"\b(class|struct|union|namespace|enum)\b")
LAMBDA = re.compile(r"\]\s*(\(|mutable|\{|$)|\]\s*\([^)]*\)\s*(mutable\s*)?(->\s*[^{]*)?$")
SIGNATURE = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?(->\s*[\w:<>,\s*&]+)?$")


def blank(text: str) -> str:
    """Comments, string and character literals replaced by blanks (newlines kept)."""
    def keep_lines(m):
        return "\n" * m.group(0).count("\n")
    text = re.sub(r"/\*.*?\*/", keep_lines, text, flags=re.S)
    text = re.sub(r'R"(\w*)\((.*?)\)\1"', lambda m: '""' + keep_lines(m), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def _is_function(head: str) -> bool:
    h = " ".join(head.split())
    if not h or AGGREGATE.search(h) or LAMBDA.search(h):
        return False
    last = h.split(";")[-1]
    if CONTROL.search(last):
        return False
    if "=" in h.split("(")[0]:          # `auto f = ...(`: an initialiser, not a definition
        return False
    # A constructor's initialiser list ends in `)` or `}` of its last member's initialiser.
    return bool(SIGNATURE.search(h)) or bool(re.search(r"\)\s*:\s*[\w:]+\s*[({].*[)}]$", h))


def long_functions(text: str, limit: int = LIMIT) -> list:
    """[(line, name, length)] of the functions in `text` longer than `limit` lines."""
    t = blank(text)
    stack: list = []      # (is_function, start line, name, head to resume or None) per open brace
    head_start, line, out = 0, 1, []
    for i, ch in enumerate(t):
        if ch == "\n":
            line += 1
        elif ch == "{":
            head = t[head_start:i]
            inside = any(f for f, _, _, _ in stack)
            fn = not inside and _is_function(head)
            names = re.findall(r"([~\w:]+)\s*\(", head)
            # `member{init}` in a constructor's initialiser list: the head goes on after it.
            init = re.search(r"\)\s*:[^:]", head) and re.search(r"[\w>]\s*$", head)
            resume = head_start if init and not fn and not AGGREGATE.search(head) else None
            stack.append((fn, line, names[0] if names else "?", resume))
            head_start = i + 1
        elif ch == "}":
            resume = None
            if stack:
                fn, start, name, resume = stack.pop()
                if fn and line - start + 1 > limit:
                    out.append((start, name, line - start + 1))
            head_start = resume if resume is not None else i + 1
        elif ch == ";":
            head_start = i + 1
    return out


def tracked(root: Path) -> list:
    files = subprocess.run(["git", "ls-files", *SUFFIXES], cwd=root, capture_output=True, text=True, check=True)
    return [f for f in files.stdout.split() if not f.startswith(EXEMPT)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="files to check (default: every tracked C++/CUDA file outside kernels/)")
    ap.add_argument("--limit", type=int, default=LIMIT)
    ap.add_argument("--root", type=Path, default=ROOT)
    a = ap.parse_args(argv)
    files = a.files or tracked(a.root)
    findings = []
    for f in files:
        p = a.root / f if not Path(f).is_absolute() else Path(f)
        for start, name, n in long_functions(p.read_text(encoding="utf-8", errors="replace"), a.limit):
            findings.append(f"{f}:{start}: {name} is {n} lines (limit {a.limit})")
    for x in findings:
        print(x)
    if not findings:
        print(f"check_function_length: {len(files)} files, no function over {a.limit} lines")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
