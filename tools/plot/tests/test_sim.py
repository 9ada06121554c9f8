"""nbcx-plot sim: the charts of nbcx-sim --json files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nbcx_plot.cli import main
from nbcx_plot.data import InputError
from nbcx_plot.sim import load_sim

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def sim_doc(sizes: list[int], ranks: list[int]) -> dict[str, object]:
    results: list[dict[str, object]] = []
    for alg in ("ring", "recursive_doubling"):
        for p in ranks:
            for s in sizes:
                results.append(
                    {
                        "op": "allreduce",
                        "alg_requested": alg,
                        "alg": alg,
                        "ranks": p,
                        "ranks_per_node": 2,
                        "bytes": s,
                        "t_max_us": 10.0 + s / 100 + p,
                        "t_median_us": 9.0,
                        "t_min_us": 8.0,
                    }
                )
    results.append(
        {
            "op": "alltoall",
            "alg_requested": "bruck",
            "ranks": 10000,
            "ranks_per_node": 2,
            "bytes": 8,
            "error": "too large",
        }
    )
    return {"format": "nbcx-sim/1", "results": results}


def test_charts_by_size_and_by_ranks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.json"
    a.write_text(json.dumps(sim_doc([1024, 65536, 1 << 20], [16])))
    b = tmp_path / "b.json"
    b.write_text(json.dumps(sim_doc([1024], [16, 1024, 100000])))
    for f in (a, b):
        out = tmp_path / f.stem
        assert main(["sim", "-o", str(out), str(f)]) == 0
        png = out / "sim-allreduce.png"
        assert png.read_bytes().startswith(PNG_SIGNATURE)
        assert not (out / "sim-alltoall.png").exists()  # only an error
    assert main(["sim", "-o", str(tmp_path / "both"), str(a), str(b)]) == 0
    assert str(tmp_path / "both" / "sim-allreduce.png") in capsys.readouterr().out


def test_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "nbcx-bench/1"}))
    assert main(["sim", str(bad)]) == 2
    assert "not an nbcx-sim document" in capsys.readouterr().err
    bad.write_text(json.dumps({"format": "nbcx-sim/1", "results": [{"op": "x", "alg": "y"}]}))
    with pytest.raises(InputError, match="'ranks' must be a number"):
        load_sim([bad])
    bad.write_text(json.dumps({"format": "nbcx-sim/1", "results": []}))
    with pytest.raises(InputError, match="no simulated results"):
        load_sim([bad])
