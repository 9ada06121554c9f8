/* The run time of an MPI program between MPI_Init and MPI_Finalize, without
 * the launcher's start-up: preloaded (LD_PRELOAD) by time_corpus.py, it
 * interposes both through the PMPI profiling interface and, at MPI_Finalize,
 * prints on stderr "nbcx-time: SECONDS" (the largest of the ranks' times).
 *
 * Build: mpicc -shared -fPIC -O1 -o libmpi_timer.so mpi_timer.c
 */
#include <mpi.h>
#include <stdio.h>

static double t_start;

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    PMPI_Barrier(MPI_COMM_WORLD);
    t_start = PMPI_Wtime();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    PMPI_Barrier(MPI_COMM_WORLD);
    t_start = PMPI_Wtime();
    return rc;
}

int MPI_Finalize(void)
{
    double mine = PMPI_Wtime() - t_start, most = 0.0;
    int rank = 0;
    PMPI_Reduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "nbcx-time: %.6f\n", most);
    return PMPI_Finalize();
}
