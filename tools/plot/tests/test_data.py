"""Validation of nbcx-bench JSON input and the labelling of series."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from nbcx_plot.charts import format_size, format_time, make_series, size_label
from nbcx_plot.data import InputError, load_run, parse_run
from synthetic import document, inproc_document, write


def test_parse_valid_document() -> None:
    run = parse_run(document(ops=["iallreduce", "ibarrier"], sizes=[4, 1024]), Path("x.json"))
    assert run.library == "Open MPI"
    assert run.mpi == "Open MPI 4.1.4"
    assert run.ranks == 2
    assert run.network == "shm"
    assert run.ops() == ["iallreduce", "ibarrier"]
    assert [r.bytes for r in run.results_for("iallreduce")] == [4, 1024]
    r = run.results_for("ibarrier")[0]
    assert r.bytes == 0
    assert r.nbcx.overlap.median == pytest.approx(0.0)
    assert r.impl("native") is r.native


def test_results_sorted_by_size() -> None:
    doc = document(ops=["ibcast"], sizes=[4096, 4, 64])
    run = parse_run(doc, Path("x.json"))
    assert [r.bytes for r in run.results_for("ibcast")] == [4, 64, 4096]


def test_extra_fields_and_minor_schema_revision_accepted() -> None:
    doc = document(ops=["ibcast"], sizes=[4])
    doc["schema"] = "nbcx-bench/1.2"
    doc["something_new"] = {"a": 1}
    doc["results"][0]["nbcx"]["new_stat"] = [1, 2]
    assert parse_run(doc, Path("x.json")).results[0].op == "ibcast"


def _broken(path: list[Any], value: Any = None, delete: bool = False) -> dict[str, Any]:
    doc = copy.deepcopy(document(ops=["iallreduce"], sizes=[4, 8]))
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (_broken(["schema"], "nbcx-bench/2"), "unsupported schema 'nbcx-bench/2'"),
        (_broken(["schema"], delete=True), "missing required field 'schema'"),
        (_broken(["mpi"], "Open MPI"), "mpi: expected an object, got a string"),
        (_broken(["mpi", "library"], delete=True), "mpi: missing required field 'library'"),
        (_broken(["network"], delete=True), "missing required field 'network'"),
        (_broken(["ranks"], 0), "ranks: expected at least 1, got 0"),
        (_broken(["ranks"], "2"), "ranks: expected an integer, got a string"),
        (_broken(["ranks"], True), "ranks: expected an integer, got a boolean"),
        (_broken(["results"], {}), "results: expected an array, got an object"),
        (_broken(["results"], []), "results: no results in the file"),
        (_broken(["results", 1], 3), "results[1]: expected an object, got a number"),
        (_broken(["results", 0, "op"], delete=True), "results[0]: missing required field 'op'"),
        (_broken(["results", 0, "bytes"], -1), "results[0].bytes: expected at least 0"),
        (_broken(["results", 0, "bytes"], 4.5), "results[0].bytes: expected an integer"),
        (_broken(["results", 1, "bytes"], 4), "results[1]: second result for iallreduce"),
        (_broken(["results", 0, "t_block"], delete=True), "missing required field 't_block'"),
        (_broken(["results", 0, "nbcx"], None), "results[0].nbcx: expected an object, got null"),
        (
            _broken(["results", 0, "native", "overlap"], delete=True),
            "results[0].native: missing required field 'overlap'",
        ),
        (
            _broken(["results", 1, "nbcx", "t_pure", "median"], delete=True),
            "results[1].nbcx.t_pure: missing required field 'median'",
        ),
        (
            _broken(["results", 0, "t_block", "min"], -1e-6),
            "results[0].t_block.min: expected a number at least 0, got -1e-06",
        ),
        (
            _broken(["results", 1, "native", "overlap", "max"], 1.5),
            "results[1].native.overlap.max: expected a number from 0 to 1, got 1.5",
        ),
        (
            _broken(["results", 0, "nbcx", "cpu_progress", "max"], "high"),
            "results[0].nbcx.cpu_progress.max: expected a number, got a string",
        ),
    ],
)
def test_schema_violations(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as err:
        parse_run(doc, Path("bad.json"))
    text = str(err.value)
    assert text.startswith("bad.json: ")
    assert message in text
    assert "\n" not in text


SCHEMA = Path(__file__).resolve().parents[2] / "bench" / "schema.json"


def test_synthetic_documents_follow_the_bench_schema() -> None:
    """The test data is checked against nbcx-bench's own schema when available."""
    jsonschema = pytest.importorskip("jsonschema")
    if not SCHEMA.is_file():
        pytest.skip(f"{SCHEMA} not found")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(document(), schema)
    jsonschema.validate(document(library="MPICH", ranks=4, network="tcp-1gbit"), schema)


