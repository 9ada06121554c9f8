/* pmpi_charops.c - reductions on MPI_CHAR (and MPI_CHARACTER, and
 * MPI_BYTE's arithmetic and logical ones) under the shim.
 *
 * MPI_CHAR is in none of MPI's reduction groups, but Open MPI and MPICH
 * both reduce it, as C's char, with all ten arithmetic, logical and
 * bitwise operations, and MPICH's own test suite relies on it (opsum,
 * opmax, opband, ... reduce MPI_CHAR). The shim used to refuse every such
 * call with MPI_ERR_OP, so a program passing natively failed under it.
 * The same for MPI_BYTE with the operations other than the bitwise ones,
 * which Open MPI computes (as unsigned) and MPICH refuses: where the
 * native library refuses a combination, it is not checked.
 * Each operation, on values of both signs, in iallreduce, ireduce (root
 * size-1), iscan and iexscan, and the persistent allreduce where the
 * library has it, must succeed, be served by nbcx, and give the native
 * blocking collective's result on the same input. MPI_ERRORS_RETURN. */
#include "pmpi_test.h"

enum { N = 7 };

static void fill(signed char *v, int k)
{
    /* small values: no overflow in SUM or PROD on 3 ranks */
    static const signed char base[N] = {0, 1, -1, 2, -3, 5, -2};
    for (int i = 0; i < N; i++)
        v[i] = (signed char)(base[(i + t_rank + k) % N] * (i % 2 ? 1 : -1));
}

static int refused; /* the native library refused a call of this round */

static void check(const char *what, const char *op, const void *got,
                  const void *ref, int rc, int rc_ref)
{
    t_step = what;
    if (rc_ref != MPI_SUCCESS) {
        refused = 1; /* nothing to match (and the shim may refuse too) */
        return;
    }
    if (rc != MPI_SUCCESS) {
        FAIL("%s: error %d, the native library succeeds", op, rc);
        return;
    }
    if (memcmp(got, ref, N) != 0)
        FAIL("%s: result differs from the native library's", op);
}

static void run(MPI_Datatype t, const char *tname)
{
    static const MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD,
                                 MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND,
                                 MPI_BOR, MPI_BXOR};
    static const char *names[] = {"MAX", "MIN", "SUM", "PROD", "LAND",
                                  "LOR", "LXOR", "BAND", "BOR", "BXOR"};
    for (int o = 0; o < 10; o++) {
        char label[64];
        snprintf(label, sizeof label, "%s %s", tname, names[o]);
        signed char in[N], ref[N], got[N];
        MPI_Request r;
        int rc, rc_ref;
        long long s0, s1, n0, n1;
        t_counts(&s0, &n0);
        refused = 0;

        fill(in, o);
        memset(ref, 0, N);
        memset(got, 0, N);
        rc_ref = MPI_Allreduce(in, ref, N, t, ops[o], MPI_COMM_WORLD);
        rc = MPI_Iallreduce(in, got, N, t, ops[o], MPI_COMM_WORLD, &r);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        check("iallreduce", label, got, ref, rc, rc_ref);

        int root = t_size - 1;
        memset(ref, 0, N);
        memset(got, 0, N);
        rc_ref = MPI_Reduce(in, ref, N, t, ops[o], root, MPI_COMM_WORLD);
        rc = MPI_Ireduce(in, got, N, t, ops[o], root, MPI_COMM_WORLD, &r);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        check("ireduce", label, got, ref, rc, rc_ref);

        memset(ref, 0, N);
        memset(got, 0, N);
        rc_ref = MPI_Scan(in, ref, N, t, ops[o], MPI_COMM_WORLD);
        rc = MPI_Iscan(in, got, N, t, ops[o], MPI_COMM_WORLD, &r);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        check("iscan", label, got, ref, rc, rc_ref);

        memset(ref, 0, N);
        memset(got, 0, N);
        rc_ref = MPI_Exscan(in, ref, N, t, ops[o], MPI_COMM_WORLD);
        rc = MPI_Iexscan(in, got, N, t, ops[o], MPI_COMM_WORLD, &r);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (t_rank == 0) /* undefined there */
            memcpy(got, ref, N);
        check("iexscan", label, got, ref, rc, rc_ref);

#if HAVE_P
        memset(ref, 0, N);
        rc_ref = MPI_Allreduce(in, ref, N, t, ops[o], MPI_COMM_WORLD);
        rc = P(Allreduce)(in, got, N, t, ops[o], MPI_COMM_WORLD,
                          MPI_INFO_NULL, &r);
        for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++) {
            memset(got, 0, N);
            rc = MPI_Start(&r);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
            check("persistent allreduce", label, got, ref, rc, rc_ref);
        }
        if (r != MPI_REQUEST_NULL)
            MPI_Request_free(&r);
#endif
        t_counts(&s1, &n1);
        t_step = "served";
        const char *e = getenv("NBCX_TEST_EXPECT_SHIM");
        if (e && *e == '1' && !refused && n1 != n0)
            FAIL("%s: %lld calls went native", label, n1 - n0);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, -1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    run(MPI_CHAR, "MPI_CHAR");
    int size = 0;
    if (MPI_CHARACTER != MPI_DATATYPE_NULL &&
        MPI_Type_size(MPI_CHARACTER, &size) == MPI_SUCCESS && size == 1)
        run(MPI_CHARACTER, "MPI_CHARACTER");
    run(MPI_BYTE, "MPI_BYTE");
    return t_finish("pmpi_charops");
}
