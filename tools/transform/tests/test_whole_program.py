"""Issue 19 items 4 and 7: calls into the program's other files (summaries from
compile_commands.json), the C library (getenv, gettimeofday), and
--from-make to write compile_commands.json."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROGRAMS, line_of, mpicc_for_parsing
from nbcx_transform.cli import main

MF = PROGRAMS / "multifile"


def _report(tmp: Path, *opts: str) -> dict:
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    rep = tmp / "r.json"
    args = ["--mpicc", cc, "--report-format", "json", "--report-file", str(rep)]
    assert main([*args, *opts]) == 0
    return json.loads(rep.read_text())["collectives"][0]


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
