/*
 * The webhook delivery queue (webhook_queue.h, docs/webhooks.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/account.h"
#include "core/config.h"
#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "index/index_read.h"
#include "webhook_queue.h"

#define DAY	86400
#define ACCOUNTS_MAX	256	/* accounts whose day counts one claim keeps */
#define NETWORKS_MAX	BP_MAX_NETWORKS	/* networks whose confirmed head one claim keeps */

void
bp_webhook_jobs_free(struct bp_webhook_job *jobs, size_t n)
{
	size_t i;

	for (i = 0; jobs != NULL && i < n; i++)
		free(jobs[i].body);
	free(jobs);
}

int
bp_webhook_queue_add(struct bp_db *db, const struct bp_webhook_event *ev)
{
	/* A (webhook, source) recorded before is left alone: the envelope sent is the first. */
	static const char sql[] = "INSERT INTO webhook_events (id, webhook_id, network,"
	    " block_number, block_hash, source, body, state, next_at, created_at, token,"
	    " event_type) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)"
	    " ON CONFLICT (webhook_id, source) DO NOTHING";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, ev->id);
	bp_stmt_text(st, 2, ev->webhook_id);
	bp_stmt_text(st, 3, ev->network);
	bp_stmt_int(st, 4, ev->block_number);
	bp_stmt_text(st, 5, ev->block_hash);
	bp_stmt_text(st, 6, ev->source);
	bp_stmt_text(st, 7, ev->body);
	bp_stmt_int(st, 8, ev->now);
	bp_stmt_int(st, 9, ev->now);
	bp_stmt_text(st, 10, ev->token);
	bp_stmt_text(st, 11, ev->event_type);
	return bp_stmt_run(st) == -1 ? -1 : bp_db_changes(db) > 0;
}

/* Adds n (negative: takes) to the backlog of webhook_id. 0 or -1. */
static int
backlog_add(struct bp_db *db, const char *webhook_id, int64_t n)
{
	static const char sql[] = "INSERT INTO webhook_backlog (webhook_id, pending) VALUES (?, ?)"
	    " ON CONFLICT (webhook_id) DO UPDATE SET"
	    " pending = webhook_backlog.pending + excluded.pending";
	struct bp_stmt *st;

	if (n == 0)
		return 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, webhook_id);
	bp_stmt_int(st, 2, n);
	return bp_stmt_run(st);
}

/* Adds to the day's counts of webhook_id (webhook_counts). 0 or -1. */
static int
counts_add(struct bp_db *db, const char *webhook_id, int64_t day, int64_t recorded,
    int64_t dropped_day, int64_t dropped_backlog, int64_t expired)
{
	static const char sql[] = "INSERT INTO webhook_counts (webhook_id, day, recorded,"
	    " dropped_day, dropped_backlog, expired) VALUES (?, ?, ?, ?, ?, ?)"
	    " ON CONFLICT (webhook_id, day) DO UPDATE SET"
	    " recorded = webhook_counts.recorded + excluded.recorded,"
	    " dropped_day = webhook_counts.dropped_day + excluded.dropped_day,"
	    " dropped_backlog = webhook_counts.dropped_backlog + excluded.dropped_backlog,"
	    " expired = webhook_counts.expired + excluded.expired";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, webhook_id);
	bp_stmt_int(st, 2, day);
	bp_stmt_int(st, 3, recorded);
	bp_stmt_int(st, 4, dropped_day);
	bp_stmt_int(st, 5, dropped_backlog);
	bp_stmt_int(st, 6, expired);
	return bp_stmt_run(st);
}

int
bp_webhook_queue_counted(struct bp_db *db, const char *webhook_id, int64_t account_id,
    int64_t day, int64_t recorded, int64_t dropped_day, int64_t dropped_backlog)
{
	static const char sql[] = "INSERT INTO webhook_usage (account_id, day, count, recorded)"
	    " VALUES (?, ?, 0, ?) ON CONFLICT (account_id, day) DO UPDATE SET"
	    " recorded = webhook_usage.recorded + excluded.recorded";
	struct bp_stmt *st;

	if (recorded == 0 && dropped_day == 0 && dropped_backlog == 0)
		return 0;
	if (counts_add(db, webhook_id, day, recorded, dropped_day, dropped_backlog, 0) == -1 ||
	    backlog_add(db, webhook_id, recorded) == -1)
		return -1;
	if (recorded == 0)
		return 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account_id);
	bp_stmt_int(st, 2, day);
	bp_stmt_int(st, 3, recorded);
	return bp_stmt_run(st);
}

