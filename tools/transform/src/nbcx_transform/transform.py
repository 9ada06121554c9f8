"""The rewriting: blocking collectives to nonblocking and persistent ones.

For every blocking collective that is a statement of its own, the tool

1. computes, for each role (the root and the other ranks where the two
   differ, Petal Fig. 7-8), where its ``MPI_Wait`` must go: it walks the
   statements after the call and stops before the first one that writes a
   send buffer, reads or writes a receive buffer or an alias of one (points-to
   analysis, summaries of the functions defined in the file), calls
   ``MPI_Barrier``, ``MPI_Finalize``, ``exit`` or a function
   whose effects are unknown, leaves the scope (``return``, ``break``,
   ``continue``, ``goto``), is a jump target (label, ``case``), or is separated
   by a preprocessor directive.  It goes into ``if`` branches and plain blocks
   (a wait in each branch that needs one) and out of ``if`` branches to the
   enclosing block; a wait that some path reaches with nothing pending is
   guarded by a flag (Section 3.4).  A wait that only the end of a loop body
   stops is carried into the next iteration, before the first statement that
   touches the buffers (at the latest before the call's own statement), and
   after the loop (issue 34; :meth:`FileTransform.carry` says when); any other
   loop body's end completes the operation.
2. numbers the requests per function, sequentially, with the maximum over the
   two branches of an ``if`` (Fig. 4), so that two operations that may be in
   flight together never share a request;
3. merges waits that land at the same place on consecutive requests into one
   ``MPI_Waitall`` (Fig. 9-10);
4. makes the operation persistent when it is in a loop and its arguments
   (buffer addresses, counts, types, arrays' contents, root, communicator) are
   not written in the loop: ``*_init`` before the loop (when the loop provably
   runs the call in its first iteration, else at the first call), ``MPI_Start``
   in place, ``MPI_Request_free`` after the loop (Fig. 11, 16); existing
   ``MPI_I*`` + ``MPI_Wait`` pairs in loops become persistent the same way.

Only the call's name and the request argument are edited in place; all other
text (comments, formatting) is kept, and nothing that comes from a macro
expansion is touched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from clang.cindex import CursorKind as CK  # noqa: N817
from clang.cindex import TypeKind

from nbcx_transform import mpi
from nbcx_transform.analysis import (
    ANY,
    EXT,
    JUMPS,
    LOOPS,
    Analysis,
    Effects,
    Summary,
    container_call,
    is_lvalue,
    method_object,
    strip,
)
from nbcx_transform.analysis import (
    CONTAINER_ELEMENT as CE,
)
from nbcx_transform.clangast import OPENMP, Function, Node, Unit

CASTS_ = (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR, CK.CSTYLE_CAST_EXPR)
ROLES = ("root", "nonroot")  # the two roles of a rooted collective
DEF = "def"  # the operation is pending on every path that gets here
MAYBE = "maybe"  # pending on some paths only: the wait needs the flag
DONE = "done"  # no longer pending on paths that fall through
NOFALL = "nofall"  # no path falls through

PERSISTENT_PRELUDE = """\
/* nbcx-transform: NBCX_PERSISTENT selects the persistent collectives: 4 for the
 * MPI-4 names, 1 for Open MPI 4's MPIX_*_init (mpi-ext.h), 0 for the nonblocking
 * forms where there are none or they are unreliable (MPICH before 4.3 returns
 * stale data from some, e.g. MPI_Allgather_init, MPI_Gather_init). */
#ifndef NBCX_PERSISTENT
#if MPI_VERSION >= 4 && !(defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40300000)
#define NBCX_PERSISTENT 4
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBCX_PERSISTENT 1
#else
#define NBCX_PERSISTENT 0
#endif
#else
#define NBCX_PERSISTENT 0
#endif
#endif
"""

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(\w+)", re.M)


@dataclass
class Options:
    min_overlap: int = 1  # leave blocking when fewer statements overlap (0: convert all safe)
    persistent: bool = True
    nonblocking: bool = True
    # carry a wait that the end of a loop body stops into the next iteration (issue 34)
    carry: bool = True
    # summaries of the functions of the program's other files (whole-program analysis)
    external: dict[str, Summary] = field(default_factory=dict)
    # one-collective wrapper functions of the files being transformed, by name
    wrappers: dict[str, Wrapper] = field(default_factory=dict)


@dataclass(frozen=True)
class Wrapper:
    """A function whose body is one blocking collective on buffers from its
    parameters (``void addDouble(double *s, double *r, int n) { MPI_Allreduce(s,
    r, n, ...); }``).  Its nonblocking twin ``<name>_nb`` (same parameters) starts
    the collective on a request of its own, ``<name>_wait()`` completes it."""

    name: str
    key: str
    path: str  # the file that defines it
    coll: str  # the collective
    # per argument of the collective: the wrapper's parameter a buffer argument
    # derives from (None for arguments that are not buffers)
    params: tuple[int | None, ...]
    nparams: int
    static: bool
    reason: str = ""  # why no twin can be made ("" if one can)

    @property
    def start(self) -> str:
        return f"{self.name}_nb"

    @property
    def wait(self) -> str:
        return f"{self.name}_wait"

    @property
    def req(self) -> str:
        return f"nbcx_{self.name}_req"


@dataclass(eq=False)
class StmtUnit:
    """One or more sibling statements that can only be moved across together."""

    stmts: list[Node]
    start: int
    end: int


@dataclass(eq=False)
class Block:
    bid: int
    kind: str  # func, loop, then, else, compound, other
    node: Node | None  # COMPOUND_STMT; None for a lone statement (no braces)
    stmts: list[Node]
    parent: Block | None
    owner: Node | None  # the if/loop/compound statement this block belongs to
    units: list[StmtUnit] = field(default_factory=list)


@dataclass
class WaitPoint:
    block: Block
    index: int  # boundary: before units[index] (== len(units): block end)
    flagged: bool
    implied: bool = False  # inside "if (rank == root)" for its role: no rank test needed
    why: str = ""  # what stops the operation from staying in flight any longer
    # the boundary has #if/#else/#endif lines: the wait goes after them (at the start of
    # the next statement's line, or of the closing brace's), not after the statement
    # before them (issue 34: in the configurations that compile other branches, a wait
    # after the previous statement would come earlier than theirs)
    after: bool = False


@dataclass
class ConfigInfo:
    """Which configuration of the file's #if groups a FileTransform analyses
    (configs.py)."""

    # "single": the file has no group to enumerate; "multi": every configuration is
    # analysed (this is one of them); "conservative": only the one given is
    mode: str = "single"
    index: int = 0  # 0: the configuration given
    name: str = ""  # what sets this configuration apart ("" for the one given)
    # the #if/#else/#endif lines (line starts) that a wait may be moved across: in
    # "multi" mode, those of the groups whose configurations are all analysed
    passable: frozenset[int] = frozenset()
    # conditional directives inside a statement (or a function's head) in some
    # configuration: the calls of a function that holds one stay blocking
    unaligned: frozenset[int] = frozenset()


@dataclass
class Plan:
    points: list[WaitPoint]
    overlap: int
    stop: str  # why the wait is where it is
    visited: list[Node]
    implied: set[int] = field(default_factory=set)  # blocks only this role runs


@dataclass
class Emit:
    """One wait to emit at a boundary."""

    slot: int
    flagged: bool
    guard: str  # "" or a C condition (rank test)
    clear: bool = False  # reset the flag after the wait (other waits test it)
    call: str = ""  # a wrapper's wait function (no request, no flag: it may run twice)


@dataclass
class Site:
    func: Function
    call: Node
    stmt: Node  # the statement: the call or a (void) cast of it
    name: str
    line: int
    col: int
    action: str = "blocking"  # nonblocking, persistent, blocking
    reason: str = ""
    slot: int = -1
    plans: dict[str, Plan] = field(default_factory=dict)
    guards: dict[str, str] = field(default_factory=dict)
    persistent: str = ""  # "", "hoisted", "lazy"
    loop: Node | None = None
    notes: list[str] = field(default_factory=list)
    existing_req: str = ""  # nonblocking input made persistent: the request lvalue text
    rank: str = ""  # rooted: the variable holding this rank in the communicator
    waits: list[dict[str, object]] = field(default_factory=list)
    wrapper: Wrapper | None = None  # a call of a one-collective wrapper function
    twin: str = ""  # the collective of a wrapper: the twin generated for its callers
    # a loop whose body is only this call, made to start all its iterations' operations
    # (requests slot .. slot + batch - 1) and wait for them together after the loop
    batch: int = 0
    batch_index: str = ""  # the request index of an iteration: C text of (var - first)
    # left blocking for a reason that a start-then-wait (MPI_Ixxx; MPI_Wait at once)
    # overcomes: converted that way when a call that can match it is converted
    soft: bool = False
    group: str = ""  # the matching group (see matching.py): the collective's name
    # issue 34: the statements that could overlap the call if the placement saw
    # through everything (:meth:`FileTransform.bound`; -1: not computed), and what
    # it passed that the placement cannot
    bound: int = -1
    bound_ignores: list[str] = field(default_factory=list)


# C++ statements around a collective that the rewriting does not handle
_CXX_AROUND = {
    CK.LAMBDA_EXPR: "it is in a lambda (its body runs where the lambda is called)",
    CK.CXX_FOR_RANGE_STMT: "it is in a range-based for loop",
    CK.CXX_TRY_STMT: "it is in a try block (an exception would skip its wait)",
    CK.CXX_CATCH_STMT: "it is in a catch handler",
}
# expressions a C++ buffer argument may be made of: anything else may create a
# temporary (destroyed at the end of the call's statement, before any wait)
_CXX_BUFFER_KINDS = {
    CK.DECL_REF_EXPR,
    CK.MEMBER_REF_EXPR,
    CK.ARRAY_SUBSCRIPT_EXPR,
    CK.UNARY_OPERATOR,
    CK.BINARY_OPERATOR,
    CK.PAREN_EXPR,
    CK.UNEXPOSED_EXPR,
    CK.CSTYLE_CAST_EXPR,
    CK.CXX_STATIC_CAST_EXPR,
    CK.CXX_REINTERPRET_CAST_EXPR,
    CK.CXX_CONST_CAST_EXPR,
    CK.INTEGER_LITERAL,
    CK.CXX_NULL_PTR_LITERAL_EXPR,
    CK.CXX_UNARY_EXPR,
    CK.CXX_THIS_EXPR,
}


def cxx_problem(call: Node, amp_overloaded: bool = False) -> str:
    """Why a collective call of a C++ file cannot be rewritten ("" if it can);
    ``amp_overloaded``: the program declares a unary ``operator&``, so that a template's
    ``&x`` on a value of a template parameter's type may not be x's address."""
    p = call.parent
    while p is not None:
        if p.kind in _CXX_AROUND:
            return _CXX_AROUND[p.kind]
        p = p.parent
    roles = mpi.COLLECTIVES.get(call.callee, ())
    for a, role in zip(call.exprs()[1:], roles, strict=False):
        if role.split("@")[0] not in ("S", "R", "B", "A"):
            continue
        for e in a.walk():
            if not e.kind.is_expression():
                continue
            if amp_overloaded and e.kind == CK.UNARY_OPERATOR and e.op == "&":
                kids = e.exprs()
                if kids and strip(kids[0]).tkind in (TypeKind.DEPENDENT, TypeKind.UNEXPOSED):
                    return (
                        f"a buffer argument at line {e.line} takes the address of a value of "
                        "a template parameter's type, and the program declares a unary "
                        "operator& (it may not be the value's address)"
                    )
            if e.kind == CK.CALL_EXPR and container_call(e) and e.method in ("data", *CE):
                obj = method_object(e)
                if obj is not None and (is_lvalue(strip(obj)) or strip(obj).is_pointer):
                    continue
            if e.kind == CK.CALL_EXPR or e.kind not in _CXX_BUFFER_KINDS:
                return (
                    f"a buffer argument ({_short(e)} at line {e.line}) is a C++ expression "
                    "the analysis cannot follow (it may be a temporary)"
                )
    return ""


def _short(e: Node) -> str:
    return e.spelling or e.kind.name.lower()


def _line_of(data: bytes, off: int) -> int:
    return data.count(b"\n", 0, off) + 1


@dataclass
class Chunk:
    """Text inserted at one place: the items (priority, lines) that one or more
    configurations' analyses put there (merged by :func:`render_family`)."""

    key: tuple[object, ...]
    order: int
    off: int
    items: list[tuple[int, list[str]]]
    indent: str = ""
    # "line": lines of their own at off; "same": code follows on the line of off;
    # "next": at the start of the line of the statement after directive lines;
    # "virt": a lone statement given braces (virt: where; parts: before and after it)
    mode: str = "line"
    virt: tuple[int, int, int, str, str] | None = None
    parts: dict[int, list[tuple[int, list[str]]]] = field(default_factory=dict)


def apply_edits(data: bytes, edits: list[tuple[int, int, int, str]]) -> bytes:
    """``data`` with the edits (start, end, order, text) made, from the end."""
    out = bytearray(data)
    for start, end, _order, text in sorted(edits, key=lambda e: (e[0], e[2]), reverse=True):
        out[start:end] = text.encode()
    return bytes(out)


class FamilyConflictError(Exception):
    """Two configurations of a file would write different text in one place."""


