"""Issue 34: matching kept across ranks.

MPI never matches a blocking collective with a nonblocking one (nor either with
a persistent one): when the root calls ``MPI_Bcast`` in one branch and the other
ranks in another, both calls must be converted or neither.  The programs in
programs/matching/ have rank-divergent collectives (root/non-root branches,
wrappers called from both, loops with ``break``, ``continue`` and an early
``return``); each hung on 2 ranks after the transformation before the fix.

The MPI tests run the transformed programs on 2 and 4 ranks with both MPIs and
*without* nbcx-check (which runs each deferred collective at its wait, and so
would hide a nonblocking call meeting a blocking one): they must terminate with
the output of the original.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PROGRAMS, line_of, mpicc_for_parsing, run_transform
from nbcx_transform import cli
from nbcx_transform.clangast import parse
from nbcx_transform.flags import clang_args
from nbcx_transform.matching import keep_matching, matching_problems
from nbcx_transform.transform import FileTransform, Options

M = PROGRAMS / "matching"
PROGS = [
    ("root_branch.c", ()),
    ("wrappers_both.c", ()),
    ("loops_exits.c", ()),
    ("kept_blocking.c", ()),
    ("rank_trips.c", ()),
    ("conditional_expr.c", ()),
    ("header_wrapper.c", ()),
]


def _acts(res_report: dict[str, Any], call: str) -> list[str]:
    return [r["action"] for r in res_report["collectives"] if call in (r["call"], r.get("wraps"))]


def test_root_branch_both_converted(tmp_path: Path) -> None:
    src = M / "root_branch.c"
    res = run_transform(src, tmp_path)
    assert res.status == 0
    # the non-root broadcast gains nothing, but the root's is converted: so is it
    assert _acts(res.report, "MPI_Bcast") == ["nonblocking"] * 4
    other = res.site(line_of(src, "/* read at once */"))
    assert any("start-then-wait" in n and "nothing to gain" in n for n in other["notes"])
    assert "MPI_Bcast(" not in res.text


def test_wrappers_called_from_both_branches(tmp_path: Path) -> None:
    res = run_transform(M / "wrappers_both.c", tmp_path)
    assert res.status == 0
    assert set(_acts(res.report, "MPI_Bcast")) == {"nonblocking"}
    assert set(_acts(res.report, "MPI_Allreduce")) == {"nonblocking"}
    # the wrappers themselves start and wait (their callers that keep them), and
    # their twins are defined once each
    assert "MPI_Bcast(" not in res.text and "MPI_Allreduce(" not in res.text
    assert res.text.count("void share_nb(") == 1 and res.text.count("void share_wait(") == 1


def test_loops_with_exits_not_persistent(tmp_path: Path) -> None:
    src = M / "loops_exits.c"
    res = run_transform(src, tmp_path)
    assert res.status == 0
    acts = [r["action"] for r in res.report["collectives"]]
    assert acts == ["nonblocking"] * len(acts)
    site = res.site(line_of(src, "MPI_Allreduce(&loc"))
    assert any("not persistent: the MPI_Allreduce calls" in n for n in site["notes"])
    assert "_init(" not in res.text


def test_call_that_cannot_be_rewritten_keeps_its_group(tmp_path: Path) -> None:
    src = M / "kept_blocking.c"
    res = run_transform(src, tmp_path)
    assert res.status == 0
    root = res.site(line_of(src, "MPI_Bcast(p, 2"))
    assert root["action"] == "blocking"
    assert "kept blocking" in root["reason"] and "macro expansion" in root["reason"]
    root2 = res.site(line_of(src, "MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);"))
    assert root2["action"] == "blocking" and "result is used" in root2["reason"]
    assert "MPI_Ibcast" not in res.text and "MPI_Iallreduce" not in res.text


def test_loops_with_rank_dependent_trips(tmp_path: Path) -> None:
    """Two loops whose trip counts depend on the rank, their calls under no
    condition: the k-th broadcast may come from either loop, so the two are
    converted alike, and not persistent (each would have been persistent on its
    own, with its init at its first start: on 4 ranks rank 0 would init one
    request, rank 1 two)."""
    src = M / "rank_trips.c"
    res = run_transform(src, tmp_path)
    assert _acts(res.report, "MPI_Bcast") == ["nonblocking", "nonblocking"]
    assert "MPI_Bcast(" not in res.text and "_init(" not in res.text


def test_conditional_expressions_are_conditions(tmp_path: Path) -> None:
    """Wrappers called in operands of ``?:``, ``&&``, ``||`` and GNU ``?:`` run on
    some ranks only: their calls are not issued alike on every rank, so each
    collective's calls are converted alike (the others' start-then-wait).  Before,
    only ``if``, ``switch`` and jumps counted as conditions: the root's call became
    nonblocking, the others' stayed blocking, and the program hung on 2 ranks."""
    src = M / "conditional_expr.c"
    res = run_transform(src, tmp_path)
    assert res.status == 0
    for call in ("MPI_Bcast", "MPI_Reduce", "MPI_Gather"):
        assert _acts(res.report, call) == ["nonblocking", "nonblocking"], call
        assert f"{call}(" not in res.text
    for line in [i for i, t in enumerate(src.read_text().splitlines(), 1) if "read at once" in t]:
        assert any("start-then-wait" in n for n in res.site(line)["notes"])


