/* poisson.c - a 2-D Poisson problem (5-point Laplacian on a DMDA, right
 * side 1, zero outside the grid) solved with the Krylov method given by -ksp_type
 * (pipelined ones: pipecg, pipecr, groppcg, pipefgmres, ... overlap their
 * MPI_Iallreduce with the matrix-vector product). Prints the iterations,
 * the final residual norm and the solve time. A plain PETSc program: run
 * natively and under libnbcx-pmpi (tests/petsc/CMakeLists.txt compares
 * the two). Options: -n N (grid N x N, default 64) and PETSc's own. */
#include <petscdmda.h>
#include <petscksp.h>

static PetscErrorCode assemble(DM da, Mat A)
{
    DMDALocalInfo info;
    PetscCall(DMDAGetLocalInfo(da, &info));
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
        for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
            /* Zero outside the grid: a neighbour outside is left out,
             * so the matrix is symmetric positive definite. */
            MatStencil row = { .i = i, .j = j }, col[5];
            PetscScalar v[5];
            PetscInt n = 0;
            col[n] = row;
            v[n++] = 4.0;
            if (j > 0) { col[n] = (MatStencil){ .i = i, .j = j - 1 }; v[n++] = -1.0; }
            if (i > 0) { col[n] = (MatStencil){ .i = i - 1, .j = j }; v[n++] = -1.0; }
            if (i < info.mx - 1) { col[n] = (MatStencil){ .i = i + 1, .j = j }; v[n++] = -1.0; }
            if (j < info.my - 1) { col[n] = (MatStencil){ .i = i, .j = j + 1 }; v[n++] = -1.0; }
            PetscCall(MatSetValuesStencil(A, 1, &row, n, col, v,
                                          INSERT_VALUES));
        }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    return 0;
}

int main(int argc, char **argv)
{
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscInt n = 64;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
    DM da;
    PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE,
                           DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n,
                           PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL,
                           &da));
    PetscCall(DMSetFromOptions(da));
    PetscCall(DMSetUp(da));
    Mat A;
    Vec x, b;
    PetscCall(DMCreateMatrix(da, &A));
    PetscCall(assemble(da, A));
    PetscCall(DMCreateGlobalVector(da, &x));
    PetscCall(VecDuplicate(x, &b));
    PetscCall(VecSet(b, 1.0));
    KSP ksp;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT,
                               1000));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSetUp(ksp));
    PetscLogDouble t0, t1;
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(PetscTime(&t1));
    PetscInt its;
    KSPConvergedReason reason;
    PetscReal rnorm;
    KSPType type;
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(KSPGetType(ksp, &type));
    /* The true residual, computed the same way for every method. */
    Vec r;
    PetscCall(VecDuplicate(b, &r));
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &rnorm));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "poisson: ksp %s n %" PetscInt_FMT
                          " iterations %" PetscInt_FMT
                          " residual %.6e reason %d time %.6f\n",
                          type, n, its, (double)rnorm, (int)reason,
                          (double)(t1 - t0)));
    PetscCall(VecDestroy(&r));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(DMDestroy(&da));
    PetscCall(PetscFinalize());
    return reason > 0 ? 0 : 1;
}