class FileTransform:
    """Analysis and rewriting of one file."""

    def __init__(
        self, unit: Unit, opts: Options | None = None, cfg: ConfigInfo | None = None
    ) -> None:
        self.unit = unit
        self.data = unit.data
        self.opts = opts or Options()
        self.cfg = cfg or ConfigInfo()
        # multi mode (cli.py): request slots numbered over every configuration, by
        # the offset of each converted call, and the requests of each function body
        self.slot_table: dict[int, int] | None = None
        self.slot_count: dict[int, int] = {}
        self.others: list[FileTransform] = []  # multi mode: the other configurations
        self.an = Analysis(unit, self.opts.external)
        self.blocks: list[Block] = []
        self.where: dict[int, tuple[Block, int]] = {}  # id(stmt) -> (block, unit index)
        self.block_of_node: dict[int, Block] = {}
        self.block_func: dict[int, str] = {}
        self.waitall_funcs: set[str] = set()
        self.directives = [
            m.start() for m in _DIRECTIVE.finditer(self.data) if m.group(1) != b"pragma"
        ]
        self.cond_regions = _cond_regions(self.data)
        self.sites: list[Site] = []
        self.file_notes: list[str] = []
        self.inserts: dict[tuple[int, int, bool], list[tuple[int, list[str]]]] = {}
        self.replaces: list[tuple[int, int, str]] = []
        self.indent_unit = self._guess_indent()
        self.names = self._fresh_names()
        self.need_ext_include = False
        self.extra_edits: list[tuple[int, int, int, str]] = []
        self.used_wrappers: dict[str, Wrapper] = {}
        self.twins_emitted: set[str] = set()  # keys of the wrappers given twins
        self.site_by_stmt: dict[int, Site] = {}
        # the program's own MPI_Ixxx calls (their offsets), by name
        self.nb_calls: dict[str, set[int]] = {}
        # computing a call's bound (:meth:`bound`): what the placement cannot see
        # through or cannot cross is passed, and named in ``bound_ignored``
        self.relaxed = False
        self.bound_ignored: list[str] = []

    # ------------------------------------------------------------- utilities
    def text(self, n: Node) -> str:
        return self.data[n.start : n.end].decode("utf-8", "replace")

    def _guess_indent(self) -> str:
        """The file's indentation step: the smallest indentation of a function's statements."""
        found: list[str] = []
        for f in self.unit.functions.values():
            if not f.in_main:
                continue
            for s in f.body.children:
                if s.start >= 0 and not self.data[self._line_start(s.start) : s.start].strip():
                    ind = self._line_indent(s.start)
                    if ind:
                        found.append(ind)
        if not found:
            return "    "
        ind = min(found, key=len)
        return "\t" if ind.startswith("\t") else " " * len(ind)

    def _fresh_names(self) -> dict[str, str]:
        out = {}
        for base in ("nbcx_req", "nbcx_flag", "nbcx_stat"):
            name = base
            i = 1
            while re.search(rb"\b" + name.encode() + rb"\b", self.data):
                name = f"{base}{i}"
                i += 1
            out[base] = name
        return out

    def _line_start(self, off: int) -> int:
        return self.data.rfind(b"\n", 0, off) + 1

    def _line_indent(self, off: int) -> str:
        ls = self._line_start(off)
        i = ls
        while i < len(self.data) and self.data[i : i + 1] in (b" ", b"\t"):
            i += 1
        return self.data[ls:i].decode()

    def in_macro(self, off: int) -> bool:
        return any(s <= off < e for s, e in self.unit.macro_ranges)

    def in_openmp(self, start: int, end: int) -> bool:
        """Whether [start, end) is in an OpenMP construct (its pragma and statement)."""
        if self.relaxed:
            return False
        return any(a <= start and end <= b for a, b, w in self.unit.opaque if w == OPENMP)

    def full_end(self, n: Node) -> int:
        """End of a statement including its semicolon."""
        k = n.kind
        if k in (
            CK.IF_STMT,
            CK.FOR_STMT,
            CK.WHILE_STMT,
            CK.SWITCH_STMT,
            CK.LABEL_STMT,
            CK.CASE_STMT,
            CK.DEFAULT_STMT,
        ):
            if n.children:
                return max(n.end, self.full_end(n.children[-1]))
            return n.end
        if k in (CK.COMPOUND_STMT, CK.DECL_STMT, CK.NULL_STMT):
            return n.end
        i = n.end
        d = self.data
        while i < len(d):
            c = d[i : i + 1]
            if c in (b" ", b"\t", b"\n", b"\r"):
                i += 1
            elif d.startswith(b"/*", i):
                j = d.find(b"*/", i + 2)
                if j < 0:
                    break
                i = j + 2
            elif d.startswith(b"//", i):
                j = d.find(b"\n", i)
                i = len(d) if j < 0 else j
            else:
                break
        if d[i : i + 1] == b";":
            return i + 1
        return n.end

    def conds_at(self, off: int) -> list[tuple[int, str]]:
        """(branch id, condition) of the conditional branches around ``off``, outermost first."""
        return [(i, c) for s, e, i, c in sorted(self.cond_regions) if s <= off < e]

    def decl_guard(self, f: Function) -> str:
        """The condition under which the function's converted calls are compiled ("" if always)."""
        base = {i for i, _ in self.conds_at(f.body.start)}
        alts: list[str] = []
        for s in self.sites:
            if s.func is not f or s.action == "blocking" or s.existing_req or s.wrapper:
                continue
            extra = [c for i, c in self.conds_at(s.call.start) if i not in base]
            if not extra:
                return ""
            alt = " && ".join(extra)
            if alt not in alts:
                alts.append(alt)
        if not alts:
            return ""
        if len(alts) == 1:
            return alts[0]
        return " || ".join(f"({a})" for a in alts)

    def has_directive(self, start: int, end: int) -> bool:
        if self.relaxed:
            return False
        return any(start <= d < end for d in self.directives)

    def passable(self, start: int, end: int) -> bool:
        """Whether the directives between ``start`` and ``end`` are only #if/#else/
        #endif lines of groups whose every configuration is analysed (issue 34):
        the code the configuration analysed leaves out is not run in it, and the
        configurations that compile it place their own waits."""
        if self.cfg.mode != "multi":
            return False
        return all(d in self.cfg.passable for d in self.directives if start <= d < end)

    def _starts_line(self, off: int) -> bool:
        return not self.data[self._line_start(off) : off].strip()

    def within(self, off: int, site: Site) -> bool:
        """Whether ``off`` is in every #if branch that holds the call of ``site``: a
        wait, init or free there is compiled exactly when the call is (issue 34: in
        a configuration that leaves the call out, MPI may not even be included)."""
        mine = {i for i, _ in self.conds_at(site.call.start)}
        return mine <= {i for i, _ in self.conds_at(off)}

    def gap_ok(self, start: int, end: int, site: Site) -> bool:
        """Whether a wait may move across the directives between ``start`` and
        ``end`` (:meth:`passable`, without leaving the call's #if branch)."""
        return self.passable(start, end) and self.within(end, site)

    def _after(self, blk: Block, i: int, site: Site) -> bool:
        """Whether a wait before unit ``i`` goes after the directive lines before it."""
        a, b = self._prev_end(blk, i), self._next_start(blk, i)
        if blk.node is None or not self.has_directive(a, b):
            return False
        return self.gap_ok(a, b, site) and self._starts_line(b)

    def _prev_end(self, blk: Block, i: int) -> int:
        if i > 0:
            return blk.units[i - 1].end
        return blk.node.start + 1 if blk.node is not None else blk.units[0].start

    def _next_start(self, blk: Block, i: int) -> int:
        if i < len(blk.units):
            return blk.units[i].start
        if blk.node is not None:
            return blk.node.end - 1
        return self.full_end(blk.stmts[-1])

    # ------------------------------------------------------------ structure
    def _build_blocks(self, f: Function) -> Block:
        first = len(self.blocks)
        b = self._make_block(f.body, "func", None, None)
        for blk in self.blocks[first:]:
            self.block_func[blk.bid] = f.key
        return b

    def _make_block(self, n: Node, kind: str, parent: Block | None, owner: Node | None) -> Block:
        if n.kind == CK.COMPOUND_STMT:
            b = Block(len(self.blocks), kind, n, list(n.children), parent, owner)
        else:
            b = Block(len(self.blocks), kind, None, [n], parent, owner)
        self.blocks.append(b)
        self.block_of_node[id(n)] = b
        b.units = self._units(b)
        for i, u in enumerate(b.units):
            for s in u.stmts:
                self.where[id(s)] = (b, i)
                self._sub_blocks(s, b)
        return b

    def _sub_blocks(self, s: Node, b: Block) -> None:
        k = s.kind
        ch = s.children
        if k == CK.IF_STMT and len(ch) >= 2:
            self._make_block(ch[1], "then", b, s)
            if len(ch) >= 3:
                self._make_block(ch[2], "else", b, s)
        elif k in (CK.FOR_STMT, CK.WHILE_STMT) and ch:
            self._make_block(ch[-1], "loop", b, s)
        elif k == CK.DO_STMT and ch:
            self._make_block(ch[0], "loop", b, s)
        elif k == CK.COMPOUND_STMT:
            self._make_block(s, "compound", b, s)
        elif k in (CK.SWITCH_STMT, CK.LABEL_STMT, CK.CASE_STMT, CK.DEFAULT_STMT) and ch:
            self._make_block(ch[-1], "other", b, s)

    def _units(self, b: Block) -> list[StmtUnit]:
        spans: list[list[int]] = []
        for s in b.stmts:
            lo, hi = s.start, self.full_end(s)
            changed = True
            while changed:
                changed = False
                for ms, me in self.unit.macro_ranges:
                    if ms < hi and me > lo and not (lo <= ms and me <= hi):
                        nlo, nhi = min(lo, ms), max(hi, me)
                        if (nlo, nhi) != (lo, hi):
                            lo, hi = nlo, nhi
                            changed = True
            spans.append([lo, hi])
        units: list[StmtUnit] = []
        for s, (lo, hi) in zip(b.stmts, spans, strict=True):
            if units and lo < units[-1].end:
                units[-1].stmts.append(s)
                units[-1].end = max(units[-1].end, hi)
            else:
                units.append(StmtUnit([s], lo, hi))
        return units

    # ------------------------------------------------------------- conflicts
    def unit_effects(self, u: StmtUnit, f: Function) -> Effects:
        eff = Effects()
        for s in u.stmts:
            eff.merge(self.an.effects(s, f))
        return eff

    def control_problem(self, u: StmtUnit, allow_jumps: bool = False) -> str:
        """Why control flow forbids moving a wait across the unit ("" if none)."""
        if self.relaxed:
            return ""
        if self.has_directive(u.start, u.end) and not self.passable(u.start, u.end):
            line = _line_of(self.data, u.start)
            return f"preprocessor directive inside the statement at line {line}"
        for s in u.stmts:
            for n in s.walk():
                if n.kind == CK.LABEL_STMT:
                    return f"label at line {n.line}"
            if self._outer_case(s):
                return f"case label at line {s.line}"
            if not allow_jumps:
                j = self.leaves(s)
                if j is not None:
                    return f"{_jump_name(j)} at line {j.line} leaves the scope"
        return ""

    def _outer_case(self, s: Node) -> bool:
        def rec(n: Node, in_switch: bool) -> bool:
            if n.kind in (CK.CASE_STMT, CK.DEFAULT_STMT) and not in_switch:
                return True
            inner = in_switch or n.kind == CK.SWITCH_STMT
            return any(rec(c, inner) for c in n.children)

        return rec(s, False)

    def leaves(self, s: Node) -> Node | None:
        """A jump in ``s`` that leaves ``s`` (None if there is none)."""

        def rec(n: Node, loops: int, breaks: int) -> Node | None:
            k = n.kind
            if k in (CK.RETURN_STMT, CK.GOTO_STMT, CK.INDIRECT_GOTO_STMT):
                return n
            if k == CK.BREAK_STMT and breaks == 0:
                return n
            if k == CK.CONTINUE_STMT and loops == 0:
                return n
            nl = loops + (1 if k in LOOPS else 0)
            nb = breaks + (1 if k in LOOPS or k == CK.SWITCH_STMT else 0)
            for c in n.children:
                r = rec(c, nl, nb)
                if r is not None:
                    return r
            return None

        return rec(s, 0, 0)

    def op_buffers(self, site: Site, role: str) -> tuple[set[str], set[str]]:
        """(objects only read, objects received into) by the collective for a role."""
        send: set[str] = set()
        recv: set[str] = set()
        for a, spec in self.coll_args(site):
            r, _, only = spec.partition("@")
            if r not in ("S", "R", "B", "A"):
                continue
            if only == "r" and role == "nonroot":
                continue
            objs = self.an.val(a)
            if r == "B":
                (send if role == "root" else recv).update(objs)
            elif r in ("S", "A"):
                send |= objs
            else:
                recv |= objs
        return send, recv

    def conflict(self, eff: Effects, site: Site, role: str) -> str:
        barrier = site.name == "MPI_Barrier"
        for fl in ("unknown", "fence", "exits") + (("io", "mpi", "clock") if barrier else ()):
            if fl in eff.flags:
                # (MPI_Abort ends every rank: of the fences only MPI_Barrier and
                # MPI_Finalize are an order the bound keeps)
                abort_only = fl == "fence" and not any(
                    k in w for w in eff.why for k in ("MPI_Barrier", "MPI_Finalize")
                )
                if self.relaxed and (fl in ("unknown", "exits") or abort_only):
                    self.bound_ignored.append(_first_why(eff, fl))
                    continue
                return _first_why(eff, fl)
        if site.wrapper is not None and "mpi" in eff.flags:
            # one request per wrapper: its next start (maybe inside this call) must come later
            return _first_why(eff, "mpi") + f" (one {site.wrapper.start}() at a time)"
        send, recv = self.buffers[(id(site), role)]
        if self.an.aliases(eff.writes, send):
            return "writes " + self._names(eff.writes, send) + " (send buffer)"
        if self.an.aliases(eff.writes, recv):
            return "writes " + self._names(eff.writes, recv) + " (receive buffer)"
        if self.an.aliases(eff.reads, recv):
            return "reads " + self._names(eff.reads, recv) + " (receive buffer)"
        return ""

    def _names(self, a: set[str], b: set[str]) -> str:
        common = a & b
        if not common:
            common = {o for o in a | b if o not in (ANY, EXT)} & (a | b)
            common = {o for o in b if o not in (ANY, EXT)} or {EXT}
        return ", ".join(sorted(self.an.obj_name(o) for o in common))

    # ------------------------------------------------------------- placement
    def place(self, site: Site, role: str) -> Plan:
        blk, idx = self.where[id(site.stmt)]
        plan = Plan([], 0, "", [])
        state = DEF
        idx += 1
        while True:
            res = self._scan(blk, idx, state, site, role, plan)
            if res in (DONE, NOFALL):
                return plan
            state = res
            # a buffer declared in this block ends at its closing brace: the operation
            # must complete before it (issue 34)
            dead = self._scoped_buffer(site, role, blk)
            parent, owner = blk.parent, blk.owner
            if (
                not dead
                and blk.kind in ("then", "else")
                and parent is not None
                and owner is not None
            ):
                idx = self.where[id(owner)][1] + 1
                # pending on the paths through the other branches too when each of
                # them starts a collective (of this request: they are numbered alike)
                if state != DEF or not self._covered(owner):
                    state = MAYBE
                blk = parent
                continue
            if not dead and blk.kind == "compound" and parent is not None and owner is not None:
                idx = self.where[id(owner)][1] + 1
                blk = parent
                continue
            why = {"loop": "end of the loop body", "func": "end of the function"}.get(
                blk.kind, "end of the block"
            )
            if dead:
                why = f"end of the scope of {dead}"
            plan.points.append(
                WaitPoint(
                    blk,
                    len(blk.units),
                    state == MAYBE,
                    why=why,
                    after=self._after(blk, len(blk.units), site),
                )
            )
            plan.stop = plan.stop or why
            return plan

    def bound(self, site: Site) -> None:
        """Issue 34: an upper bound of the overlap the code allows ``site``: the
        statements to the first one that touches its buffers (reads a receive buffer,
        writes a send or receive buffer, as the analysis sees them: an array is one
        object) or calls MPI_Barrier or MPI_Finalize, or to the end of a buffer's
        scope or of the function, with the wait carried into the next iteration as
        :meth:`carry` does.  It passes what the placement cannot see through or
        cross: calls whose effects are unknown (not in the files given, through a
        function pointer, OpenMP directives compiled with -fopenmp), exits,
        preprocessor directives, jumps and labels, OpenMP constructs, and the
        conditions of :meth:`carry_problem` that are not about the buffers (C++,
        braces, labels).  Sets ``site.bound`` (at least the overlap achieved) and
        ``site.bound_ignores`` (what it passed that stopped nothing else)."""
        saved_plans, saved_notes = site.plans, list(site.notes)
        achieved = max((p.overlap for p in saved_plans.values()), default=0)
        # a rooted call whose roles' waits the tool did not tell apart
        split = (
            list(saved_plans) == ["any"]
            and all((id(site), r) in self.buffers for r in ROLES)
            and not self._in_rank_branch(site)
        )
        self.relaxed, self.bound_ignored = True, []
        try:
            got = 0
            for roles in [list(saved_plans)] + [list(ROLES)] * split:
                site.plans = {r: self.place(site, r) for r in roles}
                self.carry(site)
                n = max((p.overlap for p in site.plans.values()), default=0)
                if n > max(got, achieved) and roles == list(ROLES):
                    self.bound_ignored.append(
                        "the root's and the other ranks' waits told apart (the tool "
                        "waits for both at one place)"
                    )
                got = max(got, n)
        finally:
            self.relaxed = False
            site.plans, site.notes = saved_plans, saved_notes
        site.bound = max(got, achieved)
        site.bound_ignores = sorted(set(self.bound_ignored))

    def _in_rank_branch(self, site: Site) -> bool:
        """Whether the call of the rooted ``site`` is in a branch of an ``if`` whose
        condition compares something with its root (``if (me == 0)``, whatever
        ``me`` is): then one role reaches it, and :meth:`bound` does not place the
        other."""
        roles = mpi.COLLECTIVES[site.name]
        args = site.call.exprs()[1:]
        if "root" not in roles or roles.index("root") >= len(args):
            return False
        rt = re.escape(_norm(self.text(args[roles.index("root")])))
        pat = re.compile(rf"(==|!=)\s*\(?{rt}\b|\b{rt}\)?\s*(==|!=)")
        n = site.stmt.parent
        while n is not None:
            if n.kind == CK.IF_STMT and n.children:
                if pat.search(_norm(self.text(n.children[0]))):
                    return True
            n = n.parent
        return False

    def _scoped_buffer(self, site: Site, role: str, blk: Block) -> str:
        """The name of a buffer of ``site`` (for ``role``) that is a local declared in
        the braced block ``blk`` ("" if none): a wait may not leave that block."""
        if blk.node is None or blk.kind not in ("then", "else", "compound"):
            return ""
        n = blk.node
        return self._local_buffer(site, role, lambda sc: (sc.start, sc.end) == (n.start, n.end))

    def _local_buffer(self, site: Site, role: str, where: Callable[[Node], bool]) -> str:
        """The name of a buffer of ``site`` (for ``role``) that is a local whose scope
        (block or for statement) ``where`` accepts ("" if none)."""
        send, recv = self.buffers[(id(site), role)]
        for o in sorted(send | recv):
            d = self.an.decls.get(o[2:].partition("#")[0]) if o.startswith("v:") else None
            if d is not None and d.kind == "local" and d.scope is not None and where(d.scope):
                return d.name
        return ""

    def carry(self, site: Site) -> None:
        """Issue 34: a wait stopped only by the end of its loop's body is carried across
        the back edge: into the next iteration, before the first statement of the body
        that touches the buffers (at the latest, before the statement of the body that
        holds the call, whose next start needs the request and may touch the same
        buffers), and after the loop.  The request is MPI_REQUEST_NULL (or an inactive
        persistent one) when the first iteration's wait runs, so that wait returns at
        once; a call in an ``if`` of the body keeps its flag (the waits test it).  Only
        when the call is in the loop's body, not in a loop, ``switch`` or label of it;
        the body has no label and no preprocessor directive; the loop's condition and
        increment do not touch the buffers; no buffer is declared in the loop (it would
        end with the iteration); and the file is C (a C++ body's destructors run at its
        closing brace).  Else the plan is kept."""
        found = self._carry_loop(site)
        if found is None:
            return
        blk, cidx = found
        why = self.carry_problem(site, blk)
        if why:
            site.notes.append("wait not carried into the next iteration: " + why)
            return
        loop = blk.owner
        assert loop is not None
        lblk, lidx = self.where[id(loop)]
        for role, plan in list(site.plans.items()):
            j, stop = cidx, "the statement of its call in the next iteration"
            for i in range(cidx):
                why_i = self._unit_problem(blk, i, site, role)
                if why_i:
                    j, stop = i, why_i
                    break
            if j == 0:
                site.notes.append(
                    "wait not carried into the next iteration: the body's first statement "
                    f"stops it ({stop})"
                )
                return
            flagged = plan.points[0].flagged
            gain = sum(_count(s) for u in blk.units[:j] for s in u.stmts)
            visited = plan.visited + [s for u in blk.units[:j] for s in u.stmts]
            points = [
                WaitPoint(blk, j, flagged, why=f"next iteration: {stop}"),
                WaitPoint(lblk, lidx + 1, flagged, why="after the loop"),
            ]
            site.plans[role] = Plan(
                points, plan.overlap + gain, f"next iteration: {stop}", visited, plan.implied
            )
        site.notes.append("wait carried into the next iteration and after the loop")

    def _carry_loop(self, site: Site) -> tuple[Block, int] | None:
        """(the loop body's block, the index of its unit holding the call) when every
        plan of ``site`` is one wait at the end of that body, reached from the call
        through ``if`` branches and plain blocks only; else None."""
        blk, idx = self.where[id(site.stmt)]
        while blk.kind in ("then", "else", "compound"):
            if blk.owner is None or blk.parent is None or id(blk.owner) not in self.where:
                return None
            blk, idx = self.where[id(blk.owner)]
        plans = list(site.plans.values())
        if blk.kind != "loop" or blk.owner is None or not plans:
            return None
        for p in plans:
            if len(p.points) != 1 or p.points[0].block is not blk:
                return None
            if p.points[0].index != len(blk.units):
                return None
        if len({p.points[0].flagged for p in plans}) != 1:
            return None
        return blk, idx

    def carry_problem(self, site: Site, blk: Block) -> str:
        """Why :meth:`carry` cannot carry the wait out of the loop body ``blk``."""
        loop = blk.owner
        assert loop is not None
        if self.unit.cxx and not self.relaxed:
            return "C++ (destructors at the body's closing brace)"
        if id(loop) not in self.where:
            return "the loop is not in a block"
        if blk.node is None and not self.relaxed:
            return "the loop's body is not in braces"
        lblk, _ = self.where[id(loop)]
        if lblk.node is None and not self.relaxed:
            return "the loop is the lone statement of another"
        end = self.full_end(loop)
        if self.has_directive(loop.start, end) or self.in_macro(loop.start):
            return "a preprocessor directive or macro in the loop"
        if self.in_openmp(loop.start, end):
            return "the loop is in an OpenMP construct"
        # A jump out of the body (break, continue, return, goto) needs nothing here:
        # one after the call stops its plan before the body's end, one before it stops
        # the next iteration's scan (the wait comes before it), and a break lands on
        # the wait after the loop.  A label would let a goto skip the carried wait.
        for u in blk.units:
            for s in u.stmts:
                if self.relaxed:
                    break
                if any(n.kind == CK.LABEL_STMT for n in s.walk()) or self._outer_case(s):
                    return f"label in the loop at line {s.line}"
        body = loop.children[0] if loop.kind == CK.DO_STMT else loop.children[-1]
        for role in site.plans:
            for part in loop.children:
                if part is body:
                    continue
                why = self.conflict(self.an.effects(part, site.func), site, role)
                if why:
                    return f"the loop's condition or increment {why}"
            name = self._local_buffer(site, role, lambda sc: loop.start <= sc.start < end)
            if name:
                return f"{name} is declared in the loop (it ends with the iteration)"
        return ""

    def _covered(self, ifnode: Node) -> bool:
        """Whether every branch of ``ifnode`` (an else-if chain that ends in an else)
        starts a collective at its top level.  After it, a request of that slot is
        pending on every path that falls through, so the waits after the ``if`` need
        no flag (and where one of them is not converted after all, a wait on its
        null request returns at once)."""
        ch = ifnode.children
        if ifnode.kind != CK.IF_STMT or len(ch) < 3:
            return False
        for br in ch[1:3]:
            if br is ch[2] and br.kind == CK.IF_STMT:
                if not self._covered(br):
                    return False
                continue
            blk = self.block_of_node.get(id(br))
            if blk is None:
                return False
            starts = False
            for u in blk.units:
                for st in u.stmts:
                    t = self.site_by_stmt.get(id(st))
                    if t is not None and t.wrapper is None and t.action != "blocking":
                        starts = True
                    elif st.kind in JUMPS or self.leaves(st) is not None:
                        return False
                if starts:
                    break
            if not starts:
                return False
        return True

    def _scan(self, blk: Block, idx: int, state: str, site: Site, role: str, plan: Plan) -> str:
        imp = blk.bid in plan.implied
        skip_to, closed = idx, False
        for i in range(idx, len(blk.units)):
            if i < skip_to:
                continue  # in a conditional group stepped over
            u = blk.units[i]
            prev_end = blk.units[i - 1].end if i > 0 else (blk.node.start if blk.node else u.start)
            if i != skip_to or i == idx:
                closed = False
            if (
                not closed
                and self.has_directive(prev_end, u.start)
                and not (self.gap_ok(prev_end, u.start, site) and self._starts_line(u.start))
            ):
                j = self._cond_group(blk, i, site, role)
                if j is not None:
                    for k in range(i, j):
                        plan.overlap += sum(_count(x) for x in blk.units[k].stmts)
                        plan.visited.extend(blk.units[k].stmts)
                    skip_to, closed = j, True  # the #endif before unit j: passed
                    continue
                plan.points.append(WaitPoint(blk, i, state == MAYBE, imp, "preprocessor directive"))
                plan.stop = plan.stop or "preprocessor directive"
                return DONE
            why = self._unit_problem(blk, i, site, role)
            if not why:
                plan.overlap += sum(_count(s) for s in u.stmts)
                plan.visited.extend(u.stmts)
                continue
            s = u.stmts[0]
            if len(u.stmts) == 1 and s.kind in (CK.IF_STMT, CK.COMPOUND_STMT):
                snap = (len(plan.points), len(plan.visited), plan.overlap, plan.stop)
                res = self._descend(s, state, site, role, plan, imp)
                if (
                    res is not None
                    and res == MAYBE
                    and state == DEF
                    and not self.relaxed
                    and self._stops_next(blk, i, site, role)
                ):
                    # Waits in a branch plus a flag-guarded one right after the if gain
                    # nothing over a single wait before the if: keep it simple.
                    del plan.points[snap[0] :]
                    del plan.visited[snap[1] :]
                    plan.overlap, plan.stop = snap[2], snap[3]
                    res = None
                if res is not None:
                    if res == NOFALL:
                        return NOFALL
                    if res == DONE:
                        return DONE
                    state = res
                    continue
            plan.points.append(
                WaitPoint(blk, i, state == MAYBE, imp, why, self._after(blk, i, site))
            )
            plan.stop = plan.stop or why
            if len(u.stmts) == 1 and s.kind in JUMPS:
                return NOFALL
            return DONE
        if blk.units and state in (DEF, MAYBE):
            close = blk.node.end - 1 if blk.node is not None else self.full_end(blk.stmts[-1])
            if self.has_directive(blk.units[-1].end, close) and not (
                self.gap_ok(blk.units[-1].end, close, site)
                and (
                    blk.kind not in ("loop", "func", "other")
                    or self._after(blk, len(blk.units), site)
                )
            ):
                # "#endif" before the block's end: the wait stays on this side of it
                why = "preprocessor directive"
                plan.points.append(WaitPoint(blk, len(blk.units), state == MAYBE, imp, why))
                plan.stop = plan.stop or why
                return DONE
        return state

    def _cond_group(self, blk: Block, i: int, site: Site, role: str) -> int | None:
        """Issue 34: a conditional group (``#ifdef X`` ... ``#endif``, no ``#else``)
        whose code is compiled (so analysed) and does not touch the buffers is stepped
        over as a whole: without X it is absent, with X the wait comes after it.
        Returns the index of the unit after the ``#endif``, or None."""
        base = [x for x, _ in self.conds_at(site.call.start)]
        prev_end = blk.units[i - 1].end if i > 0 else -1
        if prev_end < 0 or _gap_kind(self.data[prev_end : blk.units[i].start]) != "open":
            return None
        for k in range(i, len(blk.units)):
            ids = [x for x, _ in self.conds_at(blk.units[k].start)]
            if k > i and self.has_directive(blk.units[k - 1].end, blk.units[k].start):
                gap = _gap_kind(self.data[blk.units[k - 1].end : blk.units[k].start])
                if gap == "close" and ids == base:
                    return k
                return None
            if ids[: len(base)] != base or len(ids) <= len(base):
                return None
            if self._unit_problem(blk, k, site, role):
                return None
        return None

    def _unit_problem(self, blk: Block, i: int, site: Site, role: str) -> str:
        u = blk.units[i]
        why = self.control_problem(u)
        if not why:
            why = self.conflict(self.unit_effects(u, site.func), site, role)
        return why

    def _stops_next(self, blk: Block, i: int, site: Site, role: str) -> bool:
        """Whether the wait would have to come right after unit i anyway."""
        if i + 1 >= len(blk.units):
            return blk.kind in ("loop", "func", "other")
        if self.has_directive(blk.units[i].end, blk.units[i + 1].start) and not self._after(
            blk, i + 1, site
        ):
            return True
        return bool(self._unit_problem(blk, i + 1, site, role))

    def _descend(
        self, s: Node, state: str, site: Site, role: str, plan: Plan, implied: bool
    ) -> str | None:
        """Places waits inside the branches of ``s``; the state after it, or None."""
        u = StmtUnit([s], s.start, self.full_end(s))
        if self.control_problem(u, allow_jumps=True):
            return None
        if self.in_openmp(s.start, s.end):
            return None  # an OpenMP construct's threads would all wait: not into it
        if s.kind == CK.IF_STMT:
            cond = s.children[0]
            if self.conflict(self.an.effects(cond, site.func), site, role):
                return None
            branches = [self.block_of_node.get(id(c)) for c in s.children[1:3]]
            if len(branches) == 1:
                branches.append(None)
            taken = self._rank_test(cond, site, role)
            if taken is not None:
                # "if (rank == root)": the root takes the then branch, the others do not.
                b = branches[0] if taken else branches[1]
                if b is None:
                    return state
                plan.implied.add(b.bid)
                return self._scan(b, 0, state, site, role, plan)
        else:
            branches = [self.block_of_node.get(id(s))]
        outs: list[str] = []
        for b in branches:
            if b is None:
                outs.append(state)
                continue
            if implied:
                plan.implied.add(b.bid)
            outs.append(self._scan(b, 0, state, site, role, plan))
        falls = [o for o in outs if o != NOFALL]
        if not falls:
            return NOFALL
        if all(o == DONE for o in falls):
            return DONE
        if all(o == DEF for o in falls):
            return DEF
        return MAYBE

    # ------------------------------------------------------------ rank tests
    def _rank_test(self, cond: Node, site: Site, role: str) -> bool | None:
        """For ``if (rank == root)`` and the like: whether the role takes the then branch."""
        if role not in ("root", "nonroot") or not site.rank:
            return None
        c = strip(cond)
        if c.kind != CK.BINARY_OPERATOR or c.op not in ("==", "!="):
            return None
        a, b = (_norm(self.text(x)) for x in c.exprs())
        roles = mpi.COLLECTIVES[site.name]
        root = _norm(self.text(site.call.exprs()[1:][roles.index("root")]))
        if {a, b} != {site.rank, root}:
            return None
        return (c.op == "==") == (role == "root")

    def rank_var(self, site: Site) -> str:
        """The variable set by MPI_Comm_rank(comm, &v) before the call and never changed."""
        g = self._rank_var(site)
        return g or ""

    def rank_guard(self, site: Site) -> tuple[str, str] | None:
        """(root test, non-root test) as C conditions, if they can be written safely."""
        if not site.rank:
            return None
        f = site.func
        root = site.call.exprs()[1:][mpi.COLLECTIVES[site.name].index("root")]
        rank_name = site.rank
        # The root expression must keep its value up to the waits, and be in scope there.
        reads = self.an.effects(root, f).reads
        for plan in site.plans.values():
            for s in plan.visited:
                if self.an.aliases(self.an.effects(s, f).writes, reads):
                    return None
        refs = [n for n in root.walk() if n.kind == CK.DECL_REF_EXPR]
        for plan in site.plans.values():
            for p in plan.points:
                for r in refs:
                    d = self.an.decls.get(r.ref)
                    if d is not None and d.kind == "local" and d.scope is not None:
                        if not self._encloses(d.scope, p.block):
                            return None
        rt = self.text(root).strip()
        if not re.fullmatch(r"[A-Za-z_]\w*|\d+", rt):
            rt = f"({rt})"
        return f"{rank_name} == {rt}", f"{rank_name} != {rt}"

    def _rank_var(self, site: Site) -> str | None:
        f = site.func
        roles = mpi.COLLECTIVES[site.name]
        args = site.call.exprs()[1:]
        comm = args[roles.index("comm")]
        root = args[roles.index("root")]
        comm_text = _norm(self.text(comm))
        if any(n.kind in (CK.CALL_EXPR, CK.UNARY_OPERATOR) and n.op != "-" for n in root.walk()):
            return None
        # the communicators MPI_Comm_rank may name: the call's, or what it holds
        comms = {comm_text, self._comm_value(comm, f, top_of=site.stmt) or comm_text}
        rank = ""
        top_site = self._top_unit_index(site.stmt, f)
        fb = self.block_of_node[id(f.body)]
        for i, u in enumerate(fb.units):
            if i >= top_site:
                break
            for s in u.stmts:
                c = strip(s)
                if c.kind == CK.CALL_EXPR and c.callee == "MPI_Comm_rank":
                    a = c.exprs()[1:]
                    if len(a) == 2 and _norm(self.text(a[0])) in comms:
                        t = strip(a[1])
                        if t.kind == CK.UNARY_OPERATOR and t.op == "&":
                            v = strip(t.exprs()[0])
                            if v.kind == CK.DECL_REF_EXPR:
                                d = self.an.decls.get(v.ref)
                                if d and d.kind == "local" and d.func == f.key:
                                    rank = v.ref
        if not rank:
            return None
        # The rank variable must be written by MPI_Comm_rank(comm, &rank) only.
        for n in f.body.walk():
            if n.kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR) and (
                n.op == "=" or n.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR
            ):
                lhs = strip(n.exprs()[0])
                if lhs.kind == CK.DECL_REF_EXPR and lhs.ref == rank:
                    return None
            if n.kind == CK.UNARY_OPERATOR and n.op != "*":
                vv = strip(n.exprs()[0]) if n.exprs() else None
                if vv is not None and vv.kind == CK.DECL_REF_EXPR and vv.ref == rank:
                    if n.op != "&":
                        return None
                    call = n.parent
                    while call is not None and call.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR):
                        call = call.parent
                    if call is None or call.kind != CK.CALL_EXPR or call.callee != "MPI_Comm_rank":
                        return None
                    if _norm(self.text(call.exprs()[1])) not in comms:
                        return None
        return self.an.decls[rank].name

    def _comm_value(self, comm: Node, f: Function, top_of: Node) -> str | None:
        """Issue 34: the predefined communicator (``MPI_COMM_WORLD``, ``MPI_COMM_SELF``)
        that ``comm``, a local variable of ``f`` or a member of one (``c.m``), holds at
        the statement ``top_of``: set once, by ``c.m = MPI_COMM_WORLD;`` (or an
        initializer) at the top level of the body before that statement, and
        otherwise only read (no other write of the variable or any of its members,
        its address never taken, no label in ``f``).  C only.  None if not so."""
        if self.unit.cxx:
            return None
        e = strip(comm)
        text = _norm(self.text(e))
        if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", text):
            return None
        refs = [n for n in e.walk() if n.kind == CK.DECL_REF_EXPR]
        if len(refs) != 1 or refs[0].ref_kind != CK.VAR_DECL:
            return None
        key = refs[0].ref
        d = self.an.decls.get(key)
        if d is None or d.kind != "local" or d.func != f.key or d.is_pointer or d.is_array:
            return None
        fb = self.block_of_node[id(f.body)]
        limit = self._top_unit_index(top_of, f)
        tops = {id(st): i for i, u in enumerate(fb.units) for st in u.stmts}
        value = ""
        for n in f.body.walk():
            if n.kind == CK.LABEL_STMT:
                return None
            if n.kind == CK.VAR_DECL and n.key == key:
                if n.exprs():
                    return None  # (a struct's initializer: not worth the cases)
                continue
            if n.kind != CK.DECL_REF_EXPR or n.ref != key:
                continue
            use, par = n, n.parent
            while par is not None and (par.kind in CASTS_ or par.kind == CK.MEMBER_REF_EXPR):
                use, par = par, par.parent
            if par is None:
                return None
            pk = par.exprs()
            if par.kind == CK.UNARY_OPERATOR and par.op in ("&", "++", "--"):
                return None
            if par.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR and pk and pk[0] is use:
                return None
            if par.kind == CK.BINARY_OPERATOR and par.op == "=" and pk and pk[0] is use:
                rhs = _norm(self.text(pk[1])) if len(pk) == 2 else ""
                if (
                    value
                    or _norm(self.text(use)) != text
                    or rhs not in ("MPI_COMM_WORLD", "MPI_COMM_SELF")
                    or tops.get(id(par), limit) >= limit
                ):
                    return None
                value = rhs
        return value or None

    def _encloses(self, scope: Node, blk: Block) -> bool:
        n: Node | None = blk.node if blk.node is not None else (blk.stmts[0] if blk.stmts else None)
        while n is not None:
            if n is scope:
                return True
            n = n.parent
        return False

    def _top_unit_index(self, stmt: Node, f: Function) -> int:
        n: Node | None = stmt
        while n is not None and n.parent is not f.body:
            n = n.parent
        if n is None:
            return 0
        return self.where[id(n)][1]

    # ------------------------------------------------------------ persistent
    def loop_of(self, site: Site) -> Node | None:
        n = site.stmt.parent
        while n is not None and n is not site.func.body:
            if n.kind in LOOPS:
                body = n.children[0] if n.kind == CK.DO_STMT else n.children[-1]
                if _contains(body, site.stmt):
                    return n
                return None
            n = n.parent
        return None

    def invariant_problem(self, site: Site, loop: Node, args: list[Node]) -> str:
        f = site.func
        roles = mpi.COLLECTIVES[site.name]
        if self.has_directive(loop.start, self.full_end(loop)) and not (
            self.passable(loop.start, self.full_end(loop)) and self.within(loop.start, site)
        ):
            return "preprocessor directive inside the loop"
        leave = self._leaves_loop(loop)
        if leave is not None:
            jump = f"{_jump_name(leave)} at line {leave.line}"
            return f"{jump} leaves the loop (the request would not be freed)"
        leff = self.an.effects(loop, f)
        writes = set(leff.writes)
        if leff.flags & {"unknown"}:
            writes.add(EXT)
        for a, role in zip(args, roles, strict=False):
            for n in a.walk():
                if n.kind == CK.CALL_EXPR:
                    return f"argument '{_norm(self.text(a))}' calls a function"
                if n.kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR) and (
                    n.op == "=" or n.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR
                ):
                    return f"argument '{_norm(self.text(a))}' assigns"
                if n.kind == CK.UNARY_OPERATOR and n.op in ("++", "--", "post++", "post--"):
                    return f"argument '{_norm(self.text(a))}' modifies a variable"
                if n.kind == CK.DECL_REF_EXPR:
                    d = self.an.decls.get(n.ref)
                    if d is not None and d.kind == "local" and d.scope is not None:
                        if _contains(loop, d.scope) or d.scope is loop:
                            return f"'{d.name}' is declared inside the loop"
            reads = set(self.an.effects(a, f).reads)
            if role.split("@")[0] == "A":
                reads |= self.an.val(a)
            if self.an.aliases(writes, reads):
                line = self._writer_line(loop, reads, f)
                return f"argument '{_norm(self.text(a))}' changes inside the loop{line}"
        return ""

    def runs_once(self, site: Site, loop: Node) -> str:
        """Why the call runs at most once per execution of the loop ("" if it may run more):
        it sits under ``if (iter == K)`` where ``iter`` is what the loop steps."""
        if loop.kind != CK.FOR_STMT or len(loop.children) != 4:
            return ""
        stepped: set[str] = set()
        for x in loop.children[2].walk():
            if x.kind == CK.DECL_REF_EXPR and x.ref:
                stepped.add(x.ref)
        if not stepped:
            return ""
        body = loop.children[-1]
        n: Node | None = site.stmt
        while n is not None and n is not body:
            par = n.parent
            if par is not None and par.kind == CK.IF_STMT and n is not par.children[0]:
                then = len(par.children) >= 2 and n is par.children[1]
                if then and self._tests_equal(par.children[0], stepped):
                    cond = _norm(self.text(par.children[0]))
                    return (
                        f"runs at most once per loop ('if ({cond})' at line {par.line}): "
                        "a persistent request would cost more than it saves"
                    )
            n = par
        return ""

    def _tests_equal(self, cond: Node, stepped: set[str]) -> bool:
        c = strip(cond)
        if c.kind == CK.BINARY_OPERATOR and c.op == "&&":
            return any(self._tests_equal(x, stepped) for x in c.exprs())
        if c.kind != CK.BINARY_OPERATOR or c.op != "==":
            return False
        a, b = (strip(x) for x in c.exprs())
        for v, k in ((a, b), (b, a)):
            if v.kind == CK.DECL_REF_EXPR and v.ref in stepped:
                if not any(x.kind == CK.DECL_REF_EXPR and x.ref in stepped for x in k.walk()):
                    return True
        return False

    def _writer_line(self, loop: Node, reads: set[str], f: Function) -> str:
        for n in loop.walk():
            if n.kind in (
                CK.BINARY_OPERATOR,
                CK.COMPOUND_ASSIGNMENT_OPERATOR,
                CK.UNARY_OPERATOR,
                CK.CALL_EXPR,
            ):
                if self.an.aliases(self.an.effects(n, f).writes, reads):
                    return f" (line {n.line})"
        return ""

    def _leaves_loop(self, loop: Node) -> Node | None:
        def rec(n: Node) -> Node | None:
            if n.kind in (CK.RETURN_STMT, CK.GOTO_STMT, CK.INDIRECT_GOTO_STMT):
                return n
            for c in n.children:
                r = rec(c)
                if r is not None:
                    return r
            return None

        return rec(loop)

    def hoistable(self, site: Site, loop: Node) -> bool:
        """Whether every arrival at the loop runs the call in the first iteration."""
        body = loop.children[0] if loop.kind == CK.DO_STMT else loop.children[-1]
        n = site.stmt
        while n is not body:
            blk, i = self.where[id(n)]
            if blk.kind not in ("loop", "compound"):
                return False
            for u in blk.units[:i]:
                for s in u.stmts:
                    for x in s.walk():
                        if x.kind in JUMPS or (x.kind == CK.CALL_EXPR and x.callee in ("exit",)):
                            return False
            if blk.owner is None or blk.kind == "loop":
                break
            n = blk.owner
        if loop.kind == CK.DO_STMT:
            return True
        if loop.kind == CK.FOR_STMT and len(loop.children) == 4:
            init, cond = loop.children[0], loop.children[1]
            var, lo = "", None
            if init.kind == CK.BINARY_OPERATOR and init.op == "=":
                lhs, rhs = init.exprs()
                if strip(lhs).kind == CK.DECL_REF_EXPR:
                    var, lo = strip(lhs).ref, _const(rhs)
            elif init.kind == CK.DECL_STMT and init.children:
                vd = init.children[0]
                if vd.kind == CK.VAR_DECL and vd.exprs():
                    var, lo = vd.key, _const(vd.exprs()[-1])
            if var and lo is not None and cond.kind == CK.BINARY_OPERATOR:
                a, b = cond.exprs()
                if strip(a).kind == CK.DECL_REF_EXPR and strip(a).ref == var:
                    hi = _const(b)
                    if hi is not None:
                        return {"<": lo < hi, "<=": lo <= hi, "!=": lo != hi}.get(cond.op, False)
        return False

    # ------------------------------------------------------------- the sites
    def find_sites(self) -> None:
        banned = ""
        for f in self.main_functions():
            for n in f.body.walk():
                if n.kind == CK.CALL_EXPR and (
                    n.callee.startswith(mpi.UNSAFE_MPI_PREFIXES) or n.callee in mpi.UNSAFE_MPI_NAMES
                ):
                    banned = (
                        f"{n.callee} at line {n.line}: one-sided communication or ready "
                        "sends may rely on collectives for synchronisation"
                    )
        intercomm = any(
            n.kind == CK.CALL_EXPR and n.callee in mpi.INTERCOMM_NAMES
            for f in self.unit.functions.values()
            for n in f.body.walk()
        )
        for f in self.main_functions():
            self._build_blocks(f)
        for f in self.main_functions():
            for n in f.body.walk():
                if n.kind != CK.CALL_EXPR:
                    continue
                w = self._wrapper_for(n, f)
                if n.callee not in mpi.COLLECTIVES and w is None:
                    continue
                site = Site(f, n, n, w.coll if w else n.callee, n.line, n.col, wrapper=w)
                self.sites.append(site)
                stmt = n
                par = n.parent
                if (
                    par is not None
                    and par.kind == CK.CSTYLE_CAST_EXPR
                    and self.text(par).replace(" ", "").startswith("(void)")
                ):
                    stmt = par
                site.stmt = stmt
                self.site_by_stmt[id(stmt)] = site
                if id(stmt) not in self.where:
                    site.reason = "its result is used (not a statement of its own)"
                    continue
                split = sorted(d for d in self.cfg.unaligned if f.node.start <= d < f.body.end)
                if split:
                    site.reason = (
                        f"the #if group at line {_line_of(self.data, split[0])} splits a "
                        "statement of this function in some configuration"
                    )
                    continue
                sblk = self.where[id(stmt)][0]
                if (
                    sblk.node is None
                    and sblk.owner is not None
                    and self.has_directive(sblk.owner.start, stmt.start)
                ):
                    site.reason = (
                        "a preprocessor directive comes between its statement's head and it"
                    )
                    continue
                if self.in_openmp(n.start, n.end):
                    site.reason = "in an OpenMP construct (made by its threads)"
                    continue
                callee = n.children[0] if n.children else None
                name_ok = (
                    callee is not None and self.data[callee.start : callee.end] == n.callee.encode()
                )
                close = n.end - 1
                if (
                    self.in_macro(n.start)
                    or self.in_macro(close)
                    or not name_ok
                    or self.data[close : close + 1] != b")"
                ):
                    site.reason = "comes from a macro expansion"
                    continue
                if self._macro_braces_near(f, n):
                    site.reason = (
                        "a block that its wait could go into has braces from a macro expansion"
                    )
                    continue
                if self.unit.cxx:
                    site.reason = cxx_problem(n, self.unit.address_of_overloaded)
                    if site.reason:
                        continue
                nargs = w.nparams if w else len(mpi.COLLECTIVES[n.callee])
                if len(n.exprs()) - 1 != nargs:
                    site.reason = "unexpected number of arguments"
                    continue
                if w is not None:
                    site.reason = self._wrapper_problem(n, w)
                    if not site.reason:
                        site.action = "candidate"
                    if banned and not site.reason:
                        site.reason, site.soft, site.action = banned, True, "blocking"
                    continue
                if banned:
                    # an MPI_Ixxx with its MPI_Wait right after it is as synchronising
                    # as the blocking call: start-then-wait stays possible
                    site.reason, site.soft = banned, True
                    continue
                if intercomm and mpi.is_rooted(n.callee):
                    site.notes.append("intercommunicators in use: one wait for root and non-root")
                site.action = "candidate"

    # ------------------------------------------------------------- wrappers
    def find_wrappers(self) -> dict[str, Wrapper]:
        """This file's functions whose body is one blocking collective, by name."""
        out: dict[str, Wrapper] = {}
        if self.unit.errors or self.unit.cxx:
            # C++: a wrapper may be called from code that is not analysed (member
            # functions, templates, lambdas), which would keep calling the blocking one
            return out
        for f in self.main_functions():
            if len(f.body.children) != 1:
                continue
            call = strip(f.body.children[0])
            if call.kind == CK.CALL_EXPR and call.callee in mpi.COLLECTIVES:
                out[f.name] = self._wrapper(f, f.body.children[0], call)
        return out

    def _wrapper(self, f: Function, stmt: Node, call: Node) -> Wrapper:
        roles = mpi.COLLECTIVES[call.callee]
        args = call.exprs()[1:]
        params: list[int | None] = []
        reason = ""
        for a, role in zip(args, roles, strict=False):
            k = None
            if role.partition("@")[0] in ("S", "R", "B", "A"):
                k = self.an._prov(a, self.an.prov[f.key])
                if k is None:
                    reason = reason or (
                        f"its buffer '{_norm(self.text(a))}' is not derived from one parameter"
                    )
            params.append(k)
        callee = call.children[0] if call.children else None
        head = self.data[f.node.start : f.body.start].decode("utf-8", "replace")
        names = (f"{f.name}_nb", f"{f.name}_wait", f"nbcx_{f.name}_req")
        if not f.returns_void:
            reason = "it returns a value"
        elif f.variadic or len(args) != len(roles):
            reason = "unexpected arguments"
        elif (
            callee is None
            or self.data[callee.start : callee.end] != call.callee.encode()
            or self.in_macro(call.start)
            or self.in_macro(call.end - 1)
            or self.in_macro(f.node.start)
            or self._macro_braces(f)
            or len(re.findall(rf"\b{re.escape(f.name)}\s*\(", head)) != 1
        ):
            reason = "its text comes from a macro expansion"
        elif not self._nothing_after(self.full_end(stmt), f.body.end - 1):
            reason = (
                "code after the collective may be compiled in another configuration "
                "(it would run before the wait)"
            )
        elif any(re.search(rb"\b" + nm.encode() + rb"\b", self.data) for nm in names):
            reason = f"the name {names[0]} or {names[1]} is taken"
        elif f.static and self._named_elsewhere(f):
            # the twin may take its place; a separate declaration would then warn
            reason = "it is static and declared apart from its definition"
        return Wrapper(
            name=f.name,
            key=f.key,
            path=self.unit.path,
            coll=call.callee,
            params=tuple(params),
            nparams=len(f.params),
            static=f.static,
            reason=reason,
        )

    def _named_elsewhere(self, f: Function) -> bool:
        """Whether ``f``'s name appears other than in its definition and its calls."""
        uses = len(re.findall(rb"\b" + re.escape(f.name.encode()) + rb"\b", self.data))
        calls = sum(
            1
            for g in self.unit.functions.values()
            for n in g.body.walk()
            if n.kind == CK.CALL_EXPR and n.callee_key == f.key
        )
        return uses != 1 + calls

    def _nothing_after(self, start: int, end: int) -> bool:
        """Whether the text between a wrapper's collective and its closing brace is only
        the other branches of the conditional groups around the collective."""
        text = self.data[start:end].decode("utf-8", "replace")
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        depth = 0
        other = False  # in another branch of a group that holds the collective
        for line in text.split("\n"):
            m = re.match(r"\s*#\s*(\w+)", line)
            if m is None:
                if line.strip() and not other:
                    return False
                continue
            d = m.group(1)
            if d in ("if", "ifdef", "ifndef"):
                if not other:
                    return False
                depth += 1
            elif d in ("else", "elif"):
                if depth == 0:
                    other = True
            elif d == "endif":
                if depth > 0:
                    depth -= 1
                else:
                    other = False
            elif not other:
                return False
        return True

    def _wrapper_for(self, n: Node, f: Function) -> Wrapper | None:
        """The wrapper that call ``n`` calls (None if it calls none)."""
        w = self.opts.wrappers.get(n.callee) if n.callee else None
        if w is None:
            return None
        if n.callee_key in self.unit.functions:
            if w.path != self.unit.path or w.key != n.callee_key or f.key == w.key:
                return None
        elif w.static or w.path == self.unit.path:
            return None
        return w

    def _wrapper_problem(self, n: Node, w: Wrapper) -> str:
        """Why a call of wrapper ``w`` cannot use its twin ("" if it can)."""
        if w.reason:
            return f"calls {w.name}(), which wraps {w.coll}; no nonblocking twin: {w.reason}"
        if n.callee_params is None:
            return f"no prototype of {w.name}() with nameable parameter types to copy"
        for nm in (w.start, w.wait, w.req):
            if w.path != self.unit.path and re.search(rb"\b" + nm.encode() + rb"\b", self.data):
                return f"the name {nm} is taken in this file"
        return ""

    def wrapper_prototypes(self) -> None:
        """Declarations of the twins used here, before the first function that calls one
        (unless the twin is defined in this file before it)."""
        conv = [s for s in self.sites if s.wrapper is not None and s.action != "blocking"]
        if not conv:
            return
        first = min((s.func for s in conv), key=lambda f: f.node.start)
        lines: list[str] = []
        wheres: list[str] = []
        for s in sorted(conv, key=lambda s: s.call.start):
            w = s.wrapper
            assert w is not None and s.call.callee_params is not None
            if w.path == self.unit.path and self.unit.functions[w.key].node.end < first.node.start:
                continue
            st = "static " if w.static else ""
            params = ", ".join(s.call.callee_params) or "void"
            for ln in (f"{st}void {w.start}({params});", f"{st}void {w.wait}(void);"):
                if ln not in lines:
                    lines.append(ln)
            where = w.path.rsplit("/", 1)[-1]
            if where not in wheres:
                wheres.append(where)
        if not lines:
            return
        off = self._line_start(first.node.start)
        # above the comment lines that introduce the function
        while off > 0:
            prev = self._line_start(off - 1)
            t = self.data[prev : off - 1].strip()
            if t.startswith((b"/*", b"*", b"//")) or t.endswith(b"*/"):
                off = prev
            else:
                break
        head = (
            "/* nbcx-transform: nonblocking twins of one-collective wrappers "
            f"(defined in {', '.join(wheres)}) */"
        )
        self.extra_edits.append((off, off, 0, "\n".join([head, *lines]) + "\n\n"))

    def emit_twins(self, used: list[Wrapper]) -> bytes:
        """Adds ``<name>_nb`` and ``<name>_wait`` after each wrapper of this file in
        ``used`` (called after :meth:`run`); the rewritten file.  Each twin once,
        whatever the repetitions in ``used`` and the calls of this method."""
        self.add_twins(used)
        return self.render()

    def add_twins(self, used: list[Wrapper]) -> None:
        """The twins of :meth:`emit_twins`, not yet written."""
        for w in used:
            if w.path != self.unit.path or w.key not in self.unit.functions:
                continue
            if w.key in self.twins_emitted:
                continue
            self.twins_emitted.add(w.key)
            f = self.unit.functions[w.key]
            call = strip(f.body.children[0])
            callee = call.children[0]
            d = self.data
            head = d[f.node.start : f.body.start].decode("utf-8", "replace")
            head = re.sub(rf"\b{re.escape(w.name)}(?=\s*\()", w.start, head, count=1)
            body = (
                d[f.body.start : callee.start]
                + mpi.nonblocking_name(w.coll).encode()
                + d[callee.end : call.end - 1]
                + f", &{w.req}".encode()
                + d[call.end - 1 : f.body.end]
            ).decode("utf-8", "replace")
            base = {i for i, _ in self.conds_at(f.body.start)}
            cond = " && ".join(c for i, c in self.conds_at(call.start) if i not in base)
            ind = self._line_indent(call.start) or self.indent_unit
            decl = [f"static MPI_Request {w.req} = MPI_REQUEST_NULL;"]
            wait = [f"{ind}MPI_Wait(&{w.req}, MPI_STATUS_IGNORE);"]
            if cond:
                decl = [f"#if {cond}", *decl, "#endif"]
                wait = [f"#if {cond}", *wait, "#endif"]
            st = "static " if w.static else ""
            text = (
                f"\n\n/* nbcx-transform: {w.start}() starts what {w.name}() does,\n"
                f" * {w.wait}() completes it */\n"
                + "\n".join(decl)
                + "\n\n"
                + head
                + body
                + f"\n\n{st}void {w.wait}(void)\n{{\n"
                + "\n".join(wait)
                + "\n}"
            )
            calls = [
                n
                for g in self.unit.functions.values()
                for n in g.body.walk()
                if n.kind == CK.CALL_EXPR and n.callee_key == w.key
            ]
            conv = {id(x.call) for x in self.sites if x.wrapper is w and x.action != "blocking"}
            if (
                w.static
                and w.key not in self.unit.address_taken_functions
                and all(id(n) in conv for n in calls)
                and all(o._twin_replaces(w, f) for o in self.others)
            ):
                # every call uses the twin: it takes the place of the unused original
                # (and what was done to the original's own collective goes with it)
                self.replaces = [r for r in self.replaces if not f.node.start <= r[0] < f.node.end]
                for k in [k for k in self.inserts if self.block_func.get(k[0]) == f.key]:
                    del self.inserts[k]
                self.extra_edits.append((f.node.start, f.node.end, 0, text.lstrip("\n")))
            else:
                nxt = self.data.find(b"\n", f.node.end)
                if nxt >= 0 and self.data[nxt + 1 : nxt + 2] not in (b"\n", b"\r", b""):
                    text += "\n"  # a blank line before what follows, as before the twin
                self.extra_edits.append((f.node.end, f.node.end, 0, text))
            for s in self.sites:
                if s.call is call:
                    s.twin = w.start
                    s.notes.append(
                        f"{w.start}() and {w.wait}() generated: the calls of {w.name}() "
                        "that can overlap it use them"
                    )

    def _twin_replaces(self, w: Wrapper, f: Function) -> bool:
        """For another configuration of the file (family.py): whether the twin may
        take the place of wrapper ``w`` (defined by ``f`` in the configuration
        given): every call of it here uses the twin, and nothing here is written
        inside it."""
        conv = {id(x.call) for x in self.sites if x.wrapper is not None and x.wrapper.key == w.key}
        conv &= {id(x.call) for x in self.sites if x.action != "blocking"}
        for g in self.unit.functions.values():
            for n in g.body.walk():
                if n.kind == CK.CALL_EXPR and n.callee_key == w.key and id(n) not in conv:
                    return False
        lo, hi = f.node.start, f.node.end
        if any(lo <= r[0] < hi for r in self.replaces):
            return False
        return not any(self.block_func.get(k[0]) == f.key for k in self.inserts)

    def _tidy_roles(self, site: Site) -> None:
        """``if (rank == root) { wait; ... } if (rank != root) wait;`` is one wait before
        the ``if`` with what each rank executes: the others skip the branch anyway."""
        a, b = site.plans["root"], site.plans["nonroot"]
        if len(a.points) != 1 or len(b.points) != 1:
            return
        pa, pb = a.points[0], b.points[0]
        blk = pa.block
        if pa.flagged or pb.flagged or pa.index != 0 or blk.kind != "then" or blk.owner is None:
            return
        owner = blk.owner
        if blk.bid not in a.implied or len(owner.children) >= 3 or id(owner) not in self.where:
            return
        oblk, oidx = self.where[id(owner)]
        if pb.block is not oblk or pb.index != oidx + 1:
            return
        self.buffers[(id(site), "any")] = self.op_buffers(site, "any")
        plan = self.place(site, "any")
        if len(plan.points) != 1 or plan.points[0].block is not oblk or plan.points[0].flagged:
            return  # keep the two waits
        site.guards = {}
        site.plans = {"any": plan}
        site.notes.append(
            "root and non-root wait before the rank test (the others skip its branch)"
        )

    def coll_args(self, site: Site) -> list[tuple[Node, str]]:
        """(argument, role) of the collective; for a wrapper's call, the caller's
        arguments its buffers come from."""
        roles = mpi.COLLECTIVES[site.name]
        args = site.call.exprs()[1:]
        w = site.wrapper
        if w is None:
            return list(zip(args, roles, strict=False))
        return [(args[k], r) for k, r in zip(w.params, roles, strict=False) if k is not None]

    def unknown_buffer(self, site: Site) -> str:
        """A buffer argument whose target the analysis cannot tell ("" if none)."""
        for a, spec in self.coll_args(site):
            if spec.partition("@")[0] not in ("S", "R", "B", "A"):
                continue
            uses_var = any(
                n.kind == CK.DECL_REF_EXPR and n.ref_kind in (CK.VAR_DECL, CK.PARM_DECL)
                for n in a.walk()
            )
            if uses_var and not self.an.val(a):
                return f"cannot tell what buffer '{_norm(self.text(a))}' points to"
        return ""

    def analyse_site(self, site: Site) -> None:
        unknown = self.unknown_buffer(site)
        if unknown:
            site.action = "blocking"
            site.reason = unknown
            site.soft = True
            return
        if site.wrapper is None and self.opts.nonblocking and self.try_batch(site):
            self.bound(site)
            return
        rooted = mpi.is_rooted(site.name) and not site.notes and site.wrapper is None
        if rooted:
            site.rank = self.rank_var(site)
        roles = ["root", "nonroot"] if rooted else ["any"]
        for r in roles:
            self.buffers[(id(site), r)] = self.op_buffers(site, r)
            site.plans[r] = self.place(site, r)
        if rooted:
            a, b = site.plans["root"], site.plans["nonroot"]
            if _points_key(a) != _points_key(b):
                g = self.rank_guard(site)
                if g is None:
                    site.notes.append(
                        "root and non-root could wait at different places, but no stable "
                        "rank variable from MPI_Comm_rank on the same communicator was found: "
                        "one wait at the earlier place"
                    )
                else:
                    site.guards = {"root": g[0], "nonroot": g[1]}
            if site.guards:
                self._tidy_roles(site)
            if not site.guards:
                site.rank = ""
                self.buffers[(id(site), "any")] = self.op_buffers(site, "any")
                site.plans = {"any": self.place(site, "any")}
        if self.opts.carry and not site.guards and site.wrapper is None:
            self.carry(site)
        self.bound(site)
        # persistent?
        loop = self.loop_of(site)
        if loop is not None and self.opts.persistent and site.wrapper is None:
            why = self.invariant_problem(site, loop, site.call.exprs()[1:]) or self.runs_once(
                site, loop
            )
            if why:
                site.notes.append("not persistent: " + why)
            elif not self.own_lines(site.stmt) or self.where[id(site.stmt)][0].node is None:
                site.notes.append(
                    "not persistent: the call shares its line with other code or is not in braces"
                )
            else:
                site.loop = loop
                site.persistent = "hoisted" if self.hoistable(site, loop) else "lazy"
        overlap = max(p.overlap for p in site.plans.values())
        if overlap < self.opts.min_overlap:
            site.action = "blocking"
            site.soft = True
            site.loop = None
            site.persistent = ""
            stop = next(iter(site.plans.values())).stop
            if overlap == 0:
                site.reason = (
                    "nothing to gain: the wait would come right after the call "
                    f"(stopped by {stop}; --min-overlap 0 converts it anyway)"
                )
            else:
                site.reason = (
                    f"only {overlap} statement(s) could overlap "
                    f"(--min-overlap {self.opts.min_overlap}): {stop}"
                )
            return
        site.action = "persistent" if site.persistent else "nonblocking"

    # ------------------------------------------------------------- batching
    def batch_loop(self, site: Site) -> tuple[Node, int, str] | str | None:
        """``for (int i = C0; i < C1; i++) MPI_Bcast(&a[i], 1, MPI_DOUBLE, ...);``: the
        loop, its trip count and the request index of an iteration, when every
        iteration's operation may be in flight with the others' (else why not).

        Safe because the loop does nothing but start the operations: the buffers
        written (receive buffers, a broadcast's buffer) are distinct elements
        ``&a[i]`` of one array variable (count 1 of an MPI type of the element's
        type), the buffers only read are no alias of them, and nothing in the
        arguments has side effects (the loop variable changes only in the loop's
        increment)."""
        call = site.call
        stmt = site.stmt
        loop = stmt.parent
        if loop is not None and loop.kind == CK.COMPOUND_STMT and len(loop.children) == 1:
            loop = loop.parent
        if loop is None or loop.kind != CK.FOR_STMT or len(loop.children) != 4:
            return None  # not the only statement of a for loop
        init, cond, inc, body = loop.children
        if not (body is stmt or (body.kind == CK.COMPOUND_STMT and body.children == [stmt])):
            return None
        if site.name not in BATCH_COLLS:
            return f"only {', '.join(sorted(BATCH_COLLS))} are batched"
        if id(loop) not in self.where or self.in_macro(loop.start) or self.in_macro(loop.end - 1):
            return "the loop is not a statement of its own or comes from a macro"
        # the loop variable, its first value and the bound
        var = ""
        first: int | None = None
        if init.kind == CK.DECL_STMT and len(init.children) == 1:
            d = init.children[0]
            kids = d.exprs()
            if d.kind == CK.VAR_DECL and len(kids) == 1:
                var, first = d.key, _int_const(kids[0])
        elif init.kind == CK.BINARY_OPERATOR and init.op == "=":
            lhs, rhs = init.exprs()
            if strip(lhs).kind == CK.DECL_REF_EXPR:
                var, first = strip(lhs).ref, _int_const(rhs)
        if not var or first is None:
            return "the loop does not start its variable at a constant"
        info = self.unit.decls.get(var)
        if info is None or info.kind not in ("local", "param") or info.func != site.func.key:
            return "the loop variable is not a local variable"
        if not (cond.kind == CK.BINARY_OPERATOR and cond.op in ("<", "<=")):
            return "the loop condition is not i < constant"
        cl, cr = cond.exprs()
        bound = _int_const(cr)
        if not _is_var(cl, var) or bound is None:
            return "the loop condition is not i < constant"
        trips = bound - first + (1 if cond.op == "<=" else 0)
        ok_inc = (
            inc.kind == CK.UNARY_OPERATOR
            and inc.op in ("++", "post++")
            and _is_var(inc.exprs()[0], var)
        ) or (
            inc.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR
            and inc.op == "+="
            and _is_var(inc.exprs()[0], var)
            and _int_const(inc.exprs()[1]) == 1
        )
        if not ok_inc:
            return "the loop does not step its variable by one"
        if not 2 <= trips <= BATCH_MAX:
            return f"the loop runs {trips} times (batched: 2 to {BATCH_MAX})"
        args = call.exprs()[1:]
        for a in args:
            for n in a.walk():
                if n.kind in (CK.CALL_EXPR, CK.COMPOUND_ASSIGNMENT_OPERATOR) or (
                    n.kind == CK.BINARY_OPERATOR and n.op == "="
                ):
                    return "an argument has side effects"
                if n.kind == CK.UNARY_OPERATOR and n.op in ("++", "--", "post++", "post--"):
                    return "an argument has side effects"
                if n.kind.is_statement():
                    return "an argument holds a statement"
        bufs, count, dtype = BATCH_COLLS[site.name]
        if _int_const(args[count]) != 1:
            return "the count is not 1"
        tname = _norm(self.text(args[dtype]))
        roles = mpi.COLLECTIVES[site.name]
        written: set[str] = set()
        read: set[str] = set()
        for i in bufs:
            a = args[i]
            r = roles[i].split("@")[0]
            if r == "S" and _norm(self.text(a)) == "MPI_IN_PLACE":
                continue
            el = _element_of(a, var)
            if r in ("R", "B"):
                if el is None:
                    return "a buffer written is not &array[loop variable]"
                base = strip(el.exprs()[0])
                binfo = self.unit.decls.get(base.ref)
                if binfo is None or binfo.kind not in ("local", "global", "static_local"):
                    return "a buffer written is not an element of an array variable"
                if not _type_fits(tname, el.ctype, el.csize):
                    return f"{tname} does not match the array's elements ({el.ctype})"
                written |= self.an.val(a)
            else:
                read |= self.an.val(a)
        if not written or self.an.aliases(read, written):
            return "a buffer read may be a buffer written"
        if ANY in written or EXT in written:
            return "a buffer written is unknown memory"
        index = _norm(self.text(cl))
        if self.in_macro(cl.start):
            return "the loop variable comes from a macro"
        return loop, trips, index if first == 0 else f"{index} - ({first})"

    def try_batch(self, site: Site) -> bool:
        """Makes ``site`` a batched loop (see :meth:`batch_loop`) if it can be one."""
        found = self.batch_loop(site)
        if found is None:
            return False
        if isinstance(found, str):
            site.notes.append("not batched: " + found)
            return False
        loop, trips, index = found
        call_stmt = site.stmt
        site.stmt = loop
        self.buffers[(id(site), "any")] = self.op_buffers(site, "any")
        plan = self.place(site, "any")
        if any(p.flagged for p in plan.points) or not plan.points:
            site.stmt = call_stmt
            site.notes.append("not batched: the wait after the loop would need a flag")
            return False
        site.plans = {"any": plan}
        site.batch = trips
        site.batch_index = index
        site.action = "nonblocking"
        site.notes.append(
            f"batched: the {trips} iterations of the loop at line {loop.line} start their "
            "operations one after the other, all in flight together"
        )
        return True

    # ------------------------------------------------------------ numbering
    def number(self, f: Function) -> int:
        if self.slot_table is not None:
            # multi mode: numbered over every configuration (family.py)
            for s in self.sites:
                if (
                    s.func is f
                    and s.action != "blocking"
                    and not s.existing_req
                    and s.wrapper is None
                ):
                    s.slot = self.slot_table[s.call.start]
            return self.slot_count.get(f.body.start, 0)
        conv = {
            id(s.stmt): s
            for s in self.sites
            if s.func is f
            and s.action != "blocking"
            and not s.existing_req
            and not s.persistent
            and s.wrapper is None
        }

        def rec(n: Node, base: int) -> int:
            s = conv.get(id(n))
            if s is not None:
                s.slot = base
                return base + max(1, s.batch)
            if n.kind == CK.IF_STMT and len(n.children) >= 2:
                b1 = rec(n.children[1], base)
                b2 = rec(n.children[2], base) if len(n.children) >= 3 else base
                return max(b1, b2)
            for c in n.children:
                base = rec(c, base)
            return base

        top = rec(f.body, 0)
        # Persistent requests live from init to free: they never share a slot.
        for s in self.sites:
            if s.func is f and s.persistent and not s.existing_req and s.action != "blocking":
                s.slot = top
                top += 1
        return top

    # --------------------------------------------------------------- output
    def add_insert(
        self, blk: Block, idx: int, prio: int, lines: list[str], after: bool = False
    ) -> None:
        self.inserts.setdefault((blk.bid, idx, after), []).append((prio, lines))

    def wait_lines(self, emits: list[Emit], func: str) -> list[str]:
        req = self.names["nbcx_req"]
        stat = self.names["nbcx_stat"]
        flag = self.names["nbcx_flag"]
        out: list[str] = []
        for e in emits:
            if e.call and e.call not in out:
                out.append(e.call)
        emits = [e for e in emits if not e.call]
        plain = sorted({e.slot for e in emits if not e.flagged and not e.guard})
        runs: list[list[int]] = []
        for s in plain:
            if runs and runs[-1][-1] == s - 1:
                runs[-1].append(s)
            else:
                runs.append([s])
        clears = sorted({e.slot for e in emits if not e.flagged and not e.guard and e.clear})
        for r in runs:
            if len(r) == 1:
                out.append(f"MPI_Wait(&{req}[{r[0]}], MPI_STATUS_IGNORE);")
            else:
                # (statuses rather than MPI_STATUSES_IGNORE: GCC 12 warns about MPICH's)
                first = f"{req}, {stat}" if r[0] == 0 else f"&{req}[{r[0]}], &{stat}[{r[0]}]"
                out.append(f"MPI_Waitall({len(r)}, {first});")
                self.waitall_funcs.add(func)
        out.extend(f"{flag}[{c}] = 0;" for c in clears)
        guarded = [e for e in emits if e.flagged or e.guard]
        seen: set[tuple[int, bool, str]] = set()
        for e in sorted(guarded, key=lambda e: (e.slot, e.guard)):
            if (e.slot, e.flagged, e.guard) in seen:
                continue
            seen.add((e.slot, e.flagged, e.guard))
            conds = [c for c in (e.guard, f"{flag}[{e.slot}]" if e.flagged else "") if c]
            out.append(f"if ({' && '.join(conds)}) {{")
            out.append(f"\t{'MPI_Wait'}(&{req}[{e.slot}], MPI_STATUS_IGNORE);")
            if e.flagged or e.clear:
                out.append(f"\t{flag}[{e.slot}] = 0;")
            out.append("}")
        return out

    def own_lines(self, stmt: Node) -> bool:
        """Whether the statement starts its line and only a comment follows it."""
        ls = self._line_start(stmt.start)
        if self.data[ls : stmt.start].strip():
            return False
        end = self.full_end(stmt)
        nl = self.data.find(b"\n", end)
        rest = self.data[end : len(self.data) if nl < 0 else nl].strip()
        return (
            not rest or rest.startswith(b"//") or (rest.startswith(b"/*") and rest.endswith(b"*/"))
        )

    def nonblocking_text(self, site: Site, req: str) -> str:
        """The statement with the call renamed to MPI_I* and the request appended."""
        stmt, call = site.stmt, site.call
        callee = call.children[0]
        end = self.full_end(stmt)
        d = self.data
        out = (
            d[stmt.start : callee.start]
            + mpi.nonblocking_name(site.name).encode()
            + d[callee.end : call.end - 1]
            + f", {req}".encode()
            + d[call.end - 1 : end]
        )
        return out.decode("utf-8", "replace")

    def emit_persistent(self, site: Site, req: str, nb_text: str, init_args: str) -> None:
        """Start/init/free of a persistent collective, with the nonblocking form as fallback."""
        stmt = site.stmt
        loop = site.loop
        assert loop is not None
        lblk, lidx = self.where[id(loop)]
        blk, idx = self.where[id(stmt)]
        ls = self._line_start(stmt.start)
        end = self.full_end(stmt)
        ind = self._line_indent(stmt.start)
        u = self.indent_unit
        new, old = mpi.persistent_names(site.name)
        init4 = f"{new}({init_args}, MPI_INFO_NULL, {req});"
        initx = f"{old}({init_args}, MPI_INFO_NULL, {req});"
        var = req[1:] if req.startswith("&") else f"*({req})"
        self.need_ext_include = True
        if site.persistent == "hoisted":
            body = ["#if NBCX_PERSISTENT", f"{ind}MPI_Start({req});"]
            self.add_insert(lblk, lidx, 4, ["@init", init4, initx])
            self.add_insert(lblk, lidx + 1, 3, ["@free", f"MPI_Request_free({req});"])
        else:
            body = [
                "#if NBCX_PERSISTENT",
                f"{ind}if ({var} == MPI_REQUEST_NULL) {{",
                "#if NBCX_PERSISTENT == 4",
                f"{ind}{u}{init4}",
                "#else",
                f"{ind}{u}{initx}",
                "#endif",
                f"{ind}}}",
                f"{ind}MPI_Start({req});",
            ]
            self.add_insert(
                lblk,
                lidx + 1,
                3,
                ["@free", f"if ({var} != MPI_REQUEST_NULL) {{", f"\tMPI_Request_free({req});", "}"],
            )
            if site.existing_req:
                # The program's own request may hold anything before the loop.
                self.add_insert(lblk, lidx, 5, ["@reset", f"{var} = MPI_REQUEST_NULL;"])
        body += ["#else", ind + nb_text.strip(), "#endif"]
        del blk, idx
        self.replaces.append((ls, end, "\n".join(body)))

    def emit_wrapper_site(self, site: Site, w: Wrapper) -> None:
        """``foo(a, b);`` -> ``foo_nb(a, b);`` ... ``foo_wait();`` (the twin's own request:
        waiting twice, or with nothing started, returns at once, so no flag)."""
        callee = site.call.children[0]
        self.replaces.append((callee.start, callee.end, w.start))
        self.used_wrappers[w.name] = w
        for role, plan in site.plans.items():
            for p in plan.points:
                self.pending_waits.setdefault((p.block.bid, p.index, p.after), []).append(
                    Emit(-1, False, "", call=f"{w.wait}();")
                )
                site.waits.append(
                    {
                        "role": role,
                        "line": self.point_line(p),
                        "where": "before" if p.index < len(p.block.units) else "end-of-block",
                        "flagged": False,
                        "guard": "",
                        "overlap": plan.overlap,
                        "stopped_by": p.why,
                    }
                )

    def emit_site(self, site: Site, flags_used: set[str]) -> None:
        if site.wrapper is not None:
            self.emit_wrapper_site(site, site.wrapper)
            return
        req_arr = self.names["nbcx_req"]
        req = f"&{req_arr}[{site.slot}]"
        call = site.call
        callee = call.children[0]
        blk, idx = self.where[id(site.stmt)]
        if site.persistent:
            args = ", ".join(_norm_arg(self.text(a)) for a in call.exprs()[1:])
            self.emit_persistent(site, req, self.nonblocking_text(site, req), args)
        elif site.batch:
            req = f"&{req_arr}[{site.slot} + {site.batch_index}]"
            self.replaces.append((callee.start, callee.end, mpi.nonblocking_name(site.name)))
            self.replaces.append((call.end - 1, call.end - 1, f", {req}"))
            for p in site.plans["any"].points:
                self.pending_waits.setdefault((p.block.bid, p.index, p.after), []).extend(
                    Emit(site.slot + k, False, "") for k in range(site.batch)
                )
                site.waits.append(
                    {
                        "role": "any",
                        "line": self.point_line(p),
                        "where": "before" if p.index < len(p.block.units) else "end-of-block",
                        "flagged": False,
                        "guard": "",
                        "overlap": site.plans["any"].overlap,
                        "stopped_by": p.why,
                    }
                )
            return
        else:
            self.replaces.append((callee.start, callee.end, mpi.nonblocking_name(site.name)))
            self.replaces.append((call.end - 1, call.end - 1, f", {req}"))
        flagged = any(p.flagged for plan in site.plans.values() for p in plan.points)
        if flagged:
            flags_used.add(site.func.key)
            self.add_insert(blk, idx + 1, 1, [f"{self.names['nbcx_flag']}[{site.slot}] = 1;"])
        for role, plan in site.plans.items():
            for p in plan.points:
                guard = "" if p.implied else site.guards.get(role, "")
                self.pending_waits.setdefault((p.block.bid, p.index, p.after), []).append(
                    Emit(site.slot, p.flagged, guard, clear=flagged)
                )
                site.waits.append(
                    {
                        "role": role,
                        "line": self.point_line(p),
                        "where": "before" if p.index < len(p.block.units) else "end-of-block",
                        "flagged": p.flagged,
                        "guard": guard,
                        "overlap": plan.overlap,
                        "stopped_by": p.why,
                    }
                )

    def point_line(self, p: WaitPoint) -> int:
        if p.index < len(p.block.units):
            return _line_of(self.data, p.block.units[p.index].start)
        if p.block.node is not None:
            return _line_of(self.data, p.block.node.end - 1)
        return _line_of(self.data, self.full_end(p.block.stmts[-1]))

    def merge_waits(self) -> None:
        # Waits of different operations at one boundary, with identical guards, unite
        # when the two roles of a rooted operation wait at the same place.
        for key, emits in self.pending_waits.items():
            by_slot: dict[int, list[Emit]] = {}
            final: list[Emit] = [e for e in emits if e.call]
            for e in emits:
                if not e.call:
                    by_slot.setdefault(e.slot, []).append(e)
            for slot, es in by_slot.items():
                guards = {e.guard for e in es}
                if len(es) >= 2 and "" not in guards and len(guards) == 2:
                    final.append(
                        Emit(slot, any(e.flagged for e in es), "", clear=any(e.clear for e in es))
                    )
                else:
                    final.extend(es)
            blk = self.blocks[key[0]]
            # one item per statement: the configurations of a file (family.py) that
            # wait for the same request at one place write that statement once
            for stmt in _statements(self.wait_lines(final, self.block_func[blk.bid])):
                self.add_insert(blk, key[1], 2, stmt, key[2])

    def run(self) -> bytes:
        """Analyses every collective and returns the rewritten file (one file on its
        own: cli.py keeps matching across the files with matching.keep_matching
        between :meth:`analyse` and :meth:`emit`)."""
        self.analyse()
        return self.emit()

    def analyse(self) -> None:
        """Decides, for every collective of the file, what it can become."""
        self.buffers: dict[tuple[int, str], tuple[set[str], set[str]]] = {}
        self.pending_waits: dict[tuple[int, int, bool], list[Emit]] = {}
        self.nb_calls = {}
        if self.unit.errors:
            self.file_notes.append(
                "not transformed: the file does not parse: " + self.unit.errors[0]
            )
            self.find_sites_safe()
            return
        self.find_sites()
        for s in self.sites:
            if s.action == "candidate":
                self.analyse_site(s)
        self.find_existing_nonblocking()

    def start_then_wait(self, site: Site, why: str) -> None:
        """Converts a site left blocking for a soft reason with its wait where its
        analysis put it (at once after the call when it has no plan)."""
        if not site.plans:
            blk, idx = self.where[id(site.stmt)]
            p = WaitPoint(blk, idx + 1, False, why="start-then-wait")
            site.plans = {"any": Plan([p], 0, "start-then-wait", [])}
            site.guards = {}
        site.action = "nonblocking"
        site.persistent = ""
        site.loop = None
        site.notes.append(f"start-then-wait: {why} (was: {site.reason})")
        site.reason = ""

    def emit(self) -> bytes:
        """Rewrites the file as decided (after :meth:`analyse`)."""
        if self.unit.errors:
            return self.data
        self.emit_sites()
        for f in self.main_functions():
            n = self.counts.get(f.key, 0)
            if n > 0:
                g = self.decl_guard(f)
                self.add_decls(
                    f, n, f.key in self.waitall_funcs, f.key in self.flags_used, (g, g, g)
                )
        return self.render()

    def emit_sites(self) -> None:
        """Everything but the request declarations (:meth:`add_decls`) and the
        twins (:meth:`add_twins`)."""
        for s in self.sites:
            if s.existing_req and s.action == "persistent":
                self._emit_existing(s, s.existing_req)
        self.flags_used: set[str] = set()
        self.counts: dict[str, int] = {}
        for f in self.main_functions():
            n = self.number(f)
            sites = [s for s in self.sites if s.func is f and s.action not in ("blocking",)]
            for s in sites:
                if s.existing_req:
                    continue
                self.emit_site(s, self.flags_used)
            self.counts[f.key] = n
        self.merge_waits()
        self.wrapper_prototypes()

    def add_decls(
        self, f: Function, n: int, stat: bool, flags: bool, guards: tuple[str, str, str]
    ) -> None:
        """The requests (statuses, flags) of ``f``'s converted calls at the top of its
        body; ``guards``: the #if conditions of the three declarations ("" if none)."""
        fb = self.block_of_node[id(f.body)]
        head = f"MPI_Request {self.names['nbcx_req']}[{n}] = {{"
        rows = [", ".join(["MPI_REQUEST_NULL"] * min(4, n - i)) for i in range(0, n, 4)]
        req = [head + rows[0] + ("," if len(rows) > 1 else "};")]
        for j, row in enumerate(rows[1:], 2):
            req.append("\t\t" + row + ("," if j < len(rows) else "};"))
        decls = [(guards[0], req)]
        if stat:
            decls.append((guards[1], [f"MPI_Status {self.names['nbcx_stat']}[{n}];"]))
        if flags:
            decls.append((guards[2], [f"int {self.names['nbcx_flag']}[{n}] = {{0}};"]))
        lines: list[str] = []
        open_guard = ""
        for g, ls in decls:
            if g != open_guard:
                if open_guard:
                    lines.append("#endif")
                if g:
                    lines.append(f"#if {g}")
                open_guard = g
            lines.extend(ls)
        if open_guard:
            lines.append("#endif")
        self.add_insert(fb, 0, 0, lines)

    def _macro_brace_blocks(self, f: Function) -> list[Node]:
        return [
            n
            for n in f.body.walk()
            if n.kind == CK.COMPOUND_STMT
            and (
                self.data[n.start : n.start + 1] != b"{"
                or self.data[n.end - 1 : n.end] != b"}"
                or self.in_macro(n.start)
                or self.in_macro(n.end - 1)
            )
        ]

    def _macro_braces_near(self, f: Function, call: Node) -> bool:
        """Whether a block with braces from a macro expansion may get text for the
        call at ``call`` (issue 34: before, any such block in the function left
        all its calls blocking).  Text goes into the blocks around the call, and
        into the blocks after it that the wait's scan enters (not those in a
        loop that starts after the call: the scan never enters a loop).  A block
        before the call, outside the loops around the call, gets none."""
        blocks = self._macro_brace_blocks(f)
        if not blocks:
            return False
        around: list[Node] = []
        p = call.parent
        while p is not None:
            around.append(p)
            p = p.parent
        loops = [a for a in around if a.kind in LOOPS]
        for b in blocks:
            if any(b is a for a in around):
                return True
            if b.end <= call.start:
                if any(lp.start <= b.start < lp.end for lp in loops):
                    return True
                continue
            q = b.parent
            safe = False
            while q is not None and q is not f.body:
                if q.kind in LOOPS and q.start >= call.end:
                    safe = True
                    break
                q = q.parent
            if not safe:
                return True
        return False

    def _macro_braces(self, f: Function) -> bool:
        """Whether some block's braces are not written in the file (come from a macro)."""
        for n in f.body.walk():
            if n.kind == CK.COMPOUND_STMT:
                if (
                    self.data[n.start : n.start + 1] != b"{"
                    or self.data[n.end - 1 : n.end] != b"}"
                    or self.in_macro(n.start)
                    or self.in_macro(n.end - 1)
                ):
                    return True
        return False

    def main_functions(self) -> list[Function]:
        return [f for f in self.unit.functions.values() if f.in_main]

    def find_sites_safe(self) -> None:
        for f in self.main_functions():
            for n in f.body.walk():
                if n.kind == CK.CALL_EXPR and n.callee in mpi.COLLECTIVES:
                    s = Site(f, n, n, n.callee, n.line, n.col)
                    s.reason = "the file has errors"
                    self.sites.append(s)

    # ------------------------------------------ existing nonblocking in loops
    def find_existing_nonblocking(self) -> None:
        """MPI_Ixxx(..., &req) + MPI_Wait(&req, ...) in a loop -> persistent."""
        if not self.opts.persistent:
            return
        for f in self.main_functions():
            for n in f.body.walk():
                if n.kind != CK.CALL_EXPR:
                    continue
                base = mpi.blocking_name(n.callee)
                if base is None:
                    continue
                self.nb_calls.setdefault(n.callee, set()).add(n.start)
                if id(n) not in self.where:
                    continue
                site = Site(f, n, n, base, n.line, n.col)
                site.notes.append(f"{n.callee} already nonblocking")
                args = n.exprs()[1:]
                if len(args) != len(mpi.COLLECTIVES[base]) + 1:
                    continue
                if self.in_macro(n.start) or self.in_macro(n.end - 1):
                    continue
                loop = self.loop_of(site)
                if loop is None:
                    continue
                why = self.invariant_problem(site, loop, args[:-1])
                reqtext = _norm(self.text(args[-1]))
                for r in args[-1].walk():
                    d = self.an.decls.get(r.ref) if r.kind == CK.DECL_REF_EXPR else None
                    if d is not None and d.kind == "local" and d.scope is not None:
                        if d.scope is loop or _contains(loop, d.scope):
                            why = why or f"the request '{d.name}' is declared inside the loop"
                wait = self._matching_wait(n, reqtext, loop)
                if not why and (not self.own_lines(n) or self.where[id(n)][0].node is None):
                    why = "the call shares its line with other code"
                if not why and wait is None:
                    why = (
                        f"no MPI_Wait({reqtext}, ...) in the same loop body, "
                        "or the request is used elsewhere"
                    )
                if why:
                    site.action = "blocking"
                    site.reason = "left nonblocking: " + why
                    self.sites.append(site)
                    continue
                site.action = "persistent"
                site.loop = loop
                site.existing_req = reqtext
                site.persistent = "hoisted" if self.hoistable(site, loop) else "lazy"
                self.sites.append(site)

    def _matching_wait(self, call: Node, reqtext: str, loop: Node) -> Node | None:
        m = re.fullmatch(r"&\s*([A-Za-z_]\w*)\s*(\[\s*(\d+)\s*\])?", reqtext)
        if not m:
            return None
        var = m.group(1)
        found: Node | None = None
        for n in loop.walk():
            if n.kind == CK.DECL_REF_EXPR and n.spelling == var:
                # every use of the request variable in the loop must be the start or the wait
                par = n.parent
                while par is not None and par.kind not in (CK.CALL_EXPR,) and par is not loop:
                    par = par.parent
                if par is None or par.kind != CK.CALL_EXPR:
                    return None
                if par is call:
                    continue
                if m.group(2):
                    sub = n.parent
                    while sub is not None and sub.kind != CK.ARRAY_SUBSCRIPT_EXPR:
                        sub = sub.parent
                    if sub is None:
                        return None
                    idx = sub.exprs()[1] if len(sub.exprs()) == 2 else None
                    if idx is None or _const(idx) is None:
                        return None
                    if _const(idx) != int(m.group(3)):
                        continue
                if par.callee != "MPI_Wait" or _norm(self.text(par.exprs()[1])) != reqtext:
                    return None
                if (
                    id(par) not in self.where
                    or self.where[id(par)][0] is not self.where[id(call)][0]
                ):
                    return None
                if found is not None:
                    return None
                found = par
        return found

    def _emit_existing(self, site: Site, req: str) -> None:
        args = ", ".join(_norm_arg(self.text(x)) for x in site.call.exprs()[1:-1])
        nb = self.data[site.stmt.start : self.full_end(site.stmt)].decode("utf-8", "replace")
        self.emit_persistent(site, req, nb, args)

    # ----------------------------------------------------------- rendering
    def _boundary_anchor(self, blk: Block, idx: int) -> tuple[int, str]:
        """(offset, indentation) for text inserted at a boundary of a braced block."""
        assert blk.node is not None
        d = self.data
        if idx == 0:
            anchor = blk.node.start + 1
            indent = (
                self._line_indent(blk.units[0].start)
                if blk.units
                else self._line_indent(blk.node.start) + self.indent_unit
            )
        else:
            anchor = blk.units[idx - 1].end
            indent = self._line_indent(blk.units[idx - 1].start)
        # after the rest of the line when it holds only blanks or a comment
        j = anchor
        while j < len(d) and d[j : j + 1] in (b" ", b"\t"):
            j += 1
        if d.startswith(b"//", j):
            k = d.find(b"\n", j)
            return (len(d) if k < 0 else k + 1), indent
        if d.startswith(b"/*", j):
            k = d.find(b"*/", j)
            if k >= 0 and b"\n" not in d[j:k]:
                j = k + 2
                while j < len(d) and d[j : j + 1] in (b" ", b"\t"):
                    j += 1
        if d[j : j + 1] == b"\n":
            return j + 1, indent
        if d[j : j + 2] == b"\r\n":
            return j + 2, indent
        return anchor, "\n" + indent  # code follows on the same line

    def _render_lines(self, lines: list[str], indent: str) -> str:
        out = []
        for ln in lines:
            if ln.startswith("#"):
                out.append(ln + "\n")
            else:
                lvl = len(ln) - len(ln.lstrip("\t"))
                out.append(indent + self.indent_unit * lvl + ln.lstrip("\t") + "\n")
        return "".join(out)

    def render(self) -> bytes:
        chunks, edits = self.resolve()
        for ch in chunks:
            edits += self.chunk_edits(ch)
        if self.need_ext_include:
            off = self._include_anchor()
            edits.append((off, off, 0, PERSISTENT_PRELUDE))
        return apply_edits(self.data, edits)

    def resolve(self) -> tuple[list[Chunk], list[tuple[int, int, int, str]]]:
        """Where the inserted text goes (its chunks, merged with other configurations'
        by :func:`render_family`), and the other edits: (start, end, order, text)."""
        chunks: list[Chunk] = []
        virtual: dict[int, Chunk] = {}
        for (bid, idx, after), all_items in self.inserts.items():
            blk = self.blocks[bid]
            if blk.node is None:
                ch = virtual.get(bid)
                if ch is None:
                    ch = self._virtual_chunk(blk)
                    virtual[bid] = ch
                    chunks.append(ch)
                ch.parts.setdefault(min(idx, 1), []).extend(all_items)
                continue
            nxt: list[tuple[int, list[str]]] = []
            if after:
                nxt = list(all_items)
            elif (
                0 <= idx < len(blk.units)
                and self.has_directive(self._prev_end(blk, idx), blk.units[idx].start)
                and self._starts_line(blk.units[idx].start)
            ):
                # A directive between the two statements: what serves the next one
                # (a persistent init before its loop) goes after the directive.
                nxt = [it for it in all_items if it[1] and it[1][0] in ("@init", "@reset")]
            rest = [it for it in all_items if it not in nxt]
            if rest:
                off, indent = self._boundary_anchor(blk, idx)
                mode = "same" if indent.startswith("\n") else "line"
                chunks.append(Chunk(("at", off), 1, off, list(rest), indent, mode))
            if nxt:
                if idx < len(blk.units):
                    off = self._line_start(blk.units[idx].start)
                    indent = self._line_indent(off)
                else:
                    off = self._line_start(blk.node.end - 1)
                    indent = (
                        self._line_indent(blk.units[-1].start)
                        if blk.units
                        else self._line_indent(blk.node.start) + self.indent_unit
                    )
                chunks.append(Chunk(("next", off), 1, off, list(nxt), indent, "next"))
        edits: list[tuple[int, int, int, str]] = []
        for start, end, text in self.replaces:
            # applied before an insertion at the same offset (edits go from the end,
            # higher order first), so that the insertion lands before the new text
            # instead of inside the range it replaces
            edits.append((start, end, 3, text))
        edits.extend(self.extra_edits)
        return chunks, edits

    def _virtual_chunk(self, blk: Block) -> Chunk:
        """A lone statement (no braces) that gets company: it is wrapped in braces."""
        s = blk.stmts[0]
        owner_indent = self._line_indent(blk.owner.start if blk.owner else s.start)
        p = s.start
        while p > 0 and self.data[p - 1 : p] in (b" ", b"\t", b"\n", b"\r"):
            p -= 1
        own_line = b"\n" in self.data[p : s.start]
        inner = self._line_indent(s.start) if own_line else owner_indent + self.indent_unit
        end = self.full_end(s)
        return Chunk(
            ("virt", s.start), 0, p, [], inner, "virt", (p, s.start, end, owner_indent, inner)
        )

    def group_lines(self, items: list[tuple[int, list[str]]]) -> list[str]:
        """The lines of the items inserted at one place, in order of priority; the
        persistent requests' inits and frees under their #if."""
        lines: list[str] = []
        inits: list[list[str]] = []
        frees: list[list[str]] = []
        resets: list[str] = []
        for _, ls in sorted(items, key=lambda t: t[0]):
            if ls and ls[0] == "@reset":
                resets.extend(ls[1:])
            elif ls and ls[0] == "@init":
                inits.append(ls)
            elif ls and ls[0] == "@free":
                frees.append(ls)
            else:
                lines.extend(ls)
        if frees:
            lines.append("#if NBCX_PERSISTENT")
            for f in frees:
                lines.extend(f[1:])
            lines.append("#endif")
        if inits:
            lines.append("#if NBCX_PERSISTENT == 4")
            lines.extend(i[1] for i in inits)
            lines.append("#elif NBCX_PERSISTENT")
            lines.extend(i[2] for i in inits)
            lines.append("#endif")
        if resets:
            lines += ["#if NBCX_PERSISTENT", *resets, "#endif"]
        return lines

    def chunk_edits(self, ch: Chunk) -> list[tuple[int, int, int, str]]:
        """The edits that write a chunk."""
        if ch.mode == "virt":
            assert ch.virt is not None
            p, sstart, end, owner_indent, inner = ch.virt
            pre_lines = self.group_lines(ch.parts.get(0, []))
            post_lines = self.group_lines(ch.parts.get(1, []))
            if not pre_lines and not post_lines:
                return []
            pre = self._render_lines(pre_lines, inner)
            post = self._render_lines(post_lines, inner)
            return [
                (p, sstart, 0, " {\n" + pre + inner),
                (end, end, 2, "\n" + post + owner_indent + "}"),
            ]
        lines = self.group_lines(ch.items)
        if not lines:
            return []
        indent = ch.indent
        if ch.mode == "next":
            text = self._render_lines(lines, indent)
        elif indent.startswith("\n") and not any(ln.startswith("#") for ln in lines):
            # Code follows on the same line: the inserted statements join that
            # line, so that its layout (and what -Wmisleading-indentation says
            # about it) stays as it was.
            text = " " + " ".join(ln.strip() for ln in lines)
        elif indent.startswith("\n"):
            text = "\n" + self._render_lines(lines, indent[1:]) + indent[1:]
        else:
            text = self._render_lines(lines, indent)
        return [(ch.off, ch.off, ch.order, text)]

    def _include_anchor(self) -> int:
        incs = self.unit.includes
        target = [i for i in incs if i[0] == "mpi.h"] or incs
        if not target:
            return 0
        end = target[-1][2]
        nl = self.data.find(b"\n", end)
        return len(self.data) if nl < 0 else nl + 1


