"""The nbcx-plot command line: charts written, errors reported."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from nbcx_plot.charts import INPROC_METRICS, METRICS
from nbcx_plot.cli import main
from synthetic import OPS, document, inproc_document, write

SRC = Path(__file__).resolve().parents[1] / "src"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

MakeJson = Callable[..., Path]

#: The charts of MPI files and of inproc files.
MPI_KEYS = [m.key for m in METRICS]
INPROC_KEYS = [m.key for m in INPROC_METRICS]


def png_size(path: Path) -> tuple[int, int]:
    """Width and height of a PNG file, checking its signature and header."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path} is not a PNG file"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert data.rstrip(b"\0")[-8:-4] == b"IEND", f"{path} is truncated"
    return width, height


def check_pngs(paths: list[Path]) -> None:
    for path in paths:
        assert path.is_file(), path
        width, height = png_size(path)
        assert width >= 600 and height >= 400, (path, width, height)
        # A chart with axes, lines and text compresses to well over 20 KB.
        assert path.stat().st_size > 20_000, (path, path.stat().st_size)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        status = main(args)
    except SystemExit as e:
        status = int(e.code) if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err


def test_one_file_all_charts(
    make_json: MakeJson, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outdir = tmp_path / "out" / "nested"
    status, out, err = run_cli(["-o", str(outdir), str(make_json())], capsys)
    assert status == 0, err
    assert err == ""
    printed = [Path(line) for line in out.splitlines()]
    expected = {outdir / f"{op}-{m}.png" for op in OPS for m in MPI_KEYS}
    assert set(printed) == expected
    assert len(printed) == len(OPS) * len(MPI_KEYS)
    assert set(outdir.iterdir()) == expected
    check_pngs(printed)


def test_several_files_are_series(
    make_json: MakeJson, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [
        make_json(library="Open MPI", ranks=2),
        make_json(library="Open MPI", ranks=4),
        make_json(library="MPICH", ranks=2, network="tcp-1gbit", bandwidth=1.2e8),
    ]
    # Two operations: the series are made per chart, the same for each
    # (test_one_file_all_charts renders every operation; 22 s for all).
    ops = ["ibcast", "ialltoall"]
    args = ["-o", str(tmp_path / "o"), "--ops", ",".join(ops)] + [str(f) for f in files]
    status, out, err = run_cli(args, capsys)
    assert status == 0, err
    printed = [Path(line) for line in out.splitlines()]
    assert set(printed) == {tmp_path / "o" / f"{op}-{m}.png" for op in ops for m in MPI_KEYS}
    check_pngs(printed)


def test_files_with_different_ops(
    make_json: MakeJson, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = make_json(ops=["iallreduce"])
    b = make_json(ops=["ialltoall", "iallreduce"], library="MPICH")
    status, out, err = run_cli(["-o", str(tmp_path), str(a), str(b)], capsys)
    assert status == 0, err
    names = sorted(Path(line).name for line in out.splitlines())
    assert names == sorted(f"{op}-{m}.png" for op in ("iallreduce", "ialltoall") for m in MPI_KEYS)


def test_filters_and_prefix(
    make_json: MakeJson, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["-o", str(tmp_path), "--prefix", "tcp-1gbit-", "--ops", "ialltoall,iallreduce",
            "--metrics", "overlap,time", "--no-bands", "--dpi", "80", str(make_json())]  # fmt: skip
    status, out, err = run_cli(args, capsys)
    assert status == 0, err
    names = [Path(line).name for line in out.splitlines()]
    assert names == [
        "tcp-1gbit-ialltoall-overlap.png",
        "tcp-1gbit-ialltoall-time.png",
        "tcp-1gbit-iallreduce-overlap.png",
        "tcp-1gbit-iallreduce-time.png",
    ]
    for line in out.splitlines():
        assert png_size(Path(line))[0] >= 600


@pytest.mark.parametrize("sizes", [[0], [1024], [4, 8]])
def test_few_sizes(
    make_json: MakeJson, tmp_path: Path, capsys: pytest.CaptureFixture[str], sizes: list[int]
) -> None:
    """One size gives points, two sizes give lines; zero-byte results are fine."""
    path = make_json(ops=["ibcast", "ibarrier"], sizes=sizes)
    status, out, err = run_cli(["-o", str(tmp_path / "o"), str(path)], capsys)
    assert status == 0, err
    check_pngs([Path(line) for line in out.splitlines()])


def test_zero_times_on_log_axes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = document(ops=["ibcast"], sizes=[4, 8, 16])
    zero = {"median": 0.0, "min": 0.0, "max": 0.0}
    doc["results"][1]["nbcx"]["overhead"] = zero
    doc["results"][1]["t_block"] = zero
    path = write(tmp_path / "z.json", doc)
    status, _out, err = run_cli(["-o", str(tmp_path / "o"), str(path)], capsys)
    assert status == 0, err


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _err = run_cli(["--help"], capsys)
    assert status == 0
    for text in ("OUTDIR", "FILE.json", "overlap", "--prefix", "exit status"):
        assert text in out


def _assert_usage_error(status: int, out: str, err: str, fragment: str) -> None:
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith("nbcx-plot: ")
    assert fragment in err


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("hello", "not valid JSON"),
        ('{"schema": "other/1", "results": []}', "unsupported schema"),
        ('{"schema": "nbcx-bench/1"}', "missing required field 'mpi'"),
        ("[]", "expected a JSON object"),
    ],
)
def test_bad_input_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, fragment: str
) -> None:
    path = tmp_path / "in.json"
    path.write_text(content, encoding="utf-8")
    outdir = tmp_path / "out"
    status, out, err = run_cli(["-o", str(outdir), str(path)], capsys)
    _assert_usage_error(status, out, err, fragment)
    assert not outdir.exists(), "nothing may be written for bad input"


def test_one_bad_file_among_good_ones(
    make_json: MakeJson, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "nbcx-bench/1", "results": 5}', encoding="utf-8")
    status, out, err = run_cli(["-o", str(tmp_path / "o"), str(make_json()), str(bad)], capsys)
    _assert_usage_error(status, out, err, "bad.json")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "required: FILE.json"),
        (["--metrics", "speed"], "unknown metric 'speed'"),
        (["--ops", "iallfoo"], "operation 'iallfoo' is in none of the files"),
        (["--dpi", "5"], "--dpi 5 is out of range"),
        (["--prefix", "a/b"], "--prefix must not contain '/'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["MISSING.json"], "MISSING.json: no such file"),
    ],
)
def test_bad_arguments_exit_2(
    make_json: MakeJson,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    fragment: str,
) -> None:
    files = [] if not args or args == ["MISSING.json"] else [str(make_json())]
    status, out, err = run_cli(["-o", str(tmp_path / "o"), *args, *files], capsys)
    _assert_usage_error(status, out, err, fragment)


