/*
 * ERC-7562 on the bundler's validation path (bundler_rules.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "bundler_pool.h"
#include "bundler_reputation.h"
#include "bundler_rules.h"
#include "bundler_v07.h"
#include "erc7562_quick.h"
#include "core/hex.h"
#include "core/log.h"
#include "evm/address.h"
#include "rpc/rpc_client.h"

enum trace_mode { TRACE_AUTO, TRACE_ON, TRACE_OFF };

static enum trace_mode
trace_mode(const struct bp_network *net)
{
	static const char *const off[] = { "false", "no", "off", "0" };
	static const char *const on[] = { "true", "yes", "on", "1" };
	size_t i;

	for (i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		if (strcasecmp(net->trace_validation, off[i]) == 0)
			return TRACE_OFF;
		if (strcasecmp(net->trace_validation, on[i]) == 0)
			return TRACE_ON;
	}
	return TRACE_AUTO;
}

static int
fail(struct bp_userop_validate_error *err, int code, const char *msg)
{
	err->code = code;
	snprintf(err->message, sizeof(err->message), "%s", msg);
	return -1;
}

/* Whether a JSON-RPC error says the node has no debug_traceCall. */
static int
cannot_trace(const struct bp_rpc_client_error *e)
{
	static const char *const words[] = { "not supported", "does not exist", "not available",
	    "unsupported", "not found", "unknown method", "disabled" };
	size_t i;

	if (e->kind != BP_RPC_CLIENT_ERR_RPC)
		return 0;
	if (e->code == -32601)
		return 1;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasestr(e->message, words[i]) != NULL)
			return 1;
	return 0;
}

void
bp_bundler_rules_entities(const struct bp_userop *op, const uint8_t ep[20],
    const struct bp_userop_validate_result *res, struct bp_erc7562_input *in)
{
	uint8_t be[32];

	memset(in, 0, sizeof(*in));
	memcpy(in->entry_point, ep, 20);
	memcpy(in->addr[BP_ERC7562_ACCOUNT], op->sender, 20);
	in->present[BP_ERC7562_ACCOUNT] = 1;
	bp_u256_to_be32(&res->sender_stake, be);
	in->staked[BP_ERC7562_ACCOUNT] = bp_erc7562_staked(be, res->sender_unstake_delay);
	/*
	 * v0.8's EIP-7702 marker names no factory: the sender's delegate runs as the account, and
	 * so does the initialisation call after the marker, which the SenderCreator makes.
	 */
	if (bp_userop_is_7702(op))
		in->init_account = op->len[BP_USEROP_INIT_CODE] > 20;
	else if (op->len[BP_USEROP_INIT_CODE] >= 20) {
		memcpy(in->addr[BP_ERC7562_FACTORY], op->bytes[BP_USEROP_INIT_CODE], 20);
		in->present[BP_ERC7562_FACTORY] = 1;
		bp_u256_to_be32(&res->factory_stake, be);
		in->staked[BP_ERC7562_FACTORY] = bp_erc7562_staked(be, res->factory_unstake_delay);
	}
	if (op->len[BP_USEROP_PAYMASTER_AND_DATA] >= 20) {
		memcpy(in->addr[BP_ERC7562_PAYMASTER], op->bytes[BP_USEROP_PAYMASTER_AND_DATA], 20);
		in->present[BP_ERC7562_PAYMASTER] = 1;
		bp_u256_to_be32(&res->paymaster_stake, be);
		in->staked[BP_ERC7562_PAYMASTER] = bp_erc7562_staked(be,
		    res->paymaster_unstake_delay);
	}
}

/* The traces asked for: the struct logs with stacks (the full engine's), then the quick pass's. */
enum trace_kind {
	TRACE_STACKS,		/* 0 */
	TRACE_STEPS,		/* 1: struct logs without stacks */
	TRACE_CALLS,		/* 2: callTracer */
	TRACE_PRESTATE,		/* 3: prestateTracer */
	TRACE__MAX
};

