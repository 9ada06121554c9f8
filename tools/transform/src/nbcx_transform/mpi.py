"""What the tool knows about MPI and the C library.

Collectives: for each blocking collective, the role of every argument (send
buffer, receive buffer, count/displacement/type array, root, communicator)
and on which ranks it matters (all, the root only, the non-roots only).

Other functions: their effect on the memory their pointer arguments point to
(``R`` read, ``W`` written, ``-`` none), whether they do I/O, end the process,
or must complete every pending collective first (``fence``).  A call to a
function that is neither defined in the translation unit nor listed here has
unknown effects: no collective may be in flight across it.
"""

from __future__ import annotations

from dataclasses import dataclass

# Argument roles of the blocking collectives.
#   S send buffer (read), R receive buffer (written; read too for MPI_IN_PLACE),
#   B MPI_Bcast's buffer (read at the root, written elsewhere),
#   A count / displacement / datatype array (read until completion),
#   x scalar, root the root rank, comm the communicator.
# A trailing "@r" means: only significant at the root.
COLLECTIVES: dict[str, tuple[str, ...]] = {
    "MPI_Barrier": ("comm",),
    "MPI_Bcast": ("B", "x", "x", "root", "comm"),
    "MPI_Reduce": ("S", "R@r", "x", "x", "x", "root", "comm"),
    "MPI_Allreduce": ("S", "R", "x", "x", "x", "comm"),
    "MPI_Gather": ("S", "x", "x", "R@r", "x", "x", "root", "comm"),
    "MPI_Gatherv": ("S", "x", "x", "R@r", "A@r", "A@r", "x", "root", "comm"),
    "MPI_Scatter": ("S@r", "x", "x", "R", "x", "x", "root", "comm"),
    "MPI_Scatterv": ("S@r", "A@r", "A@r", "x", "R", "x", "x", "root", "comm"),
    "MPI_Allgather": ("S", "x", "x", "R", "x", "x", "comm"),
    "MPI_Allgatherv": ("S", "x", "x", "R", "A", "A", "x", "comm"),
    "MPI_Alltoall": ("S", "x", "x", "R", "x", "x", "comm"),
    "MPI_Alltoallv": ("S", "A", "A", "x", "R", "A", "A", "x", "comm"),
    "MPI_Alltoallw": ("S", "A", "A", "A", "R", "A", "A", "A", "comm"),
    "MPI_Reduce_scatter": ("S", "R", "A", "x", "x", "comm"),
    "MPI_Reduce_scatter_block": ("S", "R", "x", "x", "x", "comm"),
    "MPI_Scan": ("S", "R", "x", "x", "x", "comm"),
    "MPI_Exscan": ("S", "R", "x", "x", "x", "comm"),
    "MPI_Neighbor_allgather": ("S", "x", "x", "R", "x", "x", "comm"),
    "MPI_Neighbor_allgatherv": ("S", "x", "x", "R", "A", "A", "x", "comm"),
    "MPI_Neighbor_alltoall": ("S", "x", "x", "R", "x", "x", "comm"),
    "MPI_Neighbor_alltoallv": ("S", "A", "A", "x", "R", "A", "A", "x", "comm"),
    "MPI_Neighbor_alltoallw": ("S", "A", "A", "A", "R", "A", "A", "A", "comm"),
}


def nonblocking_name(name: str) -> str:
    """MPI_Allreduce -> MPI_Iallreduce."""
    rest = name[len("MPI_") :]
    return "MPI_I" + rest[0].lower() + rest[1:]


def blocking_name(nb_name: str) -> str | None:
    """MPI_Iallreduce -> MPI_Allreduce (None if not a nonblocking collective)."""
    if not nb_name.startswith("MPI_I") or len(nb_name) < 6:
        return None
    rest = nb_name[len("MPI_I") :]
    cand = "MPI_" + rest[0].upper() + rest[1:]
    return cand if cand in COLLECTIVES else None


def persistent_names(name: str) -> tuple[str, str]:
    """MPI_Allreduce -> (MPI_Allreduce_init, MPIX_Allreduce_init)."""
    rest = name[len("MPI_") :]
    return f"MPI_{rest}_init", f"MPIX_{rest}_init"


def is_rooted(name: str) -> bool:
    return "root" in COLLECTIVES[name]


