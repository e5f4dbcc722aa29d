/*
 * /v1/gas: gas prices, sponsorship policies and sponsorship (SPEC.md sections 2-5; docs/gas.md).
 * A route table and thin handlers: estimates live in lib/gas/gas.c, rules and their counting in
 * lib/gas/policy.c, the VerifyingPaymaster signature in lib/gas/paymaster.c, UserOperations in
 * lib/evm/userop.c, USD prices in lib/token/price.c.
 */
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/config.h"
#include "core/db.h"
#include "core/db_batch.h"
#include "core/fcgi.h"
#include "core/util.h"
#include "core/valid.h"
#include "gas/gas.h"
#include "gas/paymaster.h"
#include "gas/policy.h"
#include "gas/policy_cache.h"
#include "gas/sponsor.h"
#include "net/upstream.h"

static int	gas_prices(struct bp_req *);
static int	policy_create(struct bp_req *);
static int	policy_list(struct bp_req *);
static int	policy_get(struct bp_req *);
static int	policy_patch(struct bp_req *);
static int	policy_delete(struct bp_req *);
static int	sponsor(struct bp_req *);
static int	app_init(const struct bp_config *, struct bp_db *);
static void	app_fini(void);

/* Compute units: reads 5, writes 10, a sponsorship (a chain read and a signature) 20. */
static const struct bp_route routes[] = {
	{ "POST", "/v1/gas/policies", policy_create, BP_SCOPE_GAS, 10, 0 },
	{ "GET", "/v1/gas/policies", policy_list, BP_SCOPE_GAS, 5, 0 },
	{ "GET", "/v1/gas/policies/:id", policy_get, BP_SCOPE_GAS, 5, 0 },
	{ "PATCH", "/v1/gas/policies/:id", policy_patch, BP_SCOPE_GAS, 10, 0 },
	{ "DELETE", "/v1/gas/policies/:id", policy_delete, BP_SCOPE_GAS, 10, 0 },
	{ "POST", "/v1/gas/sponsor", sponsor, BP_SCOPE_GAS, 20, 0 },
	{ "GET", "/v1/gas/:chain/prices", gas_prices, BP_SCOPE_DATA_READ, 5, 0 },
};

static const struct bp_app app = { "gas", routes, BP_NITEMS(routes), app_init, app_fini };

int	main(void);

int
main(void)
{
	return bp_fcgi_main_threads(&app, &bp_upstream_threads);
}

#define WHY_MAX		512
#define SPONSOR_BATCH	32	/* sponsorships a transaction at most (db_batch.h) */

/*
 * Per process, set once at init and read-only while the threads serve: the config and each
 * network's signer key; the group commit of the threads' sponsorships and their copies of the
 * policies (each locks itself). Each
 * thread's upstream pool is its context (r->ctx).
 */
static const struct bp_config *config;
static struct bp_paymaster_keys signer;
static struct bp_sponsor_shared shared;

static int
app_init(const struct bp_config *cfg, struct bp_db *db)
{
	(void)db;
	config = cfg;
	bp_paymaster_keys_load(&signer, cfg);
	shared.batch = bp_db_batch_new(SPONSOR_BATCH);
	shared.policies = bp_policy_cache_new();
	return shared.batch == NULL || shared.policies == NULL ? -1 : 0;
}

static void
app_fini(void)
{
	bp_paymaster_keys_wipe(&signer);
	bp_db_batch_free(shared.batch);
	bp_policy_cache_free(shared.policies);
}

/* ---- gas prices ---- */

/* GET /v1/gas/{chain}/prices[?network=]: the latest sample, sampled now when stale. */
static int
gas_prices(struct bp_req *r)
{
	const struct bp_network *net;
	int rc;

	if ((net = bp_req_path_network(r)) == NULL)
		return r->status;
	bp_buf_reset(&r->out);
	if ((rc = bp_gas_prices(r->db, r->ctx, net, config->gas_sample_max_age, &r->out)) == 0)
		return bp_reply_out(r, 200);
	if (rc == 1)
		return bp_error(r, 500, "internal_error", "the %s %s node did not answer; retry later",
		    net->chain, net->network);
	return bp_error(r, 500, "internal_error", "database error");
}

/* ---- policies ---- */

