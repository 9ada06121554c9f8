"""A light copy of the libclang AST of one translation unit.

libclang's cursors are slow to walk from Python (every step is a ctypes call)
and hide some facts the analysis needs (implicit casts are "unexposed", the
operator of a binary expression is not a property in older bindings).  This
module walks the cursors of the functions and globals of the main file once
and keeps what the analysis uses in plain :class:`Node` objects: kind, file
offsets (expansion locations), canonical type kind, referenced declaration,
operator spelling, the callee of calls.  It also records the macro expansion
ranges and ``#include`` directives of the main file.
"""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from clang import cindex
from clang.cindex import Cursor, CursorKind, TypeKind

ARRAY_TYPES = {
    TypeKind.CONSTANTARRAY,
    TypeKind.INCOMPLETEARRAY,
    TypeKind.VARIABLEARRAY,
    TypeKind.DEPENDENTSIZEDARRAY,
}

_BINOPS = [
    "",
    ".*",
    "->*",
    "*",
    "/",
    "%",
    "+",
    "-",
    "<<",
    ">>",
    "<=>",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
    "&",
    "^",
    "|",
    "&&",
    "||",
    "=",
    "*=",
    "/=",
    "%=",
    "+=",
    "-=",
    "<<=",
    ">>=",
    "&=",
    "^=",
    "|=",
    ",",
]
_UNOPS = ["", "post++", "post--", "++", "--", "&", "*", "+", "-", "~", "!", "__real", "__imag"]
_UNOPS += ["__extension__", "co_await"]


def _lib_fn(name: str) -> Any:
    """A libclang C function set up to take a cursor and return an int, or None."""
    try:
        fn = getattr(cindex.conf.lib, name)
    except (AttributeError, cindex.LibclangError):
        return None
    fn.argtypes = [Cursor]
    fn.restype = ctypes.c_int
    return fn


@dataclass(eq=False)
class Node:
    """One statement, expression or declaration of the main file."""

    kind: CursorKind
    start: int
    end: int
    line: int
    col: int
    spelling: str = ""
    tkind: TypeKind = TypeKind.INVALID
    is_array: bool = False
    is_pointer: bool = False
    is_func_type: bool = False
    is_record: bool = False
    ref: str = ""  # key of the referenced declaration
    ref_kind: CursorKind | None = None
    op: str = ""
    callee: str = ""  # name of the called function (CALL_EXPR)
    callee_key: str = ""
    key: str = ""  # for declarations: their own key
    # calls of functions declared outside system headers: the parameter types as
    # this translation unit spells them (None: no prototype, variadic or unnamed types)
    callee_params: tuple[str, ...] | None = None
    value: int | None = None  # integer literals (and references to enumeration constants)
    # calls: the file name (no directory) of the header that declares the callee
    callee_header: str = ""
    # C++ calls of member functions and constructors: the method's name and its class,
    # qualified by its namespaces ("std::vector"); "" for ordinary calls
    method: str = ""
    method_class: str = ""
    method_key: str = ""  # a call of a member function of the program: its declaration
    method_virtual: bool = False
    # C++: calls whose result is a reference (an lvalue), member references to a
    # reference field; VAR_DECLs of a class type with a constructor or destructor
    # that may do anything (not a standard container, not plain data)
    ref_result: bool = False
    cxx_object: str = ""
    # array subscripts: the element type's canonical spelling and size in bytes (-1: unknown)
    ctype: str = ""
    csize: int = -1
    children: list[Node] = field(default_factory=list)
    parent: Node | None = None

    def exprs(self) -> list[Node]:
        """Children that are expressions (type references and the like left out)."""
        return [c for c in self.children if c.kind.is_expression()]

    def walk(self) -> list[Node]:
        """This node and all below it, in source order."""
        out: list[Node] = []
        stack = [self]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(reversed(n.children))
        return out

    def __repr__(self) -> str:
        return f"<{self.kind.name} {self.spelling!r} {self.line}:{self.col}>"


@dataclass
class DeclInfo:
    """What the analysis needs to know about a variable or function."""

    key: str
    name: str
    kind: str  # "global", "static_local", "local", "param", "function"
    func: str = ""  # key of the enclosing function for locals and params
    linkage_static: bool = False  # globals and functions: internal linkage
    is_array: bool = False
    is_pointer: bool = False
    is_record: bool = False
    is_ref: bool = False  # C++ references (lvalue or rvalue)
    scope: Node | None = None  # COMPOUND_STMT (or FOR_STMT) holding a local's declaration
    index: int = -1  # parameters: position
    line: int = 0


