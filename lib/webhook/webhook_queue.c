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
	    " block_number, block_hash, source, body, state, next_at, created_at, token)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)"
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
	return bp_stmt_run(st);
}

int
bp_webhook_queue_drop_block(struct bp_db *db, const char *network, int64_t number,
    const char *hash)
{
	/* Only what was never tried: a delivered event cannot be taken back. */
	static const char sql[] = "DELETE FROM webhook_events WHERE network = ? AND"
	    " block_number = ? AND block_hash = ? AND state = 'pending' AND attempts = 0";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
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

static int64_t
usage_today(struct bp_db *db, int64_t account_id, int64_t day)
{
	static const char sql[] = "SELECT count FROM webhook_usage WHERE account_id = ? AND day = ?";
	struct bp_stmt *st;
	enum bp_db_step step;
	int64_t n = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account_id);
	bp_stmt_int(st, 2, day);
	step = bp_stmt_step(st);
	n = step == BP_DB_ROW ? bp_col_int(st, 0) : step == BP_DB_DONE ? 0 : -1;
	bp_stmt_reset(st);
	return n;
}

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
	if ((q[*nq].used = usage_today(db, account_id, day)) < 0)
		return NULL;
	return &q[(*nq)++];
}

static int
lease(struct bp_db *db, const char *id, int64_t until)
{
	static const char sql[] = "UPDATE webhook_events SET lease_until = ? WHERE id = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, until);
	bp_stmt_text(st, 2, id);
	return bp_stmt_run(st);
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

int
bp_webhook_queue_claim(struct bp_db *db, const struct bp_config *cfg, int64_t now,
    int64_t lease_s, size_t max, struct bp_webhook_job **jobs)
{
	/*
	 * Whether a row's block is final is asked of the index's reader (bp_index_get_head), not
	 * joined from index_cursors: once per network and claim, inside the claim's transaction,
	 * so the rows and the heads are one snapshot as they were with the join, and a row costs
	 * a string compare instead of a cursor lookup. There is no LIMIT: it would count the rows
	 * above the confirmed head, which the join never returned, and could fill with them while
	 * due retries of final blocks wait behind. SQLite steps the statement lazily along
	 * webhook_events_due, in next_at order, so it reads only as far as the loop goes, and the
	 * loop stops as the LIMIT did. An account's plan is read once per claim (quota_of).
	 */
	static const char sql[] = "SELECT e.id, e.webhook_id, w.account_id, w.url, w.secret,"
	    " e.body, e.attempts, e.network, e.block_number FROM webhook_events e"
	    " JOIN webhooks w ON w.id = e.webhook_id"
	    " WHERE e.state = 'pending' AND e.next_at <= ?1 AND e.lease_until <= ?1"
	    " AND w.status = 'active' AND e.token IS NULL ORDER BY e.next_at";
	struct quota q[ACCOUNTS_MAX], *qa;
	struct final f[NETWORKS_MAX];
	struct bp_webhook_job *j = NULL, *jj;
	struct bp_stmt *st;
	enum bp_db_step step = BP_DB_ERROR;
	size_t n = 0, nq = 0, nf = 0, seen = 0, i;
	int64_t day = now / DAY, confirmed;

	*jobs = NULL;
	if (max == 0)
		return 0;
	if ((j = calloc(max, sizeof(*j))) == NULL)
		return -1;
	if (bp_db_begin(db) == -1) {
		free(j);
		return -1;
	}
	if ((st = bp_db_stmt(db, sql)) == NULL)
		goto fail;
	bp_stmt_int(st, 1, now);
	/* A few more than max: rows of accounts past their day's deliveries are passed over. */
	while (n < max && seen < max * 2 && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		if (final_of(db, f, &nf, bp_col_text(st, 7), &confirmed) == -1) {
			step = BP_DB_ERROR;
			break;
		}
		if (bp_col_int(st, 8) > confirmed)
			continue;	/* not final yet */
		seen++;
		jj = &j[n];
		if ((qa = quota_of(db, cfg, q, &nq, bp_col_int(st, 2), day)) == NULL)
			continue;
		if (qa->cap > 0 && qa->used >= qa->cap)
			continue;	/* waits for the next UTC day */
		qa->used++;
		bp_strlcpy(jj->event_id, bp_col_text(st, 0), sizeof(jj->event_id));
		bp_strlcpy(jj->webhook_id, bp_col_text(st, 1), sizeof(jj->webhook_id));
		jj->account_id = bp_col_int(st, 2);
		bp_strlcpy(jj->url, bp_col_text(st, 3), sizeof(jj->url));
		bp_strlcpy(jj->secret, bp_col_text(st, 4), sizeof(jj->secret));
		if ((jj->body = strdup(bp_col_text(st, 5))) == NULL)
			break;
		jj->len = strlen(jj->body);
		jj->attempts = bp_col_int(st, 6);
		n++;
	}
	bp_stmt_reset(st);
	if (step == BP_DB_ERROR)
		goto fail;
	for (i = 0; i < n; i++)
		if (lease(db, j[i].event_id, now + lease_s) == -1)
			goto fail;
	for (i = 0; i < nq; i++) {
		int64_t mine = 0;
		size_t k;

		for (k = 0; k < n; k++)
			mine += j[k].account_id == q[i].account_id;
		if (mine > 0 && usage_add(db, q[i].account_id, day, mine) == -1)
			goto fail;
	}
	if (bp_db_commit(db) == -1)
		goto fail;
	*jobs = j;
	return (int)n;
fail:
	bp_db_rollback(db);
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

/* Sets an event's state after an attempt. */
static int
event_set(struct bp_db *db, const char *id, int delivered, int64_t attempts, int64_t next_at,
    int64_t now)
{
	static const char sql[] = "UPDATE webhook_events SET state = ?, attempts = ?,"
	    " next_at = ?, lease_until = 0, delivered_at = ? WHERE id = ?";
	/* lease_until = 0 also leaves the partial index webhook_events_leased. */
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, delivered ? "delivered" : "pending");
	bp_stmt_int(st, 2, attempts);
	bp_stmt_int(st, 3, next_at);
	if (delivered)
		bp_stmt_int(st, 4, now);
	else
		bp_stmt_null(st, 4);
	bp_stmt_text(st, 5, id);
	return bp_stmt_run(st);
}

int
bp_webhook_queue_settle(struct bp_db *db, const struct bp_config *cfg, int64_t now_ms,
    const struct bp_webhook_job *jobs, const struct bp_webhook_outcome *out, size_t n,
    char (*paused)[BP_WEBHOOK_ID_MAX], size_t *npaused)
{
	const struct bp_webhooks_config *w = &cfg->webhooks;
	int64_t now = now_ms / 1000, k, next;
	size_t i;
	int p;

	*npaused = 0;
	if (n == 0)
		return 0;
	if (bp_db_begin(db) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		k = jobs[i].attempts + 1;
		if (bp_webhook_queue_log(db, jobs[i].webhook_id, jobs[i].event_id, k, &out[i]) == -1)
			goto fail;
		if (out[i].ok) {
			if (event_set(db, jobs[i].event_id, 1, k, now, now) == -1)
				goto fail;
			continue;
		}
		if ((size_t)k <= w->nretry) {
			/* Rounded up to the second, so the gap is never shorter than the step. */
			next = (now_ms + w->retry[k - 1] * 1000 + 999) / 1000;
			if (event_set(db, jobs[i].event_id, 0, k, next, now) == -1)
				goto fail;
			continue;
		}
		/* The last retry failed: pause, and hold the event for the resume. */
		if ((p = bp_webhook_pause(db, jobs[i].webhook_id, now)) == -1 ||
		    event_set(db, jobs[i].event_id, 0, 0, now, now) == -1)
			goto fail;
		if (p == 1)
			bp_strlcpy(paused[(*npaused)++], jobs[i].webhook_id, BP_WEBHOOK_ID_MAX);
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

int
bp_webhook_queue_prune(struct bp_db *db, int64_t now, int64_t retention_s)
{
	static const char sql_ev[] = "DELETE FROM webhook_events WHERE state = 'delivered'"
	    " AND delivered_at < ?";
	static const char sql_at[] = "DELETE FROM webhook_attempts WHERE at < ?";
	static const char sql_use[] = "DELETE FROM webhook_usage WHERE day < ?";
	int ev, at;

	if ((ev = delete_before(db, sql_ev, now - retention_s)) < 0 ||
	    (at = delete_before(db, sql_at, now - retention_s)) < 0 ||
	    delete_before(db, sql_use, now / DAY - 2) < 0)
		return -1;
	return ev + at;
}

int
bp_webhook_queue_attempts(struct bp_db *db, const char *webhook_id, int64_t limit,
    struct bp_buf *out)
{
	static const char sql[] = "SELECT at, event_id, attempt, http_status, error, duration_ms"
	    " FROM webhook_attempts WHERE webhook_id = ? ORDER BY id DESC LIMIT ?";
	struct bp_stmt *st;
	enum bp_db_step step;
	char t[32];
	int fail = 0;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, webhook_id);
	bp_stmt_int(st, 2, limit);
	while (!fail && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		bp_time_iso((time_t)bp_col_int(st, 0), t, sizeof(t));
		if (bp_col_is_null(st, 3))
			fail = bp_buf_printf(out, "%s  %s  %lld  error: %s  %lldms\n", t,
			    bp_col_text(st, 1), (long long)bp_col_int(st, 2), bp_col_text(st, 4),
			    (long long)bp_col_int(st, 5)) == -1;
		else
			fail = bp_buf_printf(out, "%s  %s  %lld  %lld  %lldms\n", t,
			    bp_col_text(st, 1), (long long)bp_col_int(st, 2),
			    (long long)bp_col_int(st, 3), (long long)bp_col_int(st, 5)) == -1;
	}
	bp_stmt_reset(st);
	return fail || step == BP_DB_ERROR ? -1 : 0;
}

int
bp_webhook_owner_email(struct bp_db *db, const char *id, char *out, size_t cap)
{
	static const char sql[] = "SELECT account_id FROM webhooks WHERE id = ?";
	struct bp_account a;
	struct bp_stmt *st;
	enum bp_db_step step;
	int64_t account_id = 0;
	int rc;

	out[0] = '\0';
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, id);
	if ((step = bp_stmt_step(st)) == BP_DB_ROW)
		account_id = bp_col_int(st, 0);
	bp_stmt_reset(st);
	if (step != BP_DB_ROW)
		return step == BP_DB_DONE ? 0 : -1;
	if ((rc = bp_account_get(db, account_id, &a)) != 1)
		return rc;
	return bp_strlcpy(out, a.email, cap) == -1 ? -1 : 1;
}
