#!/usr/bin/env python3
"""Checks the traces of NBCX_TRACE (ctest trace.*; tests/trace/CMakeLists.txt).

--inproc N / --np N: runs trace_ops (its known sequence of collectives,
trace_ops.c) traced, on N thread ranks or N MPI ranks, in thread mode,
and checks: one file per process that parses; on every rank, the
collectives issued (5 allreduce of 64 B, 4 of 512 B, 3 bcast of 64 KiB)
and as many starts; the slices of every track nest; every collective
begins with its start; its exposed time is within its span; then that
nbcx-trace merges them (every slice kept), summarises them (the same
counts and bytes) and draws the timeline PNG (with --png, when matplotlib exists).

--bench PROG --np N: runs nbcx-bench (iallreduce 1 MiB, thread mode)
traced, and checks that nbcx-trace's hidden share of its overlapped runs
(the last --reps operations of each rank) agrees with the overlap
nbcx-bench reports (its median) within BOUND: both measure the share of
the operation not spent in the application's calls, on the same runs,
nbcx-bench from its own timers and the maximum over ranks, the trace from
each rank's calls.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

BOUND = 0.35  # hidden share against nbcx-bench overlap: see check_bench
EXPECTED = {("allreduce", 64): 5, ("allreduce", 512): 4, ("bcast", 65536): 3}


def load_tool(path: Path) -> ModuleType:
    """nbcx_trace.cli of the source tree whose launcher is path."""
    sys.path.insert(0, str(path.resolve().parent / "src"))
    return importlib.import_module("nbcx_trace.cli")


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def mpiexec(template: str, np: int) -> list[str]:
    return [w for w in re.split(r"[\s;]+", template.replace("{np}", str(np))) if w]


def run(
    cmd: list[str], trace_dir: Path, extra_env: dict[str, str] | None = None
) -> str:
    shutil.rmtree(trace_dir, ignore_errors=True)
    env = {**os.environ, "NBCX_TRACE": str(trace_dir), "NBCX_PROGRESS": "thread"}
    env.update(extra_env or {})
    p = subprocess.run(
        cmd, env=env, capture_output=True, text=True, timeout=100, check=False
    )
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited with {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout


def check_nesting(events: list[dict[str, Any]]) -> None:
    """On every track, each slice is inside the open one or after it."""
    tracks: dict[tuple[int, int], list[tuple[int, int, str]]] = defaultdict(list)
    for e in events:
        t0 = round(e["ts"] * 1000)
        tracks[(e["pid"], e["tid"])].append(
            (t0, t0 + round(e["dur"] * 1000), e["name"])
        )
    for key, sl in tracks.items():
        sl.sort(key=lambda s: (s[0], -s[1]))
        stack: list[tuple[int, int, str]] = []
        for s in sl:
            while stack and stack[-1][1] <= s[0]:
                stack.pop()
            if stack and s[1] > stack[-1][1]:
                fail(f"track {key}: {s} overlaps {stack[-1]} without nesting")
            stack.append(s)


def check_ops(
    tool: ModuleType,
    launcher: Path,
    trace_dir: Path,
    ranks: int,
    mpi: bool,
    out: Path,
    draw: bool,
) -> None:
    names = sorted(p.name for p in trace_dir.glob("nbcx-trace.*.json"))
    want = [f"nbcx-trace.{r}.json" for r in range(ranks)] if mpi else None
    if mpi and names != sorted(want or []):
        fail(f"files {names}, expected {want}")
    if not mpi and (len(names) != 1 or not names[0].startswith("nbcx-trace.p")):
        fail(f"files {names}, expected one nbcx-trace.p<pid>.json")
    files = tool.load_dir(trace_dir)  # parses and checks every event
    events = tool.slices(files)
    check_nesting(events)
    for rank in range(ranks):
        mine = [e for e in events if e["pid"] == rank]
        colls = [e for e in mine if e.get("cat") == "coll"]
        got = Counter((e["name"], e["args"]["bytes"]) for e in colls)
        if got != Counter(EXPECTED):
            fail(f"rank {rank}: collectives {dict(got)}, expected {EXPECTED}")
        starts = [e for e in mine if e["name"] == "start"]
        if Counter((e["args"]["op"], e["args"]["bytes"]) for e in starts) != got:
            fail(f"rank {rank}: starts do not match the collectives")
        begins = {round(e["ts"] * 1000) for e in starts}
        for e in colls:
            if round(e["ts"] * 1000) not in begins:
                fail(f"rank {rank}: {e['name']} at {e['ts']} begins with no start")
            if e["args"]["exposed_us"] > e["dur"] + 0.002:
                fail(f"rank {rank}: exposed time beyond the span: {e}")
            if not e["args"].get("alg") or e["args"]["alg"] == "?":
                fail(f"rank {rank}: no algorithm: {e}")
        waits = Counter(e["name"] for e in mine if e.get("cat") == "call")
        if waits["wait"] != 8 or waits["waitall"] != 1:
            fail(f"rank {rank}: calls {dict(waits)}, expected 8 wait and 1 waitall")
        if mpi and not any(e["args"]["site"].startswith("trace_ops+") for e in colls):
            fail(f"rank {rank}: no call site in trace_ops: {colls[0]['args']}")
    if mpi and not any(
        e.get("cat") == "progress" and e["name"] == "run" for e in events
    ):
        fail("no progress-thread work recorded in thread mode")
    merged_path = out / "merged.json"
    tool_cmd = [sys.executable, str(launcher)]
    subprocess.run(
        [*tool_cmd, "merge", str(trace_dir), "-o", str(merged_path)], check=True
    )
    merged = json.loads(merged_path.read_text())
    n = sum(1 for e in merged["traceEvents"] if e["ph"] == "X")
    if n != len(events):
        fail(f"merged file has {n} slices, the traces {len(events)}")
    s = subprocess.run(
        [*tool_cmd, "summary", str(trace_dir), "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    ops = json.loads(s.stdout)["operations"]
    for (op, size), count in EXPECTED.items():
        g = ops.get(f"{op} {size} B")
        if not g or g["count"] != count * ranks or g["bytes"] != count * ranks * size:
            fail(f"summary of {op} {size} B: {g}, expected {count * ranks} operations")
        if not 0 <= g["hidden"] <= 1:
            fail(f"summary of {op} {size} B: hidden share {g['hidden']}")
    subprocess.run(
        [*tool_cmd, "summary", str(trace_dir)], check=True, capture_output=True
    )
    if draw:
        check_png(tool_cmd, trace_dir, out)
    print(f"ok: {len(names)} file(s), {len(events)} slices, ranks {ranks}")


def check_png(tool_cmd: list[str], trace_dir: Path, out: Path) -> None:
    png = out / "timeline.png"
    png.unlink(missing_ok=True)
    t = subprocess.run(
        [*tool_cmd, "timeline", str(trace_dir), "--png", str(png)],
        capture_output=True,
        text=True,
        check=False,
    )
    if t.returncode != 0 and "needs matplotlib" in t.stderr:
        print("note: no matplotlib, no PNG drawn")
    elif t.returncode != 0 or png.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"timeline: {t.stderr}")


def check_unwritable(prog: str, out: Path) -> None:
    """NBCX_TRACE naming a file, not a directory: the program runs, says so."""
    not_dir = out / "not-a-directory"
    not_dir.write_text("")
    env = {**os.environ, "NBCX_TRACE": str(not_dir)}
    p = subprocess.run(
        [prog, "inproc", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if (
        p.returncode != 0
        or "NBCX_TRACE" not in p.stderr
        or "trace is lost" not in p.stderr
    ):
        fail(f"NBCX_TRACE={not_dir}: exit {p.returncode}, stderr {p.stderr!r}")


def check_bench(tool: ModuleType, bench: str, launcher: list[str], out: Path) -> None:
    trace_dir = out / "trace-bench"
    js = out / "bench.json"
    reps = 20
    run(
        [
            *launcher,
            bench,
            "--op",
            "iallreduce",
            "--sizes",
            "1m",
            "--reps",
            str(reps),
            "--json",
            str(js),
        ],
        trace_dir,
    )
    result = json.loads(js.read_text())["results"][0]
    overlap = float(result["nbcx"]["overlap"]["median"])
    files = tool.load_dir(trace_dir)
    group = tool.summarise(files, last=reps)["operations"]["allreduce 1048576 B"]
    hidden = group["hidden_net_median"]
    print(
        f"nbcx-bench overlap (median) {overlap:.2f}, trace hidden share "
        f"{group['hidden_median']:.2f}, net of the progress thread's work on "
        f"a shared core {hidden:.2f}"
    )
    if abs(hidden - overlap) > BOUND:
        fail(
            f"hidden share {hidden:.2f} and overlap {overlap:.2f} differ by more than {BOUND}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tool", type=Path, required=True)
    ap.add_argument("--prog")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--inproc", type=int)
    ap.add_argument("--np", type=int)
    ap.add_argument("--mpiexec")
    ap.add_argument("--bench")
    ap.add_argument("--png", action="store_true", help="also draw the timeline")
    a = ap.parse_args()
    tool = load_tool(a.tool)
    if a.bench:
        out = a.out / "bench"
        out.mkdir(parents=True, exist_ok=True)
        check_bench(tool, a.bench, mpiexec(a.mpiexec, a.np), out)
    elif a.inproc:
        out = a.out / f"inproc{a.inproc}"
        out.mkdir(parents=True, exist_ok=True)
        run([a.prog, "inproc", str(a.inproc)], out / "trace")
        check_ops(tool, a.tool, out / "trace", a.inproc, False, out, a.png)
        check_unwritable(a.prog, out)
    else:
        out = a.out / f"mpi{a.np}"
        out.mkdir(parents=True, exist_ok=True)
        run([*mpiexec(a.mpiexec, a.np), a.prog, "mpi"], out / "trace")
        check_ops(tool, a.tool, out / "trace", a.np, True, out, a.png)
    print("PASS")


if __name__ == "__main__":
    main()
