/*
 * md - a miniMD-like Lennard-Jones molecular dynamics run (paper 004's
 * Fig. 18-19).
 *
 * n^3 atoms start on a cubic lattice (spacing 1.2 sigma) in a box with
 * reflecting walls, velocities from a deterministic hash of the atom id.
 * The box is split in x slabs over a 1-D Cartesian communicator
 * (non-periodic). Rank 0 "reads" six parameters (time step, epsilon,
 * sigma, cutoff, mass, temperature) and broadcasts them with six
 * independent broadcasts, then one wait for all (miniMD's setup; again at
 * every --thermo step, as a re-read input would). Each velocity-Verlet
 * step: half kick and drift; atoms that left the slab move to the
 * neighbour (neighbour alltoall of counts, neighbour alltoallv of atoms);
 * positions within the cutoff of a slab face are sent as ghosts (the same
 * pair of calls); forces (LJ, shifted at the cutoff, brute force over the
 * pairs) between own atoms are computed while the ghosts travel, those
 * with ghosts after; half kick. Every --thermo steps the potential and
 * kinetic energies and the atom count are reduced (allreduce), waited for
 * only after the next step's drift.
 *
 * Answer: the atom count (exact, and checked = n^3), the final potential
 * and kinetic energies and a checksum of the positions. The dynamics
 * does not depend on the reductions, so every variant moves the atoms
 * identically; the energies are summed in library-dependent order: reals
 * agree to a relative 1e-10. Checked: total energy drift below 1%.
 *
 *   mpiexec -n 4 ./app_md --n 16 --steps 100 --variant nbcx
 */
#include "../common/app.h"

static long ncell = 10, steps = 20, thermo = 10;

static int option(const char *k, const char *v)
{
    int bad = 0;
    if (!strcmp(k, "n"))
        ncell = app_atol(v, 1, 200, &bad);
    else if (!strcmp(k, "steps"))
        steps = app_atol(v, 1, 1000000, &bad);
    else if (!strcmp(k, "thermo"))
        thermo = app_atol(v, 1, 1000000, &bad);
    else
        return 0;
    return bad ? -1 : 1;
}

enum { P_DT, P_EPS, P_SIGMA, P_RC, P_MASS, P_TEMP, NPARAM };
enum { AW = 7 }; /* doubles per migrating atom: x[3], v[3], id */

struct state {
    long n, cap;          /* own atoms */
    double *x, *v, *f, *id;
    long ng;              /* ghosts */
    double *gx;
    double par[NPARAM];
    double L, xlo, xhi;   /* box edge, my slab [xlo, xhi) */
};

static void forces(struct state *s, int with_ghosts, double *pe)
{
    double eps = s->par[P_EPS], sig2 = s->par[P_SIGMA] * s->par[P_SIGMA];
    double rc2 = s->par[P_RC] * s->par[P_RC];
    double sr6c = pow(sig2 / rc2, 3), shift = 4 * eps * sr6c * (sr6c - 1);
    const double *other = with_ghosts ? s->gx : s->x;
    long no = with_ghosts ? s->ng : s->n;
    for (long i = 0; i < s->n; i++) {
        const double *xi = s->x + 3 * i;
        for (long j = with_ghosts ? 0 : i + 1; j < no; j++) {
            const double *xj = other + 3 * j;
            double d[3] = { xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2] };
            double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if (r2 >= rc2)
                continue;
            double sr2 = sig2 / r2, sr6 = sr2 * sr2 * sr2;
            double fr = 24 * eps * sr6 * (2 * sr6 - 1) / r2;
            double e = 4 * eps * sr6 * (sr6 - 1) - shift;
            for (int k = 0; k < 3; k++) {
                s->f[3 * i + k] += fr * d[k];
                if (!with_ghosts)
                    s->f[3 * j + k] -= fr * d[k];
            }
            *pe += with_ghosts ? 0.5 * e : e; /* a ghost pair: half each */
        }
    }
}

