/*
 * /v1/gas: gas prices, sponsorship policies and sponsorship (SPEC.md sections 2-5; docs/gas.md).
 * A route table and thin handlers: estimates live in lib/gas.c, rules and their counting in
 * lib/policy.c, the VerifyingPaymaster signature in lib/paymaster.c, UserOperations in
 * lib/evm/userop.c, USD prices in lib/price.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <cjson/cJSON.h>

#include "config.h"
#include "db.h"
#include "evm/address.h"
#include "evm/hex.h"
#include "evm/userop.h"
#include "fcgi.h"
#include "gas.h"
#include "log.h"
#include "paymaster.h"
#include "policy.h"
#include "price.h"
#include "upstream.h"
#include "util.h"

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
	return bp_fcgi_main(&app);
}

#define LIST_LIMIT_MAX	100
#define LIST_PAGE_MAX	1000000000
#define WHY_MAX		512

/* Per process, set once at init: the config, the upstream pool, each network's signer key. */
static const struct bp_config *config;
static struct bp_upstream *upstream;
static struct {
	int	ok;
	uint8_t	key[32];
} signer[BP_MAX_NETWORKS];

static int
app_init(const struct bp_config *cfg, struct bp_db *db)
{
	uint8_t addr[20], want[20];
	size_t i;

	(void)db;
	config = cfg;
	for (i = 0; i < cfg->nnets; i++) {
		const struct bp_network *n = &cfg->nets[i];

		if (n->paymaster_key_file[0] == '\0' ||
		    bp_paymaster_key_load(n->paymaster_key_file, signer[i].key, addr) == -1)
			continue;
		if (n->paymaster_signer[0] != '\0' && (bp_addr_parse(n->paymaster_signer,
		    strlen(n->paymaster_signer), 0, want) == -1 || memcmp(want, addr, 20) != 0)) {
			bp_err("%s.%s: paymaster_key_file is not the key of paymaster_signer %s",
			    n->chain, n->network, n->paymaster_signer);
			continue;
		}
		signer[i].ok = 1;
	}
	return (upstream = bp_upstream_new(cfg)) == NULL ? -1 : 0;
}

static void
app_fini(void)
{
	OPENSSL_cleanse(signer, sizeof(signer));
	bp_upstream_free(upstream);
	upstream = NULL;
}

/* ---- small helpers ---- */

static int
reply_buf(struct bp_req *r, int status)
{
	r->status = status;
	r->content_type = "application/json";
	return status;
}

/* The JSON object body, NULs refused; NULL with the 400 set in r. */
static cJSON *
body_object(struct bp_req *r)
{
	char nul[BP_NAME_MAX];
	cJSON *body;

	if ((body = bp_req_json(r)) == NULL)
		return NULL;
	if (!cJSON_IsObject(body))
		bp_error(r, 400, "invalid_request", "request body must be a JSON object");
	else if (bp_json_find_nul(r->body, r->body_len, nul, sizeof(nul)))
		bp_error(r, 400, "invalid_request", "%s must not contain NUL characters",
		    nul[0] != '\0' ? nul : "the request body");
	else
		return body;
	cJSON_Delete(body);
	return NULL;
}

/* The string member name (NULL when absent and optional); 0 or the 400 set in r. */
static int
member(struct bp_req *r, const cJSON *body, const char *name, int required, const char **out)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(body, name);

	*out = NULL;
	if (j == NULL)
		return required ? bp_error(r, 400, "invalid_request", "%s is required", name) : 0;
	if (!cJSON_IsString(j) || j->valuestring[0] == '\0')
		return bp_error(r, 400, "invalid_request", "%s must be a non-empty string", name);
	*out = j->valuestring;
	return 0;
}

/* A name of 1 to 100 characters (UTF-8 code points). */
static int
check_name(struct bp_req *r, const char *s)
{
	size_t chars = 0;

	for (; *s != '\0'; s++)
		chars += ((unsigned char)*s & 0xc0) != 0x80;
	if (chars > BP_POLICY_NAME_CHARS)
		return bp_error(r, 400, "invalid_request", "name must be 1 to %d characters",
		    BP_POLICY_NAME_CHARS);
	return 0;
}