/*
 * debug_traceCall's params: the call, "latest", the tracer of kind (struct logs kept small),
 * and the state override ov when not NULL (v0.7/v0.8: EntryPointSimulations at the
 * EntryPoint's address, as the eth_call of the simulation has it; anvil and geth take it as
 * the options' stateOverrides).
 */
static cJSON *
trace_params(const uint8_t ep[20], const char *hex, const cJSON *ov, enum trace_kind kind)
{
	char addr[BP_ADDR_STRLEN];
	cJSON *p = NULL, *call, *opts;
	int ok;

	bp_addr_format_lower(ep, addr, sizeof(addr));
	if ((p = cJSON_CreateArray()) == NULL || (call = cJSON_CreateObject()) == NULL ||
	    !cJSON_AddItemToArray(p, call) || cJSON_AddStringToObject(call, "to", addr) == NULL ||
	    cJSON_AddStringToObject(call, "data", hex) == NULL ||
	    !cJSON_AddItemToArray(p, cJSON_CreateString("latest")) ||
	    (opts = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(p, opts)) {
		cJSON_Delete(p);
		return NULL;
	}
	if (kind == TRACE_CALLS || kind == TRACE_PRESTATE)
		ok = cJSON_AddStringToObject(opts, "tracer", kind == TRACE_CALLS ? "callTracer" :
		    "prestateTracer") != NULL;
	else
		ok = cJSON_AddTrueToObject(opts, "disableMemory") != NULL &&
		    cJSON_AddTrueToObject(opts, "disableStorage") != NULL &&
		    cJSON_AddFalseToObject(opts, "enableReturnData") != NULL &&
		    (kind == TRACE_STACKS || cJSON_AddTrueToObject(opts, "disableStack") != NULL);
	if (ok && ov != NULL)
		ok = cJSON_AddItemToObject(opts, "stateOverrides", cJSON_Duplicate(ov, 1));
	if (!ok) {
		cJSON_Delete(p);
		return NULL;
	}
	return p;
}

/*
 * Asks the node for the traces of kinds [first, last] in one batch; 0 with each result in
 * calls, or with err set 1 when the node has no debug_traceCall, -1 on another failure.
 */
static int
traces(struct bp_upstream *up, const struct bp_network *net, const uint8_t ep[20],
    const char *hex, const cJSON *ov, enum trace_kind first, enum trace_kind last,
    struct bp_rpc_client_call *calls, struct bp_userop_validate_error *err)
{
	int k, n = (int)last - (int)first + 1;

	for (k = 0; k < n; k++) {
		calls[k].method = "debug_traceCall";
		if ((calls[k].params = trace_params(ep, hex, ov, (enum trace_kind)(first + k))) == NULL)
			return fail(err, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
	}
	if (bp_rpc_client_batch(up, net, calls, (size_t)n) == (size_t)n)
		return 0;
	for (k = 0; k < n - 1 && calls[k].result != NULL; k++)
		;
	if (calls[k].err.kind == BP_RPC_CLIENT_ERR_TRANSPORT &&
	    strstr(calls[k].err.message, "too large") != NULL)
		/* Bounded memory: a validation whose trace passes [server] max_response is refused. */
		return fail(err, BP_USEROP_VALIDATE_BANNED_OPCODE, "[OP-000] the validation is too long "
		    "to check: its trace passes the answer limit (max_response)");
	snprintf(err->message, sizeof(err->message), "the %s %s node could not trace the "
	    "validation (debug_traceCall: %.160s)", net->chain, net->network, calls[k].err.message);
	err->code = BP_USEROP_VALIDATE_INTERNAL;
	return cannot_trace(&calls[k].err) ? 1 : -1;
}

/* simulateValidation's answer (ret, n bytes; reverted or returned) decoded as op's version's. */
static int
decoded(const struct bp_userop *op, int reverted, const uint8_t *ret, size_t n,
    struct bp_userop_validate_result *res, struct bp_userop_validate_error *err)
{
	if (op->version == BP_EP_V06)
		return bp_userop_validate_simulated(reverted, ret, n, res, err);
	return bp_bundler_v07_simulated(reverted, ret, n, res, err);
}

/* simulateValidation by eth_call alone (no trace): data, len, and v0.7/v0.8's override. */
static int
simulate(struct bp_upstream *up, const struct bp_network *net, const uint8_t ep[20],
    const struct bp_userop *op, const uint8_t *data, size_t len, const char *override,
    struct bp_userop_validate_result *res, struct bp_userop_validate_error *err)
{
	uint8_t *ret = NULL;
	size_t n = 0;
	int rc;

	if ((rc = bp_userop_validate_eth_call(up, net, ep, data, len, "latest", override, &ret,
	    &n, err)) == -1)
		return -1;
	rc = decoded(op, rc, ret, n, res, err);
	free(ret);
	return rc;
}

/*
 * simulateValidation's answer read from its call tree (tree, untrusted): the top call's output
 * is what the eth_call answers, its error says it reverted. As simulate().
 */
static int
simulated(const struct bp_userop *op, const cJSON *tree, struct bp_userop_validate_result *res,
    struct bp_userop_validate_error *err)
{
	const cJSON *out = cJSON_GetObjectItemCaseSensitive(tree, "output");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(tree, "error");
	uint8_t *ret = NULL;
	size_t n = 0, cap;
	int rc;

	if (!cJSON_IsObject(tree))
		return fail(err, BP_USEROP_VALIDATE_INTERNAL, "the node's call tree of the "
		    "validation does not read");
	if (cJSON_IsString(out) && strlen(out->valuestring) > 2) {
		cap = strlen(out->valuestring) / 2;
		if ((ret = malloc(cap)) == NULL)
			return fail(err, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
		if (bp_hex_decode(out->valuestring, strlen(out->valuestring), ret, cap, &n) == -1) {
			free(ret);
			return fail(err, BP_USEROP_VALIDATE_INTERNAL, "the node's call tree of the "
			    "validation does not read");
		}
	} else if (e != NULL) {
		/* A failure without revert data (out of gas ...): what the eth_call says then. */
		snprintf(err->message, sizeof(err->message), "eth_call failed: %.200s",
		    cJSON_IsString(e) ? e->valuestring : "no message");
		err->code = BP_USEROP_VALIDATE_INTERNAL;
		return -1;
	}
	rc = decoded(op, e != NULL, ret, n, res, err);
	free(ret);
	return rc;
}

int
bp_bundler_rules_simulate(struct bp_upstream *up, const struct bp_network *net,
    const uint8_t ep[20], const struct bp_userop *op, const uint8_t *delegate,
    struct bp_userop_validate_result *res, struct bp_userop_validate_error *err)
{
	struct bp_rpc_client_call quick[TRACE__MAX], full[1];
	struct bp_erc7562_verdict v;
	struct bp_erc7562_input in;
	enum trace_mode mode = trace_mode(net);
	uint8_t *data = NULL;
	char *hex = NULL, *override = NULL;
	cJSON *ov = NULL;
	size_t len;
	int rc = -1, t;

	memset(quick, 0, sizeof(quick));
	memset(full, 0, sizeof(full));
	/* The call simulated: v0.7/v0.8's is EntryPointSimulations' by a state override. */
	if (op->version == BP_EP_V06)
		data = bp_userop_validate_calldata(BP_USEROP_VALIDATE_SIG_SIMULATE, op, &len);
	else if (bp_bundler_v07_validation_call(op, ep, delegate, &data, &len, &override) == 0 &&
	    (ov = cJSON_Parse(override)) == NULL) {
		free(data);
		data = NULL;
	}
	if (data == NULL) {
		fail(err, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
		goto out;
	}
	if (mode == TRACE_OFF) {
		rc = simulate(up, net, ep, op, data, len, override, res, err);
		goto out;
	}
	if ((hex = malloc(2 * len + 3)) == NULL) {
		fail(err, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
		goto out;
	}
	bp_hex_encode(data, len, hex, 2 * len + 3);
	/*
	 * The call tree and the prestate first: the tree's top call is the simulation itself (no
	 * eth_call besides), and with the code they name they prove most ops clean (the static
	 * pass, a fifth of the steps' work); the steps without stacks (a third of the full trace's)
	 * most others.
	 */
	if ((t = traces(up, net, ep, hex, ov, TRACE_CALLS, TRACE_PRESTATE, quick + TRACE_CALLS,
	    err)) != 0) {
		if (t == 1 && mode == TRACE_AUTO) {
			/* A node without tracing: eth_call's checks only (docs/bundler.md). */
			err->code = 0;
			err->message[0] = '\0';
			rc = simulate(up, net, ep, op, data, len, override, res, err);
		}
		goto out;
	}
	if (simulated(op, quick[TRACE_CALLS].result, res, err) == -1)
		goto out;
	bp_bundler_rules_entities(op, ep, res, &in);
	if (bp_erc7562_quick_static(quick[TRACE_CALLS].result, quick[TRACE_PRESTATE].result,
	    &in) == 1) {
		rc = 0;
		goto out;
	}
	if (traces(up, net, ep, hex, ov, TRACE_STEPS, TRACE_STEPS, quick + TRACE_STEPS, err) != 0)
		goto out;
	if (bp_erc7562_quick(quick[TRACE_STEPS].result, quick[TRACE_CALLS].result,
	    quick[TRACE_PRESTATE].result, &in) == 1) {
		rc = 0;
		goto out;
	}
	if (traces(up, net, ep, hex, ov, TRACE_STACKS, TRACE_STACKS, full, err) != 0)
		goto out;
	if (bp_erc7562_check_json(full[0].result, &in, &v) == -1) {
		bp_warn("%s: %s.%s: %s", __func__, net->chain, net->network, v.message);
		fail(err, BP_USEROP_VALIDATE_INTERNAL, "the node's trace of the validation does not "
		    "read");
		goto out;
	}
	if (v.code != 0) {
		fail(err, v.code, v.message);
		goto out;
	}
	rc = 0;
out:
	for (t = 0; t < TRACE__MAX; t++) {
		cJSON_Delete((cJSON *)quick[t].params);
		cJSON_Delete(quick[t].result);
	}
	cJSON_Delete((cJSON *)full[0].params);
	cJSON_Delete(full[0].result);
	cJSON_Delete(ov);
	free(override);
	free(hex);
	free(data);
	return rc;
}

/*
 * "CHAIN.NETWORK" and the address of entity e of the op ("" when it names none: v0.8's
 * EIP-7702 marker is no factory, and counting it would ban every such op with one that failed).
 */
static void
entity_key(const struct bp_network *net, const struct bp_userop *op, enum bp_userop_bytes f,
    char *chain, size_t clen, char addr[BP_ADDR_STRLEN])
{
	snprintf(chain, clen, "%s.%s", net->chain, net->network);
	addr[0] = '\0';
	if (f == BP_USEROP_INIT_CODE && bp_userop_is_7702(op))
		return;
	if (op->len[f] >= 20)
		bp_addr_format_lower(op->bytes[f], addr, BP_ADDR_STRLEN);
}

int
bp_bundler_rules_reputation(struct bp_db *db, const struct bp_network *net,
    const struct bp_userop *op, const uint8_t ep[20], const struct bp_userop_validate_result *res,
    int *pm_cap, char *pm_status, size_t len, struct bp_userop_validate_error *err)
{
	static const enum bp_userop_bytes fields[] = { BP_USEROP_INIT_CODE,
	    BP_USEROP_PAYMASTER_AND_DATA };
	static const enum bp_erc7562_entity ents[] = { BP_ERC7562_FACTORY, BP_ERC7562_PAYMASTER };
	struct bp_bundler_reputation_entry e;
	struct bp_erc7562_input in;
	char chain[160], addr[BP_ADDR_STRLEN];
	size_t i;
	int cap, as_sender, as_pm;

	*pm_cap = 0;
	snprintf(pm_status, len, "ok");
	bp_bundler_rules_entities(op, ep, res, &in);
	/* STO-040: an address is a sender or an entity in the pool, not both. */
	snprintf(chain, sizeof(chain), "%s.%s", net->chain, net->network);
	bp_addr_format_lower(op->sender, addr, sizeof(addr));
	if (bp_bundler_pool_roles(db, chain, addr, &as_sender, &as_pm) == -1)
		return fail(err, BP_USEROP_VALIDATE_INTERNAL, "database error");
	if (as_pm) {
		snprintf(err->message, sizeof(err->message), "[STO-040] the sender %s is the paymaster "
		    "of another op in the pool", addr);
		err->code = BP_USEROP_VALIDATE_BANNED_OPCODE;
		return -1;
	}
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		entity_key(net, op, fields[i], chain, sizeof(chain), addr);
		if (addr[0] == '\0')
			continue;
		if (bp_bundler_pool_roles(db, chain, addr, &as_sender, &as_pm) == -1)
			return fail(err, BP_USEROP_VALIDATE_INTERNAL, "database error");
		if (as_sender) {
			snprintf(err->message, sizeof(err->message), "[STO-040] the %s %s is the sender "
			    "of another op in the pool", bp_erc7562_entity_name(ents[i]), addr);
			err->code = BP_USEROP_VALIDATE_BANNED_OPCODE;
			return -1;
		}
		if (bp_bundler_reputation_get(db, chain, addr, (int64_t)time(NULL), &e) == -1)
			return fail(err, BP_USEROP_VALIDATE_INTERNAL, "database error");
		cap = bp_bundler_reputation_cap(&e, in.staked[ents[i]]);
		if (cap == -1) {
			snprintf(err->message, sizeof(err->message), "the %s %s is banned (ERC-7562 "
			    "reputation: %lld ops seen, %lld included)",
			    bp_erc7562_entity_name(ents[i]), addr, (long long)e.ops_seen,
			    (long long)e.ops_included);
			err->code = BP_USEROP_VALIDATE_THROTTLED;
			return -1;
		}
		if (ents[i] == BP_ERC7562_PAYMASTER) {
			*pm_cap = cap;
			snprintf(pm_status, len, "%s", bp_bundler_reputation_status_name(e.status));
		}
	}
	return 0;
}

void
bp_bundler_rules_seen(struct bp_db *db, const struct bp_network *net, const struct bp_userop *op)
{
	static const enum bp_userop_bytes fields[] = { BP_USEROP_INIT_CODE,
	    BP_USEROP_PAYMASTER_AND_DATA };
	char chain[160], addr[BP_ADDR_STRLEN];
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		entity_key(net, op, fields[i], chain, sizeof(chain), addr);
		if (addr[0] != '\0' &&
		    bp_bundler_reputation_add(db, chain, addr, 1, 0, (int64_t)time(NULL)) == -1)
			bp_warn("%s: %s: the reputation of %s was not counted", __func__, chain, addr);
	}
}

void
bp_bundler_rules_crashed(struct bp_db *db, const struct bp_network *net, const struct bp_userop *op,
    const char *reason)
{
	char chain[160], addr[BP_ADDR_STRLEN];

	if (strncmp(reason, "AA1", 3) == 0)
		entity_key(net, op, BP_USEROP_INIT_CODE, chain, sizeof(chain), addr);
	else if (strncmp(reason, "AA3", 3) == 0)
		entity_key(net, op, BP_USEROP_PAYMASTER_AND_DATA, chain, sizeof(chain), addr);
	else
		return;
	if (addr[0] != '\0' &&
	    bp_bundler_reputation_crashed(db, chain, addr, (int64_t)time(NULL)) == -1)
		bp_warn("%s: %s: %s was not banned", __func__, chain, addr);
}