def test_header_wrapper_keeps_its_group(tmp_path: Path) -> None:
    """A ``static inline`` wrapper in the program's own header broadcasts for the
    non-root ranks; headers are not rewritten, so the root's broadcast in main
    stays blocking too, with the reason (before: MPI_Ibcast, and a hang).  A
    header function nothing calls does not hold its collective's group back."""
    src = M / "header_wrapper.c"
    res = run_transform(src, tmp_path)
    assert res.status == 0
    root = res.site(line_of(src, "/* root */"))
    assert root["action"] == "blocking"
    assert "kept blocking" in root["reason"] and "header_wrapper.h" in root["reason"]
    assert "MPI_Ibcast(" not in res.text
    assert _acts(res.report, "MPI_Allreduce") == ["nonblocking"]


def test_headers_match_nothing(tmp_path: Path) -> None:
    """--headers-match-nothing leaves the header's calls out of matching (the user
    asserts that none meets a converted call; here it would, so the program is
    only transformed, not run): the root's broadcast is converted on its own."""
    src = M / "header_wrapper.c"
    res = run_transform(src, tmp_path, "--headers-match-nothing")
    assert res.status == 0
    assert res.site(line_of(src, "/* root */"))["action"] == "nonblocking"
    assert "header_wrapper.h" not in json.dumps(res.report)


def test_strict_matching(tmp_path: Path) -> None:
    """One loop, entered once, and calls before it: every rank makes its calls
    in the same order, so each is decided alone (persistent in the loop);
    --strict-matching converts them all alike, nonblocking."""
    src = PROGRAMS / "fig05_cg.c"
    res = run_transform(src, tmp_path)
    # one allgather has nothing to gain, the other is persistent
    assert _acts(res.report, "MPI_Allgather") == ["blocking", "persistent"]
    res = run_transform(src, tmp_path, "--strict-matching")
    assert _acts(res.report, "MPI_Allgather") == ["nonblocking", "nonblocking"]


def test_uniform_calls_keep_their_own_decisions(tmp_path: Path) -> None:
    """Calls that every rank makes from the same sites (straight-line code in main)
    are decided one by one, as before: a call with nothing to gain stays blocking
    next to a converted one, and a loop's call may be persistent."""
    src = PROGRAMS / "once_barrier.c"
    res = run_transform(src, tmp_path)
    assert res.site(line_of(src, "MPI_Allreduce"))["action"] == "persistent"
    src = PROGRAMS / "safety_macro.c"
    res = run_transform(src, tmp_path)
    assert res.site(line_of(src, "MPI_Allreduce(&x"))["action"] == "nonblocking"