/* The EVM network {chain} (and ?network=) means for this key; NULL with the answer set. */
static const struct bp_network *
network_of(struct bp_req *r, const char *chain, const char *network)
{
	const struct bp_network *net;

	net = bp_config_rest_network(config, chain, r->key.test, network);
	if (net == NULL || net->kind != BP_CHAIN_EVM)
		bp_error(r, 400, "invalid_request", "chain: no EVM network \"%s%s%s\" for this key",
		    chain, network ? "." : "", network ? network : "");
	else if (r->key.test && !net->testnet)
		bp_error(r, 403, "forbidden", "test keys may not use %s %s (a mainnet)",
		    net->chain, net->network);
	else
		return net;
	return NULL;
}

/* 1 when the config has an EVM network of chain (a policy names a chain, not a network). */
static int
evm_chain(const char *chain)
{
	size_t i;

	for (i = 0; i < config->nnets; i++)
		if (strcmp(config->nets[i].chain, chain) == 0 &&
		    config->nets[i].kind == BP_CHAIN_EVM)
			return 1;
	return 0;
}

/* ---- gas prices ---- */

/* GET /v1/gas/{chain}/prices[?network=]: the latest sample, sampled now when stale. */
static int
gas_prices(struct bp_req *r)
{
	const struct bp_network *net;
	struct bp_gas_sample s;
	int64_t at = 0;
	int found;

	if ((net = network_of(r, bp_req_param(r, "chain"), bp_req_query(r, "network"))) == NULL)
		return r->status;
	bp_buf_reset(&r->out);
	if ((found = bp_gas_load(r->db, net, &r->out, &at)) == -1)
		return bp_error(r, 500, "internal_error", "database error");
	if (found && (int64_t)time(NULL) - at <= config->gas_sample_max_age)
		return reply_buf(r, 200);
	if (bp_gas_sample_chain(upstream, net, &s) == -1)
		return found ? reply_buf(r, 200) : bp_error(r, 500, "internal_error",
		    "the %s %s node did not answer; retry later", net->chain, net->network);
	if (bp_gas_store(r->db, net, &s) == -1)
		bp_warn("%s.%s: the gas sample was not stored", net->chain, net->network);
	bp_buf_reset(&r->out);
	if (bp_gas_json(&s, net->chain, &r->out) == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	return reply_buf(r, 200);
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
	return reply_buf(r, status);
}

/* Reads rules from body into *rules when present; 0, or the 400 naming the key. */
static int
body_rules(struct bp_req *r, const cJSON *body, struct bp_policy_rules *rules, int *present)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(body, "rules");
	char why[WHY_MAX];

	*present = j != NULL;
	if (j != NULL && bp_policy_rules_parse(j, rules, why, sizeof(why)) == -1)
		return bp_error(r, 400, "invalid_request", "%s", why);
	return 0;
}

/* POST /v1/gas/policies {name, chain, rules}: 201 with the new policy, active. */
static int
policy_create(struct bp_req *r)
{
	struct bp_policy_rules rules;
	struct bp_policy p;
	const char *name, *chain;
	cJSON *body;
	int rc, present;

	if ((body = body_object(r)) == NULL)
		return r->status;
	if ((rc = member(r, body, "name", 1, &name)) != 0 || (rc = check_name(r, name)) != 0 ||
	    (rc = member(r, body, "chain", 1, &chain)) != 0 ||
	    (rc = body_rules(r, body, &rules, &present)) != 0)
		goto out;
	if (!present)
		rc = bp_error(r, 400, "invalid_request", "rules is required");
	else if (!evm_chain(chain))
		rc = bp_error(r, 400, "invalid_request", "chain: no EVM chain \"%.32s\"", chain);
	else if (bp_policy_create(r->db, r->key.account_id, name, chain, &rules, &p) != 1)
		rc = bp_error(r, 500, "internal_error", "database error");
	else
		rc = reply_policy(r, 201, &p, 0);
out:
	cJSON_Delete(body);
	return rc;
}

/* GET /v1/gas/policies?page=&limit=&status=: the account's policies, newest first. */
static int
policy_list(struct bp_req *r)
{
	const char *s = bp_req_query(r, "status");
	enum bp_policy_status st;
	int64_t page, limit;

	if (bp_req_query_int(r, "page", 1, 1, LIST_PAGE_MAX, &page) == -1 ||
	    bp_req_query_int(r, "limit", 25, 1, LIST_LIMIT_MAX, &limit) == -1)
		return r->status;
	if (s != NULL && bp_policy_status_parse(s, &st) == -1)
		return bp_error(r, 400, "invalid_request", "status must be active or paused");
	bp_buf_reset(&r->out);
	if (bp_policy_list(r->db, r->key.account_id, s ? &st : NULL, page, limit, &r->out) == -1)
		return bp_error(r, 500, "internal_error", "database error");
	return reply_buf(r, 200);
}

