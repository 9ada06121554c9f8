/* gaptype.c - the derived datatypes with gaps of gaptype.h. */
#include <stdint.h>
#include <string.h>

#include "gaptype.h"

struct gap_layout {
    int words, ndata; /* the extent and the data, in words */
    int off[5];       /* word offsets of d0 .. in the element */
};
static const struct gap_layout mid_layout = { 3, 2, { 0, 2 } };
static const struct gap_layout front_layout = { 3, 2, { 1, 2 } };
static const struct gap_layout five_layout = { 6, 5, { 0, 1, 3, 4, 5 } };

static int gap_ndata(const struct nbcx_datatype_s *t)
{
    return ((const struct gap_layout *)t->handle)->ndata;
}

static const uint32_t *gap_word(const void *buf, int i, int k,
                                const struct nbcx_datatype_s *t)
{
    const struct gap_layout *l = t->handle;
    return (const uint32_t *)buf + l->words * i + l->off[k];
}

static int gap_pack(const void *src, int count, struct nbcx_datatype_s *t,
                    void *dst)
{
    const int nd = gap_ndata(t);
    for (int i = 0; i < count; i++)
        for (int k = 0; k < nd; k++)
            memcpy((uint32_t *)dst + nd * i + k, gap_word(src, i, k, t), 4);
    return NBCX_SUCCESS;
}

static int gap_unpack(const void *src, int count, struct nbcx_datatype_s *t,
                      void *dst)
{
    const int nd = gap_ndata(t);
    for (int i = 0; i < count; i++)
        for (int k = 0; k < nd; k++)
            memcpy((void *)(uintptr_t)gap_word(dst, i, k, t),
                   (const uint32_t *)src + nd * i + k, 4);
    return NBCX_SUCCESS;
}

/* inout += in on the data words (int32, wrapping). */
static int gap_reduce(const void *in, void *inout, int count,
                      struct nbcx_datatype_s *t, int op_id)
{
    if (op_id != (int)(uintptr_t)NBCX_SUM)
        return NBCX_ERR_OP;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < gap_ndata(t); k++) {
            int32_t a, b;
            uint32_t *pb = (uint32_t *)(uintptr_t)gap_word(inout, i, k, t);
            memcpy(&a, gap_word(in, i, k, t), 4);
            memcpy(&b, pb, 4);
            b = (int32_t)((uint32_t)a + (uint32_t)b);
            memcpy(pb, &b, 4);
        }
    return NBCX_SUCCESS;
}

static const struct nbcxi_type_face gap_face = {
    .pack = gap_pack, .unpack = gap_unpack, .reduce = gap_reduce,
};

#define GAP_TYPE(NAME, LAYOUT, SIZE, EXT, LB, TEXT)                           \
    struct nbcx_datatype_s NAME = {                                           \
        .magic = NBCXI_TYPE_MAGIC, .id = 0, .name = #NAME, .size = SIZE,      \
        .extent = EXT, .true_lb = LB, .true_extent = TEXT,                    \
        .contiguous = false, .face = &gap_face,                               \
        .handle = (void *)(uintptr_t)&LAYOUT, .refs = 1 }
GAP_TYPE(gap_mid, mid_layout, 8, 12, 0, 12);
GAP_TYPE(gap_front, front_layout, 8, 12, 4, 8);
GAP_TYPE(gap_five, five_layout, 20, 24, 0, 24);