@dataclass(frozen=True)
class FuncSpec:
    """Effects of a library function on what its pointer arguments point to."""

    args: tuple[str, ...] = ()  # per argument: "R", "W", "RW" or "-"
    rest: str = "-"  # effect for further (variadic) arguments
    # "none", "arg0", "alloc", "extern"; "alloc_out"/"alloc_out0": the last/first argument
    # points to where fresh memory's address is stored (MPI_Alloc_mem, posix_memalign)
    ret: str = "none"
    io: bool = False
    exits: bool = False
    fence: bool = False  # no collective may be in flight across this call
    mpi: bool = False  # an MPI call (fences MPI_Ibarrier)
    clock: bool = False  # reads a clock: fences MPI_Ibarrier only (a barrier before it times)


_PURE = FuncSpec()
_MATH = [
    "sqrt",
    "sqrtf",
    "cbrt",
    "pow",
    "powf",
    "exp",
    "expf",
    "exp2",
    "expm1",
    "log",
    "logf",
    "log2",
    "log10",
    "log1p",
    "sin",
    "sinf",
    "cos",
    "cosf",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "fabs",
    "fabsf",
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "round",
    "roundf",
    "trunc",
    "fmod",
    "fmin",
    "fmax",
    "fminf",
    "fmaxf",
    "hypot",
    "erf",
    "erfc",
    "lround",
    "llround",
    "lrint",
    "rint",
    "nearbyint",
    "copysign",
    "abs",
    "labs",
    "llabs",
    "ldexp",
    "isnan",
    "isinf",
    "toupper",
    "tolower",
    "isdigit",
    "isalpha",
    "isspace",
    "isalnum",
    "isupper",
    "islower",
    "rand",
    "srand",
    "drand48",
    "srand48",
    "lrand48",
    "random",
    "srandom",
]

# The float and long double forms of <math.h>'s functions above (C99 reserves every
# one of these names), and <complex.h>'s functions (arguments by value: they touch no
# memory of the program).
_MATH_FL = [
    "sqrt", "cbrt", "pow", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "fabs", "floor", "ceil", "round", "trunc", "fmod",
    "fmin", "fmax", "hypot", "erf", "erfc", "lround", "llround", "lrint", "llrint",
    "rint", "nearbyint", "copysign", "ldexp", "fma", "fdim", "remainder", "scalbn",
    "logb", "ilogb", "nextafter", "tgamma",
]  # fmt: skip
_COMPLEX = [
    "creal", "cimag", "cabs", "carg", "conj", "cproj", "cexp", "clog", "cpow", "csqrt",
    "csin", "ccos", "ctan", "casin", "cacos", "catan", "csinh", "ccosh", "ctanh",
    "casinh", "cacosh", "catanh",
]  # fmt: skip
_MATH += [n + suffix for n in _MATH_FL for suffix in ("", "f", "l")]
_MATH += [n + suffix for n in _COMPLEX for suffix in ("", "f", "l")]

