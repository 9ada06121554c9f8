"""The command line: in place, -o, --diff, --check, -D, compile_commands.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import PROGRAMS, mpicc_for_parsing
from nbcx_transform.cli import main

CC = mpicc_for_parsing()
pytestmark = pytest.mark.skipif(CC is None, reason="no MPI compiler wrapper")


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copy(PROGRAMS / name, dst)
    return dst


def test_in_place_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _copy(tmp_path, "fig09_bcast.c")
    before = src.read_text()
    assert main(["--mpicc", str(CC), "--check", str(src)]) == 1
    assert "MPI_Bcast can be nonblocking" in capsys.readouterr().out
    assert src.read_text() == before
    assert main(["--mpicc", str(CC), str(src)]) == 0
    assert "MPI_Ibcast" in src.read_text()
    assert main(["--mpicc", str(CC), "--check", str(src)]) == 0


def test_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _copy(tmp_path, "fig09_bcast.c")
    assert main(["--mpicc", str(CC), "--min-overlap", "0", "--diff", str(src)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--- a/")
    assert "-    MPI_Bcast(&mass, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);" in out
    assert "+    MPI_Waitall(3, nbcx_req, nbcx_stat);" in out


def test_report_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _copy(tmp_path, "safety_macro.c")
    assert main(["--mpicc", str(CC), "-n", "--report", str(src)]) == 0
    out = capsys.readouterr().out
    assert "left as it is: comes from a macro expansion" in out
    assert "nonblocking, request nbcx_req[0]" in out


def test_defines_are_honoured(tmp_path: Path) -> None:
    src = tmp_path / "d.c"
    src.write_text(
        "#include <mpi.h>\n"
        "int main(int argc, char **argv) {\n"
        "    int a = 1, b = 0, c = 0;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    c = UPDATE;\n"
        "    MPI_Finalize();\n"
        "    return b + c;\n"
        "}\n"
    )
    rep = tmp_path / "r.json"
    args = ["--mpicc", str(CC), "-n", "--min-overlap", "0"]
    args += ["--report-format", "json", "--report-file", str(rep)]
    # without the define the file does not parse: nothing is touched
    assert main([*args, str(src)]) == 2
    assert main([*args, "-D", "UPDATE=b", str(src)]) == 0
    site = json.loads(rep.read_text())["collectives"][0]
    assert site["waits"][0]["line"] == 6  # c = b reads the receive buffer
    assert main([*args, "-D", "UPDATE=a", str(src)]) == 0
    site = json.loads(rep.read_text())["collectives"][0]
    assert site["waits"][0]["line"] == 7  # stopped only by MPI_Finalize


def test_compile_commands(tmp_path: Path) -> None:
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "conf.h").write_text("#define UPDATE b\n")
    src = tmp_path / "cc.c"
    src.write_text(
        '#include <mpi.h>\n#include "conf.h"\n'
        "int main(int argc, char **argv) {\n"
        "    int a = 1, b = 0, c = 0;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    c = UPDATE;\n"
        "    MPI_Finalize();\n"
        "    return b + c;\n"
        "}\n"
    )
    db = [{"directory": str(tmp_path), "file": "cc.c", "command": f"{CC} -Iinclude -c cc.c"}]
    (tmp_path / "compile_commands.json").write_text(json.dumps(db))
    rep = tmp_path / "r.json"
    opts = ["-p", str(tmp_path), "-n", "--min-overlap", "0", "--report-format", "json"]
    status = main([*opts, "--report-file", str(rep), str(src)])
    assert status == 0
    site = json.loads(rep.read_text())["collectives"][0]
    assert site["waits"][0]["line"] == 7


def test_output_needs_one_file(tmp_path: Path) -> None:
    a = _copy(tmp_path, "fig09_bcast.c")
    b = _copy(tmp_path, "fig19_minimd.c")
    assert main(["-o", str(tmp_path / "x.c"), str(a), str(b)]) == 2
