/*
 * The logs subscription of the WebSocket program (lib/ws/ws_logs.c; docs/websocket.md): a filter
 * ({address?, topics?}, as eth_getLogs takes them) checked once, the matching logs of each new
 * head, and the logs already sent for the last BP_WS_LOGS_KEEP blocks, so that when a block is
 * orphaned its logs are sent again with "removed": true.
 */
#ifndef BP_WS_LOGS_H
#define BP_WS_LOGS_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

struct bp_db;
struct bp_ws_logs;

#define BP_WS_LOGS_KEEP		64		/* blocks whose sent logs are kept */
#define BP_WS_LOGS_KEEP_BYTES	(1024 * 1024)	/* and at most this much text in all */

/* Called for each log to send: one JSON object of len bytes. 0, or -1 to stop. */
typedef int	(*bp_ws_logs_emit)(const char *log, size_t len, void *arg);

/*
 * A subscription for the filter in params (the raw eth_subscribe params: ["logs", FILTER?]).
 * Returns it (bp_ws_logs_free), or NULL with the reason in err when the filter is not valid: an
 * object with at most address (an address or an array of at most 32) and topics (at most four
 * entries, each null, a 32-byte hash or an array of at most 32 of them).
 */
struct bp_ws_logs *bp_ws_logs_new(const char *params, size_t len, char *err, size_t errlen);
void		 bp_ws_logs_free(struct bp_ws_logs *);

/*
 * Reads the stored logs of block hash (number) of chain (index_logs.h: no node call), emits
 * those that match and keeps them for a reorg. Returns the number emitted, or -1 on a database
 * error or when emit stopped.
 */
int		 bp_ws_logs_block(struct bp_ws_logs *, struct bp_db *, const char *chain,
		    int64_t number, const char *hash, bp_ws_logs_emit emit, void *arg);

/*
 * Block hash (number) was orphaned: its logs sent before are emitted again with "removed": true,
 * then forgotten. Returns the number emitted, or -1 when emit stopped.
 */
int		 bp_ws_logs_removed(struct bp_ws_logs *, int64_t number, const char *hash,
		    bp_ws_logs_emit emit, void *arg);

#endif
