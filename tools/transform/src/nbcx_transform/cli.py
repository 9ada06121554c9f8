"""The ``nbcx-transform`` command line."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nbcx_transform import __version__, configs, family
from nbcx_transform.clangast import parse
from nbcx_transform.flags import clang_args, from_make
from nbcx_transform.matching import (
    Fixed,
    fixed_calls,
    header_calls,
    keep_matching,
    matching_problems,
    named_in,
    opaque_calls,
)
from nbcx_transform.program import db_sources, program_summaries, summarise
from nbcx_transform.transform import FamilyConflictError, FileTransform, Options, Site, Wrapper

EXIT_USAGE = 2
EXIT_CHECK = 1
EXIT_MATCHING = 3

DESCRIPTION = """\
Rewrite the blocking MPI collectives of C files into nonblocking ones
(MPI_Iallreduce ... MPI_Wait) with each wait placed as late as the data
dependences allow, and into persistent collectives (MPI_Allreduce_init,
MPI_Start, MPI_Request_free) where they sit in loops with loop-invariant
arguments.  What cannot be proven safe stays blocking; --report says why.

By default the files are rewritten in place.  The MPI include path is taken
from the MPI compiler wrapper (--mpicc, $MPICC or mpicc), GCC's from
gcc -print-file-name=include; -D, -I and -p compile_commands.json add to it;
arguments after -- go to the parser unchanged."""

EPILOG = """\
examples:
  nbcx-transform --diff cg.c                 show the change, write nothing
  nbcx-transform -o cg_nb.c --report cg.c    write elsewhere, explain each call
  nbcx-transform --check src/*.c             exit 1 if something is convertible
  nbcx-transform -p build cg.c               flags from build/compile_commands.json

exit status: 0 on success (with --check: nothing left to convert), 1 with
--check when a blocking collective could be converted, 2 on bad usage or a
file that does not parse, 3 when the result would let a blocking collective
meet a nonblocking or persistent one on another rank (nothing is written).

The calls of one collective that can match each other on different ranks
(the root's and the others' in two branches, a wrapper's callers) are
converted alike: those with nothing to gain start and wait at once, or all
stay blocking when one cannot be converted (README.md in tools/transform)."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nbcx-transform",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", type=Path, help="C source files")
    p.add_argument("-o", "--output", type=Path, help="write the result here (one input file)")
    p.add_argument("--diff", action="store_true", help="print a unified diff, write nothing")
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a blocking collective could be converted",
    )
    p.add_argument("-n", "--dry-run", action="store_true", help="write nothing")
    p.add_argument("--report", action="store_true", help="explain what was done to each call")
    p.add_argument("--report-format", choices=("text", "json"), default="text")
    p.add_argument("--report-file", type=Path, help="write the report to this file")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    p.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR")
    p.add_argument(
        "-p",
        "--compile-commands",
        type=Path,
        metavar="PATH",
        help="compile_commands.json, or the directory that holds it",
    )
    p.add_argument(
        "--from-make",
        metavar="'make ...'",
        help="write compile_commands.json from the compile commands this make command "
        "would run (make -n -B; bear is used when installed), then use it as with -p",
    )
    p.add_argument(
        "--no-whole-program",
        action="store_true",
        help="do not analyse the program's other files (with -p) nor the other files given "
        "(calls into them stop waits)",
    )
    p.add_argument("--mpicc", help="MPI compiler wrapper to ask for MPI's flags (default mpicc)")
    p.add_argument(
        "--min-overlap",
        type=int,
        default=1,
        metavar="N",
        help="leave a collective blocking when fewer than N statements would overlap it "
        "(default 1: a wait right after the call gains nothing; 0 converts every safe one, "
        "as Petal does)",
    )
    p.add_argument("--no-persistent", action="store_true", help="never emit persistent collectives")
    p.add_argument(
        "--no-carry",
        action="store_true",
        help="never carry a wait across a loop's back edge (by default a wait that only the "
        "end of the loop body stops goes into the next iteration, before the first use, "
        "and after the loop)",
    )
    p.add_argument(
        "--strict-matching",
        action="store_true",
        help="convert the calls of one collective all alike (nonblocking, start-then-wait "
        "where nothing is gained) unless there is only one (by default, calls that every "
        "rank provably makes in the same order, e.g. straight-line code in main and one "
        "loop, are decided one by one)",
    )
    p.add_argument(
        "--headers-match-nothing",
        action="store_true",
        help="leave the collectives of the program's own headers (static inline wrappers, "
        "never rewritten) out of matching: only when none of them can meet a converted "
        "call on another rank (by default such a call keeps every call of its collective "
        "that it could meet blocking)",
    )
    p.add_argument(
        "--max-configurations",
        type=int,
        default=configs.MAX_CONFIGS,
        metavar="N",
        help="analyse each file in at most N configurations of its #if/#ifdef groups "
        f"(default {configs.MAX_CONFIGS}; beyond, and with 1, only the one given is "
        "analysed, and the code it leaves out stops waits and keeps its collectives' "
        "groups blocking)",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s (nbcx) {__version__}")
    return p


def site_record(path: str, s: Site, req_name: str, in_loop: bool = False) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "file": path,
        "line": s.line,
        "column": s.col,
        "function": s.func.name,
        "call": s.name,
        "action": s.action,
        "in_loop": in_loop,
    }
    if s.action == "blocking":
        rec["reason"] = s.reason
        rec["call"] = s.call.callee
        if s.twin:
            rec["twin"] = s.twin
    elif s.wrapper is not None:
        rec["call"] = s.wrapper.name
        rec["wraps"] = s.name
        w = s.wrapper
        rec["request"] = f"{w.req} (started by {w.start}(), completed by {w.wait}())"
        rec["waits"] = s.waits
    elif s.existing_req:
        rec["call"] = s.call.callee
        rec["request"] = s.existing_req
        rec["persistent"] = s.persistent
    elif s.batch:
        rec["request"] = f"{req_name}[{s.slot}..{s.slot + s.batch - 1}]"
        rec["waits"] = s.waits
        rec["batch"] = s.batch
    else:
        rec["request"] = f"{req_name}[{s.slot}]"
        rec["waits"] = s.waits
        if s.persistent:
            rec["persistent"] = s.persistent
            rec["loop_line"] = s.loop.line if s.loop is not None else 0
    if s.bound >= 0:
        rec["bound"] = s.bound
        if s.bound_ignores:
            rec["bound_ignores"] = list(s.bound_ignores)
    if s.notes:
        rec["notes"] = list(s.notes)
    return rec


def format_text(recs: list[dict[str, Any]], notes: list[str]) -> str:
    out: list[str] = [f"note: {n}" for n in notes]
    for r in recs:
        head = f"{r['file']}:{r['line']}:{r['column']}: {r['call']} in {r['function']}(): "
        if r["action"] == "blocking":
            out.append(head + "left as it is: " + r["reason"])
        elif "waits" not in r:
            where = "before the loop" if r["persistent"] == "hoisted" else "at its first start"
            out.append(head + f"persistent, request {r['request']}, init {where}")
        else:
            what = "nonblocking"
            if r.get("persistent") == "hoisted":
                what = f"persistent (init before the loop at line {r['loop_line']})"
            elif r.get("persistent") == "lazy":
                what = f"persistent (init at the first start in the loop at line {r['loop_line']})"
            out.append(head + f"{what}, request {r['request']}")
            for w in r["waits"]:
                who = {"root": "root: ", "nonroot": "non-root: "}.get(w["role"], "")
                pos = (
                    f"before line {w['line']}"
                    if w["where"] == "before"
                    else f"at the end of the block (line {w['line']})"
                )
                n = w["overlap"]
                flag = ", flag-guarded" if w["flagged"] else ""
                out.append(
                    f"    {who}wait {pos}{flag}: {n} statement{'s' if n != 1 else ''} overlap; "
                    f"stopped by {w['stopped_by']}"
                )
        for note in r.get("notes", []):
            out.append(f"    note: {note}")
    return "\n".join(out) + ("\n" if out else "")


def _decisions(fts: list[FileTransform]) -> list[tuple[str, str, int, bool]]:
    return [(s.action, s.persistent, s.batch, s.soft) for ft in fts for s in ft.sites]


def _transform(
    fams: list[family.Family],
    opts: Options,
    args: argparse.Namespace,
    db_wrappers: dict[str, Wrapper],
    notes_in: list[str],
) -> tuple[list[bytes], list[str]] | int:
    """Analyses, keeps matching, and writes the files (each in every configuration
    of its #if groups); the texts and the notes, or an exit status."""
    notes = list(notes_in)
    fts = [ft for fam in fams for ft in fam.fts]
    work = [(fam.path, fam.ft) for fam in fams]
    opts.wrappers = {}
    # One-collective wrapper functions of the files given: their callers (in any of
    # them) may call a nonblocking twin, which the wrapper's file then defines.
    for _, ft in work:
        opts.wrappers.update(ft.find_wrappers())
    given = {Path(ft.unit.path).resolve() for _, ft in work}
    for name, w in db_wrappers.items():
        if name not in opts.wrappers and Path(w.path).resolve() not in given:
            # the program's wrapper, in a file not given: its calls are reported
            where = Path(w.path).name
            why = w.reason or f"{where} is not among the files given (give it too)"
            opts.wrappers[name] = dataclasses.replace(w, reason=why)
    # Matching across ranks: the calls of one collective are converted together or
    # not at all, in every file given; the program's other files' calls stay blocking.
    others: list[Path] = []
    if args.compile_commands is not None:
        db_files = db_sources(args.compile_commands, cxx=True)
        others += [p for p in db_files if p.resolve() not in given and p not in others]
    fixed: list[Fixed] = [fx for p in others for fx in fixed_calls(p)]
    outside = named_in(others)  # what the files not given may call
    strict = args.strict_matching
    seen_fixed: set[tuple[str, str]] = set()
    for fam in fams:
        notes += fam.notes
        fixed += fam.hidden
        for ft in fam.fts:
            for fx in [] if args.headers_match_nothing else header_calls(ft):
                if (fx.name, fx.where) not in seen_fixed:
                    seen_fixed.add((fx.name, fx.where))
                    fixed.append(fx)
            if ft.unit.cxx:
                # the program's C++ headers: their classes' members (and templates)
                # are not analysed; their collectives, read from the text, stay
                # blocking with the calls that can match them
                for h in ft.unit.user_headers:
                    why = f"in the header {Path(h).name} (C++ headers are not analysed)"
                    for fx in fixed_calls(Path(h)):
                        if (fx.name, fx.where) not in seen_fixed:
                            seen_fixed.add((fx.name, fx.where))
                            fixed.append(dataclasses.replace(fx, why=why))
            for fx in opaque_calls(ft):
                if (fx.name, fx.where) not in seen_fixed:
                    seen_fixed.add((fx.name, fx.where))
                    fixed.append(fx)
            if ft.unit.cxx or ft.unit.opaque:
                # calls from code that is not analysed (constructors, lambdas, OpenMP
                # constructs) are not seen: only a group of one call is taken as
                # issued alike on every rank
                strict = True
    for fx in fixed:
        if fx.why != Fixed.why:
            notes.append(f"{fx.where}: {fx.name} kept blocking: {fx.why}")
    for ft in fts:
        ft.analyse()
    # each call site alike in every configuration of its file, and matching kept over
    # all of them, until neither changes anything
    for _ in range(16):
        before = _decisions(fts)
        for fam in fams:
            family.unify(fam)
        notes += keep_matching(fts, fixed, strict, outside)
        if _decisions(fts) == before:
            break
    for fam in fams:
        family.emit_sites(fam)
    # each wrapper once, however many files call its twin (issue 34: a wrapper called
    # from its own file and another had its twins emitted twice)
    used = list({(w.path, w.key): w for ft in fts for w in ft.used_wrappers.values()}.values())
    for fam in fams:
        family.add_decls(fam)
        if any(w.path == fam.ft.unit.path for w in used):
            fam.ft.add_twins(used)
    results: list[bytes] = []
    for fam in fams:
        try:
            results.append(family.render_family(fam))
        except FamilyConflictError as e:
            raise FamilyConflictError(str(fam.path)) from e
    outputs = [results[i] for i, fam in enumerate(fams) for _ in fam.fts]
    problems = matching_problems(fts, outputs, fixed, strict, outside)
    if problems:
        print(
            "nbcx-transform: refusing to write: the result would break the matching of "
            "collectives across ranks (MPI matches blocking, nonblocking and persistent "
            "collectives only with their own kind):",
            file=sys.stderr,
        )
        for pr in problems:
            print(f"  {pr}", file=sys.stderr)
        return EXIT_MATCHING
    return results, list(dict.fromkeys(notes))


def _records(fam: family.Family) -> list[dict[str, Any]]:
    """The report's entries of a file: its call sites in the configuration given,
    then those that only other configurations compile."""
    path = str(fam.path)
    ft0 = fam.ft
    recs = [
        site_record(path, s, ft0.names["nbcx_req"], ft0.loop_of(s) is not None) for s in ft0.sites
    ]
    if fam.mode != "multi":
        return recs
    seen = {s.call.start for s in ft0.sites}
    extra: list[dict[str, Any]] = []
    for ft in fam.fts[1:]:
        for s in ft.sites:
            if s.call.start in seen:
                continue
            seen.add(s.call.start)
            r = site_record(path, s, ft.names["nbcx_req"], ft.loop_of(s) is not None)
            r.setdefault("notes", []).append(
                f"compiled in another configuration of the file's #if groups ({ft.cfg.name}), "
                "analysed in it"
            )
            extra.append(r)
    return sorted(recs + extra, key=lambda r: (r["line"], r["column"]))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    args = _parser().parse_args(argv)
    if args.output is not None and len(args.files) != 1:
        print("nbcx-transform: -o needs exactly one input file", file=sys.stderr)
        return EXIT_USAGE
    opts = Options(
        min_overlap=args.min_overlap, persistent=not args.no_persistent, carry=not args.no_carry
    )
    notes: list[str] = []
    if args.from_make:
        db = from_make(args.from_make, Path.cwd())
        if db is None:
            print(
                f"nbcx-transform: no compile command found in '{args.from_make}'", file=sys.stderr
            )
            return EXIT_USAGE
        print(f"nbcx-transform: wrote {db}", file=sys.stderr)
        args.compile_commands = db
    db_wrappers: dict[str, Wrapper] = {}
    if args.compile_commands is not None and not args.no_whole_program:
        opts.external, pnotes = program_summaries(
            args.compile_commands,
            args.defines,
            args.includes,
            args.mpicc,
            extra,
            wrappers=db_wrappers,
            max_configs=args.max_configurations,
        )
        notes += pnotes
    write = not (args.diff or args.check or args.dry_run)
    records: list[dict[str, Any]] = []
    status = 0
    convertible = 0
    parsed: list[family.Parsed] = []
    for path in args.files:
        if not path.is_file():
            print(f"nbcx-transform: {path}: no such file", file=sys.stderr)
            return EXIT_USAGE
        cargs = clang_args(
            path, args.defines, args.includes, args.mpicc, args.compile_commands, extra
        )
        # the configuration given, and the other configurations of its #if groups
        parsed.append(family.prepare(path, parse(str(path), cargs), cargs, args.max_configurations))
    if args.compile_commands is None and not args.no_whole_program and len(parsed) > 1:
        # the files given summarise each other (with -p, the whole program does)
        # (each file in the configuration given: see program_summaries)
        opts.external, pnotes = summarise([pr.unit for pr in parsed if not pr.unit.errors])
        notes += pnotes
    while True:
        fams = [family.setup(pr, opts) for pr in parsed]
        try:
            done = _transform(fams, opts, args, db_wrappers, notes)
        except FamilyConflictError as e:
            bad = [pr for pr, fam in zip(parsed, fams, strict=True) if fam.mode == "multi"]
            hit = next((pr for pr in bad if str(pr.path) == str(e)), None)
            if hit is None or hit.conservative:
                raise
            hit.conservative = True
            continue
        break
    if isinstance(done, int):
        return done
    results, notes = done
    for fam, new in zip(fams, results, strict=True):
        path, ft = fam.path, fam.ft
        unit = ft.unit
        if unit.errors:
            print(f"nbcx-transform: {path}: does not parse:", file=sys.stderr)
            for err in unit.errors[:10]:
                print(f"  {err}", file=sys.stderr)
            status = EXIT_USAGE
        notes += [f"{path}: {n}" for n in ft.file_notes]
        recs = _records(fam)
        records += recs
        convertible += sum(1 for r in recs if r["action"] != "blocking")
        if args.diff and new != unit.data:
            a = unit.data.decode("utf-8", "replace").splitlines(keepends=True)
            b = new.decode("utf-8", "replace").splitlines(keepends=True)
            sys.stdout.writelines(difflib.unified_diff(a, b, f"a/{path}", f"b/{path}"))
        if args.check:
            for r in recs:
                if r["action"] != "blocking":
                    print(
                        f"{r['file']}:{r['line']}:{r['column']}: {r['call']} can be {r['action']}"
                    )
        if args.output is not None and not (args.diff or args.check or args.dry_run):
            args.output.write_bytes(new)
        elif write and new != unit.data:
            path.write_bytes(new)
    if args.report or args.report_file:
        if args.report_format == "json":
            text = json.dumps({"notes": notes, "collectives": records}, indent=2) + "\n"
        else:
            text = format_text(records, notes)
        if args.report_file:
            args.report_file.write_text(text)
        else:
            (sys.stderr if args.diff else sys.stdout).write(text)
    if status:
        return status
    if args.check and convertible:
        return EXIT_CHECK
    return 0
