"""Compiler arguments for libclang: MPI's and GCC's include paths, -D/-I, and
``compile_commands.json``.

The ``libclang`` wheel ships no compiler headers (``stddef.h``, ``stdarg.h``),
so GCC's are passed with ``-isystem $(gcc -print-file-name=include)``.  MPI's
include path comes from the compiler wrapper: ``mpicc -showme:compile`` (Open
MPI) or ``mpicc -show`` (MPICH).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path


def _run(cmd: list[str]) -> str:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return res.stdout if res.returncode == 0 else ""


SHIM = Path(__file__).parent / "include"


def gcc_include() -> list[str]:
    """``-isystem`` our <stdatomic.h> and GCC's own header directory (stddef.h and friends)."""
    for cc in (os.environ.get("CC", ""), "gcc", "cc"):
        if not cc or shutil.which(cc) is None:
            continue
        out = _run([cc, "-print-file-name=include"]).strip()
        if out and Path(out).is_dir():
            return ["-isystem", str(SHIM), "-isystem", out]
    return ["-isystem", str(SHIM)]


def mpi_flags(mpicc: str | None = None) -> list[str]:
    """-I and -D flags of the MPI compiler wrapper (empty if none is found)."""
    cands = [mpicc] if mpicc else [os.environ.get("MPICC", ""), "mpicc"]
    for cc in cands:
        if not cc:
            continue
        words = shlex.split(cc)
        if shutil.which(words[0]) is None:
            continue
        out = _run([*words, "-showme:compile"])
        if not out:
            out = _run([*words, "-show"])
        return _keep_preprocessor(shlex.split(out))
    return []


def _keep_preprocessor(words: list[str]) -> list[str]:
    keep: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("-I", "-D", "-U", "-isystem", "-include", "-iquote") and i + 1 < len(words):
            keep += [w, words[i + 1]]
            i += 2
            continue
        if w.startswith(("-I", "-D", "-U", "-std=", "-isystem")) or w in ("-pthread", "-fopenmp"):
            keep.append(w)
        i += 1
    return keep


def from_compile_commands(path: Path, source: Path) -> list[str] | None:
    """The preprocessor flags of ``source`` in a compile_commands.json (file or directory)."""
    db = path / "compile_commands.json" if path.is_dir() else path
    try:
        entries = json.loads(db.read_text())
    except (OSError, ValueError):
        return None
    want = source.resolve()
    for e in entries:
        d = Path(e.get("directory", "."))
        f = Path(e.get("file", ""))
        full = (f if f.is_absolute() else d / f).resolve()
        if full != want:
            continue
        words = e.get("arguments") or shlex.split(e.get("command", ""))
        flags = _keep_preprocessor(words[1:])
        # relative include paths are relative to the entry's directory
        out: list[str] = []
        prev = ""
        for w in flags:
            if prev in ("-I", "-isystem", "-iquote") and not Path(w).is_absolute():
                w = str(d / w)
            elif w.startswith("-I") and len(w) > 2 and not Path(w[2:]).is_absolute():
                w = "-I" + str(d / w[2:])
            out.append(w)
            prev = w
        compiler = words[0] if words else ""
        if compiler and ("mpi" in Path(compiler).name):
            out = mpi_flags(compiler) + out
        return out
    return None


def clang_args(
    source: Path,
    defines: list[str],
    includes: list[str],
    mpicc: str | None,
    compile_commands: Path | None,
    extra: list[str],
) -> list[str]:
    """Everything libclang needs to parse ``source`` like the real compiler."""
    args = gcc_include()
    cc_flags = from_compile_commands(compile_commands, source) if compile_commands else None
    if cc_flags is None:
        args += mpi_flags(mpicc)
    else:
        args += cc_flags
        if not any(a.startswith("-I") and "mpi" in a for a in cc_flags):
            args += mpi_flags(mpicc)
    args += [f"-D{d}" for d in defines]
    args += [f"-I{i}" for i in includes]
    args += extra
    return args


_COMPILER = re.compile(r"^(mpi)?(cc|gcc|clang|icc|icx|mpicc|mpiicc)([.-][\w.]+)?$")
_ENTERING = re.compile(r"make(\[\d+\])?: Entering directory '([^']+)'")