# ---------------------------------------------------------------- helpers
_COND = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")


def _cond_regions(data: bytes) -> list[tuple[int, int, int, str]]:
    """The conditional-compilation branches of a file: (start, end, id, condition).

    ``condition`` is a C preprocessor expression true exactly when the branch is
    compiled (given the same macros): ``defined(X)`` for ``#ifdef X``, the
    negation of the earlier conditions of the group for ``#else``, ..."""
    text = data.decode("utf-8", "replace")
    out: list[tuple[int, int, int, str]] = []
    # stack of groups: (tests of the earlier branches, this branch's test, its whole
    # condition, branch start, branch id)
    stack: list[tuple[list[str], str, str, int, int]] = []
    off = 0
    lines = text.split("\n")
    i = 0
    nid = 0
    pos = 0
    while i < len(lines):
        line = lines[i]
        start = pos
        full = line
        while full.endswith("\\") and i + 1 < len(lines):
            pos += len(lines[i]) + 1
            i += 1
            full = full[:-1] + " " + lines[i]
        pos += len(lines[i]) + 1
        i += 1
        m = _COND.match(full)
        if not m:
            continue
        kind = m.group(1)
        arg = re.sub(r"/\*.*?\*/", " ", m.group(2))
        arg = re.sub(r"//.*", "", arg).strip()
        # byte offsets: the text is decoded, so recompute from the line's bytes
        bstart = len(text[:start].encode())
        bend = len(text[:pos].encode())
        if kind in ("if", "ifdef", "ifndef"):
            cond = {"if": f"({arg})", "ifdef": f"defined({arg})", "ifndef": f"!defined({arg})"}[
                kind
            ]
            nid += 1
            stack.append(([], cond, cond, bend, nid))
            continue
        if not stack:
            continue
        earlier, test, cur, bstart_branch, bid = stack.pop()
        out.append((bstart_branch, bstart, bid, cur))
        earlier = [*earlier, test]
        if kind == "endif":
            continue
        neg = " && ".join(f"!{c}" if c.startswith(("(", "defined")) else f"!({c})" for c in earlier)
        test = f"({arg})"
        cond = neg if kind == "else" else f"{neg} && {test}"
        nid += 1
        stack.append((earlier, test, f"({cond})", bend, nid))
    del off
    return out


