"""C++ translation units (issue 34): std::vector buffers, new[]/delete[],
references, reference parameters, lambdas, RAII scopes and rank-divergent
calls analysed; member functions and templates too (test_cxx_members.py has
the rest).  The transformed program is compiled with mpicxx of Open MPI and
MPICH (-Wall -Wextra -Werror) and run on 1-4 ranks (MPICH 1-2)
without the run-time checker, and on 2 ranks under it: the output must be the
original's."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import (
    GOLDEN,
    PROGRAMS,
    Result,
    checker_lib,
    line_of,
    preload_args,
    run_transform,
)

SRC = PROGRAMS / "cxx" / "patterns.cpp"
MPIS = {
    "openmpi": ("mpicxx.openmpi", "mpicc.openmpi", ["mpiexec.openmpi", "--oversubscribe", "-n"]),
    "mpich": ("mpicxx.mpich", "mpicc.mpich", ["mpiexec.mpich", "-n"]),
}
RANKS = {"openmpi": (1, 2, 4), "mpich": (1, 2)}
ENV = dict(
    os.environ,
    OMPI_ALLOW_RUN_AS_ROOT="1",
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    OMPI_MCA_btl_vader_single_copy_mechanism="none",
)


@pytest.fixture(scope="module")
def patterns(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """patterns.cpp transformed once (libclang takes seconds on <vector>)."""
    return run_transform(SRC, tmp_path_factory.mktemp("cxx"))


def test_cxx_golden(patterns: Result) -> None:
    res = patterns
    assert res.status == 0
    golden = GOLDEN / "cxx" / "patterns.cpp"
    if os.environ.get("NBCX_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(res.text)
    assert res.text == golden.read_text()


def _before(text: str, first: str, second: str) -> bool:
    return 0 <= text.index(first) < text.index(second)


def test_cxx_decisions(patterns: Result) -> None:
    res = patterns
    text = res.text
    # vector data() buffer converted, wait after the independent work
    s = res.site(line_of(SRC, "ranks.data()"))
    assert s["action"] == "nonblocking"
    assert max(w["overlap"] for w in s["waits"]) >= 3
    # new[]: the wait before the read and the delete[]
    assert _before(text, "&nbcx_req[1], MPI_STATUS", "double first = sums[0]")
    # the reference bound before the call: non-root ranks wait before reading it
    assert _before(text, "&nbcx_req[2], MPI_STATUS", "double seen = head;")
    # the reference parameter: the wait before bump(maxes)
    assert _before(text, "&nbcx_req[3], MPI_STATUS", "bump(maxes);")
    # the lambda reading the buffer: the wait before its definition and call
    assert _before(text, "&nbcx_req[4], MPI_STATUS", "int ncounted = count_all();")
    # the RAII scope: the wait inside the block
    assert _before(text, "&nbcx_req[5], MPI_STATUS", "scoped += tmp[i];")
    # resize may reallocate: the wait before it
    assert _before(text, "&nbcx_req[7], MPI_STATUS", "grow.resize(2 * size);")
    # the root/non-root broadcasts: both converted
    assert text.count("MPI_Ibcast(p.data()") == 2
    # a member function's and a template's collectives are analysed (issue 34): each
    # converted with every call that can match it, its wait before the return
    for needle in ("MPI_Reduce(&mine, &all", "MPI_Scan(&mine, &all"):
        s = res.site(line_of(SRC, needle))
        assert s["action"] == "nonblocking", s
    for needle in ("MPI_Reduce(&mine, &red", "MPI_Scan(&mine, &scanned"):
        assert res.site(line_of(SRC, needle))["action"] == "nonblocking"
    assert "MPI_Ireduce(&mine, &all, 1, MPI_DOUBLE" in text
    assert "MPI_Iscan(&mine, &all, 1, type" in text
    scan = text.index("MPI_Iscan(&mine, &all")
    assert scan < text.index("MPI_Wait(", scan) < text.index("return all;", scan)


def test_cxx_temporary_buffer_kept_blocking(tmp_path: Path) -> None:
    """A buffer that may be a temporary (destroyed at the end of the statement),
    or that a member function returns, stays blocking with the reason; the file's
    other call is still converted."""
    src = tmp_path / "temp.cpp"
    src.write_text(
        "#include <mpi.h>\n#include <vector>\n"
        "static std::vector<int> make(int n) { return std::vector<int>(n); }\n"
        "struct Box { int v[4]; int *get() { return v; } };\n"
        "int main(int argc, char **argv) {\n"
        "    MPI_Init(&argc, &argv);\n"
        "    int x = 1, y = 0, z = 0;\n"
        "    Box box{};\n"
        "    MPI_Bcast(make(4).data(), 4, MPI_INT, 0, MPI_COMM_WORLD);\n"
        "    MPI_Bcast(box.get(), 4, MPI_INT, 0, MPI_COMM_WORLD);\n"
        "    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    z = x * 2 + 1;\n    z += x;\n    z *= 3;\n"
        "    int r = y + z;\n    MPI_Finalize();\n    return r > 100;\n}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    assert res.status == 0
    # a temporary: libclang wraps the statement (its cleanups), so it is no call
    # statement the rewriting can handle
    assert res.site(9)["action"] == "blocking"
    s = res.site(10)
    assert s["action"] == "blocking"
    assert "may be a temporary" in s["reason"]
    assert res.site(11)["action"] == "nonblocking"


def test_cxx_unknown_method_stops_wait(tmp_path: Path) -> None:
    """A member function that writes the buffer through a pointer member: the
    wait comes before its call (since issue 34 its summary applies: it writes
    memory outside it, which y, reachable from acc, may be; before, every member
    call stopped a wait)."""
    src = tmp_path / "meth.cpp"
    src.write_text(
        "#include <mpi.h>\n"
        "struct Acc { int *p; void add() { p[0] += 1; } };\n"
        "int main(int argc, char **argv) {\n"
        "    MPI_Init(&argc, &argv);\n"
        "    int x = 1, y = 0, a = 0, b = 0;\n"
        "    Acc acc{&y};\n"
        "    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    a = x + 1;\n    b = a * 2;\n    a += b;\n"
        "    acc.add();\n"
        "    MPI_Finalize();\n    return y + a > 1000;\n}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    s = res.site(7)
    assert s["action"] == "nonblocking"
    assert s["waits"][0]["line"] == 11  # acc.add()
    assert "buffer)" in s["waits"][0]["stopped_by"]
    assert _before(res.text, "MPI_Wait(", "acc.add();")


def _compile(cxx: str, src: Path, exe: Path) -> None:
    cmd = [cxx, "-Wall", "-Wextra", "-Werror", "-O1", "-DOMPI_SKIP_MPICXX"]
    cmd += ["-DMPICH_SKIP_MPICXX", "-o", str(exe), str(src)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"


def _run(launcher: list[str], n: int, exe: Path, pre: list[str] | None = None) -> str:
    cmd = [*launcher[:-1], *(pre or []), launcher[-1], str(n), str(exe)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=ENV, check=False)
    assert res.returncode == 0, f"{exe} on {n} ranks failed:\n{res.stdout}\n{res.stderr}"
    assert "violation" not in res.stderr.replace(" 0 violations", ""), res.stderr
    return res.stdout


@pytest.mark.mpi
@pytest.mark.parametrize("mpi", sorted(MPIS))
def test_cxx_same_output(
    mpi: str, patterns: Result, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cxx, cc, launcher = MPIS[mpi]
    if shutil.which(cxx) is None or shutil.which(launcher[0]) is None:
        pytest.skip(f"{mpi} not installed")
    orig, new = tmp_path / "orig", tmp_path / "new"
    _compile(cxx, SRC, orig)
    (tmp_path / SRC.name).write_text(patterns.text)
    _compile(cxx, tmp_path / SRC.name, new)
    for n in RANKS[mpi]:
        expected = _run(launcher, n, orig)
        assert expected, f"nothing printed on {n} ranks"
        assert _run(launcher, n, new) == expected, f"output differs on {n} ranks"
    pre = preload_args(launcher[0], checker_lib(cc, tmp_path_factory.getbasetemp()))
    assert _run(launcher, 2, new, pre) == _run(launcher, 2, orig), "differs under nbcx-check"


def test_cxx_hidden_accesses_stop_wait(tmp_path: Path) -> None:
    """Accesses the analysis cannot see through stop the wait before them: a
    reference member, a function returning a reference, and an object whose
    destructor (run at the closing brace) writes the buffer; a plain struct
    does not."""
    src = tmp_path / "hidden.cpp"
    src.write_text(
        "#include <mpi.h>\n"
        "struct D { int *p; ~D() { p[0] = 1; } };\n"
        "struct W { int &r; };\n"
        "struct P { double v[2]; int n; };\n"
        "static int g[2];\n"
        "static int &at(int i) { return g[i]; }\n"
        "int main(int argc, char **argv) {\n"
        "    MPI_Init(&argc, &argv);\n"
        "    int x = 1, y = 0, a = 0, b = 0;\n"
        "    W w{y};\n"
        "    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"  # 11
        "    a = x + 1;\n    b = a * 2;\n"
        "    w.r = 3;\n"  # 14
        "    MPI_Allreduce(&x, g, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"  # 15
        "    a = x + 1;\n"
        "    at(0) = 5;\n"  # 17
        "    {\n"
        "        MPI_Allreduce(&x, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"  # 19
        "        a = x + 1;\n"
        "        P p{{1.0, 2.0}, 3};\n"
        "        a = a * 2 + p.n;\n"
        "        D d{&b};\n"  # 23
        "        a += 2;\n"
        "    }\n"
        "    MPI_Finalize();\n    return y + a + g[0] > 1000;\n}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out, "--min-overlap", "0")
    assert res.status == 0
    text = res.text.splitlines()
    for call, stop in ((11, "w.r = 3;"), (15, "at(0) = 5;"), (19, "D d{&b};")):
        assert res.site(call)["action"] == "nonblocking"
        wait = next(i for i, t in enumerate(text) if f"nbcx_req[{(call - 11) // 4}], MPI_ST" in t)
        assert wait == next(i for i, t in enumerate(text) if stop in t) - 1, (call, stop)


def test_cxx_namespace_global_written_by_other_file(tmp_path: Path) -> None:
    """A namespace-scope variable is a global: a function of another file given
    that writes it stops the wait (it was taken for a local, and the wait went
    past the call)."""
    import json

    from conftest import mpicc_for_parsing
    from nbcx_transform.cli import main

    cc = mpicc_for_parsing()
    assert cc is not None
    a, b = tmp_path / "a.cpp", tmp_path / "b.cpp"
    a.write_text(
        "#include <mpi.h>\n#include <cstdio>\n"
        "namespace state { int buf[2]; }\nvoid touch();\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    int x[2] = {1, 2}, a = 0;\n"
        "    MPI_Allreduce(x, state::buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    a = x[0] + 1;\n    a *= 2;\n    touch();\n    a += state::buf[0];\n"
        '    std::printf("%d\\n", a);\n    MPI_Finalize();\n    return 0;\n}\n'
    )
    b.write_text("namespace state { extern int buf[2]; }\nvoid touch() { state::buf[1] = 5; }\n")
    rep = tmp_path / "r.json"
    args = ["--mpicc", cc, "-n", "--report-format", "json", "--report-file", str(rep)]
    assert main([*args, str(a), str(b)]) == 0
    (site,) = json.loads(rep.read_text())["collectives"]
    assert site["action"] == "nonblocking"
    assert [w["line"] for w in site["waits"]] == [11], site["waits"]


def test_cxx_namespace_function_not_taken_for_file_scope_one(tmp_path: Path) -> None:
    """ns::touch() writes the buffer, ::touch() does not: a call of ns::touch()
    must not be analysed with ::touch()'s summary (both are named touch)."""
    import json

    from conftest import mpicc_for_parsing
    from nbcx_transform.cli import main

    cc = mpicc_for_parsing()
    assert cc is not None
    a, b = tmp_path / "a.cpp", tmp_path / "b.cpp"
    a.write_text(
        "#include <mpi.h>\n#include <cstdio>\n"
        "namespace state { int buf[2]; }\n"
        "namespace ns { void touch(int *p); }\nvoid touch(int *p);\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    int x[2] = {1, 2}, a = 0;\n"
        "    MPI_Allreduce(x, state::buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    a = x[0] + 1;\n    ns::touch(&a);\n    touch(&a);\n    a += state::buf[0];\n"
        '    std::printf("%d\\n", a);\n    MPI_Finalize();\n    return 0;\n}\n'
    )
    b.write_text(
        "namespace state { extern int buf[2]; }\n"
        "namespace ns { void touch(int *p) { state::buf[0] = *p; } }\n"
        "void touch(int *p) { p[0] = 1; }\n"
    )
    rep = tmp_path / "r.json"
    args = ["--mpicc", cc, "-n", "--report-format", "json", "--report-file", str(rep)]
    assert main([*args, str(a), str(b)]) == 0
    (site,) = json.loads(rep.read_text())["collectives"]
    assert [w["line"] for w in site["waits"]] == [11], site["waits"]
