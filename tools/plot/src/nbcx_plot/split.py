"""The split-tree chart: measured times against the cost model, for S = 0..H.

``tools/split-sweep`` writes into one directory, for each operation OP:

* ``OP-S<S>.json``: nbcx-bench in split progress mode with
  ``NBCX_SPLIT_LEVELS=S`` (S tree levels nearest the leaves on the
  application, the others on the progress thread), one size, computation
  sized like the blocking collective (``--compute block``);
* ``model-OP.json``: ``nbcx-split-model`` (schema ``nbcx-split-model/1``),
  the model's times for every S in units of one point-to-point transfer of
  the buffer, and the S it picks (``best_S``);

and once ``unit.json``: nbcx-bench of ibcast on 2 ranks at the same size,
whose median ``t_block`` is that unit in seconds.

The chart of OP (``OP-split.png``) has S on the x axis: nbcx's measured
``t_pure`` (collective alone) and ``t_ovrl`` (overlapped with the
computation), medians with min-to-max bars, beside the model's
``t_collective`` and ``t_overlapped`` times the unit, and a vertical line
where the model picks S. The title says how many ranks ran on how many
cores, and "oversubscribed" when there were more ranks than cores.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from nbcx_plot.charts import format_size, format_time, safe_name
from nbcx_plot.data import InputError, Result, Run, Stat, load_run

#: nbcx-bench files of one S: ``OP-S<S>.json``.
RUN_RE = re.compile(r"^(?P<op>[A-Za-z0-9_]+)-S(?P<s>[0-9]+)\.json$")
MODEL_SCHEMA = "nbcx-split-model/1"
UNIT_FILE = "unit.json"

MEASURED_PURE = ("#1f77b4", "o")
MEASURED_OVRL = ("#d62728", "s")


@dataclass(frozen=True)
class ModelPoint:
    """The model's times for one S, in units of one transfer."""

    s: int
    t_collective: float
    t_overlapped: float


@dataclass(frozen=True)
class Model:
    """One ``nbcx-split-model`` document."""

    ranks: int
    app_cores: int
    progress_cores: int
    compute: float
    levels: int
    points: tuple[ModelPoint, ...]
    best_s: int


@dataclass(frozen=True)
class SplitOp:
    """Everything the chart of one operation needs."""

    op: str
    measured: tuple[tuple[int, Result], ...]  # (S, nbcx-bench result), by S
    first: Run  # the run of the smallest S: MPI, machine, ranks
    model: Model
    unit: float  # seconds of one point-to-point transfer of the buffer

    @property
    def bytes(self) -> int:
        return self.measured[0][1].bytes

    @property
    def cores(self) -> int:
        """The machine's cores (the model's application cores if unknown)."""
        return self.first.cores or self.model.app_cores

    @property
    def oversubscribed(self) -> bool:
        return self.first.ranks > self.cores


# ---------------------------------------------------------------- reading --


def _number(doc: dict[str, Any], key: str, where: str, path: Path) -> float:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{path}: {where}{key}: expected a finite number")
    if value < 0:
        raise InputError(f"{path}: {where}{key}: expected a number >= 0, got {value:g}")
    return float(value)


def _integer(doc: dict[str, Any], key: str, where: str, path: Path, minimum: int) -> int:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{path}: {where}{key}: expected an integer")
    if value < minimum:
        raise InputError(f"{path}: {where}{key}: expected at least {minimum}, got {value}")
    return value


def parse_model(doc: object, path: Path) -> Model:
    """Validate a decoded ``nbcx-split-model`` document."""
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object at the top level")
    if doc.get("schema") != MODEL_SCHEMA:
        raise InputError(f"{path}: schema: expected '{MODEL_SCHEMA}', got {doc.get('schema')!r}")
    levels = _integer(doc, "levels", "", path, 0)
    raw = doc.get("points")
    if not isinstance(raw, list):
        raise InputError(f"{path}: points: expected an array")
    points: list[ModelPoint] = []
    for i, item in enumerate(raw):
        where = f"points[{i}]."
        if not isinstance(item, dict):
            raise InputError(f"{path}: points[{i}]: expected an object")
        points.append(
            ModelPoint(
                s=_integer(item, "S", where, path, 0),
                t_collective=_number(item, "t_collective", where, path),
                t_overlapped=_number(item, "t_overlapped", where, path),
            )
        )
    if [p.s for p in points] != list(range(levels + 1)):
        raise InputError(f"{path}: points: expected S = 0..{levels} in order")
    best = _integer(doc, "best_S", "", path, 0)
    if best > levels:
        raise InputError(f"{path}: best_S: {best} is above the {levels} levels")
    return Model(
        ranks=_integer(doc, "ranks", "", path, 1),
        app_cores=_integer(doc, "app_cores", "", path, 1),
        progress_cores=_integer(doc, "progress_cores", "", path, 0),
        compute=_number(doc, "compute", "", path),
        levels=levels,
        points=tuple(points),
        best_s=best,
    )


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON: {e.msg} (line {e.lineno})") from None


