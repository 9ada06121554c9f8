/* A program outside the nbcx tree on libnbcx-model (nbcx::nbcx_model):
 * the schedule checker proves the binomial broadcast on 8 ranks, and
 * finds an unknown algorithm unknown. */
#include <stdio.h>

#include "nbcx.h"
#include "nbcx_check.h"

int main(void)
{
    nbcx_check_result res;
    int err = nbcx_check_collective("bcast", "binomial", 8, 100, NULL, &res);
    if (err != NBCX_SUCCESS || res.errors != 0 || res.messages <= 0) {
        fprintf(stderr, "consumer_check: bcast binomial: %s, %lld errors, "
                        "%lld messages\n", nbcx_error_string(err),
                res.errors, res.messages);
        return 1;
    }
    long long messages = res.messages;
    if (nbcx_check_collective("bcast", "no-such-alg", 8, 100, NULL, &res) ==
        NBCX_SUCCESS) {
        fprintf(stderr, "consumer_check: an unknown algorithm was checked\n");
        return 1;
    }
    printf("consumer_check: ok (%lld messages)\n", messages);
    return 0;
}
