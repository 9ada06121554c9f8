"""Issue 19: never an unsafe move, serial builds, -Werror-clean output and no
conversion that costs more than it gains."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROGRAMS, line_of, mpicc_for_parsing, run_transform
from nbcx_transform.cli import main

OMPI_ENV = dict(
    os.environ,
    OMPI_ALLOW_RUN_AS_ROOT="1",
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    OMPI_MCA_rmaps_base_oversubscribe="1",
    OMPI_MCA_btl_vader_single_copy_mechanism="none",
)


def _cc(cmd: list[str]) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"


def _out(cmd: list[str]) -> str:
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=OMPI_ENV)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stdout}\n{res.stderr}"
    return res.stdout


# ------------------------------------------------------------ 1. unsafe moves
def test_alloc_mem_buffer_is_tracked(tmp_path: Path) -> None:
    src = PROGRAMS / "unsafe_alloc_mem.c"
    res = run_transform(src, tmp_path, "--min-overlap", "0")
    site = res.site(line_of(src, "MPI_Allgather"))
    assert site["action"] == "nonblocking"
    # the wait comes before the first read of buf, not at MPI_Free_mem
    assert [w["line"] for w in site["waits"]] == [line_of(src, "int x = buf[rank];")]
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, "MPI_Allgather"))
    assert site["action"] == "blocking"
    assert "nothing to gain" in site["reason"]


def test_cxx_analysed(tmp_path: Path) -> None:
    """C++ is no longer refused (issue 34): the buffer from new[] is analysed and
    the wait comes before its read; a .c name parsed as C++ too."""
    src = PROGRAMS / "unsafe_new.cpp"
    res = run_transform(src, tmp_path, "--min-overlap", "0")
    assert res.status == 0
    site = res.site(line_of(src, "MPI_Allgather"))
    assert site["action"] == "nonblocking"
    assert res.text.index("MPI_Wait(") < res.text.index("int first = tmp_buffer[rank]")
    cc = mpicc_for_parsing()
    assert cc is not None
    csrc = tmp_path / "new_as_c.c"
    csrc.write_bytes(src.read_bytes())
    assert main(["--mpicc", cc, "--min-overlap", "0", str(csrc), "--", "-x", "c++"]) == 0
    text = csrc.read_text()
    assert text.index("MPI_Wait(") < text.index("int first = tmp_buffer[rank]")


def test_unresolvable_pointer_left_blocking(tmp_path: Path) -> None:
    """A buffer whose pointer the analysis never sees assigned stays blocking."""
    src = tmp_path / "opaque.c"
    src.write_text(
        "#include <mpi.h>\n"
        "static void run(int *buf, int n) {\n"
        "    int mine = n, y = 0, z = 0;\n"
        "    MPI_Allgather(&mine, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD);\n"
        "    y = n * 2;\n"
        "    z = y + buf[0];\n"
        "    (void)z;\n"
        "}\n"
        "void (*volatile keep)(int *, int) = run;\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out, "--min-overlap", "0")
    site = res.site(4)
    # either left alone, or waiting before the read through buf
    if site["action"] != "blocking":
        assert [w["line"] for w in site["waits"]] == [6]


# -------------------------------------------------------- 2. serial builds
def test_serial_build_under_ifdef(tmp_path: Path) -> None:
    src = PROGRAMS / "serial_ifdef.c"
    res = run_transform(src, tmp_path, "-D", "USING_MPI")
    assert res.status == 0
    acts = [r["action"] for r in res.report["collectives"]]
    assert acts.count("blocking") == 0, res.report
    assert "persistent" in acts
    out = tmp_path / "serial_ifdef.c"
    text = res.text
    # the declarations are under the same condition as the calls
    i = text.index("MPI_Request nbcx_req")
    assert text[:i].rstrip().endswith("#if defined(USING_MPI)")
    gcc = shutil.which("gcc") or "cc"
    flags = ["-Wall", "-Wextra", "-Werror", "-O1"]
    _cc([gcc, *flags, "-o", str(tmp_path / "serial_orig"), str(src)])
    _cc([gcc, *flags, "-o", str(tmp_path / "serial_new"), str(out)])
    assert _out([str(tmp_path / "serial_orig")]) == _out([str(tmp_path / "serial_new")])
    if shutil.which("mpicc.openmpi") and shutil.which("mpiexec.openmpi"):
        mpicc = ["mpicc.openmpi", *flags, "-DUSING_MPI"]
        _cc([*mpicc, "-o", str(tmp_path / "mpi_orig"), str(src)])
        _cc([*mpicc, "-o", str(tmp_path / "mpi_new"), str(out)])
        run = ["mpiexec.openmpi", "-n", "2"]
        a = _out([*run, str(tmp_path / "mpi_orig")])
        b = _out([*run, str(tmp_path / "mpi_new")])
        assert a == b


# ------------------------------------------------------------ 3. -Werror
def test_misleading_indentation(tmp_path: Path) -> None:
    src = PROGRAMS / "misleading_indent.c"
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, "MPI_Allreduce"))
    assert site["action"] == "nonblocking"
    line = next(t for t in res.text.splitlines() if "avg = 0;" in t)
    # the wait joins the line: the loop keeps the place it had
    assert line.strip().startswith("double avg = 0; MPI_Wait(")
    cc = shutil.which("mpicc.openmpi") or shutil.which("mpicc.mpich")
    if cc is None:
        pytest.skip("no MPI compiler")
    flags = ["-Wall", "-Wextra", "-Werror", "-c", "-o", os.devnull]
    _cc([cc, *flags, str(src)])
    _cc([cc, *flags, str(tmp_path / src.name)])


# ------------------------------------------------------- 5. costly conversions
def test_no_conversion_that_costs(tmp_path: Path) -> None:
    src = PROGRAMS / "once_barrier.c"
    res = run_transform(src, tmp_path)
    first = res.site(line_of(src, "    MPI_Barrier(MPI_COMM_WORLD);"))
    # nothing to gain, but the barrier under "if (iter == 1)" is converted and the
    # tool cannot prove that every rank takes that branch alike (issue 34): the
    # first one starts and waits at once, so that a blocking barrier never meets a
    # nonblocking one
    assert first["action"] == "nonblocking"
    assert any("start-then-wait" in n and "nothing to gain" in n for n in first["notes"])
    once = res.site(line_of(src, "            MPI_Barrier(MPI_COMM_WORLD);"))
    assert once["action"] == "nonblocking"
    assert "persistent" not in once
    assert any("runs at most once per loop" in n for n in once["notes"])
    every = res.site(line_of(src, "MPI_Allreduce"))
    assert every["action"] == "persistent"
    assert "MPI_Barrier_init" not in res.text
    assert "MPIX_Barrier_init" not in res.text


def test_preprocessor_conditions() -> None:
    """The condition of each #if branch, as inserted lines are guarded with it."""
    from nbcx_transform.transform import _cond_regions

    src = (
        b"int a;\n"
        b"#ifdef DO_MPI\n"
        b"int b;\n"
        b"#if N > 2 /* comment */\n"
        b"int c;\n"
        b"#elif defined(X)\n"
        b"int d;\n"
        b"#else\n"
        b"int e;\n"
        b"#endif\n"
        b"#else\n"
        b"int f;\n"
        b"#endif\n"
        b"#ifndef SERIAL\n"
        b"int g;\n"
        b"#endif\n"
    )

    def conds(word: bytes) -> list[str]:
        off = src.index(word)
        return [c for s, e, _, c in sorted(_cond_regions(src)) if s <= off < e]

    assert conds(b"int a") == []
    assert conds(b"int b") == ["defined(DO_MPI)"]
    assert conds(b"int c") == ["defined(DO_MPI)", "(N > 2)"]
    assert conds(b"int d") == ["defined(DO_MPI)", "(!(N > 2) && (defined(X)))"]
    assert conds(b"int e") == ["defined(DO_MPI)", "(!(N > 2) && !(defined(X)))"]
    assert conds(b"int f") == ["(!defined(DO_MPI))"]
    assert conds(b"int g") == ["!defined(SERIAL)"]
