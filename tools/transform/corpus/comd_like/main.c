/* CoMD-like time-step loop: energies summed through the wrappers, one direct
 * reduction under #ifdef DO_MPI with work after it. */
#include <stdio.h>
#include <stdlib.h>
#ifdef DO_MPI
#include <mpi.h>
#endif

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

static double ePot = 0.0, eKin = 0.0;

/* kineticEnergy() of CoMD: the reduction between two timer calls */
static void kineticEnergy(void)
{
    double eLocal[2] = {0.0, 0.0}, eSum[2];
    for (int i = 0; i < NATOMS; i++) {
        eLocal[0] += 0.5 * pos[i] * pos[i] * 0.01;
        eLocal[1] += 0.5 * vel[i] * vel[i];
    }
    startTimer(commTimer);
    addDoubleParallel(eLocal, eSum, 2);
    stopTimer(commTimer);
    ePot = eSum[0];
    eKin = eSum[1];
}

int main(int argc, char **argv)
{
    initParallel(&argc, &argv);
    int rank = getMyRank();
    int nsteps = 20;
    if (rank == 0)
        nsteps = 25;
    bcastParallel(&nsteps, (int)sizeof(int), 0);
    for (int i = 0; i < NATOMS; i++) {
        pos[i] = (double)(i + rank);
        vel[i] = 0.0;
    }
    double eLocal[2], eSum[2] = {0.0, 0.0}, drift = 0.0, kin = 0.0;
    for (int step = 0; step < nsteps; step++) {
        startTimer(computeTimer);
        computeForce(NATOMS);
        advance(NATOMS, 0.05);
        stopTimer(computeTimer);
        if (step % 5 == 0)
            kineticEnergy();
        eLocal[0] = 0.0;
        eLocal[1] = 0.0;
        for (int i = 0; i < NATOMS; i++) {
            eLocal[0] += 0.5 * vel[i] * vel[i];
            eLocal[1] += 0.5 * pos[i] * pos[i] * 0.01;
        }
        addDoubleParallel(eLocal, eSum, 2);
        drift += eSum[0] - eSum[1];
#ifdef DO_MPI
        MPI_Allreduce(&eLocal[0], &kin, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        computeForce(NATOMS);
        advance(NATOMS, 0.01);
#else
        kin = eLocal[0];
#endif
        drift += 1e-3 * kin;
    }
    int nLocal = NATOMS, nMax = 0;
    startTimer(commTimer);
    maxIntParallel(&nLocal, &nMax, 1);
    stopTimer(commTimer);
    kineticEnergy();
    if (rank == 0)
        printf("drift %.9e max atoms %d ranks %d energy %.6e %.6e timers %d\n", drift, nMax,
               getNRanks(), ePot, eKin, timerTotal(commTimer) >= 0.0);
    destroyParallel();
    return 0;
}
