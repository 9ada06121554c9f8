"""Medians over sittings: the same ``tools/bench-compare`` runs, repeated.

One run of a benchmark on a small shared machine says little: overlap moves
by 10-20 points from one sitting to the next. A *sitting* is the directory of
nbcx-bench JSON files that one ``tools/bench-compare --out DIR`` run wrote;
each file is named ``<config>-<column>.json``, where ``<config>`` is
``<mpi>-<net>-np<ranks>`` and ``<column>`` a progress mode with its transport
(``auto-mpi``, ``thread-ucx``) or a ``--variant``'s name.

For every configuration, column, operation and size this takes the median
over the sittings of each sitting's medians: nbcx's pure time over the
native ``MPI_I*`` call's of the same run, nbcx's overlap, its progress CPU
and its time inside calls (in % of the native blocking time), with the range
over sittings. ``compare`` counts, for a pair of columns A and B, the points
where A's median overlap is at least B's.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .charts import format_size, safe_name
from .data import InputError, Run, load_run

#: ``<mpi>-<net>-np<ranks>-<column>``: a bench-compare file name's stem.
NAME_RE = re.compile(r"^(?P<config>.+?-np[0-9]+)-(?P<column>.+)$")

#: The figures summarised, with their headings and formats.
FIGURES = (
    ("overlap", "overlap (%)", "{:.0f}"),
    ("ratio", "pure time / native MPI_I*", "{:.2f}"),
    ("cpu", "progress CPU (%)", "{:.0f}"),
    ("calls", "time in calls (% of native blocking)", "{:.0f}"),
)


@dataclass(frozen=True)
class Point:
    """One sitting's figures for one column at one operation and size."""

    ratio: float
    overlap: float  # %
    cpu: float  # %
    calls: float  # % of native blocking
    native_overlap: float  # %

    def figure(self, name: str) -> float:
        value = getattr(self, name)
        assert isinstance(value, float)
        return value


Key = tuple[str, int]  # (operation, bytes)


@dataclass
class Column:
    """A column's points, one list of sittings per (operation, size)."""

    name: str
    points: dict[Key, list[Point]]


@dataclass
class Config:
    """One MPI, network and rank count: its columns, in first-seen order."""

    name: str
    describe: str
    columns: dict[str, Column]


def _point(run: Run, op: str, nbytes: int) -> Point | None:
    r = next((r for r in run.results if r.op == op and r.bytes == nbytes), None)
    if r is None or r.native is None:
        return None
    blocking = r.t_block.median
    return Point(
        ratio=r.nbcx.t_pure.median / r.native.t_pure.median,
        overlap=r.nbcx.overlap.median * 100,
        cpu=r.nbcx.cpu_progress.median * 100,
        calls=r.nbcx.overhead.median / blocking * 100 if blocking > 0 else float("nan"),
        native_overlap=r.native.overlap.median * 100,
    )


def load_sittings(dirs: Sequence[Path]) -> list[Config]:
    """Reads every ``*.json`` of every sitting directory. Raises
    :class:`InputError` for a directory without bench-compare files, a file
    that is not nbcx-bench's, or an inproc file (no native to compare)."""
    configs: dict[str, Config] = {}
    for d in dirs:
        if not d.is_dir():
            raise InputError(f"{d}: not a directory")
        files = sorted(p for p in d.glob("*.json") if NAME_RE.match(p.stem))
        if not files:
            raise InputError(f"{d}: no <mpi>-<net>-np<ranks>-<column>.json files")
        for path in files:
            m = NAME_RE.match(path.stem)
            assert m is not None
            run = load_run(path)
            if run.inproc:
                raise InputError(f"{path}: inproc results have no native to compare")
            cfg = configs.setdefault(
                m["config"],
                Config(
                    m["config"],
                    f"{run.mpi}, {run.network}, {run.ranks} ranks on {run.cores or '?'} cores",
                    {},
                ),
            )
            col = cfg.columns.setdefault(m["column"], Column(m["column"], {}))
            for r in run.results:
                p = _point(run, r.op, r.bytes)
                if p is not None:
                    col.points.setdefault((r.op, r.bytes), []).append(p)
    return list(configs.values())


def _keys(cfg: Config) -> list[Key]:
    keys: dict[Key, None] = {}
    for col in cfg.columns.values():
        keys.update(dict.fromkeys(col.points))
    ops = list(dict.fromkeys(op for op, _ in keys))
    return sorted(keys, key=lambda k: (ops.index(k[0]), k[1]))


def median(col: Column, key: Key, figure: str) -> float | None:
    """The median over sittings of ``figure`` at ``key``, or None."""
    pts = col.points.get(key)
    return statistics.median(p.figure(figure) for p in pts) if pts else None


