// Issue 34 (C++ conversion rates): calls of the file's own (non-virtual) member
// functions are analysed by their summaries, with their this taken for memory
// outside them (so a write to a member conflicts with every object a member
// call or its arguments reach).  The allreduce into sum overlaps the calls that
// touch only the accumulator's members; the one into the member out of c is
// stopped by c.reset(), which writes it through its this (were its summary
// wrong, the reduction would overwrite the reset values: the output would
// differ); a virtual call stops the third allreduce's wait (an override may do
// anything).
#include <mpi.h>
#include <cstdio>

class Acc
{
  public:
    explicit Acc(int r) : rank_(r)
    {
        for (int i = 0; i < 4; i++)
            v_[i] = 0.0;
    }
    virtual ~Acc() {}
    void add(double x)
    {
        for (int i = 0; i < 4; i++)
            v_[i] += x * (i + 1) + rank_;
    }
    double get(int i) const { return v_[i]; }
    virtual void bump(double *p) { p[0] += 1.0; }

  private:
    int rank_;
    double v_[4];
};

struct Out
{
    double out[2];
    void reset()
    {
        out[0] = -1.0;
        out[1] = -2.0;
    }
};

static double work(const Acc &a)
{
    return a.get(1) * 0.5;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    Acc a(rank);
    double x[4] = { 1.0 + rank, 2.0, 3.0, 4.0 * rank }, sum[4] = { 0, 0, 0, 0 };
    MPI_Allreduce(x, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    a.add(1.5);
    a.add(0.5);
    double g = a.get(2);
    double s = sum[0] + sum[1] + sum[2] + sum[3];
    Out c = { { 0.0, 0.0 } };
    double y[2] = { 0.5 * rank, 1.0 }, z[2] = { 1.0, 2.0 }, zs[2] = { 0, 0 };
    MPI_Allreduce(y, c.out, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t = s * 0.5 + g;
    c.reset(); // writes the receive buffer
    double h = work(a) + t;
    MPI_Allreduce(z, zs, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    a.bump(y); // virtual
    std::printf("%d: %.3f %.3f %.3f %.3f %.3f %.3f\n", rank, s, g, h, c.out[0] + c.out[1],
                zs[0] + zs[1], y[0]);
    MPI_Finalize();
    return 0;
}
