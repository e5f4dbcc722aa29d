-- 016: format-B webhooks (SPEC.md section 6, docs/webhooks.md "Format B"): several upper-case
-- event types per webhook, filters, their own retry schedule that ends an event as failed.

-- A format-B webhook lists its types here, comma-separated upper-case names
-- ("ADDRESS_ACTIVITY,TOKEN_TRANSFER"); NULL for a format-A webhook. event_type (007's CHECK
-- allows format A's names only, and a CHECK cannot change without rebuilding the table, which
-- its events' ON DELETE CASCADE forbids) holds 'log' for them and is not read; config holds
-- the filters' canonical JSON. Written by lib/webhook/webhook.c, the table's owner.
ALTER TABLE webhooks ADD COLUMN event_types TEXT;

-- webhook_events gains the state 'failed' (a format-B event after its last retry: kept, not
-- sent again, its webhook still active) and event_type (format B's type of this event, for
-- X-Webhook-Event; NULL for format A). No table refers to webhook_events, so it is rebuilt
-- with the new CHECK, its rows and indexes as they were (007, 013).
ALTER TABLE webhook_events RENAME TO webhook_events_007;

-- Owner: lib/webhook/webhook_queue.c (as in 007: the matcher records, the token filler
-- completes through it; it claims, leases, settles, fails and prunes).
CREATE TABLE webhook_events (
	id		TEXT PRIMARY KEY,		-- evt_ + 24 hex digits
	webhook_id	TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	network		TEXT NOT NULL,
	block_number	INTEGER NOT NULL,
	block_hash	TEXT NOT NULL,
	source		TEXT NOT NULL,
	body		TEXT NOT NULL,
	state		TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts	INTEGER NOT NULL DEFAULT 0,	-- attempts since the last resume
	next_at		INTEGER NOT NULL,		-- not tried before
	lease_until	INTEGER NOT NULL DEFAULT 0,	-- claimed by a pass until then
	created_at	INTEGER NOT NULL,
	delivered_at	INTEGER,			-- delivered, or failed (format B), then
	token		TEXT,				-- a contract whose symbol and decimals are
							-- filled in before the first attempt
	event_type	TEXT,				-- format B: ADDRESS_ACTIVITY ...; NULL: A
	UNIQUE (webhook_id, source)
);
INSERT INTO webhook_events (id, webhook_id, network, block_number, block_hash, source, body,
    state, attempts, next_at, lease_until, created_at, delivered_at, token)
    SELECT id, webhook_id, network, block_number, block_hash, source, body, state, attempts,
    next_at, lease_until, created_at, delivered_at, token FROM webhook_events_007;
DROP TABLE webhook_events_007;
CREATE INDEX webhook_events_block ON webhook_events(network, block_number);
CREATE INDEX webhook_events_done ON webhook_events(state, delivered_at);
CREATE INDEX webhook_events_leased ON webhook_events(lease_until) WHERE lease_until > 0;
CREATE INDEX webhook_events_hook ON webhook_events(webhook_id, state, next_at);
CREATE INDEX webhook_events_age ON webhook_events(state, created_at);