def test_file_not_given_keeps_its_group(tmp_path: Path) -> None:
    """A program file in compile_commands.json that is not given: its broadcast
    stays blocking, so the given file's broadcasts do too."""
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    a = tmp_path / "a.c"
    a.write_text(
        (M / "root_branch.c").read_text().replace("int main(", "void other(int *p);\nint main(")
    )
    b = tmp_path / "b.c"
    b.write_text(
        "#include <mpi.h>\nvoid other(int *p)\n{\n"
        "    MPI_Bcast(p, 1, MPI_INT, 0, MPI_COMM_WORLD);\n}\n"
    )
    db = [
        {"directory": str(tmp_path), "file": f, "arguments": ["cc", "-c", f]}
        for f in ("a.c", "b.c")
    ]
    (tmp_path / "compile_commands.json").write_text(json.dumps(db))
    rep = tmp_path / "r.json"
    args = ["--mpicc", cc, "-n", "-p", str(tmp_path), "--report-format", "json"]
    assert cli.main([*args, "--report-file", str(rep), str(a)]) == 0
    recs = json.loads(rep.read_text())["collectives"]
    bc = [r for r in recs if r["call"] == "MPI_Bcast"]
    assert [r["action"] for r in bc] == ["blocking"] * 4
    # (the ones that would have been converted say why they are not)
    assert sum("b.c:4, in a file not given" in r["reason"] for r in bc) == 3


def _analysed(src: Path) -> FileTransform:
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    ft = FileTransform(parse(str(src), clang_args(src, [], [], cc, None, [])), Options())
    ft.analyse()
    return ft


def test_check_finds_a_broken_result() -> None:
    ft = _analysed(M / "root_branch.c")
    keep_matching([ft])
    assert matching_problems([ft], [ft.emit()]) == []
    ft = _analysed(M / "root_branch.c")
    # without keep_matching: the non-root broadcast that gains nothing stays blocking
    problems = matching_problems([ft], [ft.emit()])
    assert any("MPI_Bcast would be blocking at root_branch.c:31" in p for p in problems)
    assert any("calls MPI_Ibcast where it called MPI_Bcast" in p for p in problems)


def test_cli_refuses_to_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    monkeypatch.setattr(cli, "keep_matching", lambda *args: [])
    out = tmp_path / "out.c"
    status = cli.main(["--mpicc", cc, "-o", str(out), str(M / "root_branch.c")])
    assert status == cli.EXIT_MATCHING
    assert not out.exists()
    err = capsys.readouterr().err
    assert "refusing to write" in err and "MPI_Bcast would be blocking" in err


# ---------------------------------------------------------------- under MPI
MPIS = {
    "openmpi": ("mpicc.openmpi", ["mpiexec.openmpi", "--allow-run-as-root", "--oversubscribe"]),
    "mpich": ("mpicc.mpich", ["mpiexec.mpich"]),
}


