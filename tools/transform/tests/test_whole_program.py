"""Issue 19 items 4 and 7: calls into the program's other files (summaries from
compile_commands.json), the C library (getenv, gettimeofday), and
--from-make to write compile_commands.json."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PROGRAMS, line_of, mpicc_for_parsing
from nbcx_transform.cli import main

MF = PROGRAMS / "multifile"


def _report(tmp: Path, *opts: str) -> dict[str, Any]:
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    rep = tmp / "r.json"
    args = ["--mpicc", cc, "--report-format", "json", "--report-file", str(rep)]
    assert main([*args, *opts]) == 0
    site: dict[str, Any] = json.loads(rep.read_text())["collectives"][0]
    return site


def _copy(tmp: Path) -> Path:
    dst = tmp / "mf"
    shutil.copytree(MF, dst)
    return dst


def test_call_into_other_file_stops_without_database(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    site = _report(tmp_path, "-n", str(d / "main.c"))
    assert site["action"] == "blocking"
    assert "timer()" in site["reason"]


def test_from_make_and_whole_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("make") is None:
        pytest.skip("no make")
    d = _copy(tmp_path)
    monkeypatch.chdir(d)
    site = _report(tmp_path, "--from-make", "make", str(d / "main.c"))
    db = json.loads((d / "compile_commands.json").read_text())
    assert sorted(e["file"] for e in db) == ["main.c", "physics.c", "timer.c"]
    assert site["action"] == "persistent"
    # past timer() (another file, gettimeofday), getenv, relax() (writes grid only)
    # and a global written by the caller, up to the read of the result
    assert [w["line"] for w in site["waits"]] == [line_of(MF / "main.c", "grid[0] += global")]
    assert site["waits"][0]["overlap"] == 5
    # -p with the database gives the same; --no-whole-program stops at timer()
    site2 = _report(tmp_path, "-n", "-p", str(d), str(MF / "main.c"))
    assert site2["waits"] == site["waits"]
    site3 = _report(tmp_path, "-n", "-p", str(d), "--no-whole-program", str(MF / "main.c"))
    assert site3["action"] == "blocking"
    # the program still builds warning-free and computes the same
    mpicc = shutil.which("mpicc.openmpi")
    mpiexec = shutil.which("mpiexec.openmpi")
    if mpicc is None or mpiexec is None:
        return
    env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_rmaps_base_oversubscribe="1",
        OMPI_MCA_btl_vader_single_copy_mechanism="none",
    )
    outs = []
    for tree in (MF, d):
        b = tmp_path / ("build_" + tree.name)
        shutil.copytree(tree, b, ignore=shutil.ignore_patterns("*.o", "app"))
        res = subprocess.run(
            ["make", "-s", "CFLAGS=-O1 -Wall -Wextra -Werror"],
            cwd=b,
            capture_output=True,
            text=True,
        )
        assert res.returncode == 0, res.stderr
        res = subprocess.run(
            [mpiexec, "-n", "2", str(b / "app")],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert res.returncode == 0, res.stderr
        outs.append(res.stdout)
    assert outs[0] == outs[1]


def test_call_into_other_file_deep_pointer(tmp_path: Path) -> None:
    """A function of another file that keeps no pointer lets its arguments stay
    private (a timer's own static globals do not alias the caller's buffers), but one
    that writes through a pointer stored in its argument (s->ptr[0]) reaches the
    caller's buffer: the wait stays before it."""
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    (tmp_path / "s.h").write_text(
        "struct S { double *ptr; };\nvoid poke(struct S *s);\nvoid tick(int *n);\n"
    )
    (tmp_path / "helper.c").write_text(
        '#include "s.h"\n'
        "static int ticks;\n"
        "void poke(struct S *s) { s->ptr[0] = 1.0; }\n"
        "void tick(int *n) { ticks += *n; }\n"
    )
    main_c = tmp_path / "main.c"
    main_c.write_text(
        "#include <mpi.h>\n"
        '#include "s.h"\n'
        "static double run(double *a, int n)\n"
        "{\n"
        "    double buf[4] = {0, 0, 0, 0};\n"
        "    struct S s = {buf};\n"
        "    MPI_Allreduce(a, buf, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);\n"
        "    tick(&n);\n"
        "    n += 2;\n"
        "    poke(&s);\n"
        "    return buf[0] + buf[1] + n;\n"
        "}\n"
        "double go(void)\n"
        "{\n"
        "    double a[4] = {1, 2, 3, 4};\n"
        "    return run(a, 4);\n"
        "}\n"
    )
    db = [
        {"directory": str(tmp_path), "file": f, "arguments": ["cc", "-c", f]}
        for f in ("main.c", "helper.c")
    ]
    (tmp_path / "compile_commands.json").write_text(json.dumps(db))
    site = _report(tmp_path, "-n", "-p", str(tmp_path), str(main_c))
    # poke() may write buf: the wait never moves past it (here it stays blocking:
    # &s, and so buf, escape into poke(), and tick() writes memory outside the file)
    poke = line_of(main_c, "poke(&s);")
    assert site["action"] == "blocking" or all(w["line"] <= poke for w in site["waits"])
    # without poke(), tick() keeps no pointer: &n stays private, the wait moves past it
    text = main_c.read_text()
    main_c.write_text(text.replace("    poke(&s);\n", "    (void)s;\n"))
    site = _report(tmp_path, "-n", "-p", str(tmp_path), str(main_c))
    assert site["action"] == "nonblocking"
    assert [w["line"] for w in site["waits"]] == [line_of(main_c, "return buf[0]")]
    assert site["waits"][0]["overlap"] == 3  # tick(&n), n += 2, (void)s