@dataclass
class Function:
    """A function defined in the main file."""

    key: str
    name: str
    node: Node  # FUNCTION_DECL
    body: Node  # COMPOUND_STMT
    params: list[str]
    variadic: bool
    static: bool
    in_main: bool = True  # defined in the main file (else in a user header: analysed only)
    returns_void: bool = False
    # C++: "" for a free function; "scoped" for one in a namespace (not exported by
    # its plain name), "member" for a member function (its callers are not seen: a
    # member call is not analysed), "template" for a function template or a member
    # function of a class template (its primary template's body as written)
    cxx_kind: str = ""
    file: str = ""  # the path of the file that defines it (a user header's, not in_main)


@dataclass
class Unit:
    """The translation unit as the analysis sees it."""

    path: str
    data: bytes  # the main file; offsets are byte offsets into it
    functions: dict[str, Function]
    globals_init: list[Node]  # VAR_DECL nodes of the main file at file scope
    decls: dict[str, DeclInfo]
    macro_ranges: list[tuple[int, int]]
    includes: list[tuple[str, int, int]]  # (spelling, start, end) in the main file
    errors: list[str]
    address_taken_functions: set[str]
    cxx: bool = False  # parsed as C++
    # C++ code of the main file that is not analysed (constructors, destructors,
    # conversion functions, explicit specializations, class members other than member
    # functions, unresolved template calls): (start, end, what it is); its collectives
    # stay blocking
    opaque: list[tuple[int, int, str]] = field(default_factory=list)
    # C++: the main file or a header of the program (not a system one) declares a
    # unary operator& (a template's &x may then not be the address of x)
    address_of_overloaded: bool = False
    # the main file's ranges that the preprocessor skipped (#if branches not compiled)
    skipped: list[tuple[int, int]] = field(default_factory=list)
    # the program's own headers the file includes (not system ones), directly or not
    user_headers: list[str] = field(default_factory=list)


def decl_key(c: Cursor) -> str:
    """A key shared by all declarations of one entity."""
    try:
        usr = c.get_usr()
    except Exception:  # pragma: no cover - libclang oddities
        usr = ""
    if usr:
        # C++ USRs hold '#' (parameter types), which the analysis's object names use
        return str(usr).replace("#", "%")
    loc = c.location
    return f"{loc.file.name if loc.file else '?'}:{loc.offset}:{c.spelling}"