/* 1 with p, else the answer (404 for another account's or a deleted policy) set in r. */
static int
find_policy(struct bp_req *r, const char *id, struct bp_policy *p)
{
	int found = bp_policy_get(r->db, r->key.account_id, id, p);

	if (found == -1)
		bp_error(r, 500, "internal_error", "database error");
	else if (found == 0)
		bp_error(r, 404, "not_found", "no gas policy %.40s", id);
	return found;
}

/* GET /v1/gas/policies/{id}: the policy and its spend. */
static int
policy_get(struct bp_req *r)
{
	struct bp_policy p;

	if (find_policy(r, bp_req_param(r, "id"), &p) != 1)
		return r->status;
	return reply_policy(r, 200, &p, 1);
}

/* PATCH /v1/gas/policies/{id} {name?, rules?, status?}. */
static int
policy_patch(struct bp_req *r)
{
	struct bp_policy_rules rules;
	enum bp_policy_status st;
	struct bp_policy p;
	const char *name, *status;
	cJSON *body;
	int rc, present, found;

	if ((body = body_object(r)) == NULL)
		return r->status;
	if ((rc = member(r, body, "name", 0, &name)) != 0 ||
	    (name != NULL && (rc = check_name(r, name)) != 0) ||
	    (rc = member(r, body, "status", 0, &status)) != 0 ||
	    (rc = body_rules(r, body, &rules, &present)) != 0)
		goto out;
	if (status != NULL && bp_policy_status_parse(status, &st) == -1)
		rc = bp_error(r, 400, "invalid_request", "status must be active or paused");
	else if (name == NULL && status == NULL && !present)
		rc = bp_error(r, 400, "invalid_request", "give at least one of name, rules, status");
	else if ((found = bp_policy_update(r->db, r->key.account_id, bp_req_param(r, "id"), name,
	    present ? &rules : NULL, status ? &st : NULL, &p)) == -1)
		rc = bp_error(r, 500, "internal_error", "database error");
	else if (found == 0)
		rc = bp_error(r, 404, "not_found", "no gas policy %.40s", bp_req_param(r, "id"));
	else
		rc = reply_policy(r, 200, &p, 0);
out:
	cJSON_Delete(body);
	return rc;
}

