/*
 * The high-water mark of each network's head, shared by every thread and process of the host: a
 * small memory-mapped file next to the limits file (LIMITS_FILE-heads), one slot per network,
 * lock-free. eth_blockNumber never goes backwards across upstreams: an answer below the mark from
 * another upstream than the one that set it (a fallback that lags) is answered with the mark. The
 * upstream that set the mark may lower it (its own reorg, or a development chain reverted). The
 * mark is also the proxy's known head for the cache's finality (lib/rpc/rpc_cache.h). docs/rpc.md.
 */
#ifndef BP_HEAD_MARK_H
#define BP_HEAD_MARK_H

#include <stdint.h>

#include "core/config.h"

struct bp_head_mark;

/* Maps (creating if needed) cfg's file; NULL after logging why, or without a limits file. */
struct bp_head_mark *bp_head_mark_open(const struct bp_config *cfg);
void		 bp_head_mark_close(struct bp_head_mark *);
/* Creates the file when missing (the admin CLI, so that it gets the limits file's owner). */
int		 bp_head_mark_init(const struct bp_config *cfg);

/*
 * Upstream number upstream (its index in net's list) says the head is head: returns the head to
 * answer, which is the mark when the mark is higher and was set by another upstream, else head
 * (the mark then moves to head, also down when upstream set it). m NULL returns head.
 */
int64_t		 bp_head_mark_see(struct bp_head_mark *m, const struct bp_network *net,
		    int64_t head, unsigned upstream);
/* The mark of net, or -1 when none is known (or m is NULL). */
int64_t		 bp_head_mark_get(struct bp_head_mark *m, const struct bp_network *net);
/* The index of the upstream that set net's mark, or -1 when none is known (or m is NULL). */
int		 bp_head_mark_owner(struct bp_head_mark *m, const struct bp_network *net);

#endif
