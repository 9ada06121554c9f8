#include "block.h"

struct block blocks[NB];
int num_refined = 0;

void init_blocks(int rank)
{
    for (int b = 0; b < NB; b++) {
        blocks[b].level = 0;
        for (int i = 0; i < BS; i++)
            blocks[b].cells[i] = (double)((b * BS + i + rank) % 17);
    }
}

void stencil(struct block *b)
{
    double prev = b->cells[0];
    for (int i = 1; i < BS - 1; i++) {
        double cur = b->cells[i];
        b->cells[i] = (prev + cur + b->cells[i + 1]) / 3.0;
        prev = cur;
    }
}

double check_sum(const struct block *b)
{
    double s = 0.0;
    for (int i = 0; i < BS; i++)
        s += b->cells[i];
    return s;
}

int refine_marks(double threshold)
{
    int marks = 0;
    for (int b = 0; b < NB; b++)
        if (check_sum(&blocks[b]) > threshold) {
            blocks[b].level++;
            marks++;
        }
    num_refined += marks;
    return marks;
}
