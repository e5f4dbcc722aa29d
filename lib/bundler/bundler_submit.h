/*
 * The bundle submitter's pass over one network (cron/bundle.c; docs/bundler.md):
 *
 *  1. watch the bundles sent: a receipt marks the bundle and its ops included (or failed, when
 *     an op has no UserOperationEvent in it); a transaction that vanished from the node, or
 *     whose nonce another transaction took, is dropped and its ops go back to pending (the
 *     pending nonce is read from the chain for every bundle, never trusted from the row: after
 *     a devchain evm_revert it goes back); one pending too long is re-signed with the same
 *     nonce and higher fees, the new version recorded before it is sent;
 *  2. reorgs: a bundle included in the last BP_BUNDLER_SUBMIT_REORG_DEPTH blocks whose receipt is gone
 *     or moved to another block is orphaned: its ops go back to pending;
 *  3. when no bundle is in flight: pending ops by priority fee (one a sender, its lowest nonce),
 *     all of one EntryPoint (the best-paying op's: v0.6's, v0.7's or v0.8's handleOps),
 *     as many as fit the block gas limit, re-checked with eth_call of handleOps (an op that
 *     fails is dropped with its FailedOp reason), signed as an EIP-1559 transaction (type 4
 *     when EIP-7702 ops bring authorizations: lib/bundler/bundler_7702.h) that pays the
 *     least fees of its ops, the tip no more than the node's eth_maxPriorityFeePerGas,
 *     RECORDED with its nonce and signed bytes, then sent.
 *
 * Crash safety follows from the order: a submitter killed before the record sends nothing and
 * the ops stay pending; killed after it, the next pass finds the row and learns from the chain
 * what became of the transaction. No op is lost, and a nonce is never used by two bundles the
 * chain could both accept (a new bundle waits until the last one is settled).
 */
#ifndef BP_BUNDLER_SUBMIT_H
#define BP_BUNDLER_SUBMIT_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

struct bp_db;
struct bp_upstream;

#define BP_BUNDLER_SUBMIT_OPS_MAX	64	/* ops a bundle takes, at most */
#define BP_BUNDLER_SUBMIT_STUCK_SECONDS	20	/* a bundle pending longer is re-sent with higher fees */
#define BP_BUNDLER_SUBMIT_FEE_BUMP	25	/* percent added to both fees on a re-send */
#define BP_BUNDLER_SUBMIT_TAKEN_GRACE	3	/* seconds a sent bundle's nonce may look taken before it is */
#define BP_BUNDLER_SUBMIT_REORG_DEPTH	32	/* blocks behind the head whose bundles are re-checked */
#define BP_BUNDLER_SUBMIT_REORG_EVERY_MS	1000	/* recent bundles re-checked for reorgs this often */

/* The submitter of one network: its key, address and beneficiary. */
struct bp_bundler_submitter {
	const struct bp_network	*net;
	uint8_t			 key[32];
	uint8_t			 addr[20];
	uint8_t			 beneficiary[20];
	uint8_t			 ep[20];	/* v0.6's (required); a bundle goes to its ops' own */
	int			 force;		/* build even in manual mode (debug_bundler_sendBundleNow) */
	char			 last_tx[67];	/* the hash of the bundle the last pass sent, or "" */
	int64_t			 reorg_at;	/* bp_mono_us() of the last look for reorgs */
};

/*
 * Sets s up for net from its bundler_key and bundler_beneficiary. Returns 0, 1 when the network
 * has no bundler (no key or no entry point: silently), or -1 after logging why.
 */
int	bp_bundler_submit_init(struct bp_bundler_submitter *s, const struct bp_network *net);

/* Wipes the key. */
void	bp_bundler_submit_fini(struct bp_bundler_submitter *s);

/*
 * One pass (above). A bundle it sends is looked for at once (on a devchain it is mined by
 * then). Writes a summary into msg. Returns 1 when more work is ready at once (a bundle
 * settled), 2 when a bundle is in flight (look again soon: BP_WORKER_SOON), 0 when idle, -1
 * when the node or the database failed. The recent bundles are re-checked for reorgs at most
 * every BP_BUNDLER_SUBMIT_REORG_EVERY_MS, not at each of the quick looks or wake-ups.
 */
int	bp_bundler_submit_pass(struct bp_db *, struct bp_upstream *, struct bp_bundler_submitter *s, char *msg,
	    size_t msglen);

#endif
