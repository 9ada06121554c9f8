"""Reading and validating nbcx-bench JSON files.

The format is written by ``nbcx-bench --json``: schema ``nbcx-bench/1`` with
MPI (nbcx next to the MPI library's own collectives, ``native``), and
``nbcx-bench/1.1`` on the inproc transport (ranks are threads, no native
implementation; ``t_block`` is nbcx's blocking-style use, ``nbcx.t_pure``
paper 000's "nbc", ``nbcx.overhead`` the communication time of its
"nbc+overlap"). Every statistic is an object ``{"median": x, "min": x,
"max": x}`` over the repetitions, each repetition being first reduced with
MAX over ranks; times are in seconds, ``overlap`` and ``cpu_progress`` are
fractions.

Only the fields the charts use are required here, so that a file with extra
fields (or a newer minor revision of the format) still plots; everything
required is checked for presence and type, and any problem is reported as a
single :class:`InputError` naming the file and the JSON path of the field.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Schema identifiers this reader understands: ``nbcx-bench/1`` and any
#: minor revision ``nbcx-bench/1.N`` (which adds fields and, on the inproc
#: transport only, leaves out ``native``).
SCHEMA_RE = re.compile(r"^nbcx-bench/1(\.[0-9]+)?$")

#: The per-implementation statistics, in the order the contract lists them.
IMPL_STATS = ("t_pure", "t_cpu", "t_ovrl", "overhead", "cpu_progress", "overlap")

#: The two implementations measured side by side, in plotting order.
IMPLS = ("nbcx", "native")


class InputError(Exception):
    """A JSON file that cannot be read or does not follow the format."""


@dataclass(frozen=True)
class Stat:
    """A statistic over repetitions: median, minimum and maximum."""

    median: float
    min: float
    max: float


@dataclass(frozen=True)
class ImplResult:
    """The figures of one implementation (nbcx or native) at one size."""

    t_pure: Stat
    t_cpu: Stat
    t_ovrl: Stat
    overhead: Stat
    cpu_progress: Stat
    overlap: Stat

    def stat(self, name: str) -> Stat:
        """The statistic called ``name`` (one of :data:`IMPL_STATS`)."""
        value = getattr(self, name)
        assert isinstance(value, Stat)
        return value


@dataclass(frozen=True)
class Result:
    """One operation at one message size."""

    op: str
    bytes: int
    t_block: Stat
    native: ImplResult | None  # None on the inproc transport
    nbcx: ImplResult

    def impl(self, name: str) -> ImplResult | None:
        """The figures of implementation ``name`` ("nbcx" or "native")."""
        return self.nbcx if name == "nbcx" else self.native


@dataclass(frozen=True)
class Run:
    """One nbcx-bench JSON file: how it was measured, and its results."""

    path: Path
    library: str
    mpi_version: str
    network: str
    progress: str
    ranks: int
    tests: int
    nbcx_version: str
    date: str
    hostname: str
    cpu_model: str
    cores: int | None
    results: tuple[Result, ...]
    transport: str = "mpi"
    block_progress: str = ""  # inproc: the mode of the blocking variant

    @property
    def inproc(self) -> bool:
        """Ranks were threads: nbcx against its own blocking-style use."""
        return self.transport == "inproc"

    @property
    def mpi(self) -> str:
        """The MPI library with its version, e.g. "Open MPI 4.1.4"."""
        if self.inproc:
            return "no MPI (inproc transport)"
        return f"{self.library} {self.mpi_version}".strip()

    def ops(self) -> list[str]:
        """The operations measured, in order of first appearance."""
        return list(dict.fromkeys(r.op for r in self.results))

    def results_for(self, op: str) -> list[Result]:
        """The results of ``op``, sorted by message size."""
        return sorted((r for r in self.results if r.op == op), key=lambda r: r.bytes)


# --------------------------------------------------------------- checking --


class _Checker:
    """Typed accessors that raise InputError naming the offending field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> InputError:
        return InputError(f"{self.path}: {where}: {problem}")

    def obj(self, parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
        value = self.field(parent, key, where)
        if not isinstance(value, dict):
            raise self.fail(_join(where, key), f"expected an object, got {_kind(value)}")
        return value

    def field(self, parent: dict[str, Any], key: str, where: str) -> Any:
        if key not in parent:
            raise self.fail(where or "top level", f"missing required field '{key}'")
        return parent[key]

    def string(self, parent: dict[str, Any], key: str, where: str) -> str:
        value = self.field(parent, key, where)
        if not isinstance(value, str):
            raise self.fail(_join(where, key), f"expected a string, got {_kind(value)}")
        return value

    def integer(self, parent: dict[str, Any], key: str, where: str, minimum: int) -> int:
        value = self.field(parent, key, where)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(_join(where, key), f"expected an integer, got {_kind(value)}")
        if value < minimum:
            raise self.fail(_join(where, key), f"expected at least {minimum}, got {value}")
        return value

    def number(self, parent: dict[str, Any], key: str, where: str) -> float:
        value = self.field(parent, key, where)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(_join(where, key), f"expected a number, got {_kind(value)}")
        if not math.isfinite(value):
            raise self.fail(_join(where, key), f"expected a finite number, got {value}")
        return float(value)

    def stat(self, parent: dict[str, Any], key: str, where: str, fraction: bool = False) -> Stat:
        """A {median, min, max} object of non-negative numbers (at most 1 if fraction)."""
        here = _join(where, key)
        obj = self.obj(parent, key, where)
        values = {name: self.number(obj, name, here) for name in ("median", "min", "max")}
        for name, value in values.items():
            if value < 0 or (fraction and value > 1):
                bounds = "from 0 to 1" if fraction else "at least 0"
                raise self.fail(f"{here}.{name}", f"expected a number {bounds}, got {value:g}")
        return Stat(**values)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _kind(value: object) -> str:
    """A JSON-ish name for the type of ``value``, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _impl(c: _Checker, parent: dict[str, Any], key: str, where: str) -> ImplResult:
    obj = c.obj(parent, key, where)
    here = _join(where, key)
    stats = {name: c.stat(obj, name, here, fraction=name == "overlap") for name in IMPL_STATS}
    return ImplResult(**stats)


def parse_run(doc: object, path: Path) -> Run:
    """Validate a decoded nbcx-bench document and turn it into a :class:`Run`."""
    c = _Checker(path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object at the top level, got {_kind(doc)}")

    schema = c.string(doc, "schema", "")
    if not SCHEMA_RE.match(schema):
        raise c.fail("schema", f"unsupported schema '{schema}' (expected 'nbcx-bench/1')")

    mpi = c.obj(doc, "mpi", "")
    library = c.string(mpi, "library", "mpi")
    version = mpi.get("version", "")
    if not isinstance(version, str):
        raise c.fail("mpi.version", f"expected a string, got {_kind(version)}")

    machine = doc.get("machine", {})
    if not isinstance(machine, dict):
        raise c.fail("machine", f"expected an object, got {_kind(machine)}")
    cores = machine.get("cores", doc.get("cores"))
    config = doc.get("config", {})
    if not isinstance(config, dict):
        raise c.fail("config", f"expected an object, got {_kind(config)}")
    tests = config.get("tests", 0)
    transport = doc.get("transport", "mpi")
    if not isinstance(transport, str):
        raise c.fail("transport", f"expected a string, got {_kind(transport)}")
    inproc = transport == "inproc"

    raw_results = c.field(doc, "results", "")
    if not isinstance(raw_results, list):
        raise c.fail("results", f"expected an array, got {_kind(raw_results)}")
    if not raw_results:
        raise c.fail("results", "no results in the file")

    results: list[Result] = []
    seen: set[tuple[str, int]] = set()
    for i, item in enumerate(raw_results):
        where = f"results[{i}]"
        if not isinstance(item, dict):
            raise c.fail(where, f"expected an object, got {_kind(item)}")
        op = c.string(item, "op", where)
        if not op:
            raise c.fail(f"{where}.op", "empty operation name")
        size = c.integer(item, "bytes", where, minimum=0)
        if (op, size) in seen:
            raise c.fail(where, f"second result for {op} at {size} bytes")
        seen.add((op, size))
        results.append(
            Result(
                op=op,
                bytes=size,
                t_block=c.stat(item, "t_block", where),
                # Inproc runs have no native implementation.
                native=None if inproc and "native" not in item else _impl(c, item, "native", where),
                nbcx=_impl(c, item, "nbcx", where),
            )
        )

    return Run(
        path=path,
        library=library,
        mpi_version=version,
        network=c.string(doc, "network", ""),
        progress=str(doc.get("progress", "caller")),
        ranks=c.integer(doc, "ranks", "", minimum=1),
        tests=tests if isinstance(tests, int) and not isinstance(tests, bool) else 0,
        nbcx_version=str(doc.get("nbcx_version", "")),
        date=str(doc.get("date", "")),
        hostname=str(machine.get("hostname", "")),
        cpu_model=str(machine.get("cpu_model", "")),
        cores=cores if isinstance(cores, int) and not isinstance(cores, bool) else None,
        results=tuple(results),
        transport=transport,
        block_progress=str(config.get("block_progress", "")),
    )


def load_run(path: Path) -> Run:
    """Read, decode and validate one nbcx-bench JSON file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a JSON file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a JSON file (not UTF-8 text)") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON: {e.msg} (line {e.lineno})") from None
    except ValueError as e:
        raise InputError(f"{path}: not valid JSON: {e}") from None
    return parse_run(doc, path)


def _reject_constant(name: str) -> float:
    """Refuse NaN and Infinity, which Python accepts but JSON does not."""
    raise ValueError(f"'{name}' is not a JSON number")
