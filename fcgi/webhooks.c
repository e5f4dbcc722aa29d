/*
 * /v1/webhooks (SPEC.md sections 2-4 and 6; docs/webhooks.md). A route table and thin
 * handlers: the rules and the table live in lib/webhook/webhook.c, matching in lib/webhook/webhook_match.c,
 * delivery in cron/deliver.c.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/config.h"
#include "core/db.h"
#include "core/fcgi.h"
#include "core/util.h"
#include "webhook/webhook.h"
#include "webhook/webhook_log.h"
#include "webhook/webhook_test.h"

static int	webhook_create(struct bp_req *);
static int	webhook_list(struct bp_req *);
static int	webhook_get(struct bp_req *);
static int	webhook_patch(struct bp_req *);
static int	webhook_delete(struct bp_req *);
static int	webhook_deliveries(struct bp_req *);
static int	webhook_replay(struct bp_req *);
static int	webhook_test(struct bp_req *);

/* Compute units: reads 5, writes 10 (a create resolves the url's host). */
static const struct bp_route routes[] = {
	{ "POST", "/v1/webhooks", webhook_create, BP_SCOPE_WEBHOOKS, 10, 0 },
	{ "GET", "/v1/webhooks", webhook_list, BP_SCOPE_WEBHOOKS, 5, 0 },
	{ "GET", "/v1/webhooks/:id", webhook_get, BP_SCOPE_WEBHOOKS, 5, 0 },
	{ "PATCH", "/v1/webhooks/:id", webhook_patch, BP_SCOPE_WEBHOOKS, 10, 0 },
	{ "DELETE", "/v1/webhooks/:id", webhook_delete, BP_SCOPE_WEBHOOKS, 10, 0 },
	{ "GET", "/v1/webhooks/:id/deliveries", webhook_deliveries, BP_SCOPE_WEBHOOKS, 5, 0 },
	{ "POST", "/v1/webhooks/:id/replay", webhook_replay, BP_SCOPE_WEBHOOKS, 10, 0 },
	{ "POST", "/v1/webhooks/:id/test", webhook_test, BP_SCOPE_WEBHOOKS, 10, 0 },
};

static const struct bp_app app = { "webhooks", routes, BP_NITEMS(routes), NULL, NULL };

int	main(void);

int
main(void)
{
	return bp_fcgi_main_threads(&app, NULL);
}

#define WHY_MAX		512

/* ---- small helpers ---- */