def _only_result(run: Run, op: str) -> Result:
    results = run.results_for(op)
    if len(results) != 1:
        raise InputError(f"{run.path}: expected one result of {op} (one size), got {len(results)}")
    return results[0]


def _load_op(directory: Path, op: str, files: dict[int, Path], unit_run: Run) -> SplitOp:
    measured: list[tuple[int, Result]] = []
    runs: list[Run] = []
    for s in sorted(files):
        run = load_run(files[s])
        if run.progress != "split":
            raise InputError(f"{run.path}: progress mode '{run.progress}', not split")
        measured.append((s, _only_result(run, op)))
        runs.append(run)
    first = runs[0]
    for run, (_s, result) in zip(runs, measured, strict=True):
        if run.ranks != first.ranks:
            raise InputError(f"{run.path}: {run.ranks} ranks, {first.path.name} has {first.ranks}")
        if result.bytes != measured[0][1].bytes:
            raise InputError(
                f"{run.path}: {result.bytes} bytes, {first.path.name} has {measured[0][1].bytes}"
            )

    model_path = directory / f"model-{op}.json"
    model = parse_model(_read_json(model_path), model_path)
    if model.ranks != first.ranks:
        raise InputError(f"{model_path}: model of {model.ranks} ranks, measured {first.ranks}")
    if max(files) > model.levels:
        raise InputError(
            f"{files[max(files)]}: S={max(files)} is above the model's {model.levels} levels"
        )

    unit_result = unit_run.results[0]
    if unit_result.bytes != measured[0][1].bytes:
        raise InputError(
            f"{unit_run.path}: unit measured at {unit_result.bytes} bytes, "
            f"{op} at {measured[0][1].bytes}"
        )
    if not unit_result.t_block.median > 0:
        raise InputError(f"{unit_run.path}: the unit (median t_block) is 0")
    return SplitOp(
        op=op,
        measured=tuple(measured),
        first=first,
        model=model,
        unit=unit_result.t_block.median,
    )


def load_split(directory: Path, ops: list[str] | None = None) -> list[SplitOp]:
    """The operations of a split-sweep directory (or only ``ops``), by name."""
    if not directory.is_dir():
        raise InputError(f"{directory}: not a directory")
    by_op: dict[str, dict[int, Path]] = {}
    for path in directory.iterdir():
        m = RUN_RE.match(path.name)
        if m:
            by_op.setdefault(m["op"], {})[int(m["s"])] = path
    if not by_op:
        raise InputError(f"{directory}: no OP-S<S>.json files (tools/split-sweep writes them)")
    if ops is not None:
        missing = [op for op in ops if op not in by_op]
        if missing or not ops:
            have = ", ".join(sorted(by_op))
            raise InputError(
                f"{directory}: no files of '{missing[0] if missing else ''}' (have: {have})"
            )
    unit_run = load_run(directory / UNIT_FILE)
    if len(unit_run.results) != 1:
        raise InputError(f"{unit_run.path}: expected one result, got {len(unit_run.results)}")
    return [_load_op(directory, op, by_op[op], unit_run) for op in (ops or sorted(by_op))]


# ---------------------------------------------------------------- drawing --


def _errorbar(
    ax: Axes, xs: list[float], stats: list[Stat], style: tuple[str, str], label: str
) -> None:
    """Medians joined by a line, with min-to-max bars."""
    color, marker = style
    med = [st.median for st in stats]
    low = [m - st.min for m, st in zip(med, stats, strict=True)]
    high = [st.max - m for m, st in zip(med, stats, strict=True)]
    ax.errorbar(
        xs,
        med,
        yerr=[low, high],
        color=color,
        marker=marker,
        markersize=6,
        linewidth=1.6,
        capsize=4,
        label=label,
    )