def test_top_level_must_be_object() -> None:
    with pytest.raises(InputError, match="expected a JSON object at the top level, got an array"):
        parse_run([1, 2], Path("x.json"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json at all", "not valid JSON"),
        ('{"schema": "nbcx-bench/1",', "not valid JSON"),
        ('{"a": NaN}', "not valid JSON: 'NaN' is not a JSON number"),
        ("", "not valid JSON"),
    ],
)
def test_load_rejects_non_json(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_run(path)


def test_load_rejects_binary_and_missing_files(tmp_path: Path) -> None:
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    with pytest.raises(InputError, match="not a JSON file"):
        load_run(binary)
    with pytest.raises(InputError, match="no such file"):
        load_run(tmp_path / "missing.json")
    with pytest.raises(InputError, match="is a directory"):
        load_run(tmp_path)


def test_load_roundtrip(tmp_path: Path) -> None:
    path = write(tmp_path / "ok.json", document())
    assert load_run(path).results == parse_run(json.loads(path.read_text()), path).results


def test_series_labels_show_only_what_differs(tmp_path: Path) -> None:
    runs = [
        parse_run(document(library="Open MPI", ranks=2), tmp_path / "a.json"),
        parse_run(document(library="MPICH", ranks=2), tmp_path / "b.json"),
        parse_run(document(library="Open MPI", ranks=4), tmp_path / "c.json"),
    ]
    series, subtitle = make_series(runs)
    assert [s.label for s in series] == [
        "Open MPI 4.1.4, 2 ranks",
        "MPICH 4.0.2, 2 ranks",
        "Open MPI 4.1.4, 4 ranks",
    ]
    assert "shm" in subtitle
    assert "progress: caller" in subtitle
    assert "on vm (Intel Xeon, 2 cores)" in subtitle
    assert len({s.color for s in series}) == 3


def test_series_labels_identical_runs_use_file_names(tmp_path: Path) -> None:
    runs = [parse_run(document(), tmp_path / n) for n in ("first.json", "second.json")]
    series, subtitle = make_series(runs)
    assert [s.label for s in series] == ["first.json", "second.json"]
    assert "Open MPI 4.1.4 · 2 ranks · shm" in subtitle


def test_single_run_has_full_subtitle(tmp_path: Path) -> None:
    series, subtitle = make_series([parse_run(document(network="tcp-1gbit"), tmp_path / "a")])
    assert series[0].label == ""
    assert subtitle.startswith("Open MPI 4.1.4 · 2 ranks · tcp-1gbit · progress: caller")


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [(0, "0 B"), (4, "4 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"),
     (65536, "64 KiB"), (1 << 20, "1 MiB"), (16 << 20, "16 MiB"), (1 << 30, "1 GiB")],
)  # fmt: skip
def test_format_size(nbytes: int, text: str) -> None:
    assert format_size(nbytes) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.0, "0"), (8e-7, "800 ns"), (1e-6, "1 µs"), (1.2e-5, "12 µs"), (3.5e-3, "3.5 ms"),
     (1.0, "1 s"), (12.0, "12 s")],
)  # fmt: skip
def test_format_time(seconds: float, text: str) -> None:
    assert format_time(seconds) == text


def test_size_label_per_peer_ops() -> None:
    assert "per peer" in size_label("ialltoall")
    assert "buffer per rank" in size_label("iallreduce")


def test_real_bench_output_parses() -> None:
    run = load_run(Path(__file__).resolve().parent / "data" / "ompi-2-tcp-1gbit.json")
    assert (run.library, run.ranks, run.network, run.progress) == (
        "Open MPI",
        2,
        "tcp-1gbit",
        "caller",
    )
    assert run.ops() == ["ibarrier", "iallreduce", "ialltoall"]
    assert [r.bytes for r in run.results_for("ialltoall")] == [4, 65536, 1048576]


def test_inproc_document_has_no_native() -> None:
    run = parse_run(inproc_document(ops=["ibcast"], sizes=[4, 64]), Path("i.json"))
    assert run.inproc and run.transport == "inproc"
    assert run.block_progress == "caller"
    assert run.mpi == "no MPI (inproc transport)"
    r = run.results_for("ibcast")[0]
    assert r.native is None and r.impl("native") is None
    assert r.nbcx.t_pure.median > 0


def test_mpi_document_still_needs_native() -> None:
    doc = document(ops=["ibcast"], sizes=[4])
    del doc["results"][0]["native"]
    with pytest.raises(InputError, match=r"results\[0\]: missing required field 'native'"):
        parse_run(doc, Path("m.json"))


def test_inproc_series_labels() -> None:
    runs = [
        parse_run(inproc_document(ranks=n, ops=["ibcast"], sizes=[4, 64]), Path(f"{n}.json"))
        for n in (2, 16)
    ]
    series, subtitle = make_series(runs)
    assert [s.label for s in series] == ["2 thread ranks", "16 thread ranks"]
    assert "no MPI (inproc transport)" in subtitle
    assert "blocking in caller mode" in subtitle
