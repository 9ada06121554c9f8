"""The corpus (corpus/): each program transformed, built with -Wall -Wextra
-Werror, run on 2 and 4 ranks (Open MPI) and 2 (MPICH) under the run-time
checker, also in its nonblocking form, with the original's output."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from conftest import mpicc_for_parsing

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
sys.path.insert(0, str(CORPUS))

import run_corpus  # noqa: E402

pytestmark = pytest.mark.mpi

PROGRAMS = sorted(p.name for p in CORPUS.iterdir() if (p / "Makefile").exists())


@pytest.mark.parametrize("name", PROGRAMS)
def test_corpus_program(name: str, tmp_path: Path) -> None:
    for needed in ("make", "mpicc.openmpi", "mpicc.mpich", "mpiexec.openmpi", "mpiexec.mpich"):
        if shutil.which(needed) is None:
            pytest.skip(f"no {needed}")
    if mpicc_for_parsing() is None:
        pytest.skip("no MPI compiler wrapper")
    tool = [sys.executable, "-m", "nbcx_transform"]  # the one this pytest imports
    res = run_corpus.check_program(name, tool, tmp_path)
    assert res["werror"], f"{name}: the original does not build with -Werror"
    assert all(ok for _, ok in res["runs"]), res["runs"]
    after = res["after"]
    assert after["found"] > 0
    assert after["refused"] == []
    if name == "hpccg_like":  # C++ analysed (issue 34): new[] buffer, wait before the read
        assert after["nonblocking"] == 1
    if name == "prk_like":
        assert after["persistent"] == 1  # the allreduce of every iteration, not the barrier
    if name == "comd_like":
        # the wrappers of parallel.c: their calls in main.c use the twins (issue 19.4)
        # (issue 34: the allreduce wrappers' callers are in several loops, so every
        # MPI_Allreduce of the program is converted alike: the wrappers' own calls and
        # the one caller that gains nothing start and wait at once; the broadcast's
        # wrapper is only called through its twin)
        assert after["twinned"] == 1
        assert after["start_then_wait"] == 3
        assert after["nonblocking"] >= 4
    if name == "miniamr_like":
        assert after["loop_max"] >= 5  # past calls into block.c and timer.c
