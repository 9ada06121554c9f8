/* heat.c: a larger test program for nbcx-transform.
 *
 * 2-D heat diffusion on a grid of NX columns and rows_per_rank * size rows,
 * split in blocks of rows over the ranks.  Jacobi sweeps with halo exchange
 * (MPI_Sendrecv), a convergence test every few steps (MPI_Allreduce), the
 * total heat on rank 0 (MPI_Reduce), parameters broadcast at start, the
 * global row offsets from a prefix sum (MPI_Exscan), and at the end a
 * histogram (MPI_Reduce), the row sums (MPI_Gather), every rank's extremes
 * (MPI_Allgather), a redistribution of sample values (MPI_Alltoall) and a
 * global norm computed in a helper function.  A last phase distributes uneven
 * source terms (MPI_Scatterv), collects per-rank work (MPI_Gatherv), sums
 * block-wise (MPI_Reduce_scatter_block), numbers the hot cells (MPI_Scan) and
 * picks a reporting mode in a switch.  Only rank 0 prints. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NX 24
#define NBINS 8
#define MAXRANKS 16

struct Params {
    int rows_per_rank;
    int steps;
    int check_every;
    double alpha;
    double tol;
};

/* Rank 0 "reads" the parameters (fixed here so that the output is known). */
static void read_params(struct Params *p)
{
    p->rows_per_rank = 6;
    p->steps = 60;
    p->check_every = 10;
    p->alpha = 0.2;
    p->tol = 1.0e-4;
}

/* Five broadcasts of independent values: all can be in flight together. */
static void bcast_params(struct Params *p)
{
    MPI_Request nbcx_req[5] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
            MPI_REQUEST_NULL};
    int rows = p->rows_per_rank, steps = p->steps, every = p->check_every;
    double alpha = p->alpha, tol = p->tol;
    MPI_Ibcast(&rows, 1, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[0]);
    MPI_Ibcast(&steps, 1, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[1]);
    MPI_Ibcast(&every, 1, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[2]);
    MPI_Ibcast(&alpha, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &nbcx_req[3]);
    MPI_Ibcast(&tol, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &nbcx_req[4]);
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    p->rows_per_rank = rows;
    MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
    p->steps = steps;
    MPI_Wait(&nbcx_req[2], MPI_STATUS_IGNORE);
    p->check_every = every;
    MPI_Wait(&nbcx_req[3], MPI_STATUS_IGNORE);
    p->alpha = alpha;
    MPI_Wait(&nbcx_req[4], MPI_STATUS_IGNORE);
    p->tol = tol;
}

/* Hot spot in the middle, warm left edge; rows 0 and rows + 1 are halos. */
static void init_grid(double *u, int rows, int first_row, int ny)
{
    for (int r = 0; r < rows + 2; r++)
        for (int c = 0; c < NX; c++)
            u[r * NX + c] = 0.0;
    for (int r = 1; r <= rows; r++) {
        int g = first_row + r - 1;
        u[r * NX] = 1.0;
        if (abs(g - ny / 2) <= 1)
            for (int c = NX / 2 - 2; c <= NX / 2 + 2; c++)
                u[r * NX + c] = 10.0;
    }
}

