/*
 * The indexer's store step (docs/indexer.md, "What is stored"): the owner of the index_* tables
 * (schema/002_indexer.sql). It writes a checked batch (index_fetch.h) - blocks, transactions,
 * transfers, ERC-20 holdings, NFT owners, ERC-4337 user operations and deployments - and the
 * cursor in one transaction, and gives index_reorg.c and index_prune.c the row-level writes
 * they need (bp_index_store_delete, the owner and cursor writes): it is the one module that
 * writes these tables, while index_headers.c and index_logs.c own theirs. Programs that only
 * read the tables use index_read.h.
 *
 * The hook (struct bp_index_store_hook) is where a consumer of the stored events (a webhook matcher)
 * joins the store's transaction: what it writes commits or rolls back with the blocks and the
 * cursor, so it sees each stored log exactly once, and hears of each block a reorg removes.
 */
#ifndef BP_INDEX_STORE_H
#define BP_INDEX_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "evm/blocks.h"
#include "index_event.h"
#include "index_fetch.h"
#include "index_read.h"

struct bp_db;

/* The zero address, as stored: mints come from it and burns go to it; it never holds. */
#define BP_INDEX_STORE_ZERO_ADDR	"0x0000000000000000000000000000000000000000"

/* One log of a stored block, as the store read and decoded it. */
struct bp_index_store_event {
	struct bp_blocks_logpos	 pos;	/* block, log index, transaction, emitter */
	struct bp_blocks_log	 log;	/* address, topics and data (data valid as below) */
	struct bp_index_event		 ev;	/* ev.kind BP_INDEX_EVENT_OTHER for a log the index does not keep */
};

/* A stored block and its logs, for the hook. Valid during the callback only. */
struct bp_index_store_block {
	int64_t				 number;
	const char			*hash;		/* lower-case 0x hex */
	const char			*parent_hash;
	const struct bp_index_store_event	*events;	/* its logs but removed ones, in log order */
	size_t				 nevents;
	const cJSON			*receipts;	/* the node's receipts of its transactions,
							 * in order (checked), or NULL */
	const cJSON			*block;		/* the node's block object, its
							 * transactions included */
	const cJSON			*traces;	/* its call traces (index_fetch.h,
							 * checked), or NULL: not fetched */
	int				 traces_flat;	/* trace_block's; else callTracer's */
};

/*
 * Called by the store inside its transaction, after a batch's rows are written and before the
 * cursor is: block once per stored block, oldest first, with every log of that block (also the
 * ones the index does not keep, and those BP_INDEX_EVENT_MALFORMED); rollback once per block a reorg
 * removes (index_reorg.c), newest first, before its rows are deleted. Both run on db, the
 * store's own connection; each returns 0, or -1 to fail the batch or the rollback, which is then
 * rolled back whole (the hook's writes included) and tried again by a later pass. Either may be
 * NULL. arg is the hook's own.
 */
struct bp_index_store_hook {
	int	(*block)(void *arg, struct bp_db *db, const char *chain,
		    const struct bp_index_store_block *block);
	int	(*rollback)(void *arg, struct bp_db *db, const char *chain, int64_t number,
		    const char *hash);
	void	*arg;
};

/* One indexed network, as the store, the reorg and the prune steps see it. The caller's. */
struct bp_index_store_chain {
	char				 key[BP_INDEX_CHAIN_MAX];	/* "ethereum.devnet" */
	int64_t				 start_block;	/* the first block on a new database */
	int64_t				 confirmations;	/* depth at which a block is final */
	/* The EntryPoints whose ERC-4337 events are kept (every version's); none when 0. */
	const uint8_t			(*entry_points)[20];
	size_t				 n_entry_points;
	const struct bp_index_store_hook	*hook;		/* or NULL */
	uint8_t				*data;		/* decoded log data, reused; free()d by */
	size_t				 datacap;	/* the caller once done */
};

/* The stored cursor: the last indexed block and its hash ("" when none). */
struct bp_index_store_cursor {
	int64_t		head;
	char		hash[BP_BLOCKS_HASH_STR];
};

/* Counts of one stored batch, for the pass message and the benchmark. */
struct bp_index_store_counts {
	int64_t		blocks, txs, logs, transfers, userops, malformed;
};

/*
 * The chain's cursor into *cur; a chain not indexed yet gets start_block - 1 and "". 0, or -1
 * on a database error (logged).
 */
int	bp_index_store_cursor_load(struct bp_db *, const struct bp_index_store_chain *,
	    struct bp_index_store_cursor *cur);

/*
 * Writes the cursor, with the node's head chain_head and the final block that follows from the
 * confirmations, inside the caller's transaction or on its own; reorg adds one to the reorg
 * count. 0, or -1 on a database error.
 */
int	bp_index_store_cursor_save(struct bp_db *, const struct bp_index_store_chain *,
	    const struct bp_index_store_cursor *cur, int64_t chain_head, int reorg);

/*
 * Writes the checked batch b (bp_index_fetch_check returned 0) and the cursor (its last block) in one
 * transaction, calling the hook's block function for each block inside it. Adds to *n. Returns
 * 0, or -1 when a row of the node's answer is malformed or the database or the hook failed:
 * nothing of the batch is then stored.
 */
int	bp_index_store_batch(struct bp_db *, struct bp_index_store_chain *, const struct bp_index_fetch *b,
	    int64_t chain_head, struct bp_index_store_counts *n);

/* The stored hash of block number into out; 1 when stored, 0 when not, -1 on error. */
int	bp_index_store_hash(struct bp_db *, const struct bp_index_store_chain *, int64_t number,
	    char out[BP_BLOCKS_HASH_STR]);

/*
 * Deletes chain's rows of the blocks above number (a rollback, above = 1): blocks,
 * transactions, transfers, ERC-4337 rows, and the ERC-20 holdings first seen there; NFT
 * ownership is the caller's to recompute (bp_index_store_owner_set). Or, above = 0, the blocks
 * at or below number and their transactions (the retention: transfers, holdings, NFT owners and
 * the ERC-4337 rows are kept whole). Inside the caller's transaction. 0 or -1.
 */
int	bp_index_store_delete(struct bp_db *, const struct bp_index_store_chain *, int64_t number,
	    int above);

/* Removes every owner row of one token (contract, decimal id) of a standard. 0 or -1. */
int	bp_index_store_owners_clear(struct bp_db *, const struct bp_index_store_chain *, const char *contract,
	    const char *id, const char *standard);

/*
 * Sets owner's quantity (decimal) of a token of a standard ("erc721" or "erc1155"), last changed
 * in block; "0" removes the row. 0 or -1.
 */
int	bp_index_store_owner_set(struct bp_db *, const struct bp_index_store_chain *, const char *contract,
	    const char *id, const char *owner, const char *standard, const char *quantity,
	    int64_t block);

#endif