def _statements(lines: list[str]) -> list[list[str]]:
    """Lines of wait_lines grouped into statements (an ``if (...) {`` to its ``}``)."""
    out: list[list[str]] = []
    cur: list[str] = []
    for ln in lines:
        if cur:
            cur.append(ln)
            if ln == "}":
                out.append(cur)
                cur = []
        elif ln.startswith("if (") and ln.endswith("{"):
            cur = [ln]
        else:
            out.append([ln])
    if cur:
        out.append(cur)
    return out


def _jump_name(n: Node) -> str:
    return {
        CK.RETURN_STMT: "return",
        CK.GOTO_STMT: "goto",
        CK.INDIRECT_GOTO_STMT: "goto",
        CK.BREAK_STMT: "break",
        CK.CONTINUE_STMT: "continue",
    }.get(n.kind, "jump")


def _first_why(eff: Effects, flag: str) -> str:
    keys = {
        "unknown": ("call to", "not modelled", "pointer", "assembly", "goto", "statement"),
        "fence": ("MPI_Barrier", "MPI_Finalize", "MPI_Abort"),
        "clock": ("clock",),
        "exits": ("exit", "abort", "MPI_Abort"),
        "io": (),
        "mpi": ("MPI_",),
    }[flag]
    for w in eff.why:
        if not keys or any(k in w for k in keys):
            return w
    return eff.why[0] if eff.why else flag


