#!/usr/bin/env python3
"""Writes nbcx(7) from docs/settings.md, the one source of nbcx's settings.

    settings2man.py SETTINGS_MD VERSION OUT

The table's rows become the ENVIRONMENT section; the links and Markdown
marks are turned into plain man text. Standard library only.
"""

import re
import sys


def roff(text: str) -> str:
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)  # links: their text
    text = text.replace("\\", "\\\\").replace("`", "")
    text = text.replace("-", "\\-")
    return text


def main() -> int:
    src, version, out = sys.argv[1:4]
    rows = []
    tail = []
    in_table = False
    after = False
    with open(src, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for line in lines:
        if line.startswith("| variable"):
            in_table = True
            continue
        if in_table and line.startswith("|---"):
            continue
        if in_table and line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows.append(cells)
            continue
        if in_table and not line.startswith("|"):
            in_table = False
            after = True
        if after and line.strip():
            tail.append(line)
    if not rows:
        print("settings2man.py: no settings table in " + src, file=sys.stderr)
        return 1
    o = []
    o.append(f'.TH NBCX 7 "" "nbcx {version}" "nbcx manual"')
    o.append(".SH NAME")
    o.append("nbcx \\- nonblocking MPI collectives as dependency graphs")
    o.append(".SH SYNOPSIS")
    o.append(".B #include <nbcx.h>")
    o.append(".br")
    o.append(".B #include <nbcx_mpi.h>")
    o.append(".PP")
    o.append("cc prog.c $(pkg\\-config \\-\\-cflags \\-\\-libs nbcx)")
    o.append(".br")
    o.append("nbcx\\-run mpiexec \\-n 4 ./unmodified\\-mpi\\-program")
    o.append(".SH DESCRIPTION")
    o.append(
        "nbcx runs each MPI\\-3 nonblocking collective (and each persistent "
        "one) as a dependency graph per rank: every message moves as soon as "
        "its own data is ready, on a progress thread while the application "
        "computes. Programs call it directly (nbcx.h, nbcx_mpi.h: "
        "nbcx_iallreduce, nbcx_wait, ...), or run unmodified under the PMPI "
        "shim libnbcx\\-pmpi with"
    )
    o.append(".BR nbcx\\-run (1).")
    o.append(".PP")
    o.append(
        "Ranks are MPI processes (nbcx_comm_from_mpi) or threads of one "
        "process (nbcx_inproc_run, no MPI needed). Every call returns "
        "NBCX_SUCCESS or an error code; nbcx_error_string and "
        "nbcx_error_detail explain it, nbcx_info describes the library's "
        "state in one line."
    )
    o.append(".SH ENVIRONMENT")
    o.append("Sizes take the suffixes k, m, g (powers of 1024).")
    for name, default, what, more in rows:
        o.append(".TP")
        o.append(".B " + roff(name))
        what = roff(what)
        o.append(what[:1].upper() + what[1:] + ". Default: " + roff(default) + ".")
        o.append("See docs/" + roff(re.sub(r"\[([^\]]+)\].*", r"\1", more)) + ".")
    if tail:
        o.append(".PP")
        o.append(roff(" ".join(tail)))
    o.append(".SH FILES")
    o.append(".TP")
    o.append(".I share/nbcx/sim/default.json")
    o.append("default LogGP parameters of nbcx\\-sim and nbcx\\-tune")
    o.append(".TP")
    o.append(".I lib/nbcx/libnbcx\\-ucx.so")
    o.append("the UCX transport module, loaded for NBCX_TRANSPORT=ucx")
    o.append(".SH SEE ALSO")
    tools = ["run", "bench", "check", "sim", "tune", "loggp", "soak"]
    for i, t in enumerate(tools):
        end = ";" if i == len(tools) - 1 else ","
        o.append(f".BR nbcx\\-{t} (1){end}")
    o.append("the manual in the docs/ directory of the source tree.")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
