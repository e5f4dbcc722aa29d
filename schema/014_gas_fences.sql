-- 014: test and live resources apart, and sponsorship budgets. See docs/gas.md (Fences) and
-- docs/wallets.md. A resource's kind is its network's (testnet in the config), kept on the row
-- at creation so that lists filter on it: a test key sees only testnet = 1 rows of its
-- account, a live key only testnet = 0 ones.

-- Gas policies belong to a network like webhooks. Policies made before this migration have
-- network '' and are live: the live network of their chain (docs/decisions.md).
ALTER TABLE gas_policies ADD COLUMN network TEXT NOT NULL DEFAULT '';
ALTER TABLE gas_policies ADD COLUMN testnet INTEGER NOT NULL DEFAULT 0;
DROP INDEX gas_policies_account;
CREATE INDEX gas_policies_account ON gas_policies(account_id, testnet, created_at);

-- Wallets made before this migration are classed by their network's name: "mainnet" is live,
-- any other network a test network (the names blockport.ini.example and make run use).
ALTER TABLE wallets ADD COLUMN testnet INTEGER NOT NULL DEFAULT 0;
UPDATE wallets SET testnet = CASE WHEN network = 'mainnet' THEN 0 ELSE 1 END;
DROP INDEX wallets_account;
CREATE INDEX wallets_account ON wallets(account_id, testnet, id);

-- Owner: lib/gas/policy_record.c. The worst-case USD sponsored per account and UTC day, and for the
-- whole server under account_id 0: what the plan's and [server]'s sponsor_usd_per_day bound,
-- counted in the transaction that records each sponsorship (bp_policy_record).
CREATE TABLE gas_budget_days (
	account_id	INTEGER NOT NULL,		-- 0: every account of this server
	day		INTEGER NOT NULL,		-- UTC day: unix time / 86400
	usd		TEXT NOT NULL,			-- exact decimal string
	PRIMARY KEY (account_id, day)
);
