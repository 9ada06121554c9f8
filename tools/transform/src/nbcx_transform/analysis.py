"""Memory effects of C statements: points-to analysis and function summaries.

Abstract objects (strings):

* ``v:KEY``  a variable (global, static, local or parameter), one object for
  all its elements and fields (field- and array-insensitive, as Petal's
  Steensgaard analysis);
* ``v:KEY#K`` element K of a local array only ever indexed by constants
  (``double *buf[2] = { malloc(), malloc() }; ... buf[0] ... buf[1]``): one
  object per element, so that the two allocations stay apart;
* ``h:OFF``  the memory allocated by the ``malloc``-like call at byte OFF;
* ``c:OFF``  a compound literal, ``s:`` string literals;
* ``r:KEY``  the value returned by the function KEY;
* ``x:``     memory outside this translation unit (what an external caller
  passes, what an unknown function returns); it may alias every *escaped*
  object (non-static globals and what was passed to unknown functions);
* ``*``      anything (an lvalue the analysis could not resolve).

Points-to sets are computed by an inclusion-based (Andersen) analysis over
the whole file.  Effects (objects read and written) of statements are
computed from lvalue contexts (assignment targets are written, ``&x`` is
not an access, everything else that is loaded is read).  Calls to functions
defined in the file use a summary of the callee: the objects it reads and
writes plus, precisely, "what parameter k points to" (mapped at each call to
what the argument points to there), which gives the overlap Petal gets from
inlining without copying code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from clang.cindex import CursorKind as CK  # noqa: N817
from clang.cindex import TypeKind

from nbcx_transform import mpi
from nbcx_transform.clangast import DeclInfo, Function, Node, Unit

ANY = "*"
EXT = "x:"
STR = "s:"

LVALUE_KINDS = {
    CK.DECL_REF_EXPR,
    CK.MEMBER_REF_EXPR,
    CK.ARRAY_SUBSCRIPT_EXPR,
    CK.STRING_LITERAL,
    CK.COMPOUND_LITERAL_EXPR,
}
JUMPS = {CK.RETURN_STMT, CK.GOTO_STMT, CK.INDIRECT_GOTO_STMT, CK.BREAK_STMT, CK.CONTINUE_STMT}
LOOPS = {CK.FOR_STMT, CK.WHILE_STMT, CK.DO_STMT}
CASTS = (
    CK.PAREN_EXPR,
    CK.UNEXPOSED_EXPR,
    CK.CSTYLE_CAST_EXPR,
    CK.CXX_STATIC_CAST_EXPR,
    CK.CXX_CONST_CAST_EXPR,
    CK.CXX_REINTERPRET_CAST_EXPR,
)

# C++ containers whose elements are one object with the container (the analysis
# is field-insensitive): ``v.data()`` points into ``v``, ``v[i]`` is ``v``.
CONTAINERS = ("std::vector", "std::array", "std::valarray")
# their member functions that neither read nor write the elements nor reallocate
CONTAINER_QUIET = {
    "data",
    "size",
    "empty",
    "capacity",
    "max_size",
    "begin",
    "end",
    "cbegin",
    "cend",
    "rbegin",
    "rend",
    "get_allocator",
}
# ... that designate an element (the access is the caller's: read or written)
CONTAINER_ELEMENT = {"operator[]", "at", "front", "back"}


def container_call(n: Node) -> bool:
    """A call of a member function of a standard container."""
    return n.kind == CK.CALL_EXPR and n.method_class in CONTAINERS


def method_object(n: Node) -> Node | None:
    """The object of a C++ member call: ``v`` in ``v.size()``, ``v[i]``, ``p->data()``."""
    kids = n.exprs()
    if not kids:
        return None
    first = kids[0]
    if first.kind == CK.MEMBER_REF_EXPR:
        inner = first.exprs()
        return inner[0] if inner else None
    if n.spelling.startswith("operator") and len(kids) >= 2:
        return first  # an operator call: the object, the operator, the operands
    return None


def method_args(n: Node) -> list[Node]:
    """The arguments of a C++ member call (object and callee left out)."""
    kids = n.exprs()
    if kids and kids[0].kind == CK.MEMBER_REF_EXPR:
        return kids[1:]
    if n.spelling.startswith("operator") and len(kids) >= 2:
        return kids[2:]
    return kids  # constructors: only arguments


def is_lvalue(n: Node) -> bool:
    if n.kind == CK.PAREN_EXPR:
        kids = n.exprs()
        return len(kids) == 1 and is_lvalue(kids[0])
    if n.kind == CK.UNARY_OPERATOR:
        return n.op == "*"
    if n.kind == CK.DECL_REF_EXPR:
        return n.ref_kind in (CK.VAR_DECL, CK.PARM_DECL)
    if container_call(n):
        return n.method in CONTAINER_ELEMENT
    return n.kind in LVALUE_KINDS


def strip(n: Node) -> Node:
    """Through parentheses and implicit or explicit casts."""
    while n.kind in CASTS:
        kids = n.exprs()
        if len(kids) != 1:
            break
        n = kids[0]
    return n


@dataclass
class Effects:
    """What a statement or call may read and write, and what else it does."""

    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)
    # For function summaries: accesses not through a parameter ...
    sreads: set[str] = field(default_factory=set)
    swrites: set[str] = field(default_factory=set)
    # ... and accesses exactly through parameter k.
    preads: set[int] = field(default_factory=set)
    pwrites: set[int] = field(default_factory=set)
    flags: set[str] = field(default_factory=set)  # unknown, fence, io, mpi, exits, clock
    why: list[str] = field(default_factory=list)  # what the flags come from

    def merge(self, other: Effects) -> None:
        self.reads |= other.reads
        self.writes |= other.writes
        self.sreads |= other.sreads
        self.swrites |= other.swrites
        self.preads |= other.preads
        self.pwrites |= other.pwrites
        self.flags |= other.flags
        for w in other.why:
            if w not in self.why:
                self.why.append(w)

    def flag(self, name: str, why: str) -> None:
        self.flags.add(name)
        if why not in self.why:
            self.why.append(why)


@dataclass
class Summary:
    reads: frozenset[str]
    writes: frozenset[str]
    preads: frozenset[int]
    pwrites: frozenset[int]
    flags: frozenset[str]
    why: tuple[str, ...]
    nparams: int = -1  # for summaries of other files' functions: further arguments are variadic
    # whether the function may keep a pointer it is given (store it outside its own
    # locals, return it, pass it on): if not, its arguments do not escape at a call
    keeps: bool = True


class Analysis:
    """Points-to sets, escape information and function summaries of a unit."""

    def __init__(self, unit: Unit, external: dict[str, Summary] | None = None) -> None:
        self.unit = unit
        # summaries of functions defined in other files of the program, by name
        # (objects: "v:KEY" of globals with external linkage, else EXT)
        self.external: dict[str, Summary] = external or {}
        self.decls: dict[str, DeclInfo] = unit.decls
        self.funcs: dict[str, Function] = unit.functions
        self.pts: dict[str, set[str]] = {}
        self.escaped: set[str] = {EXT}
        self.summaries: dict[str, Summary] = {}
        self.prov: dict[str, dict[str, int | None]] = {}
        self._eff_cache: dict[int, Effects] = {}
        # local function pointers: key -> the functions they may hold (None: unknown)
        self._fp_targets: dict[str, set[str] | None] = {}
        self._changed = False
        self._cur: Function | None = None
        self.ret_param: dict[str, int] = {}
        self.allocators: set[str] = set()
        for f in self.funcs.values():
            self.prov[f.key] = self._param_provenance(f)
            self._returns_param(f)
        for f in self.funcs.values():
            if self._is_allocator(f):
                self.allocators.add(f.key)
        # local arrays indexed only by constants: key -> the indices used
        self.split: dict[str, set[int]] = self._split_arrays()
        self._points_to()
        self._summarise()

    def _is_allocator(self, f: Function) -> bool:
        """``double *new_vector(int n) { double *v = malloc(...); ...; return v; }``:
        each call returns fresh memory, so each call site gets its own object
        (otherwise every vector made by the helper would alias every other)."""
        allocs = ("malloc", "calloc", "aligned_alloc")
        local = ""
        returns = [n for n in f.body.walk() if n.kind == CK.RETURN_STMT]
        if not returns:
            return False
        for r in returns:
            kids = r.exprs()
            if not kids:
                return False
            e = strip(kids[0])
            if e.kind == CK.CALL_EXPR and e.callee in allocs:
                continue
            if e.kind == CK.INTEGER_LITERAL and e.value == 0:
                continue  # return NULL
            if e.kind != CK.DECL_REF_EXPR:
                return False
            d = self.decls.get(e.ref)
            if d is None or d.kind != "local" or d.func != f.key or (local and local != e.ref):
                return False
            local = e.ref
        for n in f.body.walk():
            # storing pointers into memory would give the block contents to track
            if n.kind == CK.BINARY_OPERATOR and n.op == "=":
                lhs = strip(n.exprs()[0])
                if lhs.is_pointer and lhs.kind != CK.DECL_REF_EXPR:
                    return False
        if not local:
            return True
        for n in f.body.walk():
            kids = n.exprs()
            if n.kind == CK.DECL_REF_EXPR and n.ref == local:
                par = n.parent
                while par is not None and par.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR):
                    par = par.parent
                if par is None:
                    return False
                if par.kind == CK.UNARY_OPERATOR and par.op == "&":
                    return False
                if par.kind == CK.CALL_EXPR and par.callee not in ("memset", "free"):
                    return False
                if par.kind == CK.BINARY_OPERATOR and par.op == "=":
                    lhs = strip(par.exprs()[0])
                    if not (lhs.kind == CK.DECL_REF_EXPR and lhs.ref == local):
                        return False  # stored somewhere
                    rhs = strip(par.exprs()[1])
                    if not (rhs.kind == CK.CALL_EXPR and rhs.callee in allocs):
                        return False
                if par.kind == CK.VAR_DECL:
                    return False
            if n.kind == CK.VAR_DECL and n.key == local and kids:
                init = strip(kids[-1])
                if not (init.kind == CK.CALL_EXPR and init.callee in allocs):
                    return False
        return True

    def _split_arrays(self) -> dict[str, set[int]]:
        """Local arrays (of anything but arrays) whose every use is ``a[K]`` with K an
        integer constant (or ``sizeof a``) and whose initializer, if any, is a plain
        brace list: each element is an object of its own (``v:KEY#K``)."""
        cands: dict[str, set[int]] = {}
        bad: set[str] = set()
        for key, d in self.decls.items():
            if d.kind == "local" and d.is_array:
                cands[key] = set()
        if not cands:
            return {}
        for f in self.funcs.values():
            for n in f.body.walk():
                if n.kind == CK.VAR_DECL and n.key in cands:
                    kids = n.exprs()
                    if not kids:
                        continue
                    init = kids[-1]
                    text = self.unit.data[init.start : init.end].decode("utf-8", "replace")
                    if init.kind != CK.INIT_LIST_EXPR or re.search(r"[{,]\s*[\[.]", text):
                        bad.add(n.key)  # a string, a copy or designated initializers
                        continue
                    items = init.exprs()
                    if any(i.kind == CK.INIT_LIST_EXPR and len(i.exprs()) > 1 for i in items):
                        bad.add(n.key)
                    cands[n.key].update(range(len(items)))
                    continue
                if n.kind != CK.DECL_REF_EXPR or n.ref not in cands:
                    continue
                par = n.parent
                while par is not None and par.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR):
                    par = par.parent
                if par is not None and par.kind == CK.CXX_UNARY_EXPR:
                    continue  # sizeof a
                k = _subscript_const(par, n) if par is not None else None
                if (
                    par is None
                    or k is None
                    or k < 0
                    or par.is_array
                    or par.is_record  # brace elision: list items would not be elements
                    or _address_taken(par)
                ):
                    bad.add(n.ref)  # &a[K] + 1 could reach another element
                else:
                    cands[n.ref].add(k)
        for g in self.unit.globals_init:
            for n in g.walk():
                if n.kind == CK.DECL_REF_EXPR:
                    bad.add(n.ref)
        return {k: v for k, v in cands.items() if k not in bad}

    def _elem(self, n: Node) -> str:
        """``v:KEY#K`` for ``a[K]`` of a split array ``a`` ("" otherwise)."""
        if n.kind != CK.ARRAY_SUBSCRIPT_EXPR:
            return ""
        kids = n.exprs()
        if len(kids) != 2:
            return ""
        base = strip(kids[0])
        if base.kind != CK.DECL_REF_EXPR or base.ref not in self.split:
            return ""
        k = _subscript_const(n, base)
        return f"v:{base.ref}#{k}" if k is not None else ""

    def _returns_param(self, f: Function) -> None:
        """Functions that always return a pointer derived from parameter k (like
        ``double *scale(double *a, ...) { ...; return a; }``): a call's value is then
        what its k-th argument points to, not the union over all callers."""
        ks: set[int | None] = set()
        for n in f.body.walk():
            if n.kind == CK.RETURN_STMT:
                kids = n.exprs()
                ks.add(self._prov(kids[0], self.prov[f.key]) if kids else None)
        if len(ks) == 1:
            k = next(iter(ks))
            if k is not None:
                self.ret_param[f.key] = k

    # ---------------------------------------------------------------- objects
    def var_obj(self, key: str) -> str:
        return "v:" + key

    def obj_name(self, o: str) -> str:
        if o == ANY:
            return "unknown memory"
        if o == EXT:
            if self.unit.cxx:
                return "memory outside this file (or a member of this object)"
            return "memory outside this file"
        if o.startswith("v:"):
            key, _, k = o[2:].partition("#")
            d = self.decls.get(key)
            return (f"{d.name}[{k}]" if k else d.name) if d else o
        if o.startswith("h:"):
            line = self.unit.data[: int(o[2:])].count(b"\n") + 1
            names = sorted(
                {
                    self.obj_name(v)
                    for v, p in self.pts.items()
                    if o in p
                    and v.startswith("v:")
                    and v[2:].partition("#")[0] in self.decls
                    and len(p) <= 2
                }
            )
            who = f" ({', '.join(names[:2])})" if names else ""
            return f"memory allocated at line {line}{who}"
        if o.startswith("r:"):
            return "return value"
        return "literal"

    def externally_visible(self, f: Function) -> bool:
        return (
            bool(f.cxx_kind)
            or not f.static
            or f.key in self.unit.address_taken_functions
            or f.name == "main"
        )

    # ------------------------------------------------------------- points-to
    def _add(self, o: str, vals: set[str]) -> None:
        if not vals:
            return
        if o in (ANY, EXT):
            self._escape(vals)
            return
        cur = self.pts.setdefault(o, set())
        if not vals <= cur:
            cur |= vals
            self._changed = True

    def _escape(self, vals: Iterable[str]) -> None:
        todo = [v for v in vals if v not in self.escaped]
        while todo:
            v = todo.pop()
            if v in self.escaped:
                continue
            self.escaped.add(v)
            self._changed = True
            todo.extend(x for x in self.pts.get(v, ()) if x not in self.escaped)

    def load(self, objs: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for o in objs:
            if o == ANY:
                return {ANY}
            if o == EXT:
                out |= self.escaped
            else:
                out |= self.pts.get(o, set())
        return out

    def lv(self, n: Node) -> set[str]:
        """Objects the lvalue ``n`` may designate."""
        k = n.kind
        kids = n.exprs()
        if k == CK.PAREN_EXPR and len(kids) == 1:
            return self.lv(kids[0])
        if k == CK.DECL_REF_EXPR:
            if n.ref_kind in (CK.VAR_DECL, CK.PARM_DECL):
                d = self.decls.get(n.ref)
                if d is not None and d.is_ref:
                    # a C++ reference: the objects it was bound to
                    return self.load({self.var_obj(n.ref)}) or {ANY}
                return {self.var_obj(n.ref)}
            return set()
        if container_call(n) and n.method in CONTAINER_ELEMENT:
            return self.container_objs(n)
        if k == CK.MEMBER_REF_EXPR:
            if n.ref_result:
                return {ANY}  # a reference member
            if not kids:
                # implicit this->: the object of a member function, as this-> below
                return {EXT}
            base = kids[0]
            return self.val(base) if base.is_pointer else self.lv(base)
        if k == CK.ARRAY_SUBSCRIPT_EXPR:
            el = self._elem(n)
            if el:
                return {el}
            ptrs = [c for c in kids if c.is_pointer]
            if len(ptrs) == 1:
                return self.val(ptrs[0])
            out: set[str] = set()
            for c in kids:
                out |= self.val(c)
            return out or {ANY}
        if k == CK.UNARY_OPERATOR and n.op == "*" and kids:
            return self.val(kids[0])
        if k == CK.STRING_LITERAL:
            return {STR}
        if k == CK.COMPOUND_LITERAL_EXPR:
            return {f"c:{n.start}"}
        if k in CASTS and len(kids) == 1:
            return self.lv(kids[0])
        return {ANY}

    def container_objs(self, n: Node) -> set[str]:
        """The objects of the container of the member call ``n`` (its elements)."""
        obj = method_object(n)
        if obj is None:
            return {ANY}
        return (self.val(obj) if strip(obj).is_pointer else self.lv(obj)) or {ANY}

    def val(self, n: Node) -> set[str]:
        """Objects the value of expression ``n`` may point into."""
        k = n.kind
        kids = n.exprs()
        if k in (
            CK.INTEGER_LITERAL,
            CK.FLOATING_LITERAL,
            CK.CHARACTER_LITERAL,
            CK.CXX_UNARY_EXPR,
        ):
            return set()
        if k == CK.UNEXPOSED_EXPR and len(kids) == 1:
            c = kids[0]
            if c.is_array:
                return self.lv(c)
            if c.is_func_type:
                return set()
            if is_lvalue(c):
                return self.load(self.lv(c))
            return self.val(c)
        if k in CASTS and k != CK.UNEXPOSED_EXPR and len(kids) == 1:
            return self.val(kids[0])
        if k == CK.CXX_NEW_EXPR:
            return {f"h:{n.start}"}
        if k == CK.CXX_THIS_EXPR:
            # the object of a member function: whatever its callers (not seen: member
            # calls are not analysed) pass, memory outside this function's own objects
            return {EXT}
        if is_lvalue(n):
            if n.kind == CK.DECL_REF_EXPR and n.ref_kind == CK.FUNCTION_DECL:
                return set()
            if n.is_array:
                return self.lv(n)
            return self.load(self.lv(n))
        if k == CK.UNARY_OPERATOR and kids:
            if n.op == "&":
                return self.lv(kids[0])
            if n.op == "!":
                return set()
            return self.val(kids[0])
        if k == CK.BINARY_OPERATOR and len(kids) == 2:
            if n.op in ("=", ","):
                return self.val(kids[1])
            if n.op in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
                return set()
            return self.val(kids[0]) | self.val(kids[1])
        if k == CK.COMPOUND_ASSIGNMENT_OPERATOR and len(kids) == 2:
            return self.load(self.lv(kids[0])) | self.val(kids[1])
        if k == CK.CONDITIONAL_OPERATOR:
            out: set[str] = set()
            for c in kids[1:] if len(kids) == 3 else kids:
                out |= self.val(c)
            return out
        if k == CK.CALL_EXPR:
            return self._call_val(n)
        if k == CK.DECL_REF_EXPR:
            return set()
        out = set()
        for c in kids:
            out |= self.val(c)
        if n.is_pointer and not out:
            # A pointer the analysis does not model (C++ new, a statement expression,
            # ...): it may point anywhere.
            return {ANY}
        return out

    def _call_val(self, n: Node) -> set[str]:
        if n.method:
            if container_call(n):
                if n.method == "data":
                    return self.container_objs(n)
                if n.method in CONTAINER_ELEMENT:
                    return self.load(self.container_objs(n))
                return set()
            # another class's member function: its result may point anywhere
            return {ANY} if n.is_pointer else set()
        args = n.exprs()[1:]
        k = self.ret_param.get(n.callee_key)
        if k is not None and k < len(args):
            return self.val(args[k])
        if n.callee_key in self.allocators:
            return {f"h:{n.start}"}
        if n.callee_key in self.funcs:
            return set(self.pts.get("r:" + n.callee_key, set()))
        spec = mpi.lookup(n.callee, n.callee_header) if n.callee else None
        if spec is not None:
            if spec.ret == "alloc":
                out = {f"h:{n.start}"}
                if n.callee == "realloc" and args:
                    out |= self.val(args[0])
                return out
            if spec.ret == "arg0" and args:
                return self.val(args[0])
            return set()
        if n.callee.startswith(("MPI_", "PMPI_")) or n.callee in mpi.COLLECTIVES:
            return set()
        return {EXT}

    def _flow(self, root: Node, func: Function | None) -> None:
        for n in root.walk():
            k = n.kind
            kids = n.exprs()
            if k == CK.CALL_EXPR and n.method and not container_call(n):
                # a member function's object is its ``this``, which the member
                # function's analysis takes for memory outside it (EXT): escaped
                obj = method_object(n)
                if obj is not None:
                    objs = self.val(obj) if strip(obj).is_pointer else self.lv(obj)
                    self._escape(o for o in objs if o not in (ANY, EXT))
            if k == CK.VAR_DECL and n.cxx_object and n.cxx_object not in CONTAINERS:
                self._escape({self.var_obj(n.key)})  # its constructor's ``this``
            if k in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR) and len(kids) == 2:
                if n.op == "=" or k == CK.COMPOUND_ASSIGNMENT_OPERATOR:
                    vals = self.val(kids[1])
                    for o in self.lv(kids[0]):
                        self._add(o, vals)
            elif k == CK.VAR_DECL and kids and n.key in self.split:
                for i, e in enumerate(kids[-1].exprs()):
                    self._add(f"v:{n.key}#{i}", self.val(e))
            elif k == CK.VAR_DECL and kids and self._is_ref(n.key):
                self._add(self.var_obj(n.key), self.lv(kids[-1]))
            elif k == CK.VAR_DECL and kids:
                self._add(self.var_obj(n.key), self.val(kids[-1]))
            elif k == CK.INIT_LIST_EXPR:
                pass
            elif k == CK.RETURN_STMT and kids and func is not None:
                self._add("r:" + func.key, self.val(kids[0]))
            elif k == CK.CALL_EXPR:
                args = n.exprs()[1:]
                g = self.funcs.get(n.callee_key)
                if g is not None:
                    for i, a in enumerate(args):
                        if i < len(g.params) and self._is_ref(g.params[i]):
                            self._add(self.var_obj(g.params[i]), self.lv(a))
                        elif i < len(g.params):
                            self._add(self.var_obj(g.params[i]), self.val(a))
                        else:
                            self._escape(self.val(a))
                    continue
                spec = mpi.lookup(n.callee, n.callee_header) if n.callee else None
                if spec is not None:
                    if n.callee in ("memcpy", "memmove") and len(args) >= 2:
                        src = self.load(self.val(args[1]))
                        for o in self.val(args[0]):
                            self._add(o, src)
                    if spec.ret in ("alloc_out", "alloc_out0") and spec.args:
                        # MPI_Alloc_mem(size, info, &ptr): ptr gets fresh memory
                        k = len(spec.args) - 1 if spec.ret == "alloc_out" else 0
                        if k < len(args):
                            for o in self.val(args[k]):
                                self._add(o, {f"h:{n.start}"})
                    continue
                if n.callee.startswith(("MPI_", "PMPI_")):
                    # MPI keeps no pointer the program could write through later, but
                    # an unmodelled MPI call may store a pointer through ``&p``.
                    for a in args:
                        e = strip(a)
                        if e.kind == CK.UNARY_OPERATOR and e.op == "&" and e.exprs():
                            t = strip(e.exprs()[0])
                            if t.is_pointer:
                                for o in self.lv(t):
                                    self._add(o, {ANY})
                    continue
                ext = self.external.get(n.callee) if n.callee and not n.method_class else None
                if ext is not None and not ext.keeps:
                    continue
                for a in args:
                    self._escape(self.val(a))

    def _is_ref(self, key: str) -> bool:
        d = self.decls.get(key)
        return d is not None and d.is_ref

    def _keeps(self, f: Function) -> bool:
        """Whether ``f`` may keep a pointer it is given (see :attr:`Summary.keeps`), or
        reach memory through one other than what it points to (``s->ptr[0] = 1``:
        the caller's objects behind ``s->ptr`` must then be escaped)."""
        summ = self.summaries.get(f.key)
        if summ is None or {ANY, EXT} & (summ.reads | summ.writes):
            return True
        for n in f.body.walk():
            kids = n.exprs()
            if n.kind == CK.CALL_EXPR:
                if n.callee in mpi.COLLECTIVES:
                    continue
                spec = mpi.lookup(n.callee, n.callee_header) if n.callee else None
                if spec is None or spec.ret.startswith("alloc_out"):
                    return True
                if n.callee in ("memcpy", "memmove", "realloc"):
                    return True
            elif n.kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR) and len(kids) == 2:
                if n.op == "=" or n.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR:
                    rhs = kids[1]
                    if rhs.is_pointer or rhs.is_record or strip(rhs).is_pointer:
                        lhs = strip(kids[0])
                        d = self.decls.get(lhs.ref) if lhs.kind == CK.DECL_REF_EXPR else None
                        if d is None or d.kind not in ("local", "param") or d.func != f.key:
                            return True
            elif n.kind == CK.VAR_DECL and n.key in self.decls:
                if self.decls[n.key].kind != "local" and kids:
                    return True
            elif n.kind == CK.RETURN_STMT and kids:
                if kids[0].is_pointer or kids[0].is_record or strip(kids[0]).is_pointer:
                    return True
            elif n.kind in (CK.ASM_STMT, CK.MS_ASM_STMT, CK.UNEXPOSED_STMT):
                return True
        return False

    def _points_to(self) -> None:
        for key, d in self.decls.items():
            if d.kind == "global" and not d.linkage_static:
                self.escaped.add(self.var_obj(key))
        for f in self.funcs.values():
            if self.externally_visible(f):
                for p in f.params:
                    self.pts.setdefault(self.var_obj(p), set()).add(EXT)
        for _ in range(50):
            self._changed = False
            for g in self.unit.globals_init:
                self._flow(g, None)
            for f in self.funcs.values():
                self._flow(f.body, f)
            self._escape(list(self.escaped))
            for o in list(self.escaped):
                if o not in (EXT, ANY) and EXT not in self.pts.setdefault(o, set()):
                    self.pts[o].add(EXT)
                    self._changed = True
            if not self._changed:
                break

    def aliases(self, a: set[str], b: set[str]) -> bool:
        """Whether some object of ``a`` may be some object of ``b``."""
        if not a or not b:
            return False
        if ANY in a or ANY in b:
            return True
        if a & b:
            return True
        if EXT in a and (b & self.escaped):
            return True
        return EXT in b and bool(a & self.escaped)

    # ------------------------------------------------------------ provenance
    def _param_provenance(self, f: Function) -> dict[str, int | None]:
        """Local pointers whose value is always derived from exactly one parameter."""
        vp: dict[str, int | None] = {}
        for i, p in enumerate(f.params):
            vp[p] = i
        taken: set[str] = set()
        for n in f.body.walk():
            if n.kind == CK.UNARY_OPERATOR and n.op == "&":
                kids = n.exprs()
                if kids and strip(kids[0]).kind == CK.DECL_REF_EXPR:
                    taken.add(strip(kids[0]).ref)
        for _ in range(10):
            changed = False
            for n in f.body.walk():
                target = ""
                src: Node | None = None
                kids = n.exprs()
                if n.kind == CK.BINARY_OPERATOR and n.op == "=" and len(kids) == 2:
                    lhs = strip(kids[0])
                    if lhs.kind == CK.DECL_REF_EXPR:
                        target, src = lhs.ref, kids[1]
                elif n.kind == CK.VAR_DECL and kids:
                    target, src = n.key, kids[-1]
                if not target or target not in self.decls:
                    continue
                d = self.decls[target]
                if d.kind not in ("local", "param") or d.func != f.key:
                    continue
                pv = self._prov(src, vp) if src is not None else None
                old = vp.get(target, -1)
                if old == -1:
                    new: int | None = pv
                elif old != pv:
                    new = None
                else:
                    continue
                if vp.get(target, -1) != new:
                    vp[target] = new
                    changed = True
            if not changed:
                break
        for t in taken:
            vp[t] = None
        return vp

    def _prov(self, n: Node, vp: dict[str, int | None]) -> int | None:
        k = n.kind
        kids = n.exprs()
        if k in (CK.PAREN_EXPR, CK.CSTYLE_CAST_EXPR, CK.UNEXPOSED_EXPR) and len(kids) == 1:
            c = kids[0]
            if k == CK.UNEXPOSED_EXPR and c.is_array:
                return self._lprov(c, vp)
            if c.kind == CK.DECL_REF_EXPR:
                v = vp.get(c.ref, -1)
                return v if isinstance(v, int) and v >= 0 else None
            if is_lvalue(c):
                return None
            return self._prov(c, vp)
        if k == CK.DECL_REF_EXPR:
            v = vp.get(n.ref, -1)
            return v if isinstance(v, int) and v >= 0 else None
        if k == CK.BINARY_OPERATOR and n.op in ("+", "-") and len(kids) == 2:
            ptrs = [c for c in kids if c.is_pointer or c.is_array]
            if len(ptrs) == 1:
                return self._prov(ptrs[0], vp)
            return None
        if k == CK.UNARY_OPERATOR and kids:
            if n.op == "&":
                return self._lprov(kids[0], vp)
            if n.op in ("++", "--", "post++", "post--"):
                return self._prov(kids[0], vp)
        return None

    def _lprov(self, n: Node, vp: dict[str, int | None]) -> int | None:
        k = n.kind
        kids = n.exprs()
        if k == CK.PAREN_EXPR and len(kids) == 1:
            return self._lprov(kids[0], vp)
        if k == CK.UNARY_OPERATOR and n.op == "*" and kids:
            return self._prov(kids[0], vp)
        if k == CK.ARRAY_SUBSCRIPT_EXPR:
            ptrs = [c for c in kids if c.is_pointer]
            return self._prov(ptrs[0], vp) if len(ptrs) == 1 else None
        if k == CK.MEMBER_REF_EXPR and kids:
            base = kids[0]
            return self._prov(base, vp) if base.is_pointer else self._lprov(base, vp)
        return None

    def prov_of(self, n: Node) -> int | None:
        if self._cur is None:
            return None
        return self._prov(n, self.prov[self._cur.key])

    def lprov_of(self, n: Node) -> int | None:
        if self._cur is None:
            return None
        return self._lprov(n, self.prov[self._cur.key])

    # --------------------------------------------------------------- effects
    def effects(self, n: Node, func: Function) -> Effects:
        """Reads, writes and flags of statement or expression ``n`` in ``func``."""
        cached = self._eff_cache.get(id(n))
        if cached is not None:
            return cached
        saved = self._cur
        self._cur = func
        eff = Effects()
        self._visit(n, "r", eff)
        self._cur = saved
        self._eff_cache[id(n)] = eff
        return eff

    def _access(self, objs: set[str], pk: int | None, mode: str, eff: Effects) -> None:
        if mode in ("r", "rw"):
            eff.reads |= objs
            if pk is not None:
                eff.preads.add(pk)
            else:
                eff.sreads |= objs
        if mode in ("w", "rw"):
            eff.writes |= objs
            if pk is not None:
                eff.pwrites.add(pk)
            else:
                eff.swrites |= objs

    def _visit(self, n: Node, mode: str, eff: Effects) -> None:
        k = n.kind
        kids = n.exprs()
        if self._cur is not None and self._cur.cxx_kind == "template" and _dependent(n):
            # a template's body as written: an operation on a value whose type depends
            # on a template parameter may call any function of the argument type
            # (a constructor, an operator, a conversion)
            eff.flag(
                "unknown",
                f"an expression of a type that depends on a template parameter at line "
                f"{n.line} (it may call a function of the template argument)",
            )
        if k == CK.CXX_UNARY_EXPR:
            return
        if k == CK.PAREN_EXPR:
            for c in kids:
                self._visit(c, mode, eff)
            return
        if k == CK.UNEXPOSED_EXPR:
            if len(kids) == 1:
                c = kids[0]
                self._visit(c, "addr" if (c.is_array or c.is_func_type) else "r", eff)
            else:
                for c in n.children:
                    self._visit(c, "r", eff)
            return
        if k == CK.DECL_REF_EXPR:
            if n.ref_kind in (CK.VAR_DECL, CK.PARM_DECL) and mode not in ("addr", "none"):
                self._access(self.lv(n), None, mode, eff)
            return
        if k == CK.MEMBER_REF_EXPR:
            if mode not in ("addr", "none"):
                self._access(self.lv(n), self.lprov_of(n), mode, eff)
            if kids:
                self._visit(kids[0], "r" if kids[0].is_pointer else "addr", eff)
            return
        if k == CK.ARRAY_SUBSCRIPT_EXPR:
            if mode not in ("addr", "none"):
                self._access(self.lv(n), self.lprov_of(n), mode, eff)
            for c in kids:
                self._visit(c, "r", eff)
            return
        if k == CK.UNARY_OPERATOR and kids:
            if n.op == "*":
                if mode not in ("addr", "none"):
                    self._access(self.lv(n), self.lprov_of(n), mode, eff)
                self._visit(kids[0], "r", eff)
            elif n.op == "&":
                self._visit(kids[0], "addr", eff)
            elif n.op in ("++", "--", "post++", "post--"):
                self._visit(kids[0], "rw", eff)
            else:
                self._visit(kids[0], "r", eff)
            return
        if k == CK.BINARY_OPERATOR and len(kids) == 2:
            self._visit(kids[0], "w" if n.op == "=" else "r", eff)
            self._visit(kids[1], "r", eff)
            return
        if k == CK.COMPOUND_ASSIGNMENT_OPERATOR and len(kids) == 2:
            self._visit(kids[0], "rw", eff)
            self._visit(kids[1], "r", eff)
            return
        if k == CK.CALL_EXPR and (n.method or container_call(n)):
            self._method_call(n, mode, eff)
            return
        if k == CK.CALL_EXPR:
            self._call(n, eff)
            if n.ref_result and mode not in ("addr", "none"):
                # a C++ function returning a reference: what it designates is unknown
                self._access({ANY}, None, mode, eff)
            return
        if k == CK.CXX_DELETE_EXPR:
            # freeing: as a write of what is freed
            for c in kids:
                self._access(self.val(c), None, "rw", eff)
                self._visit(c, "r", eff)
            return
        if k in (CK.CXX_THROW_EXPR, CK.CXX_TRY_STMT):
            eff.flag("unknown", f"C++ exception handling at line {n.line}")
        if k == CK.VAR_DECL and n.cxx_object and n.cxx_object not in CONTAINERS:
            eff.flag(
                "unknown",
                f"a {n.cxx_object} object at line {n.line} (its constructor and destructor "
                "are not analysed)",
            )
        if k == CK.VAR_DECL and kids and self._is_ref(n.key):
            # binding a reference accesses nothing; its initialiser is evaluated
            self._visit(kids[-1], "addr" if is_lvalue(strip(kids[-1])) else "r", eff)
            return
        if k == CK.VAR_DECL:
            if kids and n.key in self.split:
                objs = {f"v:{n.key}#{i}" for i in self.split[n.key]} | {self.var_obj(n.key)}
                self._access(objs, None, "w", eff)
                self._visit(kids[-1], "r", eff)
            elif kids:
                self._access({self.var_obj(n.key)}, None, "w", eff)
                self._visit(kids[-1], "r", eff)
            return
        if k == CK.COMPOUND_LITERAL_EXPR:
            self._access(self.lv(n), None, "w", eff)
            if mode not in ("addr", "none"):
                self._access(self.lv(n), None, mode, eff)
            for c in kids:
                self._visit(c, "r", eff)
            return
        if k in (CK.ASM_STMT, CK.MS_ASM_STMT):
            eff.flag("unknown", f"inline assembly at line {n.line}")
            return
        if k == CK.INDIRECT_GOTO_STMT:
            eff.flag("unknown", f"computed goto at line {n.line}")
        if k.name.startswith("OMP_"):
            # (with -fopenmp) its code is a captured statement libclang does not show
            eff.flag("unknown", f"OpenMP directive at line {n.line} (not analysed)")
            return
        if k == CK.UNEXPOSED_STMT:
            eff.flag("unknown", f"statement the analysis does not model at line {n.line}")
        for c in n.children:
            self._visit(c, "r", eff)

    def _method_call(self, n: Node, mode: str, eff: Effects) -> None:
        """A C++ member function or constructor call: standard containers are
        modelled, other classes' member functions are not (they stop a wait)."""
        obj = method_object(n)
        args = method_args(n)
        if obj is not None:
            self._visit(obj, "r" if strip(obj).is_pointer else "addr", eff)
        for a in args:
            self._visit(a, "r", eff)
        if container_call(n):
            if n.method in CONTAINER_QUIET or n.method == n.method_class.rpartition("::")[2]:
                return  # constructors: the VAR_DECL writes the new container
            if n.method in CONTAINER_ELEMENT:
                if mode not in ("addr", "none"):
                    self._access(self.container_objs(n), None, mode, eff)
                return
            # resize, push_back, assign, operator=, swap, ...: may reallocate
            self._access(self.container_objs(n), None, "rw", eff)
            for a in args:
                if is_lvalue(strip(a)):
                    self._access(self._reach(self.lv(a)), None, "rw", eff)
            return
        kids = n.exprs()
        g = self.funcs.get(n.method_key) if n.method_key and not n.method_virtual else None
        if g is not None and kids and kids[0].kind == CK.MEMBER_REF_EXPR:
            # a member function of this file, called by name (``o.f()``, ``p->f()``,
            # ``f()`` in a member): its summary, in which its ``this`` is memory outside
            # it (EXT); the object of every member call escapes (``_flow``), so EXT
            # covers it.  Arguments bound to reference parameters: read and written.
            self._ref_args(n, args, eff)
            s = self.summaries.get(g.key)
            if s is not None:
                self._apply_summary(n, g, s, args, eff)
            return
        cls = n.method_class or "a class"
        if cls.startswith("(lambda"):
            eff.flag("unknown", f"call of a lambda at line {n.line} (its body is not analysed)")
        else:
            eff.flag(
                "unknown",
                f"call of {cls}::{n.method}() at line {n.line} (C++ member functions are "
                "not analysed)",
            )

    def _ref_args(self, n: Node, args: list[Node], eff: Effects) -> None:
        """Arguments bound to C++ reference parameters: read (``const T&``) or read
        and written, with all they reach."""
        params = n.callee_params or ()
        for a, t in zip(args, params, strict=False):
            if "&" not in t:
                continue
            objs = self._reach(self.lv(a) if is_lvalue(strip(a)) else self.val(a))
            self._access(objs, None, "r" if t.startswith("const ") else "rw", eff)

    def _arg_access(self, a: Node, mode: str, eff: Effects) -> None:
        self._access(self.val(a), self.prov_of(a), mode, eff)

    def _call(self, n: Node, eff: Effects) -> None:
        kids = n.exprs()
        args = kids[1:]
        if kids:
            self._visit(kids[0], "r", eff)
        for a in args:
            self._visit(a, "r", eff)
        name = n.callee
        if not name:
            targets = self.pointer_targets(kids[0]) if kids else None
            if targets is None:
                eff.flag("unknown", f"call through a function pointer at line {n.line}")
                return
            # issue 34: a local pointer only ever set to functions of this file
            for tg in targets:
                ts = self.summaries.get(tg.key)
                if ts is not None:
                    self._apply_summary(n, tg, ts, args, eff)
            return
        if name in mpi.COLLECTIVES and n.tkind == TypeKind.DEPENDENT:
            # a template's collective on dependent arguments: its buffers' objects
            # (its arguments' values are not uses of the template argument's functions)
            roles = mpi.COLLECTIVES[name]
            for a, role in zip(args, roles, strict=False):
                r = role.split("@")[0]
                if r in ("S", "A"):
                    self._arg_access(a, "r", eff)
                elif r in ("R", "B"):
                    self._arg_access(a, "rw", eff)
            eff.flag("mpi", f"{name} at line {n.line}")
            return
        if self.unit.cxx:
            self._ref_args(n, args, eff)
        if name in mpi.COLLECTIVES:
            roles = mpi.COLLECTIVES[name]
            for a, role in zip(args, roles, strict=False):
                r = role.split("@")[0]
                if r in ("S", "A"):
                    self._arg_access(a, "r", eff)
                elif r in ("R", "B"):
                    self._arg_access(a, "rw", eff)
            eff.flag("mpi", f"{name} at line {n.line}")
            if name == "MPI_Barrier":
                eff.flag("fence", f"MPI_Barrier at line {n.line}")
            return
        g = self.funcs.get(n.callee_key)
        if g is not None:
            s = self.summaries.get(g.key)
            if s is None:
                return
            self._apply_summary(n, g, s, args, eff)
            return
        self._call_outside(n, name, args, eff)

    def pointer_targets(self, callee: Node) -> list[Function] | None:
        """Issue 34: the functions a call through the function pointer ``callee``
        (``fp(...)`` or ``(*fp)(...)``) may call, when ``fp`` is a local variable
        whose every use is such a call, a comparison, or an assignment (or
        initializer) of functions defined in this file (``&f``, ``f``, ``c ? f :
        g``, or a null pointer): nothing else can change it.  None otherwise."""
        e = strip(callee)
        if e.kind == CK.UNARY_OPERATOR and e.op == "*" and len(e.exprs()) == 1:
            e = strip(e.exprs()[0])
        if e.kind != CK.DECL_REF_EXPR or e.ref_kind != CK.VAR_DECL:
            return None
        d = self.decls.get(e.ref)
        if d is None or d.kind != "local" or d.is_ref or d.is_array:
            return None
        if e.ref not in self._fp_targets:
            self._fp_targets[e.ref] = self._find_targets(e.ref, d.func)
        keys = self._fp_targets[e.ref]
        return None if keys is None else [self.funcs[k] for k in sorted(keys)]

    def _find_targets(self, key: str, func: str) -> set[str] | None:
        f = self.funcs.get(func)
        if f is None:
            return None
        out: set[str] = set()
        for n in f.body.walk():
            if n.kind == CK.VAR_DECL and n.key == key:
                kids = n.exprs()
                if kids:
                    t = self._fn_values(kids[-1])
                    if t is None:
                        return None
                    out |= t
                continue
            if n.kind != CK.DECL_REF_EXPR or n.ref != key:
                continue
            use: Node = n
            par = n.parent
            while par is not None and par.kind in CASTS:
                use, par = par, par.parent
            if par is not None and par.kind == CK.UNARY_OPERATOR and par.op == "*":
                use, par = par, par.parent
                while par is not None and par.kind in CASTS:
                    use, par = par, par.parent
            if par is None:
                return None
            pk = par.exprs()
            if par.kind == CK.CALL_EXPR and pk and pk[0] is use:
                continue  # the callee of a call
            if par.kind == CK.BINARY_OPERATOR and par.op in ("==", "!="):
                continue
            if par.kind == CK.BINARY_OPERATOR and par.op == "=" and len(pk) == 2 and pk[0] is use:
                t = self._fn_values(pk[1])
                if t is None:
                    return None
                out |= t
                continue
            return None  # its address taken, passed, copied elsewhere, ...
        return out

    def _fn_values(self, n: Node) -> set[str] | None:
        """The functions of this file that the value ``n`` may be (None: other values)."""
        e = strip(n)
        if e.kind == CK.UNARY_OPERATOR and e.op == "&" and len(e.exprs()) == 1:
            e = strip(e.exprs()[0])
        if e.kind == CK.DECL_REF_EXPR and e.ref_kind == CK.FUNCTION_DECL:
            return {e.ref} if e.ref in self.funcs else None
        if e.kind == CK.CONDITIONAL_OPERATOR and len(e.exprs()) == 3:
            a, b = self._fn_values(e.exprs()[1]), self._fn_values(e.exprs()[2])
            return None if a is None or b is None else a | b
        if e.kind == CK.INTEGER_LITERAL or (e.kind == CK.GNU_NULL_EXPR):
            return set()  # a null pointer: calling it is undefined
        return None

    @staticmethod
    def _take_flags_why(s: Summary, callee: str, line: int, eff: Effects) -> None:
        """A called function's flags and reasons, each reason once, naming the call."""
        for fl in s.flags:
            eff.flags.add(fl)
        for w in s.why:
            text = f"{w} (in {callee}(), called at line {line})" if "(in " not in w else w
            if text not in eff.why:
                eff.why.append(text)

    def _apply_summary(
        self, n: Node, g: Function, s: Summary, args: list[Node], eff: Effects
    ) -> None:
        """The effects of a call of ``g``, a function of this unit, from its summary."""
        eff.reads |= s.reads
        eff.sreads |= s.reads
        eff.writes |= s.writes
        eff.swrites |= s.writes
        for i in s.preads:
            if i < len(args):
                self._arg_access(args[i], "r", eff)
        for i in s.pwrites:
            if i < len(args):
                self._arg_access(args[i], "w", eff)
        for a in args[len(g.params) :]:
            objs = self._reach(self.val(a))
            self._access(objs, None, "rw", eff)
        self._take_flags_why(s, g.name, n.line, eff)

    def _call_outside(self, n: Node, name: str, args: list[Node], eff: Effects) -> None:
        """A call of a function not defined in this unit."""
        ext = self.external.get(name) if not name.startswith(("MPI_", "PMPI_")) else None
        if n.method_class:
            ext = None  # summaries are of file-scope functions, by name
        if ext is not None and mpi.lookup(name) is None:
            self._apply_external(n, ext, args, eff)
            return
        spec = mpi.lookup(name, n.callee_header)
        if spec is None:
            if name.startswith(("MPI_", "PMPI_")):
                eff.flag("unknown", f"{name} at line {n.line} (not modelled)")
            else:
                eff.flag("unknown", f"call to {name}() at line {n.line} (not in this file)")
            return
        for i, a in enumerate(args):
            e = spec.args[i] if i < len(spec.args) else spec.rest
            if e in ("R", "W", "RW"):
                self._arg_access(a, {"R": "r", "W": "w", "RW": "rw"}[e], eff)
        if spec.io:
            eff.flag("io", f"{name} at line {n.line}")
        if spec.mpi:
            eff.flag("mpi", f"{name} at line {n.line}")
        if spec.exits:
            eff.flag("exits", f"{name} at line {n.line}")
        if spec.fence:
            eff.flag("fence", f"{name} at line {n.line}")
        if spec.clock:
            eff.flag("clock", f"{name} at line {n.line} (reads a clock)")

    def _here(self, o: str) -> str:
        """An object of another file's summary as an object of this file."""
        if o.startswith("v:"):
            d = self.decls.get(o[2:].partition("#")[0])
            if d is not None and d.kind == "global" and not d.linkage_static:
                return o
        return EXT

    def _apply_external(self, n: Node, s: Summary, args: list[Node], eff: Effects) -> None:
        reads = {self._here(o) for o in s.reads}
        writes = {self._here(o) for o in s.writes}
        eff.reads |= reads
        eff.sreads |= reads
        eff.writes |= writes
        eff.swrites |= writes
        for i, a in enumerate(args):
            if i in s.preads:
                self._arg_access(a, "r", eff)
            if i in s.pwrites:
                self._arg_access(a, "w", eff)
            if i >= s.nparams:
                self._access(self._reach(self.val(a)), None, "rw", eff)
        self._take_flags_why(s, n.callee, n.line, eff)

    def export(self) -> dict[str, Summary]:
        """Summaries of this file's functions with external linkage, for other files."""
        out: dict[str, Summary] = {}
        names = [f.name for f in self.funcs.values()]
        for f in self.funcs.values():
            if f.static or not f.in_main or f.name == "main" or f.cxx_kind:
                continue
            if names.count(f.name) > 1:
                continue  # C++ overloads: a call by name could be any of them
            s = self.summaries.get(f.key)
            if s is None:
                continue
            out[f.name] = Summary(
                reads=frozenset(self._export_obj(o) for o in s.reads),
                writes=frozenset(self._export_obj(o) for o in s.writes),
                preads=s.preads,
                pwrites=s.pwrites,
                flags=s.flags,
                why=tuple(w.replace("(not in this file)", "(not in the program)") for w in s.why),
                nparams=len(f.params),
                keeps=f.variadic or self._keeps(f),
            )
        return out

    def _export_obj(self, o: str) -> str:
        if o.startswith("v:"):
            d = self.decls.get(o[2:].partition("#")[0])
            if d is not None and d.kind == "global" and not d.linkage_static:
                return o
        return EXT

    def _reach(self, objs: set[str]) -> set[str]:
        out = set(objs)
        todo = list(objs)
        while todo:
            o = todo.pop()
            for x in self.load({o}):
                if x not in out:
                    out.add(x)
                    todo.append(x)
        return out

    # ------------------------------------------------------------- summaries
    def _local_to(self, o: str, f: Function) -> bool:
        if not o.startswith("v:"):
            return False
        d = self.decls.get(o[2:].partition("#")[0])
        return d is not None and d.kind in ("local", "param") and d.func == f.key

    def _summarise(self) -> None:
        for _ in range(30):
            changed = False
            self._eff_cache.clear()
            for f in self.funcs.values():
                eff = self.effects(f.body, f)
                s = Summary(
                    reads=frozenset(o for o in eff.sreads if not self._local_to(o, f)),
                    writes=frozenset(o for o in eff.swrites if not self._local_to(o, f)),
                    preads=frozenset(eff.preads),
                    pwrites=frozenset(eff.pwrites),
                    flags=frozenset(eff.flags),
                    why=tuple(eff.why),
                )
                if self.summaries.get(f.key) != s:
                    self.summaries[f.key] = s
                    changed = True
            if not changed:
                break
        self._eff_cache.clear()


