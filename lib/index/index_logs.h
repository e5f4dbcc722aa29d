/*
 * The raw logs of the blocks near the head (schema/009_ws.sql, index_logs; docs/websocket.md):
 * every log of every contract, written by the indexer's store in the same transaction as its
 * blocks and cursor, deleted with them on a reorg, pruned to the last BP_INDEX_LOGS_WINDOW blocks. The
 * logs subscriptions of every WebSocket connection read them, so none asks the node.
 */
#ifndef BP_INDEX_LOGS_H
#define BP_INDEX_LOGS_H

#include <stddef.h>
#include <stdint.h>

#include "evm/blocks.h"

struct bp_db;
struct bp_buf;

#define BP_INDEX_LOGS_WINDOW	256	/* blocks below the node's head whose logs are kept */

/* One stored log. Strings valid during the callback only. */
struct bp_index_logs_row {
	int64_t		 block;
	int64_t		 log_index;
	int64_t		 tx_index;		/* -1: unknown */
	const char	*block_hash;
	const char	*tx_hash;
	const char	*address;
	const char	*topics[BP_BLOCKS_MAX_TOPICS];
	size_t		 ntopics;
	const char	*data;
};

/*
 * Stores log (address, topics, data) at pos (block, log index, transaction, emitter) of the
 * block with block_hash, its transactionIndex tx_index (-1: unknown), inside the caller's
 * transaction. The types are evm/blocks.h's, so the store that calls this and the readers of
 * the table need nothing of each other. 0, or -1 on a database error or out of memory.
 */
int	bp_index_logs_put(struct bp_db *, const char *chain, const char *block_hash, int64_t tx_index,
	    const struct bp_blocks_logpos *pos, const struct bp_blocks_log *log);

/* Deletes the logs of chain's blocks at or below number (the window), or above it (a
 * rollback, above = 1). 0 or -1. */
int	bp_index_logs_delete(struct bp_db *, const char *chain, int64_t number, int above);

/*
 * Calls fn for each stored log of block number with hash, in log order. Returns the number of
 * logs, or -1 on a database error or when fn returned -1.
 */
int	bp_index_logs_block(struct bp_db *, const char *chain, int64_t number, const char *hash,
	    int (*fn)(const struct bp_index_logs_row *, void *arg), void *arg);

/*
 * Appends row as an eth_subscription logs result object (address, topics, data, blockNumber,
 * blockHash, transactionHash, transactionIndex, logIndex, removed) to out. 0 or -1.
 */
int	bp_index_logs_json(const struct bp_index_logs_row *row, int removed, struct bp_buf *out);

#endif
