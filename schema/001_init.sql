-- 001: accounts and API keys (written by the admin CLI through their owner; lib/core/auth.c
-- reads keys), worker runs (written by every cron/ program through theirs, read by `blockport
-- status`). A table's owner is its one writer.

-- Owner: lib/core/account.c
CREATE TABLE accounts (
	id		INTEGER PRIMARY KEY,
	email		TEXT NOT NULL UNIQUE,
	plan		TEXT NOT NULL,
	created_at	INTEGER NOT NULL		-- Unix seconds
);

-- Only the SHA-256 of a key is kept; the key itself is shown once, when it is created.
-- Owner: lib/core/account.c
CREATE TABLE api_keys (
	id		INTEGER PRIMARY KEY,
	account_id	INTEGER NOT NULL REFERENCES accounts(id),
	key_hash	BLOB NOT NULL UNIQUE,		-- SHA-256 of the whole key
	prefix		TEXT NOT NULL,			-- e.g. blockport_test_3f9a, for lists
	kind		TEXT NOT NULL CHECK (kind IN ('live', 'test')),
	scopes		TEXT NOT NULL DEFAULT '',	-- comma list; empty = every scope
	name		TEXT NOT NULL DEFAULT '',
	created_at	INTEGER NOT NULL,
	revoked_at	INTEGER
);
CREATE INDEX api_keys_account ON api_keys(account_id);

-- Owner: lib/core/worker.c
CREATE TABLE worker_runs (
	name		TEXT PRIMARY KEY,
	started_at	INTEGER NOT NULL,
	finished_at	INTEGER,
	ok		INTEGER NOT NULL DEFAULT 0,
	message		TEXT NOT NULL DEFAULT ''
);
