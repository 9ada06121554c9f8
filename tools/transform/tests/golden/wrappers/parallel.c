/* CoMD-like: MPI only under DO_MPI, every collective behind a one-line wrapper. */
#include "parallel.h"

#include <string.h>
#ifdef DO_MPI
#include <mpi.h>
#endif

static int myRank = 0;
static int nRanks = 1;
static double theSum = 0.0;

void initParallel(int *argc, char ***argv)
{
#ifdef DO_MPI
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &myRank);
    MPI_Comm_size(MPI_COMM_WORLD, &nRanks);
#else
    (void)argc;
    (void)argv;
#endif
}

void destroyParallel(void)
{
#ifdef DO_MPI
    MPI_Finalize();
#endif
}

int getMyRank(void) { return myRank; }

int getNRanks(void) { return nRanks; }

void addDoubleParallel(double *sendBuf, double *recvBuf, int count)
{
#ifdef DO_MPI
    MPI_Allreduce(sendBuf, recvBuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#else
    memcpy(recvBuf, sendBuf, sizeof(double) * (size_t)count);
#endif
}

/* nbcx-transform: addDoubleParallel_nb() starts what addDoubleParallel() does,
 * addDoubleParallel_wait() completes it */
#if defined(DO_MPI)
static MPI_Request nbcx_addDoubleParallel_req = MPI_REQUEST_NULL;
#endif

void addDoubleParallel_nb(double *sendBuf, double *recvBuf, int count)
{
#ifdef DO_MPI
    MPI_Iallreduce(sendBuf, recvBuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_addDoubleParallel_req);
#else
    memcpy(recvBuf, sendBuf, sizeof(double) * (size_t)count);
#endif
}

void addDoubleParallel_wait(void)
{
#if defined(DO_MPI)
    MPI_Wait(&nbcx_addDoubleParallel_req, MPI_STATUS_IGNORE);
#endif
}

void maxIntParallel(int *sendBuf, int *recvBuf, int count)
{
#ifdef DO_MPI
    MPI_Allreduce(sendBuf, recvBuf, count, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#else
    memcpy(recvBuf, sendBuf, sizeof(int) * (size_t)count);
#endif
}

/* nbcx-transform: maxIntParallel_nb() starts what maxIntParallel() does,
 * maxIntParallel_wait() completes it */
#if defined(DO_MPI)
static MPI_Request nbcx_maxIntParallel_req = MPI_REQUEST_NULL;
#endif

void maxIntParallel_nb(int *sendBuf, int *recvBuf, int count)
{
#ifdef DO_MPI
    MPI_Iallreduce(sendBuf, recvBuf, count, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &nbcx_maxIntParallel_req);
#else
    memcpy(recvBuf, sendBuf, sizeof(int) * (size_t)count);
#endif
}

void maxIntParallel_wait(void)
{
#if defined(DO_MPI)
    MPI_Wait(&nbcx_maxIntParallel_req, MPI_STATUS_IGNORE);
#endif
}

void bcastParallel(void *buf, int count, int root)
{
#ifdef DO_MPI
    MPI_Bcast(buf, count, MPI_BYTE, root, MPI_COMM_WORLD);
#else
    (void)buf;
    (void)count;
    (void)root;
#endif
}

/* nbcx-transform: bcastParallel_nb() starts what bcastParallel() does,
 * bcastParallel_wait() completes it */
#if defined(DO_MPI)
static MPI_Request nbcx_bcastParallel_req = MPI_REQUEST_NULL;
#endif

void bcastParallel_nb(void *buf, int count, int root)
{
#ifdef DO_MPI
    MPI_Ibcast(buf, count, MPI_BYTE, root, MPI_COMM_WORLD, &nbcx_bcastParallel_req);
#else
    (void)buf;
    (void)count;
    (void)root;
#endif
}

void bcastParallel_wait(void)
{
#if defined(DO_MPI)
    MPI_Wait(&nbcx_bcastParallel_req, MPI_STATUS_IGNORE);
#endif
}

/* Not a twin: the send buffer is the parameter's own copy, gone at the return. */
void sumValueParallel(double value)
{
#ifdef DO_MPI
    MPI_Allreduce(&value, &theSum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#else
    theSum = value;
#endif
}

double lastSum(void) { return theSum; }
