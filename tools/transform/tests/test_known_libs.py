"""Issue 34, overlap on real codes: library functions with known effects.

<complex.h>'s functions (creal, conj, cabs, ...: arguments by value), the float
and long double forms of <math.h>'s, and FFTW's new-array execute functions and
fftw_destroy_plan (only when fftw3.h declares them) no longer stop a wait as
"not in this file". Before, apps/fft3d's in-loop allreduce of the spectrum's
energy stopped at the first creal() (2 statements overlap).  OpenMP's timer and
queries (omp.h) too; and a file that includes GCC's <omp.h> parses (the tool's
include/omp.h drops the argument of GCC's __malloc__ attribute, which clang
rejects: before, such a file was not transformed at all)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROGRAMS, line_of, mpicc_for_parsing, run_transform

SRC = PROGRAMS / "extlib_fftw.c"


def _has_fftw(cc: str | None) -> bool:
    if cc is None or shutil.which(cc) is None:
        return False
    res = subprocess.run(
        [cc, "-x", "c", "-", "-o", "/dev/null", "-lfftw3"],
        input="#include <fftw3.h>\nint main(void) { fftw_free(fftw_malloc(8)); return 0; }\n",
        capture_output=True,
        text=True,
        check=False,
    )
    return res.returncode == 0


def test_lookup_complex_and_fftw() -> None:
    from nbcx_transform import mpi

    for name in ("creal", "cimagf", "cabsl", "conj", "cexp", "sqrtl", "fabsf", "fma"):
        spec = mpi.lookup(name)
        assert spec is not None and not spec.args and spec.rest == "-", name
    # FFTW only from its own header (a program's own fftw_execute_dft is unknown)
    assert mpi.lookup("fftw_execute_dft") is None
    assert mpi.lookup("fftw_execute_dft", "myfft.h") is None
    spec = mpi.lookup("fftw_execute_dft", "fftw3.h")
    # the input may be destroyed (c2r, FFTW_DESTROY_INPUT): read and written
    assert spec is not None and spec.args == ("-", "RW", "RW")
    assert mpi.lookup("fftwf_destroy_plan", "fftw3.h") == mpi.FuncSpec(("-",))
    # the planners (FFTW_MEASURE overwrites the arrays) and fftw_execute (the arrays
    # the planner was given) stay unknown
    assert mpi.lookup("fftw_execute", "fftw3.h") is None
    assert mpi.lookup("fftw_plan_dft_1d", "fftw3.h") is None
    # lgamma writes the global signgam: not among the pure ones
    assert mpi.lookup("lgamma") is None
    assert mpi.lookup("omp_get_wtime") is None
    spec = mpi.lookup("omp_get_wtime", "omp.h")
    assert spec is not None and spec.clock


@pytest.mark.skipif(not _has_fftw(mpicc_for_parsing()), reason="FFTW 3 not installed")
def test_wait_past_known_functions(tmp_path: Path) -> None:
    res = run_transform(SRC, tmp_path)
    assert res.status == 0
    site = res.site(line_of(SRC, "MPI_Allreduce(x, sum"))
    assert site["action"] == "nonblocking"
    (wait,) = site["waits"]
    # past creal/conj/cabs/cimag/csqrt/carg, fftw_execute_dft into b and
    # fftw_destroy_plan; stopped by the transform into the receive buffer
    assert int(wait["line"]) == line_of(SRC, "fftw_execute_dft(q, b, sum)")
    assert "sum" in wait["stopped_by"] and "receive buffer" in wait["stopped_by"]
    assert wait["overlap"] == 9


@pytest.mark.mpi
@pytest.mark.parametrize(
    ("cc", "launcher"),
    [
        ("mpicc.openmpi", ["mpiexec.openmpi", "--allow-run-as-root", "--oversubscribe"]),
        ("mpicc.mpich", ["mpiexec.mpich"]),
    ],
)
def test_same_output(cc: str, launcher: list[str], tmp_path: Path) -> None:
    """The transformed program prints what the original does on 2 ranks; and the
    program tells a wrong summary: with the wait moved past the transform into
    the receive buffer (what a summary of fftw_execute_dft that leaves its output
    alone would give), the reduction overwrites the transform's result."""
    if shutil.which(cc) is None or shutil.which(launcher[0]) is None:
        pytest.skip(f"{cc} not installed")
    if not _has_fftw(cc):
        pytest.skip("FFTW 3 not installed")
    from test_matching import _run

    res = run_transform(SRC, tmp_path)
    new = (tmp_path / SRC.name).read_text()
    lines = new.splitlines()
    w = next(i for i, t in enumerate(lines) if "MPI_Wait(" in t)
    late = lines[:w] + lines[w + 1 :]
    k = next(i for i, t in enumerate(late) if "double s = 0;" in t)
    late.insert(k + 1, lines[w])
    (tmp_path / "late.c").write_text("\n".join(late) + "\n")
    outs = {}
    for name, path in (("orig", SRC), ("new", tmp_path / SRC.name), ("late", tmp_path / "late.c")):
        exe = tmp_path / name
        cmd = [cc, "-Wall", "-Wextra", "-Werror", "-O1", "-o", str(exe), str(path), "-lfftw3"]
        r = subprocess.run([*cmd, "-lm"], capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr
        outs[name] = sorted(_run(launcher, 2, exe).splitlines())
    assert res.status == 0 and outs["orig"]
    assert outs["new"] == outs["orig"]
    assert outs["late"] != outs["orig"]


OMP_SRC = PROGRAMS / "extlib_omp_timer.c"


@pytest.mark.parametrize("openmp", [True, False])
def test_omp_h_parses_and_timer_known(openmp: bool, tmp_path: Path) -> None:
    """With or without -fopenmp: the file parses, and the wait goes past
    omp_get_wtime() and omp_get_max_threads() to the printf reading the sum."""
    from nbcx_transform import cli

    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    out = tmp_path / OMP_SRC.name
    rep = tmp_path / "rep.json"
    args = ["--mpicc", cc, "-o", str(out), "--report-format", "json", "--report-file", str(rep)]
    status = cli.main([*args, str(OMP_SRC), *(["--", "-fopenmp"] if openmp else [])])
    assert status == 0
    (site,) = json.loads(rep.read_text())["collectives"]
    assert site["action"] == "nonblocking", site
    (wait,) = site["waits"]
    assert int(wait["line"]) == line_of(OMP_SRC, "printf(")
    assert wait["overlap"] == 5


@pytest.mark.mpi
def test_omp_timer_same_output(tmp_path: Path) -> None:
    cc = "mpicc.openmpi"
    launcher = ["mpiexec.openmpi", "--allow-run-as-root", "--oversubscribe"]
    if shutil.which(cc) is None or shutil.which(launcher[0]) is None:
        pytest.skip("Open MPI not installed")
    from nbcx_transform import cli
    from test_matching import _build, _run

    new = tmp_path / OMP_SRC.name
    assert cli.main(["--mpicc", cc, "-o", str(new), str(OMP_SRC), "--", "-fopenmp"]) == 0
    assert "MPI_Iallreduce(" in new.read_text()
    _build(cc, OMP_SRC, tmp_path / "orig", "-fopenmp")
    _build(cc, new, tmp_path / "new", "-fopenmp")
    expected = sorted(_run(launcher, 2, tmp_path / "orig").splitlines())
    assert expected and sorted(_run(launcher, 2, tmp_path / "new").splitlines()) == expected
