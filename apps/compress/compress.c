/*
 * compress - parallel compression with zlib, blocks gathered to rank 0
 * (paper 003, Section IV D).
 *
 * Every rank generates --block bytes of text-like data per round
 * (deterministic from rank and round: words from a small vocabulary with
 * random numbers, so it compresses about 3:1), compresses them with zlib,
 * and rank 0 collects the compressed blocks: a gather of the sizes, then
 * a gatherv of the data. Rank 0 appends each round's blocks, in rank
 * order, to the output (memory, or the file --output), and verifies
 * every block by decompressing it and comparing with the data
 * regenerated. Overlap (paper 003): the gather of round k's sizes and the
 * gatherv of round k's data run while round k+1 is compressed; rank 0
 * verifies round k-1 meanwhile. The persistent variant makes the gather
 * of the sizes persistent (two requests, alternating buffers); the
 * gatherv's counts change every round, so it stays nbcx_igatherv.
 *
 * Answer: total compressed bytes, CRC-32 of the whole output, blocks
 * verified. All integers: exact.
 *
 *   mpiexec -n 4 ./app_compress --block 1048576 --rounds 8 --variant nbcx
 */
#include <zlib.h>

#include "../common/app.h"

static long block = 256 * 1024, rounds = 4, level = 6;
static const char *output;

static int option(const char *k, const char *v)
{
    int bad = 0;
    if (!strcmp(k, "block"))
        block = app_atol(v, 1, 256L << 20, &bad);
    else if (!strcmp(k, "rounds"))
        rounds = app_atol(v, 1, 1000000, &bad);
    else if (!strcmp(k, "level"))
        level = app_atol(v, 0, 9, &bad);
    else if (!strcmp(k, "output"))
        output = v;
    else
        return 0;
    return bad ? -1 : 1;
}

static void generate(unsigned char *buf, long n, int rank, long round)
{
    static const char *words[] = { "collective ", "nonblocking ", "schedule ",
                                   "progress ",   "overlap ",     "rank ",
                                   "the ",        "of ",          "message ",
                                   "compress ",   "gather ",      "zlib ",
                                   "block ",      "round ",       "\n" };
    uint64_t key = ((uint64_t)rank << 40) ^ ((uint64_t)round << 8), i = 0;
    long pos = 0;
    while (pos < n) {
        uint64_t h = app_hash(key + i++);
        char tmp[32];
        const char *w = words[h % 15];
        if ((h >> 8) % 4 == 0) {
            snprintf(tmp, sizeof tmp, "%u ", (unsigned)((h >> 16) % 100000));
            w = tmp;
        }
        for (; *w && pos < n; w++)
            buf[pos++] = (unsigned char)*w;
    }
}

static void run(struct app_result *res)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct app_comm c;
    app_comm_make(MPI_COMM_WORLD, &c);
    uLong bound = compressBound((uLong)block);
    unsigned char *raw = malloc((size_t)block);
    unsigned char *check = malloc((size_t)block);
    unsigned char *zbuf[2] = { malloc(bound), malloc(bound) };
    int zlen[2] = { 0, 0 };
    int *sizes[2] = { NULL, NULL }, *displs[2] = { NULL, NULL };
    unsigned char *gathered[2] = { NULL, NULL };
    if (rank == 0)
        for (int b = 0; b < 2; b++) {
            sizes[b] = calloc((size_t)size, sizeof(int));
            displs[b] = calloc((size_t)size, sizeof(int));
            gathered[b] = malloc((size_t)size * bound);
        }
    FILE *out = NULL;
    if (rank == 0 && output && !(out = fopen(output, "wb"))) {
        res->ok = 0;
        snprintf(res->why, sizeof res->why, "cannot write %s", output);
    }
    struct app_site s_sizes[2] = { APP_SITE_INIT, APP_SITE_INIT };
    struct app_site s_data[2] = { APP_SITE_INIT, APP_SITE_INIT };
    s_data[0].transient = s_data[1].transient = 1;
    int64_t total = 0, verified = 0, bad = 0;
    uLong crc = crc32(0L, Z_NULL, 0);

    /* Rank 0's work on a finished round: output and verification. */
#define CONSUME(rd)                                                          \
    do {                                                                     \
        int b_ = (int)((rd) % 2);                                            \
        for (int r_ = 0; r_ < size; r_++) {                                  \
            const unsigned char *z_ = gathered[b_] + displs[b_][r_];         \
            total += sizes[b_][r_];                                          \
            crc = crc32(crc, z_, (uInt)sizes[b_][r_]);                       \
            if (out && fwrite(z_, 1, (size_t)sizes[b_][r_], out) !=          \
                           (size_t)sizes[b_][r_])                            \
                bad++;                                                       \
            uLongf n_ = (uLongf)block;                                       \
            generate(raw, block, r_, (rd));                                  \
            if (uncompress(check, &n_, z_, (uLong)sizes[b_][r_]) == Z_OK &&  \
                n_ == (uLongf)block && !memcmp(check, raw, (size_t)block))   \
                verified++;                                                  \
            else                                                             \
                bad++;                                                       \
        }                                                                    \
    } while (0)

    for (long rd = 0; rd < rounds; rd++) {
        int b = (int)(rd % 2);
        generate(raw, block, rank, rd);
        uLongf zl = bound;
        if (compress2(zbuf[b], &zl, raw, (uLong)block, (int)level) != Z_OK)
            APP_DIE("compress2 failed");
        zlen[b] = (int)zl;
        app_gather(&s_sizes[b], &zlen[b], sizes[b], 1, APP_INT, 0, &c);
        if (rd > 0) { /* round rd-1: its data gathered, consumed */
            app_wait(&s_data[b ^ 1]);
            if (rank == 0)
                CONSUME(rd - 1);
        }
        app_wait(&s_sizes[b]);
        if (rank == 0)
            for (int r = 0, d = 0; r < size; r++) {
                displs[b][r] = d;
                d += sizes[b][r];
            }
        app_gatherv(&s_data[b], zbuf[b], zlen[b], gathered[b], sizes[b],
                    displs[b], APP_BYTE, 0, &c);
    }
    app_wait(&s_data[(rounds - 1) % 2]);
    if (rank == 0)
        CONSUME(rounds - 1);
#undef CONSUME
    for (int b = 0; b < 2; b++) {
        app_site_free(&s_sizes[b]);
        app_site_free(&s_data[b]);
    }
    app_comm_free(&c);
    if (out && fclose(out) != 0)
        bad++;
    int64_t v[3] = { total, (int64_t)crc, verified };
    MPI_Bcast(v, 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(&bad, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    app_int(res, "raw_bytes", (int64_t)block * rounds * size);
    app_int(res, "compressed_bytes", v[0]);
    app_int(res, "crc32", v[1]);
    app_int(res, "blocks_verified", v[2]);
    if (bad || v[2] != rounds * size) {
        res->ok = 0;
        snprintf(res->why, sizeof res->why,
                 "%lld blocks failed to decompress to their data or write",
                 (long long)bad);
    }
    free(raw);
    free(check);
    for (int b = 0; b < 2; b++) {
        free(zbuf[b]);
        free(sizes[b]);
        free(displs[b]);
        free(gathered[b]);
    }
}

int main(int argc, char **argv)
{
    static const struct app_kernel k = {
        "compress", "[--block BYTES per rank and round] [--rounds R] "
                    "[--level 0-9] [--output FILE]",
        0, "all values are integers", option, run, APP_RUN_TRANSFORMED
    };
    return app_main(argc, argv, &k);
}
