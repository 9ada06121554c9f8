"""The charts: for each operation, one PNG per metric.

Charts of MPI runs compare nbcx with the native MPI library.  Charts of
inproc runs (ranks as threads, schema ``nbcx-bench/1.1``) show paper 000's
variants instead: blocking, nbc and nbc+overlap (:data:`INPROC_METRICS`),
with a chart of nbc and of nbc+overlap's communication time relative to the
blocking time.  Each input file is
a *series* (one colour), labelled by what distinguishes it from the other
files (MPI library, ranks, network, ...); what all files share goes into
the chart's subtitle.  Within a series the line style tells the
implementation: nbcx solid, native MPI dashed, the blocking collective
dotted.  Lines show medians over repetitions (each repetition being the
maximum over ranks); shaded bands (whiskers on points) span the minimum to
the maximum -- by default only when a chart has a single series, as the
bands of several series hide each other.

An operation measured at a single size only (``ibarrier``, which has no
payload) is drawn as points with whiskers, grouped by series, instead of
lines.

The figures are built with :class:`matplotlib.figure.Figure` directly, not
pyplot, so no GUI backend and no global state are involved.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

from nbcx_plot.data import Result, Run, Stat

# ----------------------------------------------------------------- metrics --


LineStyle = Literal["-", "--", ":", "-."]


@dataclass(frozen=True)
class Curve:
    """One quantity drawn for every series: a line (or a point per series)."""

    name: str  # legend text, e.g. "nbcx"
    get: Callable[[Result], Stat | None]  # None: not measured in this run
    linestyle: LineStyle
    marker: str


NBCX_STYLE: tuple[LineStyle, str] = ("-", "o")
NATIVE_STYLE: tuple[LineStyle, str] = ("--", "s")
BLOCKING_STYLE: tuple[LineStyle, str] = (":", "^")


def _native(r: Result, stat: str) -> Stat | None:
    return r.native.stat(stat) if r.native is not None else None


def _impl_curves(stat: str) -> tuple[Curve, ...]:
    """The nbcx and native curves of per-implementation statistic ``stat``."""
    return (
        Curve("nbcx", lambda r: r.nbcx.stat(stat), *NBCX_STYLE),
        Curve("native MPI", lambda r: _native(r, stat), *NATIVE_STYLE),
    )


def _ratio(num: Stat, den: Stat) -> Stat:
    """The ratio of two medians (no spread: the repetitions do not pair)."""
    value = num.median / den.median if den.median > 0 else 0.0
    return Stat(value, value, value)


@dataclass(frozen=True)
class Metric:
    """One chart per operation: what is drawn and how the y axis reads."""

    key: str  # file name suffix
    title: str
    ylabel: str
    # "percent" (fractions drawn as %), "time" (seconds, log axis) or
    # "ratio" (log axis, with lines at 1 and 1.05)
    kind: str
    curves: tuple[Curve, ...]


METRICS: tuple[Metric, ...] = (
    Metric(
        key="overlap",
        title="overlap of communication with computation",
        ylabel="overlap, IMB-NBC definition",
        kind="percent",
        curves=_impl_curves("overlap"),
    ),
    Metric(
        key="time",
        title="time without computation (start, then wait at once)",
        ylabel="time per operation",
        kind="time",
        curves=(
            Curve("nbcx", lambda r: r.nbcx.t_pure, *NBCX_STYLE),
            Curve("native MPI", lambda r: _native(r, "t_pure"), *NATIVE_STYLE),
            Curve("native blocking", lambda r: r.t_block, *BLOCKING_STYLE),
        ),
    ),
    Metric(
        key="cpu",
        title="CPU used by progress (threads other than the application's)",
        ylabel="CPU time of other threads / wall time",
        kind="percent",
        curves=_impl_curves("cpu_progress"),
    ),
    Metric(
        key="overhead",
        title="overhead: time inside start + test + wait while computing",
        ylabel="time inside nbcx/MPI calls",
        kind="time",
        curves=_impl_curves("overhead"),
    ),
)

#: The charts of inproc runs: paper 000's Fig. 6 variants.
INPROC_METRICS: tuple[Metric, ...] = (
    Metric(
        key="overlap",
        title="overlap of communication with computation (nbc+overlap)",
        ylabel="overlap, IMB-NBC definition",
        kind="percent",
        curves=(Curve("nbc+overlap", lambda r: r.nbcx.overlap, *NBCX_STYLE),),
    ),
    Metric(
        key="time",
        title="blocking, nbc, and the communication time of nbc+overlap",
        ylabel="time per operation",
        kind="time",
        curves=(
            Curve("blocking", lambda r: r.t_block, *BLOCKING_STYLE),
            Curve("nbc (start, wait at once)", lambda r: r.nbcx.t_pure, *NBCX_STYLE),
            Curve("nbc+overlap: in start+test+wait", lambda r: r.nbcx.overhead, *NATIVE_STYLE),
        ),
    ),
    Metric(
        key="cpu",
        title="CPU used by progress (threads other than the ranks)",
        ylabel="CPU time of other threads / wall time",
        kind="percent",
        curves=(Curve("nbc+overlap", lambda r: r.nbcx.cpu_progress, *NBCX_STYLE),),
    ),
    Metric(
        key="ratio",
        title="nbc and nbc+overlap's communication time relative to blocking",
        ylabel="time / blocking time",
        kind="ratio",
        curves=(
            Curve("nbc / blocking", lambda r: _ratio(r.nbcx.t_pure, r.t_block), *NBCX_STYLE),
            Curve(
                "nbc+overlap communication / blocking",
                lambda r: _ratio(r.nbcx.overhead, r.t_block),
                *NATIVE_STYLE,
            ),
        ),
    ),
)

#: Every chart name, for the command line (ratio: inproc runs only).
METRIC_KEYS = tuple(dict.fromkeys(m.key for m in (*METRICS, *INPROC_METRICS)))


def metrics_for(runs: Sequence[Run]) -> tuple[Metric, ...]:
    """The charts of these runs: :data:`INPROC_METRICS` for inproc runs,
    :data:`METRICS` for MPI runs. Raises ValueError when they are mixed."""
    kinds = {r.inproc for r in runs}
    if len(kinds) > 1:
        raise ValueError("inproc and MPI results cannot share a chart: plot them separately")
    return INPROC_METRICS if kinds == {True} else METRICS


#: Operations whose "bytes" is the block exchanged with each peer.
PER_PEER_OPS = frozenset(
    {
        "igather",
        "iscatter",
        "iallgather",
        "ialltoall",
        "gather",
        "scatter",
        "allgather",
        "alltoall",
        "igatherv",
        "iscatterv",
        "iallgatherv",
        "ialltoallv",
        "ireduce_scatter_block",
    }
)

# ------------------------------------------------------------- formatting --


def format_size(nbytes: float) -> str:
    """A byte count with a binary unit: 4 B, 64 KiB, 1.5 MiB, 16 MiB."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.4g} {unit}"
    return f"{nbytes:.4g} B"