class _Builder:
    def __init__(self, tu: cindex.TranslationUnit, path: str) -> None:
        self.tu = tu
        self.path = path
        self.decls: dict[str, DeclInfo] = {}
        self.binop = _lib_fn("clang_getCursorBinaryOperatorKind")
        self.unop = _lib_fn("clang_getCursorUnaryOperatorKind")
        self.func_stack: list[str] = []
        self.scope_stack: list[Node] = []
        self.addr_funcs: set[str] = set()

    def in_main(self, c: Cursor) -> bool:
        if _FROM_MAIN is not None:
            return bool(_FROM_MAIN(_CURSOR_LOC(c)))
        f = c.location.file
        return f is not None and f.name == self.tu.spelling

    def type_facts(self, node: Node, c: Cursor) -> None:
        try:
            t = c.type.get_canonical()
        except Exception:  # pragma: no cover
            return
        node.tkind = t.kind
        node.is_array = t.kind in ARRAY_TYPES
        node.is_pointer = t.kind == TypeKind.POINTER
        node.is_func_type = t.kind in (TypeKind.FUNCTIONPROTO, TypeKind.FUNCTIONNOPROTO)
        node.is_record = t.kind == TypeKind.RECORD
        if c.kind == CursorKind.ARRAY_SUBSCRIPT_EXPR:
            node.ctype = t.spelling
            try:
                node.csize = t.get_size()
            except Exception:  # pragma: no cover
                node.csize = -1

    def info_for(self, c: Cursor) -> DeclInfo:
        key = decl_key(c)
        info = self.decls.get(key)
        if info is not None:
            return info
        kind = "global"
        if c.kind in (CursorKind.FUNCTION_DECL, CursorKind.FUNCTION_TEMPLATE, *_METHODS):
            kind = "function"
        elif c.kind == CursorKind.PARM_DECL:
            kind = "param"
        elif c.semantic_parent is not None and c.semantic_parent.kind not in _FILE_SCOPES:
            kind = (
                "static_local"
                if c.storage_class in (cindex.StorageClass.STATIC, cindex.StorageClass.EXTERN)
                else "local"
            )
        t = c.type.get_canonical()
        info = DeclInfo(
            key=key,
            name=c.spelling,
            kind=kind,
            linkage_static=c.storage_class == cindex.StorageClass.STATIC,
            is_array=t.kind in ARRAY_TYPES,
            is_pointer=t.kind == TypeKind.POINTER,
            is_record=t.kind == TypeKind.RECORD,
            is_ref=t.kind in (TypeKind.LVALUEREFERENCE, TypeKind.RVALUEREFERENCE),
            line=c.location.line,
        )
        self.decls[key] = info
        return info

    def build(self, c: Cursor) -> Node:
        ext = c.extent
        node = Node(
            kind=c.kind,
            start=ext.start.offset,
            end=ext.end.offset,
            line=c.location.line,
            col=c.location.column,
            spelling=c.spelling or "",
        )
        k = c.kind
        if k.is_expression() or k in (CursorKind.VAR_DECL, CursorKind.PARM_DECL):
            self.type_facts(node, c)
        if k == CursorKind.MEMBER_REF_EXPR:
            ref = c.referenced
            if ref is not None and ref.kind == CursorKind.FIELD_DECL:
                node.ref_result = ref.type.get_canonical().kind in _REFS
        if k == CursorKind.VAR_DECL and node.is_record:
            t = c.type.get_canonical()
            try:
                pod = bool(t.is_pod())
            except Exception:  # pragma: no cover
                pod = False
            if not pod:
                node.cxx_object = _qualified(t.get_declaration()) or t.spelling
        if k in (CursorKind.DECL_REF_EXPR, CursorKind.MEMBER_REF_EXPR):
            ref = c.referenced
            if ref is not None:
                node.ref = decl_key(ref)
                node.ref_kind = ref.kind
                if ref.kind == CursorKind.ENUM_CONSTANT_DECL:
                    try:
                        node.value = ref.enum_value
                    except Exception:  # pragma: no cover
                        node.value = None
                if ref.kind in (
                    CursorKind.VAR_DECL,
                    CursorKind.PARM_DECL,
                    CursorKind.FUNCTION_DECL,
                ):
                    self.info_for(ref)
        elif k == CursorKind.CALL_EXPR:
            ref = c.referenced
            if ref is not None and ref.kind == CursorKind.FUNCTION_DECL:
                node.callee = ref.spelling
                node.callee_key = decl_key(ref)
                self.info_for(ref)
                hf = ref.location.file
                node.callee_header = PurePath(hf.name).name if hf is not None else ""
                if not ref.location.is_in_system_header and not node.callee.startswith("MPI_"):
                    node.callee_params = _param_types(ref)
                # C++: a function in a namespace or a static member ("" at file scope)
                node.method_class = _qualified(ref.semantic_parent)
            elif ref is not None and ref.kind in _METHODS:
                node.method = ref.spelling or "?"
                node.method_class = _qualified(ref.semantic_parent)
                if ref.kind == CursorKind.CXX_METHOD and not ref.location.is_in_system_header:
                    # a member function of the program: its summary may apply (not a
                    # virtual one, which an override in a derived class may replace)
                    node.method_key = decl_key(ref)
                    node.method_virtual = bool(ref.is_virtual_method())
                    node.callee_params = _param_types(ref)
            if ref is None:
                self.dependent_callee(node, c)
            if ref is not None:
                try:
                    node.ref_result = ref.result_type.kind in _REFS
                except Exception:  # pragma: no cover
                    node.ref_result = False
        elif k in (CursorKind.BINARY_OPERATOR, CursorKind.COMPOUND_ASSIGNMENT_OPERATOR):
            node.op = self.binary_op(c)
        elif k == CursorKind.UNARY_OPERATOR:
            node.op = self.unary_op(c)
        elif k == CursorKind.INTEGER_LITERAL:
            node.value = self.int_value(c)
        elif k in (CursorKind.VAR_DECL, CursorKind.PARM_DECL):
            info = self.info_for(c)
            node.key = info.key
            if info.kind in ("local", "param", "static_local") and self.func_stack:
                info.func = self.func_stack[-1]
            if info.kind in ("local", "static_local") and self.scope_stack:
                info.scope = self.scope_stack[-1]
        if k in (CursorKind.COMPOUND_STMT, CursorKind.FOR_STMT):
            self.scope_stack.append(node)
        for child in c.get_children():
            if child.kind == CursorKind.MACRO_INSTANTIATION:
                continue
            sub = self.build(child)
            sub.parent = node
            node.children.append(sub)
        if k in (CursorKind.COMPOUND_STMT, CursorKind.FOR_STMT):
            self.scope_stack.pop()
        return node

    def dependent_callee(self, node: Node, c: Cursor) -> None:
        """A call in a template whose arguments depend on a template parameter: clang
        leaves its callee an unresolved overload set.  An MPI function (a C function,
        one declaration) is still the callee; anything else stays unresolved."""
        kids = list(c.get_children())
        f = kids[0] if kids else None
        while f is not None and f.kind == CursorKind.UNEXPOSED_EXPR:
            sub = list(f.get_children())
            f = sub[0] if len(sub) == 1 else None
        if f is None or f.kind != CursorKind.DECL_REF_EXPR:
            return
        ov = f.referenced
        if ov is None or ov.kind != CursorKind.OVERLOADED_DECL_REF:
            return
        try:
            lib = cindex.conf.lib
            num = int(lib.clang_getNumOverloadedDecls(ov))
            decls = [lib.clang_getOverloadedDecl(ov, i) for i in range(num)]
        except (AttributeError, cindex.LibclangError):  # pragma: no cover
            return
        if len(decls) != 1 or decls[0].kind != CursorKind.FUNCTION_DECL:
            return
        ref = decls[0]
        if not ref.spelling.startswith(("MPI_", "PMPI_")):
            return
        node.callee = ref.spelling
        node.callee_key = decl_key(ref)
        self.info_for(ref)
        hf = ref.location.file
        node.callee_header = PurePath(hf.name).name if hf is not None else ""

    def int_value(self, c: Cursor) -> int | None:
        """The value of an integer literal (also one written through a macro)."""
        lib = cindex.conf.lib
        try:
            ev = lib.clang_Cursor_Evaluate
            ev.argtypes = [Cursor]
            ev.restype = ctypes.c_void_p
            get = lib.clang_EvalResult_getAsLongLong
            get.argtypes = [ctypes.c_void_p]
            get.restype = ctypes.c_longlong
            kind = lib.clang_EvalResult_getKind
            kind.argtypes = [ctypes.c_void_p]
            kind.restype = ctypes.c_int
            dispose = lib.clang_EvalResult_dispose
            dispose.argtypes = [ctypes.c_void_p]
        except AttributeError:
            return None
        res = ev(c)
        if not res:
            return None
        try:
            return int(get(res)) if kind(res) == 1 else None  # CXEval_Int
        finally:
            dispose(res)

    def binary_op(self, c: Cursor) -> str:
        if self.binop is not None:
            v = int(self.binop(c))
            if 0 < v < len(_BINOPS):
                return _BINOPS[v]
        kids = [x for x in c.get_children()]
        if not kids:
            return "?"
        lhs_end = kids[0].extent.end.offset
        for t in c.get_tokens():
            if t.extent.start.offset >= lhs_end:
                return str(t.spelling)
        return "?"

    def unary_op(self, c: Cursor) -> str:
        if self.unop is not None:
            v = int(self.unop(c))
            if 0 < v < len(_UNOPS):
                return _UNOPS[v]
        toks = [t.spelling for t in c.get_tokens()]
        if not toks:
            return "?"
        if toks[0] in ("&", "*", "+", "-", "~", "!", "++", "--", "__extension__"):
            return str(toks[0])
        if toks[-1] in ("++", "--"):
            return "post" + str(toks[-1])
        return "?"


