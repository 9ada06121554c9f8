"""Run time of the corpus programs before and after nbcx-transform, and the
overlap the transformation gives them (issue 34).

    python3 time_corpus.py [--reps N] [--ranks N] [--markdown FILE]
                           [--exe NAME] [--args "ARGS"] [PROGRAM | DIRECTORY ...]

For each program of the corpus (or those named, or each DIRECTORY with a
Makefile that builds ``--exe`` from its C and C++ files with $(CC)/$(CXX) and
$(CFLAGS)/$(CXXFLAGS), run with ``--args``): the original and the
transformed program are built with Open MPI (as run_corpus.py does) and run
alternately ``--reps`` times on ``--ranks`` ranks; mpi_timer.c, preloaded,
measures each run from MPI_Init to MPI_Finalize (the slowest rank), so the
launcher's start-up is left out.  Printed per program: the median time before
and after, the time gained (before - after, in ms and in %), and the overlap
the report gives the converted collectives (statements between each call and
its wait: median and max, all calls and the calls in loops).  Timing figures
need a quiet machine: with other jobs running they measure the load.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run_corpus  # noqa: E402

TIMER = HERE / "mpi_timer.c"
_TIME = re.compile(r"^nbcx-time: ([0-9.]+)$", re.M)


def overlap(report: dict[str, Any]) -> dict[str, float]:
    """Statements of overlap of the converted collectives (each call: its largest
    wait's), all of them and those in loops; calls left blocking are not counted."""
    every: list[int] = []
    loops: list[int] = []
    for r in report["collectives"]:
        if r["action"] == "blocking":
            continue
        n = max((w["overlap"] for w in r.get("waits", [])), default=0)
        every.append(n)
        if r.get("in_loop"):
            loops.append(n)
    return {
        "converted": len(every),
        "median": statistics.median(every) if every else 0,
        "max": max(every, default=0),
        "loop_median": statistics.median(loops) if loops else 0,
        "loop_max": max(loops, default=0),
    }


def timed_run(d: Path, lib: Path, ranks: int, exe: str = "app", args: str = "") -> float:
    """Seconds from MPI_Init to MPI_Finalize of one run of ``d``/``exe``."""
    mpiexec = run_corpus.MPIS["openmpi"][2]
    cmd = [mpiexec, "-x", f"LD_PRELOAD={lib}", "-n", str(ranks), str(d / exe), *args.split()]
    res = subprocess.run(
        cmd, cwd=d, capture_output=True, text=True, env=run_corpus.ENV, timeout=300, check=False
    )
    m = _TIME.search(res.stderr)
    if res.returncode != 0 or m is None:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stdout}\n{res.stderr}")
    return float(m.group(1))


def time_program(
    src: Path, tool: list[str], work: Path, reps: int, ranks: int, exe: str = "app", args: str = ""
) -> dict[str, Any]:
    name = src.name
    orig, new = work / name / "orig", work / name / "new"
    for d in (orig, new):
        shutil.copytree(src, d, ignore=shutil.ignore_patterns("*.o", exe))
    cc = run_corpus.MPIS["openmpi"][0]
    report = run_corpus.transform(tool, new, cc, write=True)
    for d in (orig, new):
        run_corpus.build(d, "openmpi", False)
    lib = work / "libmpi_timer.so"
    if not lib.exists():
        run_corpus._sh([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(TIMER)])
    before: list[float] = []
    after: list[float] = []
    for _ in range(reps):  # alternately, so that a change of load hits both
        before.append(timed_run(orig, lib, ranks, exe, args))
        after.append(timed_run(new, lib, ranks, exe, args))
    b, a = statistics.median(before), statistics.median(after)
    return {
        "program": name,
        "ranks": ranks,
        "reps": reps,
        "before_s": b,
        "after_s": a,
        "gained_ms": (b - a) * 1e3,
        "gained_pct": 100.0 * (b - a) / b if b > 0 else 0.0,
        "overlap": overlap(report),
    }


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| program | converted | overlap median / max | in loops median / max "
        "| before (µs) | after (µs) | gained (µs) | gained |"
    )
    lines = [head, "|" + "---|" * 8]
    for r in results:
        o = r["overlap"]
        cols = [
            r["program"],
            str(o["converted"]),
            f"{o['median']} / {o['max']}",
            f"{o['loop_median']} / {o['loop_max']}",
            f"{r['before_s'] * 1e6:.0f}",
            f"{r['after_s'] * 1e6:.0f}",
            f"{r['gained_ms'] * 1e3:+.0f}",
            f"{r['gained_pct']:+.1f} %",
        ]
        lines.append("| " + " | ".join(cols) + " |")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("programs", nargs="*")
    p.add_argument("--tool", default=shutil.which("nbcx-transform") or "nbcx-transform")
    p.add_argument("--reps", type=int, default=5, help="runs of each build (default 5)")
    p.add_argument("--ranks", type=int, default=2, help="MPI ranks (default 2)")
    p.add_argument("--markdown", type=Path, help="also write the table to this file")
    p.add_argument("--exe", default="app", help="the program the Makefile builds (default app)")
    p.add_argument("--args", default="", help="the program's arguments")
    args = p.parse_args()
    if args.reps < 1 or args.ranks < 1:
        p.error("--reps and --ranks must be at least 1")
    names = args.programs or sorted(x.name for x in HERE.iterdir() if (x / "Makefile").exists())
    dirs: list[Path] = []
    for n in names:
        d = Path(n) if Path(n).is_dir() else HERE / n
        if not (d / "Makefile").exists():
            p.error(f"no program {n!r}: neither a directory with a Makefile nor in {HERE}")
        dirs.append(d.resolve())
    os.environ.update(run_corpus.ENV)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for d in dirs:
            results.append(
                time_program(d, [args.tool], Path(tmp), args.reps, args.ranks, args.exe, args.args)
            )
    text = table(results)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
