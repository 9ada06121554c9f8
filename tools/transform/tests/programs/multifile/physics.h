#ifndef PHYSICS_H
#define PHYSICS_H
extern double total_time;
void init_grid(double *g, int n, int rank);
double grid_sum(const double *g, int n);
void relax(double *g, int n);
double timer(void);
#endif
