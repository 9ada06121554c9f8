#!/usr/bin/env python3
"""Checks nbcx-bench's output: the JSON against tools/bench/schema.json and
the table's columns, in both modes: with MPI (schema nbcx-bench/1: nbcx and
native MPI) and on the inproc transport (nbcx-bench/1.1: nbcx alone, its
blocking-style path as the reference). Standard library only (the C tests
install no Python packages), so it carries a small validator for the subset
of JSON Schema the schema uses.

  check_bench.py run --schema S --json F [--persistent] -- CMD...   run CMD
      (an nbcx-bench command writing F), expect exit 0 (nbcx's results
      equal MPI's), check its table and F; with --persistent also that F
      says config.persistent and every table block names the native
      persistent collectives F reports
  check_bench.py badargs [--tool T] -- CMD...   expect exit 2 and exactly
      one line, starting with "T:" (default "nbcx-bench:"), on stderr (and
      nothing on stdout)
  check_bench.py validate --schema S --json F [--table T]   check files
  check_bench.py model -- CMD...   run CMD (nbcx-split-model), check its
      JSON: S = 0..H, H = ceil(log2 ranks), best_S the least overlapped time

No timing is judged: the figures of a smoke run mean nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

COLUMNS = [
    "size",
    "t_block(us)",
    "native_pure(us)",
    "nbcx_pure(us)",
    "native_ovrl(us)",
    "nbcx_ovrl(us)",
    "native_overlap(%)",
    "nbcx_overlap(%)",
    "native_ovh(us)",
    "nbcx_ovh(us)",
    "native_cpu(%)",
    "nbcx_cpu(%)",
]

# The inproc table: paper 000's blocking, nbc and nbc+overlap variants.
COLUMNS_INPROC = [
    "size",
    "t_block(us)",
    "nbc_pure(us)",
    "nbc/block",
    "nbc_ovrl(us)",
    "t_cpu(us)",
    "comm(us)",
    "comm/block",
    "overlap(%)",
    "cpu(%)",
]

STATS = ("t_pure", "t_cpu", "t_ovrl", "overhead", "cpu_progress", "overlap")

SCHEMA_MPI = "nbcx-bench/1"
SCHEMA_INPROC = "nbcx-bench/1.1"


def impls_of(doc: dict[str, Any]) -> tuple[str, ...]:
    """The implementations a document has: native MPI and nbcx, or nbcx."""
    return ("nbcx",) if doc["schema"] == SCHEMA_INPROC else ("native", "nbcx")


RUN_TIMEOUT = 600  # seconds; CTest has its own timeout too


class CheckError(Exception):
    """A check failed; the message says where and why."""


# ---- a validator for the subset of JSON Schema in schema.json -------------

# Keywords that only document.
ANNOTATIONS = {"$schema", "$id", "title", "description", "$defs"}


def _type_ok(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    raise CheckError(f"schema: unsupported type {name!r}")


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise CheckError(f"schema: only local $ref is supported, not {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            raise CheckError(f"schema: unresolvable $ref {ref!r}")
        node = node[part]
    if not isinstance(node, dict):
        raise CheckError(f"schema: $ref {ref!r} is not a schema")
    return node


def validate(
    value: Any, schema: dict[str, Any], root: dict[str, Any], path: str
) -> None:
    """Raises CheckError at the first place where value breaks schema."""
    for key, rule in schema.items():
        if key in ANNOTATIONS:
            continue
        if key == "$ref":
            validate(value, _resolve(root, rule), root, path)
        elif key == "type":
            names = rule if isinstance(rule, list) else [rule]
            if not any(_type_ok(value, n) for n in names):
                raise CheckError(f"{path}: expected {rule}, got {type(value).__name__}")
        elif key == "enum":
            if value not in rule:
                raise CheckError(f"{path}: {value!r} is not one of {rule}")
        elif key == "const":
            if value != rule:
                raise CheckError(f"{path}: expected {rule!r}, got {value!r}")
        elif key in ("minimum", "maximum"):
            if _type_ok(value, "number"):
                if key == "minimum" and value < rule:
                    raise CheckError(f"{path}: {value} is below the minimum {rule}")
                if key == "maximum" and value > rule:
                    raise CheckError(f"{path}: {value} is above the maximum {rule}")
        elif key == "minItems":
            if isinstance(value, list) and len(value) < rule:
                raise CheckError(f"{path}: fewer than {rule} items")
        elif key == "required":
            if isinstance(value, dict):
                for name in rule:
                    if name not in value:
                        raise CheckError(f"{path}: missing {name!r}")
        elif key == "properties":
            if isinstance(value, dict):
                for name, sub in rule.items():
                    if name in value:
                        validate(value[name], sub, root, f"{path}.{name}")
        elif key == "items":
            if isinstance(value, list):
                for i, item in enumerate(value):
                    validate(item, rule, root, f"{path}[{i}]")
        else:
            raise CheckError(f"schema: unsupported keyword {key!r} at {path}")


# ---- checks beyond the schema ---------------------------------------------


def check_consistency(doc: dict[str, Any]) -> None:
    """Relations the schema cannot express."""
    ops = doc["config"]["ops"]
    seen = [r["op"] for r in doc["results"]]
    for op in ops:
        if op not in seen:
            raise CheckError(f"results: no result for {op}")
    impls = impls_of(doc)
    inproc = doc["schema"] == SCHEMA_INPROC
    if inproc != (doc["transport"] == "inproc"):
        raise CheckError(f"schema {doc['schema']} with transport {doc['transport']}")
    if inproc and (
        "block_progress" not in doc["config"] or doc["mpi"]["library"] != "none"
    ):
        raise CheckError(
            "inproc: config.block_progress missing, or an MPI library named"
        )
    for i, r in enumerate(doc["results"]):
        where = f"results[{i}] ({r['op']}, {r['bytes']} bytes)"
        reps = r.get("reps", len(r["raw"]["t_block"]))
        figures = [("t_block", r["t_block"], r["raw"]["t_block"])]
        for impl in ("native", "nbcx"):
            if (impl in r) != (impl in impls) or (impl in r["raw"]) != (impl in impls):
                raise CheckError(
                    f"{where}: {impl} must {'' if impl in impls else 'not '}be there"
                )
        for impl in impls:
            for s in STATS:
                figures.append((f"{impl}.{s}", r[impl][s], r["raw"][impl][s]))
        for name, stat, raw in figures:
            if len(raw) != reps:
                raise CheckError(
                    f"{where}: raw {name} has {len(raw)} values, not {reps}"
                )
            if not stat["min"] <= stat["median"] <= stat["max"]:
                raise CheckError(f"{where}: {name} is not min <= median <= max")
            if stat["min"] != min(raw) or stat["max"] != max(raw):
                raise CheckError(f"{where}: {name} min/max disagree with raw")
        if r["op"] == "ibarrier" and r["bytes"] != 0:
            raise CheckError(f"{where}: ibarrier must have bytes 0")


HEADER = re.compile(
    r"^# nbcx-bench: op (?P<op>\S+), ranks (?P<ranks>\d+), cores (?P<cores>\d+), "
    r"MPI (?P<mpi>[^,]+), network (?P<network>[^,]+), progress (?P<progress>[^,( ]+)"
    # where the progress thread runs, e.g. " (cpus 0 (shared with the application))"
    r"( \(cpus .*\))?(,|$)"
)


def check_table(text: str, doc: dict[str, Any] | None) -> None:
    """One block per operation: a header naming op, ranks, cores, MPI,
    network and progress; the column line (COLUMNS with MPI, COLUMNS_INPROC
    on the inproc transport); rows of as many numbers. With doc, the
    blocks must match the JSON's results (and, inproc, the ratio columns
    the JSON's medians)."""
    columns_of_doc = None
    if doc is not None:
        columns_of_doc = COLUMNS_INPROC if doc["schema"] == SCHEMA_INPROC else COLUMNS
    blocks: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = HEADER.match(line)
        if m:
            blocks.append({"header": m.groupdict(), "columns": None, "rows": []})
            continue
        if not blocks:
            raise CheckError(f"table line {n}: text before the first header: {line!r}")
        block = blocks[-1]
        if line.startswith("#"):
            fields = line[1:].split()
            if fields and fields[0] == "size":
                want = columns_of_doc or (
                    COLUMNS_INPROC if fields == COLUMNS_INPROC else COLUMNS
                )
                if fields != want:
                    raise CheckError(f"table line {n}: columns {fields} are not {want}")
                block["columns"] = fields
            continue
        if block["columns"] is None:
            raise CheckError(f"table line {n}: row before the column line")
        fields = line.split()
        ncols = len(block["columns"])
        if len(fields) != ncols:
            raise CheckError(f"table line {n}: {len(fields)} fields, not {ncols}")
        try:
            row = [int(fields[0])] + [float(f) for f in fields[1:]]
        except ValueError as e:
            raise CheckError(f"table line {n}: not numbers: {line!r}") from e
        block["rows"].append(row)

    if not blocks:
        raise CheckError("table: no block")
    for b in blocks:
        if b["columns"] is None or not b["rows"]:
            raise CheckError(
                f"table: block {b['header']['op']} has no column line or no row"
            )
    if doc is None:
        return
    if [b["header"]["op"] for b in blocks] != doc["config"]["ops"]:
        raise CheckError("table: the blocks are not the operations of config.ops")
    for b in blocks:
        h = b["header"]
        want_header = {
            "ranks": str(doc["ranks"]),
            "cores": str(doc["cores"]),
            "network": doc["network"],
            "progress": doc["progress"],
        }
        for key, value in want_header.items():
            if h[key] != value:
                raise CheckError(
                    f"table: {h['op']} says {key} {h[key]}, the JSON {value}"
                )
        if not h["mpi"].startswith(doc["mpi"]["library"]):
            raise CheckError(f"table: {h['op']} says MPI {h['mpi']}")
        results = [r for r in doc["results"] if r["op"] == h["op"]]
        sizes = [r["bytes"] for r in results]
        if [row[0] for row in b["rows"]] != sizes:
            raise CheckError(
                f"table: sizes of {h['op']} differ from the JSON's {sizes}"
            )
        if doc["schema"] == SCHEMA_INPROC:
            check_ratios(h["op"], b["rows"], results)


