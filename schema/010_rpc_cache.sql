-- 010: the JSON-RPC response cache shared by every program and thread. See docs/rpc.md.

-- Owner: lib/rpc/rpc_cache.c. One answer's result per (network, method, params); the key is the
-- SHA-256 of those three. Immutable answers never expire (expires_at 0); near-head answers expire
-- after the network's cache_ttl_ms. Times are Unix microseconds. Evicted oldest first when the
-- bytes pass rpc_cache_mb.
CREATE TABLE rpc_cache (
	key		BLOB PRIMARY KEY,
	network		TEXT NOT NULL,			-- chain.network, for the operator
	method		TEXT NOT NULL,
	result		BLOB NOT NULL,			-- the JSON of the answer's "result"
	size		INTEGER NOT NULL,
	expires_at	INTEGER NOT NULL,		-- 0: never
	stored_at	INTEGER NOT NULL
);
CREATE INDEX rpc_cache_stored ON rpc_cache(stored_at);

-- Owner: lib/rpc/rpc_cache.c. The size of rpc_cache, kept in the writers' transactions (one row).
CREATE TABLE rpc_cache_size (
	id		INTEGER PRIMARY KEY CHECK (id = 1),
	entries		INTEGER NOT NULL,
	bytes		INTEGER NOT NULL
);
INSERT INTO rpc_cache_size (id, entries, bytes) VALUES (1, 0, 0);
