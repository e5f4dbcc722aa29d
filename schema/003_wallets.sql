-- 003: ERC-4337 smart wallets. See docs/wallets.md.
-- Owner: lib/wallet/wallets_db.c (the SQL of lib/wallet/wallets.c).
-- A wallet belongs to the account of the key that created it; the same counterfactual address
-- may be created by several accounts (it is public: anyone can compute it), each with its own
-- row. Addresses and hashes are lower-case 0x hex; times are Unix seconds.
CREATE TABLE wallets (
	id		INTEGER PRIMARY KEY,		-- creation order: lists are newest first
	account_id	INTEGER NOT NULL REFERENCES accounts(id),
	key_id		INTEGER NOT NULL REFERENCES api_keys(id),	-- the key that created it
	chain		TEXT NOT NULL,			-- "ethereum"
	network		TEXT NOT NULL,			-- "devnet": the config section chain.network
	address		TEXT NOT NULL,			-- the CREATE2 address
	owner		TEXT NOT NULL,
	-- The same two in EIP-55 form, as answers carry them: computed once, not on every read.
	address_eip55	TEXT NOT NULL,
	owner_eip55	TEXT NOT NULL,
	salt		TEXT NOT NULL,			-- 0x + 64 hex digits
	factory		TEXT NOT NULL,			-- the account factory it was computed for
	status		TEXT NOT NULL CHECK (status IN ('counterfactual', 'deployed')),
	created_at	INTEGER NOT NULL,
	-- The node's head when creation found no code there: deployment logs are searched from it.
	checked_block	INTEGER,
	-- Filled once the deployment transaction is known (indexer or eth_getLogs); a wallet can be
	-- deployed with these still NULL (code seen, logs not found yet).
	deploy_tx	TEXT,
	deploy_block	INTEGER,
	deployed_at	INTEGER,
	UNIQUE (account_id, address, chain, network)
);
CREATE INDEX wallets_account ON wallets(account_id, id);
CREATE INDEX wallets_account_chain ON wallets(account_id, chain, id);
CREATE INDEX wallets_address ON wallets(chain, network, address);
