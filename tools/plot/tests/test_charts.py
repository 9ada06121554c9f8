"""Chart details: min-max bands, axes, labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.lines import Line2D

from nbcx_plot.charts import INPROC_METRICS, METRICS, Options, make_series, metrics_for, render
from nbcx_plot.data import Run, parse_run
from synthetic import document, inproc_document


def _runs(n: int) -> list[Run]:
    libraries = ["Open MPI", "MPICH", "Open MPI"]
    return [
        parse_run(document(library=libraries[i], ranks=2 + 2 * (i // 2)), Path(f"r{i}.json"))
        for i in range(n)
    ]


def _title(op: str, metric_key: str, runs: list[Run], opts: Options) -> str:
    metric = next(m for m in METRICS if m.key == metric_key)
    series, subtitle = make_series(runs)
    return render(op, metric, series, subtitle, opts).axes[0].get_title()


def test_bands_by_default_only_for_a_single_series() -> None:
    assert "shaded: min to max" in _title("iallreduce", "time", _runs(1), Options())
    assert "shaded" not in _title("iallreduce", "time", _runs(2), Options())
    assert "shaded: min to max" in _title("iallreduce", "time", _runs(2), Options(bands=True))
    assert "shaded" not in _title("iallreduce", "time", _runs(1), Options(bands=False))


def test_single_size_op_gets_points_with_whiskers() -> None:
    assert "whiskers: min to max" in _title("ibarrier", "overlap", _runs(3), Options())


def test_axes_scales_and_labels() -> None:
    series, subtitle = make_series(_runs(1))
    by_key = {m.key: m for m in METRICS}
    time_ax = render("ialltoall", by_key["time"], series, subtitle, Options()).axes[0]
    assert time_ax.get_xscale() == "log" and time_ax.get_yscale() == "log"
    assert "per peer" in time_ax.get_xlabel()
    ticks = [t.get_text() for t in time_ax.get_xticklabels()]
    assert "64 KiB" in ticks and "1 MiB" in ticks and "16 MiB" in ticks
    overlap_ax = render("iallreduce", by_key["overlap"], series, subtitle, Options()).axes[0]
    assert overlap_ax.get_yscale() == "linear"
    assert overlap_ax.get_ylabel().endswith("(%)")
    low, high = overlap_ax.get_ylim()
    assert low < 0 < 100 <= high < 110


def _ydata(line: Line2D) -> list[float]:
    return [float(v) for v in np.ravel(np.asarray(line.get_ydata(), dtype=float))]


def _inproc_runs(n: int) -> list[Run]:
    return [parse_run(inproc_document(ranks=2 * (i + 1)), Path(f"i{i}.json")) for i in range(n)]


def test_metrics_for_each_kind_of_run() -> None:
    assert metrics_for(_runs(2)) == METRICS
    assert metrics_for(_inproc_runs(2)) == INPROC_METRICS
    with pytest.raises(ValueError, match="cannot share a chart"):
        metrics_for([*_runs(1), *_inproc_runs(1)])


def test_inproc_time_chart_has_the_three_variants() -> None:
    series, subtitle = make_series(_inproc_runs(1))
    metric = next(m for m in INPROC_METRICS if m.key == "time")
    ax = render("ibcast", metric, series, subtitle, Options()).axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == [
        "blocking",
        "nbc (start, wait at once)",
        "nbc+overlap: in start+test+wait",
    ]
    assert ax.get_yscale() == "log"


def test_inproc_ratio_chart() -> None:
    runs = _inproc_runs(1)
    series, subtitle = make_series(runs)
    metric = next(m for m in INPROC_METRICS if m.key == "ratio")
    ax = render("iscatter", metric, series, subtitle, Options()).axes[0]
    assert ax.get_yscale() == "log"
    assert "ratio of the medians" in ax.get_title()
    assert "shaded" not in ax.get_title()  # no spread to shade
    # The curves: nbc's t_pure and the overhead over t_block, per size.
    nbc = next(line for line in ax.get_lines() if line.get_label() == "nbc / blocking")
    r = runs[0].results_for("iscatter")
    want = [x.nbcx.t_pure.median / x.t_block.median for x in r]
    assert _ydata(nbc) == pytest.approx(want)
    # Reference lines at 1 and 1.05.
    flat = {tuple(_ydata(line)) for line in ax.get_lines() if len(_ydata(line)) == 2}
    assert (1.0, 1.0) in flat and (1.05, 1.05) in flat
    low, high = ax.get_ylim()
    assert low <= 0.5 and high >= 2 and low <= min(want) and max(want) <= high
