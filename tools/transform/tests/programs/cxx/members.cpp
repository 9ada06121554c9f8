// C++ member functions, templates, a namespace and an extern "C" block for
// nbcx-transform (issue 34): a member buffer's broadcast with independent work
// after it, a member call that touches the buffer right after a collective, a
// root/non-root branch in a member function, a function template instantiated
// for int and double, a member function of a class template, a function in a
// namespace and one in an extern "C" block.
// Built with -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX (no MPI C++ bindings).
#include <mpi.h>
#include <cstdio>

class Field {
public:
    Field(int rank, int size) : rank_(rank), size_(size)
    {
        for (int i = 0; i < 4; i++) {
            buf_[i] = rank == 0 ? 10.0 * (i + 1) : -1.0;
            all_[i] = 0.0;
        }
    }
    double spread();
    double gathered();
    double branch();
    double norm() const { return buf_[0] + buf_[3]; }

private:
    void halve()
    {
        for (int i = 0; i < 4; i++)
            all_[i] *= 0.5;
    }
    int rank_;
    int size_;
    double buf_[4];
    double all_[4];
};

// the member buffer's broadcast, then work on locals only: converted, the wait
// before the first read of the member
double Field::spread()
{
    MPI_Bcast(this->buf_, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double w = 0.0;
    for (int i = 0; i < 1000; i++)
        w += 1.0 / (i + 1);
    int steps = 3;
    steps *= 2;
    return w + steps + buf_[1];
}

// a member call that touches the receive buffer right after the collective: no
// work to overlap, so the call stays blocking (with the reason)
double Field::gathered()
{
    double mine = rank_ + 1.0;
    MPI_Allgather(&mine, 1, MPI_DOUBLE, all_, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    halve();
    double t = 0.0;
    for (int i = 0; i < size_ && i < 4; i++)
        t += all_[i];
    return t;
}

// the root and the others broadcast in different branches: both converted alike
double Field::branch()
{
    double extra = 0.0;
    if (rank_ == 0) {
        buf_[2] = 7.5;
        MPI_Bcast(buf_, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 10; i++)
            extra += i;
    } else {
        MPI_Bcast(buf_, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 10; i++)
            extra += 2 * i;
        extra -= 45;
    }
    return extra + buf_[2];
}

// a function template, instantiated for int and double
template <typename T>
T global_sum(T v, MPI_Datatype type)
{
    T all = v;
    MPI_Allreduce(&v, &all, 1, type, MPI_SUM, MPI_COMM_WORLD);
    int k = 0;
    for (int i = 0; i < 100; i++)
        k += i % 7;
    k *= 2;
    std::printf("%s", k < 0 ? "never\n" : "");
    return all;
}

// a member function of a class template
template <typename T>
struct Prefix {
    T part[2];
    T pre[2];
    void run(MPI_Datatype type)
    {
        MPI_Scan(part, pre, 2, type, MPI_SUM, MPI_COMM_WORLD);
        int n = 0;
        for (int i = 0; i < 50; i++)
            n += i & 3;
        n += 1;
        count = n;
    }
    int count = 0;
};

namespace stats {
double total(double x)
{
    double sum = 0.0;
    MPI_Reduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double sq = x * x;
    sq += 1.0;
    sq *= 0.5;
    return sum + sq - sq;
}
}  // namespace stats

extern "C" {
int before_me(int x)
{
    int below = 0;
    MPI_Exscan(&x, &below, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int pad = x * 3;
    pad -= x;
    pad += 4;
    return (x > 2 ? below : 0) + pad;  // rank 0's receive buffer is undefined
}
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    Field f(rank, size);
    double s = f.spread();
    double g = f.gathered();
    double b = f.branch();
    int isum = global_sum(rank + 1, MPI_INT);
    double dsum = global_sum(0.5 * rank, MPI_DOUBLE);
    Prefix<int> pi{{rank, 1}, {0, 0}};
    pi.run(MPI_INT);
    Prefix<double> pd{{0.25 * rank, 2.0}, {0.0, 0.0}};
    pd.run(MPI_DOUBLE);
    double t = stats::total(rank + 0.5);
    int e = before_me(rank + 2);
    int es = 0;
    MPI_Allreduce(&e, &es, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        std::printf("spread %.4f gathered %.2f branch %.1f norm %.1f\n", s, g, b, f.norm());
        std::printf("isum %d dsum %.2f scan %d %d %.2f %.2f count %d total %.2f es %d\n",
                    isum, dsum, pi.pre[0], pi.pre[1], pd.pre[0], pd.pre[1], pi.count + pd.count,
                    t, es);
    }
    MPI_Finalize();
    return 0;
}
