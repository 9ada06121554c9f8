#!/usr/bin/env python3
"""Writes colls.c, the collective wrappers of libnbcx-pmpi, from the table
below (one entry per collective: its MPI arguments and their kinds). Run
it after changing the table: python3 src/pmpi/gen_colls.py > src/pmpi/colls.c

Every collective gets its wrapper (MPI_I<op>, and the persistent
MPI_<op>_init / MPIX_<op>_init) as a static function wrap_<name> behind the
public name, and on MPI-4 libraries a large-count wrapper (MPI_I<op>_c,
MPI_<op>_init_c): MPI_Count counts and MPI_Aint displacements, passed as
they are to nbcx's large-count API (nbcx_i<op>_c, nbcx_<op>_init_c) by
wrap_<name>_c, the same wrapper with the wider arguments. It goes native
for the reasons the int wrapper does, never for a size: nbcx serves
counts, displacements and buffers of any size (issue 38).

Each public function passes its return address (__builtin_return_address)
to wrap_<name> and shim_begin: the call site of NBCX_PMPI_REPORT
(report.c), whose bytes (the BYTES table) the wrapper computes only when
the report is on.
"""

# The C templates keep printf-style formatting: their braces would all be
# doubled in f-strings.
# ruff: noqa: UP031

# An argument: its C type (with the space or star before the name), its
# name, and its kind (what the wrapper does with it).
Arg = tuple[str, str, str]

SB: Arg = ("const void *", "sendbuf", "sbuf")
RB: Arg = ("void *", "recvbuf", "rbuf")


def i(n: str) -> Arg:
    return ("int ", n, "plain")


def c(n: str) -> Arg:
    """A count: int, MPI_Count in the _c variants."""
    return ("int ", n, "count")


def ia(n: str) -> Arg:
    """A count array (int, MPI_Count in the _c variants)."""
    return ("const int ", n + "[]", "counts")


def da(n: str) -> Arg:
    """A displacement array (int, MPI_Aint in the _c variants)."""
    return ("const int ", n + "[]", "displs")


def t(n: str) -> Arg:
    return ("MPI_Datatype ", n, "type")


OPARG: Arg = ("MPI_Op ", "op", "op")
V = [SB, c("sendcount"), t("sendtype"), RB, c("recvcount"), t("recvtype")]
VV = [
    SB,
    c("sendcount"),
    t("sendtype"),
    RB,
    ia("recvcounts"),
    da("displs"),
    t("recvtype"),
]
AV = [
    SB,
    ia("sendcounts"),
    da("sdispls"),
    t("sendtype"),
    RB,
    ia("recvcounts"),
    da("rdispls"),
    t("recvtype"),
]
RED = [SB, RB, c("count"), t("datatype"), OPARG]

OPS: list[tuple[str, list[Arg]]] = [
    ("barrier", []),
    ("bcast", [("void *", "buffer", "buf"), c("count"), t("datatype"), i("root")]),
    ("reduce", RED + [i("root")]),
    ("allreduce", RED),
    ("gather", V + [i("root")]),
    ("scatter", V + [i("root")]),
    ("allgather", V),
    ("alltoall", V),
    ("gatherv", VV + [i("root")]),
    (
        "scatterv",
        [
            SB,
            ia("sendcounts"),
            da("displs"),
            t("sendtype"),
            RB,
            c("recvcount"),
            t("recvtype"),
            i("root"),
        ],
    ),
    ("allgatherv", VV),
    ("alltoallv", AV),
    (
        "alltoallw",
        [
            SB,
            ia("sendcounts"),
            da("sdispls"),
            ("const MPI_Datatype ", "sendtypes[]", "stypes_size"),
            RB,
            ia("recvcounts"),
            da("rdispls"),
            ("const MPI_Datatype ", "recvtypes[]", "rtypes_size"),
        ],
    ),
    ("reduce_scatter", [SB, RB, ia("recvcounts"), t("datatype"), OPARG]),
    ("reduce_scatter_block", [SB, RB, c("recvcount"), t("datatype"), OPARG]),
    ("scan", RED),
    ("exscan", RED),
    ("neighbor_allgather", V),
    ("neighbor_allgatherv", VV),
    ("neighbor_alltoall", V),
    ("neighbor_alltoallv", AV),
    (
        "neighbor_alltoallw",
        [
            SB,
            ia("sendcounts"),
            ("const MPI_Aint ", "sdispls[]", "aint"),
            ("const MPI_Datatype ", "sendtypes[]", "stypes_out"),
            RB,
            ia("recvcounts"),
            ("const MPI_Aint ", "rdispls[]", "aint"),
            ("const MPI_Datatype ", "recvtypes[]", "rtypes_in"),
        ],
    ),
]

