"""nbcx-plot split: the split-tree chart of a tools/split-sweep directory."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nbcx_plot.cli import main
from nbcx_plot.data import InputError
from nbcx_plot.split import load_split, parse_model, render_split, title_lines
from synthetic import document, write

SIZE = 2 << 20
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def model_doc(ranks: int, levels: int, best: int, compute: float = 4.0) -> dict[str, Any]:
    """An nbcx-split-model document: made-up times, best_S as given."""
    points = [
        {"S": s, "t_collective": float(levels), "t_overlapped": compute + abs(s - best) + 0.5}
        for s in range(levels + 1)
    ]
    return {
        "schema": "nbcx-split-model/1",
        "unit": "one point-to-point transfer of the buffer",
        "ranks": ranks,
        "app_cores": 2,
        "progress_cores": 0,
        "compute": compute,
        "levels": levels,
        "points": points,
        "best_S": best,
    }


def split_dir(
    path: Path,
    ops: tuple[str, ...] = ("ibcast", "ireduce"),
    ranks: int = 16,
    levels: int = 4,
    best: int = 1,
    skip: tuple[int, ...] = (),
) -> Path:
    """A directory as tools/split-sweep writes it (S in skip left out)."""
    path.mkdir(parents=True, exist_ok=True)
    for op in ops:
        for s in range(levels + 1):
            if s in skip:
                continue
            doc = document(ops=[op], sizes=[SIZE], ranks=ranks, bandwidth=1e9 / (1 + s))
            doc["progress"] = "split"
            write(path / f"{op}-S{s}.json", doc)
        write(path / f"model-{op}.json", model_doc(ranks, levels, best))
    write(path / "unit.json", document(ops=["ibcast"], sizes=[SIZE], ranks=2))
    return path


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path} is not a PNG file"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        status = main(["split", *args])
    except SystemExit as e:
        status = int(e.code) if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err


def test_one_chart_per_op(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = split_dir(tmp_path / "sweep")
    status, out, err = run_cli([str(d)], capsys)
    assert status == 0, err
    assert err == ""
    written = [Path(line) for line in out.splitlines()]
    assert written == [d / "ibcast-split.png", d / "ireduce-split.png"]
    for path in written:
        width, height = png_size(path)
        assert width >= 600 and height >= 400
        assert path.stat().st_size > 20_000


def test_outdir_prefix_and_ops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = split_dir(tmp_path / "sweep")
    out_dir = tmp_path / "charts" / "nested"
    args = ["-o", str(out_dir), "--prefix", "ompi-", "--ops", "ireduce", "--dpi", "60", str(d)]
    status, out, err = run_cli(args, capsys)
    assert status == 0, err
    assert out.splitlines() == [str(out_dir / "ompi-ireduce-split.png")]
    assert not list(d.glob("*.png"))


def test_chart_content(tmp_path: Path) -> None:
    """Title with ranks, cores and "oversubscribed"; the model's pick; both
    measured and model curves over every S."""
    (data,) = load_split(split_dir(tmp_path, ops=("ibcast",), best=3))
    fig = render_split(data)
    assert "16 ranks on 2 cores, oversubscribed" in fig.get_suptitle()
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "model picks S=3" in texts
    labels = ax.get_legend_handles_labels()[1]
    for name in ("measured t_pure", "measured t_ovrl", "model t_collective", "model t_overlapped"):
        assert any(label.startswith(name) for label in labels), (name, labels)
    # The vertical line at the model's S.
    assert any(np.asarray(line.get_xdata()).tolist() == [3, 3] for line in ax.get_lines())
    # The model's curves are scaled by the unit (unit.json's median t_block).
    model_line = next(line for line in ax.get_lines() if line.get_label() == "model t_collective")
    assert np.asarray(model_line.get_ydata()).tolist() == pytest.approx([4 * data.unit] * 5)
    assert data.unit == pytest.approx(0.9 * (5e-6 + SIZE / 1e9))


def test_not_oversubscribed(tmp_path: Path) -> None:
    (data,) = load_split(split_dir(tmp_path, ops=("ireduce",), ranks=2, levels=1, best=0))
    title, subtitle = title_lines(data)
    assert "2 ranks on 2 cores" in title and "oversubscribed" not in title
    assert "share the application's cores" in subtitle


def test_missing_s_still_plots(tmp_path: Path) -> None:
    (data,) = load_split(split_dir(tmp_path, ops=("ibcast",), skip=(2,)))
    assert [s for s, _r in data.measured] == [0, 1, 3, 4]
    assert len(data.model.points) == 5
    render_split(data)


def _assert_usage_error(status: int, out: str, err: str, fragment: str) -> None:
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(("nbcx-plot: ", "nbcx-plot split: "))
    assert fragment in err


def _edit(path: Path, change: dict[str, Any]) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc.update(change)
    write(path, doc)


@pytest.mark.parametrize(
    ("breakage", "fragment"),
    [
        ("no_unit", "unit.json: no such file"),
        ("no_model", "model-ibcast.json: no such file"),
        ("unit_size", "unit measured at 1024 bytes"),
        ("model_ranks", "model of 8 ranks, measured 16"),
        ("model_schema", "schema: expected 'nbcx-split-model/1'"),
        ("not_split", "progress mode 'thread', not split"),
        ("empty", "no OP-S<S>.json files"),
        ("two_sizes", "expected one result of ibcast (one size), got 2"),
    ],
)
def test_bad_directory_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], breakage: str, fragment: str
) -> None:
    d = split_dir(tmp_path / "sweep", ops=("ibcast",))
    if breakage == "no_unit":
        (d / "unit.json").unlink()
    elif breakage == "no_model":
        (d / "model-ibcast.json").unlink()
    elif breakage == "unit_size":
        write(d / "unit.json", document(ops=["ibcast"], sizes=[1024], ranks=2))
    elif breakage == "model_ranks":
        write(d / "model-ibcast.json", model_doc(8, 4, 1))
    elif breakage == "model_schema":
        _edit(d / "model-ibcast.json", {"schema": "other/1"})
    elif breakage == "not_split":
        _edit(d / "ibcast-S2.json", {"progress": "thread"})
    elif breakage == "empty":
        for f in d.glob("ibcast-S*.json"):
            f.unlink()
    elif breakage == "two_sizes":
        doc = document(ops=["ibcast"], sizes=[SIZE, 1024], ranks=16)
        doc["progress"] = "split"
        write(d / "ibcast-S0.json", doc)
    status, out, err = run_cli([str(d)], capsys)
    _assert_usage_error(status, out, err, fragment)
    assert not list(d.glob("*.png")), "nothing may be written for bad input"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "required: DIR"),
        (["--dpi", "5"], "--dpi 5 is out of range"),
        (["--prefix", "a/b"], "--prefix must not contain '/'"),
        (["--ops", "iallfoo"], "no files of 'iallfoo' (have: ibcast, ireduce)"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_arguments_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    d = [str(split_dir(tmp_path / "sweep"))] if args else []
    status, out, err = run_cli([*args, *d], capsys)
    _assert_usage_error(status, out, err, fragment)


def test_not_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli([str(tmp_path / "missing")], capsys)
    _assert_usage_error(status, out, err, "not a directory")


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"points": []}, "expected S = 0..4 in order"),
        ({"best_S": 9}, "best_S: 9 is above the 4 levels"),
        ({"compute": "x"}, "compute: expected a finite number"),
        ({"levels": -1}, "levels: expected at least 0"),
    ],
)
def test_parse_model_errors(change: dict[str, Any], fragment: str) -> None:
    doc = model_doc(16, 4, 1)
    doc.update(change)
    with pytest.raises(InputError, match=re.escape(fragment)):
        parse_model(doc, Path("m.json"))


def test_split_help(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _err = run_cli(["--help"], capsys)
    assert status == 0
    for text in ("DIR", "OP-S<S>.json", "model-OP.json", "unit.json", "oversubscribed"):
        assert text in out
    status, out, _err = run_cli_top(["--help"], capsys)
    assert status == 0 and "nbcx-plot split DIR" in out


def run_cli_top(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        status = main(args)
    except SystemExit as e:
        status = int(e.code) if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err