static int
reply_policy(struct bp_req *r, int status, const struct bp_policy *p, int spend)
{
	struct bp_policy_spend sp;

	if (spend && bp_policy_spend(r->db, p->id, &sp) != 1)
		return bp_error(r, 500, "internal_error", "database error");
	bp_buf_reset(&r->out);
	if (bp_policy_json(p, spend ? &sp : NULL, &r->out) == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	return bp_reply_out(r, status);
}

/*
 * POST /v1/gas/policies {name, chain, rules, network?}: 201 with the new policy, active, on the
 * network of the key's kind (a test key's chain test network, a live key's mainnet) or the one
 * named, which must be of the key's kind (403): a key makes only policies it can see.
 */
static int
policy_create(struct bp_req *r)
{
	const struct bp_network *net;
	struct bp_policy_input in;
	struct bp_policy p;
	char why[WHY_MAX];
	cJSON *body;
	int rc;

	if ((body = bp_req_json_object(r)) == NULL)
		return r->status;
	if (bp_policy_input(config, body, 1, &in, why, sizeof(why)) == -1)
		rc = bp_error(r, 400, "invalid_request", "%s", why);
	else if ((net = bp_req_evm_network(r, in.chain, in.network)) == NULL)
		rc = r->status;
	else if (net->testnet != r->key.test)
		rc = bp_error(r, 403, "forbidden", "live keys may not use %s %s (a test network)",
		    net->chain, net->network);
	else if (bp_policy_create(r->db, r->key.account_id, in.name, net, &in.rules, &p) != 1)
		rc = bp_error(r, 500, "internal_error", "database error");
	else
		rc = reply_policy(r, 201, &p, 0);
	cJSON_Delete(body);
	return rc;
}

/* GET /v1/gas/policies?page=&limit=&status=: the account's policies of the key's kind. */
static int
policy_list(struct bp_req *r)
{
	const char *s = bp_req_query(r, "status");
	enum bp_policy_status st;
	int64_t page, limit;

	if (bp_req_paging(r, 25, &page, &limit) == -1)
		return r->status;
	if (s != NULL && bp_policy_status_parse(s, &st) == -1)
		return bp_error(r, 400, "invalid_request", "status must be active or paused");
	bp_buf_reset(&r->out);
	if (bp_policy_list(r->db, &r->key, s ? &st : NULL, page, limit, &r->out) == -1)
		return bp_error(r, 500, "internal_error", "database error");
	return bp_reply_out(r, 200);
}

/*
 * 1 with p, else the answer set in r: 404 for another account's or a deleted policy, 403 for
 * one of the other kind (test or live network) than the key's. From the copies in cache when
 * not NULL (a sponsorship, which checks its copy when it records), else as stored.
 */
static int
find_policy(struct bp_req *r, struct bp_policy_cache *cache, const char *id, struct bp_policy *p)
{
	char why[WHY_MAX];
	int found = bp_policy_cache_find(cache, r->db, &r->key, id,
	    cache != NULL ? bp_limits_generation(r->lim) : 0, p, why, sizeof(why));

	if (found == -1)
		bp_error(r, 500, "internal_error", "database error");
	else if (found == 0)
		bp_error(r, 404, "not_found", "no gas policy %.40s", id);
	else if (found == BP_POLICY_OTHER_KIND)
		bp_error(r, 403, "forbidden", "%s", why);
	return found;
}

/* GET /v1/gas/policies/{id}: the policy and its spend. */
static int
policy_get(struct bp_req *r)
{
	struct bp_policy p;

	if (find_policy(r, NULL, bp_req_param(r, "id"), &p) != 1)
		return r->status;
	return reply_policy(r, 200, &p, 1);
}

/* PATCH /v1/gas/policies/{id} {name?, rules?, status?}. */
static int
policy_patch(struct bp_req *r)
{
	struct bp_policy_input in;
	struct bp_policy p;
	char why[WHY_MAX];
	cJSON *body;
	int rc, found;

	if ((body = bp_req_json_object(r)) == NULL)
		return r->status;
	if (bp_policy_input(config, body, 0, &in, why, sizeof(why)) == -1)
		rc = bp_error(r, 400, "invalid_request", "%s", why);
	else if (find_policy(r, NULL, bp_req_param(r, "id"), &p) != 1)
		rc = r->status;
	else if ((found = bp_policy_update(r->db, r->key.account_id, bp_req_param(r, "id"),
	    in.name, in.has_rules ? &in.rules : NULL, in.has_status ? &in.status : NULL, &p)) == -1)
		rc = bp_error(r, 500, "internal_error", "database error");
	else if (found == 0)
		rc = bp_error(r, 404, "not_found", "no gas policy %.40s", bp_req_param(r, "id"));
	else {
		/* Every process's (and head's) copy of it is behind now (policy_cache.h). */
		bp_limits_bump_generation(r->lim);
		rc = reply_policy(r, 200, &p, 0);
	}
	cJSON_Delete(body);
	return rc;
}

/* DELETE /v1/gas/policies/{id}: irreversible; {id, deleted: true}. */
static int
policy_delete(struct bp_req *r)
{
	const char *id = bp_req_param(r, "id");
	struct bp_policy p;
	int found;

	if (find_policy(r, NULL, id, &p) != 1)
		return r->status;
	if ((found = bp_policy_delete(r->db, r->key.account_id, id)) == -1)
		return bp_error(r, 500, "internal_error", "database error");
	if (found == 0)
		return bp_error(r, 404, "not_found", "no gas policy %.40s", id);
	bp_limits_bump_generation(r->lim);	/* the copies of it are behind (policy_cache.h) */
	bp_buf_reset(&r->out);
	if (bp_buf_adds(&r->out, "{\"id\":\"") == -1 || bp_buf_json_str(&r->out, id) == -1 ||
	    bp_buf_adds(&r->out, "\",\"deleted\":true}") == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	return bp_reply_out(r, 200);
}

/* ---- sponsorship ---- */

/* The members of a sponsorship's body; user_operation is lib/evm/userop.c's to read. */
enum sponsor_field {
	SPONSOR_CHAIN,		/* 0 */
	SPONSOR_NETWORK,	/* 1 */
	SPONSOR_POLICY_ID,	/* 2 */
	SPONSOR_ENTRY_POINT,	/* 3 */
	SPONSOR__MAX
};

static const struct bp_valid_field sponsor_fields[SPONSOR__MAX] = {
	{ "chain", BP_VALID_STRING, 1, 0, NULL },	/* SPONSOR_CHAIN */
	{ "network", BP_VALID_STRING, 0, 0, NULL },	/* SPONSOR_NETWORK */
	{ "policy_id", BP_VALID_STRING, 1, 0, NULL },	/* SPONSOR_POLICY_ID */
	{ "entry_point", BP_VALID_STRING, 0, 0, NULL },	/* SPONSOR_ENTRY_POINT */
};

/* POST /v1/gas/sponsor {chain, policy_id, user_operation, network?, entry_point?}. */
static int
sponsor(struct bp_req *r)
{
	struct bp_sponsor_result res;
	struct bp_policy p;
	const struct bp_network *net;
	const char *v[SPONSOR__MAX];
	const uint8_t *key;
	enum bp_ep_version version;
	int rc;
	cJSON *body;

	if ((body = bp_req_json_object(r)) == NULL)
		return r->status;
	if ((rc = bp_req_valid(r, body, sponsor_fields, SPONSOR__MAX, v)) != 0)
		;
	else if (find_policy(r, shared.policies, v[SPONSOR_POLICY_ID], &p) != 1 ||
	    (net = bp_req_evm_network(r, v[SPONSOR_CHAIN], v[SPONSOR_NETWORK])) == NULL)
		rc = r->status;
	else if (key = bp_paymaster_keys_get(&signer, config, net),
	    bp_sponsor_allowed(&p, net, key, v[SPONSOR_ENTRY_POINT], &version, &res) != 0)
		rc = bp_error(r, res.status, res.code, "%s: %s", res.field, res.message);
	else if (bp_sponsor(r->db, &shared, r->ctx, config, net, key, &r->key, &p, version,
	    cJSON_GetObjectItemCaseSensitive(body, "user_operation"), &res) != 200)
		rc = bp_error(r, res.status, res.code, "%s", res.message);
	else if (bp_buf_reset(&r->out), bp_sponsor_json(&res, &r->out) == -1)
		rc = bp_error(r, 500, "internal_error", "response too large");
	else
		rc = bp_reply_out(r, 200);
	cJSON_Delete(body);
	return rc;
}
