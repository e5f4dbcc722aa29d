/*
 * handleOps calldata read back (lib/bundler/bundler_handle_ops.c), as
 * eth_getUserOperationByHash does for another bundler's op: each version's op, encoded as its
 * EntryPoint takes it (bp_userop_abi) inside a handleOps call of two ops, is found by sender and
 * nonce and renders the JSON-RPC form it was read from; truncated or foreign calldata is refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bundler/bundler.h"
#include "bundler/bundler_handle_ops.h"
#include "bundler/bundler_v07.h"
#include "core/buf.h"
#include "evm/abi.h"
#include "unit.h"

#define SENDER	"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
#define OTHER	"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"

/* A v0.7/v0.8 op (factory, paymaster and its limits) of sender with nonce, in its JSON form. */
static const char op_v07[] = "{\"sender\":\"%s\",\"nonce\":\"%s\","
    "\"callGasLimit\":\"0x186a0\",\"verificationGasLimit\":\"0x927c0\","
    "\"preVerificationGas\":\"0xea60\",\"maxFeePerGas\":\"0x77359400\","
    "\"maxPriorityFeePerGas\":\"0x3b9aca00\",\"callData\":\"0xb61d27f6aabb\","
    "\"signature\":\"0x0102\",\"factory\":\"0x91e60e0613810449d098b0b5ec8b51a0fe8c8985\","
    "\"factoryData\":\"0x5fbfb9cf00\",\"paymaster\":\"0xd6f3b5ee7c08e4a2b4e1b1fbca5c02f5c3b67f5a\","
    "\"paymasterVerificationGasLimit\":\"0x7530\",\"paymasterPostOpGasLimit\":\"0x1\","
    "\"paymasterData\":\"0xcafe\"}";
static const char op_v06[] = "{\"sender\":\"%s\",\"nonce\":\"%s\","
    "\"callGasLimit\":\"0x186a0\",\"verificationGasLimit\":\"0x927c0\","
    "\"preVerificationGas\":\"0xea60\",\"maxFeePerGas\":\"0x77359400\","
    "\"maxPriorityFeePerGas\":\"0x3b9aca00\",\"initCode\":\"0x\",\"callData\":\"0xb61d27f6\","
    "\"paymasterAndData\":\"0x\",\"signature\":\"0x0102\"}";

static void
read_op(enum bp_ep_version v, const char *sender, const char *nonce, struct bp_userop *op,
    char *json, size_t cap)
{
	const char *field;
	char why[200];
	cJSON *j;

	snprintf(json, cap, v == BP_EP_V06 ? op_v06 : op_v07, sender, nonce);
	CU_ASSERT_FATAL((j = cJSON_Parse(json)) != NULL);
	CU_ASSERT_FATAL(bp_userop_from_json_v(v, j, op, &field, why, sizeof(why)) == 0);
	cJSON_Delete(j);
}

static void
put_word(uint8_t *w, size_t v)
{
	memset(w, 0, 32);
	w[30] = (uint8_t)(v >> 8);
	w[31] = (uint8_t)v;
}

/* handleOps([a, b], beneficiary) of version v, as the submitter writes it. */
static uint8_t *
handle_ops(enum bp_ep_version v, const struct bp_userop *a, const struct bp_userop *b,
    size_t *len)
{
	uint8_t *ea, *eb, *out;
	size_t la, lb, packed;

	CU_ASSERT_FATAL((ea = bp_userop_abi(a, (size_t)-1, &la, &packed)) != NULL);
	CU_ASSERT_FATAL((eb = bp_userop_abi(b, (size_t)-1, &lb, &packed)) != NULL);
	*len = 4 + 32 * 5 + la + lb;
	CU_ASSERT_FATAL((out = calloc(1, *len)) != NULL);
	bp_abi_selector(bp_bundler_v07_handle_ops_sig(v), out);
	put_word(out + 4, 0x40);
	out[4 + 63] = 0x99;			/* the beneficiary */
	put_word(out + 4 + 64, 2);
	put_word(out + 4 + 96, 64);
	put_word(out + 4 + 128, 64 + la);
	memcpy(out + 4 + 160, ea, la);
	memcpy(out + 4 + 160 + la, eb, lb);
	free(ea);
	free(eb);
	return out;
}

