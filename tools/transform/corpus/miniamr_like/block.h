#ifndef BLOCK_H
#define BLOCK_H
#define NB 8
#define BS 64
struct block {
    double cells[BS];
    int level;
};
extern struct block blocks[NB];
extern int num_refined;
void init_blocks(int rank);
void stencil(struct block *b);
double check_sum(const struct block *b);
int refine_marks(double threshold);
double timer(void);
#endif
