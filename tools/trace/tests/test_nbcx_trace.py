"""Tests of nbcx-trace on synthetic traces (the real ones: tests/trace)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from nbcx_trace import cli as nt


def coll(
    ts: float,
    dur: float,
    exposed: float,
    *,
    pid: int = 0,
    name: str = "allreduce",
    nbytes: int = 8,
    progress: float = 0.0,
    site: str = "app+0x10",
) -> dict[str, Any]:
    return {
        "name": name,
        "cat": "coll",
        "ph": "X",
        "ts": ts,
        "dur": dur,
        "pid": pid,
        "tid": 101,
        "args": {
            "thread": "app 1",
            "op": name,
            "alg": "ring",
            "bytes": nbytes,
            "site": site,
            "exposed_us": exposed,
            "progress_us": progress,
        },
    }


def call(name: str, ts: float, dur: float, pid: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "cat": "call",
        "ph": "X",
        "ts": ts,
        "dur": dur,
        "pid": pid,
        "tid": 100,
        "args": {"thread": "app 1"},
    }


def write(
    d: Path,
    rank: int,
    events: list[dict[str, Any]],
    *,
    sync: float = 0.0,
    host: str = "a",
    shares_core: bool | None = None,
) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"nbcx-trace.{rank}.json"
    other = {
        "format": "nbcx-trace/1",
        "rank": rank,
        "size": 2,
        "host": host,
        "sync_us": sync,
        "pid": 100 + rank,
        "progress_shares_core": shares_core,
    }
    p.write_text(json.dumps({"traceEvents": events, "otherData": other}))
    return p


def two_ranks(d: Path, hosts: tuple[str, str] = ("a", "a")) -> None:
    write(
        d,
        0,
        [call("start", 0, 1), coll(0, 100, 10), call("wait", 91, 9)],
        sync=1000.0,
        host=hosts[0],
    )
    write(
        d,
        1,
        [call("start", 5, 1, pid=1), coll(5, 100, 50, pid=1), call("wait", 55, 50, pid=1)],
        sync=1010.0,
        host=hosts[1],
    )


def test_load_rejects_what_is_not_a_trace(tmp_path: Path) -> None:
    with pytest.raises(nt.TraceError, match="not a directory"):
        nt.load_dir(tmp_path / "missing")
    with pytest.raises(nt.TraceError, match="no nbcx-trace"):
        nt.load_dir(tmp_path)
    bad = tmp_path / "nbcx-trace.0.json"
    bad.write_text('{"traceEvents": [')
    with pytest.raises(nt.TraceError, match="not a readable JSON"):
        nt.load_dir(tmp_path)
    bad.write_text(json.dumps({"traceEvents": [], "otherData": {"format": "other"}}))
    with pytest.raises(nt.TraceError, match="not an nbcx trace"):
        nt.load_dir(tmp_path)
    write(tmp_path, 0, [coll(0, -1, 0)])
    with pytest.raises(nt.TraceError, match="negative duration"):
        nt.load_dir(tmp_path)
    write(tmp_path, 0, [{"ph": "X", "ts": 0}])
    with pytest.raises(nt.TraceError, match="has no dur"):
        nt.load_dir(tmp_path)


def test_align_shifts_other_hosts_only(tmp_path: Path) -> None:
    two_ranks(tmp_path / "same")
    files = nt.load_dir(tmp_path / "same")
    nt.align(files, "auto")
    assert [f.offset_us for f in files] == [0.0, 0.0]
    nt.align(files, "barrier")
    assert [f.offset_us for f in files] == [0.0, -10.0]
    two_ranks(tmp_path / "two", hosts=("a", "b"))
    files = nt.load_dir(tmp_path / "two")
    nt.align(files, "auto")
    assert [f.offset_us for f in files] == [0.0, -10.0]
    nt.align(files, "none")
    assert [f.offset_us for f in files] == [0.0, 0.0]


def test_merge_keeps_every_slice_and_names_tracks(tmp_path: Path) -> None:
    two_ranks(tmp_path, hosts=("a", "b"))
    merged = nt.merge(nt.load_dir(tmp_path), "auto")
    xs = [e for e in merged["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == 6
    colls = sorted((e for e in xs if e["cat"] == "coll"), key=lambda e: e["pid"])
    assert colls[1]["ts"] == pytest.approx(-5.0)  # 5 us, shifted by -10
    names = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in merged["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }
    assert names[(0, 101)] == "app 1 ops lane 0"
    assert names[(1, 100)] == "app 1"


def test_summary_hidden_share_and_last(tmp_path: Path) -> None:
    two_ranks(tmp_path)
    s = nt.summarise(nt.load_dir(tmp_path))
    g = s["operations"]["allreduce 8 B"]
    assert g["count"] == 2
    assert g["bytes"] == 16
    assert g["hidden"] == pytest.approx(1 - 60 / 200)
    assert list(s["sites"]) == ["app+0x10 allreduce"]
    write(tmp_path, 0, [coll(0, 100, 100), coll(200, 100, 0, progress=7.0)])
    s = nt.summarise(nt.load_dir(tmp_path), last=1)
    g = s["operations"]["allreduce 8 B"]
    assert g["count"] == 2  # rank 0's last, rank 1's only
    assert g["hidden"] == pytest.approx(1 - 50 / 200)
    assert g["progress_us"] == pytest.approx(7.0)


def test_summary_net_hidden_share(tmp_path: Path) -> None:
    # 100 us in flight, 20 exposed, 30 of progress-thread work: 80 % hidden;
    # net 50 % where the thread shares the application's core, else 80 %.
    write(tmp_path, 0, [coll(0, 100, 20, progress=30.0)], shares_core=True)
    write(tmp_path, 1, [coll(0, 100, 20, pid=1, progress=30.0)], shares_core=False)
    s = nt.summarise(nt.load_dir(tmp_path))
    g = s["operations"]["allreduce 8 B"]
    assert g["hidden"] == pytest.approx(0.8)
    assert g["hidden_net"] == pytest.approx((50 + 80) / 200)
    assert g["hidden_net_median"] == pytest.approx(0.65)
    # more work than hidden time: nothing hidden, never negative
    write(tmp_path, 0, [coll(0, 100, 20, progress=95.0)], shares_core=True)
    write(tmp_path, 1, [coll(0, 100, 20, pid=1, progress=95.0)])
    g = nt.summarise(nt.load_dir(tmp_path))["operations"]["allreduce 8 B"]
    assert g["hidden_net"] == pytest.approx(80 / 200)


def test_summary_caps_exposed_at_the_span(tmp_path: Path) -> None:
    write(tmp_path, 0, [coll(0, 10, 50)])
    g = nt.summarise(nt.load_dir(tmp_path))["operations"]["allreduce 8 B"]
    assert g["hidden"] == 0.0


def test_window_parsing() -> None:
    assert nt.parse_window(None) == (None, None)
    assert nt.parse_window("1.5:") == (1.5, None)
    assert nt.parse_window(":2") == (None, 2.0)
    for bad in ("3", "a:b"):
        with pytest.raises(nt.TraceError):
            nt.parse_window(bad)


def test_main_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert nt.main(["summary", str(tmp_path)]) == 1
    assert "no nbcx-trace" in capsys.readouterr().err
    two_ranks(tmp_path)
    assert nt.main(["summary", str(tmp_path)]) == 0
    assert "allreduce 8 B" in capsys.readouterr().out
    assert nt.main(["summary", str(tmp_path), "--last", "0"]) == 1
    out = tmp_path / "m.json"
    assert nt.main(["merge", str(tmp_path), "-o", str(out)]) == 0
    assert len(json.loads(out.read_text())["traceEvents"]) > 6
    with pytest.raises(SystemExit) as e:
        nt.main(["frobnicate"])
    assert e.value.code == 2


def test_timeline_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    two_ranks(tmp_path)
    png = tmp_path / "t.png"
    assert nt.main(["timeline", str(tmp_path), "--png", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert nt.timeline(nt.load_dir(tmp_path), png, "0.05:0.06") == 3  # 2 collectives, 1 wait
    assert nt.main(["timeline", str(tmp_path), "--png", str(png), "--window", "5:1"]) == 1


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        nt.main(["--version"])
    out = capsys.readouterr().out.strip()
    assert out == f"nbcx-trace (nbcx) {nt.VERSION}"
    # ctest passes the project's version: the script's must follow it
    want = os.environ.get("EXPECT_VERSION")
    if want:
        assert want == nt.VERSION