static void
roundtrip(enum bp_ep_version v)
{
	struct bp_userop a, b, got;
	struct bp_buf want, have;
	char ja[1024], jb[1024];
	uint8_t *data;
	size_t len, i;

	read_op(v, OTHER, "0x5", &a, ja, sizeof(ja));
	read_op(v, SENDER, "0x10000000000000007", &b, jb, sizeof(jb));
	data = handle_ops(v, &a, &b, &len);
	bp_buf_init(&want, 1 << 20);
	bp_buf_init(&have, 1 << 20);

	CU_ASSERT_EQUAL_FATAL(bp_bundler_handle_ops_find(data, len, v, b.sender,
	    &b.num[BP_USEROP_NONCE], &got), 1);
	CU_ASSERT_EQUAL(got.version, v);
	CU_ASSERT_FATAL(bp_bundler_op_json(&b, &want) == 0 && bp_buf_add(&want, "", 1) == 0);
	CU_ASSERT_FATAL(bp_bundler_op_json(&got, &have) == 0 && bp_buf_add(&have, "", 1) == 0);
	CU_ASSERT_STRING_EQUAL(have.data, want.data);
	if (v != BP_EP_V06) {
		/* Unpacked: the paymaster's two limits, and the halves of the packed words. */
		CU_ASSERT(strstr(have.data, "\"paymasterVerificationGasLimit\":\"0x7530\"") != NULL);
		CU_ASSERT(strstr(have.data, "\"verificationGasLimit\":\"0x927c0\"") != NULL);
		CU_ASSERT(strstr(have.data, "\"maxPriorityFeePerGas\":\"0x3b9aca00\"") != NULL);
		CU_ASSERT_EQUAL(got.has_pm_gas[0], 1);
		CU_ASSERT_EQUAL(bp_u256_cmp(&got.pm_gas[0], &b.pm_gas[0]), 0);
		CU_ASSERT_EQUAL(bp_u256_cmp(&got.pm_gas[1], &b.pm_gas[1]), 0);
	}
	for (i = 0; i < BP_USEROP_NUM__MAX; i++)
		CU_ASSERT_EQUAL(bp_u256_cmp(&got.num[i], &b.num[i]), 0);
	bp_userop_free(&got);

	/* The first op too; another nonce of the sender is not there. */
	CU_ASSERT_EQUAL(bp_bundler_handle_ops_find(data, len, v, a.sender,
	    &a.num[BP_USEROP_NONCE], &got), 1);
	bp_userop_free(&got);
	CU_ASSERT_EQUAL(bp_bundler_handle_ops_find(data, len, v, b.sender,
	    &a.num[BP_USEROP_NONCE], &got), 0);
	/*
	 * Cut anywhere in the ops but the last word's padding (the signature's 2 bytes are
	 * followed by 30 zero bytes no reader needs): refused, never read past the end.
	 */
	for (i = 4 + 160; i < len - 30; i += 7)
		if (bp_bundler_handle_ops_find(data, i, v, b.sender, &b.num[BP_USEROP_NONCE],
		    &got) == 1) {
			CU_FAIL("a truncated call decoded");
			bp_userop_free(&got);
		}
	/* The other form's selector: not this version's handleOps. */
	CU_ASSERT_EQUAL(bp_bundler_handle_ops_find(data, len, v == BP_EP_V06 ? BP_EP_V07 : BP_EP_V06,
	    b.sender, &b.num[BP_USEROP_NONCE], &got), -1);
	CU_ASSERT_EQUAL(bp_bundler_handle_ops_find(NULL, 0, v, b.sender, &b.num[BP_USEROP_NONCE],
	    &got), -1);
	free(data);
	bp_buf_free(&want);
	bp_buf_free(&have);
	bp_userop_free(&a);
	bp_userop_free(&b);
}

static void
test_v06(void)
{
	roundtrip(BP_EP_V06);
}

static void
test_v07(void)
{
	roundtrip(BP_EP_V07);
}

static void
test_v08(void)
{
	roundtrip(BP_EP_V08);
}

BP_UNIT_SUITE(bundler_handle_ops, NULL, NULL,
    { "handleOps v0.6: the op found by sender and nonce, its JSON form again", test_v06 },
    { "handleOps v0.7: PackedUserOperation unpacked into the JSON-RPC form", test_v07 },
    { "handleOps v0.8: the same form, the same calldata layout", test_v08 })