# The bytes NBCX_PMPI_REPORT counts for a call (docs/shim.md): the data
# of this rank's send side. Reductions, scans and bcast: count x type
# size; gather-like: its block; scatter-like and all-to-all: the sum of
# the blocks it sends; in place: its own block. C expressions on the
# converted types (x_...), evaluated only when the report is on; B(n, t)
# is n elements of t in bytes, BV/BW sum n blocks of one type / types.
IN_PLACE = "sendbuf == MPI_IN_PLACE"
RED_BYTES = "B(count, x_datatype)"
BYTES: dict[str, str] = {
    "barrier": "0",
    "bcast": RED_BYTES,
    "reduce": RED_BYTES,
    "allreduce": RED_BYTES,
    "scan": RED_BYTES,
    "exscan": RED_BYTES,
    "reduce_scatter": "BV(S, recvcounts, x_datatype)",
    "reduce_scatter_block": "B(recvcount, x_datatype) * S",
    "gather": "%s ? B(recvcount, x_recvtype) : B(sendcount, x_sendtype)" % IN_PLACE,
    "allgather": "%s ? B(recvcount, x_recvtype) : B(sendcount, x_sendtype)" % IN_PLACE,
    "alltoall": "(%s ? B(recvcount, x_recvtype) : B(sendcount, x_sendtype))"
    " * S" % IN_PLACE,
    "gatherv": "%s ? BV(1, recvcounts + R, x_recvtype) : "
    "B(sendcount, x_sendtype)" % IN_PLACE,
    "allgatherv": "%s ? BV(1, recvcounts + R, x_recvtype) : "
    "B(sendcount, x_sendtype)" % IN_PLACE,
    "scatter": "R == root ? B(sendcount, x_sendtype) * S : 0",
    "scatterv": "R == root ? BV(S, sendcounts, x_sendtype) : 0",
    "alltoallv": "%s ? BV(S, recvcounts, x_recvtype) : "
    "BV(S, sendcounts, x_sendtype)" % IN_PLACE,
    "alltoallw": "%s ? BW(S, recvcounts, x_recvtypes) : "
    "BW(S, sendcounts, x_sendtypes)" % IN_PLACE,
    "neighbor_allgather": "B(sendcount, x_sendtype)",
    "neighbor_allgatherv": "B(sendcount, x_sendtype)",
    "neighbor_alltoall": "B(sendcount, x_sendtype) * OUTDEG",
    "neighbor_alltoallv": "BV(OUTDEG, sendcounts, x_sendtype)",
    "neighbor_alltoallw": "BW(outdeg, sendcounts, x_sendtypes)",
}


# Arguments erroneous for any MPI that this rank can see alone: a
# negative count that matters on this rank, a root outside the
# communicator, MPI_OP_NULL. Such a call is refused before the shim joins
# the communicator to nbcx (a step every rank takes together, which this
# rank would take alone and wait in, docs/shim.md): through the
# communicator's error handler, as a checking MPI library does (Debian's
# MPICH has no checks and crashes on them). Counts that MPI ignores (the
# send side with MPI_IN_PLACE, the root's side off the root) are not
# looked at. Intercommunicators (other roots) are left to the library.
NOT_IN_PLACE = "sendbuf != MPI_IN_PLACE"
RECV_NOT_IN_PLACE = "recvbuf != MPI_IN_PLACE"
AT_ROOT = "shim_is_root(comm, root)"
COUNT, ROOT_, OP_ = "NBCX_ERR_COUNT", "NBCX_ERR_ROOT", "NBCX_ERR_OP"
BAD_ROOT = ("shim_bad_root(comm, root)", ROOT_)
BAD_OP = ("op == MPI_OP_NULL", OP_)


