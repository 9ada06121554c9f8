/* Game of Life helpers shared by gol_blocking.c and gol_nonblocking.c:
 * rows 1..myM of a (myM + 2) x myN grid are this rank's, rows 0 and myM + 1
 * are halos filled by a neighbourhood exchange on a 1-D Cartesian
 * communicator (not periodic: cells outside the domain are dead). */
#include <string.h>

#define NX 16      /* columns (periodic within a row) */
#define MYROWS 4   /* rows per rank */
#define NTIMES 12

static int neighbours(const int *life, int r, int c, int myN)
{
    int n = 0;
    for (int dr = -1; dr <= 1; dr++)
        for (int dc = -1; dc <= 1; dc++)
            if (dr || dc)
                n += life[(r + dr) * myN + (c + dc + myN) % myN];
    return n;
}

static int update_row(const int *life, int *temp, int r, int myN)
{
    int changed = 0;
    for (int c = 0; c < myN; c++) {
        int n = neighbours(life, r, c, myN);
        int alive = life[r * myN + c];
        int next = alive ? (n == 2 || n == 3) : (n == 3);
        temp[r * myN + c] = next;
        changed += next != alive;
    }
    return changed;
}

/* Rows that do not touch the halos. */
static int compute_inner(const int *life, int *temp, int myM, int myN)
{
    int flag = 0;
    for (int r = 2; r < myM; r++)
        flag += update_row(life, temp, r, myN);
    return flag;
}

static int compute_boundary(const int *life, int *temp, int myM, int myN)
{
    int flag = update_row(life, temp, 1, myN);
    if (myM > 1)
        flag += update_row(life, temp, myM, myN);
    return flag;
}

static void seed(int *life, int rank, int myM, int myN)
{
    memset(life, 0, sizeof(int) * (size_t)((myM + 2) * myN));
    for (int r = 1; r <= myM; r++)
        for (int c = 0; c < myN; c++)
            life[r * myN + c] = ((rank * myM + r) * 7 + c * 5) % 3 == 0;
}
