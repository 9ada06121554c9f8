/*
 * gaptype.h - non-contiguous derived datatypes with gaps, as a face (e.g.
 * MPI) would make them, for the unit and in-process tests (library
 * nbcx_test_gap, gaptype.c; needs the internal nbcx_core).
 *
 * Two int32 data words in a 12-byte extent:
 *
 *     gap_mid    | d0 | gap | d1 |    true_lb 0, true_extent 12
 *     gap_front  | gap | d0 | d1 |    true_lb 4, true_extent 8
 *
 * Their 8 bytes of data match INT32 x 2 or INT64 x 1. And five int32
 * data words in a 24-byte extent, 20 bytes of data (a size that does not
 * divide the schedules' chunks, sched.h):
 *
 *     gap_five   | d0 | d1 | gap | d2 | d3 | d4 |
 *
 * The gaps must
 * never be written. The face packs, unpacks and reduces (NBCX_SUM only)
 * as MPI's pack/unpack and reduce_local would. The types are static and
 * never freed (their reference count never drops to zero).
 */
#ifndef NBCX_TEST_GAPTYPE_H
#define NBCX_TEST_GAPTYPE_H

#include "base/base.h"

extern struct nbcx_datatype_s gap_mid, gap_front, gap_five;
#define GAP_MID ((nbcx_datatype)&gap_mid)
#define GAP_FRONT ((nbcx_datatype)&gap_front)
#define GAP_FIVE ((nbcx_datatype)&gap_five)

#endif /* NBCX_TEST_GAPTYPE_H */
