"""The corpus: programs that mirror the patterns of issue 19, each transformed,
built with -Wall -Wextra -Werror (when the input builds so), run on 2 and 4
ranks with Open MPI and 2 with MPICH, the transformed ones under the run-time
checker (checker/nbcx_check.c) and also in their nonblocking form
(-DNBCX_PERSISTENT=0), and their output compared with the original's.

    python3 run_corpus.py [--before OLD_NBCX_TRANSFORM] [--json FILE] [PROGRAM ...]

prints one line per program: collectives found (calls of one-collective
wrappers count as collectives) / nonblocking / persistent / left, and the
median and maximum statements of overlap of the collectives in loops (left
ones count 0); with --before, the same for another build of the tool (e.g.
main's) on the same files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHECKER = HERE.parent / "checker" / "nbcx_check.c"
ENV = dict(
    os.environ,
    OMPI_ALLOW_RUN_AS_ROOT="1",
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    OMPI_MCA_rmaps_base_oversubscribe="1",
    OMPI_MCA_btl_vader_single_copy_mechanism="none",
)
MPIS = {
    "openmpi": ("mpicc.openmpi", "mpicxx.openmpi", "mpiexec.openmpi", (2, 4)),
    "mpich": ("mpicc.mpich", "mpicxx.mpich", "mpiexec.mpich", (2,)),
}


def _sh(
    cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None, timeout: int = 300
) -> str:
    res = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, env=env or ENV, timeout=timeout, check=False
    )
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} (in {cwd}) failed:\n{res.stdout}\n{res.stderr}")
    return res.stdout


def _sources(d: Path) -> tuple[list[Path], list[Path]]:
    c = sorted(p for p in d.iterdir() if p.suffix == ".c")
    cxx = sorted(p for p in d.iterdir() if p.suffix in (".cpp", ".cc", ".cxx"))
    return c, cxx


def transform(tool: list[str], d: Path, cc: str, write: bool, old: bool = False) -> dict[str, Any]:
    """Runs the tool on the program in ``d``; its JSON report plus the refused files."""
    c, cxx = _sources(d)
    rep = d / "nbcx-report.json"
    report: dict[str, Any] = {"collectives": [], "notes": [], "refused": []}
    if c:
        args = [*tool, "--mpicc", cc, "--report-format", "json", "--report-file", str(rep)]
        if old:
            args += ["-p", str(d)]
        else:
            args += ["--from-make", f"make CC={cc}"]
        if not write:
            args.append("-n")
        subprocess.run([*args, *map(str, c)], cwd=d, capture_output=True, env=ENV, check=False)
        if rep.exists():
            report = {**report, **json.loads(rep.read_text())}
            rep.unlink()
    for f in cxx:
        args = [*tool, "--mpicc", cc, "--report-format", "json", "--report-file", str(rep)]
        if not write:
            args.append("-n")
        res = subprocess.run(
            [*args, str(f)], cwd=d, capture_output=True, text=True, env=ENV, check=False
        )
        report["refused"].append({"file": f.name, "status": res.returncode, "why": res.stderr})
        if res.returncode == 0 and rep.exists():
            report["collectives"] += json.loads(rep.read_text())["collectives"]
        if rep.exists():
            rep.unlink()
    return report


def stats(report: dict[str, Any], in_loop: dict[tuple[str, int], bool]) -> dict[str, Any]:
    recs = report["collectives"]
    found = len(recs)
    nb = sum(1 for r in recs if r["action"] == "nonblocking")
    pers = sum(1 for r in recs if r["action"] == "persistent")
    # a wrapper's own collective whose callers use its nonblocking twin is not left
    twinned = sum(1 for r in recs if r["action"] == "blocking" and r.get("twin"))
    left = found - nb - pers - twinned
    loop_overlap = []
    for r in recs:
        if in_loop.get((Path(r["file"]).name, r["line"]), r.get("in_loop", False)):
            waits = r.get("waits", [])
            loop_overlap.append(max((w["overlap"] for w in waits), default=0))
    return {
        "found": found,
        "nonblocking": nb,
        "persistent": pers,
        "left": left,
        "twinned": twinned,
        # converted only to keep matching with a call that gains (issue 34)
        "start_then_wait": sum(
            1 for r in recs if any("start-then-wait" in n for n in r.get("notes", []))
        ),
        "loop_median": statistics.median(loop_overlap) if loop_overlap else 0,
        "loop_max": max(loop_overlap, default=0),
        "refused": [x["file"] for x in report.get("refused", []) if x["status"] != 0],
        "left_why": [
            f"{Path(r['file']).name}:{r['line']} {r['reason']}"
            for r in recs
            if r["action"] == "blocking" and not r.get("twin")
        ],
    }


def build(d: Path, mpi: str, werror: bool, extra: str = "") -> None:
    cc, cxx, _, _ = MPIS[mpi]
    flags = "-O1 -Wall -Wextra" + (" -Werror" if werror else "") + (" " + extra if extra else "")
    _sh(["make", "-s", "clean"], cwd=d)
    _sh(["make", "-s", f"CC={cc}", f"CXX={cxx}", f"CFLAGS={flags}", f"CXXFLAGS={flags}"], cwd=d)


def run(d: Path, mpi: str, n: int, lib: Path | None = None) -> str:
    _, _, mpiexec, _ = MPIS[mpi]
    pre: list[str] = []
    if lib is not None:
        pre = ["-x", f"LD_PRELOAD={lib}"] if mpi == "openmpi" else ["-genv", "LD_PRELOAD", str(lib)]
    cmd = [mpiexec, *pre, "-n", str(n), str(d / "app")]
    try:
        return _sh(cmd, cwd=d, timeout=60)
    except subprocess.TimeoutExpired:
        return f"timed out: {' '.join(cmd)}\n"


def check_program(
    name: str, tool: list[str], work: Path, before: list[str] | None = None
) -> dict[str, Any]:
    src = HERE / name
    orig, new = work / name / "orig", work / name / "new"
    for d in (orig, new):
        shutil.copytree(src, d, ignore=shutil.ignore_patterns("*.o", "app"))
    cc = MPIS["openmpi"][0]
    rep = transform(tool, new, cc, write=True)
    in_loop = {(Path(r["file"]).name, r["line"]): r["in_loop"] for r in rep["collectives"]}
    out: dict[str, Any] = {"program": name, "after": stats(rep, in_loop)}
    if before:
        db = orig / "compile_commands.json"
        if (new / "compile_commands.json").exists():
            shutil.copy(new / "compile_commands.json", db)
        if db.exists():
            db.write_text(db.read_text().replace(str(new), str(orig)))
        out["before"] = stats(transform(before, orig, cc, write=False, old=True), in_loop)
        if db.exists():
            db.unlink()
    # builds and runs
    werror = True
    try:
        build(orig, "openmpi", True)
    except RuntimeError:
        werror = False
        build(orig, "openmpi", False)
    out["werror"] = werror
    build(new, "openmpi", werror)
    libs = {}
    for mpi in MPIS:
        lib = work / f"libnbcx_check_{mpi}.so"
        if not lib.exists():
            _sh([MPIS[mpi][0], "-shared", "-fPIC", "-O1", "-o", str(lib), str(CHECKER)])
        libs[mpi] = lib
    runs = []
    for n in MPIS["openmpi"][3]:
        expected = run(orig, "openmpi", n)
        got = run(new, "openmpi", n, libs["openmpi"])
        runs.append((f"openmpi -n {n}", got == expected))
        # and without the checker, which runs each deferred collective at its wait and
        # so would hide a nonblocking collective meeting a blocking one (issue 34)
        runs.append((f"openmpi -n {n} without checker", run(new, "openmpi", n) == expected))
    nbform = work / name / "nbform"
    shutil.copytree(new, nbform, ignore=shutil.ignore_patterns("*.o", "app"))
    build(nbform, "openmpi", werror, "-DNBCX_PERSISTENT=0")
    for n in MPIS["openmpi"][3]:
        expected = run(orig, "openmpi", n)
        runs.append(
            (
                f"openmpi -n {n} nonblocking form",
                run(nbform, "openmpi", n, libs["openmpi"]) == expected,
            )
        )
    build(orig, "mpich", werror)
    build(new, "mpich", werror)
    for n in MPIS["mpich"][3]:
        expected = run(orig, "mpich", n)
        runs.append((f"mpich -n {n}", run(new, "mpich", n, libs["mpich"]) == expected))
        runs.append((f"mpich -n {n} without checker", run(new, "mpich", n) == expected))
    if "DEFS" in (src / "Makefile").read_text():
        # the serial build (no -DDO_MPI): plain gcc, the transformed file must still compile
        for d in (orig, new):
            _sh(["make", "-s", "clean"], cwd=d)
            flags = "-O1 -Wall -Wextra" + (" -Werror" if werror else "")
            _sh(["make", "-s", "CC=gcc", "DEFS=", f"CFLAGS={flags}"], cwd=d)
        same = _sh([str(orig / "app")]) == _sh([str(new / "app")])
        runs.append(("serial build (gcc, no MPI)", same))
    out["runs"] = runs
    return out


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| program | found | nonblocking | persistent | left "
        "| loop overlap median / max | -Werror | same output (checked) |"
    )
    lines = [head, "|" + "---|" * 8]
    for r in results:
        for when in ("before", "after"):
            if when not in r:
                continue
            s = r[when]
            left = str(s["left"])
            if s.get("twinned"):
                left += f" (+{s['twinned']} wrapped, callers use the twin)"
            if s["refused"]:
                left += f" (+{len(s['refused'])} file refused: C++)"
            nbc = str(s["nonblocking"])
            if s.get("start_then_wait"):
                nbc += f" ({s['start_then_wait']} start-then-wait)"
            ok = werror = ""
            if when == "after":
                ok = "yes" if all(x[1] for x in r["runs"]) else "NO"
                werror = "yes" if r["werror"] else "input not clean"
            cols = [
                f"{r['program']} ({when})",
                str(s["found"]),
                nbc,
                str(s["persistent"]),
                left,
                f"{s['loop_median']} / {s['loop_max']}",
                werror,
                ok,
            ]
            lines.append("| " + " | ".join(cols) + " |")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("programs", nargs="*")
    p.add_argument("--tool", default=shutil.which("nbcx-transform") or "nbcx-transform")
    p.add_argument("--before", help="another nbcx-transform to compare with")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    names = args.programs or sorted(x.name for x in HERE.iterdir() if (x / "Makefile").exists())
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            r = check_program(name, [args.tool], Path(tmp), [args.before] if args.before else None)
            results.append(r)
    print(table(results))
    for r in results:
        for why in r["after"]["left_why"]:
            print(f"  left: {r['program']}: {why}")
        for f in r["after"]["refused"]:
            print(f"  refused: {r['program']}: {f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if all(all(x[1] for x in r["runs"]) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
