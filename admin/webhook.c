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
#include "webhook/webhook_test.h"

#define DELIVERIES_DEFAULT	50

static int
fail(const char *msg, const char *arg)
{
	fprintf(stderr, "blockport: %s: %s\n", msg, arg);
	return 1;
}

/* The test event (lib/webhook/webhook_test.h): prints the receiver's answer. */
static int
send_test(const struct bp_config *cfg, struct bp_db *db, const struct bp_webhook *w)
{
	struct bp_webhook_outcome out;
	char id[BP_WEBHOOK_EVT_MAX];

	if (bp_webhook_test_send(db, cfg, w, id, &out) == -1 && out.http_status == 0 &&
	    out.at == 0)
		return fail("could not send", out.error);
	if (out.http_status > 0)
		printf("%s %s -> HTTP %ld in %ld ms%s%s\n", id, w->url, out.http_status,
		    out.duration_ms, out.error[0] ? ": " : "", out.error);
	else
		printf("%s %s -> error: %s (%ld ms)\n", id, w->url, out.error, out.duration_ms);
	return out.ok ? 0 : 1;
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
