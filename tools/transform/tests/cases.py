"""The example programs: paper 004's figures, safety rules, a larger program."""

from __future__ import annotations

# The paper's figures convert every safe call, as Petal does (the default leaves
# calls whose wait would follow them at once blocking).
PETAL = ("--min-overlap", "0")

# (case id, program in programs/, extra nbcx-transform options)
CASES: list[tuple[str, str, tuple[str, ...]]] = [
    ("fig05_cg_nonblocking", "fig05_cg.c", ("--no-persistent", *PETAL)),  # Fig. 5 -> 6
    ("fig05_cg_persistent", "fig05_cg.c", PETAL),  # Fig. 5 -> 11
    ("fig04_branches", "fig04_branches.c", PETAL),  # Fig. 4, Section 3.4 flags
    ("fig07_scatter", "fig07_scatter.c", PETAL),  # Fig. 7 -> 8
    ("fig09_bcast", "fig09_bcast.c", PETAL),  # Fig. 9 -> 10
    ("fig12_minmax", "fig12_minmax.c", PETAL),  # Fig. 12 -> 13
    ("fig19_minimd", "fig19_minimd.c", PETAL),  # Fig. 19
    ("gol_blocking", "gol_blocking.c", PETAL),  # Game of Life -> persistent
    ("gol_nonblocking", "gol_nonblocking.c", PETAL),  # Fig. 16 (a) -> (b)
    ("safety_alias", "safety_alias.c", ()),
    ("safety_callee", "safety_callee.c", ()),
    ("safety_return", "safety_return.c", ()),
    ("safety_macro", "safety_macro.c", ()),
    ("safety_loopcount", "safety_loopcount.c", ()),
    ("alloc_wrapper", "alloc_wrapper.c", ()),
    ("control_flow", "control_flow.c", ()),  # else-if, switch, goto, do/continue, globals
    ("heat", "heat.c", ()),  # the larger program
    ("unsafe_alloc_mem", "unsafe_alloc_mem.c", PETAL),  # issue 19.1: MPI_Alloc_mem
    ("once_barrier", "once_barrier.c", ()),  # issue 19.5: if (iter == 1) MPI_Barrier
    ("misleading_indent", "misleading_indent.c", ()),  # issue 19.3
    ("mpi_queries", "mpi_queries.c", ()),  # issue 19.4: MPI_Wtime, MPI_Comm_size, ...
    ("batch_bcast", "batch_bcast.c", ()),  # issue 18 (md): a loop of bcasts, one waitall
    ("safety_batch", "safety_batch.c", ()),  # issue 18: loops that must not be batched
    ("split_array", "split_array.c", ()),  # issue 18 (life): a[0], a[1] apart; negatives
    ("fnptr", "fnptr.c", ()),  # issue 34: calls through local function pointers
    ("rank_comm", "rank_comm.c", ()),  # issue 34: c.m = MPI_COMM_WORLD, the rank's
]
