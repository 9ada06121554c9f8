"""C++ member functions, templates, namespaces and extern "C" blocks analysed
(issue 34): programs/cxx/members.cpp transformed (golden output, the decisions
and their reasons), compiled with mpicxx of Open MPI and MPICH (-Wall -Wextra
-Werror) and run on 2 ranks of both and 4 of Open MPI, without the run-time
checker: the output must be the original's.  Smaller programs check what
stops a wait in a member function or a template, and what stays not analysed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import GOLDEN, PROGRAMS, Result, line_of, run_transform
from test_cxx import MPIS, _compile, _run

SRC = PROGRAMS / "cxx" / "members.cpp"


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> Result:
    return run_transform(SRC, tmp_path_factory.mktemp("members"))


def test_members_golden(members: Result) -> None:
    assert members.status == 0
    golden = GOLDEN / "cxx" / "members.cpp"
    if os.environ.get("NBCX_UPDATE_GOLDEN"):
        golden.write_text(members.text)
    assert members.text == golden.read_text()


def _wait_after(text: str, call: str) -> int:
    """The line (0-based) of the first MPI_Wait after ``call``."""
    lines = text.splitlines()
    i = next(k for k, t in enumerate(lines) if call in t)
    return next(k for k in range(i, len(lines)) if "MPI_Wait(" in lines[k])


def _index(text: str, needle: str) -> int:
    return next(k for k, t in enumerate(text.splitlines()) if needle in t)


def test_members_decisions(members: Result) -> None:
    res = members
    sites = res.report["collectives"]
    # one site per call in the source: the template's two instantiations (int,
    # double) and the class template's share theirs
    assert len(sites) == 9
    assert sum(s["action"] == "nonblocking" for s in sites) == 8
    text = res.text
    # the member buffer's broadcast: converted, the wait after the independent work
    # and before the read of the member
    s = res.site(line_of(SRC, "MPI_Bcast(this->buf_"))
    assert s["action"] == "nonblocking"
    assert s["waits"][0]["overlap"] >= 4
    assert _index(text, "steps *= 2;") < _wait_after(text, "MPI_Ibcast(this->buf_")
    assert _wait_after(text, "MPI_Ibcast(this->buf_") < _index(text, "return w + steps")
    # a member call touching the receive buffer right after the collective: blocking,
    # the member call named in the reason
    s = res.site(line_of(SRC, "MPI_Allgather("))
    assert s["action"] == "blocking"
    # (halve()'s summary: it writes its object's members, all_ among them)
    assert "(receive buffer)" in s["reason"] and "nothing to gain" in s["reason"]
    assert "MPI_Allgather(&mine, 1, MPI_DOUBLE, all_," in text
    # the root and the others: both branches converted, one wait after the if
    for line in (69, 73):
        assert "MPI_Bcast(buf_" in SRC.read_text().splitlines()[line - 1]
        assert res.site(line)["action"] == "nonblocking"
    assert text.count("MPI_Ibcast(buf_, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD") == 2
    assert (
        _index(text, "extra -= 45;")
        < _wait_after(text, "extra -= 45;")
        < _index(text, "return extra + buf_[2];")
    )
    # the function template: converted on its dependent buffers, the wait after the
    # independent work and before the return
    s = res.site(line_of(SRC, "MPI_Allreduce(&v, &all"))
    assert s["action"] == "nonblocking"
    assert (
        _index(text, "k *= 2;")
        < _wait_after(text, "MPI_Iallreduce(&v")
        < _index(text, "return all;")
    )
    # the class template's member: the wait before the write of a member (field-
    # insensitive: this object's members are one object)
    s = res.site(line_of(SRC, "MPI_Scan(part"))
    assert s["action"] == "nonblocking"
    assert _wait_after(text, "MPI_Iscan(part") + 1 == _index(text, "count = n;")
    # the namespace's and the extern "C" block's functions
    for call in ("MPI_Reduce(&x", "MPI_Exscan(&x"):
        s = res.site(line_of(SRC, call))
        assert s["action"] == "nonblocking", s
        assert s["waits"][0]["overlap"] >= 3, call
    assert _index(text, "sq *= 0.5;") < _wait_after(text, "MPI_Ireduce(&x")
    assert _index(text, "pad += 4;") < _wait_after(text, "MPI_Iexscan(&x")
    # the file's other Allreduce: converted with the template's (one group)
    assert res.site(line_of(SRC, "MPI_Allreduce(&e, &es"))["action"] == "nonblocking"
    # no twins in a C++ file
    assert "_nb(" not in text and "_wait(" not in text


@pytest.mark.mpi
@pytest.mark.parametrize("mpi", sorted(MPIS))
def test_members_same_output(mpi: str, members: Result, tmp_path: Path) -> None:
    cxx, _cc, launcher = MPIS[mpi]
    if shutil.which(cxx) is None or shutil.which(launcher[0]) is None:
        pytest.skip(f"{mpi} not installed")
    orig, new = tmp_path / "orig", tmp_path / "new"
    _compile(cxx, SRC, orig)
    (tmp_path / SRC.name).write_text(members.text)
    _compile(cxx, tmp_path / SRC.name, new)
    for n in (2, 4) if mpi == "openmpi" else (2,):
        expected = _run(launcher, n, orig)
        assert "spread" in expected and "isum" in expected, expected
        assert _run(launcher, n, new) == expected, f"output differs on {n} ranks"


def _transform(tmp_path: Path, text: str) -> Result:
    src = tmp_path / "t.cpp"
    src.write_text(text)
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    assert res.status == 0
    return res


def test_template_dependent_use_stops_wait(tmp_path: Path) -> None:
    """In a template's body, a use of a value of the template parameter's type may
    call a function of the argument type (an operator, a constructor): the wait
    comes before it; work on other types does not stop it."""
    res = _transform(
        tmp_path,
        "#include <mpi.h>\n"
        "template <typename T> T f(T v, MPI_Datatype t) {\n"
        "    T all = v;\n"
        "    MPI_Allreduce(&v, &all, 1, t, MPI_SUM, MPI_COMM_WORLD);\n"  # 4
        "    int k = 1;\n    k *= 3;\n    k += 2;\n"
        "    T w = v + v;\n"  # 8
        "    k += 1;\n    k *= 5;\n"
        "    return all + w + k;\n}\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    int r = f(1, MPI_INT) + (int)f(2.0, MPI_DOUBLE);\n"
        "    MPI_Finalize();\n    return r > 1000;\n}\n",
    )
    s = res.site(4)
    assert s["action"] == "nonblocking"
    assert [w["line"] for w in s["waits"]] == [8], s["waits"]
    assert "template parameter at line 8" in s["waits"][0]["stopped_by"]


def test_member_write_and_call_stop_wait(tmp_path: Path) -> None:
    """A member buffer: a write of another member (this object's members are one
    object), a call of a member function writing a member, and a file-scope
    function writing a global each stop
    the wait in a member function; locals do not."""
    res = _transform(
        tmp_path,
        "#include <mpi.h>\n"
        "int g[2];\n"
        "static void touch() { g[0] = 1; }\n"
        "struct S {\n"
        "    int a[2]; int n = 0;\n"
        "    void h() { n += 1; }\n"
        "    void f1() {\n"
        "        MPI_Allreduce(MPI_IN_PLACE, a, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"  # 8
        "        int k = 1;\n        k *= 3;\n"
        "        n = k;\n"  # 11
        "    }\n"
        "    void f2() {\n"
        "        MPI_Allreduce(MPI_IN_PLACE, this->a, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "        int k = 1;\n        k *= 3;\n"
        "        this->h();\n"  # 17
        "    }\n"
        "    void f3() {\n"
        "        MPI_Allreduce(MPI_IN_PLACE, a, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"  # 20
        "        int k = 1;\n        k *= 3;\n"
        "        touch();\n"  # 23
        "        k += 1;\n"
        "    }\n"
        "};\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    S s{};\n    s.f1();\n    s.f2();\n    s.f3();\n"
        "    MPI_Finalize();\n    return s.a[0] > 1000;\n}\n",
    )
    for call, stop in ((8, 11), (14, 17), (20, 23)):
        s = res.site(call)
        assert s["action"] == "nonblocking", s
        assert [w["line"] for w in s["waits"]] == [stop], (call, s["waits"])
    assert "(receive buffer)" in res.site(14)["waits"][0]["stopped_by"]  # h() writes n


def test_constructor_still_not_analysed(tmp_path: Path) -> None:
    """A constructor's collective is not analysed: it stays blocking with the
    reason, and so does every call of the same collective (they could match)."""
    res = _transform(
        tmp_path,
        "#include <mpi.h>\n"
        "struct S {\n"
        "    int v[2];\n"
        "    S() { MPI_Bcast(v, 2, MPI_INT, 0, MPI_COMM_WORLD); }\n"
        "    void f() {\n"
        "        MPI_Bcast(v, 2, MPI_INT, 0, MPI_COMM_WORLD);\n"  # 6
        "        int k = 1;\n        k *= 3;\n        k += 4;\n"
        "        v[1] = k;\n"
        "    }\n"
        "};\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    S s;\n    s.f();\n"
        "    MPI_Finalize();\n    return s.v[0] > 1000;\n}\n",
    )
    s = res.site(6)
    assert s["action"] == "blocking"
    assert "a constructor (S())" in s["reason"] and "not analysed (C++)" in s["reason"]
    assert "MPI_Ibcast" not in res.text


def test_template_unresolved_collective_kept_blocking(tmp_path: Path) -> None:
    """A template's collective whose callee clang cannot resolve (the program
    overloads MPI_Bcast) is no call the analysis sees: read from the text, it
    stays blocking, and so does the file's other MPI_Bcast (they could match)."""
    res = _transform(
        tmp_path,
        "#include <mpi.h>\n"
        "struct Box { int v; };\n"
        "int MPI_Bcast(Box &b, int root);\n"
        "template <typename T> T f(T v) {\n"
        "    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);\n"  # 5
        "    return v;\n}\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    int x = f(3), y = 1;\n"
        "    MPI_Bcast(&y, 1, MPI_INT, 0, MPI_COMM_WORLD);\n"  # 11
        "    int k = 1;\n    k *= 3;\n    k += 2;\n"
        "    MPI_Finalize();\n    return x + y + k > 1000;\n}\n",
    )
    s = res.site(11)
    assert s["action"] == "blocking"
    assert "t.cpp:5" in s["reason"] and "leaves unresolved (in f())" in s["reason"], s
    assert "MPI_Ibcast" not in res.text


