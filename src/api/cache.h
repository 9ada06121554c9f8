/* cache.h (internal) - the schedule cache of the API layer (cache.c).
 *
 * A communicator's cache is made on its first cacheable call and freed
 * with it; nbcx_comm_free closes it (its schedules are freed, and
 * schedules finishing later are not kept). The cache labels the
 * schedules it may keep as their keeper (struct nbcxi_sched_keeper): a
 * completed nonblocking operation's schedule comes back to it through
 * nbcxi_sched_retire, and is kept if it succeeded.
 */
#ifndef NBCX_API_CACHE_H
#define NBCX_API_CACHE_H

#include "../coll/coll.h"

/* An idle cached schedule for this call (the caller owns it), or NULL. */
NBCX_HIDDEN struct nbcx_sched_s *
nbcxi_cache_take(struct nbcx_comm_s *comm, enum nbcxi_coll coll,
                 const struct nbcxi_coll_args *a);
/* Labels a newly built schedule so that it can be cached when it
 * completes. */
NBCX_HIDDEN int nbcxi_cache_label(struct nbcx_sched_s *s,
                                  enum nbcxi_coll coll,
                                  const struct nbcxi_coll_args *a);
NBCX_HIDDEN void nbcxi_cache_close(struct nbcx_comm_s *comm);
/* Frees the schedules kept for comm (they hold it and its transport);
 * later ones are kept again (nbcx_comm_set_transport). */
NBCX_HIDDEN void nbcxi_cache_flush(struct nbcx_comm_s *comm);
NBCX_HIDDEN void nbcxi_cache_stats(unsigned long *hits,
                                   unsigned long *misses);

#endif /* NBCX_API_CACHE_H */
