/* CoMD-like time-step loop: every collective goes through a wrapper of
 * parallel.c, with timers of timers.c around it and work after it. */
#include <stdio.h>

#include "parallel.h"
#include "timers.h"

#define NATOMS 256

static double pos[NATOMS], vel[NATOMS], force[NATOMS];

static void computeForce(int n)
{
    for (int i = 0; i < n; i++)
        force[i] = -0.01 * pos[i] + 0.001 * (double)(i % 7);
}

static void advance(int n, double dt)
{
    for (int i = 0; i < n; i++) {
        vel[i] += dt * force[i];
        pos[i] += dt * vel[i];
    }
}

/* nbcx-transform: nonblocking twins of one-collective wrappers (defined in parallel.c) */
void maxIntParallel_nb(int *, int *, int);
void maxIntParallel_wait(void);
void bcastParallel_nb(void *, int, int);
void bcastParallel_wait(void);
void addDoubleParallel_nb(double *, double *, int);
void addDoubleParallel_wait(void);

/* sumAtoms() of CoMD: the reduction between two timer calls */
static void sumAtoms(int *nLocal, int *nMax)
{
    startTimer(commTimer);
    maxIntParallel_nb(nLocal, nMax, 1);
    stopTimer(commTimer);
    maxIntParallel_wait();
}

int main(int argc, char **argv)
{
    initParallel(&argc, &argv);
    int rank = getMyRank();
    int nsteps = 20;
    if (rank == 0)
        nsteps = 25;
    bcastParallel_nb(&nsteps, (int)sizeof(int), 0);
    for (int i = 0; i < NATOMS; i++) {
        pos[i] = (double)(i + rank);
        vel[i] = 0.0;
    }
    double eLocal[2], eSum[2] = {0.0, 0.0}, drift = 0.0;
    bcastParallel_wait();
    for (int step = 0; step < nsteps; step++) {
        eLocal[0] = 0.0;
        eLocal[1] = 0.0;
        for (int i = 0; i < NATOMS; i++) {
            eLocal[0] += 0.5 * vel[i] * vel[i];
            eLocal[1] += 0.5 * pos[i] * pos[i] * 0.01;
        }
        startTimer(commTimer);
        addDoubleParallel_nb(eLocal, eSum, 2);
        stopTimer(commTimer);
        startTimer(computeTimer);
        computeForce(NATOMS);
        advance(NATOMS, 0.05);
        stopTimer(computeTimer);
        addDoubleParallel_wait();
        drift += eSum[0] - eSum[1];
        sumValueParallel(drift);
        drift += 1e-9 * lastSum();
    }
    int nLocal = NATOMS + rank, nMax = 0;
    sumAtoms(&nLocal, &nMax);
    if (rank == 0)
        printf("drift %.9e max atoms %d ranks %d timers %d\n", drift, nMax, getNRanks(),
               timerTotal(commTimer) >= 0.0 && timerTotal(computeTimer) >= 0.0);
    destroyParallel();
    return 0;
}
