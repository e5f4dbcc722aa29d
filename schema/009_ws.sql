-- 009: what the WebSocket subscriptions share (docs/websocket.md). Hashes and addresses are
-- lower-case 0x hex.

-- Owner: lib/index/index_logs.c (written by the indexer's store in the transaction of its blocks and
-- cursor, deleted with them on a reorg; read by ws/subscribe). Every log of the blocks near the
-- head, whatever its contract, so a logs subscription never asks the node. Pruned to the last
-- BP_INDEX_LOGS_WINDOW blocks.
CREATE TABLE index_logs (
	chain		TEXT NOT NULL,
	block_number	INTEGER NOT NULL,
	log_index	INTEGER NOT NULL,
	block_hash	TEXT NOT NULL,
	tx_hash		TEXT NOT NULL,
	tx_index	INTEGER,		-- NULL when the node did not say
	address		TEXT NOT NULL,
	topic0		TEXT,			-- NULL past the log's topics
	topic1		TEXT,
	topic2		TEXT,
	topic3		TEXT,
	data		TEXT NOT NULL,		-- 0x hex
	PRIMARY KEY (chain, block_number, log_index)
) WITHOUT ROWID;

-- Owner: lib/ws/ws_pending.c (written by cron/pending, the one follower of the nodes' pending
-- transactions; read by ws/subscribe for newPendingTransactions). Hashes in the order they were
-- seen, seq counting up per chain; pruned past BP_WS_PENDING_KEEP_SECONDS and BP_WS_PENDING_KEEP_ROWS.
CREATE TABLE ws_pending (
	chain		TEXT NOT NULL,
	seq		INTEGER NOT NULL,
	hash		TEXT NOT NULL,
	seen_at		INTEGER NOT NULL,	-- Unix seconds
	PRIMARY KEY (chain, seq)
) WITHOUT ROWID;
