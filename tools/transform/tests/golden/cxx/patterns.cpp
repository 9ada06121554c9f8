// C++ patterns for nbcx-transform (issue 34): std::vector buffers, new[]/delete[],
// references, a reference parameter, a lambda, an RAII scope, a rank-divergent
// broadcast, and collectives in a member function and in a template (analysed:
// converted with the calls that can match them).
// Built with -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX (no MPI C++ bindings).
#include <mpi.h>
#include <cstdio>
#include <vector>

struct Grid {
    std::vector<double> cells;
    explicit Grid(int n) : cells(n, 1.0) {}
    double total(MPI_Comm comm) const
    {
        MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
        double mine = 0, all = 0;
        for (double c : cells)
            mine += c;
        MPI_Ireduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, 0, comm, &nbcx_req[0]);
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        return all;
    }
};

template <typename T>
T sum_all(const std::vector<T> &v, MPI_Datatype type)
{
    MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
    T mine = 0, all = 0;
    for (const T &x : v)
        mine += x;
    MPI_Iscan(&mine, &all, 1, type, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    return all;
}

static void bump(std::vector<double> &v)
{
    for (double &x : v)
        x += 1.0;
}

static double work(int rank, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (rank + 1) * 0.5 + i;
    return s;
}

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[11] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
            MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
            MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    // std::vector::data() as the receive buffer; independent work before the read
    std::vector<int> ranks(size);
    int me = rank * 10 + 1;
    MPI_Iallgather(&me, 1, MPI_INT, ranks.data(), 1, MPI_INT, MPI_COMM_WORLD, &nbcx_req[0]);
    double w1 = work(rank, 100);
    double w2 = work(rank + 1, 50);
    long gathered = 0;
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < size; i++)
        gathered += ranks[i];

    // new[]: the wait must come before the read and the delete[]
    double *sums = new double[2];
    double in[2] = {1.0 * rank, 2.0 * rank};
    MPI_Iallreduce(in, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[1]);
    double w3 = work(rank, 10);
    MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
    double first = sums[0] + sums[1];
    delete[] sums;

    // a reference bound to an element before the call, read after it
    std::vector<double> vals(3, 0.0);
    double &head = vals[0];
    if (rank == 0) {
        vals[0] = 4.0;
        vals[1] = 5.0;
        vals[2] = 6.0;
    }
    MPI_Ibcast(vals.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD, &nbcx_req[2]);
    double w4 = work(rank, 5);
    if (rank != 0) {
        MPI_Wait(&nbcx_req[2], MPI_STATUS_IGNORE);
    }
    double seen = head;

    // a reference parameter: bump() writes the buffer
    std::vector<double> maxes(2);
    double loc[2] = {1.0 * rank, -1.0 * rank};
    MPI_Iallreduce(loc, maxes.data(), 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &nbcx_req[3]);
    double w5 = work(rank, 7);
    MPI_Wait(&nbcx_req[3], MPI_STATUS_IGNORE);
    if (rank == 0) {
        MPI_Wait(&nbcx_req[2], MPI_STATUS_IGNORE);
    }
    bump(maxes);

    // a lambda that reads the buffer through its capture
    std::vector<int> counts(size);
    int one = 1;
    MPI_Iallgather(&one, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD, &nbcx_req[4]);
    double w6 = work(rank, 3);
    MPI_Wait(&nbcx_req[4], MPI_STATUS_IGNORE);
    auto count_all = [&]() {
        int c = 0;
        for (int i = 0; i < size; i++)
            c += counts[i];
        return c;
    };
    int ncounted = count_all();

    // an RAII scope: the buffer is destroyed at the closing brace
    double scoped = 0;
    {
        std::vector<double> tmp(size);
        double x = rank + 0.25;
        MPI_Iallgather(&x, 1, MPI_DOUBLE, tmp.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD, &nbcx_req[5]);
        double w7 = work(rank, 9);
        scoped = w7 * 0;
        MPI_Wait(&nbcx_req[5], MPI_STATUS_IGNORE);
        for (int i = 0; i < size; i++)
            scoped += tmp[i];
    }

    // rank-divergent broadcasts: converted together or not at all
    std::vector<int> p(4);
    if (rank == 0) {
        p[0] = 7;
        p[1] = 8;
        p[2] = 9;
        p[3] = 10;
        MPI_Ibcast(p.data(), 4, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[6]);
    } else {
        MPI_Ibcast(p.data(), 4, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[6]);
    }
    if (rank != 0) {
        MPI_Wait(&nbcx_req[6], MPI_STATUS_IGNORE);
    }
    int psum = p[0] + p[1] + p[2] + p[3];

    // resize after the call may reallocate the buffer
    std::vector<int> grow(size);
    int two = 2;
    MPI_Iallgather(&two, 1, MPI_INT, grow.data(), 1, MPI_INT, MPI_COMM_WORLD, &nbcx_req[7]);
    double w8 = work(rank, 4);
    MPI_Wait(&nbcx_req[7], MPI_STATUS_IGNORE);
    grow.resize(2 * size);
    int gsum = 0;
    if (rank == 0) {
        MPI_Wait(&nbcx_req[6], MPI_STATUS_IGNORE);
    }
    for (int g : grow)
        gsum += g;

    // a member function and a template with collectives
    Grid grid(5);
    double gtotal = grid.total(MPI_COMM_WORLD);
    std::vector<double> tv(3, 2.0);
    double tsum = sum_all(tv, MPI_DOUBLE);
    double mine = rank, red = 0, scanned = 0;
    MPI_Iscan(&mine, &scanned, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[8]);
    MPI_Ireduce(&mine, &red, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &nbcx_req[9]);

    double wsum = w1 + w2 + w3 + w4 + w5 + w6 + w8;
    double wall = 0;
    MPI_Iallreduce(&wsum, &wall, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[10]);
    MPI_Wait(&nbcx_req[8], MPI_STATUS_IGNORE);
    MPI_Wait(&nbcx_req[10], MPI_STATUS_IGNORE);
    if (rank == 0) {
        std::printf("gathered %ld first %.1f seen %.1f maxes %.1f %.1f\n", gathered, first,
                    seen, maxes[0], maxes[1]);
        std::printf("counted %d scoped %.2f psum %d gsum %d\n", ncounted, scoped, psum, gsum);
        MPI_Wait(&nbcx_req[9], MPI_STATUS_IGNORE);
        std::printf("grid %.1f tsum %.1f red %.1f scan %.1f work %.1f\n", gtotal, tsum, red,
                    scanned, wall);
    }
    if (rank != 0) {
        MPI_Wait(&nbcx_req[9], MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
