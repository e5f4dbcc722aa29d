/*
 * What the submitter's two halves share (bundler_submit.h): bundler_submit.c builds and sends
 * bundles, bundler_watch.c watches the bundles sent (inclusion, taken nonces, fee bumps,
 * reorgs). Private to them.
 */
#ifndef BP_BUNDLER_SUBMIT_INT_H
#define BP_BUNDLER_SUBMIT_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "bundler_pool.h"
#include "bundler_submit.h"
#include "evm/entry_point.h"

/* Calls method with the params JSON text; the result (a JSON null included) or NULL. */
cJSON	*bp_bundler_submit_call(struct bp_upstream *up, const struct bp_network *net,
	    const char *method, const char *params);
/* A QUANTITY string into *out; 0, or -1 when j is not one. */
int	 bp_bundler_submit_quantity(const cJSON *j, uint64_t *out);
/* The submitter's transaction count at tag ("latest", "pending") into *out; 0 or -1. */
int	 bp_bundler_submit_tx_count(struct bp_upstream *up, const struct bp_bundler_submitter *s,
	    const char *tag, uint64_t *out);
/* The version of the network's EntryPoint ep (a 0x string) into *v; 0, or -1 for none. */
int	 bp_bundler_submit_ep_version(const struct bp_network *net, const char *ep, uint8_t a[20],
	    enum bp_ep_version *v);
/*
 * Re-signs b, whose ops are ops[0..nops) (their hashes), with the same nonce and both fees
 * raised by BP_BUNDLER_SUBMIT_FEE_BUMP percent, records the new version, then sends it.
 * 0 or -1.
 */
int	 bp_bundler_submit_bump(struct bp_db *, struct bp_upstream *,
	    const struct bp_bundler_submitter *s, struct bp_bundler_pool_bundle *b,
	    const struct bp_bundler_pool_outcome *ops, size_t nops);

/*
 * Steps 1 and 2 of a pass over chain: the bundles in flight and, when reorgs, the recent
 * included ones. The bundles settled and those still in flight into *settled and *open. 0, or
 * -1 when the node or the database failed.
 */
int	 bp_bundler_watch_pass(struct bp_db *, struct bp_upstream *, struct bp_bundler_submitter *s,
	    const char *chain, int reorgs, int *settled, int *open);

#endif
