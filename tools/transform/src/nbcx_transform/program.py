"""Whole-program analysis: summaries of every function of the program.

With ``-p build/`` (compile_commands.json) every C file of the build is parsed
with its own flags and analysed; the summaries of its functions with external
linkage (what they read, write and free, through which parameter, whether they
call MPI, do I/O or end the process) are given to the analysis of the file being
transformed, so that a wait moves past a call into another file that does not
touch the operation's buffers.  Summaries that call into other files are
recomputed with the others' summaries until nothing changes (at most a few
rounds).  Objects private to another file become "memory outside this file",
which aliases everything this file lets escape.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from nbcx_transform import mpi
from nbcx_transform.analysis import Analysis, Summary, strip
from nbcx_transform.clangast import Unit, parse
from nbcx_transform.flags import clang_args
from nbcx_transform.transform import FileTransform, Options, Wrapper

CXX = (".cpp", ".cc", ".cxx", ".c++", ".cp", ".C")


def db_sources(db: Path, cxx: bool = False) -> list[Path]:
    """The C files named in a compile_commands.json (file or directory); with ``cxx``,
    the C++ files too."""
    path = db / "compile_commands.json" if db.is_dir() else db
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    out: list[Path] = []
    for e in entries:
        d = Path(e.get("directory", "."))
        f = Path(e.get("file", ""))
        full = (f if f.is_absolute() else d / f).resolve()
        words = e.get("arguments") or shlex.split(e.get("command", ""))
        if (full.suffix in CXX or "c++" in words or full.suffix != ".c") and not cxx:
            continue
        if full.is_file() and full not in out:
            out.append(full)
    return out


def program_summaries(
    db: Path,
    defines: list[str],
    includes: list[str],
    mpicc: str | None,
    extra: list[str],
    rounds: int = 4,
    wrappers: dict[str, Wrapper] | None = None,
    max_configs: int = 16,
) -> tuple[dict[str, Summary], list[str]]:
    """Summaries by function name of the program's C files, and notes.  With
    ``wrappers``, the program's one-collective wrapper functions go there too."""
    from nbcx_transform.family import prepare  # (family.py imports this module's users)

    notes: list[str] = []
    units = []
    versions: list[list[Unit]] = []
    for src in db_sources(db):
        args = clang_args(src, defines, includes, mpicc, db, extra)
        unit = parse(str(src), args)
        if unit.errors:
            notes.append(f"{src}: not summarised (does not parse: {unit.errors[0]})")
            continue
        units.append(unit)
        versions.append([unit])
    # (in the configuration given: a file's functions as the other configurations of its
    # #if groups have them are not summarised; merging them would be sound, but a
    # program's files are built with the same macros, and the serial branches of
    # CoMD-like wrappers would make their buffers escape in the MPI build)
    del prepare, max_configs
    summaries, more = summarise(versions, rounds)
    notes += more
    if wrappers is not None:
        for unit in units:
            if _has_wrapper(unit):
                ft = FileTransform(unit, Options(external=summaries))
                for name, w in ft.find_wrappers().items():
                    if not w.static:
                        wrappers[name] = w
    return summaries, notes


def summarise(
    units: list[Unit] | list[list[Unit]], rounds: int = 4
) -> tuple[dict[str, Summary], list[str]]:
    """Summaries by function name of the functions with external linkage of
    ``units`` (each computed with the others' until nothing changes), and notes.
    An item may be a list: one file in the configurations of its #if groups,
    whose summaries of one function are merged (what any of them does)."""
    notes: list[str] = []
    summaries: dict[str, Summary] = {}
    files = [u if isinstance(u, list) else [u] for u in units]
    for _ in range(rounds):
        new: dict[str, Summary] = {}
        for versions in files:
            mine: dict[str, Summary] = {}
            for unit in versions:
                for name, s in Analysis(unit, summaries).export().items():
                    mine[name] = merge_summaries(mine[name], s) if name in mine else s
            for name, s in mine.items():
                if name in new:
                    notes.append(f"{name}() is defined in more than one file: not summarised")
                    new[name] = Summary(
                        frozenset({"*"}),
                        frozenset({"*"}),
                        frozenset(),
                        frozenset(),
                        frozenset({"unknown"}),
                        (f"call to {name}() (defined twice)",),
                        0,
                    )
                else:
                    new[name] = s
        if new == summaries:
            break
        summaries = new
    return summaries, notes


def merge_summaries(a: Summary, b: Summary) -> Summary:
    """What either of two versions of a function (two configurations) may do."""
    if a == b:
        return a
    return Summary(
        reads=a.reads | b.reads,
        writes=a.writes | b.writes,
        preads=a.preads | b.preads,
        pwrites=a.pwrites | b.pwrites,
        flags=a.flags | b.flags | (frozenset() if a.nparams == b.nparams else {"unknown"}),
        why=tuple(dict.fromkeys(a.why + b.why)),
        nparams=a.nparams if a.nparams == b.nparams else -1,
        keeps=a.keeps or b.keeps,
    )


def _has_wrapper(unit: Unit) -> bool:
    """Whether some function of the unit's file has one collective for its body."""
    for f in unit.functions.values():
        if f.in_main and len(f.body.children) == 1:
            call = strip(f.body.children[0])
            if call.callee in mpi.COLLECTIVES:
                return True
    return False
