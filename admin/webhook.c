/*
 * blockport webhook test ID          a signed test event now; prints the receiver's answer
 * blockport webhook deliveries ID    the latest attempts (the delivery log)
 * blockport webhook disable|enable ID
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin_webhook.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/db.h"
#include "core/hex.h"
#include "core/util.h"
#include "webhook/webhook.h"
#include "webhook/webhook_queue.h"
#include "webhook/webhook_send.h"

#define DELIVERIES_DEFAULT	50

static int
fail(const char *msg, const char *arg)
{
	fprintf(stderr, "blockport: %s: %s\n", msg, arg);
	return 1;
}

/* The test event: the webhook's event_type with data {"test": true, "chain": ...}. */
static int
send_test(const struct bp_config *cfg, struct bp_db *db, const struct bp_webhook *w)
{
	struct bp_webhook_sender *s;
	struct bp_webhook_job job;
	struct bp_webhook_outcome out;
	struct bp_buf body;
	uint8_t rnd[12];
	char id[32], now[32];
	int rc = 1;

	memset(&job, 0, sizeof(job));
	memset(&out, 0, sizeof(out));
	bp_buf_init(&body, 4096);
	if (bp_random(rnd, sizeof(rnd)) == -1)
		return fail("no randomness", "RAND_bytes");
	memcpy(id, "evt_", 4);
	bp_hex_encode_digits(rnd, sizeof(rnd), id + 4, sizeof(id) - 4);
	bp_time_iso(time(NULL), now, sizeof(now));
	if (bp_buf_printf(&body, "{\"id\":\"%s\",\"event_type\":\"%s\",\"webhook_id\":\"%s\","
	    "\"created_at\":\"%s\",\"data\":{\"test\":true,\"chain\":\"%s\"}}", id,
	    bp_webhook_type_name(w->type), w->id, now, w->chain) == -1)
		goto out;
	bp_strlcpy(job.event_id, id, sizeof(job.event_id));
	bp_strlcpy(job.webhook_id, w->id, sizeof(job.webhook_id));
	bp_strlcpy(job.url, w->url, sizeof(job.url));
	bp_strlcpy(job.secret, w->secret, sizeof(job.secret));
	job.body = body.data;
	job.len = body.len;
	if ((s = bp_webhook_sender_new(cfg)) == NULL) {
		fail("could not start curl", "out of memory");
		goto out;
	}
	bp_webhook_send(s, &job, 1, &out);
	bp_webhook_sender_free(s);
	if (bp_webhook_queue_log(db, w->id, id, 1, &out) == -1)
		fprintf(stderr, "blockport: the attempt was not logged (database error)\n");
	if (out.http_status > 0)
		printf("%s %s -> HTTP %ld in %ld ms%s%s\n", id, w->url, out.http_status,
		    out.duration_ms, out.error[0] ? ": " : "", out.error);
	else
		printf("%s %s -> error: %s (%ld ms)\n", id, w->url, out.error, out.duration_ms);
	rc = out.ok ? 0 : 1;
out:
	bp_buf_free(&body);
	return rc;
}

int
admin_webhook(const struct bp_config *cfg, struct bp_db *db, int argc, char **argv)
{
	struct bp_webhook w;
	struct bp_buf b;
	int64_t limit = DELIVERIES_DEFAULT;
	int rc, found;

	if (argc < 2) {
		fprintf(stderr, "usage: blockport webhook test|deliveries|disable|enable ID"
		    " [--limit N]\n");
		return 2;
	}
	if ((found = bp_webhook_get(db, -1, argv[1], &w)) == -1)
		return 1;
	if (found == 0)
		return fail("no webhook", argv[1]);
	rc = 2;
	if (strcmp(argv[0], "test") == 0)
		rc = send_test(cfg, db, &w);
	else if (strcmp(argv[0], "deliveries") == 0) {
		if (argc >= 4 && strcmp(argv[2], "--limit") == 0 &&
		    bp_parse_int64(argv[3], 1, 100000, &limit) == -1) {
			bp_webhook_clear(&w);
			return fail("--limit takes 1 to 100000", argv[3]);
		}
		bp_buf_init(&b, 64 * 1024 * 1024);
		rc = bp_webhook_queue_attempts(db, w.id, limit, &b) == -1 ? 1 : 0;
		if (rc == 0) {
			printf("# time  evt_id  attempt  http_status|error  duration (newest first)\n");
			fputs(b.data != NULL ? b.data : "", stdout);
			/* What the fences did not record or expired: never silent. */
			bp_buf_reset(&b);
			rc = bp_webhook_queue_counts(db, w.id, &b) == -1 ? 1 : 0;
		}
		if (rc == 0) {
			printf("# events per UTC day (newest first)\n");
			fputs(b.data != NULL ? b.data : "", stdout);
		}
		bp_buf_free(&b);
	} else if (strcmp(argv[0], "disable") == 0 || strcmp(argv[0], "enable") == 0) {
		rc = bp_webhook_set_status(db, w.id, argv[0][0] == 'd' ? BP_WEBHOOK_DISABLED :
		    BP_WEBHOOK_ACTIVE) == 1 ? 0 : 1;
		if (rc == 0)
			fprintf(stderr, "webhook %s %sd\n", w.id, argv[0]);
	} else
		fprintf(stderr, "blockport: unknown webhook command '%s'\n", argv[0]);
	bp_webhook_clear(&w);
	return rc;
}