static void run(struct app_result *res)
{
    int size, rank, dims[1] = { 0 }, periods[1] = { 0 };
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dims[0] = size;
    MPI_Comm cart;
    MP(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    MPI_Comm_rank(cart, &rank);
    /* Neighbour collectives on the Cartesian communicator; broadcasts and
     * reductions on the world one (see apps/life: Open MPI gives no
     * MPI_TAG_UB on Cartesian communicators, so nbcx has only 4 tag
     * slots per kind there). */
    struct app_comm c, w;
    app_comm_make(cart, &c);
    app_comm_make(MPI_COMM_WORLD, &w);
    struct state s;
    memset(&s, 0, sizeof s);
    long natoms = ncell * ncell * ncell;
    s.cap = natoms;
    s.x = malloc(sizeof(double) * 3 * (size_t)s.cap);
    s.v = malloc(sizeof(double) * 3 * (size_t)s.cap);
    s.f = malloc(sizeof(double) * 3 * (size_t)s.cap);
    s.id = malloc(sizeof(double) * (size_t)s.cap);
    s.gx = malloc(sizeof(double) * 3 * (size_t)s.cap);
    double *sendb = malloc(sizeof(double) * AW * (size_t)s.cap);
    double *recvb = malloc(sizeof(double) * AW * (size_t)s.cap);

    /* Six independent broadcasts of the parameters, one wait. */
    struct app_site s_par[NPARAM];
    for (int p = 0; p < NPARAM; p++)
        s_par[p] = (struct app_site)APP_SITE_INIT;
    double par[NPARAM] = { 0 };
    const double input[NPARAM] = { 0.005, 1.0, 1.0, 2.5, 1.0, 0.5 };
#define READ_PARAMS()                                                        \
    do {                                                                     \
        if (rank == 0)                                                       \
            memcpy(par, input, sizeof par);                                  \
        for (int p_ = 0; p_ < NPARAM; p_++)                                  \
            app_bcast(&s_par[p_], &par[p_], 1, APP_DOUBLE, 0, &w);           \
        app_waitall(NPARAM, s_par);                                          \
        memcpy(s.par, par, sizeof par);                                      \
    } while (0)
    READ_PARAMS();
    double a = 1.2 * s.par[P_SIGMA];
    s.L = a * (double)ncell;
    s.xlo = s.L * rank / size;
    s.xhi = s.L * (rank + 1) / size;
    if (s.xhi - s.xlo < s.par[P_RC]) {
        res->ok = 0;
        snprintf(res->why, sizeof res->why,
                 "slabs of %.2f thinner than the cutoff %.2f: --n >= %.0f "
                 "on %d ranks",
                 s.xhi - s.xlo, s.par[P_RC],
                 ceil(s.par[P_RC] * size / 1.2), size);
        app_comm_free(&c);
        app_comm_free(&w);
        MPI_Comm_free(&cart);
        return;
    }
    /* The lattice: atoms whose x falls in my slab. */
    double vs = sqrt(12 * s.par[P_TEMP] / s.par[P_MASS]);
    for (long i = 0; i < natoms; i++) {
        long ix = i / (ncell * ncell), iy = (i / ncell) % ncell,
             iz = i % ncell;
        double x = (ix + 0.5) * a;
        if (x < s.xlo || x >= s.xhi)
            continue;
        double *p = s.x + 3 * s.n, *v = s.v + 3 * s.n;
        p[0] = x;
        p[1] = (iy + 0.5) * a;
        p[2] = (iz + 0.5) * a;
        for (int k = 0; k < 3; k++)
            v[k] = vs * (app_unit((uint64_t)i * 3 + (uint64_t)k) - 0.5);
        s.id[s.n++] = (double)i;
    }

    struct app_site s_mcnt = APP_SITE_INIT, s_gcnt = APP_SITE_INIT;
    struct app_site s_mig = APP_SITE_INIT, s_ghost = APP_SITE_INIT;
    struct app_site s_en = APP_SITE_INIT, s_cnt = APP_SITE_INIT;
    s_mig.transient = s_ghost.transient = 1; /* counts change every step */
    int scnt[2], rcnt[2], sdsp[2], rdsp[2], mscnt[2], mrcnt[2];
    double en_loc[2], en[2] = { 0, 0 }, e0 = 0;
    int64_t cnt_loc, cnt = 0;
    int pending = 0; /* energy reductions in flight */
    int64_t count_bad = 0;

    for (long step = 0; step <= steps; step++) {
        double dt = s.par[P_DT], im = 1.0 / s.par[P_MASS];
        if (step > 0) { /* half kick, drift, reflect at the walls */
            for (long i = 0; i < 3 * s.n; i++) {
                s.v[i] += 0.5 * dt * s.f[i] * im;
                s.x[i] += dt * s.v[i];
                if (s.x[i] < 0) {
                    s.x[i] = -s.x[i];
                    s.v[i] = -s.v[i];
                } else if (s.x[i] >= s.L) {
                    s.x[i] = 2 * s.L - s.x[i];
                    s.v[i] = -s.v[i];
                }
            }
        }
        if (pending) {
            app_wait(&s_en);
            app_wait(&s_cnt);
            pending = 0;
            if (e0 == 0)
                e0 = en[0] + en[1];
            if (cnt != natoms)
                count_bad = cnt;
        }
        /* Migration: pack leavers left (block 0) and right (block 1). */
        long keep = 0;
        int nl = 0, nr = 0;
        for (long i = 0; i < s.n; i++)
            nl += s.x[3 * i] < s.xlo, nr += s.x[3 * i] >= s.xhi;
        long il = 0, ir = nl;
        for (long i = 0; i < s.n; i++) {
            double xi = s.x[3 * i];
            double *dst = NULL;
            if (xi < s.xlo)
                dst = sendb + AW * il++;
            else if (xi >= s.xhi)
                dst = sendb + AW * ir++;
            if (dst) {
                memcpy(dst, s.x + 3 * i, 3 * sizeof(double));
                memcpy(dst + 3, s.v + 3 * i, 3 * sizeof(double));
                dst[6] = s.id[i];
            } else {
                memmove(s.x + 3 * keep, s.x + 3 * i, 3 * sizeof(double));
                memmove(s.v + 3 * keep, s.v + 3 * i, 3 * sizeof(double));
                s.id[keep++] = s.id[i];
            }
        }
        s.n = keep;
        mscnt[0] = nl;
        mscnt[1] = nr;
        mrcnt[0] = mrcnt[1] = 0; /* untouched where the neighbour is none */
        app_neighbor_alltoall(&s_mcnt, mscnt, mrcnt, 1, APP_INT, &c);
        app_wait(&s_mcnt);
        scnt[0] = AW * nl;
        scnt[1] = AW * nr;
        sdsp[0] = 0;
        sdsp[1] = AW * nl;
        rcnt[0] = AW * mrcnt[0];
        rcnt[1] = AW * mrcnt[1];
        rdsp[0] = 0;
        rdsp[1] = rcnt[0];
        app_neighbor_alltoallv(&s_mig, sendb, scnt, sdsp, recvb, rcnt, rdsp,
                               APP_DOUBLE, &c);
        app_wait(&s_mig);
        for (long j = 0; j < mrcnt[0] + mrcnt[1]; j++) {
            const double *src = recvb + AW * j;
            memcpy(s.x + 3 * s.n, src, 3 * sizeof(double));
            memcpy(s.v + 3 * s.n, src + 3, 3 * sizeof(double));
            s.id[s.n++] = src[6];
        }
        /* Ghosts: own atoms within the cutoff of each face. */
        double rc = s.par[P_RC];
        int gl = 0, gr = 0;
        for (long i = 0; i < s.n; i++) {
            double xi = s.x[3 * i];
            if (xi < s.xlo + rc)
                memcpy(sendb + 3 * gl++, s.x + 3 * i, 3 * sizeof(double));
        }
        for (long i = 0; i < s.n; i++) {
            double xi = s.x[3 * i];
            if (xi >= s.xhi - rc)
                memcpy(sendb + 3 * (gl + gr++), s.x + 3 * i,
                       3 * sizeof(double));
        }
        mscnt[0] = gl;
        mscnt[1] = gr;
        mrcnt[0] = mrcnt[1] = 0;
        app_neighbor_alltoall(&s_gcnt, mscnt, mrcnt, 1, APP_INT, &c);
        app_wait(&s_gcnt);
        scnt[0] = 3 * gl;
        scnt[1] = 3 * gr;
        sdsp[0] = 0;
        sdsp[1] = 3 * gl;
        rcnt[0] = 3 * mrcnt[0];
        rcnt[1] = 3 * mrcnt[1];
        rdsp[0] = 0;
        rdsp[1] = rcnt[0];
        s.ng = mrcnt[0] + mrcnt[1];
        app_neighbor_alltoallv(&s_ghost, sendb, scnt, sdsp, s.gx, rcnt, rdsp,
                               APP_DOUBLE, &c);
        /* Own pairs while the ghosts travel, then the ghost pairs. */
        memset(s.f, 0, sizeof(double) * 3 * (size_t)s.n);
        double pe = 0;
        forces(&s, 0, &pe);
        app_wait(&s_ghost);
        forces(&s, 1, &pe);
        if (step > 0)
            for (long i = 0; i < 3 * s.n; i++)
                s.v[i] += 0.5 * dt * s.f[i] * im;
        if (step % thermo == 0 || step == steps) {
            double ke = 0;
            for (long i = 0; i < 3 * s.n; i++)
                ke += 0.5 * s.par[P_MASS] * s.v[i] * s.v[i];
            en_loc[0] = pe;
            en_loc[1] = ke;
            cnt_loc = s.n;
            app_allreduce(&s_en, en_loc, en, 2, APP_DOUBLE, APP_SUM, &w);
            app_allreduce(&s_cnt, &cnt_loc, &cnt, 1, APP_INT64, APP_SUM, &w);
            pending = 1;
            if (step > 0 && step % thermo == 0 && step < steps)
                READ_PARAMS();
        }
    }
    app_wait(&s_en);
    app_wait(&s_cnt);
    if (e0 == 0)
        e0 = en[0] + en[1];
    if (cnt != natoms)
        count_bad = cnt;
#undef READ_PARAMS
    app_site_free(&s_mcnt);
    app_site_free(&s_gcnt);
    app_site_free(&s_mig);
    app_site_free(&s_ghost);
    app_site_free(&s_en);
    app_site_free(&s_cnt);
    for (int p = 0; p < NPARAM; p++)
        app_site_free(&s_par[p]);
    app_comm_free(&c);
    app_comm_free(&w);

    /* Checksum of the positions, by plain MPI. */
    double sum = 0, sall;
    for (long i = 0; i < s.n; i++)
        sum += s.x[3 * i] + 2 * s.x[3 * i + 1] + 3 * s.x[3 * i + 2];
    MPI_Allreduce(&sum, &sall, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double etot = en[0] + en[1], drift = fabs(etot - e0) / fabs(e0);
    app_int(res, "atoms", cnt);
    app_real(res, "pe", en[0]);
    app_real(res, "ke", en[1]);
    app_real(res, "pos_checksum", sall);
    app_real(res, "energy_drift", drift);
    if (count_bad || cnt != natoms || !(drift < 1e-2)) {
        res->ok = 0;
        snprintf(res->why, sizeof res->why,
                 "atoms %lld (of %ld), energy drift %.3e", (long long)cnt,
                 natoms, drift);
    }
    MPI_Comm_free(&cart);
    free(s.x);
    free(s.v);
    free(s.f);
    free(s.id);
    free(s.gx);
    free(sendb);
    free(recvb);
}

int main(int argc, char **argv)
{
    static const struct app_kernel k = {
        "md", "[--n CELLS per edge: n^3 atoms] [--steps S] [--thermo T]",
        1e-10, "energies summed in library-dependent order", option, run, APP_RUN_TRANSFORMED
    };
    return app_main(argc, argv, &k);
}
