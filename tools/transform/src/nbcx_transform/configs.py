"""The configurations of a file's conditional compilation (issue 34).

A file with ``#if``/``#ifdef`` ... ``#else`` ... ``#endif`` groups is one
program per configuration: with ``-DFAST`` one branch is compiled, without
it the other.  The output of the tool is compiled in all of them, so it must
be right in all of them: a wait must come before whatever touches the buffer
in the branch that is compiled, and a collective in one branch must be
converted like those that can match it on other ranks in every
configuration.

The tool parses the file once per configuration: the configuration given
(``-D``, ``-I``, ``-p``) and, for each other combination of the tests of the
file's groups, the file with each test replaced by ``1`` or ``0`` (the same
length, so offsets and line numbers stay; the headers see the macros of the
configuration given).  Every
configuration is analysed on its own; cli.py then converts each call site the
same way in all the configurations that compile it, numbers the requests
over all of them, and writes the union of what each configuration needs (a
wait that another configuration adds is harmless: waiting for a request that
is complete, null or inactive returns at once, and waiting for one in flight
only completes it earlier than needed).

What is not enumerated: include guards, ``#ifndef X`` / ``#define X`` default
values, tests of ``__cplusplus`` (fixed by the language), constant tests
(``#if 0``), and tests of the MPI library's or the compiler's own macros
(``OPEN_MPI``, ``MPI_VERSION``, ``__GNUC__``: those of ``--mpicc``).  The
branches of the last kind that the configuration given leaves out are not
analysed: their collectives stay blocking with every call that can match
them, and their directives stop waits.  With more than
:data:`MAX_CONFIGS` configurations, or when one of them does not parse, the
file is analysed in the configuration given only, conservatively in the same
way (every directive stops a wait, except an ``#if`` group without ``#else``
whose code is compiled and does not touch the buffers).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from clang.cindex import CursorKind as CK  # noqa: N817

from nbcx_transform import mpi
from nbcx_transform.clangast import Unit

MAX_CONFIGS = 16  # configurations parsed per file, the one given included
MAX_ATOMS = 10  # tests enumerated (2**10 assignments simulated, not parsed)

_COND_KINDS = {"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif"}
_OPENERS = {"if", "ifdef", "ifndef"}
# the MPI library's and the compiler's own macros: fixed by --mpicc and the compiler
_SYSTEM = re.compile(
    r"^(OPEN_MPI|OMPI_\w+|MPICH\w*|MPI_VERSION|MPI_SUBVERSION|MVAPICH\w*|I_MPI\w*|MSMPI\w*"
    r"|NBCX_PERSISTENT|__\w+|_[A-Z]\w*)$"
)
_USER_RESERVED = {"_OPENMP"}  # reserved spellings that a user's build selects


@dataclass(eq=False)
class Directive:
    kind: str
    line_start: int  # offset of the directive's line
    hash: int  # offset of its '#'
    end: int  # after its last line (continuation lines included) and the newline
    arg: str  # what follows the keyword (comments removed, lines joined)


@dataclass(eq=False)
class Branch:
    bid: int
    group: Group
    d: Directive
    atom: str  # the test ("" for #else), normalised: defined(X) or the expression
    neg: bool  # the branch is taken when the test is false (#ifndef)
    body_start: int
    body_end: int = 0  # line start of the group's next directive
    has_code: bool = False
    children: list[Group] = field(default_factory=list)


@dataclass(eq=False)
class Group:
    gid: int
    branches: list[Branch]
    parent: Branch | None
    endif: Directive | None = None
    # "enum": its tests are enumerated (rewritten in the other configurations);
    # "guard", "default": include guard, #ifndef X / #define X (never rewritten);
    # "language": tests __cplusplus; "system": tests the MPI library's or the
    # compiler's macros (the configuration given only)
    kind: str = "enum"

    @property
    def directives(self) -> list[Directive]:
        out = [b.d for b in self.branches]
        if self.endif is not None:
            out.append(self.endif)
        return out


def blank_comments(data: bytes) -> bytes:
    """``data`` with comments replaced by spaces (newlines kept) and string and
    character literals kept as they are."""
    out = bytearray(data)
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        if c == 0x2F and i + 1 < n and data[i + 1] == 0x2A:  # /*
            j = data.find(b"*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] not in (0x0A, 0x0D):
                    out[k] = 0x20
            i = j
        elif c == 0x2F and i + 1 < n and data[i + 1] == 0x2F:  # //
            j = data.find(b"\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = 0x20
            i = j
        elif c in (0x22, 0x27):  # " or '
            j = i + 1
            while j < n and data[j] != c and data[j] != 0x0A:
                j += 2 if data[j] == 0x5C else 1
            i = j + 1
        else:
            i += 1
    return bytes(out)


def scan_directives(data: bytes) -> list[Directive]:
    """Every preprocessor directive of the file, in order."""
    text = blank_comments(data)
    out: list[Directive] = []
    pos, n = 0, len(text)
    while pos < n:
        nl = text.find(b"\n", pos)
        end = n if nl < 0 else nl + 1
        line = text[pos:end]
        stripped = line.lstrip(b" \t")
        if stripped.startswith(b"#"):
            hash_off = pos + (len(line) - len(stripped))
            full = line.rstrip(b"\r\n")
            while full.endswith(b"\\") and end < n:
                nl = text.find(b"\n", end)
                nxt = n if nl < 0 else nl + 1
                full = full[:-1] + b" " + text[end:nxt].rstrip(b"\r\n")
                end = nxt
            m = re.match(rb"\s*#\s*(\w*)(.*)$", full, re.S)
            kind = m.group(1).decode() if m else ""
            arg = m.group(2).decode("utf-8", "replace").strip() if m else ""
            out.append(Directive(kind, pos, hash_off, end, arg))
        else:
            # a line that continues with a backslash is one line
            while line.rstrip(b"\r\n").endswith(b"\\") and end < n:
                nl = text.find(b"\n", end)
                nxt = n if nl < 0 else nl + 1
                line = text[end:nxt]
                end = nxt
        pos = end
    return out


def _atom(kind: str, arg: str) -> tuple[str, bool]:
    """(test, negated) of a conditional directive."""
    if kind in ("ifdef", "elifdef"):
        return f"defined({arg.split()[0] if arg.split() else arg})", False
    if kind in ("ifndef", "elifndef"):
        return f"defined({arg.split()[0] if arg.split() else arg})", True
    e = re.sub(r"\s+", " ", arg).strip()
    while e.startswith("(") and e.endswith(")") and _balanced(e[1:-1]):
        e = e[1:-1].strip()
    m = re.fullmatch(r"(!\s*)?defined\s*(\(\s*(\w+)\s*\)|\s+(\w+))", e)
    if m:
        name = m.group(3) or m.group(4)
        return f"defined({name})", bool(m.group(1))
    m = re.fullmatch(r"!\s*\(\s*defined\s*(\(\s*(\w+)\s*\)|\s+(\w+))\s*\)", e)
    if m:
        return f"defined({m.group(2) or m.group(3)})", True
    return e, False


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _literal(atom: str) -> int | None:
    m = re.fullmatch(r"(\d+)[uUlL]*", atom)
    return int(m.group(1)) if m else None


def _names(atom: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z_]\w*", atom) if w != "defined"]


def atom_kind(atom: str) -> str:
    """ "literal", "language", "system" or "enum" (see :class:`Group`)."""
    if _literal(atom) is not None:
        return "literal"
    names = _names(atom)
    if "__cplusplus" in names:
        return "language"
    if any(_SYSTEM.match(w) and w not in _USER_RESERVED for w in names):
        return "system"
    return "enum"


def build_groups(data: bytes, dirs: list[Directive]) -> tuple[list[Group], bool]:
    """The conditional groups (outermost first, nested ones under their branch),
    and whether every group is closed."""
    top: list[Group] = []
    stack: list[Group] = []
    nb = ng = 0
    ok = True
    for d in dirs:
        if d.kind not in _COND_KINDS:
            continue
        if d.kind in _OPENERS:
            parent = stack[-1].branches[-1] if stack else None
            ng += 1
            g = Group(ng, [], parent)
            nb += 1
            atom, neg = _atom(d.kind, d.arg)
            g.branches.append(Branch(nb, g, d, atom, neg, d.end))
            if parent is not None:
                parent.children.append(g)
            else:
                top.append(g)
            stack.append(g)
            continue
        if not stack:
            ok = False
            continue
        g = stack[-1]
        g.branches[-1].body_end = d.line_start
        if d.kind == "endif":
            g.endif = d
            stack.pop()
            continue
        nb += 1
        if d.kind == "else":
            atom, neg = "", False
        else:
            atom, neg = _atom(d.kind, d.arg)
        g.branches.append(Branch(nb, g, d, atom, neg, d.end))
    if stack:
        ok = False
    text = blank_comments(data)
    starts = {d.line_start: d for d in dirs}
    for g in _all(top):
        for b in g.branches:
            b.has_code = _has_code(text, b.body_start, b.body_end, starts)
    _classify(top, dirs, text)
    return top, ok


def _has_code(text: bytes, start: int, end: int, starts: dict[int, Directive]) -> bool:
    pos = start
    while pos < end:
        d = starts.get(pos)
        if d is not None:
            pos = d.end
            continue
        nl = text.find(b"\n", pos)
        nxt = end if nl < 0 or nl >= end else nl + 1
        if text[pos:nxt].strip():
            return True
        pos = nxt
    return False


def _all(groups: list[Group]) -> list[Group]:
    out: list[Group] = []
    todo = list(reversed(groups))
    while todo:
        g = todo.pop()
        out.append(g)
        for b in reversed(g.branches):
            todo.extend(reversed(b.children))
    return out


def _classify(top: list[Group], dirs: list[Directive], text: bytes) -> None:
    for g in _all(top):
        kinds = {atom_kind(b.atom) for b in g.branches if b.atom}
        if "system" in kinds:
            g.kind = "system"
        elif "language" in kinds:
            g.kind = "language"
        first = g.branches[0]
        if len(g.branches) != 1 or not first.atom.startswith("defined(") or not first.neg:
            continue
        name = first.atom[8:-1]
        body = [d for d in dirs if first.body_start <= d.line_start < first.body_end]
        if (
            g.parent is None
            and dirs
            and dirs[0] is first.d
            and len(dirs) > 1
            and dirs[1].kind == "define"
            and dirs[1].arg.split()[:1] == [name]
            and g.endif is not None
            and not text[: first.d.line_start].strip()
            and not text[g.endif.end :].strip()
        ):
            g.kind = "guard"
        elif (
            not first.has_code
            and body
            and all(d.kind == "define" for d in body)
            and any(re.split(r"[\s(]", d.arg, maxsplit=1)[0] == name for d in body)
        ):
            g.kind = "default"


@dataclass
class Config:
    """One configuration other than the one given."""

    values: dict[str, bool]  # enumerated test -> value
    active: frozenset[int]  # the branches it compiles (of the rewritten groups)
    text: bytes  # the file with the tests replaced
    defines: list[str]  # -DX / -UX for the defined(X) tests

    def describe(self, p_values: dict[str, bool] | None = None) -> str:
        parts = []
        for atom, v in sorted(self.values.items()):
            if p_values is not None and p_values.get(atom) == v:
                continue
            if atom.startswith("defined("):
                name = atom[8:-1]
                parts.append(name if v else f"!{name}")
            else:
                parts.append(f"({atom})" if v else f"!({atom})")
        return ", ".join(parts) or "the configuration given"


@dataclass
class Space:
    """A file's conditional groups and the configurations to analyse."""

    groups: list[Group]
    atoms: list[str]
    configs: list[Config]  # the others (the one given is parsed as usual)
    p_active: frozenset[int]
    limited: str = ""  # why only the configuration given is analysed ("" if not)

    @property
    def branches(self) -> list[Branch]:
        return [b for g in _all(self.groups) for b in g.branches]

    def all_groups(self) -> list[Group]:
        return _all(self.groups)