static int
reply_webhook(struct bp_req *r, int status, const struct bp_webhook *w, int full)
{
	bp_buf_reset(&r->out);
	if (bp_webhook_json(w, full, &r->out) == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	return bp_reply_out(r, status);
}

/*
 * 1 with w, else the answer set: 404 for another account's id or one that never existed, 403
 * for one of the account's webhooks of the other kind (a test key and a mainnet webhook).
 */
static int
find_webhook(struct bp_req *r, const char *id, struct bp_webhook *w)
{
	int found = bp_webhook_get(r->db, r->key.account_id, id, w);

	if (found == -1)
		bp_error(r, 500, "internal_error", "database error");
	else if (found == 0)
		bp_error(r, 404, "not_found", "no webhook %.40s", id);
	else if (!bp_webhook_of_kind(r->cfg, w, r->key.test)) {
		bp_error(r, 403, "forbidden", "webhook %s watches %s; a %s key may not use it", w->id,
		    w->network, r->key.test ? "test" : "live");
		bp_webhook_clear(w);
		found = 0;
	}
	return found;
}

/* ---- handlers ---- */

/*
 * POST /v1/webhooks {url, chain, event_type, config, network?}, or format B's {url, chain,
 * event_type or event_types, filters?, network?}: 201, the secret shown once.
 */
static int
webhook_create(struct bp_req *r)
{
	struct bp_webhook_input in;
	struct bp_webhook w;
	char why[WHY_MAX];
	cJSON *body;
	int rc, made;

	memset(&w, 0, sizeof(w));
	if ((body = bp_req_json_object(r)) == NULL)
		return r->status;
	if (bp_webhook_input(r->cfg, body, 1, r->key.test, BP_WEBHOOK_ADDRESS_ACTIVITY, &in, why,
	    sizeof(why)) == -1)
		rc = bp_error(r, 400, "invalid_request", "%s", why);
	else if (r->key.test && !in.net->testnet)
		rc = bp_error(r, 403, "forbidden", "test keys may not use %s %s (a mainnet)",
		    in.net->chain, in.net->network);
	else if (!r->key.test && in.net->testnet)	/* its key could not manage it after */
		rc = bp_error(r, 403, "forbidden", "network: %s %s is a testnet; create its webhooks"
		    " with a test key", in.net->chain, in.net->network);
	else if ((made = bp_webhook_create(r->db, r->key.account_id, r->key.plan.webhooks, &in,
	    &w)) == -1)
		rc = bp_error(r, 500, "internal_error", "database error");
	else if (made == 0)
		rc = bp_error(r, 400, "invalid_request", "url: the %s plan allows %lld webhooks;"
		    " delete one first", r->key.plan.name, (long long)r->key.plan.webhooks);
	else
		rc = reply_webhook(r, 201, &w, 1);
	bp_webhook_clear(&w);
	bp_buf_free(&in.canon);
	cJSON_Delete(body);
	return rc;
}

/* GET /v1/webhooks?page=&limit=&status=: the account's webhooks, newest first. */
static int
webhook_list(struct bp_req *r)
{
	const char *s = bp_req_query(r, "status");
	enum bp_webhook_status st;
	int64_t page, limit;

	if (bp_req_paging(r, 25, &page, &limit) == -1)
		return r->status;
	if (s != NULL && bp_webhook_status_parse(s, &st) == -1)
		return bp_error(r, 400, "invalid_request", "status must be active, paused or"
		    " disabled");
	bp_buf_reset(&r->out);
	if (bp_webhook_list(r->db, r->cfg, r->key.account_id, r->key.test, s ? &st : NULL, page,
	    limit, &r->out) == -1)
		return bp_error(r, 500, "internal_error", "database error");
	return bp_reply_out(r, 200);
}

/* GET /v1/webhooks/{id}: the webhook without its secret. */
static int
webhook_get(struct bp_req *r)
{
	struct bp_webhook w;
	int rc;

	if (find_webhook(r, bp_req_param(r, "id"), &w) != 1)
		return r->status;
	rc = reply_webhook(r, 200, &w, 0);
	bp_webhook_clear(&w);
	return rc;
}

/* PATCH /v1/webhooks/{id} {url?, status?, config?}; status active resumes held deliveries. */
static int
webhook_patch(struct bp_req *r)
{
	struct bp_webhook_input in;
	struct bp_webhook w, out;
	char why[WHY_MAX];
	cJSON *body;
	int rc, found;

	memset(&out, 0, sizeof(out));
	bp_buf_init(&in.canon, 0);
	if ((body = bp_req_json_object(r)) == NULL)
		return r->status;
	if (find_webhook(r, bp_req_param(r, "id"), &w) != 1) {
		cJSON_Delete(body);
		return r->status;
	}
	if (bp_webhook_input_patch(r->cfg, body, r->key.test, &w, &in, why, sizeof(why)) == -1)
		rc = bp_error(r, 400, "invalid_request", "%s", why);
	else if ((found = bp_webhook_update(r->db, r->key.account_id, w.id, in.url,
	    in.has_config ? in.canon.data : NULL, in.has_status ? &in.status : NULL, &out)) == -1)
		rc = bp_error(r, 500, "internal_error", "database error");
	else if (found == 0)
		rc = bp_error(r, 404, "not_found", "no webhook %.40s", w.id);
	else if (found == 2)
		rc = bp_error(r, 400, "invalid_request", "status: webhook %s is disabled by the"
		    " operator", w.id);
	else
		rc = reply_webhook(r, 200, &out, 0);
	bp_webhook_clear(&w);
	bp_webhook_clear(&out);
	bp_buf_free(&in.canon);
	cJSON_Delete(body);
	return rc;
}

/* DELETE /v1/webhooks/{id}: irreversible, pending deliveries dropped; {id, deleted: true}. */
static int
webhook_delete(struct bp_req *r)
{
	const char *id = bp_req_param(r, "id");
	struct bp_webhook w;
	int found;

	if (find_webhook(r, id, &w) != 1)
		return r->status;
	bp_webhook_clear(&w);
	if ((found = bp_webhook_delete(r->db, r->key.account_id, id)) == -1)
		return bp_error(r, 500, "internal_error", "database error");
	if (found == 0)
		return bp_error(r, 404, "not_found", "no webhook %.40s", id);
	bp_buf_reset(&r->out);
	if (bp_buf_adds(&r->out, "{\"id\":\"") == -1 || bp_buf_json_str(&r->out, id) == -1 ||
	    bp_buf_adds(&r->out, "\",\"deleted\":true}") == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	return bp_reply_out(r, 200);
}

/* GET /v1/webhooks/{id}/deliveries?page=&limit=: the delivery log, newest first. */
static int
webhook_deliveries(struct bp_req *r)
{
	struct bp_webhook w;
	int64_t page, limit;
	int rc;

	if (bp_req_paging(r, 25, &page, &limit) == -1 ||
	    find_webhook(r, bp_req_param(r, "id"), &w) != 1)
		return r->status;
	bp_buf_reset(&r->out);
	rc = bp_webhook_log_deliveries(r->db, &w, page, limit, &r->out) == -1 ?
	    bp_error(r, 500, "internal_error", "database error") : bp_reply_out(r, 200);
	bp_webhook_clear(&w);
	return rc;
}

/* POST /v1/webhooks/{id}/replay {since} or {event_ids}: the same events, new attempts. */
static int
webhook_replay(struct bp_req *r)
{
	struct bp_webhook_replay rp;
	struct bp_webhook w;
	char why[WHY_MAX];
	cJSON *body;
	int64_t now = (int64_t)time(NULL);
	int rc;

	if ((body = bp_req_json_object(r)) == NULL)
		return r->status;
	if (find_webhook(r, bp_req_param(r, "id"), &w) != 1) {
		cJSON_Delete(body);
		return r->status;
	}
	bp_buf_reset(&r->out);
	if (bp_webhook_log_replay_input(body, now, r->cfg->webhooks.retention_seconds, &rp, why,
	    sizeof(why)) == -1)
		rc = bp_error(r, 400, "invalid_request", "%s", why);
	else if ((rc = bp_webhook_log_replay(r->db, &w, &rp, r->key.plan.webhook_backlog, now,
	    &r->out, why, sizeof(why))) == -1)
		rc = bp_error(r, 400, "invalid_request", "%s", why);
	else if (rc == -2)
		rc = bp_error(r, 500, "internal_error", "database error");
	else
		rc = bp_reply_out(r, 200);
	bp_webhook_clear(&w);
	cJSON_Delete(body);
	return rc;
}

/* POST /v1/webhooks/{id}/test: a signed test event now; the receiver's answer. */
static int
webhook_test(struct bp_req *r)
{
	struct bp_webhook_outcome out;
	struct bp_webhook w;
	char id[BP_WEBHOOK_EVT_MAX];
	int rc;

	if (find_webhook(r, bp_req_param(r, "id"), &w) != 1)
		return r->status;
	bp_buf_reset(&r->out);
	if (bp_webhook_test_send(r->db, r->cfg, &w, id, &out) == -1 && out.at == 0)
		rc = bp_error(r, 500, "internal_error", "%s", out.error);
	else if (bp_webhook_test_json(id, &out, &r->out) == -1)
		rc = bp_error(r, 500, "internal_error", "response too large");
	else
		rc = bp_reply_out(r, 200);
	bp_webhook_clear(&w);
	return rc;
}
