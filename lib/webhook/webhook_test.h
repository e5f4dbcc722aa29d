/*
 * A webhook's test event, sent now (POST /v1/webhooks/{id}/test, `blockport webhook test ID`):
 * signed and sent like a delivery, in the webhook's format, and written to the delivery log.
 * Format A: {id, event_type, webhook_id, created_at, data: {test: true, chain}}; format B:
 * {id, type (its first), createdAt, chain, chainId, data: {test: true}}.
 */
#ifndef BP_WEBHOOK_TEST_H
#define BP_WEBHOOK_TEST_H

#include "webhook.h"
#include "webhook_queue.h"

struct bp_db;
struct bp_config;

#define BP_WEBHOOK_EVT_MAX	29	/* "evt_" + 24 hex digits + NUL */

/*
 * Sends w's test event now and logs the attempt (attempt 1). id gets its evt_ id, out what the
 * receiver answered (out->ok for a 2xx). Blocks up to [webhooks] timeout_ms; holds no
 * transaction while it waits. 0, or -1 when it could not be sent at all (out->error says why).
 */
int	bp_webhook_test_send(struct bp_db *, const struct bp_config *, const struct bp_webhook *w,
	    char id[BP_WEBHOOK_EVT_MAX], struct bp_webhook_outcome *out);

/*
 * Appends the answer of POST /v1/webhooks/{id}/test: {event_id, delivered (a 2xx), http_status
 * (null without an answer), error (null when one came), duration_ms}. 0 or -1.
 */
int	bp_webhook_test_json(const char *id, const struct bp_webhook_outcome *out,
	    struct bp_buf *b);

#endif
