/*
 * libFuzzer harness for what /v1/gas takes from clients and nodes: the UserOperation of a
 * sponsor request (bp_userop_from_json, lib/evm/userop.c), the calls decoded from its callData
 * (bp_userop_calls), the rules of a policy (bp_policy_rules_parse, lib/gas/policy.c) and an
 * eth_feeHistory answer (bp_gas_history_parse and bp_gas_estimate, lib/gas/gas.c). Each input is
 * parsed as JSON and handed to the three JSON readers, and its raw bytes go to the callData
 * decoder.
 *
 * Beyond memory safety it checks, aborting on a violation:
 *
 *  - a refused UserOperation names a field and leaves the op empty; an accepted one has byte
 *    fields within BP_USEROP_BYTES_MAX, hashes, encodes with the packed prefix inside the
 *    encoding, and its callData decodes to at most the room given;
 *  - the same in the v0.8 form (bp_userop_from_json_v), whose eip7702Auth, when accepted, has a
 *    y parity of 0 or 1, and whose userOpHash of an EIP-7702 op is bp_userop_hash_7702's with
 *    the authorization's delegate;
 *  - the callData decoder never reports more calls than the room, and a call without four
 *    bytes of data has no selector;
 *  - accepted rules have at least one rule and render as JSON that parses back to the same
 *    rules (canonical: the same text again); a create or update body (bp_policy_input) is
 *    refused with a reason, or accepted with a name of at most 100 characters;
 *  - estimates from an accepted fee history are ordered slow <= standard <= fast on both fees,
 *    with max_fee >= max_priority for each level.
 *
 * The corpus starts empty, as for the other harnesses; tests/fuzz/userop.dict holds the member
 * names and selectors. So that the fuzzer reaches the fields without writing whole JSON, every
 * input is also placed, as a string, into each member of a valid op and into each rule.
 *
 *   bash tests/fuzz/run.sh 60      (builds every tests/fuzz/fuzz_*.c and runs each 60 s)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "evm/tx.h"
#include "evm/userop.h"
#include "gas/gas.h"
#include "gas/policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_calls(const uint8_t *data, size_t len)
{
	struct bp_userop_call c[4];
	int n = bp_userop_calls(data, len, c, 4);

	if (n > 4 || n < -1)
		abort();
}

static void
check_op(const cJSON *j, enum bp_ep_version v)
{
	struct bp_userop op;
	const char *field;
	char why[256];
	uint8_t ep[20] = { 1 }, h[32], h2[32], who[20], *abi;
	struct bp_u256 wei;
	size_t i, len, packed;

	if (bp_userop_from_json_v(v, j, &op, &field, why, sizeof(why)) == -1) {
		for (i = 0; i < BP_USEROP_BYTES__MAX; i++)
			if (op.bytes[i] != NULL || op.len[i] != 0)
				abort();
		if (op.has_auth || field == NULL || why[0] == '\0')
			abort();
		return;
	}
	for (i = 0; i < BP_USEROP_BYTES__MAX; i++)
		if (op.len[i] > BP_USEROP_BYTES_MAX || (op.len[i] > 0) != (op.bytes[i] != NULL))
			abort();
	if (v == BP_EP_V08) {
		if (op.has_auth && op.auth.y_parity > 1)
			abort();
		bp_userop_hash_v(&op, ep, 1, h);
		if (bp_userop_is_7702(&op) && op.has_auth) {
			bp_userop_hash_7702(&op, ep, 1, op.auth.address, h2);
			if (memcmp(h, h2, 32) != 0)
				abort();
			(void)bp_tx_auth_authority(&op.auth, who);
		}
		bp_userop_free(&op);
		return;
	}
	bp_userop_hash(&op, ep, 1, h);
	(void)bp_userop_max_cost(&op, &wei);
	if ((abi = bp_userop_abi(&op, 149, &len, &packed)) != NULL) {
		if (packed > len || packed % 32 != 0)
			abort();
		free(abi);
	}
	check_calls(op.bytes[BP_USEROP_CALL_DATA], op.len[BP_USEROP_CALL_DATA]);
	bp_userop_free(&op);
}

/* Each member of obj (inside the op root) replaced in turn by text, the op checked as v. */
static void
each_member(cJSON *root, cJSON *obj, const char *text, enum bp_ep_version v)
{
	cJSON *m;
	int n, i;

	n = cJSON_GetArraySize(obj);
	for (i = 0; i < n; i++) {
		m = cJSON_GetArrayItem(obj, i);
		cJSON_ReplaceItemInObjectCaseSensitive(obj, m->string, cJSON_CreateString(text));
		check_op(root, v);
	}
}

static void
check_input(const cJSON *j)
{
	static struct bp_config cfg;	/* one EVM chain; read only after the first call */
	struct bp_policy_input *in = malloc(sizeof(*in));
	char why[512];
	int create;

	if (in == NULL)
		return;
	cfg.nnets = 1;
	memcpy(cfg.nets[0].chain, "ethereum", 9);
	for (create = 0; create < 2; create++) {
		why[0] = '\0';
		if (bp_policy_input(&cfg, j, create, in, why, sizeof(why)) == -1) {
			if (why[0] == '\0')
				abort();
		} else if ((create && (in->name == NULL || in->chain == NULL || !in->has_rules)) ||
		    (in->name != NULL && strlen(in->name) > 4 * BP_POLICY_NAME_CHARS)) {
			abort();
		}
	}
	free(in);
}

