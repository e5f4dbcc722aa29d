/*
 * The delivery log as API (GET /v1/webhooks/{id}/deliveries): the attempts of a webhook,
 * newest first, paged, each with its event's id and type, time, HTTP status or error,
 * duration and attempt number. Reads webhook_attempts and webhook_events (webhook_queue.c's).
 * And the replay (POST /v1/webhooks/{id}/replay): its body, and the queue's replay.
 */
#ifndef BP_WEBHOOK_LOG_H
#define BP_WEBHOOK_LOG_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "webhook.h"

struct bp_db;

#define BP_WEBHOOK_REPLAY_IDS_MAX	100

/*
 * Appends {deliveries:[{event_id, type, attempted_at, attempt, http_status, error,
 * duration_ms}], page, limit, total} of w's attempts. type is the event's (format B), else the
 * webhook's; http_status null when no answer came, error null when one did. 0 or -1.
 */
int	bp_webhook_log_deliveries(struct bp_db *, const struct bp_webhook *w, int64_t page,
	    int64_t limit, struct bp_buf *b);

/* A replay's body, checked (POST /v1/webhooks/{id}/replay). */
struct bp_webhook_replay {
	int64_t		 since;		/* Unix seconds; used when nids is 0 */
	const char	*ids[BP_WEBHOOK_REPLAY_IDS_MAX];	/* into the body */
	size_t		 nids;
};

/*
 * Reads {since} (ISO 8601 UTC "2026-11-26T11:00:00Z" or Unix seconds) or {event_ids} (1 to
 * 100 evt_ ids) of body, exactly one of them; since no older than now - retention_s (nothing
 * older is kept). 0, or -1 with why naming the field.
 */
int	bp_webhook_log_replay_input(const cJSON *body, int64_t now, int64_t retention_s,
	    struct bp_webhook_replay *out, char *why, size_t cap);

/*
 * Delivers again what r names of w (bp_webhook_queue_replay), at most max events (the plan's
 * webhook_backlog; 0: any). Appends {id, replayed} to b and returns 0; or returns -1 with why
 * (the field at fault) for a 400, or -2 on a database error.
 */
int	bp_webhook_log_replay(struct bp_db *, const struct bp_webhook *w,
	    const struct bp_webhook_replay *r, int64_t max, int64_t now, struct bp_buf *b,
	    char *why, size_t cap);

#endif
