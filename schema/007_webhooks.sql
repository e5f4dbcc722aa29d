-- 007: webhooks, their events and the delivery log (docs/webhooks.md). Times are Unix seconds;
-- addresses and hashes lower-case 0x hex.

-- Owner: lib/webhook/webhook.c, the one writer: fcgi/webhooks.c, the admin CLI and the queue's
-- pause after the last retry (bp_webhook_pause) go through it. The signing secret is kept as
-- given out: the worker signs with it.
CREATE TABLE webhooks (
	id		TEXT PRIMARY KEY,		-- wh_ + 24 hex digits
	account_id	INTEGER NOT NULL REFERENCES accounts(id),
	url		TEXT NOT NULL,
	chain		TEXT NOT NULL,			-- as given: "ethereum"
	network		TEXT NOT NULL,			-- the chain key it watches: "ethereum.devnet"
	event_type	TEXT NOT NULL CHECK (event_type IN ('address_activity', 'token_transfer',
			    'nft_transfer', 'mined_transaction', 'log')),
	config		TEXT NOT NULL,			-- the config object, canonical JSON
	secret		TEXT NOT NULL,			-- whsec_ + 64 hex digits
	status		TEXT NOT NULL CHECK (status IN ('active', 'paused', 'disabled')),
	created_at	INTEGER NOT NULL,
	updated_at	INTEGER NOT NULL
);
CREATE INDEX webhooks_account ON webhooks(account_id, created_at);
CREATE INDEX webhooks_network ON webhooks(network, event_type);

-- Owner: lib/webhook/webhook_queue.c, the one writer: the matcher (webhook_match.c, in the
-- indexer's store transaction) records rows and takes back those of a block a reorg removes
-- through it (bp_webhook_queue_add, bp_webhook_queue_drop_block), the token filler
-- (webhook_token.c) completes bodies through it (bp_webhook_queue_complete); it claims, leases,
-- settles and prunes them. Deleting a webhook deletes its rows (ON DELETE CASCADE). One row
-- per (webhook, source): source names the transaction, log or batch item and the direction, so
-- an event is recorded once. body is the whole envelope, fixed when recorded: every attempt
-- sends the same evt_ id and bytes. A row waits until its block is confirmed
-- (index_cursors.confirmed) and its webhook active.
CREATE TABLE webhook_events (
	id		TEXT PRIMARY KEY,		-- evt_ + 24 hex digits
	webhook_id	TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	network		TEXT NOT NULL,
	block_number	INTEGER NOT NULL,
	block_hash	TEXT NOT NULL,
	source		TEXT NOT NULL,
	body		TEXT NOT NULL,
	state		TEXT NOT NULL CHECK (state IN ('pending', 'delivered')),
	attempts	INTEGER NOT NULL DEFAULT 0,	-- attempts since the last resume
	next_at		INTEGER NOT NULL,		-- not tried before
	lease_until	INTEGER NOT NULL DEFAULT 0,	-- claimed by a pass until then
	created_at	INTEGER NOT NULL,
	delivered_at	INTEGER,
	token		TEXT,				-- an ERC-20/721/1155 contract whose symbol and
							-- decimals are filled in before the first attempt
	UNIQUE (webhook_id, source)
);
CREATE INDEX webhook_events_due ON webhook_events(state, next_at);
CREATE INDEX webhook_events_block ON webhook_events(network, block_number);
CREATE INDEX webhook_events_done ON webhook_events(state, delivered_at);
CREATE INDEX webhook_events_leased ON webhook_events(lease_until) WHERE lease_until > 0;

-- Owner: lib/webhook/webhook_queue.c. The delivery log: one row per attempt (`blockport webhook
-- deliveries ID`); pruned with the events.
CREATE TABLE webhook_attempts (
	id		INTEGER PRIMARY KEY,
	webhook_id	TEXT NOT NULL,
	event_id	TEXT NOT NULL,
	attempt		INTEGER NOT NULL,		-- 1 for the first try
	at		INTEGER NOT NULL,
	http_status	INTEGER,			-- NULL when no answer came
	error		TEXT NOT NULL DEFAULT '',
	duration_ms	INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_webhook ON webhook_attempts(webhook_id, id);
CREATE INDEX webhook_attempts_time ON webhook_attempts(at);

-- Owner: lib/webhook/webhook_queue.c. Delivery attempts per account and UTC day ([plan]
-- webhook_deliveries).
CREATE TABLE webhook_usage (
	account_id	INTEGER NOT NULL,
	day		INTEGER NOT NULL,		-- Unix seconds / 86400
	count		INTEGER NOT NULL,
	PRIMARY KEY (account_id, day)
);

-- Owner: lib/webhook/webhook_token.c. Token symbols and decimals read once from the chain (eth_call
-- symbol() and decimals()) for the events' data; NULL when the contract does not answer them.
CREATE TABLE webhook_tokens (
	network		TEXT NOT NULL,
	contract	TEXT NOT NULL,
	symbol		TEXT,
	decimals	INTEGER,
	read_at		INTEGER NOT NULL,
	PRIMARY KEY (network, contract)
);
