void sum_all(double *send, double *recv, int n);
double norm2(double *v, int n);