def test_unwritable_outdir_exit_1(
    make_json: MakeJson, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    status, out, err = run_cli(["-o", str(blocker / "sub"), str(make_json())], capsys)
    assert status == 1
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("nbcx-plot: cannot write charts")


def test_subprocess_entry_point(make_json: MakeJson, tmp_path: Path) -> None:
    """python -m nbcx_plot behaves like the console script, exit codes included."""
    env = dict(os.environ, PYTHONPATH=str(SRC), MPLBACKEND="Agg")
    good = subprocess.run(
        [sys.executable, "-m", "nbcx_plot", "-o", str(tmp_path / "o"), "--ops", "ibcast",
         str(make_json())],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert good.returncode == 0, good.stderr
    assert len(good.stdout.splitlines()) == len(MPI_KEYS)
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    failed = subprocess.run(
        [sys.executable, "-m", "nbcx_plot", str(bad)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert failed.returncode == 2
    assert failed.stderr.count("\n") == 1 and "not valid JSON" in failed.stderr


DATA = Path(__file__).resolve().parent / "data"


def test_real_bench_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cut-down file written by nbcx-bench itself (Open MPI, 2 ranks, emunet 1 Gbit/s).

    Only 7 results are kept and the raw arrays are truncated to 5 values.
    """
    real = DATA / "ompi-2-tcp-1gbit.json"
    other = write(tmp_path / "mpich.json", document(library="MPICH", ops=["iallreduce"]))
    status, out, err = run_cli(["-o", str(tmp_path / "o"), str(real), str(other)], capsys)
    assert status == 0, err
    names = sorted(Path(line).name for line in out.splitlines())
    ops = ("iallreduce", "ialltoall", "ibarrier")
    assert names == sorted(f"{op}-{m}.png" for op in ops for m in MPI_KEYS)
    check_pngs([Path(line) for line in out.splitlines()])


def test_inproc_file_all_charts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """nbcx-bench --transport inproc: paper 000's variants, a ratio chart."""
    path = write(tmp_path / "inproc.json", inproc_document(ops=["ibcast", "iscatter"]))
    outdir = tmp_path / "o"
    status, out, err = run_cli(["-o", str(outdir), str(path)], capsys)
    assert status == 0, err
    printed = [Path(line) for line in out.splitlines()]
    assert set(printed) == {
        outdir / f"{op}-{m}.png" for op in ("ibcast", "iscatter") for m in INPROC_KEYS
    }
    assert "ratio" in INPROC_KEYS and "overhead" not in INPROC_KEYS
    check_pngs(printed)


@pytest.mark.parametrize(
    ("inproc", "metric", "fragment"),
    [
        (False, "ratio", "metric 'ratio' has no chart for MPI results"),
        (True, "overhead", "metric 'overhead' has no chart for inproc results"),
    ],
)
def test_metric_of_the_other_kind_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    inproc: bool,
    metric: str,
    fragment: str,
) -> None:
    doc = inproc_document(ops=["ibcast"]) if inproc else document(ops=["ibcast"])
    path = write(tmp_path / "x.json", doc)
    status, out, err = run_cli(["-o", str(tmp_path / "o"), "--metrics", metric, str(path)], capsys)
    _assert_usage_error(status, out, err, fragment)


def test_inproc_and_mpi_files_do_not_mix(
    make_json: MakeJson, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inproc = write(tmp_path / "inproc.json", inproc_document(ops=["ibcast"]))
    status, out, err = run_cli(["-o", str(tmp_path / "o"), str(make_json()), str(inproc)], capsys)
    _assert_usage_error(status, out, err, "cannot share a chart")


def test_real_inproc_bench_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file written by nbcx-bench --transport inproc itself (2 thread
    ranks, ibcast and iscatter at 4 B, 64 KiB and 1 MiB, 3 repetitions)."""
    real = DATA / "inproc-2.json"
    status, out, err = run_cli(["-o", str(tmp_path / "o"), str(real)], capsys)
    assert status == 0, err
    names = sorted(Path(line).name for line in out.splitlines())
    assert names == sorted(f"{op}-{m}.png" for op in ("ibcast", "iscatter") for m in INPROC_KEYS)
    check_pngs([Path(line) for line in out.splitlines()])