_OPEN = {"if", "ifdef", "ifndef"}


def _gap_kind(text: bytes) -> str:
    """ "open" when the text between two statements is only ``#if``/``#ifdef``/
    ``#ifndef`` lines, "close" when only ``#endif`` lines (blank lines and comments
    aside), else "" (other directives, code compiled out, continued lines)."""
    t = re.sub(rb"/\*.*?\*/", b" ", text, flags=re.S)
    t = re.sub(rb"//[^\n]*", b"", t)
    kinds: set[str] = set()
    for line in t.split(b"\n"):
        w = line.strip()
        if not w:
            continue
        m = re.match(rb"#\s*(\w+)", w)
        if m is None or w.endswith(b"\\"):
            return ""
        name = m.group(1).decode()
        kinds.add("open" if name in _OPEN else "close" if name == "endif" else "other")
    return kinds.pop() if len(kinds) == 1 and "other" not in kinds else ""


def _count(n: Node) -> int:
    k = n.kind
    if k == CK.COMPOUND_STMT:
        return sum(_count(c) for c in n.children)
    if k == CK.NULL_STMT:
        return 0
    if k == CK.IF_STMT:
        return 1 + sum(_count(c) for c in n.children[1:])
    if k in (CK.FOR_STMT, CK.WHILE_STMT, CK.SWITCH_STMT) and n.children:
        return 1 + _count(n.children[-1])
    if k == CK.DO_STMT and n.children:
        return 1 + _count(n.children[0])
    if k in (CK.LABEL_STMT, CK.CASE_STMT, CK.DEFAULT_STMT) and n.children:
        return _count(n.children[-1])
    return 1


