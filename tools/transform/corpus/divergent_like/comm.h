int getMyRank(void);
int getNRanks(void);
void timer_start(int which);
void timer_stop(int which);
double timer_total(int which);
void sumDouble(double *send, double *recv, int n);
double energy(const double *x, int n);
