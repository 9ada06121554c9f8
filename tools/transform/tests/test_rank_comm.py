"""Issue 34 (apps/compress): a rooted collective on ``c.m``, a local struct's
member set once to ``MPI_COMM_WORLD`` and only read after, with the rank from
``MPI_Comm_rank(MPI_COMM_WORLD, &rank)``: the root and the other ranks wait
apart.  Where ``c.m`` may be set again (to a communicator whose root is
another rank) or ``&c`` is passed, one wait for both, and the bound says what
telling them apart would give.  ``programs/rank_comm.c`` also runs under MPI
with nbcx-check (cases.py), where a wrong rank test makes the real root read
its receive buffer before its wait."""

from __future__ import annotations

import pytest

from conftest import PROGRAMS, Result, run_transform

PROG = PROGRAMS / "rank_comm.c"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Result:
    return run_transform(PROG, tmp_path_factory.mktemp("rank_comm"))


def test_member_set_once(report: Result) -> None:
    res = report
    site = next(r for r in res.report["collectives"] if r["function"] == "member_world")
    waits = {w["role"]: w for w in site["waits"]}
    assert set(waits) == {"root", "nonroot"}
    assert waits["nonroot"]["guard"] == "rank != 0"
    assert waits["nonroot"]["overlap"] == 6
    assert waits["nonroot"]["stopped_by"] == "end of the loop body"
    assert site["bound"] == 6


@pytest.mark.parametrize("func", ["member_maybe_reversed", "member_address_taken"])
def test_member_not_known(func: str, report: Result) -> None:
    res = report
    site = next(r for r in res.report["collectives"] if r["function"] == func)
    assert {w["role"] for w in site["waits"]} == {"any"}
    assert all(w["guard"] == "" for w in site["waits"])
    assert any("no stable rank variable" in n for n in site["notes"])
    assert site["bound"] == 6
    assert any("told apart" in w for w in site["bound_ignores"])
