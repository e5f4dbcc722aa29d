/*
 * The delivery log as API (webhook_log.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/db.h"
#include "webhook_b.h"
#include "webhook_log.h"
#include "webhook_queue.h"

int
bp_webhook_log_deliveries(struct bp_db *db, const struct bp_webhook *w, int64_t page,
    int64_t limit, struct bp_buf *b)
{
	static const char sql_n[] = "SELECT count(*) FROM webhook_attempts WHERE webhook_id = ?";
	/* webhook_attempts_webhook (webhook_id, id) gives the order; the event by its key. */
	static const char sql[] = "SELECT a.event_id, e.event_type, a.at, a.attempt,"
	    " a.http_status, a.error, a.duration_ms FROM webhook_attempts a LEFT JOIN"
	    " webhook_events e ON e.id = a.event_id WHERE a.webhook_id = ?"
	    " ORDER BY a.id DESC LIMIT ? OFFSET ?";
	const char *type = w->types != 0 ?
	    bp_webhook_btype_name(bp_webhook_btype_first(w->types)) : bp_webhook_type_name(w->type);
	struct bp_stmt *st;
	enum bp_db_step step;
	int64_t total = -1;
	int fail, n = 0;

	if ((st = bp_db_stmt(db, sql_n)) == NULL)
		return -1;
	bp_stmt_text(st, 1, w->id);
	if (bp_stmt_step(st) == BP_DB_ROW)
		total = bp_col_int(st, 0);
	bp_stmt_reset(st);
	if (total < 0 || (st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, w->id);
	bp_stmt_int(st, 2, limit);
	bp_stmt_int(st, 3, (page - 1) * limit);
	fail = bp_buf_adds(b, "{\"deliveries\":[") == -1;
	while (!fail && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		fail = (n++ > 0 && bp_buf_adds(b, ",") == -1) ||
		    bp_buf_printf(b, "{\"event_id\":\"%s\",\"type\":\"%s\"", bp_col_text(st, 0),
		    bp_col_is_null(st, 1) ? type : bp_col_text(st, 1)) == -1 ||
		    bp_buf_json_time(b, "attempted_at", bp_col_int(st, 2)) == -1 ||
		    bp_buf_printf(b, ",\"attempt\":%lld", (long long)bp_col_int(st, 3)) == -1 ||
		    (bp_col_is_null(st, 4) ? bp_buf_adds(b, ",\"http_status\":null") :
		    bp_buf_printf(b, ",\"http_status\":%lld", (long long)bp_col_int(st, 4))) == -1;
		if (!fail && bp_col_text(st, 5)[0] != '\0')
			fail = bp_buf_adds(b, ",\"error\":\"") == -1 ||
			    bp_buf_json_str(b, bp_col_text(st, 5)) == -1 ||
			    bp_buf_adds(b, "\"") == -1;
		else if (!fail)
			fail = bp_buf_adds(b, ",\"error\":null") == -1;
		fail = fail || bp_buf_printf(b, ",\"duration_ms\":%lld}",
		    (long long)bp_col_int(st, 6)) == -1;
	}
	bp_stmt_reset(st);
	if (fail || step == BP_DB_ERROR)
		return -1;
	return bp_buf_printf(b, "],\"page\":%lld,\"limit\":%lld,\"total\":%lld}",
	    (long long)page, (long long)limit, (long long)total) == -1 ? -1 : 0;
}

/* "2026-11-26T11:00:00Z" as Unix seconds; -1 when it is not that form. */
static int64_t
iso_seconds(const char *s)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (strlen(s) != 20 || (end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm)) == NULL ||
	    *end != '\0')
		return -1;
	return (int64_t)timegm(&tm);
}

int
bp_webhook_log_replay_input(const cJSON *body, int64_t now, int64_t retention_s,
    struct bp_webhook_replay *out, char *why, size_t cap)
{
	const cJSON *since = cJSON_GetObjectItemCaseSensitive(body, "since");
	const cJSON *ids = cJSON_GetObjectItemCaseSensitive(body, "event_ids"), *it;
	int i = 0;

	memset(out, 0, sizeof(*out));
	if ((since == NULL) == (ids == NULL)) {
		snprintf(why, cap, "since: give since (a time) or event_ids, one of them");
		return -1;
	}
	if (ids != NULL) {
		if (!cJSON_IsArray(ids) || cJSON_GetArraySize(ids) < 1 ||
		    cJSON_GetArraySize(ids) > BP_WEBHOOK_REPLAY_IDS_MAX) {
			snprintf(why, cap, "event_ids must be an array of 1 to %d evt_ ids",
			    BP_WEBHOOK_REPLAY_IDS_MAX);
			return -1;
		}
		cJSON_ArrayForEach(it, ids) {
			if (!cJSON_IsString(it) || strncmp(it->valuestring, "evt_", 4) != 0 ||
			    strlen(it->valuestring) != 28 ||
			    strspn(it->valuestring + 4, "0123456789abcdef") != 24) {
				snprintf(why, cap, "event_ids[%d] must be an evt_ id", i);
				return -1;
			}
			out->ids[out->nids++] = it->valuestring;
			i++;
		}
		return 0;
	}
	if (cJSON_IsNumber(since) && since->valuedouble >= 0 && since->valuedouble < 1e11)
		out->since = (int64_t)since->valuedouble;
	else if (!cJSON_IsString(since) || (out->since = iso_seconds(since->valuestring)) < 0) {
		snprintf(why, cap, "since must be a time: ISO 8601 UTC (2026-11-26T11:00:00Z) or"
		    " Unix seconds");
		return -1;
	}
	if (out->since < now - retention_s) {
		snprintf(why, cap, "since is older than the retention (%lld s): nothing older is"
		    " kept", (long long)retention_s);
		return -1;
	}
	return 0;
}

int
bp_webhook_log_replay(struct bp_db *db, const struct bp_webhook *w,
    const struct bp_webhook_replay *r, int64_t max, int64_t now, struct bp_buf *b,
    char *why, size_t cap)
{
	size_t missing;
	int n;

	n = bp_webhook_queue_replay(db, w->id, r->since, r->nids > 0 ? r->ids : NULL, r->nids,
	    max, now, &missing);
	if (n == -2) {
		snprintf(why, cap, "event_ids[%zu]: %s is not an event of webhook %s (never, or"
		    " older than the retention)", missing, r->ids[missing], w->id);
		return -1;
	}
	if (n == -3) {
		snprintf(why, cap, "since: more than %lld events since then (the plan's"
		    " webhook_backlog); give a later since, or event_ids", (long long)max);
		return -1;
	}
	if (n < 0)
		return -2;
	return bp_buf_printf(b, "{\"id\":\"%s\",\"replayed\":%d}", w->id, n) == -1 ? -2 : 0;
}