def format_time(seconds: float) -> str:
    """A duration with a readable unit: 800 ns, 12 µs, 3.5 ms, 1.2 s."""
    if seconds <= 0:
        return "0"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale * 0.9999:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def safe_name(op: str) -> str:
    """``op`` made safe for a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", op)


def size_label(op: str) -> str:
    """The x axis label: what "bytes" means for ``op``."""
    if op in PER_PEER_OPS:
        return "message size (block per peer, per rank)"
    return "message size (buffer per rank)"


# ------------------------------------------------------------------ series --


@dataclass(frozen=True)
class Series:
    """One input file as drawn: its run, legend label and colour."""

    run: Run
    label: str
    color: str


def _describe(run: Run) -> dict[str, str]:
    """The properties that may tell runs apart, as display strings."""
    machine = run.hostname or "unknown machine"
    details = ", ".join(p for p in (run.cpu_model, f"{run.cores} cores" if run.cores else "") if p)
    progress = f"progress: {run.progress}"
    if run.inproc and run.block_progress:
        progress += f", blocking in {run.block_progress} mode"
    return {
        "mpi": run.mpi,
        "ranks": f"{run.ranks} {'thread ' if run.inproc else ''}rank"
        + ("s" if run.ranks != 1 else ""),
        "network": run.network,
        "progress": progress,
        "tests": f"{run.tests} tests during computation" if run.tests else "no tests",
        "nbcx": f"nbcx {run.nbcx_version}" if run.nbcx_version else "",
        "machine": f"{machine} ({details})" if details else machine,
    }


def make_series(runs: Sequence[Run]) -> tuple[list[Series], str]:
    """Label each run by what distinguishes it; return the shared description.

    The shared description (properties equal in every run) becomes the
    chart subtitle; the differing ones make up the legend labels.
    """
    described = [_describe(r) for r in runs]
    keys = list(described[0])
    differing = [k for k in keys if len({d[k] for d in described}) > 1]
    common = [k for k in keys if k not in differing]

    labels = [", ".join(d[k] for k in differing if d[k]) for d in described]
    if len(set(labels)) < len(labels):
        # Identical metadata (e.g. two repeats of one run): add file names.
        labels = [
            f"{lab} [{r.path.name}]" if lab else r.path.name
            for lab, r in zip(labels, runs, strict=True)
        ]

    shown_common = [
        described[0][k]
        for k in common
        if described[0][k] and not (k == "tests" and runs[0].tests == 0)
    ]
    on_machine = ""
    if "machine" in common:
        shown_common.remove(described[0]["machine"])
        on_machine = "on " + described[0]["machine"]
    subtitle = " · ".join(shown_common)
    if on_machine:
        subtitle = f"{subtitle}\n{on_machine}" if subtitle else on_machine

    palette = _palette(len(runs))
    return [
        Series(run, label, palette[i])
        for i, (run, label) in enumerate(zip(runs, labels, strict=True))
    ], subtitle


def _palette(n: int) -> list[str]:
    """Distinct colours: matplotlib's tab10, or tab20 for more series."""
    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [to_hex(cmap(i % cmap.N)) for i in range(n)]


