"""Issue 34's list re-checked: preprocessor directives between a collective and
its wait, braces from macros, known library functions; and the timing
script's figures (corpus/time_corpus.py) without MPI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import mpicc_for_parsing, run_transform

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

PROGRAM = """#include <mpi.h>
#include <stdio.h>
#include <math.h>
int main(int argc, char **argv)
{
    int x = 1, y = 0, a = 0, b = 0;
    double d = 2.0;
    MPI_Init(&argc, &argv);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    a = x + 1;
#ifdef EXTRA
    a += 3;
GROUP_END
    d = sqrt(d) + fabs(d);
    printf("a %d\\n", a);
    b = a * 2;
    y += b;
    MPI_Finalize();
    return y + a + (int)d > 1000;
}
"""


def _wait_line(text: str) -> int:
    return next(i for i, t in enumerate(text.splitlines()) if "MPI_Wait(" in t)


def _line(text: str, needle: str) -> int:
    return next(i for i, t in enumerate(text.splitlines()) if needle in t)


@pytest.mark.parametrize("extra", [True, False])
def test_conditional_group_stepped_over(tmp_path: Path, extra: bool) -> None:
    """An #ifdef group without #else whose code does not touch the buffers is
    stepped over (the wait after its #endif, past sqrt, fabs and printf, known
    library functions), whether the configuration given compiles it or not:
    both configurations are analysed (before, compiled out, it stopped the
    wait before the #ifdef)."""
    src = tmp_path / "cond.c"
    src.write_text(PROGRAM.replace("GROUP_END", "#endif"))
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out, *(["-DEXTRA"] if extra else []))
    assert res.status == 0
    assert _wait_line(res.text) == _line(res.text, "y += b;") - 1
    assert res.text.count("MPI_Wait(") == 1


def test_conditional_group_with_else(tmp_path: Path) -> None:
    """With an #else whose code writes the receive buffer: each configuration
    waits where it needs to, the other (not compiled by -DEXTRA) before the write
    in its branch, and the one given after the #endif."""
    src = tmp_path / "cond_else.c"
    src.write_text(PROGRAM.replace("GROUP_END", "#else\n    y = 0;\n#endif"))
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out, "-DEXTRA")
    lines = res.text.splitlines()
    waits = [i for i, t in enumerate(lines) if "MPI_Wait(" in t]
    assert [lines[i + 1].strip() for i in waits] == ["y = 0;", "y += b;"]
    assert lines[waits[0] - 1].strip() == "#else"


BRACES = """#include <mpi.h>
#include <stdio.h>
#define BEGIN {
#define END }
int main(int argc, char **argv)
{
    int x = 1, y = 0, a = 0, b = 0;
    MPI_Init(&argc, &argv);
    if (x > 0) BEGIN
        b = 1;
    END
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    a = x + 1;
    a *= 2;
    for (int i = 0; i < 2; i++) BEGIN
        b += i;
    END
    y += a + b;
LATER
    printf("%d %d\\n", y, a);
    MPI_Finalize();
    return 0;
}
"""


def test_macro_braces_elsewhere(tmp_path: Path) -> None:
    """Braces from a macro in a block before the call, or in a loop after it,
    no longer leave the function's calls blocking (the wait goes past the
    loop); the output compiles with -Werror."""
    src = tmp_path / "braces.c"
    src.write_text(BRACES.replace("LATER\n", ""))
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    assert res.status == 0
    assert res.site(12)["action"] == "nonblocking"
    assert _wait_line(res.text) == _line(res.text, "y += a + b;") - 1
    cc = mpicc_for_parsing()
    assert cc is not None
    cmd = [cc, "-Wall", "-Wextra", "-Werror", "-fsyntax-only", str(out / "braces.c")]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_macro_braces_where_the_wait_may_go(tmp_path: Path) -> None:
    """A block with braces from a macro after the call, that the wait's scan may
    enter (an if, not a loop), still leaves the call blocking, with the reason."""
    src = tmp_path / "braces.c"
    src.write_text(BRACES.replace("LATER", "    if (a > 2) BEGIN\n        a += b;\n    END"))
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    s = res.site(12)
    assert s["action"] == "blocking"
    assert "braces from a macro expansion" in s["reason"]


def test_time_corpus_figures() -> None:
    """time_corpus.py's overlap figures and table from a report (no MPI run)."""
    sys.path.insert(0, str(CORPUS))
    import time_corpus

    report = {
        "collectives": [
            {"action": "nonblocking", "in_loop": True, "waits": [{"overlap": 2}, {"overlap": 6}]},
            {"action": "persistent", "in_loop": True, "waits": [{"overlap": 4}]},
            {"action": "nonblocking", "in_loop": False, "waits": [{"overlap": 1}]},
            {"action": "blocking", "in_loop": True, "waits": []},
        ]
    }
    o = time_corpus.overlap(report)
    assert o == {"converted": 3, "median": 4, "max": 6, "loop_median": 5.0, "loop_max": 6}
    row = {
        "program": "p",
        "before_s": 0.2,
        "after_s": 0.15,
        "gained_ms": 50.0,
        "gained_pct": 25.0,
        "overlap": o,
    }
    text = time_corpus.table([row])
    assert text.splitlines()[2] == (
        "| p | 3 | 4 / 6 | 5.0 / 6 | 200000 | 150000 | +50000 | +25.0 % |"
    )