int
bp_webhook_queue_drop_block(struct bp_db *db, const char *network, int64_t number,
    const char *hash)
{
	/* Only what was never tried: a delivered event cannot be taken back. */
	static const char sql[] = "DELETE FROM webhook_events WHERE network = ? AND"
	    " block_number = ? AND block_hash = ? AND state = 'pending' AND attempts = 0";
	/* The backlogs lose the rows the DELETE takes, in the same (the store's) transaction. */
	static const char sql_backlog[] = "UPDATE webhook_backlog SET pending = pending -"
	    " (SELECT count(*) FROM webhook_events e WHERE e.webhook_id = webhook_backlog.webhook_id"
	    " AND e.network = ?1 AND e.block_number = ?2 AND e.block_hash = ?3"
	    " AND e.state = 'pending' AND e.attempts = 0)"
	    " WHERE webhook_id IN (SELECT webhook_id FROM webhook_events WHERE network = ?1 AND"
	    " block_number = ?2 AND block_hash = ?3 AND state = 'pending' AND attempts = 0)";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql_backlog)) == NULL)
		return -1;
	bp_stmt_text(st, 1, network);
	bp_stmt_int(st, 2, number);
	bp_stmt_text(st, 3, hash);
	if (bp_stmt_run(st) == -1 || (st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, network);
	bp_stmt_int(st, 2, number);
	bp_stmt_text(st, 3, hash);
	return bp_stmt_run(st);
}

int
bp_webhook_queue_complete(struct bp_db *db, const char *id, const char *body)
{
	static const char sql[] = "UPDATE webhook_events SET body = ?, token = NULL WHERE id = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, body);
	bp_stmt_text(st, 2, id);
	return bp_stmt_run(st);
}

int
bp_webhook_queue_release(struct bp_db *db)
{
	static const char sql[] = "UPDATE webhook_events SET lease_until = 0"
	    " WHERE lease_until > 0";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	return bp_stmt_run(st);
}

/* An account's deliveries today, and its plan's cap, kept for one claim. */
struct quota {
	int64_t	account_id;
	int64_t	used, cap;	/* cap 0: none */
};

static int
usage_add(struct bp_db *db, int64_t account_id, int64_t day, int64_t n)
{
	static const char sql[] = "INSERT INTO webhook_usage (account_id, day, count)"
	    " VALUES (?, ?, ?) ON CONFLICT (account_id, day) DO UPDATE SET"
	    " count = webhook_usage.count + excluded.count";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account_id);
	bp_stmt_int(st, 2, day);
	bp_stmt_int(st, 3, n);
	return bp_stmt_run(st);
}

/*
 * The quota of account: found in q[0..*nq) or added, its plan read once per claim through the
 * owner of accounts (lib/core/account.c). NULL when q is full or on a database error.
 */
static struct quota *
quota_of(struct bp_db *db, const struct bp_config *cfg, struct quota *q, size_t *nq,
    int64_t account_id, int64_t day)
{
	const struct bp_plan *p;
	struct bp_account a;
	size_t i;

	for (i = 0; i < *nq; i++)
		if (q[i].account_id == account_id)
			return &q[i];
	if (*nq == ACCOUNTS_MAX)
		return NULL;
	if (bp_account_get(db, account_id, &a) == -1)
		return NULL;
	p = bp_config_plan(cfg, a.plan);
	q[*nq].account_id = account_id;
	q[*nq].cap = p != NULL ? p->webhook_deliveries : 0;
	if ((q[*nq].used = bp_webhook_queue_sent_today(db, account_id, day)) < 0)
		return NULL;
	return &q[(*nq)++];
}

/* A network's last confirmed block, as one claim read it. */
struct final {
	char	network[BP_WEBHOOK_NETKEY_MAX];
	int64_t	confirmed;
};

/*
 * The last confirmed block of network into *out (-1 while the network is not indexed), read
 * through the index's reader the first time a claim meets the network and kept in f[0..*nf)
 * for the rest of the claim. 0 or -1.
 */
