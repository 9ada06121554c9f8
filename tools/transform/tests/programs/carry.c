/* Issue 34: waits carried across a loop's back edge.  Each loop's collective has
 * its result first read in the next iteration (or after the loop): the wait goes
 * before that read in the next iteration, and after the loop. */
#include <mpi.h>
#include <stdio.h>

static double work[64];

/* for loop: the wait goes before the if that reads the result */
static double carried_for(int rank) {
  double local[4], global[4] = {0, 0, 0, 0}, acc = 0.0;
  for (int it = 0; it < 5; it++) {
    for (int k = 0; k < 64; k++)
      work[k] = (k + it) * 0.5 + rank;
    acc += work[3];
    acc *= 0.5;
    if (it > 0)
      acc += global[0] + global[3];
    for (int k = 0; k < 4; k++)
      local[k] = rank + k + it;
    MPI_Allreduce(local, global, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < 64; k++)
      work[k] = work[k] * 2.0 + 1.0;
    acc += work[5];
  }
  return acc + global[1];
}

/* while loop, the send buffer written first in the next iteration */
static long carried_while(int rank) {
  long in[2], out[2] = {0, 0}, sum = 0;
  int it = 0;
  while (it < 4) {
    sum += it * 3;
    sum ^= 5;
    in[0] = rank + it;
    in[1] = 2 * rank - it;
    sum += in[0];
    MPI_Allreduce(in, out, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    sum += it;
    it++;
  }
  return sum + out[0] * 100 + out[1];
}

/* do-while; the result read only after the loop */
static int carried_do(int rank, int size) {
  int v = 0, all = 0, x = 1, n = 0;
  do {
    x = x * 3 + rank;
    x %= 1000;
    v = x + n;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    x += n;
    n++;
  } while (n < size + 2);
  return all + x;
}

/* a broadcast in a nested loop: waited for after the inner loop, each time */
static int carried_nested(int rank) {
  int buf[3] = {0, 0, 0}, t = 0;
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      t += i * j + rank;
      t %= 97;
      if (rank == 0)
        buf[j] = i * 10 + j;
      MPI_Bcast(buf, 3, MPI_INT, 0, MPI_COMM_WORLD);
      t += 1;
    }
    t += buf[0] + buf[1] + buf[2];
  }
  return t;
}

/* a call under a condition in the body: the carried waits test its flag */
static double carried_in_if(int rank) {
  double e[2] = {0, 0}, en[2] = {0, 0}, acc = 0;
  for (int step = 0; step <= 6; step++) {
    acc += step * 0.25;
    acc *= 0.9;
    if (step % 3 == 0) {
      e[0] = acc + rank;
      e[1] = step;
      MPI_Allreduce(e, en, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      acc += 1.0;
    }
    acc += 0.5;
  }
  return acc + en[0] + en[1];
}

/* a break before the call: the carried wait comes before it, and the break
 * lands on the wait after the loop */
static int carried_break(int rank) {
  int v = 0, all = 0, t = 0;
  for (int it = 0; it < 8; it++) {
    t += it * 3;
    t %= 50;
    if (t > 40)
      break;
    v = rank + it;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    t += 9;
  }
  return t + all;
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double a = carried_for(rank);
  long b = carried_while(rank);
  int c = carried_do(rank, size);
  int d = carried_nested(rank);
  double e = carried_in_if(rank);
  int f = carried_break(rank);
  printf("rank %d: %.3f %ld %d %d %.3f %d\n", rank, a, b, c, d, e, f);
  MPI_Finalize();
  return 0;
}
