-- 013: the webhook fences (docs/webhooks.md, "Bounds"): what a webhook and an account may
-- accumulate, counted so that nothing is dropped silently, and a claim that is fair across
-- accounts. Times are Unix seconds; days are Unix seconds / 86400 (UTC).

-- Events recorded per account and UTC day, next to the deliveries of webhook_usage (same owner,
-- lib/webhook/webhook_queue.c): the matcher stops recording past [plan] webhook_events_day.
ALTER TABLE webhook_usage ADD COLUMN recorded INTEGER NOT NULL DEFAULT 0;

-- Owner: lib/webhook/webhook_queue.c. Per webhook and UTC day: the events recorded, those the
-- matcher did not record because the account was past its day's events (dropped_day) or the
-- webhook held its plan's backlog (dropped_backlog), and the undelivered ones that expired
-- after [webhooks] event_ttl_seconds. Shown by `blockport webhook deliveries ID`; pruned with
-- the delivery log.
CREATE TABLE webhook_counts (
	webhook_id	TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	day		INTEGER NOT NULL,
	recorded	INTEGER NOT NULL DEFAULT 0,
	dropped_day	INTEGER NOT NULL DEFAULT 0,
	dropped_backlog	INTEGER NOT NULL DEFAULT 0,
	expired		INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (webhook_id, day)
);

-- Owner: lib/webhook/webhook_queue.c. The pending events of each webhook (its backlog, bounded
-- by [plan] webhook_backlog), kept by every write that adds or ends pending rows, so the
-- matcher reads one row instead of counting the backlog in the indexer's transaction.
CREATE TABLE webhook_backlog (
	webhook_id	TEXT PRIMARY KEY REFERENCES webhooks(id) ON DELETE CASCADE,
	pending		INTEGER NOT NULL
);
INSERT INTO webhook_backlog (webhook_id, pending)
    SELECT webhook_id, count(*) FROM webhook_events WHERE state = 'pending' GROUP BY webhook_id;

-- The fair claim reads each webhook's due rows apart (webhook_id first), and the expiry finds
-- old undelivered rows without reading every pending one. The claim no longer reads all due
-- rows in next_at order, so webhook_events_due goes: each index costs the indexer's
-- transaction a write per recorded event.
DROP INDEX webhook_events_due;
CREATE INDEX webhook_events_hook ON webhook_events(webhook_id, state, next_at);
CREATE INDEX webhook_events_age ON webhook_events(state, created_at);