def test_namespace_function_not_exported_by_plain_name(tmp_path: Path) -> None:
    """Another file's ns::touch() (analysed now, it touches only its argument) is
    not the summary of a call of ::touch(), which is in no file given: that call
    stops the wait."""
    import json

    from conftest import mpicc_for_parsing
    from nbcx_transform.cli import main

    cc = mpicc_for_parsing()
    assert cc is not None
    a, b = tmp_path / "a.cpp", tmp_path / "b.cpp"
    a.write_text(
        "#include <mpi.h>\n#include <cstdio>\n"
        "int buf[2];\nvoid touch(int *p);\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    int x[2] = {1, 2}, a = 0;\n"
        "    MPI_Allreduce(x, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    a = x[0] + 1;\n    a *= 2;\n    touch(&a);\n    a += buf[0];\n"
        '    std::printf("%d\\n", a);\n    MPI_Finalize();\n    return 0;\n}\n'
    )
    b.write_text("namespace ns { void touch(int *p) { p[0] = 1; } }\n")
    rep = tmp_path / "r.json"
    args = ["--mpicc", cc, "-n", "--report-format", "json", "--report-file", str(rep)]
    assert main([*args, str(a), str(b)]) == 0
    (site,) = json.loads(rep.read_text())["collectives"]
    assert site["action"] == "nonblocking"
    assert [w["line"] for w in site["waits"]] == [11], site["waits"]


