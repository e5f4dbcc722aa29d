-- 011: the block headers the WebSocket newHeads subscriptions send (docs/websocket.md).

-- Owner: lib/index/index_headers.c (written by the indexer's store in the transaction of its blocks
-- and cursor, deleted with them on a reorg; read through lib/index/index_read.c for the heads feed and ws/subscribe). Each
-- stored block's object as the node answered eth_getBlockByNumber, without its transactions
-- array, as compact JSON text; for the blocks within BP_INDEX_LOGS_WINDOW of the node's head only,
-- pruned like index_logs.
CREATE TABLE index_headers (
	chain		TEXT NOT NULL,
	number		INTEGER NOT NULL,
	hash		TEXT NOT NULL,		-- lower-case 0x hex, as index_blocks.hash
	header		TEXT NOT NULL,		-- JSON object
	PRIMARY KEY (chain, number)
) WITHOUT ROWID;