LIBC: dict[str, FuncSpec] = {name: _PURE for name in _MATH}
LIBC.update(
    {
        "memcpy": FuncSpec(("W", "R", "-"), ret="arg0"),
        "memmove": FuncSpec(("W", "R", "-"), ret="arg0"),
        "memset": FuncSpec(("W", "-", "-"), ret="arg0"),
        "memcmp": FuncSpec(("R", "R", "-")),
        "strlen": FuncSpec(("R",)),
        "strnlen": FuncSpec(("R", "-")),
        "strcmp": FuncSpec(("R", "R")),
        "strncmp": FuncSpec(("R", "R", "-")),
        "strcpy": FuncSpec(("W", "R"), ret="arg0"),
        "strncpy": FuncSpec(("W", "R", "-"), ret="arg0"),
        "strcat": FuncSpec(("RW", "R"), ret="arg0"),
        "strncat": FuncSpec(("RW", "R", "-"), ret="arg0"),
        "strchr": FuncSpec(("R", "-"), ret="arg0"),
        "strrchr": FuncSpec(("R", "-"), ret="arg0"),
        "strstr": FuncSpec(("R", "R"), ret="arg0"),
        "strdup": FuncSpec(("R",), ret="alloc"),
        "atoi": FuncSpec(("R",)),
        "atol": FuncSpec(("R",)),
        "atof": FuncSpec(("R",)),
        "strtol": FuncSpec(("R", "W", "-")),
        "strtoul": FuncSpec(("R", "W", "-")),
        "strtod": FuncSpec(("R", "W")),
        "malloc": FuncSpec(("-",), ret="alloc"),
        "calloc": FuncSpec(("-", "-"), ret="alloc"),
        "aligned_alloc": FuncSpec(("-", "-"), ret="alloc"),
        "realloc": FuncSpec(("RW", "-"), ret="alloc"),
        "free": FuncSpec(("W",)),
        "printf": FuncSpec(("R",), rest="R", io=True),
        "puts": FuncSpec(("R",), io=True),
        "putchar": FuncSpec(("-",), io=True),
        "fprintf": FuncSpec(("RW", "R"), rest="R", io=True),
        "fputs": FuncSpec(("R", "RW"), io=True),
        "fputc": FuncSpec(("-", "RW"), io=True),
        "fflush": FuncSpec(("RW",), io=True),
        "sprintf": FuncSpec(("W", "R"), rest="R"),
        "snprintf": FuncSpec(("W", "-", "R"), rest="R"),
        "sscanf": FuncSpec(("R", "R"), rest="W"),
        "__assert_fail": FuncSpec(("R", "R", "-", "R"), io=True),
        # stdlib, string: more of what they read and write
        "getenv": FuncSpec(("R",)),
        "secure_getenv": FuncSpec(("R",)),
        "atoll": FuncSpec(("R",)),
        "strtoll": FuncSpec(("R", "W", "-")),
        "strtoull": FuncSpec(("R", "W", "-")),
        "strtof": FuncSpec(("R", "W")),
        "memchr": FuncSpec(("R", "-", "-"), ret="arg0"),
        "strspn": FuncSpec(("R", "R")),
        "strcspn": FuncSpec(("R", "R")),
        "strpbrk": FuncSpec(("R", "R"), ret="arg0"),
        "strcasecmp": FuncSpec(("R", "R")),
        "strncasecmp": FuncSpec(("R", "R", "-")),
        "posix_memalign": FuncSpec(("W", "-", "-"), ret="alloc_out0"),
        # math with pointer results
        "frexp": FuncSpec(("-", "W")),
        "modf": FuncSpec(("-", "W")),
        "sincos": FuncSpec(("-", "W", "W")),
        # time
        "time": FuncSpec(("W",), clock=True),
        "difftime": _PURE,
        "gettimeofday": FuncSpec(("W", "W"), clock=True),
        "clock_gettime": FuncSpec(("-", "W"), clock=True),
        "clock": FuncSpec(clock=True),
        "sleep": _PURE,
        "usleep": _PURE,
        "nanosleep": FuncSpec(("R", "W")),
        # stdio
        "fopen": FuncSpec(("R", "R"), io=True),
        "fclose": FuncSpec(("RW",), io=True),
        "fread": FuncSpec(("W", "-", "-", "RW"), io=True),
        "fwrite": FuncSpec(("R", "-", "-", "RW"), io=True),
        "fgets": FuncSpec(("W", "-", "RW"), ret="arg0", io=True),
        "fgetc": FuncSpec(("RW",), io=True),
        "getc": FuncSpec(("RW",), io=True),
        "fscanf": FuncSpec(("RW", "R"), rest="W", io=True),
        "scanf": FuncSpec(("R",), rest="W", io=True),
        "vfprintf": FuncSpec(("RW", "R", "R"), io=True),
        "vprintf": FuncSpec(("R", "R"), io=True),
        "vsprintf": FuncSpec(("W", "R", "RW")),
        "vsnprintf": FuncSpec(("W", "-", "R", "RW")),
        "putc": FuncSpec(("-", "RW"), io=True),
        "perror": FuncSpec(("R",), io=True),
        "feof": FuncSpec(("R",)),
        "ferror": FuncSpec(("R",)),
        "fseek": FuncSpec(("RW", "-", "-"), io=True),
        "ftell": FuncSpec(("R",)),
        "rewind": FuncSpec(("RW",), io=True),
        "exit": FuncSpec(("-",), exits=True),
        "abort": FuncSpec((), exits=True),
    }
)