def neg(n: str, when: str | None = None) -> tuple[str, str]:
    return ("(%s && %s < 0)" % (when, n) if when else "%s < 0" % n, COUNT)


REFUSED: dict[str, list[tuple[str, str]]] = {
    "barrier": [],
    "bcast": [BAD_ROOT, neg("count")],
    "reduce": [BAD_ROOT, neg("count"), BAD_OP],
    "allreduce": [neg("count"), BAD_OP],
    "scan": [neg("count"), BAD_OP],
    "exscan": [neg("count"), BAD_OP],
    "reduce_scatter": [BAD_OP],
    "reduce_scatter_block": [neg("recvcount"), BAD_OP],
    "gather": [BAD_ROOT, neg("sendcount", NOT_IN_PLACE), neg("recvcount", AT_ROOT)],
    "scatter": [
        BAD_ROOT,
        neg("recvcount", RECV_NOT_IN_PLACE),
        neg("sendcount", AT_ROOT),
    ],
    "gatherv": [BAD_ROOT, neg("sendcount", NOT_IN_PLACE)],
    "scatterv": [BAD_ROOT, neg("recvcount", RECV_NOT_IN_PLACE)],
    "allgather": [neg("sendcount", NOT_IN_PLACE), neg("recvcount")],
    "alltoall": [neg("sendcount", NOT_IN_PLACE), neg("recvcount")],
    "allgatherv": [neg("sendcount", NOT_IN_PLACE)],
    "alltoallv": [],
    "alltoallw": [],
    "neighbor_allgather": [neg("sendcount"), neg("recvcount")],
    "neighbor_allgatherv": [neg("sendcount")],
    "neighbor_alltoall": [neg("sendcount"), neg("recvcount")],
    "neighbor_alltoallv": [],
    "neighbor_alltoallw": [],
}


def refused_lines(name: str, enum: str) -> list[str]:
    """The early refusal of wrap_<name>: C lines, none when nothing to
    check."""
    checks = REFUSED[name]
    if not checks:
        return []
    expr = (
        "".join(
            "%s ? %s :\n                      " % (cond, cls) for cond, cls in checks
        )
        + "0"
    )
    return [
        "    if (shim_precheck(comm, %s)) {" % enum,
        "        int refused = " + expr + ";",
        "        if (refused)",
        "            return shim_refuse(comm, refused, request, %s, site);" % enum,
        "    }",
    ]


def bytes_expr(name: str, large: bool = False) -> str:
    e = BYTES[name]
    sfx = "c(" if large else "("
    e = e.replace("BV(", "shim_bytes_v" + sfx).replace("BW(", "shim_bytes_w" + sfx)
    e = e.replace("B(", "shim_bytes(")
    e = e.replace("OUTDEG", "shim_outdegree(&c)")
    e = e.replace("S", "shim_comm_size(&c)").replace("R", "shim_comm_rank(&c)")
    return e


# The buffer that becomes NBCX_IN_PLACE when nbcx refuses an aliased call
# (NBCX_ERR_ALIAS) and the library runs it in place natively
# (SHIM_ALIAS_IN_PLACE, shim.h: Open MPI, whose libnbc takes a send
# buffer equal to the receive buffer for in place). Not (all)reduce and
# exscan, which Open MPI refuses or fails: the error is reported.
ALIAS_IN_PLACE: dict[str, str] = {
    "gather": "sendbuf",
    "gatherv": "sendbuf",
    "scatter": "recvbuf",
    "scatterv": "recvbuf",
    "allgather": "sendbuf",
    "allgatherv": "sendbuf",
    "alltoall": "sendbuf",
    "alltoallv": "sendbuf",
    "alltoallw": "sendbuf",
    "reduce_scatter": "sendbuf",
    "reduce_scatter_block": "sendbuf",
    "scan": "sendbuf",
}


def cap(name: str) -> str:
    return name[0].upper() + name[1:]


def bare(n: str) -> str:
    return n.replace("[]", "")


def large_param(name: str, a: Arg) -> str:
    """A parameter of a large-count (_c) call: MPI_Count counts, MPI_Aint
    displacements."""
    if a[2] == "count":
        return "MPI_Count " + a[1]
    if a[2] == "counts":
        return "const MPI_Count " + a[1]
    if a[2] == "displs":
        return "const MPI_Aint " + a[1]
    return a[0] + a[1]


