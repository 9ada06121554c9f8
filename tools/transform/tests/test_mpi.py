"""Every example, original and transformed, compiled with -Wall -Wextra -Werror against
Open MPI and MPICH and run on 1-4 ranks (MPICH: 1-2, it busy-polls when
oversubscribed): the outputs must be identical.

The transformed programs run under nbcx-check (checker/nbcx_check.c, preloaded):
each nonblocking collective's receive buffer is poisoned until its wait, so an
early read changes the output, and writes in flight fail the run.  With MPICH
4.0 the persistent collectives take their nonblocking form and are checked too.

Marked ``mpi`` (about two minutes on 2 cores); ``pytest -m "not mpi"`` skips it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cases import CASES
from conftest import PROGRAMS, checker_lib, preload_args, run_transform

pytestmark = pytest.mark.mpi

MPIS = {
    "openmpi": (
        "mpicc.openmpi",
        ["mpiexec.openmpi", "--allow-run-as-root", "--oversubscribe", "-n"],
        (1, 2, 3, 4),
    ),
    "mpich": ("mpicc.mpich", ["mpiexec.mpich", "-n"], (1, 2)),
}
ENV = dict(
    os.environ,
    OMPI_ALLOW_RUN_AS_ROOT="1",
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    OMPI_MCA_btl_vader_single_copy_mechanism="none",
)


def _compile(cc: str, src: Path, exe: Path, *defs: str) -> None:
    cmd = [
        cc,
        "-Wall",
        "-Wextra",
        "-Werror",
        "-O1",
        f"-I{PROGRAMS}",
        *defs,
        "-o",
        str(exe),
        str(src),
        "-lm",
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"


def _run(launcher: list[str], n: int, exe: Path, pre: tuple[str, ...] = ()) -> str:
    res = subprocess.run(
        [*launcher[:-1], *pre, launcher[-1], str(n), str(exe)],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
        check=False,
    )
    assert res.returncode == 0, f"{exe} on {n} ranks failed:\n{res.stdout}\n{res.stderr}"
    assert "violation" not in res.stderr.replace(" 0 violations", ""), res.stderr
    return res.stdout


@pytest.mark.parametrize("mpi", sorted(MPIS))
@pytest.mark.parametrize(("case", "program", "opts"), CASES, ids=[c[0] for c in CASES])
def test_same_output(
    case: str,
    program: str,
    opts: tuple[str, ...],
    mpi: str,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    cc, launcher, ranks = MPIS[mpi]
    if shutil.which(cc) is None or shutil.which(launcher[0]) is None:
        pytest.skip(f"{mpi} not installed")
    res = run_transform(PROGRAMS / program, tmp_path, *opts)
    orig, new = tmp_path / "orig", tmp_path / "new"
    _compile(cc, PROGRAMS / program, orig)
    _compile(cc, tmp_path / program, new)
    if mpi == "mpich" and "NBCX_PERSISTENT" in res.text:
        # MPICH 4.0 takes the nonblocking fallback; the MPI-4 names must compile too.
        _compile(cc, tmp_path / program, tmp_path / "new4", "-DNBCX_PERSISTENT=4")
    # the run-time checker: each nonblocking collective's receive buffer poisoned
    # until its wait, writes to its buffers in flight reported (exit status 3)
    pre = tuple(preload_args(launcher[0], checker_lib(cc, tmp_path_factory.getbasetemp())))
    for n in ranks:
        expected = _run(launcher, n, orig)
        assert expected, f"{program} printed nothing on {n} ranks"
        got = _run(launcher, n, new, pre)
        assert got == expected, f"{case}: output differs on {n} ranks (under nbcx-check)"
