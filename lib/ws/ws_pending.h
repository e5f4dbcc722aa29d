/*
 * Pending transactions for the newPendingTransactions subscriptions (schema/009_ws.sql,
 * ws_pending; docs/websocket.md): cron/pending, the one follower of each node's pending
 * transactions, appends the hashes it sees; every WebSocket connection reads those after the
 * last one it sent. Chain keys are "CHAIN.NETWORK"; hashes lower-case 0x hex.
 */
#ifndef BP_WS_PENDING_H
#define BP_WS_PENDING_H

#include <stddef.h>
#include <stdint.h>

struct bp_db;

#define BP_WS_PENDING_KEEP_SECONDS	60	/* rows older than this are pruned */
#define BP_WS_PENDING_KEEP_ROWS	10000	/* and at most this many kept per chain */
#define BP_WS_PENDING_READ		256	/* rows read at most per bp_ws_pending_read */

/*
 * Appends the n hashes (each "0x" and 64 hex digits, checked here; others are skipped) of chain,
 * seen at now (Unix seconds), and prunes, in one transaction. Returns the number appended, or -1
 * on a database error (nothing appended).
 */
int	bp_ws_pending_add(struct bp_db *, const char *chain, const char *const *hashes, size_t n,
	    int64_t now);

/* The last seq of chain into *seq (0 when none). 0 or -1. */
int	bp_ws_pending_last(struct bp_db *, const char *chain, int64_t *seq);

/*
 * Calls fn for each hash of chain after seq *after, in order, at most BP_WS_PENDING_READ; *after
 * becomes the last seq read. Returns the number read, or -1 on a database error or when fn
 * returned -1.
 */
int	bp_ws_pending_read(struct bp_db *, const char *chain, int64_t *after,
	    int (*fn)(const char *hash, void *arg), void *arg);

#endif