def p_active_branches(groups: list[Group], skipped: list[tuple[int, int]]) -> frozenset[int]:
    """The branches the configuration given compiles (from libclang's skipped ranges)."""
    out: set[int] = set()
    for g in _all(groups):
        for b in g.branches:
            probe = max(b.body_start - 1, b.d.hash)
            if not any(s <= probe < e for s, e in skipped):
                out.add(b.bid)
    return frozenset(out)


def _value(b: Branch, values: dict[str, bool]) -> bool:
    lit = _literal(b.atom)
    v = bool(lit) if lit is not None else values[b.atom]
    return v != b.neg


def simulate(
    groups: list[Group], values: dict[str, bool], p_active: frozenset[int]
) -> tuple[frozenset[int], bool]:
    """The branches an assignment of the enumerated tests compiles, and whether
    that is certain (a group that is not rewritten decides as in the
    configuration given only where that one compiles it too)."""
    active: set[int] = set()
    certain = True

    def visit(gs: list[Group], live: bool, p_live: bool) -> None:
        nonlocal certain
        for g in gs:
            if g.kind != "enum":
                if live and not p_live and any(_rewritten_below(b) for b in g.branches):
                    certain = False
                for b in g.branches:
                    on = live and b.bid in p_active
                    if on:
                        active.add(b.bid)
                    visit(b.children, on, b.bid in p_active)
                continue
            taken: Branch | None = None
            if live:
                for b in g.branches:
                    if not b.atom or _value(b, values):
                        taken = b
                        break
            for b in g.branches:
                on = b is taken
                if on:
                    active.add(b.bid)
                visit(b.children, on, b.bid in p_active)

    visit(groups, True, True)
    return frozenset(active), certain


