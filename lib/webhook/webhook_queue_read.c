/*
 * Reads of the webhook delivery queue that change nothing (webhook_queue.h): an account's
 * events today and a webhook's backlog (the matcher's bounds), the counts and the attempts
 * `blockport webhook deliveries` and GET /v1/webhooks/{id}/deliveries show, a webhook owner's
 * address for the pause e-mail, and the queue's /metrics series. The queue's writes stay in
 * webhook_queue.c, the tables' owner.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/account.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/db.h"
#include "core/metrics.h"
#include "core/util.h"
#include "webhook_queue.h"

#define DAY	86400

/* The first column of st's one row, 0 without a row, -1 on an error; st is reset. */
static int64_t
one_int(struct bp_stmt *st)
{
	enum bp_db_step step = bp_stmt_step(st);
	int64_t n = step == BP_DB_ROW ? bp_col_int(st, 0) : step == BP_DB_DONE ? 0 : -1;

	bp_stmt_reset(st);
	return n;
}

/* The column sql reads of webhook_usage's row of account on day (0 without one), or -1. */
static int64_t
usage_of(struct bp_db *db, const char *sql, int64_t account_id, int64_t day)
{
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account_id);
	bp_stmt_int(st, 2, day);
	return one_int(st);
}

int64_t
bp_webhook_queue_recorded_today(struct bp_db *db, int64_t account_id, int64_t day)
{
	static const char sql[] = "SELECT recorded FROM webhook_usage WHERE account_id = ?"
	    " AND day = ?";

	return usage_of(db, sql, account_id, day);
}

int64_t
bp_webhook_queue_sent_today(struct bp_db *db, int64_t account_id, int64_t day)
{
	static const char sql[] = "SELECT count FROM webhook_usage WHERE account_id = ? AND day = ?";

	return usage_of(db, sql, account_id, day);
}

int64_t
bp_webhook_queue_backlog(struct bp_db *db, const char *webhook_id)
{
	static const char sql[] = "SELECT pending FROM webhook_backlog WHERE webhook_id = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, webhook_id);
	return one_int(st);
}

int
bp_webhook_queue_counts(struct bp_db *db, const char *webhook_id, struct bp_buf *out)
{
	static const char sql[] = "SELECT day, recorded, dropped_day, dropped_backlog, expired"
	    " FROM webhook_counts WHERE webhook_id = ? ORDER BY day DESC";
	struct bp_stmt *st;
	enum bp_db_step step;
	char t[32];
	int fail = 0;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, webhook_id);
	while (!fail && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		bp_time_iso((time_t)(bp_col_int(st, 0) * DAY), t, sizeof(t));
		t[10] = '\0';
		fail = bp_buf_printf(out, "%s  recorded %lld  dropped %lld (day's events)"
		    "  dropped %lld (backlog)  expired %lld\n", t, (long long)bp_col_int(st, 1),
		    (long long)bp_col_int(st, 2), (long long)bp_col_int(st, 3),
		    (long long)bp_col_int(st, 4)) == -1;
	}
	bp_stmt_reset(st);
	return fail || step == BP_DB_ERROR ? -1 : 0;
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

int
bp_webhook_queue_metrics(struct bp_db *db, const struct bp_config *cfg, struct bp_buf *out)
{
	(void)cfg;
	if (bp_metrics_query(db, out, "blockport_webhook_queue_depth", "gauge",
	    "Webhook events recorded and not delivered yet.", NULL,
	    "SELECT COALESCE(SUM(pending), 0) FROM webhook_backlog") == -1)
		return -1;
	return bp_metrics_query(db, out, "blockport_webhook_delivery_attempts_total", "counter",
	    "Webhook delivery attempts made, successful or not.", NULL,
	    "SELECT COALESCE(MAX(id), 0) FROM webhook_attempts");
}
