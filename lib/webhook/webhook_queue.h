/*
 * The webhook delivery queue (docs/webhooks.md, "Delivery"), the one writer of webhook_events,
 * webhook_attempts and webhook_usage: the events the matcher records (and a reorg takes back),
 * completed with their token's symbol, claimed with a lease, settled after each attempt
 * (delivered, retried after [webhooks] retry_schedule, or the webhook paused after the last
 * retry), counted per account and UTC day against [plan] webhook_deliveries, and pruned. Also
 * the delivery log (webhook_attempts).
 *
 * Crash safety: a claim and its lease commit before anything is sent; an attempt's outcome
 * commits after it. A worker killed in between leaves the row pending with its lease, and the
 * next pass (the worker's pass lock, lib/core/worker.h, means no other pass is running then) takes
 * the lease back and sends the same row, the same evt_ id and bytes, again: at least once.
 */
#ifndef BP_WEBHOOK_QUEUE_H
#define BP_WEBHOOK_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "webhook.h"

struct bp_db;
struct bp_config;

/* One claimed delivery. */
struct bp_webhook_job {
	char		 event_id[32];
	char		 webhook_id[BP_WEBHOOK_ID_MAX];
	int64_t		 account_id;
	char		 url[BP_WEBHOOK_URL_MAX + 1];
	char		 secret[BP_WEBHOOK_SECRET_MAX];
	char		*body;		/* the envelope; owned, bp_webhook_jobs_free frees it */
	size_t		 len;
	int64_t		 attempts;	/* attempts made before this one */
	int		 format_b;	/* a format-B webhook's: its headers and schedule */
	char		 event_type[24];	/* format B: X-Webhook-Event; "" for format A */
};

/* What an attempt came to. */
struct bp_webhook_outcome {
	long		 http_status;	/* 0 when no answer came */
	int		 ok;		/* a 2xx answer */
	char		 error[200];	/* "" when an answer came */
	long		 duration_ms;
	int64_t		 at;		/* Unix seconds the attempt started */
};

/* A matched event, as the matcher records it. */
struct bp_webhook_event {
	const char	*id;		/* evt_ + 24 hex digits */
	const char	*webhook_id;
	const char	*network;	/* the chain key: "ethereum.devnet" */
	int64_t		 block_number;
	const char	*block_hash;
	const char	*source;	/* the transaction, log or item and direction it is of */
	const char	*body;		/* the envelope, sent as it is by every attempt */
	const char	*token;		/* NULL, or a contract whose symbol completes body first */
	int64_t		 now;		/* Unix seconds: created, and due from */
	const char	*event_type;	/* format B's type; NULL for format A */
};

/*
 * Records ev, pending (the matcher, in the indexer's store transaction); a (webhook_id, source)
 * recorded before is left as it is. 1 recorded, 0 it was before, -1 error. The caller counts
 * what it recorded and dropped with bp_webhook_queue_counted.
 */
int	bp_webhook_queue_add(struct bp_db *, const struct bp_webhook_event *ev);

/* The events recorded for account on UTC day (Unix seconds / 86400); -1 on error. */
int64_t	bp_webhook_queue_recorded_today(struct bp_db *, int64_t account_id, int64_t day);
/* The deliveries claimed for account on UTC day (its plan's webhook_deliveries); -1 on error. */
int64_t	bp_webhook_queue_sent_today(struct bp_db *, int64_t account_id, int64_t day);
/* The undelivered events webhook_id holds (its backlog); -1 on error. */
int64_t	bp_webhook_queue_backlog(struct bp_db *, const char *webhook_id);
/*
 * Counts for webhook_id of account on day: recorded events (into the account's day and the
 * webhook's backlog), and those not recorded, past the account's day (dropped_day) or the
 * webhook's backlog (dropped_backlog). 0 or -1.
 */
int	bp_webhook_queue_counted(struct bp_db *, const char *webhook_id, int64_t account_id,
	    int64_t day, int64_t recorded, int64_t dropped_day, int64_t dropped_backlog);

/*
 * Deletes the events of block (number, hash) of network that were never tried (the matcher's
 * rollback, when a reorg takes the block back; delivered ones stay). 0 or -1.
 */
int	bp_webhook_queue_drop_block(struct bp_db *, const char *network, int64_t number,
	    const char *hash);

