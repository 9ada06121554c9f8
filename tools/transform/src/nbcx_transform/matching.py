"""Matching kept across ranks: every rank issues, per communicator, the same
sequence of blocking, nonblocking and persistent collectives.

MPI matches a blocking collective only with a blocking one, a nonblocking one
only with a nonblocking one, and a persistent one (by the order of the
``*_init`` calls, which follow the ordering rules of nonblocking collectives)
only with a persistent one.  In a correct program every rank calls the same
collective operation at the same position of its sequence, but not
necessarily from the same call site: the root of a broadcast may call it in
``if (rank == 0) { ... }`` and the others in the ``else`` branch, or through a
wrapper function, or in another loop.

The rule kept here is sound without knowing which call sites match which:
the call sites of one collective operation (``MPI_Bcast``, ...) form a group,
whatever their communicator (two communicator expressions may denote the same
communicator) and wherever they are in the files given.

A group is *uniform* when it is one call site, or when each of its calls is
under no condition (only loops and blocks around it) in a function with no
jump that could skip it (``break``, ``continue``, ``goto``, a ``return`` before
the end), the function being ``main`` or called only from such places, and at
most one loop holds any of its calls (directly or through the calls of their
functions), entered once, apart from loops whose trip count is written in the
text (``for (i = 0; i < 10; i++)``, ``i`` not written in the body): then
every rank issues the group's calls from the same sites in the same order
(see :func:`uniform`), and each call is converted as its own analysis says
(blocking, nonblocking or persistent: every rank makes the same choice at
each position).
Any other group is converted as a whole or not at all:

* when some call of the group gains from being nonblocking and every call can
  be rewritten, the calls that gain nothing become *start-then-wait*
  (``MPI_Ibcast(...); MPI_Wait(...)``, or the wait where their own analysis
  puts it);
* when some call cannot be rewritten (it comes from a macro, its result is
  used, it is in a file that is not given, ...), the whole group stays blocking;
* never persistent: the ``*_init`` calls might run in a different order on
  different ranks (a persistent collective matches only a persistent one, in
  the order of the inits); the calls that could be persistent become
  nonblocking.

The program's own ``MPI_Ixxx`` calls are a group of their own (they match
each other): made persistent when the group is uniform and all of them can be.

What the rule assumes: the files given (and, with ``-p``, the program's other
C files, whose collectives are read) are the program; code outside them
(libraries, files not given) issues no collective of a group that is
converted; a program that leaves ``main`` (``exit``) on some ranks and not
others makes no further collective calls on the others.
``--strict-matching`` makes only a group of one call uniform.

:func:`matching_problems` checks the result (the decisions and the text
written) and returns what would break matching; the command line writes
nothing when it finds something.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clang.cindex import CursorKind as CK  # noqa: N817

from nbcx_transform import mpi
from nbcx_transform.analysis import LOOPS, strip
from nbcx_transform.clangast import OPENMP, Function, Node
from nbcx_transform.transform import FileTransform, Site


@dataclass(frozen=True)
class Fixed:
    """A collective call that stays blocking whatever happens: in a file of the
    program that is not given (read from compile_commands.json)."""

    name: str
    where: str  # file:line
    why: str = "in a file not given"
    # a call in a function of the program's own headers: where it is, so that the
    # group may still be proven issued alike on every rank (then it needs no
    # converting alike); None for calls only read from a text
    func: Function | None = field(default=None, compare=False)
    call: Node | None = field(default=None, compare=False)


@dataclass(frozen=True)
class _At:
    """A call site as :func:`uniform` sees it (a header's call, which is no Site)."""

    func: Function
    stmt: Node
    call: Node


def opaque_calls(ft: FileTransform) -> list[Fixed]:
    """The collectives of the code of a file that is not analysed (C++
    constructors, destructors, explicit specializations, ..., and OpenMP
    constructs: ``Unit.opaque``),
    read from its text: they stay blocking, and so do the calls that can match
    them."""
    out: list[Fixed] = []
    data = ft.unit.data
    name = Path(ft.unit.path).name
    for start, end, what in ft.unit.opaque:
        text = data[start:end].decode("utf-8", "replace")
        text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        first = data.count(b"\n", 0, start) + 1
        for m in re.finditer(r"\b(MPI_[A-Z][a-z_]*)\s*\(", text):
            if m.group(1) in mpi.COLLECTIVES:
                line = first + text.count("\n", 0, m.start())
                why = f"in {what}, which is not analysed" + ("" if what == OPENMP else " (C++)")
                out.append(Fixed(m.group(1), f"{name}:{line}", why))
    return out


def fixed_calls(path: Path) -> list[Fixed]:
    """The blocking collectives a file that is not transformed calls (read from its
    text, comments left out: a macro's call counts too)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    out: list[Fixed] = []
    for m in re.finditer(r"\b(MPI_[A-Z][a-z_]*)\s*\(", text):
        if m.group(1) in mpi.COLLECTIVES:
            out.append(Fixed(m.group(1), f"{path.name}:{text.count(chr(10), 0, m.start()) + 1}"))
    return out


def header_calls(ft: FileTransform) -> list[Fixed]:
    """The collectives of the functions of the program's own headers that the file
    uses (a ``static inline`` wrapper in ``parallel.h``): headers are not
    transformed, so these calls stay blocking, and so do the calls that can match
    them (before, a broadcast in ``main`` became ``MPI_Ibcast`` while the other
    ranks' broadcast through the header's wrapper stayed blocking: a hang)."""
    funcs = ft.unit.functions
    # the header functions the file's own code reaches (calls, or a function named
    # without a call: a pointer to it, a table's initializer), through other header
    # functions too
    used: set[str] = set()
    todo = [f.body for f in funcs.values() if f.in_main] + list(ft.unit.globals_init)
    while todo:
        for n in todo.pop().walk():
            k = n.callee_key if n.kind == CK.CALL_EXPR else ""
            if n.kind == CK.DECL_REF_EXPR:
                k = n.ref
            g = funcs.get(k) if k else None
            if g is not None and not g.in_main and k not in used:
                used.add(k)
                todo.append(g.body)
    out: list[Fixed] = []
    for f in funcs.values():
        if f.in_main or f.key not in used:
            continue
        where = Path(f.file).name if f.file else "a header"
        for n in f.body.walk():
            if n.kind == CK.CALL_EXPR and n.callee in mpi.COLLECTIVES:
                why = f"in {f.name}() of the header {where}, which is not transformed"
                out.append(Fixed(n.callee, f"{where}:{n.line}", why, f, n))
    return out


def named_in(paths: Sequence[Path]) -> set[str]:
    """Every identifier in the text of the program's files that are not given
    (comments left out): a function of the files given whose name is among them
    may be called from there, on some ranks only."""
    out: set[str] = set()
    for path in paths:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        out |= set(re.findall(r"\b[A-Za-z_]\w*\b", text))
    return out


def _where(ft: FileTransform, s: Site) -> str:
    return f"{ft.unit.path.rsplit('/', 1)[-1]}:{s.line}"


def _members(fts: Sequence[FileTransform]) -> dict[str, list[tuple[FileTransform, Site]]]:
    """The call sites of each blocking collective operation, across the files."""
    groups: dict[str, list[tuple[FileTransform, Site]]] = {}
    for ft in fts:
        for s in ft.sites:
            if s.existing_req or s.reason.startswith("left nonblocking"):
                continue
            if s.wrapper is not None and s.action == "blocking" and not s.soft:
                # a call of the wrapper itself: the collective in the wrapper's body
                # is the member (when the wrapper is in a file given)
                if s.wrapper.path in {f.unit.path for f in fts}:
                    continue
            s.group = s.name
            groups.setdefault(s.name, []).append((ft, s))
    return groups


Loop = tuple[str, int]  # a loop: its function's key and its offset
_JUMPS = (CK.GOTO_STMT, CK.INDIRECT_GOTO_STMT, CK.BREAK_STMT, CK.CONTINUE_STMT)
_CONDS = (CK.IF_STMT, CK.SWITCH_STMT, CK.CASE_STMT, CK.DEFAULT_STMT, CK.LABEL_STMT)


class Reach:
    """Which statements every rank executes alike: those under no condition in a
    function that is ``main`` or only called from such statements (in the files
    given, never through a pointer), with no jump that could skip them."""

    def __init__(self, fts: Sequence[FileTransform], outside: Collection[str] = ()) -> None:
        # names of functions that the program's files not given may call
        self.outside = set(outside)
        self.funcs: dict[str, Function] = {}
        self.calls: dict[str, list[tuple[Function, Node]]] = {}
        self.addr: set[str] = set()
        taken: set[str] = set()
        seen: set[tuple[str, str, int]] = set()
        self.locals: set[str] = set()  # local variables, their address never taken
        for ft in fts:
            self.addr |= ft.unit.address_taken_functions
            self.locals |= {k for k, d in ft.unit.decls.items() if d.kind == "local"}
            # (the functions of the program's headers too: a wrapper they call is
            # called from there as well)
            for f in ft.unit.functions.values():
                self.funcs.setdefault(f.key, f)
                for n in f.body.walk():
                    if n.kind == CK.CALL_EXPR and n.callee_key:
                        # (a call compiled in several configurations of its file's #if
                        # groups is one call: the first configuration's is kept; the
                        # file counts, as several programs' mains share one key)
                        if (f.file, f.key, n.start) not in seen:
                            seen.add((f.file, f.key, n.start))
                            self.calls.setdefault(n.callee_key, []).append((f, n))
                    if n.kind == CK.UNARY_OPERATOR and n.op == "&" and n.exprs():
                        v = strip(n.exprs()[0])
                        if v.kind == CK.DECL_REF_EXPR:
                            taken.add(v.ref)
        self.locals -= taken
        # loops by (function key, offset): one loop in every configuration that compiles it
        self.memo: dict[str, frozenset[Loop] | None] = {}
        self.loop_func: dict[Loop, str] = {}  # loop -> its function's key
        self.loop_outer: dict[Loop, frozenset[Loop]] = {}  # loop -> loops around it
        self.fixed: set[Loop] = set()  # loops with a trip count fixed in the text
        self.npaths: dict[str, int] = {}

    def stmt(self, f: Function, n: Node) -> frozenset[Loop] | None:
        """None if ``n`` (in ``f``) may run on some ranks and not on others when ``f``
        runs; else the loops around it, up to ``main`` (their node ids)."""
        node = n
        chain: list[Node] = []  # the loops around n in f, innermost first
        while node.parent is not None and node is not f.body:
            if node.parent.kind in _CONDS:
                return None
            if _conditional_operand(node.parent, node):
                return None
            if node.parent.kind in LOOPS:
                chain.append(node.parent)
            node = node.parent
        last = f.body.children[-1] if f.body.children else None
        for x in f.body.walk():
            if x.kind in _JUMPS or (x.kind == CK.RETURN_STMT and x is not last):
                return None
        outer = self.func(f.key)
        if outer is None:
            return None
        keys = [(f.key, lp.start) for lp in chain]
        for i, lp in enumerate(chain):
            self.loop_func[keys[i]] = f.key
            self.loop_outer[keys[i]] = outer | set(keys[i + 1 :])
            if _fixed_trips(lp, self.locals):
                self.fixed.add(keys[i])
        return outer | set(keys)

    def func(self, key: str) -> frozenset[Loop] | None:
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = None  # recursion: not proven
        f = self.funcs.get(key)
        out: frozenset[Loop] | None = None
        if f is not None and f.name == "main":
            out = frozenset()
        elif (
            f is not None
            and key not in self.addr
            and self.calls.get(key)
            and (f.static or f.name not in self.outside)
        ):
            out = frozenset()
            for g, c in self.calls[key]:
                at = self.stmt(g, c)
                if at is None:
                    out = None
                    break
                out |= at
        self.memo[key] = out
        return out

    def paths(self, key: str) -> int:
        """How many call paths lead from ``main`` to the function (2 for "more than
        one", also through recursion or a pointer)."""
        if key in self.npaths:
            return self.npaths[key]
        self.npaths[key] = 2
        f = self.funcs.get(key)
        n = 2
        if f is not None and f.name == "main":
            n = 1
        elif (
            f is not None
            and key not in self.addr
            and key in self.calls
            and (f.static or f.name not in self.outside)
        ):
            n = min(2, sum(self.paths(g.key) for g, _c in self.calls[key]))
        self.npaths[key] = n
        return n


def uniform(sites: Sequence[Site | _At], reach: Reach, strict: bool = False) -> bool:
    """Whether every rank issues these calls from the same sites in the same order
    (``strict``: only when there is one).

    Proven when every call runs on every rank whenever the program reaches it (no
    condition or jump on its way from ``main``) and at most one loop holds any
    of them, entered once: each rank's sequence of these calls is then the calls
    before the loop, the loop body's calls repeated, the calls after it, and as
    all ranks make as many calls in all, they repeat the body as often."""
    # (a call site compiled in several configurations of its file's #if groups is one)
    sites = list({(s.func.file, s.func.key, s.call.start): s for s in sites}.values())
    if len(sites) <= 1:
        return True
    if strict:
        return False
    loops: set[Loop] = set()
    for s in sites:
        at = reach.stmt(s.func, s.stmt)
        if at is None:
            return False
        loops |= at
    loops -= reach.fixed
    if not loops:
        return True
    if len(loops) > 1:
        return False
    lp = next(iter(loops))
    return not reach.loop_outer[lp] and reach.paths(reach.loop_func[lp]) == 1


def _conditional_operand(parent: Node, n: Node) -> bool:
    """Whether ``n`` is evaluated only on some condition in ``parent``: the second or
    third operand of ``c ? a : b``, the second of ``&&`` and ``||``
    (``r = rank == 0 ? root_side(p) : other_side(p);`` calls each wrapper on some
    ranks only)."""
    if parent.kind == CK.CONDITIONAL_OPERATOR or (
        parent.kind == CK.BINARY_OPERATOR and parent.op in ("&&", "||")
    ):
        ops = parent.exprs()
        return not ops or n is not ops[0]
    # GNU "c ?: b" (libclang exposes it as an unexposed expression): any operand but
    # the first may be skipped
    if parent.kind == CK.UNEXPOSED_EXPR and parent.spelling == "" and len(parent.exprs()) >= 2:
        return n is not parent.exprs()[0]
    return False


def _uniform_group(
    members: Sequence[tuple[FileTransform, Site]],
    fixed: Sequence[Fixed],
    reach: Reach,
    strict: bool,
) -> bool:
    """Whether a group's calls, with the blocking calls of the program's headers
    that are of the same collective (``fixed``), are issued alike on every rank (see
    :func:`uniform`); never when one of ``fixed`` is only known from a text."""
    if any(fx.func is None or fx.call is None for fx in fixed):
        return False
    ats: list[Site | _At] = [s for _ft, s in members]
    ats += [_At(fx.func, fx.call, fx.call) for fx in fixed if fx.func and fx.call]
    return uniform(ats, reach, strict)


def _fixed_trips(loop: Node, locals_: set[str]) -> bool:
    """``for (i = C0; i < C1; i++)`` (or ``<=``, ``!=``, ``+= C``) with constants,
    ``i`` a local variable whose address is never taken, not written in the body:
    as many iterations on every rank."""
    if loop.kind != CK.FOR_STMT or len(loop.children) != 4:
        return False
    init, cond, inc, body = loop.children
    var = ""
    if init.kind == CK.BINARY_OPERATOR and init.op == "=" and len(init.exprs()) == 2:
        lhs, rhs = (strip(x) for x in init.exprs())
        if lhs.kind == CK.DECL_REF_EXPR and _const(rhs):
            var = lhs.ref
    elif init.kind == CK.DECL_STMT and len(init.children) == 1:
        d = init.children[0]
        if d.kind == CK.VAR_DECL and len(d.exprs()) == 1 and _const(d.exprs()[0]):
            var = d.key
    if var not in locals_ or cond.kind != CK.BINARY_OPERATOR or cond.op not in ("<", "<=", "!="):
        return False
    a, b = (strip(x) for x in cond.exprs())
    if not (a.kind == CK.DECL_REF_EXPR and a.ref == var and _const(b)):
        return False
    step = strip(inc)
    ok = (
        step.kind == CK.UNARY_OPERATOR
        and step.op in ("++", "post++")
        and _is_var(step.exprs()[0], var)
    ) or (
        step.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR
        and step.op == "+="
        and _is_var(step.exprs()[0], var)
        and _const(step.exprs()[1])
    )
    if not ok:
        return False
    for x in body.walk():
        if x.kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR) and (
            x.op == "=" or x.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR
        ):
            if _is_var(x.exprs()[0], var):
                return False
        if x.kind == CK.UNARY_OPERATOR and x.exprs() and _is_var(x.exprs()[0], var):
            if x.op in ("++", "--", "post++", "post--", "&"):
                return False
    return True


def _const(n: Node) -> bool:
    """An integer literal, an enumeration constant or a macro that expands to one."""
    n = strip(n)
    if n.kind == CK.INTEGER_LITERAL:
        return True
    return bool(n.kind == CK.DECL_REF_EXPR and n.ref_kind == CK.ENUM_CONSTANT_DECL)


def _is_var(n: Node, key: str) -> bool:
    n = strip(n)
    return bool(n.kind == CK.DECL_REF_EXPR and n.ref == key)


def keep_matching(
    fts: Sequence[FileTransform],
    fixed: Sequence[Fixed] = (),
    strict: bool = False,
    outside: Collection[str] = (),
) -> list[str]:
    """Converts or keeps blocking each group as a whole (after ``analyse``, before
    ``emit``); returns notes on what it changed."""
    notes: list[str] = []
    reach = Reach(fts, outside)
    fixed_by: dict[str, list[Fixed]] = {}
    for fx in fixed:
        fixed_by.setdefault(fx.name, []).append(fx)
    for name, members in _members(fts).items():
        gain = [(ft, s) for ft, s in members if s.action != "blocking"]
        if not gain or _uniform_group(members, fixed_by.get(name, []), reach, strict):
            continue
        hard = [(ft, s) for ft, s in members if s.action == "blocking" and not s.soft]
        if hard or name in fixed_by:
            if hard:
                hft, hs = hard[0]
                why = f"{_where(hft, hs)}, left blocking: {hs.reason}"
            else:
                why = f"{fixed_by[name][0].where}, {fixed_by[name][0].why}"
            for _ft, s in gain:
                s.action = "blocking"
                s.persistent = ""
                s.loop = None
                s.batch = 0
                s.reason = (
                    f"kept blocking: a {name} that can match it on another rank stays "
                    f"blocking ({why}); MPI never matches a blocking collective with a "
                    "nonblocking one"
                )
            notes.append(f"{name}: every call kept blocking ({why})")
            continue
        first = gain[0]
        for ft, s in members:
            if s.action == "blocking":
                ft.start_then_wait(
                    s,
                    f"converted with the {name} at {_where(*first)} that it can match "
                    "on another rank",
                )
        for _ft, s in members:
            if s.action == "persistent":
                s.action = "nonblocking"
                s.persistent = ""
                s.loop = None
                s.notes.append(
                    f"not persistent: the {name} calls that can match it on other ranks "
                    "are not issued from the same sites on every rank (some are under a "
                    "condition, after a jump or in another function), so their *_init "
                    "calls could come in another order (a persistent collective matches "
                    "only a persistent one, in the order of the inits)"
                )
    # the program's own MPI_Ixxx calls: persistent all or none
    total: dict[str, set[tuple[str, int]]] = {}
    for ft in fts:
        for k, offs in ft.nb_calls.items():
            total.setdefault(k, set()).update((ft.unit.path, o) for o in offs)
    for nb, calls in total.items():
        count = len(calls)
        ex = [s for ft in fts for s in ft.sites if s.existing_req and s.call.callee == nb]
        distinct = {(ft.unit.path, s.call.start) for ft in fts for s in ft.sites if s in ex}
        if ex and (len(distinct) != count or not uniform(ex, reach, strict)):
            for s in ex:
                s.action = "blocking"
                s.reason = (
                    f"left nonblocking: not all {count} {nb} calls can be made persistent in "
                    "the same order on every rank"
                )
    return notes


_CALL = re.compile(r"\b(MPIX?_\w+?)\s*\(")


def _calls(text: str) -> dict[str, int]:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    out: dict[str, int] = {}
    for m in _CALL.finditer(text):
        out[m.group(1)] = out.get(m.group(1), 0) + 1
    return out


def matching_problems(
    fts: Sequence[FileTransform],
    outputs: Sequence[bytes],
    fixed: Sequence[Fixed] = (),
    strict: bool = False,
    outside: Collection[str] = (),
) -> list[str]:
    """What in the decisions or the text to be written would let a blocking
    collective meet a nonblocking or persistent one on another rank ([] if nothing)."""
    problems: list[str] = []
    reach = Reach(fts, outside)
    fixed_names = {fx.name for fx in fixed}
    fixed_by: dict[str, list[Fixed]] = {}
    for fx in fixed:
        fixed_by.setdefault(fx.name, []).append(fx)
    groups = _members(fts)
    # the groups that must be of one kind
    checked: set[str] = {
        n for n in fixed_names if not _uniform_group(groups.get(n, []), fixed_by[n], reach, strict)
    }
    for name, members in groups.items():
        if _uniform_group(members, fixed_by.get(name, []), reach, strict):
            continue
        checked.add(name)
        kinds: dict[str, str] = {}
        for ft, s in members:
            kind = "blocking" if s.action == "blocking" else s.action
            kinds.setdefault(kind, _where(ft, s))
        if name in fixed_names and set(kinds) - {"blocking"}:
            kinds.setdefault("blocking", next(f.where for f in fixed if f.name == name))
        if len(kinds) > 1:
            what = ", ".join(f"{k} at {w}" for k, w in sorted(kinds.items()))
            problems.append(f"{name} would be {what}")
    # the text: no new MPI_Ixxx or *_init while a blocking call of the same operation stays
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    own: dict[str, int] = {}  # the program's MPI_Ixxx made persistent: their *_init calls
    # Calls in the text that are no call site: in a preprocessor branch this
    # configuration does not compile (the apps' blocking files keep the
    # nbcx variant under #ifndef APP_TRANSFORM_PARSE). The analysis never
    # saw them, and they are not compiled: they stay as they are.
    sites: dict[str, int] = {}
    counted: set[tuple[str, int]] = set()  # one call in several configurations: once
    for ft in fts:
        for s in ft.sites:
            if (ft.unit.path, s.call.start) in counted:
                continue
            counted.add((ft.unit.path, s.call.start))
            sites[s.name] = sites.get(s.name, 0) + 1
            if s.existing_req and s.action == "persistent":
                own[s.name] = own.get(s.name, 0) + 1
    for ft, out in zip(fts, outputs, strict=True):
        if ft.cfg.index:
            continue  # another configuration of a file: its text is counted once
        for k, v in _calls(ft.data.decode("utf-8", "replace")).items():
            before[k] = before.get(k, 0) + v
        for k, v in _calls(out.decode("utf-8", "replace")).items():
            after[k] = after.get(k, 0) + v
    for name in sorted(checked):
        nb = mpi.nonblocking_name(name)
        inits = mpi.persistent_names(name)
        new_nb = after.get(nb, 0) > before.get(nb, 0)
        new_init = any(after.get(i, 0) > before.get(i, 0) + own.get(name, 0) for i in inits)
        unseen = max(before.get(name, 0) - sites.get(name, 0), 0)
        still = after.get(name, 0) > unseen or (name in fixed_names and (new_nb or new_init))
        if still and (new_nb or new_init):
            made = nb if new_nb else " / ".join(inits)
            problems.append(
                f"the output calls {made} where it called {name}, but {name} is still "
                "called blocking"
            )
    return problems