_METHODS = (
    CursorKind.CXX_METHOD,
    CursorKind.CONSTRUCTOR,
    CursorKind.DESTRUCTOR,
    CursorKind.CONVERSION_FUNCTION,
)
_REFS = (TypeKind.LVALUEREFERENCE, TypeKind.RVALUEREFERENCE)
# where a variable is a global: C++ namespace-scope and static member variables too
_FILE_SCOPES = (
    CursorKind.TRANSLATION_UNIT,
    CursorKind.NAMESPACE,
    CursorKind.LINKAGE_SPEC,
    CursorKind.CLASS_DECL,
    CursorKind.STRUCT_DECL,
    CursorKind.UNION_DECL,
    CursorKind.CLASS_TEMPLATE,
)
_CLASSES = (
    CursorKind.CLASS_DECL,
    CursorKind.STRUCT_DECL,
    CursorKind.UNION_DECL,
    CursorKind.CLASS_TEMPLATE,
    CursorKind.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION,
)
_SCOPES = (
    CursorKind.NAMESPACE,
    CursorKind.CLASS_DECL,
    CursorKind.STRUCT_DECL,
    CursorKind.CLASS_TEMPLATE,
    CursorKind.UNION_DECL,
)


def _qualified(c: Cursor | None) -> str:
    """``std::vector`` for the class of ``std::vector<double>::data`` (inline
    namespaces such as ``__cxx11`` left out)."""
    names: list[str] = []
    while c is not None and c.kind in _SCOPES:
        inline = False
        if c.kind == CursorKind.NAMESPACE:
            try:
                inline = bool(cindex.conf.lib.clang_Cursor_isInlineNamespace(c))
            except (AttributeError, cindex.LibclangError):  # pragma: no cover
                inline = c.spelling.startswith("__")
        if not inline:
            names.append(c.spelling)
        c = c.semantic_parent
    return "::".join(reversed(names))


