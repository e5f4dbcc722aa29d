#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/db.h"
#include "core/hex.h"
#include "core/log.h"
#include "evm/address.h"
#include "evm/simple_account.h"
#include "evm/tx.h"
#include "evm/userop.h"
#include "rpc/rpc_client.h"
#include "policy_cache.h"
#include "sponsor.h"
#include "token/price.h"

/* Sets out's refusal and returns its status. */
static int
refuse(struct bp_sponsor_result *out, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
refuse(struct bp_sponsor_result *out, int status, const char *code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->message, sizeof(out->message), fmt, ap);
	va_end(ap);
	out->code = code;
	return out->status = status;
}

int
bp_sponsor_allowed(const struct bp_policy *p, const struct bp_network *net, const uint8_t *key,
    const char *entry_point, enum bp_ep_version *version, struct bp_sponsor_result *out)
{
	struct bp_entry_point ep;
	uint8_t a[20];

	memset(out, 0, sizeof(*out));
	out->field = "policy_id";
	/* A refusal by the policy itself, as its rules' are: 403 naming the state. */
	if (p->status != BP_POLICY_ACTIVE)
		return refuse(out, 403, "forbidden", "policy %s is %s", p->id,
		    bp_policy_status_name(p->status));
	out->field = "chain";
	if (strcmp(p->chain, net->chain) != 0)
		return refuse(out, 400, "invalid_request", "policy %s is for chain %s", p->id,
		    p->chain);
	/* Its network; one made before policies had networks is for its chain's live ones. */
	out->field = "network";
	if (p->network[0] != '\0' ? strcmp(p->network, net->network) != 0 : net->testnet != 0)
		return refuse(out, 400, "invalid_request", "policy %s is for %s %s, not %s", p->id,
		    p->chain, p->network[0] != '\0' ? p->network : "(live)", net->network);
	if (key == NULL)
		return refuse(out, 400, "invalid_request", "sponsorship is not available on %s %s "
		    "(no paymaster and signer key configured)", net->chain, net->network);
	out->field = "entry_point";
	if (entry_point == NULL) {
		if (bp_entry_point_default(net, version) == -1)
			return refuse(out, 500, "internal_error", "bad entry_point_version in the "
			    "configuration");
		bp_entry_point_of(net, *version, &ep);
	} else if (bp_addr_parse(entry_point, strlen(entry_point), BP_ADDR_CHECKSUM, a) == -1)
		return refuse(out, 400, "invalid_request", "must be an address: 0x and 40 hex "
		    "digits (mixed case must be a valid EIP-55 checksum)");
	else if (bp_entry_point_find(net, a, &ep) == -1)
		return refuse(out, 400, "invalid_request", "%.42s is not an EntryPoint of %s %s "
		    "(v0.6 %s%s%s%s%s)", entry_point, net->chain, net->network,
		    net->entry_point[0] ? net->entry_point : "none",
		    net->entry_point_v07[0] ? ", v0.7 " : "", net->entry_point_v07,
		    net->entry_point_v08[0] ? ", v0.8 " : "", net->entry_point_v08);
	*version = ep.version;
	if (ep.entry_point[0] == '\0' || ep.paymaster[0] == '\0')
		return refuse(out, 400, "invalid_request", "sponsorship of EntryPoint v%s is not "
		    "available on %s %s (no entry point and paymaster of that version configured)",
		    bp_ep_version_name(ep.version), net->chain, net->network);
	out->field = NULL;
	return out->status = 0;
}

/*
 * Whether an EIP-7702 sender runs Simple7702Account when op does (bp_simple_account_7702; a
 * v0.8 op only), from its code now (hex, "0x" for none): delegated to it already, and an
 * eip7702Auth the op carries, which the bundle applies first, delegates to it again; or no
 * code yet and the op's eip7702Auth delegates to it (an authorization the node skips leaves a
 * plain EOA, which no op can run as). 1 yes, 0 no.
 */
static int
known_7702(const struct bp_userop *op, const char *code)
{
	uint8_t c[BP_TX_DELEGATION_LEN], d[20];

	if (op->version != BP_EP_V08 ||
	    (op->has_auth && memcmp(op->auth.address, bp_simple_account_7702, 20) != 0))
		return 0;
	if (strcmp(code, "0x") == 0)
		return op->has_auth;
	return bp_hex_decode_fixed(code, strlen(code), c, sizeof(c)) == 0 &&
	    bp_tx_delegation(c, sizeof(c), d) && memcmp(d, bp_simple_account_7702, 20) == 0;
}

