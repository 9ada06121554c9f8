void share_root(int *p, double *w);
void share_leaf(int *p, double *w);