def check_ratios(
    op: str, rows: list[list[float]], results: list[dict[str, Any]]
) -> None:
    """The inproc table's nbc/block and comm/block are the ratios of the
    JSON's medians (nbcx t_pure and overhead over t_block), to the
    table's three decimals."""
    at = {name: COLUMNS_INPROC.index(name) for name in ("nbc/block", "comm/block")}
    for row, r in zip(rows, results, strict=True):
        block = r["t_block"]["median"]
        want = {
            "nbc/block": r["nbcx"]["t_pure"]["median"] / block if block > 0 else 0.0,
            "comm/block": r["nbcx"]["overhead"]["median"] / block if block > 0 else 0.0,
        }
        for name, value in want.items():
            if abs(row[at[name]] - value) > 0.0006:
                raise CheckError(
                    f"table: {op} at {r['bytes']} bytes: {name} {row[at[name]]}, "
                    f"the JSON's medians give {value:.4f}"
                )


def check_files(schema_path: str, json_path: str, table: str | None) -> dict[str, Any]:
    schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    doc = json.loads(Path(json_path).read_text(encoding="utf-8"))
    validate(doc, schema, schema, "$")
    if not isinstance(doc, dict):  # the schema says so; this tells mypy
        raise CheckError("$: not an object")
    check_consistency(doc)
    if table is not None:
        check_table(table, doc)
    return doc