static int
final_of(struct bp_db *db, struct final *f, size_t *nf, const char *network, int64_t *out)
{
	struct bp_index_head h;
	size_t i;

	for (i = 0; i < *nf; i++)
		if (strcmp(f[i].network, network) == 0) {
			*out = f[i].confirmed;
			return 0;
		}
	if (bp_index_get_head(db, network, &h) == -1)
		return -1;
	*out = h.confirmed;
	/* Past NETWORKS_MAX (networks no longer configured) each row reads its cursor again. */
	if (*nf < NETWORKS_MAX &&
	    bp_strlcpy(f[*nf].network, network, sizeof(f[*nf].network)) == 0)
		f[(*nf)++].confirmed = h.confirmed;
	return 0;
}

/* A webhook with due events, as one claim found it. */
struct due {
	char	id[BP_WEBHOOK_ID_MAX];
	char	network[BP_WEBHOOK_NETKEY_MAX];
	int64_t	account_id;
	char	*url, *secret;		/* owned */
	int	more;			/* its last share was full: it may have more */
	int	format_b;
};

static void
dues_free(struct due *d, size_t n)
{
	size_t i;

	for (i = 0; d != NULL && i < n; i++) {
		free(d[i].url);
		free(d[i].secret);
	}
	free(d);
}

/*
 * The active webhooks with a pending event due by now into *out (owned), *n of them. One
 * index probe per active webhook (webhook_events_hook), however long their backlogs. 0 or -1.
 */
static int
dues_load(struct bp_db *db, int64_t now, struct due **out, size_t *n)
{
	static const char sql[] = "SELECT w.id, w.network, w.account_id, w.url, w.secret,"
	    " w.event_types IS NOT NULL FROM webhooks w WHERE w.status = 'active'"
	    " AND EXISTS (SELECT 1 FROM webhook_events e"
	    " WHERE e.webhook_id = w.id AND e.state = 'pending' AND e.next_at <= ?1)";
	struct due *d = NULL, *dd;
	struct bp_stmt *st;
	enum bp_db_step step;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, now);
	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((dd = realloc(d, cap * sizeof(*d))) == NULL) {
				step = BP_DB_ERROR;
				break;
			}
			d = dd;
		}
		dd = &d[*n];
		memset(dd, 0, sizeof(*dd));
		(*n)++;
		bp_strlcpy(dd->id, bp_col_text(st, 0), sizeof(dd->id));
		bp_strlcpy(dd->network, bp_col_text(st, 1), sizeof(dd->network));
		dd->account_id = bp_col_int(st, 2);
		dd->format_b = bp_col_int(st, 5) != 0;
		if ((dd->url = strdup(bp_col_text(st, 3))) == NULL ||
		    (dd->secret = strdup(bp_col_text(st, 4))) == NULL) {
			step = BP_DB_ERROR;
			break;
		}
	}
	bp_stmt_reset(st);
	if (step != BP_DB_DONE) {
		dues_free(d, *n);
		*n = 0;
		return -1;
	}
	*out = d;
	return 0;
}

/*
 * Moves the pending events of account that are due before its next UTC day (at) to it: past
 * its day's deliveries they wait there, out of the due set, and no claim reads them again
 * today. A retry due later keeps its time. 0 or -1.
 */
static int
defer_account(struct bp_db *db, int64_t account_id, int64_t at)
{
	static const char sql[] = "UPDATE webhook_events SET next_at = ?1 WHERE state = 'pending'"
	    " AND next_at < ?1 AND webhook_id IN (SELECT id FROM webhooks WHERE account_id = ?2)";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, at);
	bp_stmt_int(st, 2, account_id);
	return bp_stmt_run(st);
}

/*
 * Claims up to want due rows of webhook d (block confirmed, not leased, token filled) into
 * j[*n..], leased until lease_until, in one statement: the lease is set as the rows are read
 * (before, a SELECT and then an UPDATE a row: on PostgreSQL three round trips each, the
 * savepoint included). The number claimed, or -1.
 */
