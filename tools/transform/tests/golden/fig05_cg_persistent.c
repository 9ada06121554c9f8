/* Paper 004, Fig. 5: the conjugate gradient loop of congrad.c, blocking.
 * Solves A x = b for a symmetric, diagonally dominant tridiagonal A whose rows
 * are distributed over the ranks; N must be a multiple of the rank count. */
#include <math.h>
#include <mpi.h>
/* nbcx-transform: NBCX_PERSISTENT selects the persistent collectives: 4 for the
 * MPI-4 names, 1 for Open MPI 4's MPIX_*_init (mpi-ext.h), 0 for the nonblocking
 * forms where there are none or they are unreliable (MPICH before 4.3 returns
 * stale data from some, e.g. MPI_Allgather_init, MPI_Gather_init). */
#ifndef NBCX_PERSISTENT
#if MPI_VERSION >= 4 && !(defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40300000)
#define NBCX_PERSISTENT 4
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBCX_PERSISTENT 1
#else
#define NBCX_PERSISTENT 0
#endif
#else
#define NBCX_PERSISTENT 0
#endif
#endif
#include <stdio.h>
#include <stdlib.h>

#define N 24
#define EPSILON 1.0e-20
#define MAX_ITERATIONS 100

/* H = M^-1 r with the Jacobi preconditioner M = diag(A). */
static void SolvePrecondMatrix(const double *Precond, double *HVector, const double *Residue,
                               int VectorSize)
{
    for (int i = 0; i < VectorSize; i++)
        HVector[i] = Precond[i] * Residue[i];
}

static double ComputeVectorDotProduct(const double *a, const double *b, int VectorSize)
{
    double sum = 0.0;
    for (int i = 0; i < VectorSize; i++)
        sum += a[i] * b[i];
    return sum;
}

/* y = A_local x for the rows first .. first + rows - 1 of A. */
static void MatVec(const double *x, double *y, int first, int rows)
{
    for (int i = 0; i < rows; i++) {
        int g = first + i;
        double s = 4.0 * x[g];
        if (g > 0)
            s -= x[g - 1];
        if (g < N - 1)
            s -= x[g + 1];
        y[i] = s;
    }
}

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[5] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
            MPI_REQUEST_NULL};
    int MyRank, NumProcs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &MyRank);
    MPI_Comm_size(MPI_COMM_WORLD, &NumProcs);

    int Bloc_VectorSize = N / NumProcs;
    int first = MyRank * Bloc_VectorSize;
    double *Vector_X = calloc(N, sizeof(double));
    double *Direction_Vector = calloc(N, sizeof(double));
    double *Bloc_Vector_X = calloc(Bloc_VectorSize, sizeof(double));
    double *Bloc_Direction_Vector = malloc(Bloc_VectorSize * sizeof(double));
    double *Bloc_Residue_Vector = malloc(Bloc_VectorSize * sizeof(double));
    double *Bloc_HVector = malloc(Bloc_VectorSize * sizeof(double));
    double *Bloc_Precond_Matrix = malloc(Bloc_VectorSize * sizeof(double));
    double *Buffer = malloc(Bloc_VectorSize * sizeof(double));

    /* b = (1, 2, ..., N), x0 = 0: r0 = b, H0 = M^-1 r0, d0 = H0. */
    for (int i = 0; i < Bloc_VectorSize; i++) {
        Bloc_Residue_Vector[i] = -(double)(first + i + 1);
        Bloc_Precond_Matrix[i] = 1.0 / 4.0;
    }
    SolvePrecondMatrix(Bloc_Precond_Matrix, Bloc_HVector, Bloc_Residue_Vector, Bloc_VectorSize);
    for (int i = 0; i < Bloc_VectorSize; i++)
        Bloc_Direction_Vector[i] = -Bloc_HVector[i];
    double Bloc_Delta0 = ComputeVectorDotProduct(Bloc_Residue_Vector, Bloc_HVector, Bloc_VectorSize);
    double Delta0;
    MPI_Iallreduce(&Bloc_Delta0, &Delta0, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);

    int iter = 0, index, i;
    double Tau, Beta, Delta1, Bloc_Delta1, Bloc_Denom, Denom;
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
#if NBCX_PERSISTENT == 4
    MPI_Allgather_init(Bloc_Direction_Vector, Bloc_VectorSize, MPI_DOUBLE, Direction_Vector, Bloc_VectorSize, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[1]);
    MPI_Allreduce_init(&Bloc_Denom, &Denom, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[2]);
    MPI_Allgather_init(Bloc_Vector_X, Bloc_VectorSize, MPI_DOUBLE, Vector_X, Bloc_VectorSize, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[3]);
    MPI_Allreduce_init(&Bloc_Delta1, &Delta1, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[4]);
