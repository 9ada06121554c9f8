"""nbcx-trace - merge, summarise and draw the traces of NBCX_TRACE=DIR.

A program run with NBCX_TRACE=DIR writes one file per process into DIR,
nbcx-trace.<rank>.json (MPI ranks) or nbcx-trace.p<pid>.json (thread
ranks), in the Chrome Trace Event format: each collective from its start
to its completion, the application's time inside nbcx (start, test,
wait), the progress thread's work and sleeps (docs/observability.md).

    nbcx-trace merge DIR -o merged.json     one file, clocks aligned
    nbcx-trace summary DIR                  per operation and call site
    nbcx-trace timeline DIR --png out.png [--window T0:T1]

merge: the files' clocks are CLOCK_MONOTONIC of each host; files of one
host share it and are not shifted; files of different hosts are shifted
by the clock-sync record each holds (the end of a barrier at start-up,
otherData.sync_us) so that those ends coincide (--align barrier forces
that for every file, --align none shifts nothing). The merged file opens
in Perfetto (ui.perfetto.dev) and chrome://tracing.

summary: per operation (and message size) and per call site: the count,
the bytes, the mean time from start to completion, the time exposed in
the application (its start, tests and waits until completion), the
hidden share 1 - exposed / (start to completion), summed over the
operations, and the progress thread's CPU time spent on them. Where the
progress thread shares the application's core (the trace's
otherData.progress_shares_core), its work on an operation delayed the
computation by as much: the net hidden share (JSON: hidden_net,
hidden_net_median) takes it off the hidden time, and is what
nbcx-bench's overlap measures. --last N
keeps the last N operations of each rank and operation (e.g. the
overlapped runs of nbcx-bench, which come last); --json prints the same
figures as JSON, and the median of the operations' own hidden shares
(hidden_median: robust to a few long operations).

timeline: one row per rank and thread (matplotlib, which only this
command needs): the application's calls into nbcx, the computation
between them, its collectives (one thin lane per operation in flight),
and the progress thread's work and sleeps. --window T0:T1 in ms from the
first event (either side may be empty).

Exit status: 0 success, 1 unreadable or malformed traces, 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nbcx_trace import __version__

VERSION = __version__

Event = dict[str, Any]


class TraceError(Exception):
    """A trace directory or file that cannot be used."""


@dataclass
class TraceFile:
    """One process's trace."""

    path: Path
    events: list[Event]
    other: dict[str, Any]
    offset_us: float = 0.0


def load_file(path: Path) -> TraceFile:
    """Reads and checks one trace file."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise TraceError(f"{path}: not a readable JSON trace ({err})") from err
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise TraceError(f"{path}: no traceEvents list")
    other = data.get("otherData", {})
    if not isinstance(other, dict) or other.get("format") != "nbcx-trace/1":
        raise TraceError(f"{path}: not an nbcx trace (otherData.format)")
    events: list[Event] = []
    for i, e in enumerate(data["traceEvents"]):
        if not isinstance(e, dict) or e.get("ph") not in ("X", "M"):
            raise TraceError(f"{path}: event {i} is not a complete event")
        if e["ph"] == "X":
            for key in ("ts", "dur", "pid", "tid", "name"):
                if key not in e:
                    raise TraceError(f"{path}: event {i} has no {key}")
            if e["dur"] < 0:
                raise TraceError(f"{path}: event {i} has a negative duration")
        events.append(e)
    return TraceFile(path, events, other)


def load_dir(directory: Path) -> list[TraceFile]:
    """Every trace file of a directory (nbcx-trace.*.json), by rank."""
    if not directory.is_dir():
        raise TraceError(f"{directory}: not a directory")
    paths = sorted(p for p in directory.glob("nbcx-trace.*.json") if p.is_file())
    if not paths:
        raise TraceError(f"{directory}: no nbcx-trace.*.json files")
    files = [load_file(p) for p in paths]
    files.sort(key=lambda f: (f.other.get("rank", -1), f.other.get("pid", 0)))
    return files


def align(files: list[TraceFile], how: str) -> None:
    """Sets each file's offset (us, added to its times): see merge."""
    synced = [f for f in files if f.other.get("rank", -1) >= 0]
    hosts = {f.other.get("host") for f in files}
    for f in files:
        f.offset_us = 0.0
    if how == "none" or not synced or (how == "auto" and len(hosts) <= 1):
        return
    ref = min(synced, key=lambda f: f.other["rank"])
    for f in synced:
        f.offset_us = float(ref.other["sync_us"]) - float(f.other["sync_us"])


