-- 002: the chain indexer's tables (written by lib/index/index_store.c alone: lib/index/index_reorg.c
-- and lib/index/index_prune.c decide what goes and call it; read through lib/index/index_read.c).
-- See docs/indexer.md. Every row names its network by chain key, "CHAIN.NETWORK" as in the config
-- ("ethereum.devnet"). Addresses and hashes are lower-case 0x hex; amounts, token ids and wei are
-- decimal text (256-bit values do not fit an SQLite integer). A batch of blocks, its rows and the
-- cursor are written in one transaction, so a crash leaves neither a gap nor a duplicate.

-- Owner: lib/index/index_store.c (bp_index_store_cursor_save, also for a reorg's rollback).
-- One row per indexed network: how far the index goes and what counts as final.
CREATE TABLE index_cursors (
	chain		TEXT PRIMARY KEY,
	head		INTEGER NOT NULL,	-- last indexed block; start_block - 1 before the first
	head_hash	TEXT NOT NULL DEFAULT '',	-- its hash ('' before the first block)
	chain_head	INTEGER NOT NULL DEFAULT -1,	-- the node's eth_blockNumber at the last pass
	-- The highest block whose derived rows are final: min(head, chain_head - confirmations).
	-- Consumers that must not see reorged data (webhook delivery) read only up to it.
	confirmed	INTEGER NOT NULL DEFAULT -1,
	checked_at	INTEGER NOT NULL DEFAULT 0,	-- Unix seconds of the last pass over this chain
	reorgs		INTEGER NOT NULL DEFAULT 0	-- reorgs handled so far (for status)
);

-- Owner: lib/index/index_store.c (a batch; bp_index_store_delete for a reorg and the retention).
-- Raw block headers, pruned past index_retention_blocks. hash/parent_hash link the stored blocks
-- into a chain, which is how a reorg is noticed and its common ancestor found.
CREATE TABLE index_blocks (
	chain		TEXT NOT NULL,
	number		INTEGER NOT NULL,
	hash		TEXT NOT NULL,
	parent_hash	TEXT NOT NULL,
	timestamp	INTEGER NOT NULL,	-- Unix seconds
	gas_used	INTEGER NOT NULL,
	gas_limit	INTEGER NOT NULL,
	base_fee	TEXT,			-- wei, decimal; NULL before London
	tx_count	INTEGER NOT NULL,
	PRIMARY KEY (chain, number)
) WITHOUT ROWID;

-- Owner: lib/index/index_store.c (a batch; bp_index_store_delete for a reorg and the retention).
-- Every transaction of the indexed blocks (address activity, mined-transaction lookups); pruned
-- with its block.
CREATE TABLE index_transactions (
	chain		TEXT NOT NULL,
	hash		TEXT NOT NULL,
	block_number	INTEGER NOT NULL,
	tx_index	INTEGER NOT NULL,
	from_addr	TEXT NOT NULL,
	to_addr		TEXT,			-- NULL for a contract creation
	value		TEXT NOT NULL,		-- wei, decimal
	nonce		INTEGER NOT NULL,
	status		INTEGER,		-- 1 success, 0 reverted, NULL unknown (no receipts)
	gas_used	INTEGER,		-- from the receipt; NULL without receipts
	contract_created TEXT,			-- the new contract's address, or NULL
	PRIMARY KEY (chain, hash)
);
CREATE INDEX index_transactions_block ON index_transactions(chain, block_number);
CREATE INDEX index_transactions_from ON index_transactions(chain, from_addr, block_number);
CREATE INDEX index_transactions_to ON index_transactions(chain, to_addr, block_number);

-- Owner: lib/index/index_store.c (a batch; bp_index_store_delete for a reorg).
-- Token transfers decoded from logs: ERC-20 Transfer (3 topics), ERC-721 Transfer (4 topics),
-- ERC-1155 TransferSingle and TransferBatch (one row per id, batch_index its position). Mints
-- come from, and burns go to, the zero address. Kept past the retention (holdings are
-- recomputed from them after a reorg).
CREATE TABLE index_transfers (
	chain		TEXT NOT NULL,
	block_number	INTEGER NOT NULL,
	tx_hash		TEXT NOT NULL,
	log_index	INTEGER NOT NULL,
	batch_index	INTEGER NOT NULL DEFAULT 0,
	standard	TEXT NOT NULL CHECK (standard IN ('erc20', 'erc721', 'erc1155')),
	contract	TEXT NOT NULL,
	from_addr	TEXT NOT NULL,
	to_addr		TEXT NOT NULL,
	token_id	TEXT,			-- decimal; NULL for ERC-20
	value		TEXT NOT NULL,		-- decimal amount; 1 for ERC-721
	operator	TEXT,			-- ERC-1155 operator; NULL otherwise
	PRIMARY KEY (chain, tx_hash, log_index, batch_index)
);
CREATE INDEX index_transfers_block ON index_transfers(chain, block_number);
CREATE INDEX index_transfers_token ON index_transfers(chain, contract, token_id);
CREATE INDEX index_transfers_from ON index_transfers(chain, from_addr, block_number);
CREATE INDEX index_transfers_to ON index_transfers(chain, to_addr, block_number);

-- Owner: lib/index/index_store.c (a batch; bp_index_store_delete for a reorg).
-- ERC-20 contracts each address has sent or received (never the zero address), with the first
-- block it did. Balances are read from the chain (balanceOf) when asked: rebasing tokens make
-- any balance summed from events wrong.
CREATE TABLE index_erc20_holdings (
	chain		TEXT NOT NULL,
	owner		TEXT NOT NULL,
	contract	TEXT NOT NULL,
	first_block	INTEGER NOT NULL,
	PRIMARY KEY (chain, owner, contract)
) WITHOUT ROWID;

-- Owner: lib/index/index_store.c (bp_index_store_owner_set and bp_index_store_owners_clear, which
-- a reorg calls to recompute).
-- Current NFT ownership: one row per ERC-721 token (quantity 1) and one per ERC-1155 id and
-- holder with a non-zero quantity. Burnt tokens have no row.
CREATE TABLE index_nft_owners (
	chain		TEXT NOT NULL,
	contract	TEXT NOT NULL,
	token_id	TEXT NOT NULL,		-- decimal
	owner		TEXT NOT NULL,
	standard	TEXT NOT NULL CHECK (standard IN ('erc721', 'erc1155')),
	quantity	TEXT NOT NULL,		-- decimal
	block_number	INTEGER NOT NULL,	-- block of the last change
	PRIMARY KEY (chain, contract, token_id, owner)
) WITHOUT ROWID;
CREATE INDEX index_nft_owners_owner ON index_nft_owners(chain, owner);

-- Owner: lib/index/index_store.c (a batch; bp_index_store_delete for a reorg).
-- ERC-4337: AccountDeployed logs of the network's entry_point.
CREATE TABLE index_account_deployments (
	chain		TEXT NOT NULL,
	sender		TEXT NOT NULL,
	factory		TEXT NOT NULL,
	paymaster	TEXT NOT NULL,		-- zero address when none
	user_op_hash	TEXT NOT NULL,
	tx_hash		TEXT NOT NULL,
	block_number	INTEGER NOT NULL,
	log_index	INTEGER NOT NULL,
	PRIMARY KEY (chain, tx_hash, log_index)
);
CREATE INDEX index_account_deployments_sender ON index_account_deployments(chain, sender);
CREATE INDEX index_account_deployments_block ON index_account_deployments(chain, block_number);

-- Owner: lib/index/index_store.c (a batch; bp_index_store_delete for a reorg).
-- ERC-4337: UserOperationEvent logs of the network's entry_point.
CREATE TABLE index_user_ops (
	chain		TEXT NOT NULL,
	user_op_hash	TEXT NOT NULL,
	sender		TEXT NOT NULL,
	paymaster	TEXT NOT NULL,		-- zero address when none
	nonce		TEXT NOT NULL,		-- decimal
	success		INTEGER NOT NULL,
	actual_gas_cost	TEXT NOT NULL,		-- wei, decimal
	actual_gas_used	TEXT NOT NULL,		-- decimal
	tx_hash		TEXT NOT NULL,
	block_number	INTEGER NOT NULL,
	log_index	INTEGER NOT NULL,
	PRIMARY KEY (chain, tx_hash, log_index)
);
CREATE INDEX index_user_ops_hash ON index_user_ops(chain, user_op_hash);
CREATE INDEX index_user_ops_sender ON index_user_ops(chain, sender, block_number);
CREATE INDEX index_user_ops_block ON index_user_ops(chain, block_number);
