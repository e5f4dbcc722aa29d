-- 004: gas prices, sponsorship policies and sponsorships. See docs/gas.md.
-- Addresses and hashes are lower-case 0x hex; times are Unix seconds; USD amounts are exact
-- decimal strings; fees are wei in decimal.

-- Owner: lib/gas/gas.c (written by cron/gas.c and by fcgi/gas.c when a sample is stale). The
-- latest sample of each network, with its answer rendered once.
CREATE TABLE gas_samples (
	chain		TEXT NOT NULL,
	network		TEXT NOT NULL,
	block_number	INTEGER NOT NULL,		-- the newest block the sample read
	base_fee_wei	TEXT NOT NULL,			-- the next block's; "0" without EIP-1559
	answer		TEXT NOT NULL,			-- the JSON of GET /v1/gas/{chain}/prices
	sampled_at	INTEGER NOT NULL,
	PRIMARY KEY (chain, network)
);

-- Owner: lib/gas/policy.c. A policy belongs to the account of the key that made it. A deleted
-- policy keeps its row (status 'deleted', answered as 404) so its sponsorships stay recorded.
CREATE TABLE gas_policies (
	id		TEXT PRIMARY KEY,		-- gp_ + 24 hex digits
	account_id	INTEGER NOT NULL REFERENCES accounts(id),
	name		TEXT NOT NULL,
	chain		TEXT NOT NULL,
	rules		TEXT NOT NULL,			-- the rules object, canonical JSON
	status		TEXT NOT NULL CHECK (status IN ('active', 'paused', 'deleted')),
	created_at	INTEGER NOT NULL,
	updated_at	INTEGER NOT NULL
);
CREATE INDEX gas_policies_account ON gas_policies(account_id, created_at);

-- Owner: lib/gas/policy_record.c. One row per sponsorship signed; the rules count them.
CREATE TABLE gas_sponsorships (
	id		INTEGER PRIMARY KEY,
	policy_id	TEXT NOT NULL REFERENCES gas_policies(id),
	network		TEXT NOT NULL,
	sender		TEXT NOT NULL,
	user_op_hash	TEXT NOT NULL,			-- of the op as signed, paymasterAndData included
	usd		TEXT,				-- NULL when no price was known
	day		INTEGER NOT NULL,		-- UTC day: created_at / 86400
	created_at	INTEGER NOT NULL
);
CREATE INDEX gas_sponsorships_sender ON gas_sponsorships(policy_id, sender, day);
CREATE INDEX gas_sponsorships_time ON gas_sponsorships(policy_id, created_at);

-- Owner: lib/gas/policy_record.c. Per policy and UTC day, the sponsorships and their worst-case USD: the
-- spend GET /v1/gas/policies/{id} shows (today's row, and the sum of all rows).
CREATE TABLE gas_policy_days (
	policy_id	TEXT NOT NULL REFERENCES gas_policies(id),
	day		INTEGER NOT NULL,
	count		INTEGER NOT NULL,
	usd		TEXT NOT NULL,
	PRIMARY KEY (policy_id, day)
);
