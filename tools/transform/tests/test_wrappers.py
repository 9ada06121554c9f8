"""Issue 19.4: one-line wrapper functions (CoMD's parallel.c) and MPI's own
query functions.

A call of a function whose body is one blocking collective on buffers from its
parameters becomes a call of a generated twin ``<name>_nb`` that starts it,
and ``<name>_wait()`` where the wait can go; the wrapper's file (given in the
same run) defines both.  The program, original and transformed, is built with
-Wall -Wextra -Werror with MPI and without it (no -DDO_MPI) and run on 2 and 4
ranks under the run-time checker: the results must be identical."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import GOLDEN, PROGRAMS, checker_lib, line_of, mpicc_for_parsing, preload_args
from nbcx_transform.cli import main

WR = PROGRAMS / "wrappers"
FILES = ("main.c", "parallel.c", "timers.c")
ENV = dict(
    os.environ,
    OMPI_ALLOW_RUN_AS_ROOT="1",
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    OMPI_MCA_rmaps_base_oversubscribe="1",
    OMPI_MCA_btl_vader_single_copy_mechanism="none",
)


def _transform(tmp: Path, *files: str) -> tuple[Path, dict[tuple[str, int], dict[str, Any]]]:
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    d = tmp / "wr"
    shutil.copytree(WR, d)
    db = [
        {"directory": str(d), "file": f, "arguments": ["mpicc", "-DDO_MPI", "-c", f]} for f in FILES
    ]
    (d / "compile_commands.json").write_text(json.dumps(db))
    rep = tmp / "r.json"
    args = ["--mpicc", cc, "-p", str(d), "--report-format", "json", "--report-file", str(rep)]
    assert main([*args, *(str(d / f) for f in files)]) == 0
    recs = json.loads(rep.read_text())["collectives"]
    return d, {(Path(r["file"]).name, r["line"]): r for r in recs}


def test_wrapper_twins_golden(tmp_path: Path) -> None:
    d, recs = _transform(tmp_path, *FILES)
    for f in ("main.c", "parallel.c"):
        golden = GOLDEN / "wrappers" / f
        text = (d / f).read_text()
        if os.environ.get("NBCX_UPDATE_GOLDEN"):
            golden.parent.mkdir(exist_ok=True)
            golden.write_text(text)
        assert text == golden.read_text(), f
    assert (d / "timers.c").read_text() == (WR / "timers.c").read_text()
    main_c = WR / "main.c"
    add = recs[("main.c", line_of(main_c, "addDoubleParallel(eLocal"))]
    assert add["action"] == "nonblocking"
    assert add["wraps"] == "MPI_Allreduce"
    # past the timers (another file), computeForce() and advance(), up to the read of eSum
    assert [w["line"] for w in add["waits"]] == [line_of(main_c, "drift += eSum")]
    assert add["waits"][0]["overlap"] == 5
    bc = recs[("main.c", line_of(main_c, "bcastParallel("))]
    assert bc["action"] == "nonblocking" and bc["waits"][0]["overlap"] == 4
    # the address of a parameter's own copy dies at the return: no twin
    sv = recs[("main.c", line_of(main_c, "sumValueParallel(drift)"))]
    assert sv["action"] == "blocking"
    assert "'&value' is not derived from one parameter" in sv["reason"]
    # the wrappers themselves stay as they are (nothing to overlap inside them)
    inner = recs[("parallel.c", line_of(WR / "parallel.c", "MPI_Allreduce(sendBuf, recvBuf"))]
    assert inner["action"] == "blocking"
    assert any("addDoubleParallel_nb() and addDoubleParallel_wait()" in n for n in inner["notes"])


def test_wrapper_file_not_given(tmp_path: Path) -> None:
    """Without parallel.c among the files, no twin can be defined: main.c is
    unchanged, and the report names the calls of the program's wrappers and why."""
    d, recs = _transform(tmp_path, "main.c")
    assert (d / "main.c").read_text() == (WR / "main.c").read_text()
    assert {r["call"] for r in recs.values()} == {
        "addDoubleParallel",
        "maxIntParallel",
        "bcastParallel",
        "sumValueParallel",
    }
    assert all(r["action"] == "blocking" for r in recs.values())
    add = recs[("main.c", line_of(WR / "main.c", "addDoubleParallel(eLocal"))]
    assert "parallel.c is not among the files given" in add["reason"]
    sv = recs[("main.c", line_of(WR / "main.c", "sumValueParallel(drift)"))]
    assert "'&value' is not derived from one parameter" in sv["reason"]


