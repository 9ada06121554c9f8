#!/usr/bin/env python3
"""Writes colls.c, the collective wrappers of libnbcx-pmpi, from the table
below (one entry per collective: its MPI arguments and their kinds). Run
it after changing the table: python3 src/pmpi/gen_colls.py > src/pmpi/colls.c
"""

SB = ("const void *", "sendbuf", "sbuf")
RB = ("void *", "recvbuf", "rbuf")


def i(n):
    return ("int ", n, "plain")


def ia(n):
    return ("const int ", n + "[]", "plain")


def t(n):
    return ("MPI_Datatype ", n, "type")


OPARG = ("MPI_Op ", "op", "op")
V = [SB, i("sendcount"), t("sendtype"), RB, i("recvcount"), t("recvtype")]
VV = [SB, i("sendcount"), t("sendtype"), RB, ia("recvcounts"), ia("displs"),
      t("recvtype")]
AV = [SB, ia("sendcounts"), ia("sdispls"), t("sendtype"), RB,
      ia("recvcounts"), ia("rdispls"), t("recvtype")]
RED = [SB, RB, i("count"), t("datatype"), OPARG]

OPS = [
    ("barrier", []),
    ("bcast", [("void *", "buffer", "buf"), i("count"), t("datatype"),
               i("root")]),
    ("reduce", RED + [i("root")]),
    ("allreduce", RED),
    ("gather", V + [i("root")]),
    ("scatter", V + [i("root")]),
    ("allgather", V),
    ("alltoall", V),
    ("gatherv", VV + [i("root")]),
    ("scatterv", [SB, ia("sendcounts"), ia("displs"), t("sendtype"), RB,
                  i("recvcount"), t("recvtype"), i("root")]),
    ("allgatherv", VV),
    ("alltoallv", AV),
    ("alltoallw", [SB, ia("sendcounts"), ia("sdispls"),
                   ("const MPI_Datatype ", "sendtypes[]", "stypes_size"), RB,
                   ia("recvcounts"), ia("rdispls"),
                   ("const MPI_Datatype ", "recvtypes[]", "rtypes_size")]),
    ("reduce_scatter", [SB, RB, ia("recvcounts"), t("datatype"), OPARG]),
    ("reduce_scatter_block", [SB, RB, i("recvcount"), t("datatype"), OPARG]),
    ("scan", RED),
    ("exscan", RED),
    ("neighbor_allgather", V),
    ("neighbor_allgatherv", VV),
    ("neighbor_alltoall", V),
    ("neighbor_alltoallv", AV),
    ("neighbor_alltoallw", [
        SB, ia("sendcounts"), ("const MPI_Aint ", "sdispls[]", "aint"),
        ("const MPI_Datatype ", "sendtypes[]", "stypes_out"), RB,
        ia("recvcounts"), ("const MPI_Aint ", "rdispls[]", "aint"),
        ("const MPI_Datatype ", "recvtypes[]", "rtypes_in")]),
]


def cap(name):
    return name[0].upper() + name[1:]


def bare(n):
    return n.replace("[]", "")


def wrapper(name, args, persistent):
    enum = ("OP_" + name.upper() + "_INIT") if persistent else \
        ("OP_I" + name.upper())
    if persistent:
        fn = "PNAME(%s)" % cap(name)
        native = "PPNAME(%s)" % cap(name)
        nbcx = "nbcx_%s_init" % name
    else:
        fn = "MPI_I" + name
        native = "PMPI_I" + name
        nbcx = "nbcx_i" + name
    params = [a[0] + a[1] for a in args] + ["MPI_Comm comm"]
    if persistent:
        params.append("MPI_Info info")
    params.append("MPI_Request *request")
    natargs = [bare(a[1]) for a in args] + ["comm"]
    if persistent:
        natargs.append("info")
    natargs.append("request")
    out = []
    out.append("int %s(%s)" % (fn, ", ".join(params)))
    out.append("{")
    out.append("    struct shim_call c;")
    out.append("    if (shim_begin(&c, %s, comm)) {" % enum)
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
            conv.append("shim_op(&c, op, &x_op)")
            call.append("x_op")
        elif k.startswith(("stypes", "rtypes")):
            decl.append("nbcx_datatype *x_%s;" % n)
            cnt = {"stypes_size": "shim_comm_size(&c)",
                   "rtypes_size": "shim_comm_size(&c)",
                   "stypes_out": "outdeg", "rtypes_in": "indeg"}[k]
            if k.startswith("stypes"):
                # ignored with MPI_IN_PLACE
                cnt = "sendbuf == MPI_IN_PLACE ? 0 : " + cnt
            conv.append("shim_types(&c, %s, %s, &x_%s)" % (cnt, n, n))
            call.append("(const nbcx_datatype *)x_" + n)
        elif k == "aint":
            call.append("(const ptrdiff_t *)" + n)
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
    out.append(ind + "int e = %s(%s);" % (nbcx, ", ".join(call)))
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
    return "\n".join(out) + "\n"


def main():
    print("/* colls.c - the collective wrappers of libnbcx-pmpi.")
    print(" * GENERATED by src/pmpi/gen_colls.py: edit the generator. */")
    print("#include <stddef.h>\n")
    print('#include "shim.h"\n')
    print("_Static_assert(sizeof(MPI_Aint) == sizeof(ptrdiff_t),")
    print('               "MPI_Aint displacements passed as ptrdiff_t");\n')
    for name, args in OPS:
        print(wrapper(name, args, False))
    print("#if SHIM_PERSISTENT\n")
    for name, args in OPS:
        print(wrapper(name, args, True))
    print("#endif /* SHIM_PERSISTENT */")


main()
