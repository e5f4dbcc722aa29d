/*
 * The test event (webhook_test.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/db.h"
#include "core/hex.h"
#include "core/util.h"
#include "webhook_b.h"
#include "webhook_send.h"
#include "webhook_test.h"

/* The body of w's test event id, in w's format. 0 or -1. */
static int
body_of(const struct bp_config *cfg, const struct bp_webhook *w, const char *id,
    struct bp_buf *b)
{
	const struct bp_network *net;
	char now[32];

	if (w->types == 0) {
		bp_time_iso(time(NULL), now, sizeof(now));
		return bp_buf_printf(b, "{\"id\":\"%s\",\"event_type\":\"%s\","
		    "\"webhook_id\":\"%s\",\"created_at\":\"%s\",\"data\":{\"test\":true,\"chain\":\"%s\"}}", id,
		    bp_webhook_type_name(w->type), w->id, now, w->chain);
	}
	net = bp_webhook_network(cfg, w->network);
	return bp_webhook_b_envelope(b, id, bp_webhook_btype_first(w->types),
	    bp_now_us() / 1000, w->chain,
	    net != NULL ? net->chain_id : 0, "{\"test\":true}", 13);
}

int
bp_webhook_test_send(struct bp_db *db, const struct bp_config *cfg, const struct bp_webhook *w,
    char id[BP_WEBHOOK_EVT_MAX], struct bp_webhook_outcome *out)
{
	struct bp_webhook_sender *s;
	struct bp_webhook_job job;
	struct bp_buf body;
	uint8_t rnd[12];
	int rc = -1;

	memset(&job, 0, sizeof(job));
	memset(out, 0, sizeof(*out));
	bp_buf_init(&body, 4096);
	if (bp_random(rnd, sizeof(rnd)) == -1) {
		snprintf(out->error, sizeof(out->error), "no randomness");
		return -1;
	}
	memcpy(id, "evt_", 4);
	bp_hex_encode_digits(rnd, sizeof(rnd), id + 4, BP_WEBHOOK_EVT_MAX - 4);
	if (body_of(cfg, w, id, &body) == -1) {
		snprintf(out->error, sizeof(out->error), "out of memory");
		goto out;
	}
	bp_strlcpy(job.event_id, id, sizeof(job.event_id));
	bp_strlcpy(job.webhook_id, w->id, sizeof(job.webhook_id));
	bp_strlcpy(job.url, w->url, sizeof(job.url));
	bp_strlcpy(job.secret, w->secret, sizeof(job.secret));
	job.format_b = w->types != 0;
	bp_strlcpy(job.event_type, job.format_b ?
	    bp_webhook_btype_name(bp_webhook_btype_first(w->types)) : "",
	    sizeof(job.event_type));
	job.body = body.data;
	job.len = body.len;
	if ((s = bp_webhook_sender_new(cfg)) == NULL) {
		snprintf(out->error, sizeof(out->error), "could not start curl");
		goto out;
	}
	rc = bp_webhook_send(s, &job, 1, out);
	bp_webhook_sender_free(s);
	/* The delivery log shows it like any attempt; a log that fails does not undo the send. */
	(void)bp_webhook_queue_log(db, w->id, id, 1, out);
out:
	bp_buf_free(&body);
	return rc;
}

int
bp_webhook_test_json(const char *id, const struct bp_webhook_outcome *out, struct bp_buf *b)
{
	int fail;

	fail = bp_buf_printf(b, "{\"event_id\":\"%s\",\"delivered\":%s", id,
	    out->ok ? "true" : "false") == -1 ||
	    (out->http_status > 0 ? bp_buf_printf(b, ",\"http_status\":%ld", out->http_status) :
	    bp_buf_adds(b, ",\"http_status\":null")) == -1;
	if (!fail && out->error[0] != '\0')
		fail = bp_buf_adds(b, ",\"error\":\"") == -1 ||
		    bp_buf_json_str(b, out->error) == -1 ||
		    bp_buf_adds(b, "\"") == -1;
	else if (!fail)
		fail = bp_buf_adds(b, ",\"error\":null") == -1;
	return fail || bp_buf_printf(b, ",\"duration_ms\":%ld}", out->duration_ms) == -1 ? -1 : 0;
}