/*
 * 1 when the sender of op is an account whose calls bp_userop_calls decodes truly: SimpleAccount
 * of net's configured factory and implementation of op's version (execute and executeBatch
 * are the same in v0.6 and v0.7; v0.8's executeBatch takes Call[]), or an EOA that runs
 * Simple7702Account through EIP-7702 (known_7702). A first op is one when its initCode's
 * factory is that factory (which deploys only that proxy over that implementation); a deployed
 * sender when its code is that ERC1967Proxy and its EIP-1967 slot holds the implementation (one
 * batch: eth_getCode, eth_getStorageAt). Any other sender could run an execute that ignores its
 * target, so contract and method rules cannot bound it: 0. -1 when the node did not answer.
 */
static int
known_account(struct bp_upstream *up, const struct bp_network *net, const struct bp_userop *op)
{
	struct bp_rpc_client_call calls[2];
	struct bp_entry_point ep;
	const uint8_t *runtime;
	const char *code, *slot;
	uint8_t factory[20], impl[20], word[32], have[BP_SIMPLE_ACCOUNT_PROXY_RUNTIME_LEN];
	size_t rlen;
	char sender[BP_ADDR_STR_MAX];
	cJSON *p[2];
	size_t i;
	int rc = -1, known_impl, is_7702 = bp_userop_is_7702(op);

	bp_entry_point_of(net, op->version, &ep);
	known_impl = bp_addr_parse(ep.factory, strlen(ep.factory), 0, factory) == 0 &&
	    bp_addr_parse(ep.implementation, strlen(ep.implementation), 0, impl) == 0;
	/* An EIP-7702 op's sender is an EOA whatever the network's factory: its code tells. */
	if (!known_impl && op->version != BP_EP_V08)
		return 0;	/* no known implementation on this network */
	if (op->len[BP_USEROP_INIT_CODE] > 0 && !is_7702)
		return known_impl && op->len[BP_USEROP_INIT_CODE] >= 20 &&
		    memcmp(op->bytes[BP_USEROP_INIT_CODE], factory, 20) == 0;
	runtime = bp_simple_account_proxy_runtime(op->version, &rlen);
	bp_addr_format_lower(op->sender, sender, sizeof(sender));
	p[0] = cJSON_CreateArray();
	p[1] = cJSON_CreateArray();
	memset(calls, 0, sizeof(calls));
	calls[0].method = "eth_getCode";
	calls[0].params = p[0];
	calls[1].method = "eth_getStorageAt";
	calls[1].params = p[1];
	if (p[0] == NULL || p[1] == NULL ||
	    !cJSON_AddItemToArray(p[0], cJSON_CreateString(sender)) ||
	    !cJSON_AddItemToArray(p[0], cJSON_CreateString("latest")) ||
	    !cJSON_AddItemToArray(p[1], cJSON_CreateString(sender)) ||
	    !cJSON_AddItemToArray(p[1], cJSON_CreateString(BP_SIMPLE_ACCOUNT_IMPL_SLOT)) ||
	    !cJSON_AddItemToArray(p[1], cJSON_CreateString("latest")))
		goto out;
	if (bp_rpc_client_batch(up, net, calls, 2) != 2 || !cJSON_IsString(calls[0].result) ||
	    !cJSON_IsString(calls[1].result)) {
		bp_warn("%s.%s: the code of sender %s: %s", net->chain, net->network, sender,
		    calls[0].result == NULL ? calls[0].err.message : calls[1].err.message);
		goto out;
	}
	code = calls[0].result->valuestring;
	slot = calls[1].result->valuestring;
	if (known_7702(op, code))
		rc = 1;
	else if (is_7702 || op->has_auth)
		rc = 0;		/* EIP-7702 to another delegate */
	else
		rc = known_impl && bp_hex_decode_fixed(code, strlen(code), have, rlen) == 0 &&
		    memcmp(have, runtime, rlen) == 0 &&
		    bp_hex_decode_fixed(slot, strlen(slot), word, 32) == 0 &&
		    memcmp(word, "\0\0\0\0\0\0\0\0\0\0\0\0", 12) == 0 &&
		    memcmp(word + 12, impl, 20) == 0;
out:
	for (i = 0; i < 2; i++) {
		cJSON_Delete(calls[i].result);
		cJSON_Delete(p[i]);
	}
	return rc;
}

