"""The simulator's charts: predicted completion time of nbcx-sim runs.

``nbcx-sim --json`` (schema ``nbcx-sim/1``, docs/sim.md) writes one
document with a ``results`` list, one entry per (op, algorithm, ranks,
size): ``t_max_us`` (the last rank done), ``t_median_us``, ``t_min_us``,
and an ``error`` instead for a combination that could not be simulated.

For each operation, ``sim-OP.png`` draws ``t_max_us`` on a log axis
against the size (log2) when the results have several sizes, else
against the number of ranks; one line per algorithm (and per number of
ranks, or per size, of the other axis). Several files may be given: their
results are pooled, labelled by file when more than one is given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from nbcx_plot.charts import format_size, format_time, safe_name
from nbcx_plot.data import InputError

SCHEMA = "nbcx-sim/1"


@dataclass(frozen=True)
class SimPoint:
    """One simulated combination."""

    source: str
    op: str
    alg: str
    ranks: int
    nbytes: int
    t_max_us: float
    t_median_us: float


def _number(r: dict[str, Any], key: str, where: str) -> float:
    v = r.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"{where}: '{key}' must be a number")
    return float(v)


def parse_sim(doc: object, path: Path) -> list[SimPoint]:
    """The points of one nbcx-sim document (entries with an error are left out)."""
    if not isinstance(doc, dict) or doc.get("format") != SCHEMA:
        raise InputError(f"{path}: not an nbcx-sim document (format {SCHEMA!r})")
    results = doc.get("results")
    if not isinstance(results, list):
        raise InputError(f"{path}: 'results' must be a list")
    points: list[SimPoint] = []
    for i, r in enumerate(results):
        where = f"{path}: results[{i}]"
        if not isinstance(r, dict):
            raise InputError(f"{where}: must be an object")
        if "error" in r:
            continue
        op, alg = r.get("op"), r.get("alg")
        if not isinstance(op, str) or not isinstance(alg, str):
            raise InputError(f"{where}: 'op' and 'alg' must be strings")
        points.append(
            SimPoint(
                source=path.stem,
                op=op,
                alg=alg,
                ranks=int(_number(r, "ranks", where)),
                nbytes=int(_number(r, "bytes", where)),
                t_max_us=_number(r, "t_max_us", where),
                t_median_us=_number(r, "t_median_us", where),
            )
        )
    return points


def load_sim(paths: list[Path]) -> list[SimPoint]:
    points: list[SimPoint] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise InputError(f"{path}: {e.strerror or e}") from e
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}: not JSON: {e}") from e
        points.extend(parse_sim(doc, path))
    if not points:
        raise InputError("no simulated results in the input")
    return points


def render_sim(op: str, points: list[SimPoint], several_files: bool, dpi: int) -> Figure:
    """The chart of one operation."""
    sizes = sorted({p.nbytes for p in points})
    by_size = len(sizes) > 1
    fig = Figure(figsize=(8, 5), dpi=dpi)
    ax = fig.add_subplot()
    lines: dict[tuple[str, str, int], list[SimPoint]] = {}
    for p in points:
        other = p.ranks if by_size else p.nbytes
        lines.setdefault((p.source if several_files else "", p.alg, other), []).append(p)
    for (source, alg, other), pts in sorted(lines.items()):
        pts.sort(key=lambda q: q.nbytes if by_size else q.ranks)
        xs = [q.nbytes if by_size else q.ranks for q in pts]
        ys = [q.t_max_us * 1e-6 for q in pts]
        label = f"{alg}, " + (f"{other} ranks" if by_size else format_size(other))
        if source:
            label = f"{source}: {label}"
        ax.plot(xs, ys, marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    if by_size:
        ax.set_xlabel("size (bytes: buffer, or block per peer)")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_size(v)))
    else:
        ax.set_xlabel("ranks")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_time(v)))
    ax.set_ylabel("predicted time (last rank done)")
    ax.set_title(f"{op}: nbcx-sim (LogGP)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def write_sim_charts(
    paths: list[Path], outdir: Path, *, prefix: str = "", dpi: int = 120
) -> list[Path]:
    """Write ``sim-OP.png`` per operation; return the paths written.

    Raises InputError for a bad input file, before anything is written.
    """
    points = load_sim(paths)
    outdir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for op in sorted({p.op for p in points}):
        path = outdir / f"{prefix}sim-{safe_name(op)}.png"
        fig = render_sim(op, [p for p in points if p.op == op], len(paths) > 1, dpi)
        fig.savefig(path, format="png")
        written.append(path)
    return written
