/* Not given to the tool: calls main.c's wrappers on some ranks only. */
void root_side(int *p, double *w);
void other_side(int *p, double *w);

void dispatch(int rank, int *p, double *w)
{
    if (rank == 0)
        root_side(p, w);
    else
        other_side(p, w);
}