static void
check_rules(const cJSON *j)
{
	struct bp_policy_rules *r = malloc(sizeof(*r)), *again = malloc(sizeof(*again));
	struct bp_buf a, b;
	char why[512];
	cJSON *back;

	if (r == NULL || again == NULL)
		goto out;
	bp_buf_init(&a, 1 << 20);
	bp_buf_init(&b, 1 << 20);
	if (bp_policy_rules_parse(j, r, why, sizeof(why)) == 0) {
		if (r->has == 0 || bp_policy_rules_json(r, &a) == -1)
			abort();
		if ((back = cJSON_Parse(a.data)) == NULL ||
		    bp_policy_rules_parse(back, again, why, sizeof(why)) == -1 ||
		    bp_policy_rules_json(again, &b) == -1 || strcmp(a.data, b.data) != 0)
			abort();
		cJSON_Delete(back);
	} else if (why[0] == '\0') {
		abort();
	}
	check_input(j);
	bp_buf_free(&a);
	bp_buf_free(&b);
out:
	free(r);
	free(again);
}

static void
check_history(const cJSON *j)
{
	struct bp_gas_history h;
	struct bp_gas_sample s;
	struct bp_u256 floor_wei;
	size_t l;

	if (bp_gas_history_parse(j, &h) == -1)
		return;
	bp_u256_from_u64(&floor_wei, 1);
	bp_gas_estimate(&h, &floor_wei, 12, &s);
	for (l = 0; l < BP_GAS__MAX; l++) {
		if (bp_u256_cmp(&s.est[l].max_fee, &s.est[l].max_priority) < 0)
			abort();
		if (l > 0 && (bp_u256_cmp(&s.est[l].max_fee, &s.est[l - 1].max_fee) < 0 ||
		    bp_u256_cmp(&s.est[l].max_priority, &s.est[l - 1].max_priority) < 0))
			abort();
	}
}

/* A valid op, then each member in turn replaced by the input as a string. */
static void
check_members(const char *text)
{
	static const char op[] = "{\"sender\":\"0x1111111111111111111111111111111111111111\","
	    "\"nonce\":\"0x0\",\"initCode\":\"0x\",\"callData\":\"0xb61d27f6\","
	    "\"callGasLimit\":\"0x1\",\"verificationGasLimit\":\"0x1\","
	    "\"preVerificationGas\":\"0x1\",\"maxFeePerGas\":\"0x1\","
	    "\"maxPriorityFeePerGas\":\"0x1\"}";
	/* A v0.8 op of an EIP-7702 account, as viem sends it. */
	static const char op08[] = "{\"sender\":\"0x1111111111111111111111111111111111111111\","
	    "\"nonce\":\"0x0\",\"factory\":\"0x7702\",\"factoryData\":\"0x\","
	    "\"callData\":\"0xb61d27f6\",\"callGasLimit\":\"0x1\",\"verificationGasLimit\":\"0x1\","
	    "\"preVerificationGas\":\"0x1\",\"maxFeePerGas\":\"0x1\","
	    "\"maxPriorityFeePerGas\":\"0x1\",\"eip7702Auth\":{\"chainId\":\"0x1\","
	    "\"address\":\"0x2222222222222222222222222222222222222222\",\"nonce\":\"0x0\","
	    "\"yParity\":\"0x00\",\"r\":\"0x1\",\"s\":\"0x1\"}}";
	static const char *const rules[] = { "max_gas_usd", "allowed_contracts", "allowed_methods" };
	cJSON *j, *m, *r;
	int i;

	if ((j = cJSON_Parse(op)) == NULL)
		return;
	each_member(j, j, text, BP_EP_V06);
	cJSON_Delete(j);
	if ((j = cJSON_Parse(op08)) == NULL)
		return;
	each_member(j, cJSON_GetObjectItemCaseSensitive(j, "eip7702Auth"), text, BP_EP_V08);
	each_member(j, j, text, BP_EP_V08);
	cJSON_Delete(j);
	for (i = 0; i < 3; i++) {
		if ((j = cJSON_CreateObject()) == NULL)
			return;
		r = cJSON_CreateString(text);
		if (i > 0) {
			m = cJSON_CreateArray();
			cJSON_AddItemToArray(m, r);
			r = m;
		}
		cJSON_AddItemToObject(j, rules[i], r);
		check_rules(j);
		cJSON_Delete(j);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	cJSON *j;
	char *text;

	check_calls(data, len);
	if (len < 4096 && (text = malloc(len + 1)) != NULL) {
		memcpy(text, data, len);
		text[len] = '\0';
		check_members(text);
		free(text);
	}
	if (len > 256 * 1024 || (j = cJSON_ParseWithLength((const char *)data, len)) == NULL)
		return 0;
	check_op(j, BP_EP_V06);
	check_op(j, BP_EP_V08);
	check_rules(j);
	check_history(j);
	cJSON_Delete(j);
	return 0;
}