def _build(cc: str, src: Path, exe: Path, *defs: str) -> None:
    cmd = [cc, "-Wall", "-Wextra", "-Werror", "-O1", *defs, "-o", str(exe), str(src)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"


def _run(launcher: list[str], n: int, exe: Path) -> str:
    from test_mpi import ENV

    try:
        res = subprocess.run(
            [*launcher, "-n", str(n), str(exe)],
            capture_output=True,
            text=True,
            timeout=60,
            env=ENV,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{exe.name} on {n} ranks did not finish in 60 s (collectives mismatched?)")
    assert res.returncode == 0, f"{exe} on {n} ranks failed:\n{res.stdout}\n{res.stderr}"
    return res.stdout


@pytest.mark.mpi
@pytest.mark.parametrize("mpi", sorted(MPIS))
@pytest.mark.parametrize(("program", "opts"), PROGS, ids=[p for p, _ in PROGS])
def test_divergent_same_output(
    program: str, opts: tuple[str, ...], mpi: str, tmp_path: Path
) -> None:
    cc, launcher = MPIS[mpi]
    if shutil.which(cc) is None or shutil.which(launcher[0]) is None:
        pytest.skip(f"{mpi} not installed")
    res = run_transform(M / program, tmp_path, *opts)
    assert res.status == 0
    for h in M.glob("*.h"):  # the headers the transformed copy includes
        shutil.copy(h, tmp_path)
    orig, new = tmp_path / "orig", tmp_path / "new"
    _build(cc, M / program, orig)
    _build(cc, tmp_path / program, new)
    for n in (2, 4):
        expected = _run(launcher, n, orig)
        assert expected, f"{program} printed nothing on {n} ranks"
        # (every rank prints its line: in any order)
        got = _run(launcher, n, new)
        assert sorted(got.splitlines()) == sorted(expected.splitlines()), (
            f"{program}: output differs on {n} ranks"
        )


def test_cxx_constructor_keeps_its_group(tmp_path: Path) -> None:
    """A C++ file given with the C files: its broadcast, in a constructor that is
    not analysed, stays blocking, so the C file's broadcasts do too (issue 34;
    before, the C++ file was refused)."""
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    a = tmp_path / "a.c"
    a.write_text((M / "root_branch.c").read_text())
    b = tmp_path / "b.cpp"
    b.write_text(
        "#include <mpi.h>\n"
        "struct S { S(int *p) { MPI_Bcast(p, 1, MPI_INT, 0, MPI_COMM_WORLD); } };\n"
        'extern "C" void other(int *p)\n{\n    S s(p);\n}\n'
    )
    rep = tmp_path / "r.json"
    args = ["--mpicc", cc, "-n", "--report-format", "json", "--report-file", str(rep)]
    assert cli.main([*args, str(a), str(b)]) == 0
    notes = json.loads(rep.read_text())["notes"]
    assert any("b.cpp:2: MPI_Bcast kept blocking" in n and "constructor" in n for n in notes)
    recs = json.loads(rep.read_text())["collectives"]
    assert [r["action"] for r in recs if r["call"] == "MPI_Bcast"] == ["blocking"] * 4


def test_cxx_extern_c_block_analysed_with_its_group(tmp_path: Path) -> None:
    """The broadcast of a function in an extern "C" block is analysed (issue 34):
    it is a call site of the C file's group, converted alike with them."""
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    a = tmp_path / "a.c"
    a.write_text((M / "root_branch.c").read_text())
    b = tmp_path / "b.cpp"
    b.write_text(
        '#include <mpi.h>\nextern "C" void other(int *p)\n{\n'
        "    MPI_Bcast(p, 1, MPI_INT, 0, MPI_COMM_WORLD);\n}\n"
    )
    rep = tmp_path / "r.json"
    args = ["--mpicc", cc, "-n", "--report-format", "json", "--report-file", str(rep)]
    assert cli.main([*args, str(a), str(b)]) == 0
    recs = json.loads(rep.read_text())["collectives"]
    bcasts = [r for r in recs if r["call"] == "MPI_Bcast"]
    assert len(bcasts) == 5
    assert [r["action"] for r in bcasts] == ["nonblocking"] * 5
    assert sum(r["file"].endswith("b.cpp") for r in bcasts) == 1


def test_call_in_inactive_branch_is_analysed(tmp_path: Path) -> None:
    """A blocking call the configuration given does not compile (-DONLY_ACTIVE
    hides it) is analysed in the configuration that compiles it (issue 34:
    before, it was no call site and stayed blocking beside the converted ones
    of its group): it starts and waits like them."""
    src = M / "inactive_branch.c"
    res = run_transform(src, tmp_path, "-DONLY_ACTIVE")
    assert res.status == 0
    assert res.text.count("MPI_Iallreduce(&x, &sum") == 2
    assert "MPI_Allreduce(" not in res.text
    assert "MPI_Iallreduce(&x, &y" in res.text
    other = res.site(line_of(src, "MPI_Allreduce(&x, &y"))
    assert any("another configuration" in n for n in other["notes"])


def test_else_branches_converted_alike(tmp_path: Path) -> None:
    """else_branches.c, parsed without FAST: the root's broadcast in the FAST
    branch is converted like the others of its group, and the allreduce waits
    before the read in the #else branch (this configuration) and before the
    write by SCALE() (FAST's)."""
    src = M / "else_branches.c"
    res = run_transform(src, tmp_path)
    assert res.status == 0
    assert "MPI_Bcast(" not in res.text and "MPI_Allreduce(" not in res.text
    fast = res.site(line_of(src, "MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD);"))
    assert fast["action"] == "nonblocking"
    lines = res.text.splitlines()
    waits = [lines[i + 1].strip() for i, t in enumerate(lines) if "MPI_Wait(&nbcx_req[3]" in t]
    assert waits == ["copy = sum;", "SCALE(sum);"]


@pytest.mark.mpi
@pytest.mark.parametrize("mpi", sorted(MPIS))
def test_else_branches_every_configuration(mpi: str, tmp_path: Path) -> None:
    """The output of else_branches.c (parsed without FAST) compiled with and
    without -DFAST, run on 2 and 4 ranks without nbcx-check: the original's
    output (before the fix, the FAST build hung)."""
    cc, launcher = MPIS[mpi]
    if shutil.which(cc) is None or shutil.which(launcher[0]) is None:
        pytest.skip(f"{mpi} not installed")
    src = M / "else_branches.c"
    res = run_transform(src, tmp_path)
    assert res.status == 0
    for defs in ((), ("-DFAST",)):
        orig, new = tmp_path / "orig", tmp_path / "new"
        _build(cc, src, orig, *defs)
        _build(cc, tmp_path / src.name, new, *defs)
        for n in (2, 4):
            expected = _run(launcher, n, orig)
            assert expected.count("rank") == n
            got = _run(launcher, n, new)
            assert sorted(got.splitlines()) == sorted(expected.splitlines()), (defs, n)


def _two_programs(tmp_path: Path) -> tuple[int, dict[str, Any], Path]:
    """Transforms two_programs/ (common.c, both.c, split.c) in one run into tmp_path."""
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper to find mpi.h")
    src = M / "two_programs"
    for f in src.iterdir():
        shutil.copy(f, tmp_path)
    rep = tmp_path / "report.json"
    files = [str(tmp_path / f) for f in ("common.c", "both.c", "split.c")]
    args = ["--mpicc", cc, "--report-format", "json", "--report-file", str(rep), *files]
    status = cli.main(args)
    return status, json.loads(rep.read_text()), src


def test_two_programs_calls_told_apart(tmp_path: Path) -> None:
    """Two programs given to one run, their mains' calls at the same offsets:
    split.c calls share_root() on rank 0 only and share_leaf() on the others, so
    the two broadcasts are converted alike (share_leaf's start-then-wait).
    Before, split.c's calls were taken for both.c's (same key, same offset):
    share_leaf's broadcast stayed blocking and split hung."""
    status, report, _src = _two_programs(tmp_path)
    assert status == 0
    assert _acts(report, "MPI_Bcast") == ["nonblocking", "nonblocking"]
    assert "MPI_Bcast(" not in (tmp_path / "common.c").read_text()


def _called_from_outside(tmp_path: Path) -> tuple[int, dict[str, Any]]:
    """Transforms called_from_outside/main.c with -p (dispatch.c in the database,
    not given) into tmp_path."""
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    for f in (M / "called_from_outside").iterdir():
        shutil.copy(f, tmp_path)
    db = [
        {"directory": str(tmp_path), "file": f, "arguments": ["cc", "-c", f]}
        for f in ("main.c", "dispatch.c")
    ]
    (tmp_path / "compile_commands.json").write_text(json.dumps(db))
    rep = tmp_path / "r.json"
    args = ["--mpicc", cc, "-p", str(tmp_path), "--report-format", "json"]
    status = cli.main([*args, "--report-file", str(rep), str(tmp_path / "main.c")])
    return status, json.loads(rep.read_text())


def test_called_from_a_file_not_given(tmp_path: Path) -> None:
    """Wrappers that a file of the program not given may call (their names are in
    its text) are not proven called alike on every rank: their broadcasts are
    converted alike (before: one by one, and the program hung)."""
    status, report = _called_from_outside(tmp_path)
    assert status == 0
    assert _acts(report, "MPI_Bcast") == ["nonblocking", "nonblocking"]
    assert "MPI_Bcast(" not in (tmp_path / "main.c").read_text()


def test_cxx_header_member_keeps_its_group(tmp_path: Path) -> None:
    """A member function of a class in the program's C++ header broadcasts for the
    non-root ranks; the header is not analysed, so its collective (read from its
    text) keeps main.cpp's root broadcast blocking, with the reason. The MPI
    library's own headers (Open MPI's C++ bindings) are not among them."""
    src = M / "cxx_header" / "main.cpp"
    res = run_transform(src, tmp_path)
    assert res.status == 0
    root = res.site(line_of(src, "/* root */"))
    assert root["action"] == "blocking"
    assert "comm.hpp" in root["reason"] and "not analysed" in root["reason"]
    assert "MPI_Ibcast(" not in res.text
    assert "mpi.h" not in json.dumps(res.report)


# ------------------------------------------------------------ OpenMP constructs
def _transform_openmp(src: Path, tmp: Path) -> tuple[int, dict[str, Any]]:
    cc = mpicc_for_parsing()
    if cc is None:
        pytest.skip("no MPI compiler wrapper")
    rep = tmp / "rep.json"
    out = tmp / src.name
    args = ["--mpicc", cc, "-o", str(out), "--report-format", "json", "--report-file", str(rep)]
    status = cli.main([*args, str(src), "--", "-fopenmp"])
    return status, json.loads(rep.read_text())


def test_openmp_construct_keeps_its_group(tmp_path: Path) -> None:
    """The root's broadcast in ``#pragma omp master`` (parsed with -fopenmp) is
    read from the construct's text: the others' broadcast, and the one after
    (a group with it), stay blocking. Before, libclang's captured statement hid
    it, the others' became MPI_Ibcast and the program hung on 2 ranks."""
    src = M / "openmp_hidden.c"
    status, rep = _transform_openmp(src, tmp_path)
    assert status == 0
    acts = {r["line"]: r["action"] for r in rep["collectives"]}
    assert acts == {
        line_of(src, "q = 2;") - 1: "blocking",  # the others' (the root's is not seen)
        line_of(src, "MPI_Bcast(&q"): "blocking",
    }
    assert any("in an OpenMP construct" in n for n in rep["notes"])
    assert "MPI_Ibcast(" not in (tmp_path / src.name).read_text()


@pytest.mark.mpi
@pytest.mark.parametrize("mpi", sorted(MPIS))
def test_openmp_construct_same_output(mpi: str, tmp_path: Path) -> None:
    cc, launcher = MPIS[mpi]
    if shutil.which(cc) is None or shutil.which(launcher[0]) is None:
        pytest.skip(f"{mpi} not installed")
    src = M / "openmp_hidden.c"
    status, _rep = _transform_openmp(src, tmp_path)
    assert status == 0
    orig, new = tmp_path / "orig", tmp_path / "new"
    _build(cc, src, orig, "-fopenmp")
    _build(cc, tmp_path / src.name, new, "-fopenmp")
    expected = _run(launcher, 2, orig)
    assert expected
    assert sorted(_run(launcher, 2, new).splitlines()) == sorted(expected.splitlines())


def test_openmp_region_wait_not_inside(tmp_path: Path) -> None:
    """Transformed without -fopenmp (the pragmas not parsed): a wait never goes
    into the statement of an ``#pragma omp`` line, where every thread would wait
    for the one request. Before, the first allreduce's wait went into the
    parallel region, before the read of y."""
    src = PROGRAMS / "openmp_region.c"
    res = run_transform(src, tmp_path)
    assert res.status == 0
    lines = res.text.splitlines()
    w0 = next(i for i, t in enumerate(lines) if "MPI_Wait(&nbcx_req[0]" in t)
    w1 = next(i for i, t in enumerate(lines) if "MPI_Wait(&nbcx_req[1]" in t)
    region = next(i for i, t in enumerate(lines) if t == "#pragma omp parallel")
    assert lines[w0 - 1].strip() == "z = x * 2;" and w0 == region - 1
    # the second allreduce's buffers are not in the parallel loop: stepped over
    assert lines[w1 - 1].strip() == "b[i] = a[i] + 1;"
    assert res.site(line_of(src, "MPI_Allreduce(&z"))["waits"][0]["overlap"] == 2


@pytest.mark.mpi
@pytest.mark.parametrize("mpi", sorted(MPIS))
def test_openmp_region_same_output(mpi: str, tmp_path: Path) -> None:
    cc, launcher = MPIS[mpi]
    if shutil.which(cc) is None or shutil.which(launcher[0]) is None:
        pytest.skip(f"{mpi} not installed")
    src = PROGRAMS / "openmp_region.c"
    assert run_transform(src, tmp_path).status == 0
    _build(cc, src, tmp_path / "orig", "-fopenmp")
    _build(cc, tmp_path / src.name, tmp_path / "new", "-fopenmp")
    expected = _run(launcher, 2, tmp_path / "orig")
    assert expected
    assert sorted(_run(launcher, 2, tmp_path / "new").splitlines()) == sorted(expected.splitlines())