def large_arg(name: str, a: Arg) -> str:
    """The argument of nbcx_i<op>_c for a parameter of the _c call (same
    sizes: colls.c asserts them)."""
    n = bare(a[1])
    if a[2] == "counts":
        return "(const nbcx_count *)" + n
    if a[2] == "displs":
        # alltoallw's are bytes (ptrdiff_t), the others elements
        if name == "alltoallw":
            return "(const ptrdiff_t *)" + n
        return "(const nbcx_count *)" + n
    return n


def wrapper(name: str, args: list[Arg], persistent: bool, large: bool = False) -> str:
    """wrap_<name>[_init] and its public function; large: only the static
    wrap_<name>[_init]_c of the _c call (its public function is
    wrapper_c's)."""
    enum = ("OP_" + name.upper() + "_INIT") if persistent else ("OP_I" + name.upper())
    sfx = "_c" if large else ""
    if persistent and large:
        fn = None
        native = "PMPI_%s_init_c" % cap(name)
        nbcx = "nbcx_%s_init_c" % name
    elif persistent:
        fn = "PNAME(%s)" % cap(name)
        native = "PPNAME(%s)" % cap(name)
        nbcx = "nbcx_%s_init" % name
    else:
        fn = "MPI_I" + name
        native = "PMPI_I" + name + sfx
        nbcx = "nbcx_i" + name + sfx
    if large:
        params = [large_param(name, a) for a in args] + ["MPI_Comm comm"]
    else:
        params = [a[0] + a[1] for a in args] + ["MPI_Comm comm"]
    if persistent:
        params.append("MPI_Info info")
    params.append("MPI_Request *request")
    natargs = [bare(a[1]) for a in args] + ["comm"]
    if persistent:
        natargs.append("info")
    natargs.append("request")
    out = []
    out.append(
        "static int wrap_%s%s(%s)"
        % (
            name if not persistent else name + "_init",
            sfx,
            ", ".join(params + ["void *site"]),
        )
    )
    out.append("{")
    out.append("    struct shim_call c;")
    out += refused_lines(name, enum)
    out.append("    if (shim_begin(&c, %s, comm, site)) {" % enum)
    decl, conv, call = [], [], []
    need_deg = any(a[2] in ("stypes_out", "rtypes_in") for a in args)
    if need_deg:
        decl.append("int indeg = 0, outdeg = 0;")
        conv.append("shim_neighbor_degrees(&c, &indeg, &outdeg)")
    for a in args:
        n = bare(a[1])
        k = a[2]
        if k in ("sbuf", "rbuf", "buf"):
            call.append("SHIM_BUF(%s)" % n)
        elif k == "type":
            decl.append("nbcx_datatype x_%s;" % n)
            conv.append("shim_type(&c, %s, &x_%s)" % (n, n))
            call.append("x_" + n)
        elif k == "op":
            decl.append("nbcx_op x_op;")
            conv.append("shim_op(&c, op, datatype, &x_op)")
            call.append("x_op")
        elif k.startswith(("stypes", "rtypes")):
            decl.append("nbcx_datatype *x_%s;" % n)
            cnt = {
                "stypes_size": "shim_comm_size(&c)",
                "rtypes_size": "shim_comm_size(&c)",
                "stypes_out": "outdeg",
                "rtypes_in": "indeg",
            }[k]
            if k.startswith("stypes"):
                # ignored with MPI_IN_PLACE
                cnt = "sendbuf == MPI_IN_PLACE ? 0 : " + cnt
            conv.append("shim_types(&c, %s, %s, &x_%s)" % (cnt, n, n))
            call.append("(const nbcx_datatype *)x_" + n)
        elif k == "aint":
            call.append("(const ptrdiff_t *)" + n)
        elif large:
            call.append(large_arg(name, a))
        else:
            call.append(n)
    call += ["c.sc->nc", "&r"]
    for d in decl:
        out.append("        " + d)
    out.append("        nbcx_request r = NBCX_REQUEST_NULL;")
    if conv:
        out.append("        if (" + " &&\n            ".join(conv) + ") {")
        ind = "            "
    else:
        out.append("        {")
        ind = "            "
    out.append(ind + "if (shim_report)")
    out.append(ind + "    c.bytes = %s;" % bytes_expr(name, large))
    out.append(ind + "int e = %s(%s);" % (nbcx, ", ".join(call)))
    alias = ALIAS_IN_PLACE.get(name)
    if alias:
        again = ["NBCX_IN_PLACE" if c == "SHIM_BUF(%s)" % alias else c for c in call]
        out.append("#if SHIM_ALIAS_IN_PLACE")
        out.append(ind + "if (e == NBCX_ERR_ALIAS)")
        out.append(ind + "    e = %s(%s);" % (nbcx, ", ".join(again)))
        out.append("#endif")
    out.append(ind + "int rc = shim_finish(&c, e, r, request);")
    out.append(ind + "if (rc >= 0)")
    out.append(ind + "    return rc;")
    if conv:
        out.append("        } else {")
        out.append("            shim_native(&c);")
        out.append("        }")
    else:
        out.append("        }")
    out.append("    }")
    out.append("    return %s(%s);" % (native, ", ".join(natargs)))
    out.append("}")
    out.append("")
    if large:
        return "\n".join(out) + "\n"
    out.append("int %s(%s)" % (fn, ", ".join(params)))
    out.append("{")
    out.append(
        "    return wrap_%s(%s);"
        % (
            name if not persistent else name + "_init",
            ", ".join(natargs + ["__builtin_return_address(0)"]),
        )
    )
    out.append("}")
    return "\n".join(out) + "\n"


