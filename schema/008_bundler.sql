-- 008: the ERC-4337 bundler's mempool and its bundles. See docs/bundler.md.
-- Addresses and hashes are lower-case 0x hex; times are Unix seconds. Fees and nonces are kept
-- as 64 hex digits without 0x (fixed width, so ORDER BY sorts them as numbers).

-- Owner: lib/bundler/bundler_pool.c (written by fcgi/bundler.c on eth_sendUserOperation and by
-- cron/bundle.c as ops move through bundles). One row per UserOperation the bundler accepted.
-- status: pending (in the pool), submitted (in a bundle transaction not yet mined), included
-- (mined; success says whether its call succeeded), failed (its bundle reverted), dropped
-- (re-check failed, replaced, or expired; reason says why).
CREATE TABLE bundler_user_ops (
	chain		TEXT NOT NULL,			-- "CHAIN.NETWORK"
	user_op_hash	TEXT NOT NULL,
	entry_point	TEXT NOT NULL,
	sender		TEXT NOT NULL,
	nonce		TEXT NOT NULL,			-- 64 hex digits
	max_fee		TEXT NOT NULL,			-- maxFeePerGas, 64 hex digits
	max_priority	TEXT NOT NULL,			-- maxPriorityFeePerGas, 64 hex digits
	gas		INTEGER NOT NULL,		-- call + verification + preVerification gas
	staked		INTEGER NOT NULL,		-- the sender had a stake when accepted
	paymaster	TEXT NOT NULL,			-- "" when none
	paymaster_staked INTEGER NOT NULL,		-- the paymaster had a stake when accepted
	op_json		TEXT NOT NULL,			-- the op, quantities and data as hex
	status		TEXT NOT NULL CHECK (status IN
			    ('pending', 'submitted', 'included', 'failed', 'dropped')),
	reason		TEXT,
	bundle_id	INTEGER,			-- bundler_bundles.id, while submitted or after
	tx_hash		TEXT,
	block_number	INTEGER,
	block_hash	TEXT,
	success		INTEGER,
	created_at	INTEGER NOT NULL,
	updated_at	INTEGER NOT NULL,
	PRIMARY KEY (chain, user_op_hash)
);
CREATE INDEX bundler_user_ops_status ON bundler_user_ops(chain, status, max_priority);
CREATE INDEX bundler_user_ops_sender ON bundler_user_ops(chain, sender, nonce);
CREATE INDEX bundler_user_ops_bundle ON bundler_user_ops(bundle_id);
CREATE INDEX bundler_user_ops_paymaster ON bundler_user_ops(chain, paymaster, status);

-- Owner: lib/bundler/bundler_pool.c (written by cron/bundle.c). One row per bundle transaction, written
-- with its signed bytes and nonce BEFORE it is sent, so a submitter killed at any point finds
-- it again: it re-sends the same bytes or learns from the chain what became of them.
-- status: sent (signed, maybe sent), included, dropped (vanished or its nonce taken by another
-- transaction: its ops went back to pending), orphaned (its block left the chain).
CREATE TABLE bundler_bundles (
	id		INTEGER PRIMARY KEY,
	chain		TEXT NOT NULL,
	bundler		TEXT NOT NULL,			-- the sending account
	nonce		INTEGER NOT NULL,
	tx_hash		TEXT NOT NULL,			-- of the latest signed version
	old_tx_hashes	TEXT NOT NULL DEFAULT '',	-- earlier versions (fee bumps), comma-separated
	raw_tx		TEXT NOT NULL,			-- the signed transaction, hex
	max_fee		TEXT NOT NULL,			-- wei, decimal
	max_priority	TEXT NOT NULL,			-- wei, decimal
	gas_limit	INTEGER NOT NULL,
	ops		INTEGER NOT NULL,
	status		TEXT NOT NULL CHECK (status IN ('sent', 'included', 'dropped', 'orphaned')),
	block_number	INTEGER,
	block_hash	TEXT,
	sent_at		INTEGER NOT NULL,
	created_at	INTEGER NOT NULL
);
CREATE INDEX bundler_bundles_status ON bundler_bundles(chain, status);
