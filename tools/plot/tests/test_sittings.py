"""nbcx-plot sittings: medians over repeated tools/bench-compare runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from nbcx_plot.cli import main
from nbcx_plot.data import InputError
from nbcx_plot.sittings import count_at_least, load_sittings, markdown, median
from synthetic import document, inproc_document, write

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SIZES = [65536, 1 << 20]


def run_doc(overlap: float, pure_scale: float) -> dict[str, Any]:
    """A document whose nbcx overlap is `overlap` everywhere, and whose nbcx
    pure time is `pure_scale` times native's."""
    doc = document(network="emunet", ops=["ibcast", "iallreduce"], sizes=SIZES)
    for r in doc["results"]:
        r["nbcx"]["overlap"]["median"] = overlap
        r["nbcx"]["t_pure"]["median"] = r["native"]["t_pure"]["median"] * pure_scale
    return doc


def sitting(root: Path, name: str, mpi_overlap: float, ucx_overlap: float) -> Path:
    d = root / name
    d.mkdir()
    write(d / "openmpi-emunet-np2-auto-mpi.json", run_doc(mpi_overlap, 1.0))
    write(d / "openmpi-emunet-np2-auto-ucx.json", run_doc(ucx_overlap, 1.2))
    return d


def test_medians_and_counts(tmp_path: Path) -> None:
    # UCX ahead in two sittings of three, by more than it is behind in the
    # third: the median is UCX's middle value, not the mean.
    dirs = [
        sitting(tmp_path, "s1", 0.70, 0.80),
        sitting(tmp_path, "s2", 0.70, 0.10),
        sitting(tmp_path, "s3", 0.70, 0.75),
    ]
    (cfg,) = load_sittings(dirs)
    assert cfg.name == "openmpi-emunet-np2"
    assert list(cfg.columns) == ["auto-mpi", "auto-ucx"]
    ucx = cfg.columns["auto-ucx"]
    assert len(ucx.points[("ibcast", 65536)]) == 3
    assert median(ucx, ("ibcast", 65536), "overlap") == pytest.approx(75.0)
    assert median(ucx, ("ibcast", 65536), "ratio") == pytest.approx(1.2)
    assert count_at_least(cfg, "auto-ucx", "auto-mpi") == (4, 4)
    assert count_at_least(cfg, "auto-mpi", "auto-ucx") == (0, 4)
    text = markdown([cfg], [("auto-ucx", "auto-mpi")])
    assert "medians over 3 sittings" in text
    assert "auto-ucx overlaps at least as much as auto-mpi at **4 of 4** points" in text
    assert "auto-ucx: pure time <= 1.05x native at 0 of 4 points" in text
    assert "auto-mpi: pure time <= 1.05x native at 4 of 4 points" in text
    assert "| ibcast | 64 KiB | 0 | 70 | 75 (10-80) |" in text


def test_cli_writes_tables_and_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dirs = [sitting(tmp_path, f"s{k}", 0.6, 0.5 + 0.1 * k) for k in range(3)]
    out = tmp_path / "out"
    args = ["sittings", "-o", str(out), "--compare", "auto-ucx:auto-mpi"]
    assert main(args + [str(d) for d in dirs]) == 0
    printed = capsys.readouterr().out.split()
    md = out / "sittings.md"
    png = out / "openmpi-emunet-np2-sittings-overlap.png"
    assert printed == [str(md), str(png)]
    assert "at **4 of 4** points" in md.read_text()
    assert png.read_bytes().startswith(PNG_SIGNATURE)


def test_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match=re.escape("no <mpi>-<net>-np<ranks>-<column>.json")):
        load_sittings([empty])
    with pytest.raises(InputError, match="not a directory"):
        load_sittings([tmp_path / "missing"])
    inproc = tmp_path / "inproc"
    inproc.mkdir()
    write(inproc / "none-shm-np4-thread-inproc.json", inproc_document())
    with pytest.raises(InputError, match="no native to compare"):
        load_sittings([inproc])

    d = sitting(tmp_path, "s1", 0.7, 0.8)
    assert main(["sittings", "-o", str(tmp_path / "o"), "--compare", "auto-ucx", str(d)]) == 2
    assert "expected COLUMN:COLUMN" in capsys.readouterr().err
    assert main(["sittings", "-o", str(tmp_path / "o"), "--compare", "x:auto-mpi", str(d)]) == 2
    assert "no column 'x' (there are: auto-mpi, auto-ucx)" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
