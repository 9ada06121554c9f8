"""The run-time checker (checker/nbcx_check.c) finds what it must find."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROGRAMS, checker_lib, preload_args

ENV = dict(
    os.environ,
    OMPI_ALLOW_RUN_AS_ROOT="1",
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    OMPI_MCA_rmaps_base_oversubscribe="1",
    OMPI_MCA_btl_vader_single_copy_mechanism="none",
)


@pytest.mark.parametrize(
    ("cc", "mpiexec"), [("mpicc.openmpi", "mpiexec.openmpi"), ("mpicc.mpich", "mpiexec.mpich")]
)
def test_checker_reports_reads_and_writes_in_flight(cc: str, mpiexec: str, tmp_path: Path) -> None:
    if shutil.which(cc) is None or shutil.which(mpiexec) is None:
        pytest.skip(f"{cc} not installed")
    lib = checker_lib(cc, tmp_path)
    exe = tmp_path / "bad"
    subprocess.run([cc, "-o", str(exe), str(PROGRAMS / "checker_bad.c")], check=True)
    res = subprocess.run(
        [mpiexec, *preload_args(mpiexec, lib), "-n", "2", str(exe)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert res.returncode != 0
    assert "MPI_Iallreduce (operation #1): send buffer written" in res.stderr
    # the early read sees the poison (NaN), the result after the wait is right
    assert "nan" in res.stdout
    assert "2.000000" in res.stdout or "6.000000" in res.stdout
