"""Issue 34, "where the code allows it": beside each converted call's overlap the
report gives its ``bound``, the statements to the first one that touches the
call's buffers, passing what the placement cannot see through or cross (unknown
calls, exits, MPI_Abort, preprocessor directives, jumps), and
``bound_ignores``, the effects it passed.  ``programs/bound.c`` has one call
per case; apps_stats.py reads the bound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import PROGRAMS, Result, run_transform

BOUND = PROGRAMS / "bound.c"
STATS = Path(__file__).resolve().parent.parent / "corpus" / "apps_stats.py"


@pytest.fixture(scope="module")
def bound_report(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """programs/bound.c transformed once for the tests of this module."""
    return run_transform(BOUND, tmp_path_factory.mktemp("bound"))


def _overlap(site: dict[str, Any]) -> int:
    return max(int(w["overlap"]) for w in site["waits"])


@pytest.mark.parametrize(
    ("func", "overlap", "bound", "ignores"),
    [
        # stopped by a call not in the file; the bound counts to the read of sum
        ("unknown_call", 1, 4, "call to external_work()"),
        # the wait is where the code needs it: the bound is the overlap
        ("no_gap", 2, 2, ""),
        # a #define between the statements stops the wait, not the bound
        ("directive", 1, 3, ""),
        # die() calls MPI_Abort: passed by the bound (it ends every rank), which
        # stops at MPI_Barrier as the wait does
        ("aborts", 2, 4, "MPI_Abort"),
        # carried into the next iteration, to the read of sum: the bound too
        ("loop", 3, 3, ""),
    ],
)
def test_bound(func: str, overlap: int, bound: int, ignores: str, bound_report: Result) -> None:
    res = bound_report
    site = next(r for r in res.report["collectives"] if r["function"] == func)
    assert site["action"] in ("nonblocking", "persistent")
    assert _overlap(site) == overlap
    assert site["bound"] == bound
    if ignores:
        assert any(ignores in w for w in site["bound_ignores"]), site.get("bound_ignores")
    else:
        assert "bound_ignores" not in site


def test_bound_keeps_the_output(bound_report: Result) -> None:
    """Computing the bound changes no decision: the transformed text has the
    waits where the overlaps say (before each statement that stops it: the
    unknown call, the #define, the call of die() in its branch)."""
    res = bound_report
    text = res.text.splitlines()
    for needle in ("external_work(w, 4);", "a += BOUND_TWO;", 'die("negative");'):
        i = next(k for k, t in enumerate(text) if needle in t)
        assert any("MPI_Wait" in t for t in text[i - 3 : i]), (needle, text[i - 3 : i + 1])
    assert res.status == 0


@pytest.mark.parametrize("name", ["carry.c", "fig05_cg.c"])
def test_bound_at_least_overlap(name: str, tmp_path: Path) -> None:
    """Every call whose bound is computed: bound >= overlap achieved."""
    res = run_transform(PROGRAMS / name, tmp_path)
    seen = 0
    for r in res.report["collectives"]:
        if "bound" not in r:
            continue
        seen += 1
        if r.get("waits"):
            assert r["bound"] >= _overlap(r), r
    assert seen


def test_apps_stats(tmp_path: Path) -> None:
    """apps_stats.py: the median over the calls in loops whose bound is >= 5, and
    every call below its bound with what stopped it."""

    def rec(line: int, ov: int, bound: int, loop: bool = True, **kw: object) -> dict[str, object]:
        r: dict[str, object] = {
            "function": "run_transformed",
            "line": line,
            "call": "MPI_Allreduce",
            "action": "nonblocking",
            "in_loop": loop,
            "waits": [{"overlap": ov, "stopped_by": f"stop{line}"}],
            "bound": bound,
        }
        r.update(kw)
        return r

    recs = {
        "cg": [rec(1, 2, 9, bound_ignores=["call to f() at line 3 (not in this file)"])],
        "life": [rec(2, 6, 6), rec(3, 0, 0)],
        "fft3d": [rec(4, 7, 7, loop=False)],
        "compress": [],
        "md": [
            {
                "function": "run_transformed",
                "line": 5,
                "call": "MPI_Bcast",
                "action": "blocking",
                "in_loop": True,
                "reason": "nothing to gain",
                "bound": 3,
            }
        ],
    }
    for k, v in recs.items():
        (tmp_path / f"{k}.json").write_text(json.dumps({"collectives": v}))
    out = subprocess.run(
        [sys.executable, str(STATS), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "converted with bound >= 5: median 4.0, values [2, 6]" in out
    assert "calls below their bound: 2" in out
    assert "cg:1 MPI_Allreduce (in a loop): 2 of 9, stopped by stop1; call to f()" in out
    assert "md:5 MPI_Bcast (in a loop): 0 of 3, stopped by (left blocking) nothing to gain" in out


def test_bound_keeps_the_rank_branch(bound_report: Result) -> None:
    """A rooted call in the else branch of ``if (me == 0)``, ``me`` from a
    function (no rank test for the tool): only the other ranks reach it, so the
    bound does not place the root's wait there (which would pass ``t = v``)."""
    res = bound_report
    sites = [r for r in res.report["collectives"] if r["function"] == "root_branch"]
    assert len(sites) == 2
    for site in sites:
        assert site["bound"] == 0, site
        assert "bound_ignores" not in site


def test_bound_tells_roles_apart(tmp_path: Path) -> None:
    """A rooted call the tool waits for at one place for both roles (here: its
    communicator may be another): the bound places the two roles' waits apart
    and says so."""
    res = run_transform(PROGRAMS / "rank_comm.c", tmp_path)
    site = next(r for r in res.report["collectives"] if r["function"] == "member_maybe_reversed")
    assert max(int(w["overlap"]) for w in site["waits"]) == 3
    assert site["bound"] == 6
    assert any("told apart" in w for w in site["bound_ignores"])
