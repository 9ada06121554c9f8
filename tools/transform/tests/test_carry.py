"""Issue 34, overlap on real codes: a wait stopped only by the end of its loop's
body is carried across the back edge, into the next iteration (before the first
statement that touches the buffers, at the latest before the call itself) and
after the loop.  ``programs/carry.c`` has the loops where it is carried (for,
while, do-while, a nested loop, a persistent broadcast, a call under a
condition), ``programs/carry_not.c``
those where it must not be: a ``break`` after or before the call, a
``continue``, a condition reading the result, a buffer declared in the loop,
the body's first statement reading the result."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import PROGRAMS, mpicc_for_parsing, run_transform

CARRY = PROGRAMS / "carry.c"
NOT = PROGRAMS / "carry_not.c"


def line_of(src: Path, needle: str, after: int = 0) -> int:
    """1-based number of the first line of ``src`` at or after offset ``after``
    that contains ``needle``."""
    text = src.read_text()
    return text[: text.index(needle, max(after, 0))].count("\n") + 1


def _not_carried(src: Path, line: int, tmp: Path, why: str) -> dict[str, object]:
    """The site at ``line`` of ``src``: converted, its wait not carried, with ``why``
    in the notes."""
    res = run_transform(src, tmp)
    site = res.site(line)
    assert site["action"] in ("nonblocking", "persistent")
    assert any(why in n for n in site["notes"] if "not carried" in n), site["notes"]
    assert not any(str(w["stopped_by"]).startswith("next iteration") for w in site["waits"])
    return site


def _waits(site: dict[str, Any]) -> list[tuple[int, str]]:
    return sorted((int(w["line"]), str(w["stopped_by"])) for w in site["waits"])


@pytest.mark.parametrize(
    ("call", "first_use", "after", "overlap"),
    [
        # the if reading the result in the next iteration
        ("MPI_Allreduce(local, global", "if (it > 0)", "return acc + global[1];", 7),
        # the write of the send buffer in the next iteration
        ("MPI_Allreduce(in, out", "in[0] = rank + it;", "return sum + out[0]", 4),
        ("MPI_Allreduce(&v, &all, 1, MPI_INT", "v = x + n;", "return all + x;", 4),
        # the root's write of the broadcast buffer; waited for after the inner loop
        ("MPI_Bcast(buf, 3", "if (rank == 0)", "t += buf[0] + buf[1] + buf[2];", 3),
        # under a condition: before the if holding the call; the waits test the flag
        ("MPI_Allreduce(e, en", "if (step % 3 == 0)", "return acc + en[0] + en[1];", 4),
        # a break before the call: the wait comes before it (the break then finds
        # nothing pending), and the break lands on the wait after the loop
        (
            "MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n    t += 9;",
            "if (t > 40)",
            "return t + all;",
            3,
        ),
    ],
)
def test_carried(call: str, first_use: str, after: str, overlap: int, tmp_path: Path) -> None:
    res = run_transform(CARRY, tmp_path)
    assert res.status == 0
    text = CARRY.read_text()
    site = res.site(text[: text.index(call)].count("\n") + 1)
    assert site["action"] in ("nonblocking", "persistent")
    assert "wait carried into the next iteration and after the loop" in site["notes"]
    (w1, why1), (w2, why2) = _waits(site)
    assert w1 == line_of(CARRY, first_use, text.index(call) - 400) and why1.startswith(
        "next iteration: "
    )
    assert w2 == line_of(CARRY, after) and why2 == "after the loop"
    assert {int(w["overlap"]) for w in site["waits"]} == {overlap}
    assert {bool(w["flagged"]) for w in site["waits"]} == {call.startswith("MPI_Allreduce(e,")}


def test_carried_text(tmp_path: Path) -> None:
    """The wait comes before the first use in the body and right after the loop;
    a persistent request is waited for before it is freed."""
    res = run_transform(CARRY, tmp_path)
    lines = res.text.splitlines()
    i = next(k for k, t in enumerate(lines) if "if (it > 0)" in t)
    assert "MPI_Wait(&nbcx_req[0]" in lines[i - 1]
    j = next(k for k, t in enumerate(lines) if "return acc + global[1];" in t)
    assert "MPI_Wait(&nbcx_req[0]" in lines[j - 1]
    k = next(k for k, t in enumerate(lines) if "t += buf[0] + buf[1] + buf[2];" in t)
    tail = lines[k - 6 : k]
    w = next(i for i, t in enumerate(tail) if "MPI_Wait(&nbcx_req[0]" in t)
    f = next(i for i, t in enumerate(tail) if "MPI_Request_free(&nbcx_req[0]" in t)
    assert tail[w - 1].strip() == "}" and w < f


def _call_in(src: Path, func: str) -> int:
    """The line of the first collective of ``func`` in ``src``."""
    text = src.read_text()
    at = text.index(f" {func}(int rank")
    return text[: text.index("MPI_", at)].count("\n") + 1


@pytest.mark.parametrize(
    ("func", "why"),
    [
        ("cond_reads", "the loop's condition or increment reads err (receive buffer)"),
        ("local_buffer", "is declared in the loop (it ends with the iteration)"),
        ("first_reads", "the body's first statement stops it (reads all (receive buffer))"),
        # the break stops the next iteration's scan at the body's first statement
        ("break_before", "the body's first statement stops it (break at line"),
        # a jump after the call: the wait stays before it and at the body's end
        ("with_break", ""),
        ("with_continue", ""),
    ],
)
def test_not_carried(func: str, why: str, tmp_path: Path) -> None:
    res = run_transform(NOT, tmp_path)
    assert res.status == 0
    site = res.site(_call_in(NOT, func))
    assert site["action"] == "nonblocking"
    assert "wait carried into the next iteration and after the loop" not in site["notes"]
    assert not any(str(w["stopped_by"]).startswith("next iteration") for w in site["waits"])
    assert all(w["stopped_by"] != "after the loop" for w in site["waits"])
    assert any(w["stopped_by"] == "end of the loop body" for w in site["waits"])
    if why:
        assert any(why in n for n in site["notes"]), site["notes"]


def test_not_carried_without_option(tmp_path: Path) -> None:
    """--no-carry keeps the wait at the end of the loop body (as before)."""
    res = run_transform(CARRY, tmp_path, "--no-carry")
    site = res.site(line_of(CARRY, "MPI_Allreduce(local, global"))
    ((_, why),) = _waits(site)
    assert why == "end of the loop body"


def test_cxx_not_carried(tmp_path: Path) -> None:
    """C++: the destructors at the body's closing brace run before the next
    iteration, so the wait stays in the body."""
    if mpicc_for_parsing() is None:
        pytest.skip("no MPI compiler wrapper")
    src = tmp_path / "in" / "loop.cpp"
    src.parent.mkdir()
    src.write_text(
        "#include <mpi.h>\n"
        "int main(int argc, char **argv) {\n"
        "  double a = 0, b = 0, t = 0;\n"
        "  MPI_Init(&argc, &argv);\n"
        "  for (int i = 0; i < 3; i++) {\n"
        "    t += i;\n"
        "    a = i;\n"
        "    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);\n"
        "    t *= 2;\n"
        "  }\n"
        "  MPI_Finalize();\n"
        "  return (int)(b + t) & 1;\n"
        "}\n"
    )
    site = _not_carried(src, 8, tmp_path, "C++")
    ((_, why),) = _waits(site)
    assert why == "end of the loop body"


@pytest.mark.mpi
@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
@pytest.mark.parametrize("program", [CARRY, NOT], ids=["carry", "carry_not"])
def test_same_output(program: Path, mpi: str, tmp_path: Path) -> None:
    """The transformed programs print what the originals do (without nbcx-check:
    Open MPI on 2 and 4 ranks, MPICH on 2)."""
    from test_matching import MPIS, _build, _run

    cc, launcher = MPIS[mpi]
    if shutil.which(cc) is None or shutil.which(launcher[0]) is None:
        pytest.skip(f"{mpi} not installed")
    res = run_transform(program, tmp_path)
    assert res.status == 0
    orig, new = tmp_path / "orig", tmp_path / "new"
    _build(cc, program, orig)
    _build(cc, tmp_path / program.name, new)
    for n in (2, 4) if mpi == "openmpi" else (2,):
        expected = _run(launcher, n, orig)
        assert expected
        assert sorted(_run(launcher, n, new).splitlines()) == sorted(expected.splitlines())


def test_label_in_loop_not_carried(tmp_path: Path) -> None:
    """A label in the body: a goto to it could skip the carried wait."""
    src = tmp_path / "in" / "label.c"
    src.parent.mkdir()
    src.write_text(
        "#include <mpi.h>\n"
        "int main(int argc, char **argv) {\n"
        "  int v = 0, all = 0, t = 0;\n"
        "  MPI_Init(&argc, &argv);\n"
        "  for (int i = 0; i < 3; i++) {\n"
        "    t += i;\n"
        "  again:\n"
        "    t *= 2;\n"
        "    if (t < 5)\n"
        "      goto again;\n"
        "    v = t;\n"
        "    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    t -= 1;\n"
        "  }\n"
        "  MPI_Finalize();\n"
        "  return all & 1;\n"
        "}\n"
    )
    _not_carried(src, 12, tmp_path, "label in the loop")


def test_wait_stays_in_the_scope_of_a_buffer(tmp_path: Path) -> None:
    """A send buffer declared in an if block ends at its closing brace: the wait
    comes before it (before this fix it came at the end of the loop body, after
    the buffer's lifetime, apps/fft3d's energy allreduce), and it is not carried."""
    if mpicc_for_parsing() is None:
        pytest.skip("no MPI compiler wrapper")
    src = tmp_path / "in" / "scope.c"
    src.parent.mkdir()
    src.write_text(
        "#include <mpi.h>\n"
        "int main(int argc, char **argv) {\n"
        "  double energy = 0, t = 0;\n"
        "  MPI_Init(&argc, &argv);\n"
        "  for (int it = 0; it < 3; it++) {\n"
        "    if (it == 0) {\n"
        "      double e = 2.0;\n"
        "      MPI_Allreduce(&e, &energy, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);\n"
        "      t += 1;\n"
        "    }\n"
        "    double e = 3.0 * it;\n"
        "    t += e;\n"
        "  }\n"
        "  {\n"
        "    double f = t;\n"
        "    MPI_Allreduce(&f, &t, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);\n"
        "    energy += 1;\n"
        "  }\n"
        "  energy *= 2;\n"
        "  MPI_Finalize();\n"
        "  return (int)(energy + t) & 1;\n"
        "}\n"
    )
    res = run_transform(src, tmp_path)
    for call, end in ((8, 10), (16, 18)):
        site = res.site(call)
        assert site["action"] == "nonblocking"
        ((line, why),) = _waits(site)
        assert line == end and why.startswith("end of the scope of "), (line, why)
