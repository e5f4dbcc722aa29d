/*
 * /v1/wallets: ERC-4337 smart wallets (SPEC.md sections 2, 3 and 4; docs/wallets.md). The
 * routes and their handlers: each parses the request, calls one function of lib/wallet/wallets.h (the
 * rules, the table, the chain reads) and renders its answer.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/fcgi.h"
#include "core/hex.h"
#include "core/util.h"
#include "evm/simple_account.h"
#include "wallet/wallets.h"

static int	wallet_create(struct bp_req *);
static int	wallet_get(struct bp_req *);
static int	wallet_list(struct bp_req *);
static void	*thread_init(const struct bp_config *, struct bp_db *);
static void	 thread_fini(void *);

/* Compute units: create and get read the chain, list only the database (docs/wallets.md). */
static const struct bp_route routes[] = {
	{ "POST", "/v1/wallets/create", wallet_create, BP_SCOPE_WALLETS, 10, 0 },
	{ "GET", "/v1/wallets/:address", wallet_get, BP_SCOPE_WALLETS, 5, 0 },
	{ "GET", "/v1/wallets", wallet_list, BP_SCOPE_WALLETS, 5, 0 },
};

static const struct bp_app app = { "wallets", routes, BP_NITEMS(routes), NULL, NULL };
static const struct bp_app_threads threads = { thread_init, thread_fini };

int	main(void);

int
main(void)
{
	return bp_fcgi_main_threads(&app, &threads);
}

/* Each thread's wallet context (r->ctx): upstream pool and caches, no request state. */
static void *
thread_init(const struct bp_config *cfg, struct bp_db *db)
{
	(void)db;
	return bp_wallets_new(cfg);
}

static void
thread_fini(void *ctx)
{
	bp_wallets_free(ctx);
}

/* ---- answers ---- */

enum wallet_view {
	VIEW_CREATE,	/* 0: create's answer */
	VIEW_GET,	/* 1: get's answer, with nonce and deployment */
	VIEW__MAX
};

/* Appends ,"name":"value" (value escaped) to b; 0 or -1. */
static int
put_str(struct bp_buf *b, const char *name, const char *value)
{
	return bp_buf_adds(b, ",\"") == -1 || bp_buf_adds(b, name) == -1 ||
	    bp_buf_adds(b, "\":\"") == -1 || bp_buf_json_str(b, value) == -1 ||
	    bp_buf_adds(b, "\"") == -1 ? -1 : 0;
}

/* Appends ,"name":"ISO 8601 time" or ,"name":null when t < 0; 0 or -1. */
static int
put_time(struct bp_buf *b, const char *name, int64_t t)
{
	char iso[32];

	if (t < 0)
		return bp_buf_printf(b, ",\"%s\":null", name);
	bp_time_iso((time_t)t, iso, sizeof(iso));
	return put_str(b, name, iso);
}

/* Answers status with w as JSON, written straight into the response (the hot path of get). */
static int
reply_wallet(struct bp_req *r, int status, const struct bp_wallet *w, enum wallet_view view)
{
	struct bp_buf *b = &r->out;
	uint8_t ic[BP_SIMPLE_ACCOUNT_INIT_CODE_LEN];
	char s[2 * BP_SIMPLE_ACCOUNT_INIT_CODE_LEN + 3];
	int fail;

	bp_buf_reset(b);
	fail = bp_buf_adds(b, "{\"address\":\"") == -1 || bp_buf_adds(b, w->address_cs) == -1 ||
	    bp_buf_adds(b, "\"") == -1;
	fail = fail || put_str(b, "owner", w->owner_cs) == -1;
	fail = fail || put_str(b, "chain", w->chain) == -1;
	fail = fail || put_str(b, "network", w->network) == -1;
	fail = fail || put_str(b, "status", bp_wallets_status_name(w->status)) == -1;
	fail = fail || put_str(b, "factory", w->factory_cs) == -1;
	bp_simple_account_format_salt(w->salt, s, sizeof(s));
	fail = fail || put_str(b, "salt", s) == -1;
	if (view == VIEW_GET)
		fail = fail || (w->nonce >= 0 ? bp_buf_printf(b, ",\"nonce\":%lld",
		    (long long)w->nonce) : bp_buf_adds(b, ",\"nonce\":null")) == -1;
	fail = fail || put_time(b, "created_at", w->created_at) == -1;
	if (w->status == BP_WALLET_COUNTERFACTUAL) {
		/* What the first UserOperation carries to deploy the wallet. */
		bp_simple_account_init_code(w->factory, w->owner, w->salt, ic);
		bp_hex_encode(ic, sizeof(ic), s, sizeof(s));
		fail = fail || put_str(b, "init_code", s) == -1;
	} else if (view == VIEW_GET) {
		fail = fail || put_time(b, "deployed_at", w->deployed_at) == -1;
		fail = fail || (w->deploy_tx[0] != '\0' ? put_str(b, "deploy_tx", w->deploy_tx) :
		    bp_buf_adds(b, ",\"deploy_tx\":null")) == -1;
	}
	fail = fail || bp_buf_adds(b, "}") == -1;
	if (fail)
		return bp_error(r, 500, "internal_error", "response too large");
	r->status = status;
	r->content_type = "application/json";
	return status;
}