def _rewritten_below(b: Branch) -> bool:
    return any(g.kind == "enum" or any(_rewritten_below(x) for x in g.branches) for g in b.children)


def forced_text(data: bytes, groups: list[Group], values: dict[str, bool]) -> bytes | None:
    """The file with the tests of the rewritten groups replaced by 1 or 0 (same
    length and lines, comments kept); None if a directive cannot hold the
    replacement."""
    buf = bytearray(data)
    blank = blank_comments(data)
    for g in _all(groups):
        if g.kind != "enum":
            continue
        for b in g.branches:
            if not b.atom:
                continue
            kw = b"#if" if b.d.kind in _OPENERS else b"#elif"
            new = kw + (b" 1" if _value(b, values) else b" 0")
            s, e = b.d.line_start, b.d.end
            span = bytearray(data[s:e])
            for k in range(len(span)):
                comment = blank[s + k] != data[s + k]
                if not comment and span[k] not in (0x0A, 0x0D):
                    span[k] = 0x20
            first = span.find(b"\n")
            head = blank[s : s + len(new)]
            if (first >= 0 and first < len(new)) or head != data[s : s + len(new)]:
                return None
            if b"\n" in head or len(span) < len(new):
                return None
            span[: len(new)] = new
            buf[s:e] = span
    return bytes(buf)


