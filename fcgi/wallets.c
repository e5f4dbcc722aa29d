/*
 * /v1/wallets: ERC-4337 smart wallets (SPEC.md sections 2, 3 and 4; docs/wallets.md). The
 * routes and their handlers: each parses the request, calls one function of lib/wallet/wallets.h (the
 * rules, the table, the chain reads) and renders its answer.
 */
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/fcgi.h"
#include "core/util.h"
#include "core/valid.h"
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

/* Answers status with w's JSON as view, written straight into the response. */
static int
reply_wallet(struct bp_req *r, int status, const struct bp_wallet *w, enum bp_wallets_view view)
{
	bp_buf_reset(&r->out);
	if (bp_wallets_json(w, view, &r->out) == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	return bp_reply_out(r, status);
}

/* ---- handlers ---- */

/* The members of a create body; unknown members are ignored (docs/decisions.md). */
enum create_field {
	CREATE_OWNER,	/* 0 */
	CREATE_CHAIN,	/* 1 */
	CREATE_NETWORK,	/* 2 */
	CREATE_SALT,	/* 3 */
	CREATE_VERSION,	/* 4 */
	CREATE__MAX
};

static const struct bp_valid_field create_fields[CREATE__MAX] = {
	{ "owner", BP_VALID_STRING, 1, 64, NULL },			/* CREATE_OWNER */
	{ "chain", BP_VALID_STRING, 1, BP_NAME_MAX - 1, NULL },		/* CREATE_CHAIN */
	{ "network", BP_VALID_STRING, 0, BP_NAME_MAX - 1, NULL },	/* CREATE_NETWORK */
	{ "salt", BP_VALID_STRING, 0, 128,				/* CREATE_SALT */
	    "a uint256 in decimal or 0x-prefixed hex" },
	{ "entry_point_version", BP_VALID_STRING, 0, 8,			/* CREATE_VERSION */
	    "\"0.6\", \"0.7\" or \"0.8\"" },
};

/*
 * POST /v1/wallets/create {owner, chain, salt?, network?, entry_point_version?}: 201 new, 200
 * the existing one.
 */
static int
wallet_create(struct bp_req *r)
{
	struct bp_wallets_create_req req;
	struct bp_error err;
	struct bp_wallet w;
	const char *v[CREATE__MAX];
	cJSON *body;
	int created, rc;

	if ((body = bp_req_json_object(r)) == NULL)
		return r->status;
	if ((rc = bp_req_valid(r, body, create_fields, CREATE__MAX, v)) != 0)
		;
	else if (req.owner = v[CREATE_OWNER], req.chain = v[CREATE_CHAIN],
	    req.network = v[CREATE_NETWORK], req.salt = v[CREATE_SALT],
	    req.entry_point_version = v[CREATE_VERSION],
	    bp_wallets_create(r->ctx, r->db, &r->key, &req, &w, &created, &err) == -1)
		rc = bp_error_reply(r, &err);
	else
		rc = reply_wallet(r, created ? 201 : 200, &w, BP_WALLETS_VIEW_CREATE);
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
	return reply_wallet(r, 200, &w, BP_WALLETS_VIEW_GET);
}

/* GET /v1/wallets?page=&limit=&chain=: the account's wallets, newest first. */
static int
wallet_list(struct bp_req *r)
{
	struct bp_error err;
	int64_t page, limit;

	if (bp_req_paging(r, BP_WALLETS_LIMIT_DEFAULT, &page, &limit) == -1)
		return r->status;
	bp_buf_reset(&r->out);
	if (bp_wallets_list_json(r->ctx, r->db, &r->key, bp_req_query(r, "chain"), page, limit,
	    &r->out, &err) == -1)
		return bp_error_reply(r, &err);
	return bp_reply_out(r, 200);
}