@pytest.mark.parametrize("rule", [False, True], ids=["no-rule", "depend-rule"])
def test_from_make_recursive_depend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rule: bool
) -> None:
    """Issue 34: a recursive Makefile whose src/Makefile includes the .depend its
    depend target writes.  Without a rule for .depend make stopped ("No rule to
    make target"); with one, make -n ran it (it remakes included makefiles even
    under -n).  Now the compile commands are found and nothing is run or written."""
    if shutil.which("make") is None:
        pytest.skip("no make")
    d = tmp_path / "app"
    shutil.copytree(PROGRAMS / "make_recursive", d)
    for f in ("main.c", "physics.c", "physics.h", "timer.c"):
        shutil.copy(MF / f, d / "src" / f)
    if rule:
        (d / "src" / "rule.mk").write_text((d / "src" / "rule.mk.in").read_text())
    monkeypatch.chdir(d)
    site = _report(tmp_path, "--from-make", "make", str(d / "src" / "main.c"))
    db = json.loads((d / "compile_commands.json").read_text())
    assert sorted(e["file"] for e in db) == ["main.c", "physics.c", "timer.c"]
    assert all("-c" in e["arguments"] and "-MM" not in e["arguments"] for e in db)
    assert {e["directory"] for e in db} == {str(d / "src")}
    assert not (d / "src" / ".depend").exists()
    assert not list((d / "src").glob("*.o"))
    assert site["action"] == "persistent"


def test_files_given_summarise_each_other(tmp_path: Path) -> None:
    """Issue 34: without compile_commands.json, the other files given are summarised
    too (timer() in timer.c, relax() in physics.c), where a call into them stopped
    the wait ("not in this file")."""
    d = _copy(tmp_path)
    files = [str(d / f) for f in ("main.c", "physics.c", "timer.c")]
    site = _report(tmp_path, "-n", *files)
    assert site["action"] == "persistent"
    assert [w["line"] for w in site["waits"]] == [line_of(MF / "main.c", "grid[0] += global")]
    assert site["waits"][0]["overlap"] == 5
    alone = _report(tmp_path, "-n", "--no-whole-program", *files)
    assert "timer()" in alone["reason"]
