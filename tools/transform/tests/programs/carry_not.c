/* Issue 34: loops whose collective's wait must NOT be carried into the next
 * iteration (it stays at the end of the loop body, or where it was). */
#include <mpi.h>
#include <stdio.h>

static double work[64];

/* break out of the loop: the pending operation would skip its wait */
static int with_break(int rank) {
  int v, all = 0, t = 0;
  for (int it = 0; it < 10; it++) {
    t += it;
    t %= 13;
    v = rank + it;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    t += 2;
    if (it == 3)
      break;
  }
  return all + t;
}

/* the loop's condition reads the result */
static double cond_reads(int rank) {
  double err = 1.0, e;
  int it = 0;
  while (err > 0.01) {
    it++;
    work[it % 64] = it;
    e = 1.0 / (it * (rank + 1));
    MPI_Allreduce(&e, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    work[0] += 1.0;
  }
  return err + it;
}

/* the buffer is declared in the loop: it ends with the iteration */
static int local_buffer(int rank) {
  int t = 0;
  for (int it = 0; it < 4; it++) {
    int mine = rank * it, sum = 0;
    t += it;
    t %= 7;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    t += 3;
  }
  return t;
}

/* the body's first statement reads the result: nothing to gain */
static int first_reads(int rank) {
  int v = 0, all = 0, t = 0;
  for (int it = 0; it < 4; it++) {
    t += all;
    v = rank + it;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    t += 1;
  }
  return t + all;
}

/* continue in the body */
static int with_continue(int rank) {
  int v = 0, all = 0, t = 0;
  for (int it = 0; it < 6; it++) {
    t += it;
    t %= 5;
    v = rank + it;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    t += 1;
    if (it % 2)
      continue;
    t += 2;
  }
  return t + all;
}

/* a break as the body's first statement: a carried wait would have to come
 * before it, at the top of the body: nothing to gain */
static int break_before(int rank) {
  int v = 0, all = 0, t = 0;
  for (int it = 0; it < 6; it++) {
    if (t > 40 + rank * 0)
      break;
    t += it;
    t %= 50;
    v = rank + it;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    t += 9;
  }
  return t + all;
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int a = with_break(rank);
  double b = cond_reads(rank);
  int c = local_buffer(rank);
  int d = first_reads(rank);
  int e = with_continue(rank);
  int f = break_before(rank);
  printf("rank %d: %d %.3f %d %d %d %d\n", rank, a, b, c, d, e, f);
  MPI_Finalize();
  return 0;
}
