/* Timers kept in a file of their own, as mini-apps do. */
#include <mpi.h>

#include "comm.h"

static double t_start[4], t_total[4];

void timer_start(int which)
{
    t_start[which] = MPI_Wtime();
}

void timer_stop(int which)
{
    t_total[which] += MPI_Wtime() - t_start[which];
}

double timer_total(int which)
{
    return t_total[which];
}