def title_lines(data: SplitOp) -> tuple[str, str]:
    """The bold title and the small subtitle of the chart."""
    run, model = data.first, data.model
    crowd = f"{run.ranks} ranks on {data.cores} cores"
    if data.oversubscribed:
        crowd += ", oversubscribed"
    title = f"{data.op} {format_size(data.bytes)}: split tree, measured and model ({crowd})"
    progress = (
        f"progress threads on {model.progress_cores} cores of their own"
        if model.progress_cores
        else "progress threads share the application's cores"
    )
    subtitle = (
        f"{run.mpi} · network {run.network} · {progress}\n"
        f"computation = t_block = {model.compute:.3g} units; "
        f"unit = one point-to-point transfer of the buffer = {format_time(data.unit)}\n"
        "measured (nbcx): median over repetitions of the max over ranks, bars min to max; "
        "model: its units times the unit"
    )
    return title, subtitle


def render_split(data: SplitOp, dpi: int = 120) -> Figure:
    """The chart of one operation (see the module's description)."""
    fig = Figure(figsize=(10.0, 6.6), layout="constrained", dpi=dpi)
    ax = fig.add_subplot()
    title, subtitle = title_lines(data)
    fig.suptitle(title, fontweight="bold")
    ax.set_title(subtitle, fontsize="small", color="0.25")

    xs = [float(s) for s, _r in data.measured]
    _errorbar(
        ax,
        xs,
        [r.nbcx.t_pure for _s, r in data.measured],
        MEASURED_PURE,
        "measured t_pure (collective alone)",
    )
    _errorbar(
        ax,
        xs,
        [r.nbcx.t_ovrl for _s, r in data.measured],
        MEASURED_OVRL,
        "measured t_ovrl (overlapped with the computation)",
    )

    model = data.model
    ms = [float(p.s) for p in model.points]
    ax.plot(
        ms,
        [p.t_collective * data.unit for p in model.points],
        color=MEASURED_PURE[0],
        linestyle="--",
        marker="x",
        label="model t_collective",
    )
    ax.plot(
        ms,
        [p.t_overlapped * data.unit for p in model.points],
        color=MEASURED_OVRL[0],
        linestyle="--",
        marker="x",
        label="model t_overlapped",
    )

    best_measured = min(data.measured, key=lambda m: m[1].nbcx.t_ovrl.median)
    ax.plot(
        [best_measured[0]],
        [best_measured[1].nbcx.t_ovrl.median],
        linestyle="none",
        marker="*",
        markersize=16,
        color=MEASURED_OVRL[0],
        markeredgecolor="black",
        label=f"least measured t_ovrl: S={best_measured[0]}",
    )
    ax.axvline(model.best_s, color="0.3", linestyle=":", linewidth=1.5)
    ax.annotate(
        f"model picks S={model.best_s}",
        (model.best_s, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(5, -14),
        textcoords="offset points",
        fontsize="medium",
        fontweight="bold",
        color="0.2",
    )

    ax.set_xlim(-0.4, model.levels + 0.4)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(
        f"S: tree levels (nearest the leaves) on the application; the other "
        f"{model.levels} - S on the progress thread"
    )
    top = max(
        [r.nbcx.t_ovrl.max for _s, r in data.measured]
        + [r.nbcx.t_pure.max for _s, r in data.measured]
        + [p.t_overlapped * data.unit for p in model.points]
    )
    ax.set_ylim(0, top * 1.12 if top > 0 else 1.0)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_time(v)))
    ax.set_ylabel("time per operation")
    ax.grid(True, alpha=0.35)
    # Outside the axes (the curves may be anywhere in them), in columns:
    # measured, model, then the least measured point.
    handles, labels = ax.get_legend_handles_labels()
    rank = {"measured t_pure": 0, "measured t_ovrl": 1, "model t_collective": 2}
    order = sorted(range(len(labels)), key=lambda i: rank.get(" ".join(labels[i].split()[:2]), 3))
    fig.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc="outside lower center",
        ncols=3,
        fontsize="small",
    )
    return fig


def write_split_charts(
    directory: Path,
    outdir: Path,
    *,
    ops: list[str] | None = None,
    prefix: str = "",
    dpi: int = 120,
) -> list[Path]:
    """Write ``OP-split.png`` for each operation; return the paths written.

    Raises InputError for a bad directory, before anything is written.
    """
    data = load_split(directory, ops)
    outdir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for d in data:
        path = outdir / f"{prefix}{safe_name(d.op)}-split.png"
        render_split(d, dpi).savefig(path, format="png")
        written.append(path)
    return written