# MPI functions other than the collectives above whose effects are known.
MPI_FUNCS: dict[str, FuncSpec] = {
    "MPI_Comm_rank": FuncSpec(("-", "W")),
    "MPI_Comm_size": FuncSpec(("-", "W")),
    # MPI's own functions that only answer a question: a wait moves past them
    # (MPI_Wtime reads a clock: it stops only the wait of a barrier, which times)
    "MPI_Wtime": FuncSpec((), clock=True),
    "MPI_Wtick": FuncSpec(()),
    "MPI_Comm_remote_size": FuncSpec(("-", "W")),
    "MPI_Comm_compare": FuncSpec(("-", "-", "W")),
    "MPI_Comm_get_name": FuncSpec(("-", "W", "W")),
    "MPI_Comm_group": FuncSpec(("-", "W")),
    "MPI_Group_size": FuncSpec(("-", "W")),
    "MPI_Group_rank": FuncSpec(("-", "W")),
    "MPI_Group_translate_ranks": FuncSpec(("-", "-", "R", "-", "W")),
    "MPI_Group_free": FuncSpec(("RW",)),
    "MPI_Get_version": FuncSpec(("W", "W")),
    "MPI_Get_library_version": FuncSpec(("W", "W")),
    "MPI_Query_thread": FuncSpec(("W",)),
    "MPI_Is_thread_main": FuncSpec(("W",)),
    "MPI_Topo_test": FuncSpec(("-", "W")),
    "MPI_Cartdim_get": FuncSpec(("-", "W")),
    "MPI_Error_string": FuncSpec(("-", "W", "W")),
    "MPI_Error_class": FuncSpec(("-", "W")),
    "MPI_Type_get_true_extent": FuncSpec(("-", "W", "W")),
    "MPI_Type_get_name": FuncSpec(("-", "W", "W")),
    "MPI_Get_elements": FuncSpec(("R", "-", "W")),
    "MPI_Test_cancelled": FuncSpec(("R", "W")),
    "MPI_Initialized": FuncSpec(("W",)),
    "MPI_Finalized": FuncSpec(("W",)),
    "MPI_Comm_dup": FuncSpec(("-", "W"), mpi=True),
    "MPI_Comm_split": FuncSpec(("-", "-", "-", "W"), mpi=True),
    "MPI_Comm_free": FuncSpec(("RW",), mpi=True),
    "MPI_Comm_test_inter": FuncSpec(("-", "W")),
    "MPI_Cart_create": FuncSpec(("-", "-", "R", "R", "-", "W"), mpi=True),
    "MPI_Cart_coords": FuncSpec(("-", "-", "-", "W")),
    "MPI_Cart_rank": FuncSpec(("-", "R", "W")),
    "MPI_Cart_shift": FuncSpec(("-", "-", "-", "W", "W")),
    "MPI_Cart_get": FuncSpec(("-", "-", "W", "W", "W")),
    "MPI_Dims_create": FuncSpec(("-", "-", "RW")),
    "MPI_Type_contiguous": FuncSpec(("-", "-", "W")),
    "MPI_Type_vector": FuncSpec(("-", "-", "-", "-", "W")),
    "MPI_Type_create_struct": FuncSpec(("-", "R", "R", "R", "W")),
    "MPI_Type_create_resized": FuncSpec(("-", "-", "-", "W")),
    "MPI_Type_commit": FuncSpec(("RW",)),
    "MPI_Type_free": FuncSpec(("RW",)),
    "MPI_Type_get_extent": FuncSpec(("-", "W", "W")),
    "MPI_Op_create": FuncSpec(("-", "-", "W")),
    "MPI_Op_free": FuncSpec(("RW",)),
    "MPI_Alloc_mem": FuncSpec(("-", "-", "W"), ret="alloc_out", mpi=True),
    "MPI_Free_mem": FuncSpec(("W",), mpi=True),
    "MPI_Type_size": FuncSpec(("-", "W")),
    "MPI_Get_count": FuncSpec(("R", "-", "W")),
    "MPI_Get_processor_name": FuncSpec(("W", "W")),
    "MPI_Send": FuncSpec(("R",), mpi=True),
    "MPI_Ssend": FuncSpec(("R",), mpi=True),
    "MPI_Recv": FuncSpec(("W", "-", "-", "-", "-", "-", "W"), mpi=True),
    "MPI_Sendrecv": FuncSpec(
        ("R", "-", "-", "-", "-", "W", "-", "-", "-", "-", "-", "W"), mpi=True
    ),
    "MPI_Sendrecv_replace": FuncSpec(("RW", "-", "-", "-", "-", "-", "-", "-", "W"), mpi=True),
    "MPI_Probe": FuncSpec(("-", "-", "-", "W"), mpi=True),
    "MPI_Iprobe": FuncSpec(("-", "-", "-", "W", "W"), mpi=True),
    # Must complete everything before (Petal, Section 3.4).
    "MPI_Barrier": FuncSpec(fence=True, mpi=True),
    "MPI_Finalize": FuncSpec(fence=True, mpi=True),
    "MPI_Abort": FuncSpec(fence=True, mpi=True, exits=True),
}