def test_wrapper_rules(tmp_path: Path) -> None:
    """Wrappers that cannot get a twin: code after the collective
    in another configuration, a buffer from a global; calls in the same file."""
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    src = tmp_path / "same.c"
    src.write_text(
        "#include <mpi.h>\n"
        "#include <stdio.h>\n"
        "static double g[2];\n"
        "static void sum(double *s, double *r) { MPI_Allreduce(s, r, 2, MPI_DOUBLE, MPI_SUM,"
        " MPI_COMM_WORLD); }\n"
        "static void dbg(double *s, double *r)\n{\n"
        "    MPI_Allreduce(s, r, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);\n"
        '#ifdef DEBUG\n    printf("%f\\n", r[0]);\n#endif\n}\n'
        "static void glob(double *s) { MPI_Allreduce(s, g, 2, MPI_DOUBLE, MPI_SUM,"
        " MPI_COMM_WORLD); }\n"
        "int main(int argc, char **argv)\n{\n"
        "    double a[2] = {1, 2}, b[2], c[2], w = 0;\n"
        "    int j = 0;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    sum(a, b);\n"
        "    for (int k = 0; k < 100; k++) w += k;\n"
        "    dbg(a, c);\n"
        "    for (int k = 0; k < 100; k++) w += k;\n"
        "    glob(a);\n"
        "    for (int k = 0; k < 100; k++) w += k;\n"
        '    printf("%f %f %d %f %f\\n", w, b[0], j, c[1], g[0]);\n'
        "    MPI_Finalize();\n"
        "    return 0;\n"
        "}\n"
    )
    rep = tmp_path / "r.json"
    assert (
        main(["--mpicc", cc, "--report-format", "json", "--report-file", str(rep), str(src)]) == 0
    )
    recs = {(r["call"], r["line"]): r for r in json.loads(rep.read_text())["collectives"]}
    by = {c: r for (c, _), r in recs.items() if c in ("sum", "ret", "dbg", "glob")}
    assert by["sum"]["action"] == "nonblocking"
    assert "another configuration" in by["dbg"]["reason"]
    assert "'g' is not derived from one parameter" in by["glob"]["reason"]
    text = src.read_text()
    # same file, static, defined before main: no prototype; every call converted, so
    # the twin takes the place of sum() (which would be unused)
    assert "static void sum(" not in text
    assert "static void sum_nb(double *s, double *r)" in text
    assert "static void sum_wait(void)" in text
    # the wait stops at the next call that does MPI (one sum_nb() in flight at a time)
    assert "sum_nb(a, b);" in text and "sum_wait();\n    dbg(a, c);" in text
    assert "dbg_nb" not in text and "glob_nb" not in text
    mpicc = shutil.which("mpicc.openmpi") or shutil.which("mpicc.mpich")
    if mpicc is not None:
        res = subprocess.run(
            [mpicc, "-Wall", "-Wextra", "-Werror", "-c", "-o", str(tmp_path / "s.o"), str(src)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert res.returncode == 0, res.stderr


def _build(cc: str, d: Path, exe: Path, *defs: str) -> None:
    cmd = [cc, "-O1", "-Wall", "-Wextra", "-Werror", *defs, "-o", str(exe)]
    res = subprocess.run(
        [*cmd, *(str(d / f) for f in FILES)], capture_output=True, text=True, check=False
    )
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"


def _run(cmd: list[str]) -> str:
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=ENV, check=False)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stdout}\n{res.stderr}"
    assert "violation" not in res.stderr.replace(" 0 violations", ""), res.stderr
    return res.stdout


@pytest.mark.mpi
@pytest.mark.parametrize(
    "mpi",
    [
        ("openmpi", "mpicc.openmpi", "mpiexec.openmpi", (2, 4)),
        ("mpich", "mpicc.mpich", "mpiexec.mpich", (2,)),
    ],
    ids=lambda m: m[0],
)
def test_wrapper_twins_run(
    mpi: tuple[str, str, str, tuple[int, ...]],
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    _, cc, launcher, ranks = mpi
    if shutil.which(cc) is None or shutil.which(launcher) is None:
        pytest.skip(f"{mpi[0]} not installed")
    d, _ = _transform(tmp_path, *FILES)
    orig, new = tmp_path / "orig", tmp_path / "new"
    _build(cc, WR, orig, "-DDO_MPI")
    _build(cc, d, new, "-DDO_MPI")
    lib = checker_lib(cc, tmp_path_factory.getbasetemp())
    pre = preload_args(launcher, lib)
    for n in ranks:
        expected = _run([launcher, "-n", str(n), str(orig)])
        assert expected
        assert _run([launcher, *pre, "-n", str(n), str(new)]) == expected
    # the serial build (no MPI) of the transformed program still builds and agrees
    if shutil.which("gcc") is not None and mpi[0] == "openmpi":
        _build("gcc", WR, tmp_path / "orig_serial")
        _build("gcc", d, tmp_path / "new_serial")
        assert _run([str(tmp_path / "new_serial")]) == _run([str(tmp_path / "orig_serial")])


TWINS = PROGRAMS / "twins"


@pytest.mark.parametrize("opts", [(), ("--min-overlap", "0")], ids=["default", "min-overlap-0"])
def test_twins_emitted_once(tmp_path: Path, opts: tuple[str, ...]) -> None:
    """Issue 34: a wrapper called from its own file and from another, with
    --min-overlap 0 both files' calls use the twin, which was defined twice."""
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    d = tmp_path / "twins"
    shutil.copytree(TWINS, d)
    assert main(["--mpicc", cc, *opts, str(d / "main.c"), str(d / "par.c")]) == 0
    par = (d / "par.c").read_text()
    assert par.count("void sum_all_nb(") == 1 and par.count("void sum_all_wait(") == 1
    assert par.count("static MPI_Request nbcx_sum_all_req") == 1
    assert "sum_all_nb(s, t, 2);" in (d / "main.c").read_text()
    mpicc = shutil.which("mpicc.openmpi") or shutil.which("mpicc.mpich")
    if mpicc is None:
        return
    cmd = [mpicc, "-Wall", "-Wextra", "-Werror", "-o", str(d / "t"), str(d / "main.c")]
    res = subprocess.run([*cmd, str(d / "par.c")], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