static int
claim_hook(struct bp_db *db, const struct due *d, int64_t now, int64_t confirmed,
    int64_t lease_until, size_t want, struct bp_webhook_job *j, size_t *n)
{
	static const char sql[] = "UPDATE webhook_events SET lease_until = ?6 WHERE id IN"
	    " (SELECT id FROM webhook_events WHERE webhook_id = ?1 AND state = 'pending'"
	    " AND next_at <= ?2 AND lease_until <= ?2 AND token IS NULL AND block_number <= ?3"
	    " AND network = ?5 ORDER BY next_at LIMIT ?4)"
	    " RETURNING id, body, attempts, event_type";
	struct bp_webhook_job *jj;
	struct bp_stmt *st;
	enum bp_db_step step;
	size_t first = *n;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, d->id);
	bp_stmt_int(st, 2, now);
	bp_stmt_int(st, 3, confirmed);
	bp_stmt_int(st, 4, (int64_t)want);
	bp_stmt_text(st, 5, d->network);
	bp_stmt_int(st, 6, lease_until);
	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		jj = &j[*n];
		bp_strlcpy(jj->event_id, bp_col_text(st, 0), sizeof(jj->event_id));
		bp_strlcpy(jj->webhook_id, d->id, sizeof(jj->webhook_id));
		jj->account_id = d->account_id;
		bp_strlcpy(jj->url, d->url, sizeof(jj->url));
		bp_strlcpy(jj->secret, d->secret, sizeof(jj->secret));
		jj->attempts = bp_col_int(st, 2);
		jj->format_b = d->format_b;
		bp_strlcpy(jj->event_type, bp_col_is_null(st, 3) ? "" : bp_col_text(st, 3),
		    sizeof(jj->event_type));
		if ((jj->body = strdup(bp_col_text(st, 1))) == NULL) {
			step = BP_DB_ERROR;
			break;
		}
		jj->len = strlen(jj->body);
		(*n)++;
	}
	bp_stmt_reset(st);
	if (step == BP_DB_ERROR)
		return -1;
	return (int)(*n - first);
}

int
bp_webhook_queue_claim(struct bp_db *db, const struct bp_config *cfg, int64_t now,
    int64_t lease_s, size_t max, struct bp_webhook_job **jobs)
{
	/*
	 * Fair across webhooks and accounts: the claim first finds the active webhooks with
	 * something due (one index probe each), then takes rounds over them, each webhook at most
	 * an equal share of the free slots a round, starting at a random one so that the first
	 * are not always served first. So a webhook with a backlog of millions takes its share and
	 * never the others' (before, the claim read the oldest due rows of all webhooks and a
	 * backlog filled every claim). An account past its day's deliveries has its due events
	 * moved to its next UTC day (defer_account), out of the due set, instead of being read
	 * and passed over by every claim until then. Whether a row's block is final is asked of
	 * the index's reader once per network and claim (final_of), in the claim's transaction.
	 */
	struct quota q[ACCOUNTS_MAX], *qa;
	struct final f[NETWORKS_MAX];
	struct bp_webhook_job *j = NULL;
	struct due *d = NULL;
	size_t n = 0, nq = 0, nf = 0, nd = 0, i, k, want, active;
	uint32_t rnd = 0;
	int64_t day = now / DAY, confirmed;
	int got, more = 1;

	*jobs = NULL;
	if (max == 0)
		return 0;
	if ((j = calloc(max, sizeof(*j))) == NULL)
		return -1;
	if (bp_db_begin(db) == -1) {
		free(j);
		return -1;
	}
	if (dues_load(db, now, &d, &nd) == -1)
		goto fail;
	for (i = 0; i < nd; i++)
		d[i].more = 1;
	(void)bp_random(&rnd, sizeof(rnd));
	while (n < max && more) {
		more = 0;
		for (i = 0, active = 0; i < nd; i++)
			active += d[i].more;
		if (active == 0)
			break;
		for (k = 0; k < nd && n < max; k++) {
			struct due *dd = &d[(rnd + k) % nd];

			if (!dd->more)
				continue;
			dd->more = 0;
			if ((qa = quota_of(db, cfg, q, &nq, dd->account_id, day)) == NULL)
				continue;	/* more accounts than one claim keeps: the next claim */
			if (qa->cap > 0 && qa->used >= qa->cap) {
				if (defer_account(db, dd->account_id, (day + 1) * DAY) == -1)
					goto fail;
				continue;
			}
			if (final_of(db, f, &nf, dd->network, &confirmed) == -1)
				goto fail;
			/* An equal share of what is left, rounded up, within the account's day. */
			want = (max - n + active - 1) / active;
			if (qa->cap > 0 && (int64_t)want > qa->cap - qa->used)
				want = (size_t)(qa->cap - qa->used);
			if ((got = claim_hook(db, dd, now, confirmed, now + lease_s, want, j, &n)) == -1)
				goto fail;
			qa->used += got;
			if ((size_t)got == want)
				dd->more = more = 1;
		}
	}
	for (i = 0; i < nq; i++) {
		int64_t mine = 0;

		for (k = 0; k < n; k++)
			mine += j[k].account_id == q[i].account_id;
		if (mine > 0 && usage_add(db, q[i].account_id, day, mine) == -1)
			goto fail;
	}
	if (bp_db_commit(db) == -1)
		goto fail;
	dues_free(d, nd);
	*jobs = j;
	return (int)n;
fail:
	bp_db_rollback(db);
	dues_free(d, nd);
	bp_webhook_jobs_free(j, n);
	return -1;
}

