"""Issue 18: what the tool missed on the apps.

* split arrays: the elements of a local array indexed only by constants are
  objects of their own (``double *b[2] = { calloc(), calloc() }``), unless an
  element is made an alias of another, an index is not a constant, or ``&b[0]``
  is taken;
* known library functions: zlib's checksums and (de)compressors have known
  effects when zlib.h declares them (compress), and only then;
* batched loops: ``for (i = 0; i < N; i++) MPI_Bcast(&a[i], 1, ...)`` starts its N
  operations and waits once after the loop (md), but only when each iteration
  writes its own element.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PROGRAMS, line_of, mpicc_for_parsing, run_transform


def _zlib_h() -> bool:
    cc = mpicc_for_parsing()
    if cc is None or shutil.which(cc) is None:
        return False
    res = subprocess.run(
        [cc, "-E", "-x", "c", "-"],
        input="#include <zlib.h>\n",
        capture_output=True,
        text=True,
        check=False,
    )
    return res.returncode == 0


def _waits(site: dict[str, Any]) -> list[int]:
    return sorted(int(w["line"]) for w in site["waits"])


@pytest.mark.skipif(not _zlib_h(), reason="zlib.h not installed")
def test_zlib_functions_known(tmp_path: Path) -> None:
    src = PROGRAMS / "extlib_zlib.c"
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, "MPI_Allreduce"))
    assert site["action"] == "nonblocking"
    # crc32, compressBound and compress2 (into z, from raw) overlap; compress()
    # writing into the receive buffer stops it
    assert _waits(site) == [line_of(src, "compress((Bytef *)&total")]
    assert "total" in site["waits"][0]["stopped_by"]
    assert site["waits"][0]["overlap"] == 5


def test_function_named_like_zlib_not_from_zlib_h(tmp_path: Path) -> None:
    """Negative: crc32() declared by the program itself is an unknown function."""
    src = PROGRAMS / "extlib_own_crc.c"
    res = run_transform(src, tmp_path, "--min-overlap", "0")
    site = res.site(line_of(src, "MPI_Allreduce"))
    assert _waits(site) == [line_of(src, "unsigned long c = crc32(0, raw, 4);")]
    assert "crc32" in site["waits"][0]["stopped_by"]


def test_lookup_needs_the_header() -> None:
    from nbcx_transform import mpi

    assert mpi.lookup("crc32") is None
    assert mpi.lookup("crc32", "myzlib.h") is None
    spec = mpi.lookup("compress2", "zlib.h")
    assert spec is not None and spec.args[:3] == ("W", "RW", "R")
    assert mpi.lookup("memcpy", "string.h") is not None


def test_batched_loops(tmp_path: Path) -> None:
    src = PROGRAMS / "batch_bcast.c"
    res = run_transform(src, tmp_path)
    bc = res.site(line_of(src, "MPI_Bcast(&par[p]"))
    assert bc["action"] == "nonblocking"
    assert bc["request"] == "nbcx_req[0..3]"
    assert _waits(bc) == [line_of(src, "double scale")]
    assert "MPI_Ibcast(&par[p], 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &nbcx_req[0 + p]);" in res.text
    assert "MPI_Waitall(4, nbcx_req, nbcx_stat);" in res.text
    ar = res.site(line_of(src, "MPI_Allreduce(&loc[i]"))
    assert ar["request"] == "nbcx_req[4..6]"
    # the wait goes past the loop as far as the analysis allows
    assert _waits(ar) == [line_of(src, "printf(") - 1]  # if (rank == 0) printf(...)
    assert "MPI_Waitall(3, &nbcx_req[4], &nbcx_stat[4]);" in res.text
    # not &ids[k]: left alone
    ids = res.site(line_of(src, "MPI_Bcast(&ids[k - 1]"))
    assert ids["action"] == "blocking"
    assert any("not batched" in n for n in ids.get("notes", []))


@pytest.mark.parametrize(
    ("needle", "why"),
    [
        ("MPI_Bcast(&v[i], 2,", "the count is not 1"),
        ("MPI_Allreduce(MPI_IN_PLACE, &one[0]", "not &array[loop variable]"),
        ("MPI_Allreduce(&acc[i + 1], &acc[i]", "a buffer read may be a buffer written"),
        ("MPI_Bcast(&pv[i]", "not &array[loop variable]"),
        ("MPI_Bcast(&v[i], 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);", "not i < constant"),
        ("MPI_Bcast(&w[i], 1, MPI_INT", "MPI_INT does not match"),
    ],
)
def test_loops_not_batched(needle: str, why: str, tmp_path: Path) -> None:
    """Negative: loops whose operations could not safely all be in flight at once."""
    src = PROGRAMS / "safety_batch.c"
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, needle))
    assert site["action"] == "blocking"
    assert any(why in n for n in site.get("notes", [])), site


def test_loop_with_more_statements_not_batched(tmp_path: Path) -> None:
    src = PROGRAMS / "safety_batch.c"
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, "MPI_Allreduce(MPI_IN_PLACE, &acc[i]"))
    assert site["action"] == "blocking"
    assert "Iallreduce" not in res.text and "Ibcast" not in res.text


@pytest.mark.mpi
@pytest.mark.skipif(not _zlib_h(), reason="zlib.h not installed")
def test_zlib_program_same_output(tmp_path: Path) -> None:
    cc = "mpicc.openmpi"
    run = ["mpiexec.openmpi", "--allow-run-as-root", "--oversubscribe", "-n", "2"]
    if shutil.which(cc) is None or shutil.which(run[0]) is None:
        pytest.skip("Open MPI not installed")
    src = PROGRAMS / "extlib_zlib.c"
    run_transform(src, tmp_path)
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
    outs = []
    for name, path in (("orig", src), ("new", tmp_path / src.name)):
        exe = tmp_path / name
        subprocess.run(
            [cc, "-Wall", "-Werror", "-o", str(exe), str(path), "-lz"], check=True, env=env
        )
        r = subprocess.run(
            [*run, str(exe)], capture_output=True, text=True, check=True, env=env, timeout=120
        )
        outs.append(r.stdout)
    assert outs[0] == outs[1] and outs[0]


def test_split_array_elements(tmp_path: Path) -> None:
    src = PROGRAMS / "split_array.c"
    res = run_transform(src, tmp_path)
    b = res.site(line_of(src, "MPI_Allreduce(src, b[0]"))
    # writes to b[1] overlap; rank 0 waits before its printf reading b[0], the
    # others (flag-guarded) before free(b[0])
    assert _waits(b) == [line_of(src, "b[0][0], b[0][3], t"), line_of(src, "free(b[0]);")]


@pytest.mark.parametrize(
    ("call", "write"),
    [
        ("MPI_Allreduce(src, c[0]", "c[1][0] = u;"),  # c[1] = c[0] before
        ("MPI_Allreduce(src, d[0]", "d[k + 1][0] = v;"),  # an index not constant
        ("MPI_Allreduce(src, e[1]", "pe[1][0] = w;"),  # pe = &e[0]
    ],
)
def test_split_array_negatives(call: str, write: str, tmp_path: Path) -> None:
    """Negative: the write through the alias stops the overlap."""
    src = PROGRAMS / "split_array.c"
    res = run_transform(src, tmp_path)
    site = res.site(line_of(src, call))
    assert _waits(site) == [line_of(src, write)]
    assert "receive buffer" in site["waits"][0]["stopped_by"]