def space(data: bytes, skipped: list[tuple[int, int]], max_configs: int = MAX_CONFIGS) -> Space:
    """The configurations of ``data`` other than the one given (whose skipped
    ranges are ``skipped``)."""
    dirs = scan_directives(data)
    groups, closed = build_groups(data, dirs)
    p_active = p_active_branches(groups, skipped)
    sp = Space(groups, [], [], p_active)
    if not closed:
        sp.limited = "unbalanced #if/#endif"
        return sp
    atoms: list[str] = []
    for g in sp.all_groups():
        if g.kind != "enum":
            continue
        for b in g.branches:
            if b.atom and _literal(b.atom) is None and b.atom not in atoms:
                atoms.append(b.atom)
    sp.atoms = atoms
    if not atoms:
        return sp
    if max_configs <= 1:
        sp.limited = "--max-configurations 1"
        return sp
    if len(atoms) > MAX_ATOMS:
        sp.limited = f"{len(atoms)} preprocessor tests (at most {MAX_ATOMS} are enumerated)"
        return sp
    seen: set[frozenset[int]] = {p_active}
    given = p_values(sp)
    for combo in itertools.product((True, False), repeat=len(atoms)):
        values = dict(zip(atoms, combo, strict=True))
        active, certain = simulate(groups, values, p_active)
        if certain and active in seen:
            continue
        seen.add(active)
        text = forced_text(data, groups, values)
        if text is None:
            sp.limited = "a preprocessor test too short to rewrite"
            sp.configs = []
            return sp
        # (the headers keep the macros of the configuration given: a build may parse
        # with a macro that its compiled configuration leaves out, as the apps'
        # transformed kernels do with APP_TRANSFORM_PARSE, whose header would then
        # wrap every MPI call in a timing macro)
        defs: list[str] = []
        del given
        sp.configs.append(Config(values, active, text, defs))
        if len(sp.configs) + 1 > max_configs:
            sp.limited = (
                f"more than {max_configs} configurations of {len(atoms)} preprocessor tests "
                f"({', '.join(atoms[:6])}{', ...' if len(atoms) > 6 else ''})"
            )
            sp.configs = []
            return sp
    return sp