def test_member_call_object_escapes(tmp_path: Path) -> None:
    """A member function's object may be any object a member function is called
    on: main's local f, reachable only through a file-static pointer, is written
    by poke(), which the member function calls while its wait is pending."""
    res = _transform(
        tmp_path,
        "#include <mpi.h>\n"
        "struct F;\n"
        "static F *holder;\n"
        "struct F {\n    int a[2];\n    void m();\n};\n"
        "static void poke() { holder->a[0] = 5; }\n"
        "void F::m() {\n"
        "    MPI_Allreduce(MPI_IN_PLACE, a, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"  # 10
        "    int k = 1;\n    k *= 3;\n"
        "    poke();\n"  # 13
        "    k += a[1];\n    a[1] = k;\n"
        "}\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    F f{};\n    holder = &f;\n    f.m();\n"
        "    MPI_Finalize();\n    return f.a[0] > 1000;\n}\n",
    )
    s = res.site(10)
    assert s["action"] == "nonblocking", s
    assert [w["line"] for w in s["waits"]] == [13], s["waits"]


def test_vector_member_follows_vector_rules(tmp_path: Path) -> None:
    """A std::vector member: v_.data() is a buffer, work on locals does not stop
    the wait, push_back (it may reallocate) does."""
    res = _transform(
        tmp_path,
        "#include <mpi.h>\n#include <vector>\n"
        "class V {\n"
        "    std::vector<double> v_;\n"
        "public:\n"
        "    V() : v_(4, 1.0) {}\n"
        "    double run() {\n"
        "        MPI_Bcast(v_.data(), 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);\n"  # 8
        "        int k = 1;\n        k *= 3;\n        k += 2;\n"
        "        v_.push_back(k);\n"  # 12
        "        return v_[0];\n"
        "    }\n"
        "};\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    V v;\n    double r = v.run();\n"
        "    MPI_Finalize();\n    return r > 1000;\n}\n",
    )
    s = res.site(8)
    assert s["action"] == "nonblocking", s
    assert [w["line"] for w in s["waits"]] == [12], s["waits"]
    assert s["waits"][0]["overlap"] == 3


