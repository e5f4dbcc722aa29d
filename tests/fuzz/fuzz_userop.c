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
check_op(const cJSON *j)
{
	struct bp_userop op;
	const char *field;
	char why[256];
	uint8_t ep[20] = { 1 }, h[32], *abi;
	struct bp_u256 wei;
	size_t i, len, packed;

	if (bp_userop_from_json(j, &op, &field, why, sizeof(why)) == -1) {
		for (i = 0; i < BP_USEROP_BYTES__MAX; i++)
			if (op.bytes[i] != NULL || op.len[i] != 0)
				abort();
		if (field == NULL || why[0] == '\0')
			abort();
		return;
	}
	for (i = 0; i < BP_USEROP_BYTES__MAX; i++)
		if (op.len[i] > BP_USEROP_BYTES_MAX || (op.len[i] > 0) != (op.bytes[i] != NULL))
			abort();
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
	static const char *const rules[] = { "max_gas_usd", "allowed_contracts", "allowed_methods" };
	cJSON *j, *m, *r;
	int n, i;

	if ((j = cJSON_Parse(op)) == NULL)
		return;
	n = cJSON_GetArraySize(j);
	for (i = 0; i < n; i++) {
		m = cJSON_GetArrayItem(j, i);
		cJSON_ReplaceItemInObjectCaseSensitive(j, m->string, cJSON_CreateString(text));
		check_op(j);
	}
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
	check_op(j);
	check_rules(j);
	check_history(j);
	cJSON_Delete(j);
	return 0;
}
