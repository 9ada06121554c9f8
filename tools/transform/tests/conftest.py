"""Shared helpers: run the transformation, find the MPI installations."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nbcx_transform.cli import main

HERE = Path(__file__).parent

# Open MPI 4.1 makes its per-host session directory (ompi.<host>.<uid> in
# /tmp) by a stat, then a mkdir: two mpiexec started at once by the two
# pytest-xdist workers, when no job holds that directory, race, and the
# loser fails in orte_init ("mkdir ... File exists"; CI, session 28). Each
# worker process (each imports this file first) gets its own base
# directory, short (Open MPI puts its sockets there). Set before the test
# modules copy os.environ into their ENV.
_OMPI_TMP = tempfile.mkdtemp(prefix="nbcx-ompi-", dir="/tmp")
os.environ.setdefault("OMPI_MCA_orte_tmpdir_base", _OMPI_TMP)
atexit.register(shutil.rmtree, _OMPI_TMP, ignore_errors=True)
PROGRAMS = HERE / "programs"
GOLDEN = HERE / "golden"


def mpicc_for_parsing() -> str | None:
    for cc in ("mpicc.openmpi", "mpicc.mpich", "mpicc"):
        if shutil.which(cc):
            return cc
    return None


@dataclass
class Result:
    text: str
    report: dict[str, Any]
    status: int

    def site(self, line: int) -> dict[str, Any]:
        for r in self.report["collectives"]:
            if r["line"] == line:
                return dict(r)
        raise KeyError(line)


def run_transform(src: Path, tmp: Path, *opts: str) -> Result:
    """Transforms ``src`` into ``tmp`` and returns the text and the JSON report."""
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper to find mpi.h")
    out = tmp / src.name
    rep = tmp / (src.stem + ".json")
    status = main(
        [
            "--mpicc",
            cc,
            "-o",
            str(out),
            "--report-format",
            "json",
            "--report-file",
            str(rep),
            *opts,
            str(src),
        ]
    )
    return Result(out.read_text(), json.loads(rep.read_text()), status)


def line_of(src: Path, needle: str) -> int:
    """1-based number of the first line of ``src`` that contains ``needle``."""
    for i, line in enumerate(src.read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {src}")


CHECKER = HERE.parent / "checker" / "nbcx_check.c"
_checker_libs: dict[str, Path] = {}


def checker_lib(cc: str, where: Path) -> Path:
    """libnbcx_check.so built with the MPI compiler wrapper ``cc`` (once per session)."""
    if cc not in _checker_libs:
        lib = where / f"libnbcx_check_{Path(cc).name}.so"
        cmd = [cc, "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(lib)]
        res = subprocess.run([*cmd, str(CHECKER)], capture_output=True, text=True, check=False)
        assert res.returncode == 0, res.stderr
        _checker_libs[cc] = lib
    return _checker_libs[cc]


def preload_args(launcher: str, lib: Path) -> list[str]:
    """mpiexec options that preload ``lib`` into the ranks (not into mpiexec)."""
    if "openmpi" in launcher:
        return ["-x", f"LD_PRELOAD={lib}"]
    return ["-genv", "LD_PRELOAD", str(lib)]