int
bp_webhook_queue_log(struct bp_db *db, const char *webhook_id, const char *event_id,
    int64_t attempt, const struct bp_webhook_outcome *o)
{
	static const char sql[] = "INSERT INTO webhook_attempts (webhook_id, event_id, attempt,"
	    " at, http_status, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?)";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, webhook_id);
	bp_stmt_text(st, 2, event_id);
	bp_stmt_int(st, 3, attempt);
	bp_stmt_int(st, 4, o->at);
	if (o->http_status > 0)
		bp_stmt_int(st, 5, o->http_status);
	else
		bp_stmt_null(st, 5);
	bp_stmt_text(st, 6, o->error);
	bp_stmt_int(st, 7, o->duration_ms);
	return bp_stmt_run(st);
}

/* Sets an event's state after an attempt: "pending", "delivered" or "failed" (ended then). */
static int
event_set(struct bp_db *db, const char *id, const char *state, int64_t attempts,
    int64_t next_at, int64_t now)
{
	int ended = strcmp(state, "pending") != 0;

	static const char sql[] = "UPDATE webhook_events SET state = ?, attempts = ?,"
	    " next_at = ?, lease_until = 0, delivered_at = ? WHERE id = ?";
	/* lease_until = 0 also leaves the partial index webhook_events_leased. */
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, state);
	bp_stmt_int(st, 2, attempts);
	bp_stmt_int(st, 3, next_at);
	if (ended)
		bp_stmt_int(st, 4, now);
	else
		bp_stmt_null(st, 4);
	bp_stmt_text(st, 5, id);
	return bp_stmt_run(st);
}

/*
 * Settling writes a few statements a batch, not a few an event (on PostgreSQL each one is a
 * round trip, three under the savepoint an INSERT or UPDATE takes in a transaction): the
 * attempts rows in one INSERT, the delivered events in one UPDATE, each webhook's backlog once.
 * The statements have SETTLE_ROWS slots (bp_db_stmt caches a statement by its text): the
 * slots a batch does not fill are bound NULL, which no row matches.
 */
#define SETTLE_ROWS	64
#define Q2	"?, ?"
#define Q8	Q2 ", " Q2 ", " Q2 ", " Q2
#define Q32	Q8 ", " Q8 ", " Q8 ", " Q8
#define ATT_COLS	"webhook_id, event_id, attempt, at, http_status, error, duration_ms"
/* Typed, so that PostgreSQL knows each parameter of the UNION. */
#define ATT_ROW		" UNION ALL SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT)," \
			" CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS BIGINT)"
#define ATT_ROW4	ATT_ROW ATT_ROW ATT_ROW ATT_ROW
#define ATT_ROW16	ATT_ROW4 ATT_ROW4 ATT_ROW4 ATT_ROW4
#define ATT_ROW63	ATT_ROW16 ATT_ROW16 ATT_ROW16 ATT_ROW4 ATT_ROW4 ATT_ROW4 ATT_ROW ATT_ROW ATT_ROW