def slices(files: list[TraceFile]) -> list[Event]:
    """Every complete event, shifted by its file's offset, in time order."""
    out = []
    for f in files:
        for e in f.events:
            if e["ph"] == "X":
                out.append({**e, "ts": e["ts"] + f.offset_us})
    out.sort(key=lambda e: (e["ts"], -e["dur"]))
    return out


def track_names(events: list[Event]) -> list[Event]:
    """Chrome metadata naming every process (rank) and thread (track)."""
    meta: list[Event] = []
    seen: set[tuple[int, int]] = set()
    pids: set[int] = set()
    for e in events:
        key = (e["pid"], e["tid"])
        if key in seen:
            continue
        seen.add(key)
        thread = e.get("args", {}).get("thread", "thread")
        name = f"{thread} ops lane {e['tid'] % 100 - 1}" if e["tid"] % 100 else thread
        meta.append(
            {
                "ph": "M",
                "name": "thread_name",
                "pid": e["pid"],
                "tid": e["tid"],
                "args": {"name": name},
            }
        )
        meta.append(
            {
                "ph": "M",
                "name": "thread_sort_index",
                "pid": e["pid"],
                "tid": e["tid"],
                "args": {"sort_index": e["tid"]},
            }
        )
        if e["pid"] not in pids:
            pids.add(e["pid"])
            label = f"rank {e['pid']}" if e["pid"] < 1 << 20 else f"process {e['pid']}"
            if e["pid"] >= 4096 and "progress" in thread:
                label = f"process {e['pid']} (progress thread)"
            meta.append(
                {
                    "ph": "M",
                    "name": "process_name",
                    "pid": e["pid"],
                    "tid": 0,
                    "args": {"name": label},
                }
            )
    return meta


def merge(files: list[TraceFile], how: str) -> dict[str, Any]:
    """One trace of every file, clocks aligned."""
    align(files, how)
    events = slices(files)
    return {
        "traceEvents": track_names(events) + events,
        "displayTimeUnit": "ns",
        "otherData": {
            "format": "nbcx-trace-merged/1",
            "files": [
                {
                    "path": f.path.name,
                    "rank": f.other.get("rank"),
                    "host": f.other.get("host"),
                    "offset_us": f.offset_us,
                }
                for f in files
            ],
        },
    }


@dataclass
class Group:
    """Figures of the operations of one operation or call site."""

    count: int = 0
    bytes: int = 0
    span_us: float = 0.0
    exposed_us: float = 0.0
    progress_us: float = 0.0
    algs: set[str] = field(default_factory=set)
    durations: list[float] = field(default_factory=list)
    shares: list[float] = field(default_factory=list)
    net_shares: list[float] = field(default_factory=list)
    net_hidden_us: float = 0.0

    def add(self, e: Event, shares_core: bool = False) -> None:
        a = e["args"]
        self.count += 1
        self.bytes += int(a.get("bytes", 0))
        self.span_us += e["dur"]
        self.exposed_us += min(float(a.get("exposed_us", 0.0)), e["dur"])
        self.progress_us += float(a.get("progress_us", 0.0))
        self.algs.add(str(a.get("alg", "?")))
        self.durations.append(e["dur"])
        exposed = min(float(a.get("exposed_us", 0.0)), e["dur"])
        self.shares.append(1.0 - exposed / e["dur"] if e["dur"] > 0 else 0.0)
        # Net of the progress thread's work where it shares the
        # application's core: that work delayed the computation by as much.
        stolen = float(a.get("progress_us", 0.0)) if shares_core else 0.0
        net = max(0.0, e["dur"] - exposed - stolen)
        self.net_hidden_us += net
        self.net_shares.append(net / e["dur"] if e["dur"] > 0 else 0.0)

    def hidden(self) -> float:
        """Share of start-to-completion not spent in the application's calls."""
        return 1.0 - self.exposed_us / self.span_us if self.span_us > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "bytes": self.bytes,
            "mean_us": self.span_us / self.count if self.count else 0.0,
            "median_us": statistics.median(self.durations) if self.durations else 0.0,
            "exposed_us": self.exposed_us,
            "hidden": self.hidden(),
            "hidden_median": statistics.median(self.shares) if self.shares else 0.0,
            "hidden_net": self.net_hidden_us / self.span_us if self.span_us > 0 else 0.0,
            "hidden_net_median": statistics.median(self.net_shares) if self.net_shares else 0.0,
            "progress_us": self.progress_us,
            "algorithms": sorted(self.algs),
        }


def collectives(files: list[TraceFile], last: int | None = None) -> list[Event]:
    """The collective slices; with last, the last N of each rank and operation."""
    ops = [e for e in slices(files) if e.get("cat") == "coll"]
    if last is None:
        return ops
    by: dict[tuple[int, str, int], list[Event]] = defaultdict(list)
    for e in ops:
        by[(e["pid"], e["name"], int(e["args"].get("bytes", 0)))].append(e)
    return sorted((e for g in by.values() for e in g[-last:]), key=lambda e: e["ts"])