def _contains(outer: Node, inner: Node) -> bool:
    n: Node | None = inner
    while n is not None:
        if n is outer:
            return True
        n = n.parent
    return False


def _const(n: Node) -> int | None:
    n = strip(n)
    if n.kind == CK.INTEGER_LITERAL:
        return n.value
    if n.kind == CK.UNARY_OPERATOR and n.op == "-" and n.exprs():
        v = _const(n.exprs()[0])
        return -v if v is not None else None
    return None


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _norm_arg(s: str) -> str:
    """An argument's text on one line (comments dropped) for the *_init call."""
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    s = re.sub(r"//[^\n]*", " ", s)
    return _norm(s)


def _points_key(p: Plan) -> list[tuple[int, int, bool]]:
    return sorted((w.block.bid, w.index, w.flagged) for w in p.points)


# Collectives a loop may batch: (buffer arguments, the count, the datatype).
BATCH_COLLS: dict[str, tuple[tuple[int, ...], int, int]] = {
    "MPI_Bcast": ((0,), 1, 2),
    "MPI_Allreduce": ((0, 1), 2, 3),
    "MPI_Reduce": ((0, 1), 2, 3),
}
BATCH_MAX = 64  # at most this many requests for one batched loop

# MPI's predefined types and the C types (canonical spellings) of the same size.
_MPI_CTYPES: dict[str, tuple[str, ...]] = {
    "MPI_DOUBLE": ("double",),
    "MPI_FLOAT": ("float",),
    "MPI_LONG_DOUBLE": ("long double",),
    "MPI_INT": ("int", "unsigned int"),
    "MPI_UNSIGNED": ("int", "unsigned int"),
    "MPI_LONG": ("long", "unsigned long"),
    "MPI_UNSIGNED_LONG": ("long", "unsigned long"),
    "MPI_LONG_LONG": ("long long", "unsigned long long"),
    "MPI_LONG_LONG_INT": ("long long", "unsigned long long"),
    "MPI_UNSIGNED_LONG_LONG": ("long long", "unsigned long long"),
    "MPI_SHORT": ("short", "unsigned short"),
    "MPI_UNSIGNED_SHORT": ("short", "unsigned short"),
    "MPI_CHAR": ("char", "signed char", "unsigned char"),
    "MPI_SIGNED_CHAR": ("char", "signed char", "unsigned char"),
    "MPI_UNSIGNED_CHAR": ("char", "signed char", "unsigned char"),
    "MPI_BYTE": ("char", "signed char", "unsigned char"),
}
# Fixed-width MPI types: their size in bytes (the element must be an integer of it).
_MPI_FIXED: dict[str, int] = {
    "MPI_INT8_T": 1,
    "MPI_UINT8_T": 1,
    "MPI_INT16_T": 2,
    "MPI_UINT16_T": 2,
    "MPI_INT32_T": 4,
    "MPI_UINT32_T": 4,
    "MPI_INT64_T": 8,
    "MPI_UINT64_T": 8,
}
_C_INTEGERS = {
    t for ts in _MPI_CTYPES.values() for t in ts if t not in ("double", "float", "long double")
}


