#!/usr/bin/env python3
"""Smoke check of nbcx-bench --pmpi (native, shim and nbcx side by side).

  check_bench_pmpi.py --schema S --json F [--persistent] -- CMD...

runs CMD (an nbcx-bench --pmpi command writing F) and checks:
  - exit 0: nbcx-bench compared the shim's results (and nbcx's) with the
    native library's, bit for bit, before timing anything;
  - F follows tools/bench/schema.json and the consistency rules of
    tests/bench/check_bench.py; every result also has a 'shim' object (and
    raw values) with positive times and min <= median <= max;
  - F's 'pmpi' says the shim served calls on nbcx and sent none to the
    native library (every benchmark call is one the shim serves), and
    names the library it loaded;
  - the table has the --pmpi columns, one row per result, each row's shim
    and native t_pure equal to the JSON's medians, and a '# shim:' count
    line per operation.
No timing is judged. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import check_bench

COLUMNS_PMPI = [
    "size",
    "t_block(us)",
    "native_pure(us)",
    "shim_pure(us)",
    "nbcx_pure(us)",
    "native_ovrl(us)",
    "shim_ovrl(us)",
    "nbcx_ovrl(us)",
    "native_overlap(%)",
    "shim_overlap(%)",
    "nbcx_overlap(%)",
    "native_ovh(us)",
    "shim_ovh(us)",
    "nbcx_ovh(us)",
    "native_cpu(%)",
    "shim_cpu(%)",
    "nbcx_cpu(%)",
]
STATS = ["t_pure", "t_cpu", "t_ovrl", "overhead", "cpu_progress", "overlap"]
COUNT_LINE = re.compile(
    r"^# shim: (\d+) calls served by nbcx, (\d+) sent to the native library"
)


class Fail(Exception):
    pass


def check_doc(doc: dict[str, Any], persistent: bool) -> None:
    pm = doc.get("pmpi")
    if not isinstance(pm, dict):
        raise Fail("JSON: no 'pmpi' object")
    if "libnbcx-pmpi" not in pm.get("library", ""):
        raise Fail(f"pmpi.library is {pm.get('library')!r}")
    if not pm.get("served", 0) > 0 or pm.get("native") != 0:
        raise Fail(
            f"pmpi: served {pm.get('served')}, native "
            f"{pm.get('native')}: want served > 0, native 0"
        )
    if persistent != (pm.get("persistent") != "none"):
        raise Fail(f"pmpi.persistent is {pm.get('persistent')!r}")
    if not doc["results"]:
        raise Fail("JSON: no results")
    for i, r in enumerate(doc["results"]):
        where = f"results[{i}] ({r['op']}, {r['bytes']} bytes)"
        if "shim" not in r or "shim" not in r["raw"]:
            raise Fail(f"{where}: no shim figures")
        reps = r["reps"]
        for s in STATS:
            stat, raw = r["shim"][s], r["raw"]["shim"][s]
            if len(raw) != reps:
                raise Fail(f"{where}: raw shim.{s}: {len(raw)} values")
            if not stat["min"] <= stat["median"] <= stat["max"]:
                raise Fail(f"{where}: shim.{s} not min <= median <= max")
            if stat["min"] != min(raw) or stat["max"] != max(raw):
                raise Fail(f"{where}: shim.{s} min/max disagree with raw")
        if not r["shim"]["t_pure"]["min"] > 0:
            raise Fail(f"{where}: shim t_pure is not positive")


def check_table(text: str, doc: dict[str, Any]) -> None:
    rows, counts, cols = [], 0, 0
    for line in text.splitlines():
        if line.startswith("# size"):
            fields = line[1:].split()
            if fields != COLUMNS_PMPI:
                raise Fail(f"table columns {fields}, want {COLUMNS_PMPI}")
            cols += 1
        elif COUNT_LINE.match(line):
            counts += 1
        elif line and not line.startswith("#"):
            rows.append([float(x) for x in line.split()])
    nops = len(doc["config"]["ops"])
    if cols != nops or counts != nops:
        raise Fail(
            f"table: {cols} column lines and {counts} '# shim:' "
            f"lines for {nops} operations"
        )
    if len(rows) != len(doc["results"]):
        raise Fail(f"table: {len(rows)} rows, JSON {len(doc['results'])}")
    for row, r in zip(rows, doc["results"]):
        if len(row) != len(COLUMNS_PMPI) or int(row[0]) != r["bytes"]:
            raise Fail(f"table row {row[:2]}... does not match {r['op']}")
        for impl, col in (("native", "native_pure(us)"), ("shim", "shim_pure(us)")):
            want = r[impl]["t_pure"]["median"] * 1e6
            got = row[COLUMNS_PMPI.index(col)]
            if abs(got - want) > 0.006 + 1e-6 * want:
                raise Fail(
                    f"table: {r['op']} {r['bytes']}: {col} {got}, "
                    f"JSON median {want:.3f}"
                )


def main(argv: list[str]) -> int:
    cmd: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, cmd = argv[:i], argv[i + 1 :]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schema", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--persistent", action="store_true")
    args = ap.parse_args(argv)
    try:
        p = subprocess.run(
            cmd, check=False, capture_output=True, text=True, timeout=240
        )
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        if p.returncode != 0:
            raise Fail(f"exit code {p.returncode}")
        schema = json.loads(Path(args.schema).read_text(encoding="utf-8"))
        doc = json.loads(Path(args.json).read_text(encoding="utf-8"))
        check_bench.validate(doc, schema, schema, "$")
        check_bench.check_consistency(doc)
        check_doc(doc, args.persistent)
        check_table(p.stdout, doc)
    except (
        Fail,
        check_bench.CheckError,
        OSError,
        ValueError,
        KeyError,
        TypeError,
        subprocess.TimeoutExpired,
    ) as e:
        print(f"check_bench_pmpi: FAIL: {e}", file=sys.stderr)
        return 1
    print(
        f"check_bench_pmpi: {len(doc['results'])} results, native, shim "
        f"and nbcx agree; shim served {doc['pmpi']['served']} calls, "
        f"native {doc['pmpi']['native']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