/* ---- request validation ---- */

/*
 * The string member name of body: *out is NULL when absent (and not required). Returns 0, or the
 * 400 answered in r (wrong type, empty, too long). NULs were refused before (bp_json_find_nul).
 */
static int
body_string(struct bp_req *r, const cJSON *body, const char *name, int required, size_t max,
    const char **out)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(body, name);

	*out = NULL;
	if (j == NULL) {
		if (required)
			return bp_error(r, 400, "invalid_request", "%s is required", name);
		return 0;
	}
	if (!cJSON_IsString(j) || j->valuestring == NULL)
		return bp_error(r, 400, "invalid_request", "%s must be a string%s", name,
		    strcmp(name, "salt") == 0 ?
		    ": a uint256 in decimal or 0x-prefixed hex" : "");
	if (j->valuestring[0] == '\0')
		return bp_error(r, 400, "invalid_request", "%s must not be empty", name);
	if (strlen(j->valuestring) > max)
		return bp_error(r, 400, "invalid_request", "%s is longer than %zu characters",
		    name, max);
	*out = j->valuestring;
	return 0;
}

/* ---- handlers ---- */

/* POST /v1/wallets/create {owner, chain, salt?, network?}: 201 new, 200 the existing one. */
static int
wallet_create(struct bp_req *r)
{
	struct bp_wallets_create_req req;
	struct bp_error err;
	struct bp_wallet w;
	cJSON *body;
	char nulname[BP_NAME_MAX];
	int created, rc;

	if ((body = bp_req_json(r)) == NULL)
		return r->status;
	if (!cJSON_IsObject(body))
		rc = bp_error(r, 400, "invalid_request", "request body must be a JSON object");
	else if (bp_json_find_nul(r->body, r->body_len, nulname, sizeof(nulname)))
		rc = bp_error(r, 400, "invalid_request", "%s must not contain NUL characters",
		    nulname[0] != '\0' ? nulname : "the request body");
	/* Unknown members are ignored (docs/decisions.md). */
	else if ((rc = body_string(r, body, "owner", 1, 64, &req.owner)) != 0 ||
	    (rc = body_string(r, body, "chain", 1, BP_NAME_MAX - 1, &req.chain)) != 0 ||
	    (rc = body_string(r, body, "network", 0, BP_NAME_MAX - 1, &req.network)) != 0 ||
	    (rc = body_string(r, body, "salt", 0, 128, &req.salt)) != 0)
		;
	else if (bp_wallets_create(r->ctx, r->db, &r->key, &req, &w, &created, &err) == -1)
		rc = bp_error_reply(r, &err);
	else
		rc = reply_wallet(r, created ? 201 : 200, &w, VIEW_CREATE);
	cJSON_Delete(body);
	return rc;
}

/* GET /v1/wallets/{address}[?chain=]: the wallet with its nonce and deployment. */
static int
wallet_get(struct bp_req *r)
{
	struct bp_error err;
	struct bp_wallet w;

	if (bp_wallets_get(r->ctx, r->db, &r->key, bp_req_param(r, "address"),
	    bp_req_query(r, "chain"), &w, &err) == -1)
		return bp_error_reply(r, &err);
	return reply_wallet(r, 200, &w, VIEW_GET);
}

/* A list answer being written: the response and the items so far. */
struct list_out {
	struct bp_buf	*b;
	size_t		 n;
};

/* Appends one wallet of a list to the response; 0 or -1 (full). */
static int
list_item(const struct bp_wallets_item *it, void *arg)
{
	struct list_out *o = arg;
	struct bp_buf *b = o->b;

	return bp_buf_adds(b, o->n++ > 0 ? "," : "") == -1 ||
	    bp_buf_adds(b, "{\"address\":\"") == -1 || bp_buf_json_str(b, it->address) == -1 ||
	    bp_buf_adds(b, "\"") == -1 || put_str(b, "owner", it->owner) == -1 ||
	    put_str(b, "chain", it->chain) == -1 || put_str(b, "network", it->network) == -1 ||
	    put_str(b, "status", bp_wallets_status_name(it->status)) == -1 ||
	    put_time(b, "created_at", it->created_at) == -1 || bp_buf_adds(b, "}") == -1 ? -1 : 0;
}

/* GET /v1/wallets?page=&limit=&chain=: the account's wallets, newest first. */
static int
wallet_list(struct bp_req *r)
{
	struct bp_error err;
	struct list_out o = { &r->out, 0 };
	int64_t page, limit, total;

	if (bp_req_paging(r, BP_WALLETS_LIMIT_DEFAULT, &page, &limit) == -1)
		return r->status;
	bp_buf_reset(&r->out);
	if (bp_buf_adds(&r->out, "{\"wallets\":[") == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	if (bp_wallets_list(r->ctx, r->db, &r->key, bp_req_query(r, "chain"), page, limit,
	    list_item, &o, &total, &err) == -1)
		return bp_error_reply(r, &err);
	if (bp_buf_printf(&r->out, "],\"page\":%lld,\"limit\":%lld,\"total\":%lld}",
	    (long long)page, (long long)limit, (long long)total) == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	r->status = 200;
	r->content_type = "application/json";
	return 200;
}