OPENMP = "an OpenMP construct"


_PRAGMA_TEXT = re.compile(
    rb"^[ \t]*#[ \t]*pragma[ \t]+(?:omp|acc)\b(?:[^\n]*\\\n)*[^\n]*"
    rb"|_Pragma[ \t]*\([ \t]*\"[ \t]*(?:omp|acc)\b[^)]*\)",
    re.M,
)


def _openmp_constructs(functions: dict[str, Function], data: bytes) -> list[tuple[int, int, str]]:
    """The OpenMP (and OpenACC) constructs of the main file's functions.

    Parsed with -fopenmp, libclang shows a directive's statement only as a
    captured statement, without its code, so a collective in ``#pragma omp
    single`` or ``master`` is no call the analysis sees: the construct's text is
    read instead (``Unit.opaque``).  Parsed without it, the pragma is ignored and
    its statement analysed as sequential code, but a wait must not go into it
    (every thread would wait for the one request) and its collectives are made by
    threads: the statement after each ``#pragma omp``/``acc`` line (or
    ``_Pragma("omp ...")``) is such a range too."""
    out: list[tuple[int, int, str]] = []
    positions: list[Node] = []  # nodes in statement position
    for f in functions.values():
        if not f.in_main:
            continue
        stack = [f.body]
        while stack:
            n = stack.pop()
            if n.kind.name.startswith("OMP_"):
                # the directive's extent is its pragma line; its statement's, its child's
                out.append((n.start, max(x.end for x in n.walk()), OPENMP))
                continue
            if n.kind.is_statement():
                positions.extend(n.children)
            stack.extend(n.children)
    for m in _PRAGMA_TEXT.finditer(data):
        if any(a <= m.start() < b for a, b, _ in out):
            continue
        after = [n for n in positions if n.start >= m.end()]
        if not after:
            continue
        first = min(n.start for n in after)
        end = max(n.end for n in after if n.start == first)
        out.append((m.start(), end, OPENMP))
    return out


# Top-level C++ declarations whose code is not analysed: what the report calls them
_OPAQUE = {
    CursorKind.CXX_METHOD: "a member function",
    CursorKind.CONSTRUCTOR: "a constructor",
    CursorKind.DESTRUCTOR: "a destructor",
    CursorKind.CONVERSION_FUNCTION: "a conversion function",
    CursorKind.FUNCTION_TEMPLATE: "a function template",
    CursorKind.CLASS_TEMPLATE: "a class template",
    CursorKind.CLASS_DECL: "a class",
    CursorKind.STRUCT_DECL: "a class",
    CursorKind.UNION_DECL: "a union",
    CursorKind.NAMESPACE: "a namespace",
    CursorKind.LINKAGE_SPEC: 'an extern "C" block',
    CursorKind.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION: "a class template",
}


def _param_types(fn: Cursor) -> tuple[str, ...] | None:
    """The parameter types of a function declaration, for a prototype of a twin."""
    try:
        t = fn.type
        if t.kind != TypeKind.FUNCTIONPROTO or t.is_function_variadic():
            return None
        out = tuple(str(a.spelling) for a in t.argument_types())
    except Exception:  # pragma: no cover - libclang oddities
        return None
    if any("(unnamed" in a or "(anonymous" in a for a in out):
        return None
    return out


def _mark_address_taken(functions: set[str], root: Node, out: set[str]) -> None:
    """Functions named other than as the callee of a call: their address escapes."""
    for n in root.walk():
        if n.kind == CursorKind.DECL_REF_EXPR and n.ref_kind == CursorKind.FUNCTION_DECL:
            par = n.parent
            # callee position: CALL_EXPR -> UNEXPOSED (decay) -> DECL_REF
            while par is not None and par.kind in (
                CursorKind.UNEXPOSED_EXPR,
                CursorKind.PAREN_EXPR,
            ):
                par = par.parent
            if par is None or par.kind != CursorKind.CALL_EXPR or par.callee_key != n.ref:
                out.add(n.ref)