def p_values(sp: Space) -> dict[str, bool]:
    """The tests' values in the configuration given, where it evaluates them."""
    out: dict[str, bool] = {}
    for g in sp.all_groups():
        if g.kind != "enum" or (g.parent is not None and g.parent.bid not in sp.p_active):
            continue
        for b in g.branches:
            if not b.atom:
                break
            on = b.bid in sp.p_active
            if _literal(b.atom) is None:
                out.setdefault(b.atom, on != b.neg)
            if on:
                break
    return out


# ------------------------------------------------------------------ structure
def unaligned(unit: Unit, dirs: list[Directive]) -> set[int]:
    """The conditional directives (line starts) that the unit's functions do not
    have between two statements of a block: inside a statement, an expression or
    a function's head (their groups change the program's structure)."""
    out: set[int] = set()
    conds = [d for d in dirs if d.kind in _COND_KINDS]
    if not conds:
        return out
    for f in unit.functions.values():
        if not f.in_main:
            continue
        lo, hi = f.node.start, f.body.end
        inside = [d for d in conds if lo < d.hash < hi]
        if not inside:
            continue
        nodes = f.body.walk()
        for d in inside:
            if d.hash < f.body.start:
                out.add(d.line_start)
                continue
            best = None
            for n in nodes:
                if n.start < d.hash < n.end and (
                    best is None or n.end - n.start < best.end - best.start
                ):
                    best = n
            if best is None or best.kind != CK.COMPOUND_STMT:
                out.add(d.line_start)
    return out


_CALL = re.compile(r"\b(MPI_[A-Z][a-z_]*)\s*\(")


def _dead(g: Group, b: Branch, p_active: frozenset[int]) -> bool:
    """Whether no configuration compiles branch ``b``: its group is decided by
    constants (``#if 0``) or by the language (``__cplusplus``)."""
    if g.kind == "language" and b.bid not in p_active:
        return True
    if g.kind == "enum":
        for x in g.branches:
            lit = _literal(x.atom) if x.atom else None
            if x is b:
                return lit is not None and bool(lit) == x.neg
            if lit is not None and bool(lit) != x.neg:
                return True  # an earlier branch is always taken
    return False


def hidden_calls(data: bytes, sp: Space, actives: list[frozenset[int]]) -> list[tuple[str, int]]:
    """(collective, line) of the collective calls in the branches that none of the
    configurations analysed compiles (their active branches: ``actives``),
    leaving out those that none ever compiles (``#if 0``)."""
    text = blank_comments(data)
    out: list[tuple[str, int]] = []

    def visit(groups: list[Group]) -> None:
        for g in groups:
            for b in g.branches:
                if _dead(g, b, sp.p_active):
                    continue
                if not any(b.bid in a for a in actives):
                    chunk = text[b.body_start : b.body_end].decode("utf-8", "replace")
                    first = data.count(b"\n", 0, b.body_start) + 1
                    for m in _CALL.finditer(chunk):
                        if m.group(1) in mpi.COLLECTIVES:
                            out.append((m.group(1), first + chunk.count("\n", 0, m.start())))
                    continue
                visit(b.children)

    visit(sp.groups)
    return out