/* The attempts rows of jobs[0..n) (n <= SETTLE_ROWS), in one statement. 0 or -1. */
static int
log_batch(struct bp_db *db, const struct bp_webhook_job *jobs,
    const struct bp_webhook_outcome *out, size_t n)
{
	static const char sql[] = "INSERT INTO webhook_attempts (" ATT_COLS ") SELECT " ATT_COLS
	    " FROM (SELECT CAST(? AS TEXT) AS webhook_id, CAST(? AS TEXT) AS event_id,"
	    " CAST(? AS BIGINT) AS attempt, CAST(? AS BIGINT) AS at, CAST(? AS BIGINT) AS"
	    " http_status, CAST(? AS TEXT) AS error, CAST(? AS BIGINT) AS duration_ms" ATT_ROW63
	    ") AS v WHERE event_id IS NOT NULL";
	struct bp_stmt *st;
	size_t i;
	int c;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		c = (int)i * 7;
		bp_stmt_text(st, c + 1, jobs[i].webhook_id);
		bp_stmt_text(st, c + 2, jobs[i].event_id);
		bp_stmt_int(st, c + 3, jobs[i].attempts + 1);
		bp_stmt_int(st, c + 4, out[i].at);
		if (out[i].http_status > 0)
			bp_stmt_int(st, c + 5, out[i].http_status);
		bp_stmt_text(st, c + 6, out[i].error);
		bp_stmt_int(st, c + 7, out[i].duration_ms);
	}
	return bp_stmt_run(st);
}

/* Marks the acknowledged events of jobs[0..n) (n <= SETTLE_ROWS) delivered at now. 0 or -1. */
static int
delivered_batch(struct bp_db *db, const struct bp_webhook_job *jobs,
    const struct bp_webhook_outcome *out, size_t n, int64_t now)
{
	/* A leased row is this pass's alone: attempts + 1 is the attempt made. */
	static const char sql[] = "UPDATE webhook_events SET state = 'delivered',"
	    " attempts = attempts + 1, next_at = ?1, lease_until = 0, delivered_at = ?1"
	    " WHERE id IN (" Q32 ", " Q32 ")";
	struct bp_stmt *st;
	size_t i;
	int k = 0;

	for (i = 0; i < n; i++)
		k += out[i].ok != 0;
	if (k == 0)
		return 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, now);
	for (i = 0, k = 2; i < n; i++)
		if (out[i].ok)
			bp_stmt_text(st, k++, jobs[i].event_id);
	return bp_stmt_run(st);
}

/* A webhook's events that left the backlog in one settle. */
struct gone {
	const char	*webhook_id;
	int64_t		 n;
};

/* Counts one event of webhook_id out of the backlog in g[0..*ng) (room for SETTLE_ROWS). */
static void
gone_add(struct gone *g, size_t *ng, const char *webhook_id)
{
	size_t i;

	for (i = 0; i < *ng; i++)
		if (strcmp(g[i].webhook_id, webhook_id) == 0) {
			g[i].n++;
			return;
		}
	g[*ng].webhook_id = webhook_id;
	g[(*ng)++].n = 1;
}

/* A failed attempt: the next retry, or the end (format B failed, format A paused). 0 or -1. */
static int
settle_failed(struct bp_db *db, const struct bp_webhooks_config *w, int64_t now_ms,
    const struct bp_webhook_job *job, struct gone *g, size_t *ng,
    char (*paused)[BP_WEBHOOK_ID_MAX], size_t *npaused)
{
	int64_t now = now_ms / 1000, k = job->attempts + 1, next;
	const int64_t *retry;
	size_t nretry;
	int p;

	/* Each format its own schedule (SPEC.md section 6). */
	retry = job->format_b ? w->retry_b : w->retry;
	nretry = job->format_b ? w->nretry_b : w->nretry;
	if ((size_t)k <= nretry) {
		/* Rounded up to the second, so the gap is never shorter than the step. */
		next = (now_ms + retry[k - 1] * 1000 + 999) / 1000;
		return event_set(db, job->event_id, "pending", k, next, now);
	}
	if (job->format_b) {
		/*
		 * Format B: after the last retry the event is failed, kept for the log and a
		 * replay; the webhook stays active and its other events go on.
		 */
		gone_add(g, ng, job->webhook_id);
		return event_set(db, job->event_id, "failed", k, now, now);
	}
	/* The last retry failed: pause, and hold the event for the resume. */
	if ((p = bp_webhook_pause(db, job->webhook_id, now)) == -1 ||
	    event_set(db, job->event_id, "pending", 0, now, now) == -1)
		return -1;
	if (p == 1)
		bp_strlcpy(paused[(*npaused)++], job->webhook_id, BP_WEBHOOK_ID_MAX);
	return 0;
}

