"""Issue 34: a call through a local function pointer whose every assignment is
a function of the file (``programs/fnptr.c``) has the union of those functions'
effects; a pointer whose address is taken stays a call of unknown effects.  The
program also runs under MPI with nbcx-check (cases.py: test_mpi)."""

from __future__ import annotations

import pytest

from conftest import PROGRAMS, Result, run_transform

FNPTR = PROGRAMS / "fnptr.c"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Result:
    return run_transform(FNPTR, tmp_path_factory.mktemp("fnptr"))


@pytest.mark.parametrize(
    ("func", "overlap", "stop"),
    [
        # scale or shift, on w only: stepped over (both calls)
        ("both_sides", 2, "reads sum (receive buffer)"),
        # may be bump_global, which writes g_send, the send buffer
        ("writes_send", 1, "writes g_send (send buffer)"),
        # shift(&sum, 1): the pointer writes the receive buffer
        ("reads_recv", 1, "writes sum (receive buffer)"),
        # &op taken: unknown
        ("address_taken", 1, "call through a function pointer at line"),
    ],
)
def test_fnptr(func: str, overlap: int, stop: str, report: Result) -> None:
    res = report
    site = next(r for r in res.report["collectives"] if r["function"] == func)
    assert site["action"] == "nonblocking"
    (w,) = site["waits"]
    assert w["overlap"] == overlap
    assert stop in w["stopped_by"], w
