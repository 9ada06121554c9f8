"""The transformed programs match the reviewed outputs in golden/.

Regenerate after an intended change with NBCX_UPDATE_GOLDEN=1 and review the
diff of golden/ like code.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cases import CASES
from conftest import GOLDEN, PROGRAMS, run_transform


@pytest.mark.parametrize(("case", "program", "opts"), CASES, ids=[c[0] for c in CASES])
def test_golden(case: str, program: str, opts: tuple[str, ...], tmp_path: Path) -> None:
    res = run_transform(PROGRAMS / program, tmp_path, *opts)
    assert res.status == 0
    golden = GOLDEN / f"{case}.c"
    if os.environ.get("NBCX_UPDATE_GOLDEN"):
        golden.write_text(res.text)
    assert golden.exists(), f"no golden output {golden}: run with NBCX_UPDATE_GOLDEN=1"
    assert res.text == golden.read_text()


@pytest.mark.parametrize(("case", "program", "opts"), CASES, ids=[c[0] for c in CASES])
def test_idempotent(case: str, program: str, opts: tuple[str, ...], tmp_path: Path) -> None:
    """A second run finds nothing more to convert (the converted calls are gone)."""
    first = run_transform(PROGRAMS / program, tmp_path, *opts)
    again_dir = tmp_path / "again"
    again_dir.mkdir()
    src = tmp_path / program
    second = run_transform(src, again_dir, *opts)
    converted = [r for r in second.report["collectives"] if r["action"] == "nonblocking"]
    assert converted == []
    del first


def test_heat_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The text report of the larger program (quoted in the README)."""
    from conftest import mpicc_for_parsing
    from nbcx_transform.cli import main

    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    src = tmp_path / "heat.c"
    src.write_bytes((PROGRAMS / "heat.c").read_bytes())
    assert main(["--mpicc", cc, "-n", "--report", str(src)]) == 0
    text = capsys.readouterr().out.replace(str(src), "heat.c")
    golden = GOLDEN / "heat.report.txt"
    if os.environ.get("NBCX_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()