#elif NBCX_PERSISTENT
    MPIX_Allgather_init(Bloc_Direction_Vector, Bloc_VectorSize, MPI_DOUBLE, Direction_Vector, Bloc_VectorSize, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[1]);
    MPIX_Allreduce_init(&Bloc_Denom, &Denom, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[2]);
    MPIX_Allgather_init(Bloc_Vector_X, Bloc_VectorSize, MPI_DOUBLE, Vector_X, Bloc_VectorSize, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[3]);
    MPIX_Allreduce_init(&Bloc_Delta1, &Delta1, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[4]);
#endif
    do {
        /* Tau = Delta0 / (d^T A d) */
#if NBCX_PERSISTENT
        MPI_Start(&nbcx_req[1]);
#else
        MPI_Iallgather(Bloc_Direction_Vector, Bloc_VectorSize, MPI_DOUBLE, Direction_Vector,
                      Bloc_VectorSize, MPI_DOUBLE, MPI_COMM_WORLD, &nbcx_req[1]);
#endif
        MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
        MatVec(Direction_Vector, Buffer, first, Bloc_VectorSize);
        Bloc_Denom = ComputeVectorDotProduct(Bloc_Direction_Vector, Buffer, Bloc_VectorSize);
#if NBCX_PERSISTENT
        MPI_Start(&nbcx_req[2]);
#else
        MPI_Iallreduce(&Bloc_Denom, &Denom, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[2]);
#endif
        MPI_Wait(&nbcx_req[2], MPI_STATUS_IGNORE);
        Tau = Delta0 / Denom;
        iter++;
        MPI_Wait(&nbcx_req[3], MPI_STATUS_IGNORE);
        for (index = 0; index < Bloc_VectorSize; index++) {
            Bloc_Vector_X[index] = Vector_X[MyRank * Bloc_VectorSize + index] + Tau *
                Bloc_Direction_Vector[index];
            Bloc_Residue_Vector[index] = Bloc_Residue_Vector[index] + Tau * Buffer[index];
        }
#if NBCX_PERSISTENT
        MPI_Start(&nbcx_req[3]);
#else
        MPI_Iallgather(Bloc_Vector_X, Bloc_VectorSize, MPI_DOUBLE, Vector_X, Bloc_VectorSize,
                      MPI_DOUBLE, MPI_COMM_WORLD, &nbcx_req[3]);
#endif
        SolvePrecondMatrix(Bloc_Precond_Matrix, Bloc_HVector, Bloc_Residue_Vector,
                           Bloc_VectorSize);
        Bloc_Delta1 = ComputeVectorDotProduct(Bloc_Residue_Vector, Bloc_HVector, Bloc_VectorSize
        );
#if NBCX_PERSISTENT
        MPI_Start(&nbcx_req[4]);
#else
        MPI_Iallreduce(&Bloc_Delta1, &Delta1, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[4]);
#endif
        MPI_Wait(&nbcx_req[4], MPI_STATUS_IGNORE);
        Beta = Delta1 / Delta0;
        Delta0 = Delta1;
        for (i = 0; i < Bloc_VectorSize; i++) {
            Bloc_Direction_Vector[i] = -Bloc_HVector[i] + Beta * Bloc_Direction_Vector[i];
        }
    } while (Delta0 > EPSILON && iter < MAX_ITERATIONS);
    MPI_Wait(&nbcx_req[3], MPI_STATUS_IGNORE);
#if NBCX_PERSISTENT
    MPI_Request_free(&nbcx_req[1]);
    MPI_Request_free(&nbcx_req[2]);
    MPI_Request_free(&nbcx_req[3]);
    MPI_Request_free(&nbcx_req[4]);
#endif

    if (MyRank == 0) {
        printf("converged after %d iterations\n", iter);
        for (i = 0; i < N; i++)
            printf("x[%d] = %.6f\n", i, Vector_X[i]);
    }
    free(Vector_X);
    free(Direction_Vector);
    free(Bloc_Vector_X);
    free(Bloc_Direction_Vector);
    free(Bloc_Residue_Vector);
    free(Bloc_HVector);
    free(Bloc_Precond_Matrix);
    free(Buffer);
    MPI_Finalize();
    return 0;
}