/* DELETE /v1/gas/policies/{id}: irreversible; {id, deleted: true}. */
static int
policy_delete(struct bp_req *r)
{
	const char *id = bp_req_param(r, "id");
	int found = bp_policy_delete(r->db, r->key.account_id, id);

	if (found == -1)
		return bp_error(r, 500, "internal_error", "database error");
	if (found == 0)
		return bp_error(r, 404, "not_found", "no gas policy %.40s", id);
	bp_buf_reset(&r->out);
	if (bp_buf_adds(&r->out, "{\"id\":\"") == -1 || bp_buf_json_str(&r->out, id) == -1 ||
	    bp_buf_adds(&r->out, "\",\"deleted\":true}") == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	return reply_buf(r, 200);
}

/* ---- sponsorship ---- */

static int
reply_grant(struct bp_req *r, const struct bp_paymaster_grant *g, const struct bp_u256 *usd)
{
	char pm[BP_ADDR_STR_MAX], data[2 * BP_PAYMASTER_PND_LEN + 3], u[BP_U256_UNITS_MAX];
	char pnd[2 * BP_PAYMASTER_PND_LEN + 3], h[67];
	struct bp_buf *b = &r->out;

	bp_addr_format_checksum(g->pnd, pm, sizeof(pm));
	bp_hex_encode(g->pnd + 20, BP_PAYMASTER_DATA_LEN, data, sizeof(data));
	bp_hex_encode(g->pnd, BP_PAYMASTER_PND_LEN, pnd, sizeof(pnd));
	bp_hex_encode(g->op_hash, 32, h, sizeof(h));
	if (usd != NULL)
		bp_u256_format_units(usd, BP_PRICE_USD_DECIMALS, u, sizeof(u));
	bp_buf_reset(b);
	if (bp_buf_printf(b, "{\"paymaster\":\"%s\",\"paymasterData\":\"%s\","
	    "\"paymasterVerificationGasLimit\":\"0x%x\",\"paymasterPostOpGasLimit\":\"0x%x\","
	    "\"sponsored_gas_usd\":%s%s%s,\"paymasterAndData\":\"%s\",\"valid_until\":%llu,"
	    "\"valid_after\":%llu,\"user_op_hash\":\"%s\"}", pm, data,
	    BP_PAYMASTER_VERIFICATION_GAS, BP_PAYMASTER_POSTOP_GAS, usd ? "\"" : "",
	    usd ? u : "null", usd ? "\"" : "", pnd, (unsigned long long)g->valid_until,
	    (unsigned long long)g->valid_after, h) == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	return reply_buf(r, 200);
}

/* POST /v1/gas/sponsor {chain, policy_id, user_operation, network?}. */
static int
sponsor(struct bp_req *r)
{
	struct bp_userop_call calls[BP_USEROP_CALLS_MAX];
	struct bp_paymaster_grant g;
	struct bp_policy p;
	struct bp_userop op;
	struct bp_price price;
	struct bp_u256 wei, usd;
	const struct bp_network *net;
	const char *chain, *network, *id, *field;
	char why[WHY_MAX];
	int64_t now = (int64_t)time(NULL);
	int rc, ncalls, have_usd, refused;
	cJSON *body;

	memset(&op, 0, sizeof(op));
	if ((body = body_object(r)) == NULL)
		return r->status;
	if ((rc = member(r, body, "chain", 1, &chain)) != 0 ||
	    (rc = member(r, body, "network", 0, &network)) != 0 ||
	    (rc = member(r, body, "policy_id", 1, &id)) != 0)
		goto out;
	if (find_policy(r, id, &p) != 1 || (net = network_of(r, chain, network)) == NULL) {
		rc = r->status;
		goto out;
	}
	if (p.status != BP_POLICY_ACTIVE || strcmp(p.chain, net->chain) != 0) {
		rc = p.status != BP_POLICY_ACTIVE ?
		    bp_error(r, 400, "invalid_request", "policy_id: policy %s is %s", p.id,
		    bp_policy_status_name(p.status)) :
		    bp_error(r, 400, "invalid_request", "chain: policy %s is for chain %s", p.id,
		    p.chain);
		goto out;
	}
	if (!signer[net - config->nets].ok || net->entry_point[0] == '\0' ||
	    net->paymaster[0] == '\0') {
		rc = bp_error(r, 400, "invalid_request", "chain: sponsorship is not available on "
		    "%s %s (no paymaster and signer key configured)", net->chain, net->network);
		goto out;
	}
	if (bp_userop_from_json(cJSON_GetObjectItemCaseSensitive(body, "user_operation"), &op,
	    &field, why, sizeof(why)) == -1) {
		rc = bp_error(r, 400, "invalid_request", "user_operation.%s: %s", field, why);
		goto out;
	}
	if (bp_userop_max_cost(&op, &wei) == -1) {
		rc = bp_error(r, 400, "invalid_request", "user_operation: the gas limits times "
		    "maxFeePerGas are too large to be sponsored");
		goto out;
	}
	have_usd = bp_price_native(config, net->chain, &price) == 0 &&
	    bp_price_usd(&wei, &price, &usd) == 0;
	ncalls = bp_userop_calls(op.bytes[BP_USEROP_CALL_DATA], op.len[BP_USEROP_CALL_DATA], calls,
	    BP_NITEMS(calls));
	if (bp_policy_check(&p.rules, calls, ncalls, have_usd ? &usd : NULL, why,
	    sizeof(why)) != -1) {
		rc = bp_error(r, 403, "forbidden", "%s", why);
		goto out;
	}
	if (bp_paymaster_grant(upstream, net, signer[net - config->nets].key, &op,
	    (uint64_t)(now + config->paymaster_validity), (uint64_t)(now - 60), &g) == -1) {
		rc = bp_error(r, 500, "internal_error", "the %s %s node did not answer; retry later",
		    net->chain, net->network);
		goto out;
	}
	refused = bp_policy_record(r->db, &p, net->network, op.sender, g.op_hash,
	    have_usd ? &usd : NULL, why, sizeof(why));
	if (refused == BP_RULE__MAX)
		rc = bp_error(r, 500, "internal_error", "database error");
	else if (refused >= 0)
		rc = bp_error(r, 403, "forbidden", "%s", why);
	else
		rc = reply_grant(r, &g, have_usd ? &usd : NULL);
out:
	bp_userop_free(&op);
	cJSON_Delete(body);
	return rc;
}