@pytest.mark.parametrize("overload", [False, True])
def test_template_address_with_operator_amp(tmp_path: Path, overload: bool) -> None:
    """A template's &v on a value of the parameter's type is v's address unless
    the program declares an operator& (a class argument's could return anything):
    then the call stays blocking with the reason, and its group with it."""
    res = _transform(
        tmp_path,
        "#include <mpi.h>\n"
        + ("struct P { int v; int *operator&() { return &v; } };\n" if overload else "\n")
        + "template <typename T> T f(T v, MPI_Datatype t) {\n"
        "    T all = v;\n"
        "    MPI_Allreduce(&v, &all, 1, t, MPI_SUM, MPI_COMM_WORLD);\n"  # 5
        "    int k = 1;\n    k *= 3;\n    k += 2;\n"
        "    return all;\n}\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    int r = f(1, MPI_INT);\n"
        "    MPI_Finalize();\n    return r > 1000;\n}\n",
    )
    s = res.site(5)
    if overload:
        assert s["action"] == "blocking"
        assert "declares a unary operator&" in s["reason"], s
    else:
        assert s["action"] == "nonblocking", s


def test_member_call_arguments_escape(tmp_path: Path) -> None:
    """A member function not analysed may keep the pointer it is given (k.keep(&y)
    may store it in gp): poke(), which writes through gp, then stops y's wait."""
    res = _transform(
        tmp_path,
        "#include <mpi.h>\n"
        "int *gp;\n"
        "struct K { void keep(int *p); };\n"
        "void poke() { gp[0] = 1; }\n"
        "int main(int argc, char **argv) {\n    MPI_Init(&argc, &argv);\n"
        "    int x = 1, y = 0, a = 0;\n"
        "    K k;\n    k.keep(&y);\n"
        "    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"  # 10
        "    a = x + 1;\n    a *= 2;\n"
        "    poke();\n"  # 13
        "    a += y;\n"
        "    MPI_Finalize();\n    return a > 1000;\n}\n",
    )
    s = res.site(10)
    assert s["action"] == "nonblocking", s
    assert [w["line"] for w in s["waits"]] == [13], s["waits"]