int
bp_webhook_queue_settle(struct bp_db *db, const struct bp_config *cfg, int64_t now_ms,
    const struct bp_webhook_job *jobs, const struct bp_webhook_outcome *out, size_t n,
    char (*paused)[BP_WEBHOOK_ID_MAX], size_t *npaused)
{
	struct gone g[SETTLE_ROWS];
	int64_t now = now_ms / 1000;
	size_t at, m, ng, i;

	*npaused = 0;
	if (n == 0)
		return 0;
	if (bp_db_begin(db) == -1)
		return -1;
	for (at = 0; at < n; at += m) {
		m = n - at < SETTLE_ROWS ? n - at : SETTLE_ROWS;
		ng = 0;
		if (log_batch(db, jobs + at, out + at, m) == -1 ||
		    delivered_batch(db, jobs + at, out + at, m, now) == -1)
			goto fail;
		for (i = at; i < at + m; i++) {
			/* Delivered leaves the backlog the plan bounds. */
			if (out[i].ok)
				gone_add(g, &ng, jobs[i].webhook_id);
			else if (settle_failed(db, &cfg->webhooks, now_ms, &jobs[i], g, &ng,
			    paused, npaused) == -1)
				goto fail;
		}
		for (i = 0; i < ng; i++)
			if (backlog_add(db, g[i].webhook_id, -g[i].n) == -1)
				goto fail;
	}
	if (bp_db_commit(db) == -1)
		goto fail;
	return 0;
fail:
	bp_db_rollback(db);
	*npaused = 0;
	return -1;
}

/* Runs the DELETE sql with ?1 bound to before; the rows it deleted, or -1. */
static int
delete_before(struct bp_db *db, const char *sql, int64_t before)
{
	struct bp_stmt *st;
	int n;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, before);
	n = bp_stmt_step(st) == BP_DB_DONE ? bp_db_changes(db) : -1;
	bp_stmt_reset(st);
	return n;
}

/*
 * Expires the undelivered events recorded before before and not due since (next_at: a replay
 * or a retry makes an old event due again, and it has the ttl from then): each webhook's count
 * goes to its expired column of today and leaves its backlog, then the rows go, in one
 * transaction. The rows expired, or -1.
 */
static int
expire(struct bp_db *db, int64_t now, int64_t before)
{
	static const char sql_by[] = "SELECT webhook_id, count(*) FROM webhook_events"
	    " WHERE state = 'pending' AND created_at < ?1 AND next_at < ?1 GROUP BY webhook_id";
	static const char sql_del[] = "DELETE FROM webhook_events WHERE state = 'pending'"
	    " AND created_at < ?1 AND next_at < ?1";
	struct bp_stmt *st;
	enum bp_db_step step = BP_DB_ERROR;
	char id[BP_WEBHOOK_ID_MAX];
	int64_t c;
	int n = 0;

	if (bp_db_begin(db) == -1)
		return -1;
	if ((st = bp_db_stmt(db, sql_by)) == NULL)
		goto fail;
	bp_stmt_int(st, 1, before);
	/* SQLite reads the grouped rows before the first comes back, so writing here is safe. */
	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		bp_strlcpy(id, bp_col_text(st, 0), sizeof(id));
		c = bp_col_int(st, 1);
		if (counts_add(db, id, now / DAY, 0, 0, 0, c) == -1 ||
		    backlog_add(db, id, -c) == -1) {
			step = BP_DB_ERROR;
			break;
		}
		n += (int)c;
	}
	bp_stmt_reset(st);
	if (step != BP_DB_DONE || (n > 0 && delete_before(db, sql_del, before) < 0) ||
	    bp_db_commit(db) == -1)
		goto fail;
	return n;