def wrapper_c(name: str, args: list[Arg], persistent: bool) -> str:
    """The large-count (MPI-4 _c) call of a collective with counts: its
    wrap_<name>_c (nbcx_i<op>_c), which goes native for the int
    wrapper's reasons only."""
    if persistent:
        fn = "MPI_%s_init_c" % cap(name)
        core = "wrap_%s_init_c" % name
    else:
        fn = "MPI_I%s_c" % name
        core = "wrap_%s_c" % name
    params, natargs = [], []
    for a in args:
        params.append(large_param(name, a))
        natargs.append(bare(a[1]))
    params.append("MPI_Comm comm")
    natargs.append("comm")
    if persistent:
        params.append("MPI_Info info")
        natargs.append("info")
    params.append("MPI_Request *request")
    natargs.append("request")
    call = natargs + ["__builtin_return_address(0)"]
    out = []
    out.append(wrapper(name, args, persistent, large=True).rstrip("\n") + "\n")
    out.append("int %s(%s)" % (fn, ", ".join(params)))
    out.append("{")
    out.append("    return %s(%s);" % (core, ", ".join(call)))
    out.append("}")
    return "\n".join(out) + "\n"


def has_counts(args: list[Arg]) -> bool:
    return any(a[2] in ("count", "counts", "displs") for a in args)


def main() -> None:
    print("/* colls.c - the collective wrappers of libnbcx-pmpi.")
    print(" * GENERATED by src/pmpi/gen_colls.py: edit the generator. */")
    print("#include <stddef.h>\n")
    print('#include "shim.h"\n')
    print("_Static_assert(sizeof(MPI_Aint) == sizeof(ptrdiff_t),")
    print('               "MPI_Aint displacements passed as ptrdiff_t");')
    print("#if SHIM_LARGE_COUNT")
    print("_Static_assert(sizeof(MPI_Count) == sizeof(nbcx_count) &&")
    print("                   sizeof(MPI_Aint) == sizeof(nbcx_count),")
    print('               "MPI_Count and MPI_Aint arrays passed as nbcx_count");')
    print("#endif\n")
    for name, args in OPS:
        print(wrapper(name, args, False))
    print("#if SHIM_PERSISTENT\n")
    for name, args in OPS:
        print(wrapper(name, args, True))
    print("#endif /* SHIM_PERSISTENT */\n")
    print("#if SHIM_LARGE_COUNT\n")
    for name, args in OPS:
        if has_counts(args):
            print(wrapper_c(name, args, False))
    for name, args in OPS:
        if has_counts(args):
            print(wrapper_c(name, args, True))
    print("#endif /* SHIM_LARGE_COUNT */")


if __name__ == "__main__":
    main()
