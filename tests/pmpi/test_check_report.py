"""pytest of check_report.py's check: it accepts the report of the sites
the program printed and refuses a wrong line, count, byte total,
function, path, time, or an extra row."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_report as cr

HEAD = (
    "nbcx-pmpi report: 2 ranks, {n} rows (call site x operation x path)\n"
    "nbcx-pmpi report: calls, bytes: sums over ranks; ...\n"
    "operation path ranks calls bytes start-done exposed hidden spread "
    "call site\n"
)
ROWS = [
    (
        "iallreduce                 nbcx       2        20          8000"
        "        15.2         1.5     90% [88-92%]    main at pmpi_report.c:56"
        " (pmpi_report)"
    ),
    (
        "ibcast                     nbcx       2         8           512"
        "        22.6         0.3     99%             bcast_helper at"
        " pmpi_report.c:36 (pmpi_report)"
    ),
    (
        "ibarrier                   native     2         2             0"
        "           -           -       -             main at pmpi_report.c:105"
        " (pmpi_report) -- intercommunicator"
    ),
]
EXPECT = (
    "expect iallreduce nbcx 20 8000 main pmpi_report.c:56\n"
    "expect ibcast nbcx 8 512 bcast_helper pmpi_report.c:36\n"
    "expect ibarrier native 2 0 main pmpi_report.c:105\n"
)


def report(rows: list[str]) -> str:
    return HEAD.format(n=len(rows)) + "\n".join(rows) + "\n"


def test_good_report_passes() -> None:
    cr.check(report(ROWS), cr.parse_expect(EXPECT), True)


@pytest.mark.parametrize(
    "old,new",
    [
        ("pmpi_report.c:56", "pmpi_report.c:57"),  # wrong line
        ("       20          8000", "       19          8000"),  # calls
        ("       20          8000", "       20          8004"),  # bytes
        ("bcast_helper at", "main at"),  # function
        ("iallreduce                 nbcx", "iallreduce                 native"),
        ("        15.2         1.5", "         1.2         1.5"),  # exposed > total
    ],
)
def test_wrong_row_fails(old: str, new: str) -> None:
    rows = [r.replace(old, new) for r in ROWS]
    assert rows != ROWS
    with pytest.raises(cr.Fail):
        cr.check(report(rows), cr.parse_expect(EXPECT), True)


def test_extra_row_fails() -> None:
    rows = [*ROWS, ROWS[0].replace(":56", ":99")]
    with pytest.raises(cr.Fail):
        cr.check(report(rows), cr.parse_expect(EXPECT), True)


def test_no_lines_ignores_lines_only() -> None:
    rows = [r.replace("pmpi_report.c:56", "elsewhere.c:1") for r in ROWS]
    cr.check(report(rows), cr.parse_expect(EXPECT), False)
    with pytest.raises(cr.Fail):
        cr.check(report(rows), cr.parse_expect(EXPECT), True)


def test_no_expect_fails() -> None:
    with pytest.raises(cr.Fail):
        cr.parse_expect("pmpi_report: passed\n")