# The shell that make is given for ``make -n``: make still runs two kinds of
# commands under -n, the recursive makes (which must run, to print what the
# sub-makes would do) and the rules that remake an included makefile (``include
# .depend`` with a ``.depend:`` rule): those generate dependencies (``cc -MM``,
# makedepend) and are not run, so nothing of the build is run or written.
_DRY_SHELL = r"""#!/bin/sh
# nbcx-transform's shell for make -n: runs recursive makes and the rest, not
# dependency generation (cc -M/-MM/-MG, makedepend, mkdep)
case " $* " in
  *[/\ ]make\ *|*[/\ ]gmake\ *) ;;
  *" -M "*|*" -MM "*|*" -MG "*|*makedepend*|*mkdep*) exit 0 ;;
esac
exec {sh} "$@"
"""


def _dry_shell(d: Path) -> Path:
    sh = shutil.which("bash") or "/bin/sh"
    path = d / "nbcx-dry-shell"
    path.write_text(_DRY_SHELL.replace("{sh}", sh))
    path.chmod(0o755)
    return path


_MISSING = (
    re.compile(r"No rule to make target '([^']+)'"),
    re.compile(r"^[^:\n]+:\d+: ([^:\s]+): No such file or directory", re.M),
)
# compiler options that only generate dependencies or preprocess: no compile command
_NOT_COMPILE = {"-M", "-MM", "-E"}


def _parse_dry_run(text: str, base: Path) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    seen: set[tuple[str, str]] = set()
    text = text.replace("\\\n", " ")
    for line in text.splitlines():
        m = _ENTERING.search(line)
        if m:
            base = Path(m.group(2))
            continue
        here = base
        for part in re.split(r"&&|;|\|\|", line):
            try:
                w = shlex.split(part)
            except ValueError:
                continue
            if not w:
                continue
            if w[0] == "cd" and len(w) > 1:
                here = (here / w[1]).resolve()
                continue
            if not _COMPILER.match(Path(w[0]).name) or _NOT_COMPILE & set(w):
                continue
            for i, x in enumerate(w):
                if x.startswith((">", "<", "2>", "|")):
                    w = w[:i]
                    break
            srcs = [x for x in w[1:] if x.endswith(".c") and not x.startswith("-")]
            for src in srcs:
                key = (str(here), src)
                if key in seen:
                    continue
                seen.add(key)
                args = [w[0]] + [x for x in w[1:] if x not in srcs or x == src]
                entries.append({"directory": str(here), "file": src, "arguments": args})
    return entries


def from_make(cmd: str, cwd: Path) -> Path | None:
    """Writes ``cwd/compile_commands.json`` from the C compile commands that the make
    command would run (``make -n -B``: nothing is built) and returns its path
    (None if there is none).

    Recursive makes are followed (make runs them under -n, and says which
    directory each works in); the rules that remake an included makefile
    (``include .depend``) are not run (see ``_DRY_SHELL``), and an included
    makefile that does not exist and has no rule (``depend`` not made yet) is
    given an empty one (``--eval``), so that make goes on."""
    words = shlex.split(cmd)
    if not words:
        return None
    base = cwd
    if "-C" in words and words.index("-C") + 1 < len(words):
        base = (cwd / words[words.index("-C") + 1]).resolve()
    evals: list[str] = []
    with tempfile.TemporaryDirectory(prefix="nbcx-make-") as tmp:
        shell = _dry_shell(Path(tmp))
        for _ in range(4):
            try:
                res = subprocess.run(
                    [*words, "-n", "-B", f"SHELL={shell}", *evals],
                    cwd=cwd,
                    capture_output=True,
                    text=True,
                    timeout=300,
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired):
                return None
            entries = _parse_dry_run(res.stdout, base)
            if entries or res.returncode == 0:
                break
            missing = {m for rx in _MISSING for m in rx.findall(res.stderr)}
            new = [f"--eval={m}: ;" for m in sorted(missing) if f"--eval={m}: ;" not in evals]
            if not new:
                break
            evals += new
    if not entries:
        return None
    out = cwd / "compile_commands.json"
    out.write_text(json.dumps(entries, indent=2) + "\n")
    return out
