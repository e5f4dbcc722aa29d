/*
 * The block headers near the head (schema/011_ws_heads.sql, index_headers; docs/websocket.md):
 * each stored block's object as the node answered it, without its transactions array, written
 * by the indexer's store in the same transaction as its blocks, logs and cursor, deleted with
 * them on a reorg, pruned to the last BP_INDEX_LOGS_WINDOW blocks like index_logs. The newHeads
 * subscriptions of every WebSocket connection send it (through the heads feed,
 * lib/index/index_feed.c, and lib/ws/ws_follow.c), so they carry every header field the node
 * gives without asking it.
 */
#ifndef BP_INDEX_HEADERS_H
#define BP_INDEX_HEADERS_H

#include <stdint.h>

#include <cjson/cJSON.h>

struct bp_db;

#define BP_INDEX_HEADERS_MAX	(64 * 1024)	/* a longer header is not kept (newHeads: core fields) */

/*
 * Stores block (number, hash): blk, the node's eth_getBlockByNumber object, without its
 * "transactions" member, as compact JSON, inside the caller's transaction (replacing a row of
 * the same number). A header longer than BP_INDEX_HEADERS_MAX is skipped. 0, or -1 on a database
 * error or out of memory.
 */
int	bp_index_headers_put(struct bp_db *, const char *chain, int64_t number, const char *hash,
	    const cJSON *blk);

/* Deletes the headers of chain's blocks at or below number (the window), or above it (a
 * rollback, above = 1). 0 or -1. */
int	bp_index_headers_delete(struct bp_db *, const char *chain, int64_t number, int above);

#endif