/* Sets the body of waiting event id to its completed envelope, token filled in. 0 or -1. */
int	bp_webhook_queue_complete(struct bp_db *, const char *id, const char *body);

/*
 * Takes back the leases of passes that died: call at the start of a pass, under the worker's
 * pass lock (no other pass holds one then). 0 or -1.
 */
int	bp_webhook_queue_release(struct bp_db *);

/*
 * Claims up to max due deliveries not leased now: pending, next_at reached, block confirmed,
 * webhook active, account under its day's deliveries; each gets a lease of lease_s seconds and
 * counts against the day. Fair: each webhook with something due gets an equal share of max,
 * and the due events of an account past its day move to its next UTC day. *jobs is an array
 * owned by the caller (bp_webhook_jobs_free). Returns the number claimed, or -1 on a database
 * error.
 */
int	bp_webhook_queue_claim(struct bp_db *, const struct bp_config *, int64_t now,
	    int64_t lease_s, size_t max, struct bp_webhook_job **jobs);
void	bp_webhook_jobs_free(struct bp_webhook_job *, size_t n);

/*
 * Records the outcomes of jobs[0..n) in one transaction: an attempts row each; a 2xx marks
 * the event delivered; a failure schedules the next retry, or after the last retry pauses the
 * webhook and holds the event for its resume (attempts start again from 0). paused gets the
 * ids of the webhooks paused now (room for n; may repeat none), *npaused their count. now_ms
 * is the clock (Unix milliseconds), as claim's now. 0 or -1.
 */
int	bp_webhook_queue_settle(struct bp_db *, const struct bp_config *, int64_t now_ms,
	    const struct bp_webhook_job *jobs, const struct bp_webhook_outcome *out, size_t n,
	    char (*paused)[BP_WEBHOOK_ID_MAX], size_t *npaused);

/* Appends one attempts row (the CLI's test event). 0 or -1. */
int	bp_webhook_queue_log(struct bp_db *, const char *webhook_id, const char *event_id,
	    int64_t attempt, const struct bp_webhook_outcome *);

/*
 * Deletes delivered events and attempts older than retention_s seconds, and expires the
 * undelivered events older than ttl_s (counted per webhook as expired). Rows or -1.
 */
int	bp_webhook_queue_prune(struct bp_db *, int64_t now, int64_t retention_s, int64_t ttl_s);

/*
 * Appends a webhook's counts per UTC day as text lines (day, recorded, dropped past the day's
 * events, dropped past the backlog, expired), newest first: `blockport webhook deliveries ID`.
 * 0 or -1.
 */
int	bp_webhook_queue_counts(struct bp_db *, const char *webhook_id, struct bp_buf *out);

/*
 * Appends the latest limit attempts of a webhook as text lines (time, evt_ id, attempt,
 * status or error, duration): `blockport webhook deliveries ID`. 0 or -1.
 */
int	bp_webhook_queue_attempts(struct bp_db *, const char *webhook_id, int64_t limit,
	    struct bp_buf *out);

/*
 * Delivers events of webhook_id again (POST /v1/webhooks/{id}/replay): the n events ids, or
 * with ids NULL those created at or after since (Unix seconds), at most max of them (0: any
 * number). Each delivered or failed one is pending again, attempts 0, due at now: the same
 * evt_ id and bytes, new attempts (pending ones are due anyway). Returns the number replayed;
 * -2 when ids[*missing] is not an event of the webhook (gone past the retention, or never);
 * -3 when more than max events are since then; -1 on a database error. Nothing is written
 * unless all is.
 */
int	bp_webhook_queue_replay(struct bp_db *, const char *webhook_id, int64_t since,
	    const char *const *ids, size_t n, int64_t max, int64_t now, size_t *missing);

/* The e-mail of the account that owns webhook id into out; 1, 0 none, -1 error. */
int	bp_webhook_owner_email(struct bp_db *, const char *id, char *out, size_t cap);

struct bp_buf;
/*
 * /metrics: events waiting for delivery, and delivery attempts made (the id of the last one:
 * attempts are numbered in order and only old ones are pruned). A bp_metrics_source.
 */
int	bp_webhook_queue_metrics(struct bp_db *, const struct bp_config *, struct bp_buf *);

#endif
