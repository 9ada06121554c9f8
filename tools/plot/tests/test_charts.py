"""Chart details: min-max bands, axes, labels."""

from __future__ import annotations

from pathlib import Path

from nbcx_plot.charts import METRICS, Options, make_series, render
from nbcx_plot.data import Run, parse_run
from synthetic import document


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