def summarise(files: list[TraceFile], last: int | None = None) -> dict[str, Any]:
    """The summary's figures (see summary)."""
    ops = collectives(files, last)
    shares = {
        int(f.other.get("rank", -1))
        if int(f.other.get("rank", -1)) >= 0
        else int(f.other.get("pid", -1)): f.other.get("progress_shares_core") is True
        for f in files
    }
    by_op: dict[str, Group] = defaultdict(Group)
    by_site: dict[str, Group] = defaultdict(Group)
    for e in ops:
        a = e["args"]
        shared = shares.get(int(e["pid"]), False)
        by_op[f"{e['name']} {a.get('bytes', 0)} B"].add(e, shared)
        site = str(a.get("site", "unknown"))
        if a.get("function"):
            site = f"{a['function']} ({site})"
        by_site[f"{site} {e['name']}"].add(e, shared)
    progress: dict[str, dict[str, float]] = {}
    for f in files:
        for e in f.events:
            if e.get("ph") != "X" or e.get("cat") != "progress":
                continue
            key = f"{f.path.name} {e['args'].get('thread', '')}"
            p = progress.setdefault(key, {"run_us": 0.0, "idle_us": 0.0, "runs": 0, "sleeps": 0})
            if e["name"] == "run":
                p["run_us"] += e["dur"]
                p["runs"] += 1
            else:
                p["idle_us"] += e["dur"]
                p["sleeps"] += int(e["args"].get("sleeps", 1))
    return {
        "operations": {k: g.as_dict() for k, g in sorted(by_op.items())},
        "sites": {k: g.as_dict() for k, g in sorted(by_site.items())},
        "progress_threads": progress,
    }


def print_summary(s: dict[str, Any]) -> None:
    """The summary as Markdown tables."""
    head = "| {:<40} | {:>6} | {:>12} | {:>10} | {:>12} | {:>7} | {:>12} |"
    for title, key in (("operation", "operations"), ("call site", "sites")):
        print(
            head.format(
                title, "count", "bytes", "mean (us)", "exposed (us)", "hidden", "progress (us)"
            )
        )
        print("|" + "|".join("-" * w for w in (42, 8, 14, 12, 14, 9, 14)) + "|")
        for name, g in s[key].items():
            print(
                head.format(
                    name[:40],
                    g["count"],
                    g["bytes"],
                    f"{g['mean_us']:.1f}",
                    f"{g['exposed_us']:.1f}",
                    f"{100 * g['hidden']:.0f} %",
                    f"{g['progress_us']:.1f}",
                )
            )
        print()
    for name, p in s["progress_threads"].items():
        print(
            f"progress thread {name}: {p['run_us']:.1f} us running in {p['runs']} "
            f"passes, {p['idle_us']:.1f} us idle ({p['sleeps']} sleeps)"
        )


def parse_window(text: str | None) -> tuple[float | None, float | None]:
    """'T0:T1' in ms, either side may be empty."""
    if not text:
        return None, None
    left, sep, right = text.partition(":")
    if not sep:
        raise TraceError(f"--window {text}: expected T0:T1 (ms)")
    try:
        return (float(left) if left else None, float(right) if right else None)
    except ValueError as e:
        raise TraceError(f"--window {text}: expected numbers of ms") from e


