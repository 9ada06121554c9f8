"""Issue 34, C++ conversion rates: a call of the file's own non-virtual member
function is analysed by the function's summary (its ``this`` is memory outside
it, EXT), not taken as unknown ("C++ member functions are not analysed" was the
most common reason a C++ wait stopped). ``programs/cxx/member_summary.cpp``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PROGRAMS, line_of, run_transform
from test_cxx import ENV

SRC = PROGRAMS / "cxx" / "member_summary.cpp"


def _wait(res_site: dict[str, Any]) -> tuple[int, int, str]:
    (w,) = res_site["waits"]
    return int(w["line"]), int(w["overlap"]), str(w["stopped_by"])


def test_member_calls_summarised(tmp_path: Path) -> None:
    res = run_transform(SRC, tmp_path)
    assert res.status == 0
    first = res.site(line_of(SRC, "MPI_Allreduce(x, sum"))
    # past a.add(), a.add() and a.get(), which touch only a's members (before:
    # blocking, "call of Acc::add() ... not analysed")
    assert first["action"] == "nonblocking"
    assert _wait(first)[:2] == (line_of(SRC, "double s = sum[0]"), 3)
    # c.reset() writes c.out through its this: the wait comes before it
    second = res.site(line_of(SRC, "MPI_Allreduce(y, c.out"))
    assert _wait(second)[0] == line_of(SRC, "c.reset();")
    # a virtual member function: an override may do anything
    third = res.site(line_of(SRC, "MPI_Allreduce(z, zs"))
    line, _ov, why = _wait(third)
    assert line == line_of(SRC, "a.bump(y);") and "Acc::bump()" in why


@pytest.mark.mpi
@pytest.mark.parametrize(
    ("cxx", "launcher"),
    [
        ("mpicxx.openmpi", ["mpiexec.openmpi", "--allow-run-as-root", "--oversubscribe"]),
        ("mpicxx.mpich", ["mpiexec.mpich"]),
    ],
)
def test_member_summary_same_output(cxx: str, launcher: list[str], tmp_path: Path) -> None:
    """Same output as the original on 2 ranks; and a copy with the wait moved past
    c.reset() (what a summary ignoring the writes through this would give) prints
    the reduction instead of the reset values."""
    if shutil.which(cxx) is None or shutil.which(launcher[0]) is None:
        pytest.skip(f"{cxx} not installed")
    res = run_transform(SRC, tmp_path)
    assert res.status == 0
    lines = res.text.splitlines()
    w = next(i for i, t in enumerate(lines) if "MPI_Wait(&nbcx_req[1]" in t)
    late = lines[:w] + lines[w + 1 :]
    k = next(i for i, t in enumerate(late) if "c.reset();" in t)
    late.insert(k + 1, lines[w])
    (tmp_path / "late.cpp").write_text("\n".join(late) + "\n")
    outs = {}
    for name, path in (
        ("orig", SRC),
        ("new", tmp_path / SRC.name),
        ("late", tmp_path / "late.cpp"),
    ):
        exe = tmp_path / name
        cmd = [cxx, "-Wall", "-Wextra", "-Werror", "-O1", "-DOMPI_SKIP_MPICXX"]
        cmd += ["-DMPICH_SKIP_MPICXX", "-o", str(exe), str(path)]
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr
        run = subprocess.run(
            [*launcher, "-n", "2", str(exe)],
            capture_output=True,
            text=True,
            timeout=120,
            env=ENV,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        outs[name] = sorted(run.stdout.splitlines())
    assert outs["orig"] and outs["new"] == outs["orig"]
    assert outs["late"] != outs["orig"]