static void exchange_halos(double *u, int rows, int up, int down)
{
    MPI_Sendrecv(&u[1 * NX], NX, MPI_DOUBLE, up, 1, &u[(rows + 1) * NX], NX, MPI_DOUBLE, down,
                 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&u[rows * NX], NX, MPI_DOUBLE, down, 2, &u[0], NX, MPI_DOUBLE, up, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* One Jacobi sweep; returns the largest change of a cell. */
static double jacobi_step(const double *u, double *unew, int rows, double alpha)
{
    double diff = 0.0;
    for (int r = 1; r <= rows; r++) {
        for (int c = 1; c < NX - 1; c++) {
            double lap = u[(r - 1) * NX + c] + u[(r + 1) * NX + c] + u[r * NX + c - 1] +
                         u[r * NX + c + 1] - 4.0 * u[r * NX + c];
            unew[r * NX + c] = u[r * NX + c] + alpha * lap;
            double d = fabs(unew[r * NX + c] - u[r * NX + c]);
            if (d > diff)
                diff = d;
        }
        unew[r * NX] = u[r * NX];
        unew[r * NX + NX - 1] = u[r * NX + NX - 1];
    }
    return diff;
}

static void copy_interior(double *dst, const double *src, int rows)
{
    memcpy(&dst[NX], &src[NX], sizeof(double) * (size_t)(rows * NX));
}

static double local_sum(const double *u, int rows)
{
    double s = 0.0;
    for (int r = 1; r <= rows; r++)
        for (int c = 0; c < NX; c++)
            s += u[r * NX + c];
    return s;
}

static void histogram(const double *u, int rows, int *hist, double lo, double hi)
{
    for (int b = 0; b < NBINS; b++)
        hist[b] = 0;
    for (int r = 1; r <= rows; r++)
        for (int c = 0; c < NX; c++) {
            int b = (int)((u[r * NX + c] - lo) / (hi - lo) * NBINS);
            if (b < 0)
                b = 0;
            if (b >= NBINS)
                b = NBINS - 1;
            hist[b]++;
        }
}

static void row_sums(const double *u, int rows, double *sums)
{
    for (int r = 1; r <= rows; r++) {
        double s = 0.0;
        for (int c = 0; c < NX; c++)
            s += u[r * NX + c];
        sums[r - 1] = s;
    }
}

static double checksum(const double *u, int rows)
{
    double s = 0.0;
    for (int r = 1; r <= rows; r++)
        for (int c = 0; c < NX; c++)
            s += u[r * NX + c] * (double)((r * 31 + c * 17) % 7 + 1);
    return s;
}

/* Global 2-norm: the reduction overlaps the count of cells above the mean. */
static double global_norm(const double *u, int rows, int *above, double mean)
{
    MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
    double local = 0.0, global = 0.0;
    for (int r = 1; r <= rows; r++)
        for (int c = 0; c < NX; c++)
            local += u[r * NX + c] * u[r * NX + c];
    MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
    int n = 0;
    for (int r = 1; r <= rows; r++)
        for (int c = 0; c < NX; c++)
            if (u[r * NX + c] > mean)
                n++;
    *above = n;
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    return sqrt(global);
}

/* Number of source terms for rank r: uneven on purpose. */
static int sources_of(int r)
{
    return 1 + r % 3;
}

/* Applies the source terms to the first rows; returns how many were used. */
static int apply_sources(double *u, int rows, const double *src, int n)
{
    if (n <= 0)
        return 0;
    int used = 0;
    for (int k = 0; k < n; k++) {
        int r = 1 + k % rows;
        int c = (k * 7) % NX;
        if (src[k] < 0.0)
            continue;
        u[r * NX + c] += src[k];
        used++;
    }
    return used;
}

/* Classifies the final state: 0 cold, 1 warm, 2 hot. */
static int classify(double mean, double hi)
{
    if (mean < 0.5)
        return 0;
    if (hi < 5.0)
        return 1;
    return 2;
}

/* Phase two: uneven source terms, their use, block sums and a numbering. */
static void phase_two(double *u, int rows, int rank, int size, double mean, double hi)
{
    MPI_Request nbcx_req[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status nbcx_stat[4];
    int counts[MAXRANKS], displs[MAXRANKS], total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = sources_of(r);
        displs[r] = total;
        total += counts[r];
    }
    double all_src[4 * MAXRANKS], my_src[4];
    if (rank == 0)
        for (int k = 0; k < total; k++)
            all_src[k] = (k % 5 == 4) ? -1.0 : 0.5 * (k + 1);
    int mine = sources_of(rank);
    MPI_Scatterv(all_src, counts, displs, MPI_DOUBLE, my_src, mine, MPI_DOUBLE, 0,
                 MPI_COMM_WORLD);
    int used = apply_sources(u, rows, my_src, mine);

    int all_used[MAXRANKS];
    int one[1] = {used};
    int ones[MAXRANKS], offs[MAXRANKS];
    for (int r = 0; r < size; r++) {
        ones[r] = 1;
        offs[r] = r;
    }
    MPI_Igatherv(one, 1, MPI_INT, all_used, ones, offs, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[0]);

    /* Block sums: every rank gets the sum over ranks of one block of 4 values. */
    double blocks[4 * MAXRANKS], myblock[4];
    for (int k = 0; k < 4 * size; k++)
        blocks[k] = u[NX + k % (rows * NX)] + (double)rank;
    MPI_Ireduce_scatter_block(blocks, myblock, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[1]);

    int hot = 0, first_hot = 0;
    for (int i = NX; i < (rows + 1) * NX; i++)
        if (u[i] > mean)
            hot++;
    MPI_Scan(&hot, &first_hot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    first_hot -= hot;
    MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);

    double block_sum = myblock[0] + myblock[1] + myblock[2] + myblock[3], all_blocks = 0.0;
    int last_first = 0;
    MPI_Ireduce(&block_sum, &all_blocks, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &nbcx_req[2]);
    MPI_Ireduce(&first_hot, &last_first, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, &nbcx_req[3]);
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    MPI_Waitall(2, &nbcx_req[2], &nbcx_stat[2]);

    if (rank == 0) {
        switch (classify(mean, hi)) {
        case 0:
            printf("state: cold\n");
            break;
        case 1:
            printf("state: warm\n");
            break;
        default:
            printf("state: hot\n");
            break;
        }
        printf("sources used:");
        for (int r = 0; r < size; r++)
            printf(" %d", all_used[r]);
        printf("\nblock sums %.5e, first hot cell of the last rank %d\n", all_blocks,
               last_first);
    }
}

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[11] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
            MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
            MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status nbcx_stat[11];
    int nbcx_flag[11] = {0};
    int rank, size;
    struct Params p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        read_params(&p);
    bcast_params(&p);

    /* Global index of my first row: prefix sum of the row counts. */
    int rows = p.rows_per_rank, first_row = 0;
    MPI_Iexscan(&rows, &first_row, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
    nbcx_flag[0] = 1;
    if (rank == 0) {
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        nbcx_flag[0] = 0;
        first_row = 0;
    }
    int ny = rows * size;
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

    double *u = malloc(sizeof(double) * (size_t)((rows + 2) * NX));
    double *unew = malloc(sizeof(double) * (size_t)((rows + 2) * NX));
    if (nbcx_flag[0]) {
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        nbcx_flag[0] = 0;
    }
    init_grid(u, rows, first_row, ny);
    memcpy(unew, u, sizeof(double) * (size_t)((rows + 2) * NX));

    double diff = 0.0, gdiff = 0.0, heat = 0.0, total_heat = 0.0;
    int step, checks = 0;
    for (step = 1; step <= p.steps; step++) {
        exchange_halos(u, rows, up, down);
        diff = jacobi_step(u, unew, rows, p.alpha);
        copy_interior(u, unew, rows);
        if (step % p.check_every == 0) {
            MPI_Iallreduce(&diff, &gdiff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &nbcx_req[1]);
            heat = local_sum(u, rows);
            checks++;
            MPI_Ireduce(&heat, &total_heat, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &nbcx_req[2]);
            nbcx_flag[2] = 1;
            MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
            if (rank == 0) {
                MPI_Wait(&nbcx_req[2], MPI_STATUS_IGNORE);
                nbcx_flag[2] = 0;
                printf("step %3d: max change %.4e, total heat %.5e\n", step, gdiff, total_heat);
            }
            if (gdiff < p.tol) {
                if (rank != 0) {
                    MPI_Wait(&nbcx_req[2], MPI_STATUS_IGNORE);
                    nbcx_flag[2] = 0;
                }
                break;
            }
        }
        if (rank != 0 && nbcx_flag[2]) {
            MPI_Wait(&nbcx_req[2], MPI_STATUS_IGNORE);
            nbcx_flag[2] = 0;
        }
    }

    /* Statistics of the final state. */
    double lo = u[NX], hi = u[NX];
    for (int i = NX; i < (rows + 1) * NX; i++) {
        if (u[i] < lo)
            lo = u[i];
        if (u[i] > hi)
            hi = u[i];
    }
    double extremes[2] = {lo, hi}, all_extremes[2 * MAXRANKS];
    MPI_Iallgather(extremes, 2, MPI_DOUBLE, all_extremes, 2, MPI_DOUBLE, MPI_COMM_WORLD, &nbcx_req[3]);
    double sum_local = local_sum(u, rows);
    double check = checksum(u, rows);
    MPI_Wait(&nbcx_req[3], MPI_STATUS_IGNORE);
    double glo = all_extremes[0], ghi = all_extremes[1];
    for (int r = 1; r < size; r++) {
        if (all_extremes[2 * r] < glo)
            glo = all_extremes[2 * r];
        if (all_extremes[2 * r + 1] > ghi)
            ghi = all_extremes[2 * r + 1];
    }

    int hist[NBINS], ghist[NBINS];
    histogram(u, rows, hist, glo, ghi + 1e-12);
    MPI_Ireduce(hist, ghist, NBINS, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &nbcx_req[4]);

    double *sums = malloc(sizeof(double) * (size_t)rows);
    double *all_sums = malloc(sizeof(double) * (size_t)(rows * size));
    row_sums(u, rows, sums);
    MPI_Igather(sums, rows, MPI_DOUBLE, all_sums, rows, MPI_DOUBLE, 0, MPI_COMM_WORLD, &nbcx_req[5]);

    /* Every rank sends one sample value to every rank. */
    double samples[MAXRANKS], received[MAXRANKS];
    for (int r = 0; r < size; r++)
        samples[r] = u[NX + (r * 5) % (rows * NX)];
    MPI_Ialltoall(samples, 1, MPI_DOUBLE, received, 1, MPI_DOUBLE, MPI_COMM_WORLD, &nbcx_req[6]);
    double recv_sum = 0.0;
    MPI_Wait(&nbcx_req[6], MPI_STATUS_IGNORE);
    for (int r = 0; r < size; r++)
        recv_sum += received[r];

    double total_sum = 0.0, total_check = 0.0, total_recv = 0.0;
    MPI_Ireduce(&sum_local, &total_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &nbcx_req[7]);
    MPI_Ireduce(&check, &total_check, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &nbcx_req[8]);
    MPI_Ireduce(&recv_sum, &total_recv, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &nbcx_req[9]);

    int above = 0, total_above = 0;
    double norm = global_norm(u, rows, &above, total_heat / (double)(ny * NX) + 0.0 * hi);
    MPI_Iallreduce(&above, &total_above, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[10]);
    nbcx_flag[10] = 1;

    if (rank == 0) {
        printf("%d checks, last at step %d\n", checks, step > p.steps ? p.steps : step);
        MPI_Wait(&nbcx_req[10], MPI_STATUS_IGNORE);
        nbcx_flag[10] = 0;
        printf("range [%.4f, %.4f], norm %.5e, cells above mean %d\n", glo, ghi, norm,
               total_above);
        printf("histogram:");
        MPI_Wait(&nbcx_req[4], MPI_STATUS_IGNORE);
        for (int b = 0; b < NBINS; b++)
            printf(" %d", ghist[b]);
        printf("\nrow sums:");
        MPI_Wait(&nbcx_req[5], MPI_STATUS_IGNORE);
        for (int r = 0; r < ny; r++)
            printf(" %.3f", all_sums[r]);
        MPI_Waitall(3, &nbcx_req[7], &nbcx_stat[7]);
        printf("\nsum %.5e checksum %.5e samples %.5e\n", total_sum, total_check, total_recv);
    }
    phase_two(u, rows, rank, size, total_heat / (double)(ny * NX), ghi);
    if (rank != 0) {
        MPI_Wait(&nbcx_req[5], MPI_STATUS_IGNORE);
    }
    free(sums);
    free(all_sums);
    free(u);
    free(unew);
    if (rank != 0) {
        MPI_Wait(&nbcx_req[4], MPI_STATUS_IGNORE);
    }
    if (rank != 0) {
        MPI_Wait(&nbcx_req[7], MPI_STATUS_IGNORE);
    }
    if (rank != 0) {
        MPI_Wait(&nbcx_req[8], MPI_STATUS_IGNORE);
    }
    if (rank != 0) {
        MPI_Wait(&nbcx_req[9], MPI_STATUS_IGNORE);
    }
    if (nbcx_flag[10]) {
        MPI_Wait(&nbcx_req[10], MPI_STATUS_IGNORE);
        nbcx_flag[10] = 0;
    }
    MPI_Finalize();
    return 0;
}
