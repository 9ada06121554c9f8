#ifndef PARALLEL_H
#define PARALLEL_H

void initParallel(int *argc, char ***argv);
void destroyParallel(void);
int getMyRank(void);
int getNRanks(void);
void addDoubleParallel(double *sendBuf, double *recvBuf, int count);
void maxIntParallel(int *sendBuf, int *recvBuf, int count);
void bcastParallel(void *buf, int count, int root);
void sumValueParallel(double value);
double lastSum(void);

#endif
