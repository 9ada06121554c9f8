"""tools/bench-count on small tables in bench-compare's format."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
import types
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "bench-count"

TABLE = """\
### ibarrier

| size | native I* | nbcx auto (ratio) | overlap auto |
|---|---|---|---|
| 0 | 0.98 | 1.26 (1.29x, 1.23-1.90) | 0% |

### iallreduce

| size | native I* | nbcx auto (ratio) | overlap auto |
|---|---|---|---|
| 8 | 1.20 | 1.10 (0.92x, 0.90-0.95) | 0% |
| 1M | 300.0 | 315.0 (1.05x, 1.01-1.06) | 9% |
| 4M | 900.0 | 955.0 (1.06x) | 9% |
"""


def load() -> types.ModuleType:
    loader = importlib.machinery.SourceFileLoader("bench_count", str(TOOL))
    spec = importlib.util.spec_from_loader("bench_count", loader)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_count"] = mod  # (dataclasses look their module up)
    loader.exec_module(mod)
    return mod


def test_counts_and_lists_points_over_the_bound() -> None:
    lines = load().report("t.md", TABLE, 1.05)
    assert lines[0] == "t.md: nbcx auto (ratio): 2 of 4 points at or under 1.05x native"
    assert lines[1:] == ["  ibarrier 0: 1.29x (1.23-1.90)", "  iallreduce 4M: 1.06x"]


def test_bound_is_inclusive_and_settable() -> None:
    assert "3 of 4" in load().report("t.md", TABLE, 1.06)[0]
    assert "4 of 4" in load().report("t.md", TABLE, 1.3)[0]


def test_not_a_table_is_status_2(tmp_path: Path) -> None:
    f = tmp_path / "x.md"
    f.write_text("# nothing here\n| a | b |\n")
    r = subprocess.run(
        [sys.executable, str(TOOL), str(f)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert "no nbcx column" in r.stderr