def _type_fits(mpi_type: str, ctype: str, csize: int) -> bool:
    """Whether one element of ``mpi_type`` is exactly one element of C type ``ctype``."""
    if mpi_type in _MPI_CTYPES:
        return ctype in _MPI_CTYPES[mpi_type]
    if mpi_type in _MPI_FIXED:
        return ctype in _C_INTEGERS and csize == _MPI_FIXED[mpi_type]
    return False


def _int_const(n: Node) -> int | None:
    """An integer literal (also through a macro) or an enumeration constant."""
    v = _const(n)
    if v is not None:
        return v
    n = strip(n)
    if n.kind == CK.DECL_REF_EXPR and n.ref_kind == CK.ENUM_CONSTANT_DECL:
        return n.value
    return None


def _is_var(n: Node, key: str) -> bool:
    n = strip(n)
    return n.kind == CK.DECL_REF_EXPR and n.ref == key


def _element_of(a: Node, var: str) -> Node | None:
    """``&x[var]`` (x an array variable): the ARRAY_SUBSCRIPT_EXPR, else None."""
    e = strip(a)
    if not (e.kind == CK.UNARY_OPERATOR and e.op == "&" and e.exprs()):
        return None
    sub = strip(e.exprs()[0])
    if sub.kind != CK.ARRAY_SUBSCRIPT_EXPR or len(sub.exprs()) != 2:
        return None
    base, idx = sub.exprs()
    b = strip(base)
    if b.kind != CK.DECL_REF_EXPR or not b.is_array or not _is_var(idx, var):
        return None
    return sub