# ---- commands -----------------------------------------------------------


def run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    if not cmd:
        raise CheckError("no command given after --")
    return subprocess.run(
        cmd, check=False, capture_output=True, text=True, timeout=RUN_TIMEOUT
    )


def run_ok(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    """Runs cmd, which must exit with 0 (else its stderr is shown); its
    stdout is passed on."""
    p = run(cmd)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise CheckError(f"exit code {p.returncode}, expected 0")
    sys.stdout.write(p.stdout)
    return p


PERSISTENT_LINE = re.compile(r"^# persistent requests: nbcx_<op>_init; native: (.*)$")
NATIVE_PERSISTENT = {
    "MPI-4": "MPI_<op>_init (MPI-4)",
    "MPIX": "MPIX_<op>_init (Open MPI mpi-ext.h)",
    "none": "none, the nonblocking call",
}


def check_persistent(text: str, doc: dict[str, Any]) -> None:
    """--persistent: the JSON says so, and each table block says which
    native persistent collectives ran, as the JSON does."""
    config = doc["config"]
    if config.get("persistent") is not True:
        raise CheckError("config.persistent is not true")
    native = config.get("native_persistent")
    if native not in NATIVE_PERSISTENT:
        raise CheckError(f"config.native_persistent is {native!r}")
    lines = [m.group(1) for m in map(PERSISTENT_LINE.match, text.splitlines()) if m]
    if len(lines) != len(config["ops"]):
        raise CheckError(
            f"table: {len(lines)} 'persistent requests' lines for "
            f"{len(config['ops'])} operations"
        )
    inproc = doc["schema"] == SCHEMA_INPROC
    if inproc and native != "none":
        raise CheckError(f"inproc: config.native_persistent is {native!r}")
    expected = "none (no native library)" if inproc else NATIVE_PERSISTENT[native]
    for line in lines:
        if line != expected:
            raise CheckError(f"table says native {line!r}, the JSON {native!r}")


def check_pure_only(doc: dict[str, Any]) -> None:
    """--pure-only: the JSON says so, every t_pure was measured (> 0) and
    nothing of the overlapped run was (0)."""
    if doc["config"].get("pure_only") is not True:
        raise CheckError("config.pure_only is not true")
    for r in doc["results"]:
        for impl in ("native", "nbcx"):
            if impl not in r:
                continue
            x = r[impl]
            where = f"{r['op']} {r['bytes']} B {impl}"
            if not x["t_pure"]["median"] > 0:
                raise CheckError(f"{where}: t_pure not measured")
            for k in ("t_cpu", "t_ovrl", "overhead", "overlap"):
                if x[k]["median"] != 0 or x[k]["max"] != 0:
                    raise CheckError(f"{where}: {k} is not 0 in --pure-only")


def cmd_run(args: argparse.Namespace) -> None:
    p = run_ok(args.cmd)
    doc = check_files(args.schema, args.json, p.stdout)
    if args.pure_only:
        check_pure_only(doc)
        print("check_bench: pure only")
    if args.persistent:
        check_persistent(p.stdout, doc)
        print(f"check_bench: persistent, native {doc['config']['native_persistent']}")
    print(f"check_bench: {len(doc['results'])} results and the table are valid")


def cmd_badargs(args: argparse.Namespace) -> None:
    p = run(args.cmd)
    lines = p.stderr.splitlines()
    sys.stdout.write(f"stderr: {p.stderr!r}\n")
    if p.returncode != 2:
        raise CheckError(f"exit code {p.returncode}, expected 2")
    prefix = f"{args.tool}: "
    if len(lines) != 1 or not lines[0].startswith(prefix):
        raise CheckError(f"expected one '{prefix}...' line on stderr, got {lines}")
    if p.stdout.strip():
        raise CheckError(f"expected nothing on stdout, got {p.stdout!r}")
    print("check_bench: one-line error and exit code 2")


def check_model(doc: Any) -> None:
    """nbcx-split-model's JSON: one point per S = 0..H, and best_S the
    smallest S of least t_overlapped. Overlapped with a computation, the
    collective takes at least as long as alone and as the computation."""
    if not isinstance(doc, dict) or doc.get("schema") != "nbcx-split-model/1":
        raise CheckError("model: not an nbcx-split-model/1 document")
    ranks, levels = doc["ranks"], doc["levels"]
    if levels != (ranks - 1).bit_length():
        raise CheckError(f"model: {levels} levels for {ranks} ranks")
    points = doc["points"]
    if [p["S"] for p in points] != list(range(levels + 1)):
        raise CheckError("model: points are not S = 0..levels")
    for p in points:
        if not p["t_collective"] <= p["t_overlapped"] + 1e-9:
            raise CheckError(
                f"model: S={p['S']}: overlapped below the collective alone"
            )
        if not doc["compute"] <= p["t_overlapped"] + 1e-9:
            raise CheckError(f"model: S={p['S']}: overlapped below the computation")
    least = min(p["t_overlapped"] for p in points)
    best = next(p["S"] for p in points if p["t_overlapped"] <= least * (1 + 1e-9))
    if doc["best_S"] != best:
        raise CheckError(
            f"model: best_S {doc['best_S']}, the least time is at S={best}"
        )


def cmd_model(args: argparse.Namespace) -> None:
    p = run_ok(args.cmd)
    check_model(json.loads(p.stdout))
    print("check_bench: the model's JSON is valid")


def cmd_validate(args: argparse.Namespace) -> None:
    table = Path(args.table).read_text(encoding="utf-8") if args.table else None
    doc = check_files(args.schema, args.json, table)
    print(f"check_bench: {args.json}: {len(doc['results'])} results are valid")


def main(argv: list[str]) -> int:
    cmd: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, cmd = argv[:i], argv[i + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="run nbcx-bench, check table and JSON")
    p_run.add_argument("--schema", required=True)
    p_run.add_argument("--json", required=True)
    p_run.add_argument(
        "--persistent",
        action="store_true",
        help="expect an nbcx-bench --persistent run",
    )
    p_run.add_argument(
        "--pure-only",
        action="store_true",
        help="expect an nbcx-bench --pure-only run",
    )
    p_bad = sub.add_parser("badargs", help="expect exit code 2 and one line")
    p_bad.add_argument("--tool", default="nbcx-bench", help="the line's prefix")
    sub.add_parser("model", help="run nbcx-split-model, check its JSON")
    p_val = sub.add_parser("validate", help="check existing files")
    p_val.add_argument("--schema", required=True)
    p_val.add_argument("--json", required=True)
    p_val.add_argument("--table")
    args = parser.parse_args(argv)
    args.cmd = cmd
    try:
        {
            "run": cmd_run,
            "badargs": cmd_badargs,
            "validate": cmd_validate,
            "model": cmd_model,
        }[args.command](args)
    except (
        CheckError,
        OSError,
        json.JSONDecodeError,
        KeyError,
        TypeError,
        subprocess.TimeoutExpired,
    ) as e:
        print(f"check_bench: FAIL: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