# MPI calls that make the program's synchronisation invisible to a data
# dependence analysis: with these in a file, nothing is converted.
UNSAFE_MPI_PREFIXES: tuple[str, ...] = ("MPI_Win_",)
UNSAFE_MPI_NAMES: tuple[str, ...] = (
    "MPI_Put",
    "MPI_Get",
    "MPI_Accumulate",
    "MPI_Get_accumulate",
    "MPI_Fetch_and_op",
    "MPI_Compare_and_swap",
    "MPI_Rput",
    "MPI_Rget",
    "MPI_Raccumulate",
    "MPI_Rget_accumulate",
    "MPI_Rsend",
    "MPI_Irsend",
    "MPI_Rsend_init",
)
INTERCOMM_NAMES: tuple[str, ...] = ("MPI_Intercomm_create", "MPI_Comm_spawn", "MPI_Comm_get_parent")
INTERCOMM_NAMES += ("MPI_Comm_accept", "MPI_Comm_connect", "MPI_Comm_join", "MPI_Intercomm_merge")


# Functions of other libraries, known only when the call's declaration comes from the
# library's own header (a program may define a function of the same name itself).
# zlib (zlib.h): checksums read their buffer; compress/uncompress write the
# destination and its length, read the source (uncompress2 also updates *sourceLen).
ZLIB: dict[str, FuncSpec] = {
    "crc32": FuncSpec(("-", "R", "-")),
    "crc32_z": FuncSpec(("-", "R", "-")),
    "crc32_combine": _PURE,
    "adler32": FuncSpec(("-", "R", "-")),
    "adler32_z": FuncSpec(("-", "R", "-")),
    "adler32_combine": _PURE,
    "compressBound": _PURE,
    "compress": FuncSpec(("W", "RW", "R", "-")),
    "compress2": FuncSpec(("W", "RW", "R", "-", "-")),
    "uncompress": FuncSpec(("W", "RW", "R", "-")),
    "uncompress2": FuncSpec(("W", "RW", "R", "RW")),
}
# FFTW 3 (fftw3.h), double, float and long double: executing a plan on the arrays
# given (the new-array execute functions) reads and may overwrite its input (c2r and
# FFTW_DESTROY_INPUT plans do) and writes its output, and touches no other memory of
# the program (the plan is FFTW's own); destroying a plan touches none.  Not known,
# so still stopping waits: fftw_execute() (it works on the arrays the planner was
# given, which the analysis does not tie to the plan) and the planners (FFTW_MEASURE
# overwrites the arrays).
FFTW: dict[str, FuncSpec] = {}
for _p in ("fftw_", "fftwf_", "fftwl_"):
    FFTW.update(
        {
            _p + "execute_dft": FuncSpec(("-", "RW", "RW")),
            _p + "execute_split_dft": FuncSpec(("-", "RW", "RW", "RW", "RW")),
            _p + "execute_dft_r2c": FuncSpec(("-", "RW", "RW")),
            _p + "execute_dft_c2r": FuncSpec(("-", "RW", "RW")),
            _p + "execute_split_dft_r2c": FuncSpec(("-", "RW", "RW", "RW")),
            _p + "execute_split_dft_c2r": FuncSpec(("-", "RW", "RW", "RW")),
            _p + "execute_r2r": FuncSpec(("-", "RW", "RW")),
            _p + "destroy_plan": FuncSpec(("-",)),
            _p + "malloc": FuncSpec(("-",), ret="alloc"),
            _p + "alloc_real": FuncSpec(("-",), ret="alloc"),
            _p + "alloc_complex": FuncSpec(("-",), ret="alloc"),
            _p + "free": FuncSpec(("W",)),
        }
    )
# OpenMP's timers and queries (omp.h): they touch no memory of the program.
OMP: dict[str, FuncSpec] = {
    "omp_get_wtime": FuncSpec((), clock=True),
    "omp_get_wtick": _PURE,
    "omp_get_thread_num": _PURE,
    "omp_get_num_threads": _PURE,
    "omp_get_max_threads": _PURE,
    "omp_get_num_procs": _PURE,
    "omp_in_parallel": _PURE,
}
LIBRARIES: dict[str, dict[str, FuncSpec]] = {"zlib.h": ZLIB, "fftw3.h": FFTW, "omp.h": OMP}


def library_names() -> set[str]:
    """Names of the functions known from a library header (see :data:`LIBRARIES`)."""
    return {name for specs in LIBRARIES.values() for name in specs}


def lookup(name: str, header: str = "") -> FuncSpec | None:
    """Known effects of a library or MPI function (not the collectives).

    ``header``: the file name of the header declaring the called function; the
    functions of :data:`LIBRARIES` are known only from their own header."""
    lib = LIBRARIES.get(header)
    if lib is not None and name in lib:
        return lib[name]
    if name in MPI_FUNCS:
        return MPI_FUNCS[name]
    if name.startswith("__builtin___") and name.endswith("_chk"):
        name = name[len("__builtin___") : -len("_chk")]
    elif name.startswith("__builtin_"):
        name = name[len("__builtin_") :]
    return LIBC.get(name)
