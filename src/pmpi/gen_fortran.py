#!/usr/bin/env python3
"""Writes fortran.c, the Fortran entry points of libnbcx-pmpi, from the
collectives' table of gen_colls.py (the one description of their
arguments) and the table of request functions below. Run it after
changing either: python3 src/pmpi/gen_fortran.py > src/pmpi/fortran.c

Each Fortran routine is one static C function (mpif.h's convention:
arguments by address, MPI_Fint handles, ierror last, NULL when an
optional mpi_f08 ierror is absent), given every name the libraries
export for it by aliases:
  - mpif.h and use mpi: mpi_x, mpi_x_, mpi_x__ and MPI_X (both
    libraries export the four manglings);
  - use mpi_f08: mpi_x_f08_. Open MPI's mpi_f08 has mpif.h's calling
    convention (its choice buffers are plain addresses: "Fort mpi_f08
    subarrays: no"), so every routine gets it. MPICH's passes choice
    buffers as TS 29113 descriptors (mpi_x_f08ts_) and calls the C MPI_x,
    which the shim serves; its routines without a choice buffer call
    PMPI_x directly, so those get their mpi_x_f08_ here.
A collective converts its handles (MPI_Comm_f2c, MPI_Type_f2c,
MPI_Op_f2c, MPI_Info_f2c), its buffers (Fortran's MPI_IN_PLACE and
MPI_BOTTOM) and its type arrays, and calls the shim's C function: served
by nbcx or sent native there, and counted in the shim's report.
Around that call, NBCXF_SITE_ENTER/LEAVE (fortran.h) give the shim the
Fortran caller's return address as the call site of NBCX_PMPI_REPORT.
Persistent collectives are MPIX_<op>_init in Open MPI 4.1 (mpix_x_init_)
and MPI_<op>_init in MPI-4 libraries.
"""

import importlib.util
import os

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_colls.py")
_spec = importlib.util.spec_from_file_location("gen_colls", _path)
if _spec is None or _spec.loader is None:
    raise ImportError(f"cannot load {_path}")
gen_colls = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_colls)
# gen_colls.py's table, with its type there (loaded by path, the module is
# untyped for mypy): an argument is (C type, name, kind), as gen_colls.Arg.
Arg = tuple[str, str, str]
OPS: list[tuple[str, list[Arg]]] = gen_colls.OPS

F = "MPI_Fint *"

# Request, completion and environment routines: Fortran name, parameters
# (all MPI_Fint *), implemented by nbcxf_<name> in fortran_rt.c.
REQ: list[tuple[str, list[str]]] = [
    ("init", ["ierror"]),
    ("init_thread", ["required", "provided", "ierror"]),
    ("finalize", ["ierror"]),
    ("query_thread", ["provided", "ierror"]),
    ("wait", ["request", "status", "ierror"]),
    ("test", ["request", "flag", "status", "ierror"]),
    ("waitall", ["count", "requests", "statuses", "ierror"]),
    ("testall", ["count", "requests", "flag", "statuses", "ierror"]),
    ("waitany", ["count", "requests", "index", "status", "ierror"]),
    ("testany", ["count", "requests", "index", "flag", "status", "ierror"]),
    ("waitsome", ["incount", "requests", "outcount", "indices", "statuses", "ierror"]),
    ("testsome", ["incount", "requests", "outcount", "indices", "statuses", "ierror"]),
    ("start", ["request", "ierror"]),
    ("startall", ["count", "requests", "ierror"]),
    ("request_free", ["request", "ierror"]),
    ("cancel", ["request", "ierror"]),
    ("request_get_status", ["request", "flag", "status", "ierror"]),
]


def names(base: str, f08: str) -> list[str]:
    """The alias lines for one routine (f08: the #if condition of its
    mpi_f08 name)."""
    out: list[str] = []
    for n in (base, base + "_", base + "__", base.upper()):
        out.append(f"NBCXF_NAME({n})")
    if f08:
        out.append(f"#if {f08}")
        out.append(f"NBCXF_NAME({base}_f08_)")
        out.append("#endif")
    return out


def has_buffer(args: list[Arg]) -> bool:
    return any(a[2] in ("sbuf", "rbuf", "buf") for a in args)