def build_unit(tu: cindex.TranslationUnit, data: bytes, cxx: bool | None = None) -> Unit:
    """Copies the functions and globals of the main file of ``tu``."""
    path = tu.spelling
    b = _Builder(tu, path)
    functions: dict[str, Function] = {}
    globals_init: list[Node] = []
    macro_ranges: list[tuple[int, int]] = []
    includes: list[tuple[str, int, int]] = []
    cxx = _is_cxx(tu) if cxx is None else cxx
    opaque: list[tuple[int, int, str]] = []

    def add_function(c: Cursor, cxx_kind: str = "") -> None:
        key = decl_key(c)
        if key in functions:
            return
        info = b.info_for(c)
        b.func_stack.append(key)
        node = b.build(c)
        b.func_stack.pop()
        body = next((ch for ch in node.children if ch.kind == CursorKind.COMPOUND_STMT), None)
        if body is None:
            return
        params = [ch.key for ch in node.children if ch.kind == CursorKind.PARM_DECL]
        for i, pk in enumerate(params):
            b.decls[pk].index = i
            b.decls[pk].func = key
        try:
            variadic = bool(c.type.is_function_variadic())
        except Exception:
            variadic = False
        try:
            void = c.result_type.kind == TypeKind.VOID
        except Exception:  # pragma: no cover
            void = False
        functions[key] = Function(
            key=key,
            name=c.spelling,
            node=node,
            body=body,
            params=params,
            variadic=variadic,
            static=info.linkage_static and not cxx_kind,
            returns_void=void,
            cxx_kind=cxx_kind,
            file=b.path,
        )

    def in_template(c: Cursor) -> bool:
        p = c.semantic_parent
        while p is not None and p.kind in (*_SCOPES, *_CLASSES):
            if p.kind in (
                CursorKind.CLASS_TEMPLATE,
                CursorKind.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION,
            ):
                return True
            p = p.semantic_parent
        return False

    def visit_cxx(c: Cursor) -> None:
        """A C++ declaration of the main file: namespaces and ``extern "C"`` blocks
        are looked into, member functions and templates analysed, constructors,
        destructors, conversion functions and explicit specializations not."""
        k = c.kind
        if k in (CursorKind.NAMESPACE, CursorKind.LINKAGE_SPEC):
            for ch in c.get_children():
                visit_main(ch)
        elif k in _CLASSES:
            for ch in c.get_children():
                if ch.kind in _CLASSES or (
                    ch.kind in (CursorKind.CXX_METHOD, CursorKind.FUNCTION_TEMPLATE)
                    and ch.is_definition()
                ):
                    visit_cxx(ch)
                elif ch.kind in _OPAQUE or ch.kind in (
                    CursorKind.FRIEND_DECL,
                    CursorKind.FIELD_DECL,
                    CursorKind.VAR_DECL,
                ):
                    what = _OPAQUE.get(ch.kind, "a class member")
                    name = ch.displayname or ch.spelling
                    opaque.append(
                        (ch.extent.start.offset, ch.extent.end.offset, f"{what} ({name})")
                    )
        elif k == CursorKind.CXX_METHOD and c.is_definition():
            add_function(c, "template" if in_template(c) else "member")
        elif k == CursorKind.FUNCTION_TEMPLATE and c.is_definition():
            add_function(c, "template")
        elif k in _OPAQUE and k not in (CursorKind.CXX_METHOD, CursorKind.FUNCTION_TEMPLATE):
            what = _OPAQUE[k]
            name = c.displayname or c.spelling
            opaque.append((c.extent.start.offset, c.extent.end.offset, f"{what} ({name})"))

    def visit_main(c: Cursor) -> None:
        if cxx and c.kind in _OPAQUE:
            visit_cxx(c)
            return
        if cxx and c.kind == CursorKind.FUNCTION_DECL and c.is_definition():
            try:
                special = c.get_num_template_arguments() > 0
            except Exception:  # pragma: no cover
                special = False
            if special:
                what = f"a template specialization ({c.displayname})"
                opaque.append((c.extent.start.offset, c.extent.end.offset, what))
                return
        if c.kind == CursorKind.MACRO_INSTANTIATION:
            macro_ranges.append((c.extent.start.offset, c.extent.end.offset))
        elif c.kind == CursorKind.INCLUSION_DIRECTIVE:
            includes.append((c.spelling, c.extent.start.offset, c.extent.end.offset))
        elif c.kind == CursorKind.FUNCTION_DECL and c.is_definition():
            # in a namespace: not exported to other files by its plain name
            par = c.semantic_parent
            add_function(
                c, "scoped" if par is not None and par.kind == CursorKind.NAMESPACE else ""
            )
        elif c.kind == CursorKind.VAR_DECL:
            globals_init.append(b.build(c))

    for c in tu.cursor.get_children():
        if not b.in_main(c):
            # Functions defined in the program's own headers are analysed too.
            loc = c.location
            if (
                c.kind == CursorKind.FUNCTION_DECL
                and c.is_definition()
                and loc.file is not None
                and not loc.is_in_system_header
            ):
                key = decl_key(c)
                if key in functions:
                    continue
                info = b.info_for(c)
                b.func_stack.append(key)
                node = b.build(c)
                b.func_stack.pop()
                body = next(
                    (ch for ch in node.children if ch.kind == CursorKind.COMPOUND_STMT), None
                )
                if body is not None:
                    params = [ch.key for ch in node.children if ch.kind == CursorKind.PARM_DECL]
                    for i, pk in enumerate(params):
                        b.decls[pk].index = i
                        b.decls[pk].func = key
                    functions[key] = Function(
                        key,
                        c.spelling,
                        node,
                        body,
                        params,
                        False,
                        info.linkage_static,
                        False,
                        file=loc.file.name,
                    )
            continue
        visit_main(c)
    if cxx:
        opaque += _unresolved_collectives(functions, data)
    opaque += _openmp_constructs(functions, data)
    addr: set[str] = set()
    for f in functions.values():
        _mark_address_taken(set(functions), f.body, addr)
    for g in globals_init:
        _mark_address_taken(set(functions), g, addr)
    errors = [
        f"{d.location.file.name if d.location.file else '?'}:{d.location.line}: {d.spelling}"
        for d in tu.diagnostics
        if d.severity >= cindex.Diagnostic.Error
    ]
    macro_ranges.sort()
    return Unit(
        path=path,
        data=data,
        functions=functions,
        globals_init=globals_init,
        decls=b.decls,
        macro_ranges=macro_ranges,
        includes=includes,
        errors=errors,
        address_taken_functions=addr,
        cxx=cxx,
        opaque=opaque,
        address_of_overloaded=cxx and _declares_address_of(tu),
    )


