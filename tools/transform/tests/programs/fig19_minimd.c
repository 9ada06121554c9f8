/* Paper 004, Fig. 19: miniMD's LJ step; the reduction of the atom count can
 * overlap the force computation, which reads the atoms (the send buffer) but
 * not natoms (the receive buffer). */
#include <mpi.h>
#include <stdio.h>

#define NLOCAL 64

struct Atom {
    int nlocal;
    double x[NLOCAL];
};

/* Reads the atoms, writes the forces. */
static double compute(const struct Atom *atom, double *f, int me)
{
    double energy = 0.0;
    for (int i = 0; i < atom->nlocal; i++) {
        double r = atom->x[i] - (double)me;
        f[i] = -2.0 * r;
        energy += r * r;
    }
    return energy;
}

int main(int argc, char **argv)
{
    int me, natoms = 0, evflag = 0;
    static struct Atom atom;
    static double f[NLOCAL];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    atom.nlocal = NLOCAL / (me + 1);
    for (int i = 0; i < atom.nlocal; i++)
        atom.x[i] = 0.25 * i;

    MPI_Allreduce(&atom.nlocal, &natoms, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    evflag = 1;
    double e = compute(&atom, f, me);
    if (me == 0)
        printf("natoms %d evflag %d energy %.4f f[1] %.4f\n", natoms, evflag, e, f[1]);
    MPI_Finalize();
    return 0;
}
