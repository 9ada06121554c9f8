#!/usr/bin/env python3
"""Writes docs/api-index.md, every public function of nbcx with its
prototype and the header's comment on it, from include/*.h.

    api_index.py ROOT            print the index
    api_index.py ROOT --write    write docs/api-index.md

tests/docs/check_docs.py fails when docs/api-index.md differs from what
this prints (a function added, changed or removed without regenerating).
"""

import os
import re
import sys

HEADERS = ["nbcx.h", "nbcx_mpi.h", "nbcx_check.h"]


def entries(path: str) -> list[tuple[str, str, str]]:
    """(section, prototype, comment) of each NBCX_API declaration."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out: list[tuple[str, str, str]] = []
    comment: list[str] = []
    section, i = "", 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        m = re.match(r"/\* (\S.*?)\s*\*/$", s)
        if i > 0 and lines[i - 1].strip().startswith("/* ----") and m:
            section, comment = m.group(1), []
        elif s.startswith("/* ----"):
            comment = []
        elif s.startswith("/*"):
            block = [s]
            while not lines[i].strip().endswith("*/"):
                i += 1
                block.append(re.sub(r"^\*(?!/)\s?", "", lines[i].strip()))
            text = " ".join(b for b in block if b)
            text = re.sub(r"^/\*+|\*/$", "", text)
            text = re.sub(r"\s+", " ", text)
            comment = [text.strip()]
        elif s.startswith("NBCX_API"):
            decl = [s]
            while not decl[-1].endswith(";"):
                i += 1
                decl.append(lines[i].strip())
            proto = re.sub(r"\s+", " ", " ".join(decl))
            proto = proto.replace("NBCX_API ", "").replace("( ", "(")
            out.append((section, proto, " ".join(comment)))
            comment = []
        elif not s:
            comment = []
        i += 1
    return out


def render(root: str) -> str:
    o = [
        "# Function index",
        "",
        "Every public function of nbcx, with its prototype and the header's",
        "comment on it, in the headers' order. Generated from `include/*.h`",
        "by `tests/docs/api_index.py ROOT --write`; `tests/docs/check_docs.py`",
        "fails when this file is out of date. How to use them:",
        "[c-api.md](c-api.md).",
    ]
    for h in HEADERS:
        o += ["", f"## {h}", ""]
        last = None
        for section, proto, comment in entries(os.path.join(root, "include", h)):
            if section and section != last:
                if o[-1] != "":
                    o.append("")
                o += [f"### {section}", ""]
                last = section
            line = f"- `{proto}`"
            if comment:
                line += f" — {comment}"
            o.append(line)
        o.append("")
    return "\n".join(o).rstrip() + "\n"


def main() -> int:
    root = sys.argv[1]
    text = render(root)
    if "--write" in sys.argv[2:]:
        with open(
            os.path.join(root, "docs", "api-index.md"), "w", encoding="utf-8"
        ) as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