def _unresolved_collectives(
    functions: dict[str, Function], data: bytes
) -> list[tuple[int, int, str]]:
    """Collectives written in a C++ member function or template that are no call the
    analysis sees (a template's call whose callee clang leaves unresolved: an
    overload set of more than one function): read from the text, like the code
    that is not analysed, so that they and the calls that can match them stay
    blocking."""
    from nbcx_transform import mpi

    out: list[tuple[int, int, str]] = []
    for f in functions.values():
        if not f.cxx_kind or not f.in_main:
            continue
        seen = {n.line for n in f.body.walk() if n.kind == CursorKind.CALL_EXPR and n.callee}
        text = data[f.body.start : f.body.end].decode("utf-8", "replace")
        text = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)), text, flags=re.S)
        text = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), text)
        first = data.count(b"\n", 0, f.body.start) + 1
        for m in re.finditer(r"\b(MPI_[A-Z][a-z_]*)\s*\(", text):
            line = first + text.count("\n", 0, m.start())
            if m.group(1) in mpi.COLLECTIVES and line not in seen:
                start = f.body.start + len(text[: m.start()].encode())
                end = f.body.start + len(text[: m.end()].encode())
                what = f"a template's call that clang leaves unresolved (in {f.name}())"
                out.append((start, end, what))
    return out


def _declares_address_of(tu: cindex.TranslationUnit) -> bool:
    """Whether the program (the main file or a header that is not a system header)
    declares a unary ``operator&``: a member with no parameter, a free function
    with one (looked for in namespaces and classes, not in function bodies)."""
    stack = [
        c
        for c in tu.cursor.get_children()
        if c.location.file is not None and not c.location.is_in_system_header
    ]
    while stack:
        c = stack.pop()
        k = c.kind
        if k in (*_SCOPES, *_CLASSES, CursorKind.LINKAGE_SPEC):
            stack.extend(c.get_children())
        elif k in (CursorKind.CXX_METHOD, CursorKind.FUNCTION_DECL, CursorKind.FUNCTION_TEMPLATE):
            if c.spelling != "operator&":
                continue
            nparams = sum(1 for ch in c.get_children() if ch.kind == CursorKind.PARM_DECL)
            member = c.semantic_parent is not None and c.semantic_parent.kind in _CLASSES
            if nparams == (0 if member else 1):
                return True
        elif k == CursorKind.FRIEND_DECL:
            stack.extend(c.get_children())
    return False