def _cell(col: Column, key: Key, figure: str, fmt: str) -> str:
    pts = col.points.get(key)
    if not pts:
        return "-"
    values = [p.figure(figure) for p in pts]
    med = fmt.format(statistics.median(values))
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return med if low == high else f"{med} ({low}-{high})"


def count_at_least(cfg: Config, a: str, b: str) -> tuple[int, int]:
    """The points where column a's median overlap is at least column b's,
    and the points both have."""
    ca, cb = cfg.columns[a], cfg.columns[b]
    shared = [k for k in _keys(cfg) if k in ca.points and k in cb.points]
    ok = 0
    for k in shared:
        ma, mb = median(ca, k, "overlap"), median(cb, k, "overlap")
        assert ma is not None and mb is not None
        ok += ma >= mb
    return ok, len(shared)


def parse_pair(text: str) -> tuple[str, str]:
    """``A:B`` into (A, B)."""
    a, sep, b = text.partition(":")
    if not sep or not a or not b:
        raise InputError(f"--compare {text!r}: expected COLUMN:COLUMN")
    return a, b


def markdown(configs: Sequence[Config], pairs: Sequence[tuple[str, str]]) -> str:
    """The tables: per configuration and figure, medians over sittings
    (range over sittings in brackets), then the counts of ``pairs``."""
    out: list[str] = []
    for cfg in configs:
        cols = list(cfg.columns.values())
        sittings = max((len(p) for c in cols for p in c.points.values()), default=0)
        out.append(f"## {cfg.name}: {cfg.describe}; medians over {sittings} sittings\n")
        keys = _keys(cfg)
        for figure, heading, fmt in FIGURES:
            out.append(f"### {heading}\n")
            names = [c.name for c in cols]
            native = figure == "overlap"
            head = ["op", "size"] + (["native"] if native else []) + names
            out.append("| " + " | ".join(head) + " |")
            out.append("|" + "---|" * len(head))
            for key in keys:
                row = [key[0], format_size(key[1])]
                if native:
                    pooled = [p for c in cols for p in c.points.get(key, [])]
                    row.append(fmt.format(statistics.median(p.native_overlap for p in pooled)))
                row += [_cell(c, key, figure, fmt) for c in cols]
                out.append("| " + " | ".join(row) + " |")
            out.append("")
        lines = []
        for a, b in pairs:
            if a in cfg.columns and b in cfg.columns:
                ok, n = count_at_least(cfg, a, b)
                lines.append(f"- {a} overlaps at least as much as {b} at **{ok} of {n}** points")
        for c in cols:
            pure = [median(c, k, "ratio") for k in keys]
            met = [v for v in pure if v is not None]
            lines.append(
                f"- {c.name}: pure time <= 1.05x native at "
                f"{sum(v <= 1.05 for v in met)} of {len(met)} points"
            )
        out.append("### Counts (medians over sittings)\n")
        out += lines
        out.append("")
    return "\n".join(out)


def write_sittings_charts(
    configs: Sequence[Config], outdir: Path, prefix: str = "", dpi: int = 120
) -> list[Path]:
    """One PNG per configuration: overlap against size, one panel per
    operation, one line per column (median over sittings, with the range
    over sittings as a band)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for cfg in configs:
        keys = _keys(cfg)
        ops = list(dict.fromkeys(op for op, _ in keys))
        fig, axes = plt.subplots(
            1, len(ops), figsize=(4.2 * len(ops), 3.6), squeeze=False, sharey=True
        )
        for ax, op in zip(axes[0], ops, strict=True):
            sizes = [n for o, n in keys if o == op]
            for col in cfg.columns.values():
                xs = [n for n in sizes if (op, n) in col.points]
                if not xs:
                    continue
                vals = [[p.overlap for p in col.points[(op, n)]] for n in xs]
                ax.plot(xs, [statistics.median(v) for v in vals], marker="o", label=col.name)
                ax.fill_between(xs, [min(v) for v in vals], [max(v) for v in vals], alpha=0.15)
            ax.set_xscale("log", base=2)
            ax.set_xticks(sizes, [format_size(n) for n in sizes])
            ax.set_title(op)
            ax.set_ylim(0, 105)
            ax.grid(True, alpha=0.3)
        axes[0][0].set_ylabel("overlap (%), median over sittings")
        axes[0][-1].legend(fontsize="small")
        fig.suptitle(f"{cfg.name}: {cfg.describe}", fontsize="medium")
        fig.tight_layout()
        path = outdir / f"{prefix}{safe_name(cfg.name)}-sittings-overlap.png"
        fig.savefig(path, dpi=dpi)
        plt.close(fig)
        written.append(path)
    return written