def timeline(files: list[TraceFile], png: Path, window: str | None) -> int:
    """Draws the timeline; returns the number of slices drawn."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError as err:
        raise TraceError(
            "timeline needs matplotlib (apt install python3-matplotlib, or pip)"
        ) from err
    align(files, "auto")
    events = slices(files)
    if not events:
        raise TraceError("no events to draw")
    origin = events[0]["ts"]
    w0, w1 = parse_window(window)
    lo = 0.0 if w0 is None else w0
    hi = max((e["ts"] + e["dur"] - origin) / 1000 for e in events) if w1 is None else w1
    if hi <= lo:
        raise TraceError(f"--window {window}: empty window")
    # rows: per (pid, thread k): the calls, the collectives; progress threads
    rows: dict[tuple[int, int, int], str] = {}
    for e in events:
        k = e["tid"] // 100
        kind = 2 if e.get("cat") == "progress" else 1 if e.get("cat") == "coll" else 0
        label = e["args"].get("thread", "")
        what = ("calls", "collectives", "progress")[kind]
        pid = e["pid"]
        who = f"rank {pid}" if pid < 4096 else f"pid {pid}"
        rows[(pid, k, kind)] = f"{who} {label} {what}" if kind != 2 else f"{who} {label}"
    order = sorted(rows)
    y = {key: len(order) - i for i, key in enumerate(order)}
    colours = {
        "start": "#1f77b4",
        "wait": "#d62728",
        "test": "#ff7f0e",
        "run": "#2ca02c",
        "idle": "#dddddd",
        "flush": "#7f7f7f",
    }
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(order) + 1.6))
    drawn = 0
    spans: dict[tuple[int, int, int], list[float]] = {}
    for e in events:
        t0 = (e["ts"] - origin) / 1000
        t1 = t0 + e["dur"] / 1000
        if t1 < lo or t0 > hi:
            continue
        k = e["tid"] // 100
        cat = e.get("cat")
        kind = 2 if cat == "progress" else 1 if cat == "coll" else 0
        key = (e["pid"], k, kind)
        if kind == 0:
            sp = spans.setdefault(key, [t0, t1])
            sp[0], sp[1] = min(sp[0], t0), max(sp[1], t1)
        if kind == 1:
            lane = e["tid"] % 100 - 1
            h = 0.8 / 4
            base = y[key] - 0.4 + (lane % 4) * h
            ax.broken_barh([(t0, max(t1 - t0, 1e-4))], (base, h * 0.9), facecolors="#9467bd")
        else:
            name = e["name"]
            colour = colours.get(name, colours["flush"])
            for prefix in ("wait", "test"):
                if name.startswith(prefix):
                    colour = colours[prefix]
            ax.broken_barh([(t0, max(t1 - t0, 1e-4))], (y[key] - 0.35, 0.7), facecolors=colour)
        drawn += 1
    for key, (s0, s1) in spans.items():  # computation: between the calls
        ax.broken_barh(
            [(max(s0, lo), min(s1, hi) - max(s0, lo))],
            (y[key] - 0.1, 0.2),
            facecolors="#bcbd22",
            alpha=0.5,
            zorder=0,
        )
    ax.set_yticks([y[k] for k in order], [rows[k] for k in order], fontsize=7)
    ax.set_xlim(lo, hi)
    ax.set_xlabel("time (ms)")
    ax.legend(
        handles=[
            Patch(color="#bcbd22", alpha=0.5, label="computation (outside nbcx)"),
            Patch(color=colours["start"], label="start"),
            Patch(color=colours["test"], label="test"),
            Patch(color=colours["wait"], label="wait"),
            Patch(color="#9467bd", label="collective (start to completion)"),
            Patch(color=colours["run"], label="progress: nodes run"),
            Patch(color=colours["idle"], label="progress: asleep"),
        ],
        fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.35 / (0.1 * len(order) + 1)),
        ncol=4,
        frameon=False,
    )
    ax.set_title(f"nbcx trace: {len(files)} file(s), {drawn} slices", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return drawn


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="nbcx-trace",
        description=(__doc__ or "").split("\n", 1)[1].rsplit("\nExit status", 1)[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit status: 0 success, 1 unreadable or malformed traces, 2 bad usage.",
    )
    parser.add_argument("--version", action="version", version=f"nbcx-trace (nbcx) {VERSION}")
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("merge", help="one file of every rank's, clocks aligned")
    m.add_argument("dir", type=Path)
    m.add_argument("-o", "--output", type=Path, required=True)
    m.add_argument(
        "--align",
        choices=("auto", "barrier", "none"),
        default="auto",
        help="auto: shift files of other hosts by the barrier offset",
    )
    s = sub.add_parser("summary", help="per operation and call site")
    s.add_argument("dir", type=Path)
    s.add_argument("--last", type=int, help="only the last N operations of each rank and op")
    s.add_argument("--json", action="store_true", help="print JSON")
    t = sub.add_parser("timeline", help="a PNG: one row per rank and thread")
    t.add_argument("dir", type=Path)
    t.add_argument("--png", type=Path, required=True)
    t.add_argument("--window", help="T0:T1 in ms from the first event")
    args = parser.parse_args(argv)
    try:
        files = load_dir(args.dir)
        if args.command == "merge":
            merged = merge(files, args.align)
            args.output.write_text(json.dumps(merged))
            n = sum(1 for e in merged["traceEvents"] if e["ph"] == "X")
            print(f"nbcx-trace: {args.output}: {n} slices of {len(files)} file(s)")
        elif args.command == "summary":
            if args.last is not None and args.last < 1:
                raise TraceError("--last must be at least 1")
            result = summarise(files, args.last)
            if args.json:
                print(json.dumps(result, indent=1))
            else:
                print_summary(result)
        else:
            n = timeline(files, args.png, args.window)
            print(f"nbcx-trace: {args.png}: {n} slices")
    except TraceError as e:
        print(f"nbcx-trace: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"nbcx-trace: {e}", file=sys.stderr)
        return 1
    return 0