def _loc_fns() -> tuple[Any, Any]:
    """clang_getCursorLocation and clang_Location_isFromMainFile, set up for a
    cheap "is this cursor in the main file" (cindex's location.file builds a
    File and its name for each cursor)."""
    try:
        lib = cindex.conf.lib
        loc = lib.clang_getCursorLocation
        main = lib.clang_Location_isFromMainFile
    except (AttributeError, cindex.LibclangError):  # pragma: no cover
        return None, None
    loc.argtypes = [Cursor]
    loc.restype = cindex.SourceLocation
    main.argtypes = [cindex.SourceLocation]
    main.restype = ctypes.c_int
    return loc, main


_CURSOR_LOC, _FROM_MAIN = _loc_fns()


class _RangeList(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(cindex.SourceRange))]


def skipped_ranges(tu: cindex.TranslationUnit) -> list[tuple[int, int]]:
    """The main file's ranges that the preprocessor skipped (the #if branches it
    did not compile), as byte offsets; [] if libclang cannot tell."""
    try:
        lib = cindex.conf.lib
        get = lib.clang_getSkippedRanges
        dispose = lib.clang_disposeSourceRangeList
    except (AttributeError, cindex.LibclangError):  # pragma: no cover
        return []
    get.argtypes = [cindex.TranslationUnit, ctypes.c_void_p]
    get.restype = ctypes.POINTER(_RangeList)
    dispose.argtypes = [ctypes.POINTER(_RangeList)]
    f = tu.get_file(tu.spelling)
    res = get(tu, f)
    if not res:
        return []
    out: list[tuple[int, int]] = []
    try:
        for i in range(res.contents.count):
            r = res.contents.ranges[i]
            out.append((r.start.offset, r.end.offset))
    finally:
        dispose(res)
    return out


def _is_cxx(tu: cindex.TranslationUnit) -> bool:
    """Whether ``tu`` was parsed as C++ (libclang tells the language of a cursor)."""
    try:
        fn = cindex.conf.lib.clang_getCursorLanguage
    except (AttributeError, cindex.LibclangError):  # pragma: no cover
        return False
    for c in tu.cursor.get_children():
        if c.location.file is not None and c.location.file.name == tu.spelling:
            if c.kind in (CursorKind.FUNCTION_DECL, CursorKind.VAR_DECL):
                fn.argtypes = [Cursor]
                fn.restype = ctypes.c_int
                return bool(fn(c) == 3)  # CXLanguage_CPlusPlus
    return False


def parse(path: str, args: list[str], contents: bytes | None = None) -> Unit:
    """Parses ``path`` with the compiler arguments ``args``; with ``contents``, the
    parser reads those instead of the file (a configuration of its #if groups,
    configs.py: the same offsets), and the unit keeps the file's own text."""
    with open(path, "rb") as fh:  # noqa: PTH123
        data = fh.read()
    index = cindex.Index.create()
    opts = cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    unsaved = [(path, contents)] if contents is not None else None
    tu = index.parse(path, args=args, unsaved_files=unsaved, options=opts)
    unit = build_unit(tu, data, is_cxx_source(path, args))
    unit.skipped = skipped_ranges(tu)
    unit.user_headers = user_headers(tu)
    return unit


def user_headers(tu: cindex.TranslationUnit) -> list[str]:
    """The paths of the headers ``tu`` includes that are not system headers, nor
    the MPI library's (those under the directory of its ``mpi.h``, which the MPI
    wrapper's ``-I`` does not mark as system headers)."""
    found: list[str] = []
    for inc in tu.get_includes():
        try:
            f = inc.include
            loc = cindex.SourceLocation.from_position(tu, f, 1, 1)
            if f is not None and not loc.is_in_system_header and f.name not in found:
                found.append(f.name)
        except Exception:  # pragma: no cover - libclang oddities
            continue
    mpi_dirs = [str(PurePath(h).parent) + os.sep for h in found if PurePath(h).name == "mpi.h"]
    return [h for h in found if not any(h.startswith(d) for d in mpi_dirs)]


CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".cp", ".C", ".hpp", ".hh", ".hxx", ".ii")


def is_cxx_source(path: str, args: list[str]) -> bool:
    """Whether libclang parses ``path`` as C++ (its name or ``-x c++``/``-std=c++NN``)."""
    lang = ""
    for i, w in enumerate(args):
        if w == "-x" and i + 1 < len(args):
            lang = args[i + 1]
        elif w.startswith("-std=") and "++" in w:
            lang = lang or "c++"
    if lang:
        return lang.startswith("c++")
    return PurePath(path).suffix in CXX_SUFFIXES