# ------------------------------------------------------------------ charts --


@dataclass(frozen=True)
class Options:
    """Rendering options from the command line."""

    bands: bool | None = None  # min-max ranges; None: only with a single series
    dpi: int = 120


def _scale(metric: Metric, value: float) -> float:
    return value * 100.0 if metric.kind == "percent" else value


def _setup_y(ax: Axes, metric: Metric, values: list[float]) -> None:
    """Y axis: percent (linear), ratio (log2, lines at 1 and 1.05) or time
    (log, readable units)."""
    if metric.kind == "ratio":
        # Log scale around 1: 0.3 and 16 both readable, 1 in the middle.
        positive = [v for v in values if v > 0] or [1.0]
        lo = min(0.5, min(positive) / 1.2)
        hi = max(2.0, max(positive) * 1.2)
        ax.set_yscale("log", base=2)
        ax.set_ylim(lo, hi)
        exps = range(math.floor(math.log2(lo)), math.ceil(math.log2(hi)) + 1)
        ax.yaxis.set_major_locator(FixedLocator([2.0**e for e in exps]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.axhline(1.0, color="0.3", linewidth=1.0, zorder=0)
        ax.axhline(1.05, color="0.5", linewidth=0.8, linestyle=(0, (1, 3)), zorder=0)
        ax.set_ylabel(f"{metric.ylabel} (log; dotted: 1.05)")
        return
    if metric.kind == "percent":
        top = max(values, default=0.0)
        # Overlap is bounded by 100 %; CPU may exceed it with several threads.
        ceiling = 100.0 if metric.key == "overlap" else max(10.0, top * 1.15)
        ax.set_ylim(-0.02 * ceiling, max(ceiling, top) * 1.04)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:.0f} %"))
        ax.set_ylabel(f"{metric.ylabel} (%)")
        return
    ax.set_yscale("log")
    positive = [v for v in values if v > 0]
    span = max(positive) / min(positive) if positive else 1.0
    # Few decades: label 1-2-5 steps so that the axis still has numbers.
    subs = (1.0,) if span > 300 else (1.0, 2.0, 5.0)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_time(v)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel(metric.ylabel)


def _setup_x_sizes(ax: Axes, sizes: list[int]) -> None:
    """X axis: log2 message size with at most ~12 labelled powers of two."""
    ax.set_xscale("log", base=2)
    lo = math.floor(math.log2(min(sizes)))
    hi = math.ceil(math.log2(max(sizes)))
    step = max(1, math.ceil((hi - lo + 1) / 12))
    # Align labelled exponents on multiples of step so labels are round.
    first = lo + (-lo) % step
    majors = [2.0**e for e in range(first, hi + 1, step)]
    ax.xaxis.set_major_locator(FixedLocator(majors))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_size(v)))
    ax.xaxis.set_minor_locator(FixedLocator([2.0**e for e in range(lo, hi + 1)]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    pad = 2.0**0.25
    ax.set_xlim(min(sizes) / pad, max(sizes) * pad)


def _legends(fig: Figure, ax: Axes, series: list[Series], curves: Sequence[Curve]) -> None:
    """One legend for the line styles (implementations), one for the series."""
    if len(series) == 1:
        ax.legend(loc="best", fontsize="small")
        return
    styles = [
        Line2D([], [], color="0.2", linestyle=c.linestyle, marker=c.marker, label=c.name)
        for c in curves
    ]
    colors = [Patch(facecolor=s.color, label=s.label) for s in series]
    fig.legend(handles=styles, loc="outside right upper", fontsize="small", title="line")
    fig.legend(handles=colors, loc="outside right lower", fontsize="small", title="series")


def _line_chart(
    fig: Figure, ax: Axes, op: str, metric: Metric, series: list[Series], opts: Options
) -> None:
    sizes: list[int] = []
    values: list[float] = []
    for s in series:
        results = [r for r in s.run.results_for(op) if r.bytes > 0]
        if not results:
            continue
        sizes += [r.bytes for r in results]
        for c in metric.curves:
            got = [(r, c.get(r)) for r in results]
            pairs = [(r, st) for r, st in got if st is not None]
            if not pairs:
                continue
            x = [float(r.bytes) for r, _ in pairs]
            stats = [st for _, st in pairs]
            med = [_scale(metric, st.median) for st in stats]
            lo = [_scale(metric, st.min) for st in stats]
            hi = [_scale(metric, st.max) for st in stats]
            values += med + (lo + hi if opts.bands else [])
            if metric.kind == "time":
                # A log axis cannot show zeros; leave gaps instead.
                med = [v if v > 0 else math.nan for v in med]
                lo = [v if v > 0 else math.nan for v in lo]
            label = c.name if len(series) == 1 else f"{s.label}: {c.name}"
            ax.plot(
                x,
                med,
                color=s.color,
                linestyle=c.linestyle,
                marker=c.marker,
                markersize=4,
                linewidth=1.6,
                label=label,
            )
            if opts.bands:
                alpha = 0.12 if len(series) == 1 else 0.07
                ax.fill_between(x, lo, hi, color=s.color, alpha=alpha, linewidth=0)
    _setup_x_sizes(ax, sizes)
    _setup_y(ax, metric, values)
    ax.set_xlabel(size_label(op))
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", axis="x", alpha=0.12)
    _legends(fig, ax, series, metric.curves)


def _point_chart(ax: Axes, op: str, metric: Metric, series: list[Series], opts: Options) -> None:
    """Markers with min-max whiskers, for an operation measured at one size.

    Points rather than bars: a bar's length means nothing on a log axis, and
    one slow repetition would squash every bar on a linear one.
    """
    groups = [s for s in series if s.run.results_for(op)]
    size = max(r.bytes for s in groups for r in s.run.results_for(op))
    groups = [s for s in groups if any(r.bytes == size for r in s.run.results_for(op))]
    n = len(metric.curves)
    width = 0.6 / n
    values: list[float] = []
    for gi, s in enumerate(groups):
        r = next(r for r in s.run.results_for(op) if r.bytes == size)
        for ci, c in enumerate(metric.curves):
            got = c.get(r)
            if got is None:
                continue
            st = got
            med, lo, hi = (_scale(metric, v) for v in (st.median, st.min, st.max))
            values += [med] + ([lo, hi] if opts.bands else [])
            if metric.kind == "time" and med <= 0:
                continue  # not drawable on the log axis
            x = gi + (ci - (n - 1) / 2) * width
            ax.errorbar(
                [x],
                [med],
                yerr=[[med - lo], [hi - med]] if opts.bands else None,
                fmt=c.marker,
                color=s.color,
                markersize=7,
                capsize=4,
                elinewidth=1.2,
            )
            text = {"percent": f"{med:.3g} %", "ratio": f"{med:.3g}"}.get(
                metric.kind, format_time(med)
            )
            ax.annotate(
                text,
                (x, med),
                xytext=(7, 0),
                textcoords="offset points",
                va="center",
                fontsize="small",
            )
    _setup_y(ax, metric, values)
    ax.set_xticks(range(len(groups)), [s.label or s.run.path.name for s in groups])
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.grid(True, axis="y", alpha=0.35)
    ax.set_xlabel(f"{size_label(op)}: {format_size(size)}" if size else "no payload (0 B)")
    handles = [
        Line2D([], [], color="0.2", linestyle="none", marker=c.marker, label=c.name)
        for c in metric.curves
    ]
    ax.legend(handles=handles, loc="best", fontsize="small")


def render(op: str, metric: Metric, series: list[Series], subtitle: str, opts: Options) -> Figure:
    """The chart of ``metric`` for ``op`` over all series that measured it."""
    present = [s for s in series if s.run.results_for(op)]
    lines = _is_line(op, present)
    if opts.bands is None:
        # Whiskers on points stay readable; shaded bands of several series do not.
        opts = replace(opts, bands=not lines or len(present) == 1)
    if metric.kind == "ratio":
        opts = replace(opts, bands=False)  # a ratio of medians has no spread
    wide = len(present) > 1 and lines
    fig = Figure(figsize=(11.5 if wide else 9.0, 5.6), layout="constrained", dpi=opts.dpi)
    ax = fig.add_subplot()
    fig.suptitle(f"{op}: {metric.title}", fontweight="bold")
    note = "median over repetitions (each the maximum over ranks)"
    if metric.kind == "ratio":
        note = "ratio of the medians over repetitions (each the maximum over ranks)"
    if opts.bands:
        note += "; " + ("shaded: min to max" if lines else "whiskers: min to max")
    ax.set_title(f"{subtitle}\n{note}" if subtitle else note, fontsize="small", color="0.25")
    if lines:
        _line_chart(fig, ax, op, metric, present, opts)
    else:
        _point_chart(ax, op, metric, present, opts)
    return fig


def _is_line(op: str, series: list[Series]) -> bool:
    """Lines need two distinct positive sizes; otherwise the op gets points."""
    return len({r.bytes for s in series for r in s.run.results_for(op) if r.bytes > 0}) >= 2


def write_charts(
    runs: Sequence[Run],
    outdir: Path,
    *,
    ops: Sequence[str] | None = None,
    metrics: Sequence[str] = METRIC_KEYS,
    prefix: str = "",
    opts: Options | None = None,
) -> list[Path]:
    """Write one PNG per (operation, metric); return the paths written.

    The metrics are those of the runs' kind (:func:`metrics_for`); keys of
    the other kind are skipped. Raises ValueError for mixed runs."""
    opts = opts or Options()
    series, subtitle = make_series(runs)
    all_ops = list(dict.fromkeys(op for r in runs for op in r.ops()))
    chosen = [m for m in metrics_for(runs) if m.key in metrics]
    written: list[Path] = []
    outdir.mkdir(parents=True, exist_ok=True)
    for op in ops if ops is not None else all_ops:
        for metric in chosen:
            fig = render(op, metric, series, subtitle, opts)
            path = outdir / f"{prefix}{safe_name(op)}-{metric.key}.png"
            fig.savefig(path, format="png")
            written.append(path)
    return written
