/* pipeline_like (issue 34): results read one iteration later.  A time-stepping
 * loop whose diagnostics reduction is read in the next step, rounds whose
 * gathered blocks the root consumes in the next round (and after the last), and
 * a convergence loop whose condition reads its reduction (nothing to carry). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>

#define N 256
#define STEPS 20
#define ROUNDS 6
#define BLK 8

static double u[N + 2], unew[N + 2];

static void relax(int n) {
  for (int i = 1; i <= n; i++)
    unew[i] = 0.25 * (u[i - 1] + 2.0 * u[i] + u[i + 1]);
}

static double local_max(int n) {
  double m = 0.0;
  for (int i = 1; i <= n; i++)
    if (fabs(u[i]) > m)
      m = fabs(u[i]);
  return m;
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < N + 2; i++)
    u[i] = sin(0.1 * (i + rank * N));

  /* time steps: the energy and maximum of step k are read in step k+1 */
  double diag[2] = {0, 0}, gdiag[2] = {0, 0}, history = 0.0;
  for (int step = 0; step < STEPS; step++) {
    relax(N);
    for (int i = 1; i <= N; i++)
      u[i] = unew[i];
    u[0] = u[N];
    u[N + 1] = u[1];
    double lmax = local_max(N);
    history = 0.5 * history + lmax;
    if (step > 0)
      history += 1e-3 * gdiag[0] / size + 1e-6 * gdiag[1];
    diag[0] = 0.0;
    diag[1] = lmax;
    for (int i = 1; i <= N; i++)
      diag[0] += u[i] * u[i];
    MPI_Allreduce(diag, gdiag, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    history += u[N / 2] * 1e-9;
    history *= 0.999;
  }

  /* rounds: the root consumes round k's blocks while round k+1 is produced */
  double block[BLK], gathered[BLK * 64] = {0};
  long checksum = 0;
  for (int rd = 0; rd < ROUNDS; rd++) {
    double w[BLK];
    for (int k = 0; k < BLK; k++)
      w[k] = rank * 100.0 + rd * 10.0 + k;
    for (int k = 0; k < BLK; k++)
      w[k] = w[k] * 1.5 - 1.0;
    w[0] += u[1];
    w[BLK - 1] -= u[2];
    if (rank == 0 && rd > 0)
      for (int r = 0; r < size * BLK; r++)
        checksum += (long)gathered[r];
    for (int k = 0; k < BLK; k++)
      block[k] = w[k];
    MPI_Gather(block, BLK, MPI_DOUBLE, gathered, BLK, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    checksum += rd;
  }
  if (rank == 0)
    for (int r = 0; r < size * BLK; r++)
      checksum += (long)gathered[r];

  /* convergence: the loop's condition reads the reduction */
  double res = 1.0, lres;
  int it = 0;
  while (res > 1e-3 && it < 100) {
    lres = 1.0 / ((it + 1.0) * (it + 1.0) * (rank + 1));
    for (int i = 1; i <= N; i++)
      u[i] *= 0.999;
    MPI_Allreduce(&lres, &res, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    it++;
  }

  /* rank 0 prints every rank's figures (the output's order is fixed) */
  double mine[2] = {history, (double)checksum}, all[2 * 64];
  MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; r++)
      printf("rank %d: history %.6f checksum %.0f\n", r, all[2 * r], all[2 * r + 1]);
    printf("energy %.6f max %.6f it %d res %.6f\n", gdiag[0], gdiag[1], it, res);
  }
  MPI_Finalize();
  return 0;
}