def collective(name: str, args: list[Arg], persistent: bool) -> str:
    fn = f"f_{'' if persistent else 'i'}{name}"
    if persistent:
        fn = f"f_{name}_init"
        cfn = f"PNAME({gen_colls.cap(name)})"
    else:
        cfn = "MPI_I" + name
    params: list[str] = []
    call: list[str] = []
    pre: list[str] = []
    post: list[str] = []
    for a in args:
        n: str = gen_colls.bare(a[1])
        k = a[2]
        if k in ("sbuf", "rbuf", "buf"):
            params.append("void *" + n)
            call.append(f"nbcxf_buf({n})")
        elif k in ("plain", "count"):
            params.append(F + n)
            call.append("(int)*" + n)
        elif k in ("counts", "displs"):
            params.append(F + n)
            call.append("(const int *)" + n)
        elif k == "aint":
            params.append("MPI_Aint *" + n)
            call.append(n)
        elif k == "type":
            params.append(F + n)
            call.append(f"MPI_Type_f2c(*{n})")
        elif k == "op":
            params.append(F + n)
            call.append(f"MPI_Op_f2c(*{n})")
        elif k.startswith(("stypes", "rtypes")):
            params.append(F + n)
            if k in ("stypes_out", "rtypes_in"):
                if not any("nbcxf_degrees" in p for p in pre):
                    pre.append("int indeg = 0, outdeg = 0;")
                    pre.append("nbcxf_degrees(c_comm, &indeg, &outdeg);")
                cnt = "outdeg" if k == "stypes_out" else "indeg"
            else:
                if not any("c_size" in p for p in pre):
                    pre.append("int c_size = nbcxf_comm_size(c_comm);")
                cnt = "c_size"
            if k.startswith("stypes"):
                # ignored with MPI_IN_PLACE
                cnt = "nbcxf_buf(sendbuf) == MPI_IN_PLACE ? 0 : " + cnt
            pre.append(f"MPI_Datatype s_{n}[16];")
            pre.append(f"MPI_Datatype *x_{n} = nbcxf_types({cnt}, {n}, s_{n});")
            post.append(f"nbcxf_types_free(x_{n}, s_{n});")
            call.append("x_" + n)
        else:
            raise ValueError(k)
    params.append(F + "comm")
    call.append("c_comm")
    if persistent:
        params.append(F + "info")
        call.append("MPI_Info_f2c(*info)")
    params += [F + "request", F + "ierror"]
    call.append("&c_request")
    out = [f"static void {fn}({', '.join(params)})", "{"]
    # NBCX_PMPI_REPORT: the call site is the Fortran caller's.
    out.append("    NBCXF_SITE_ENTER();")
    out.append("    MPI_Comm c_comm = MPI_Comm_f2c(*comm);")
    out.append("    MPI_Request c_request = MPI_REQUEST_NULL;")
    for p in pre:
        out.append("    " + p)
    arrays = [c for c in call if c.startswith("x_")]
    ind = "    "
    if arrays:
        out.append("    int rc = MPI_ERR_NO_MEM;")
        out.append(f"    if ({' && '.join(arrays)})")
        out.append(f"        rc = {cfn}({', '.join(call)});")
    else:
        out.append(f"    int rc = {cfn}({', '.join(call)});")
    for p in post:
        out.append(ind + p)
    out.append("    NBCXF_SITE_LEAVE();")
    out.append("    if (rc == MPI_SUCCESS)")
    out.append("        *request = MPI_Request_c2f(c_request);")
    out.append("    nbcxf_ierr(ierror, rc);")
    out.append("}")
    # mpi_f08: Open MPI every routine; MPICH those without a buffer.
    f08 = "NBCXF_F08 >= 1" if not has_buffer(args) else "NBCXF_F08 == 2"
    out.append(f"#define NBCXF_IMPL {fn}")
    if persistent:
        out.append("#if defined(OPEN_MPI)")
        out += names(f"mpix_{name}_init", f08)
        out.append("#else")
        out += names(f"mpi_{name}_init", f08)
        out.append("#endif")
    else:
        out += names("mpi_i" + name, f08)
    out.append("#undef NBCXF_IMPL")
    return "\n".join(out) + "\n"


def request_fn(name: str, params: list[str]) -> str:
    fn = "f_" + name
    out = [
        f"static void {fn}({', '.join(F + p for p in params)})",
        "{",
        f"    nbcxf_{name}({', '.join(params)});",
        "}",
        f"#define NBCXF_IMPL {fn}",
    ]
    out += names("mpi_" + name, "NBCXF_F08 >= 1")
    out.append("#undef NBCXF_IMPL")
    return "\n".join(out) + "\n"


HEADER = """\
/* fortran.c - the Fortran entry points of libnbcx-pmpi (mpif.h, use mpi,
 * use mpi_f08; fortran.h says which library gets which).
 * GENERATED by src/pmpi/gen_fortran.py from the table of gen_colls.py:
 * edit the generator. */
#include "shim.h"
#include "fortran.h"

/* Which mpi_f08 routines get an mpi_x_f08_ entry point: 2 every one
 * (Open MPI: mpif.h's convention), 1 those without a choice buffer
 * (MPICH: its others take descriptors and reach the C MPI_x), 0 none. */
#if defined(OPEN_MPI)
#define NBCXF_F08 2
#elif defined(MPICH_VERSION)
#define NBCXF_F08 1
#else
#define NBCXF_F08 0
#endif

/* One more (exported) name for the routine NBCXF_IMPL. */
#define NBCXF_ALIAS_(impl, name) \\
    extern __typeof__(impl) name __attribute__((alias(#impl)));
#define NBCXF_ALIAS(impl, name) NBCXF_ALIAS_(impl, name)
#define NBCXF_NAME(name) NBCXF_ALIAS(NBCXF_IMPL, name)
"""


def main() -> None:
    print(HEADER)
    for name, params in REQ:
        print(request_fn(name, params))
    for name, args in OPS:
        print(collective(name, args, False))
    print("#if SHIM_PERSISTENT\n")
    for name, args in OPS:
        print(collective(name, args, True))
    print("#endif /* SHIM_PERSISTENT */")


if __name__ == "__main__":
    main()