_DEPENDENT = (TypeKind.DEPENDENT, TypeKind.UNEXPOSED)


def _dependent(n: Node) -> bool:
    """Whether ``n`` (in a template's body) is a use of a value or a declaration of a
    variable whose type depends on a template parameter (``&x``, which only takes
    an address, left out)."""
    if n.kind == CK.VAR_DECL:
        return n.tkind in _DEPENDENT
    if not n.kind.is_expression() or n.tkind not in _DEPENDENT:
        return False
    if n.kind == CK.DECL_REF_EXPR and n.ref_kind not in (CK.VAR_DECL, CK.PARM_DECL):
        return False  # a function name, an enumerator
    par = n.parent
    while par is not None and par.kind == CK.PAREN_EXPR:
        par = par.parent
    if par is not None and par.kind == CK.UNARY_OPERATOR and par.op == "&":
        return False
    return not (n.kind == CK.UNARY_OPERATOR and n.op == "&")


def _subscript_const(sub: Node, base: Node) -> int | None:
    """K when ``sub`` is ``base[K]`` (base first, K an integer constant), else None."""
    if sub.kind != CK.ARRAY_SUBSCRIPT_EXPR:
        return None
    kids = sub.exprs()
    if len(kids) != 2 or strip(kids[0]) is not base:
        return None
    idx = strip(kids[1])
    if idx.kind == CK.INTEGER_LITERAL:
        return idx.value
    if idx.kind == CK.DECL_REF_EXPR and idx.ref_kind == CK.ENUM_CONSTANT_DECL:
        return idx.value
    return None


def _address_taken(sub: Node) -> bool:
    """Whether ``&`` takes the address of ``sub`` or of a field of it (``&a[0]``,
    ``&a[0].x``): pointer arithmetic from there could reach other elements."""
    q = sub.parent
    cur = sub
    while q is not None:
        if q.kind == CK.PAREN_EXPR or (
            q.kind == CK.MEMBER_REF_EXPR and q.exprs() and q.exprs()[0] is cur
        ):
            cur, q = q, q.parent
            continue
        if q.kind == CK.UNEXPOSED_EXPR and cur.is_array:
            return True  # a field that is an array decays to a pointer into the element
        return q.kind == CK.UNARY_OPERATOR and q.op == "&"
    return False