fail:
	bp_db_rollback(db);
	return -1;
}

int
bp_webhook_queue_prune(struct bp_db *db, int64_t now, int64_t retention_s, int64_t ttl_s)
{
	static const char sql_ev[] = "DELETE FROM webhook_events WHERE state IN ('delivered',"
	    " 'failed') AND delivered_at < ?";
	static const char sql_at[] = "DELETE FROM webhook_attempts WHERE at < ?";
	static const char sql_use[] = "DELETE FROM webhook_usage WHERE day < ?";
	static const char sql_cnt[] = "DELETE FROM webhook_counts WHERE day < ?";
	int ev, at, ex;

	if ((ex = expire(db, now, now - ttl_s)) < 0 ||
	    (ev = delete_before(db, sql_ev, now - retention_s)) < 0 ||
	    (at = delete_before(db, sql_at, now - retention_s)) < 0 ||
	    delete_before(db, sql_use, now / DAY - 2) < 0 ||
	    delete_before(db, sql_cnt, (now - retention_s) / DAY) < 0)
		return -1;
	return ev + at + ex;
}

int
bp_webhook_queue_replay(struct bp_db *db, const char *webhook_id, int64_t since,
    const char *const *ids, size_t n, int64_t max, int64_t now, size_t *missing)
{
	/*
	 * Back to pending, attempts 0, due now: the same row, evt_ id and bytes, new attempts.
	 * Rows still pending are due anyway and left alone. What is replayed is counted in the
	 * bounds (below) first and written after, in one transaction: all or nothing.
	 */
	static const char sql_n[] = "SELECT count(*) FROM webhook_events WHERE webhook_id = ?"
	    " AND state <> 'pending' AND created_at >= ?";
	static const char sql_has[] = "SELECT 1 FROM webhook_events WHERE webhook_id = ? AND id = ?";
	static const char sql_since[] = "UPDATE webhook_events SET state = 'pending', attempts = 0,"
	    " next_at = ?, lease_until = 0, delivered_at = NULL WHERE webhook_id = ?"
	    " AND state <> 'pending' AND created_at >= ?";
	static const char sql_id[] = "UPDATE webhook_events SET state = 'pending', attempts = 0,"
	    " next_at = ?, lease_until = 0, delivered_at = NULL WHERE webhook_id = ?"
	    " AND state <> 'pending' AND id = ?";
	struct bp_stmt *st;
	int64_t count = 0, done = 0;
	size_t i;

	*missing = n;
	if (bp_db_begin(db) == -1)
		return -1;
	for (i = 0; ids != NULL && i < n; i++) {
		if ((st = bp_db_stmt(db, sql_has)) == NULL)
			goto fail;
		bp_stmt_text(st, 1, webhook_id);
		bp_stmt_text(st, 2, ids[i]);
		count = bp_stmt_step(st) == BP_DB_ROW;
		bp_stmt_reset(st);
		if (!count) {
			*missing = i;
			bp_db_rollback(db);
			return -2;
		}
	}
	if (ids == NULL) {
		if ((st = bp_db_stmt(db, sql_n)) == NULL)
			goto fail;
		bp_stmt_text(st, 1, webhook_id);
		bp_stmt_int(st, 2, since);
		count = bp_stmt_step(st) == BP_DB_ROW ? bp_col_int(st, 0) : -1;
		bp_stmt_reset(st);
		if (count < 0)
			goto fail;
		if (max > 0 && count > max) {
			bp_db_rollback(db);
			return -3;
		}
	}
	for (i = 0; i < (ids != NULL ? n : 1); i++) {
		if ((st = bp_db_stmt(db, ids != NULL ? sql_id : sql_since)) == NULL)
			goto fail;
		bp_stmt_int(st, 1, now);
		bp_stmt_text(st, 2, webhook_id);
		if (ids != NULL)
			bp_stmt_text(st, 3, ids[i]);
		else
			bp_stmt_int(st, 3, since);
		if (bp_stmt_run(st) == -1)
			goto fail;
		done += bp_db_changes(db);
	}
	if (backlog_add(db, webhook_id, done) == -1 || bp_db_commit(db) == -1)
		goto fail;
	return (int)done;
fail:
	bp_db_rollback(db);
	return -1;
}