/* One try of bp_sponsor with p as read: its answer, or 0 when p changed since (read again). */
static int
sponsor_once(struct bp_db *db, struct bp_db_batch *batch, struct bp_upstream *up,
    const struct bp_config *cfg, const struct bp_network *net, const uint8_t key[32],
    const struct bp_key *who, const struct bp_policy *p, enum bp_ep_version version,
    const cJSON *j, struct bp_sponsor_result *out)
{
	const struct bp_policy_budget budget = { who->account_id, who->plan.sponsor_usd_per_day,
	    cfg->sponsor_usd_per_day };
	struct bp_userop_call calls[BP_USEROP_CALLS_MAX];
	struct bp_userop op;
	struct bp_price price;
	struct bp_u256 wei;
	const char *field;
	char why[sizeof(out->message)];
	int64_t now = (int64_t)time(NULL);
	int ncalls, refused, known;

	memset(out, 0, sizeof(*out));
	if (bp_userop_from_json_v(version, j, &op, &field, why, sizeof(why)) == -1)
		return refuse(out, 400, "invalid_request", "user_operation.%s: %s", field, why);
	/* v0.7+: what the op will carry, its own limits or ours, bounds its cost. */
	if (version != BP_EP_V06 && !op.has_pm_gas[0])
		bp_u256_from_u64(&op.pm_gas[0], BP_PAYMASTER_V07_VERIFICATION_GAS);
	if (bp_userop_max_cost(&op, &wei) == -1) {
		refuse(out, 400, "invalid_request", "user_operation: the gas limits times "
		    "maxFeePerGas are too large to be sponsored");
		goto out;
	}
	out->have_usd = bp_price_native(cfg, net->chain, &price) == 0 &&
	    bp_price_usd(&wei, &price, &out->usd) == 0;
	ncalls = bp_userop_calls(op.bytes[BP_USEROP_CALL_DATA], op.len[BP_USEROP_CALL_DATA], calls,
	    BP_USEROP_CALLS_MAX);
	if (bp_policy_check(&p->rules, calls, ncalls, out->have_usd ? &out->usd : NULL, why,
	    sizeof(why)) != -1) {
		refuse(out, 403, "forbidden", "%s", why);
		goto out;
	}
	/* The calls decoded above are the sender's only when it is an account we know. */
	if ((p->rules.has & (1u << BP_RULE_ALLOWED_CONTRACTS | 1u << BP_RULE_ALLOWED_METHODS)) &&
	    (known = known_account(up, net, &op)) != 1) {
		if (known == -1)
			refuse(out, 500, "internal_error", "the %s %s node did not answer; retry "
			    "later", net->chain, net->network);
		else
			refuse(out, 403, "forbidden", "%s: the sender is not an account Blockport "
			    "knows (a SimpleAccount of the configured factory of its EntryPoint "
			    "version, deployed or deployed by this operation's initCode, or an EOA "
			    "delegated to Simple7702Account by EIP-7702), so its calls cannot be "
			    "checked",
			    p->rules.has & (1u << BP_RULE_ALLOWED_CONTRACTS) ?
			    "allowed_contracts" : "allowed_methods");
		goto out;
	}
	/* validAfter a minute back: a node whose clock is a little behind still accepts it. */
	if (bp_paymaster_grant(up, net, key, &op, (uint64_t)(now + cfg->paymaster_validity),
	    (uint64_t)(now - 60), &out->grant) == -1) {
		refuse(out, 500, "internal_error", "the %s %s node did not answer; retry later",
		    net->chain, net->network);
		goto out;
	}
	refused = bp_policy_record(db, batch, p, net->network, op.sender, out->grant.op_hash,
	    out->have_usd ? &out->usd : NULL, &budget, why, sizeof(why));
	if (refused == BP_RULE__MAX)
		refuse(out, 500, "internal_error", "database error");
	else if (refused == BP_POLICY_CHANGED)
		out->status = 0;
	else if (refused >= 0)
		refuse(out, 403, "forbidden", "%s", why);
	else
		out->status = 200;
out:
	bp_userop_free(&op);
	return out->status;
}

