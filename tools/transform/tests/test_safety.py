"""The safety rules: where the analysis must stop the overlap, and what it
must leave alone (paper 004's rules and the issue's list)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import PROGRAMS, line_of, run_transform


def _waits(res_site: dict[str, Any]) -> list[int]:
    return sorted(w["line"] for w in res_site["waits"])


def test_write_through_alias_of_receive_buffer(tmp_path: Path) -> None:
    src = PROGRAMS / "safety_alias.c"
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, "MPI_Allreduce"))
    assert site["action"] == "nonblocking"
    # the independent write through p overlaps, the one through alias does not
    assert _waits(site) == [line_of(src, "alias[1] = -1.0")]
    assert site["waits"][0]["overlap"] == 1
    assert "rbuf" in site["waits"][0]["stopped_by"]


def test_read_through_pointer_parameter_in_callee(tmp_path: Path) -> None:
    src = PROGRAMS / "safety_callee.c"
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, "MPI_Allreduce"))
    assert _waits(site) == [line_of(src, "double g = first(&global)")]


def test_return_between_start_and_use(tmp_path: Path) -> None:
    src = PROGRAMS / "safety_return.c"
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, "MPI_Allreduce"))
    assert _waits(site) == [line_of(src, "return -1;"), line_of(src, "*out = sum")]
    # the wait guards the return: it is inside the if, before the return
    text = res.text.splitlines()
    i = next(k for k, t in enumerate(text) if "return -1;" in t)
    assert "MPI_Wait" in text[i - 1]


def test_macro_generated_call_left_alone(tmp_path: Path) -> None:
    src = PROGRAMS / "safety_macro.c"
    res = run_transform(src, tmp_path)
    macro = res.site(line_of(src, "SUM_ALL(&x, &y);"))
    assert macro["action"] == "blocking"
    assert "macro" in macro["reason"]
    assert "SUM_ALL(&x, &y);" in res.text
    assert "#define SUM_ALL(in, out) MPI_Allreduce(" in res.text
    plain = res.site(line_of(src, "MPI_MAX"))
    assert plain["action"] == "nonblocking"


def test_count_changing_in_loop_not_persistent(tmp_path: Path) -> None:
    src = PROGRAMS / "safety_loopcount.c"
    res = run_transform(src, tmp_path)
    changing = res.site(line_of(src, "MPI_Bcast(buf, count"))
    assert changing["action"] == "nonblocking"
    assert any("count" in n and "not persistent" in n for n in changing["notes"])
    fixed = res.site(line_of(src, "MPI_Bcast(fixed"))
    assert fixed["action"] == "persistent"
    assert fixed["persistent"] == "hoisted"


def test_rooted_waits_differ(tmp_path: Path) -> None:
    """Fig. 7 -> 8: the root waits before overwriting the send buffer, the others later."""
    src = PROGRAMS / "fig07_scatter.c"
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, "MPI_Scatter("))
    by_role = {w["role"]: w for w in site["waits"]}
    assert by_role["root"]["line"] == line_of(src, "do_computation(nums, len * size);")
    assert by_role["nonroot"]["line"] == line_of(src, "for (int i = 0; i < len; i++)")
    assert by_role["root"]["guard"] == "rank == root"
    assert by_role["nonroot"]["guard"] == "rank != root"


def test_independent_broadcasts_merge_into_waitall(tmp_path: Path) -> None:
    """Fig. 9 -> 10."""
    res = run_transform(PROGRAMS / "fig09_bcast.c", tmp_path, "--min-overlap", "0")
    assert "MPI_Waitall(3, nbcx_req, nbcx_stat);" in res.text
    assert res.text.count("MPI_Ibcast(") == 3


def test_exclusive_branches_share_a_request_and_use_a_flag(tmp_path: Path) -> None:
    """Fig. 4 and Section 3.4: one request for both branches.  Both branches start a
    broadcast, so it is pending after the if on every path: no flag (issue 19.6: a
    flag that is always set is a test a person would not write)."""
    res = run_transform(PROGRAMS / "fig04_branches.c", tmp_path)
    assert "MPI_Request nbcx_req[1]" in res.text
    assert res.text.count("&nbcx_req[0]);") >= 2
    assert "nbcx_flag" not in res.text
    # with a branch that starts nothing, the wait after the if needs the flag
    src = tmp_path / "one_branch.c"
    src.write_text(
        "#include <mpi.h>\n#include <stdio.h>\n"
        "int main(int argc, char **argv) {\n"
        "    int a = 1, b = 0, w = 0;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    if (argc > 1)\n"
        "        MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    else if (argc > 2)\n"
        "        b = 2;\n"
        "    else\n"
        "        MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);\n"
        "    for (int i = 0; i < 10; i++) w += i;\n"
        '    printf("%d %d\\n", b, w);\n'
        "    MPI_Finalize();\n"
        "    return 0;\n"
        "}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    assert "nbcx_flag[0] = 1;" in res.text
    assert "if (nbcx_flag[0]) {" in res.text


def test_wtime_is_a_fence_for_barriers_only(tmp_path: Path) -> None:
    src = tmp_path / "fence.c"
    src.write_text(
        "#include <mpi.h>\n#include <stdio.h>\n"
        "int main(int argc, char **argv) {\n"
        "    int a = 1, b = 0, c = 0;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    c = 2;\n"
        "    double t = MPI_Wtime();\n"
        '    printf("%d %d %f\\n", b, c, t > 0 ? 1.0 : 0.0);\n'
        "    MPI_Finalize();\n"
        "    return 0;\n"
        "}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    site = res.site(6)
    # issue 19.4: MPI_Wtime only reads a clock; the wait moves past it to the read of b
    assert _waits(site) == [9]
    assert "reads b" in site["waits"][0]["stopped_by"]
    # ... but a barrier before a clock read is there to time: it stays blocking
    src.write_text(
        src.read_text().replace("MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, ", "MPI_Barrier(")
    )
    res = run_transform(src, out, "--min-overlap", "0")
    site = res.site(6)
    assert _waits(site) == [8]
    assert "MPI_Wtime" in site["waits"][0]["stopped_by"]


def test_unknown_function_is_a_fence(tmp_path: Path) -> None:
    src = tmp_path / "unknown.c"
    src.write_text(
        "#include <mpi.h>\n"
        "void external_work(double *x);\n"
        "int main(int argc, char **argv) {\n"
        "    double a = 1, b = 0, x = 0;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);\n"
        "    x = 3;\n"
        "    external_work(&x);\n"
        "    MPI_Finalize();\n"
        "    return (int)b;\n"
        "}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    site = run_transform(src, out).site(6)
    assert _waits(site) == [8]
    assert "external_work" in site["waits"][0]["stopped_by"]


def test_value_used_left_blocking(tmp_path: Path) -> None:
    src = tmp_path / "used.c"
    src.write_text(
        "#include <mpi.h>\n"
        "int main(int argc, char **argv) {\n"
        "    int a = 1, b = 0;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    int rc = MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    MPI_Finalize();\n"
        "    return rc + b;\n"
        "}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    assert res.site(5)["action"] == "blocking"
    assert res.text == src.read_text()


def test_barrier_waits_before_io_and_mpi(tmp_path: Path) -> None:
    """MPI_Ibarrier overlaps only computation: I/O and MPI calls may rely on it."""
    src = tmp_path / "barrier.c"
    src.write_text(
        "#include <mpi.h>\n#include <stdio.h>\n"
        "int main(int argc, char **argv) {\n"
        "    int rank, x = 0;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n"
        "    MPI_Barrier(MPI_COMM_WORLD);\n"
        "    for (int i = 0; i < 100; i++)\n"
        "        x += i * rank;\n"
        '    printf("%d\\n", x);\n'
        "    MPI_Finalize();\n"
        "    return 0;\n"
        "}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    site = res.site(7)
    assert site["action"] == "nonblocking"
    assert _waits(site) == [10]
    assert "MPI_Ibarrier(MPI_COMM_WORLD, &nbcx_req[0]);" in res.text


def test_min_overlap_leaves_useless_conversions(tmp_path: Path) -> None:
    src = PROGRAMS / "fig12_minmax.c"
    res = run_transform(src, tmp_path, "--min-overlap", "1")
    first = res.site(line_of(src, "MPI_Allreduce(sub_arr1"))
    assert first["action"] == "blocking"
    assert "min-overlap" in first["reason"]
    assert res.site(line_of(src, "MPI_MIN"))["action"] == "nonblocking"


def test_one_sided_file_left_alone(tmp_path: Path) -> None:
    src = tmp_path / "rma.c"
    src.write_text(
        "#include <mpi.h>\n"
        "int main(int argc, char **argv) {\n"
        "    int a = 1, b = 0, buf = 0;\n"
        "    MPI_Win win;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    MPI_Win_create(&buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);\n"
        "    MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    a = 2;\n"
        "    MPI_Win_free(&win);\n"
        "    MPI_Finalize();\n"
        "    return b;\n"
        "}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    assert res.site(7)["action"] == "blocking"
    assert "MPI_Win_" in res.site(7)["reason"]
    assert res.text == src.read_text()


def test_allocation_helper_gives_distinct_objects(tmp_path: Path) -> None:
    src = PROGRAMS / "alloc_wrapper.c"
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, "MPI_Allreduce"))
    assert _waits(site) == [line_of(src, "double s = 0.0;") + 1]
    assert site["waits"][0]["overlap"] == 3


def test_global_written_by_called_function(tmp_path: Path) -> None:
    src = PROGRAMS / "control_flow.c"
    res = run_transform(src, tmp_path)
    first = res.site(line_of(src, "MPI_Allreduce(&mine, &g_total, 1, MPI_INT, MPI_SUM"))
    assert _waits(first) == [line_of(src, "int seen = g_total;")]  # bump_scratch() overlaps
    second = res.site(line_of(src, "MPI_Allreduce(&mine, &g_total, 1, MPI_INT, MPI_MAX"))
    assert _waits(second) == [line_of(src, "reset_total();")]


def test_braces_from_macros_left_alone(tmp_path: Path) -> None:
    """A block with braces from a macro that the wait could go into (an if after
    the call) leaves the call blocking; one before the call no longer does
    (issue 34, tests/test_issue34.py)."""
    src = tmp_path / "braces.c"
    src.write_text(
        "#include <mpi.h>\n"
        "#define BEGIN {\n#define END }\n"
        "int main(int argc, char **argv) {\n"
        "    int a = 1, b = 0, c = 0;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    c = a * 2;\n"
        "    if (a) BEGIN\n"
        "        c += 2;\n"
        "    END\n"
        "    MPI_Finalize();\n"
        "    return b + c;\n"
        "}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    res = run_transform(src, out)
    assert res.site(7)["action"] == "blocking"
    assert "braces" in res.site(7)["reason"]


def test_in_place_buffer_is_received_into(tmp_path: Path) -> None:
    src = tmp_path / "inplace.c"
    src.write_text(
        "#include <mpi.h>\n#include <stdio.h>\n"
        "int main(int argc, char **argv) {\n"
        "    int rank, buf[2], other = 0;\n"
        "    MPI_Init(&argc, &argv);\n"
        "    MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n"
        "    buf[0] = rank; buf[1] = 1;\n"
        "    MPI_Allreduce(MPI_IN_PLACE, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
        "    other = rank * 2;\n"
        "    int first = buf[0];\n"
        '    printf("%d %d\\n", first, other);\n'
        "    MPI_Finalize();\n"
        "    return 0;\n"
        "}\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    site = run_transform(src, out).site(8)
    assert _waits(site) == [10]
