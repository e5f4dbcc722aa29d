/*
 * The debug_bundler_* methods of the eth-infinitism bundler, as its spec tests drive them
 * (docs/bundler.md, "debug_bundler_*"): off unless the network's debug_bundler is true, in which
 * case anyone with the bundler:send scope may clear the network's mempool and reputation, so
 * only a test network should turn them on. Each is a handler of lib/bundler/bundler_rpc.h.
 */
#ifndef BP_BUNDLER_DEBUG_H
#define BP_BUNDLER_DEBUG_H

#include "bundler_rpc.h"

int	bp_bundler_debug_clear_state(struct bp_bundler_call *);	/* mempool and reputation */
int	bp_bundler_debug_clear_mempool(struct bp_bundler_call *);
int	bp_bundler_debug_dump_mempool(struct bp_bundler_call *);	/* the pending ops */
int	bp_bundler_debug_send_bundle_now(struct bp_bundler_call *);	/* its transaction hash */
int	bp_bundler_debug_set_bundling_mode(struct bp_bundler_call *);	/* "manual" or "auto" */
int	bp_bundler_debug_set_reputation(struct bp_bundler_call *);	/* [{address, opsSeen, opsIncluded}] */
int	bp_bundler_debug_dump_reputation(struct bp_bundler_call *);

#endif
