"""Synthetic nbcx-bench JSON documents that follow the contract (schema nbcx-bench/1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OPS = [
    "ibarrier",
    "ibcast",
    "ireduce",
    "iallreduce",
    "igather",
    "iscatter",
    "iallgather",
    "ialltoall",
]
SIZES = [4 << k for k in range(0, 23, 2)]  # 4 B .. 16 MiB


def stat(median: float, spread: float = 0.1) -> dict[str, float]:
    return {"median": median, "min": median * (1 - spread), "max": median * (1 + spread)}


def impl(t_pure: float, overlap: float, cpu: float) -> dict[str, Any]:
    t_cpu = t_pure
    t_ovrl = t_pure + t_cpu - overlap * t_pure
    return {
        "t_pure": stat(t_pure),
        "t_cpu": stat(t_cpu),
        "t_ovrl": stat(t_ovrl),
        "overhead": stat(2e-6 + t_pure * 0.01),
        "cpu_progress": stat(cpu, 0.0),
        "overlap": {
            "median": overlap,
            "min": max(0.0, overlap - 0.1),
            "max": min(1.0, overlap + 0.05),
        },
    }


def raw(figures: dict[str, Any]) -> dict[str, list[float]]:
    """Per-repetition values consistent with the statistics: min, median, max."""
    return {name: [st["min"], st["median"], st["max"]] for name, st in figures.items()}


def result(op: str, nbytes: int, bandwidth: float) -> dict[str, Any]:
    t = 5e-6 + nbytes / bandwidth
    frac = min(0.95, nbytes / (1 << 22))
    reduction = op in ("ireduce", "iallreduce")
    native = impl(t, frac * 0.3, 0.0)
    nbcx = impl(t * 1.1, frac, 0.0)
    t_block = stat(t * 0.9)
    return {
        "op": op,
        "bytes": nbytes,
        "count": nbytes // 8 if reduction else nbytes,
        "datatype": "none" if op == "ibarrier" else "double" if reduction else "byte",
        "t_block": t_block,
        "native": native,
        "nbcx": nbcx,
        "raw": {"t_block": raw({"t": t_block})["t"], "native": raw(native), "nbcx": raw(nbcx)},
    }


def document(
    library: str = "Open MPI",
    ranks: int = 2,
    network: str = "shm",
    ops: list[str] | None = None,
    sizes: list[int] | None = None,
    bandwidth: float = 1e9,
) -> dict[str, Any]:
    ops = ops or OPS
    sizes = sizes or SIZES
    results = []
    for op in ops:
        for nbytes in [0] if op == "ibarrier" else sizes:
            results.append(result(op, nbytes, bandwidth))
    return {
        "schema": "nbcx-bench/1",
        "tool": "nbcx-bench",
        "nbcx_version": "0.1.0",
        "date": "2026-11-21T20:00:00Z",
        "machine": {"hostname": "vm", "cpu_model": "Intel Xeon", "cores": 2, "os": "Linux 6.1"},
        "mpi": {
            "library": library,
            "version": "4.1.4" if library == "Open MPI" else "4.0.2",
            "version_string": f"{library} v4",
        },
        "transport": "mpi",
        "network": network,
        "progress": "caller",
        "ranks": ranks,
        "cores": 2,
        "config": {"ops": ops, "sizes": sizes, "reps": 20, "warmup": 3, "tests": 0},
        "results": results,
    }


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def inproc_document(
    ranks: int = 4,
    ops: list[str] | None = None,
    sizes: list[int] | None = None,
    block_progress: str = "caller",
) -> dict[str, Any]:
    """An nbcx-bench --transport inproc document (schema nbcx-bench/1.1):
    no native implementation, t_block is nbcx's blocking-style use."""
    doc = document(ranks=ranks, ops=ops, sizes=sizes)
    doc["schema"] = "nbcx-bench/1.1"
    doc["transport"] = "inproc"
    doc["progress"] = "thread"
    doc["mpi"] = {"library": "none", "version": "none", "version_string": "none"}
    doc["config"]["block_progress"] = block_progress
    for r in doc["results"]:
        del r["native"]
        del r["raw"]["native"]
    return doc