int
bp_sponsor(struct bp_db *db, const struct bp_sponsor_shared *sh, struct bp_upstream *up,
    const struct bp_config *cfg, const struct bp_network *net, const uint8_t key[32],
    const struct bp_key *who, const struct bp_policy *p, enum bp_ep_version version,
    const cJSON *j, struct bp_sponsor_result *out)
{
	struct bp_db_batch *batch = sh != NULL ? sh->batch : NULL;
	struct bp_policy again;
	int found;

	if (sponsor_once(db, batch, up, cfg, net, key, who, p, version, j, out) != 0)
		return out->status;
	/* p was a copy behind the table: once more with the policy as it is now. */
	found = bp_policy_cache_reread(sh != NULL ? sh->policies : NULL, db, who->account_id,
	    p->id, &again);
	if (found == -1)
		return refuse(out, 500, "internal_error", "database error");
	if (found == 0)
		return refuse(out, 404, "not_found", "no gas policy %.40s", p->id);
	if (again.status != BP_POLICY_ACTIVE)
		return refuse(out, 403, "forbidden", "policy_id: policy %s is %s", again.id,
		    bp_policy_status_name(again.status));
	if (sponsor_once(db, batch, up, cfg, net, key, who, &again, version, j, out) != 0)
		return out->status;
	return refuse(out, 500, "internal_error", "policy %s changed while the operation was "
	    "sponsored; retry", p->id);
}

/*
 * The paymaster's EIP-55 form (a keccak of the address): a network's paymaster is the same on
 * every answer, so each thread keeps the last one it wrote.
 */
static void
paymaster_checksum(const uint8_t pm[20], char out[BP_ADDR_STR_MAX])
{
	static _Thread_local uint8_t last[20];
	static _Thread_local char text[BP_ADDR_STR_MAX];

	if (text[0] == '\0' || memcmp(last, pm, 20) != 0) {
		bp_addr_format_checksum(pm, text, sizeof(text));
		memcpy(last, pm, 20);
	}
	memcpy(out, text, BP_ADDR_STR_MAX);
}

int
bp_sponsor_json(const struct bp_sponsor_result *s, struct bp_buf *b)
{
	const struct bp_paymaster_grant *g = &s->grant;
	char pm[BP_ADDR_STR_MAX], data[2 * BP_PAYMASTER_PND_MAX + 3], u[BP_U256_UNITS_MAX + 2];
	char pnd[2 * BP_PAYMASTER_PND_MAX + 3], h[67], vgl[67];
	char pgl[67];

	paymaster_checksum(g->pnd, pm);
	bp_hex_encode(g->pnd + g->pnd_len - BP_PAYMASTER_DATA_LEN, BP_PAYMASTER_DATA_LEN, data,
	    sizeof(data));
	bp_hex_encode(g->op_hash, 32, h, sizeof(h));
	memcpy(u, "null", 5);
	if (s->have_usd) {
		u[0] = '"';
		bp_u256_format_units(&s->usd, BP_PRICE_USD_DECIMALS, u + 1, BP_U256_UNITS_MAX);
		memcpy(u + strlen(u), "\"", 2);
	}
	if (g->version != BP_EP_V06) {
		/* v0.7/v0.8: the op carries these four; its paymasterAndData is the EntryPoint's. */
		bp_u256_to_quantity(&g->pm_gas[0], vgl, sizeof(vgl));
		bp_u256_to_quantity(&g->pm_gas[1], pgl, sizeof(pgl));
		return bp_buf_printf(b, "{\"paymaster\":\"%s\",\"paymasterData\":\"%s\","
		    "\"paymasterVerificationGasLimit\":\"%s\",\"paymasterPostOpGasLimit\":\"%s\","
		    "\"sponsored_gas_usd\":%s,\"entry_point_version\":\"%s\",\"valid_until\":%llu,"
		    "\"valid_after\":%llu,\"user_op_hash\":\"%s\"}", pm, data, vgl, pgl, u,
		    bp_ep_version_name(g->version), (unsigned long long)g->valid_until,
		    (unsigned long long)g->valid_after, h) == -1 ? -1 : 0;
	}
	bp_hex_encode(g->pnd, g->pnd_len, pnd, sizeof(pnd));
	return bp_buf_printf(b, "{\"paymaster\":\"%s\",\"paymasterData\":\"%s\","
	    "\"paymasterVerificationGasLimit\":\"0x%x\",\"paymasterPostOpGasLimit\":\"0x%x\","
	    "\"sponsored_gas_usd\":%s,\"paymasterAndData\":\"%s\",\"valid_until\":%llu,"
	    "\"valid_after\":%llu,\"user_op_hash\":\"%s\"}", pm, data,
	    BP_PAYMASTER_VERIFICATION_GAS, BP_PAYMASTER_POSTOP_GAS, u, pnd,
	    (unsigned long long)g->valid_until, (unsigned long long)g->valid_after, h) == -1 ?
	    -1 : 0;
}
