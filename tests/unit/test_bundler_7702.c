/*
 * The bundler's EIP-7702 ops (lib/bundler/bundler_7702.c): the op's JSON-RPC form as the pool
 * stores it (factory 0x7702 and eip7702Auth kept), the checks of its authorization that need no
 * node, the delegation code, and the state overrides of a simulation and of a bundle's re-check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bundler/bundler.h"
#include "bundler/bundler_7702.h"
#include "bundler/bundler_v07.h"
#include "core/buf.h"
#include "evm/address.h"
#include "unit.h"

#define ADDR1	"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
#define SIMPLE7702 "0xe6Cae83BdE06E4c305530e199D7217f42808555B"
#define EP08	"0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108"

/* A v0.8 7702 op of ADDR1 (sender), its authorization signed by ADDR1's key for chain 31337. */
static void
op7702(const char *sender, int auth, struct bp_userop *op)
{
	const char *field;
	char why[200], text[1024];
	cJSON *j;

	snprintf(text, sizeof(text), "{\"sender\":\"%s\",\"nonce\":\"0x3\","
	    "\"factory\":\"0x7702\",\"factoryData\":\"0x\","
	    "\"callData\":\"0xb61d27f6\",\"callGasLimit\":\"0x186a0\","
	    "\"verificationGasLimit\":\"0x30d40\",\"preVerificationGas\":\"0xc350\","
	    "\"maxFeePerGas\":\"0x77359400\",\"maxPriorityFeePerGas\":\"0x3b9aca00\","
	    "\"signature\":\"0x\"%s}", sender, auth ? ",\"eip7702Auth\":{\"address\":\"" SIMPLE7702
	    "\",\"chainId\":\"0x7a69\",\"nonce\":\"0x0\",\"r\":\"0xfbf62bea42845db583da"
	    "030712373a9e010fb5fe930f9833799bfdd0c383d2ba\",\"s\":\"0x7c42b938830b959ff2b9"
	    "452bccefff68c22b057471e6507af74f5dfb5131f75f\",\"yParity\":\"0x00\"}" : "");
	CU_ASSERT_FATAL((j = cJSON_Parse(text)) != NULL);
	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V08, j, op, &field, why, sizeof(why)) == 0);
	cJSON_Delete(j);
}

static void
test_json(void)
{
	struct bp_userop op, back;
	struct bp_buf b;
	const char *field;
	char why[200];
	uint8_t ep[20], h[32], h2[32];
	cJSON *j;

	bp_addr_parse(EP08, strlen(EP08), 0, ep);
	op7702(ADDR1, 1, &op);
	bp_buf_init(&b, 1 << 20);
	CU_ASSERT_FATAL(bp_bundler_op_json(&op, &b) == 0 && bp_buf_add(&b, "", 1) == 0);
	CU_ASSERT(strstr(b.data, "\"factory\":\"0x7702\",\"factoryData\":\"0x\"") != NULL);
	CU_ASSERT(strstr(b.data, "\"eip7702Auth\":{\"chainId\":\"0x7a69\",\"address\":\""
	    SIMPLE7702 "\",\"nonce\":\"0x0\",\"yParity\":\"0x0\",\"r\":\"0xfbf6") != NULL);
	/* The submitter reads back the op it bundles: the same bytes, hash and authorization. */
	CU_ASSERT_FATAL((j = cJSON_Parse(b.data)) != NULL);
	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V08, j, &back, &field, why, sizeof(why)) == 0);
	CU_ASSERT(back.len[BP_USEROP_INIT_CODE] == 2 && bp_userop_is_7702(&back));
	CU_ASSERT(back.has_auth && memcmp(&back.auth, &op.auth, sizeof(op.auth)) == 0);
	bp_userop_hash_v(&op, ep, 31337, h);
	bp_userop_hash_v(&back, ep, 31337, h2);
	CU_ASSERT(memcmp(h, h2, 32) == 0);
	cJSON_Delete(j);
	bp_userop_free(&back);
	bp_userop_free(&op);
	/* Without the authorization, none is written. */
	op7702(ADDR1, 0, &op);
	b.len = 0;
	CU_ASSERT_FATAL(bp_bundler_op_json(&op, &b) == 0 && bp_buf_add(&b, "", 1) == 0);
	CU_ASSERT(strstr(b.data, "eip7702Auth") == NULL && strstr(b.data, "\"factory\":\"0x7702\""));
	bp_buf_free(&b);
	bp_userop_free(&op);
}

static void
test_prepare(void)
{
	struct bp_userop_validate_error err;
	struct bp_network net;
	struct bp_userop op;
	uint8_t d[20], want[20];
	int apply;

	memset(&net, 0, sizeof(net));
	memset(&err, 0, sizeof(err));
	net.chain_id = 31337;
	bp_addr_parse(SIMPLE7702, strlen(SIMPLE7702), 0, want);
	/* The estimate's checks need no node: the delegation is applied. */
	op7702(ADDR1, 1, &op);
	CU_ASSERT_EQUAL(bp_bundler_7702_prepare(NULL, &net, &op, 0, d, &apply, &err), 1);
	CU_ASSERT(apply && memcmp(d, want, 20) == 0);
	/* Another chain's authorization is refused before any read. */
	net.chain_id = 1;
	CU_ASSERT_EQUAL(bp_bundler_7702_prepare(NULL, &net, &op, 1, d, &apply, &err), -1);
	CU_ASSERT_EQUAL(err.code, -32602);
	CU_ASSERT(strstr(err.message, "eip7702Auth.chainId") != NULL);
	/* chainId 0 is every chain's. */
	memset(&op.auth.chain_id, 0, sizeof(op.auth.chain_id));
	CU_ASSERT_EQUAL(bp_bundler_7702_prepare(NULL, &net, &op, 0, d, &apply, &err), 1);
	bp_userop_free(&op);
	/* Signed by the EOA of another sender. */
	net.chain_id = 31337;
	op7702("0x1111111111111111111111111111111111111111", 1, &op);
	CU_ASSERT_EQUAL(bp_bundler_7702_prepare(NULL, &net, &op, 1, d, &apply, &err), -1);
	CU_ASSERT_EQUAL(err.code, -32602);
	CU_ASSERT(strstr(err.message, "eip7702Auth is not signed by the sender") != NULL);
	bp_userop_free(&op);
	bp_userop_validate_error_free(&err);
}

static void
test_pre_verification_gas(void)
{
	struct bp_userop_validate_error err;
	struct bp_userop op;
	uint64_t plain;

	memset(&err, 0, sizeof(err));
	op7702(ADDR1, 1, &op);
	op.has_auth = 0;
	plain = bp_userop_validate_pre_verification_gas(&op, 0);
	op.has_auth = 1;
	/* The authorization's intrinsic gas, which the bundle pays, is the op's. */
	CU_ASSERT_EQUAL(bp_userop_validate_pre_verification_gas(&op, 0), plain + 25000);
	CU_ASSERT_EQUAL(bp_userop_validate_pre_verification_gas(&op, 1), plain + 25000 + 21000);
	bp_u256_from_u64(&op.num[BP_USEROP_PRE_VERIFICATION_GAS], plain);
	CU_ASSERT_EQUAL(bp_userop_validate_check_fields(&op, NULL, &err), -1);
	CU_ASSERT_EQUAL(err.code, -32602);
	CU_ASSERT(strstr(err.message, "preVerificationGas is below") != NULL);
	bp_u256_from_u64(&op.num[BP_USEROP_PRE_VERIFICATION_GAS], plain + 25000);
	CU_ASSERT_EQUAL(bp_userop_validate_check_fields(&op, NULL, &err), 0);
	bp_userop_free(&op);
	bp_userop_validate_error_free(&err);
}

static void
test_code(void)
{
	uint8_t code[24], d[20];
	const struct bp_userop *ops[2];
	struct bp_userop a, b;
	char *o;
	int oom;

	memset(code, 0x42, sizeof(code));
	code[0] = 0xef;
	code[1] = 0x01;
	code[2] = 0x00;
	CU_ASSERT_EQUAL(bp_tx_delegation(code, 23, d), 1);
	CU_ASSERT(d[0] == 0x42 && d[19] == 0x42);
	CU_ASSERT_EQUAL(bp_tx_delegation(code, 24, d), 0);
	CU_ASSERT_EQUAL(bp_tx_delegation(NULL, 0, d), 0);
	code[1] = 0x02;
	CU_ASSERT_EQUAL(bp_tx_delegation(code, 23, d), 0);

	/* The simulation's override: the sender's code is the delegation; funded only if asked. */
	op7702(ADDR1, 1, &a);
	CU_ASSERT_FATAL((o = bp_bundler_v07_override(BP_EP_V08, a.sender, a.sender, 0,
	    a.auth.address)) != NULL);
	CU_ASSERT(strstr(o, "\"0x70997970c51812dc3a010c7d01b50e0d17dc79c8\":{\"code\":"
	    "\"0xef0100e6cae83bde06e4c305530e199d7217f42808555b\"}}") != NULL);
	free(o);
	CU_ASSERT_FATAL((o = bp_bundler_v07_override(BP_EP_V08, a.sender, a.sender, 1,
	    a.auth.address)) != NULL);
	CU_ASSERT(strstr(o, "{\"balance\":\"0x56bc75e2d63100000\",\"code\":\"0xef0100e6cae8") != NULL);
	free(o);

	/* A bundle's re-check: only the ops with an authorization. */
	op7702("0x1111111111111111111111111111111111111111", 0, &b);
	ops[0] = &b;
	ops[1] = &a;
	CU_ASSERT_PTR_NULL(bp_bundler_7702_bundle_override(ops, 1, &oom));
	CU_ASSERT_EQUAL(oom, 0);
	CU_ASSERT_FATAL((o = bp_bundler_7702_bundle_override(ops, 2, &oom)) != NULL);
	CU_ASSERT_STRING_EQUAL(o, "{\"0x70997970c51812dc3a010c7d01b50e0d17dc79c8\":{\"code\":"
	    "\"0xef0100e6cae83bde06e4c305530e199d7217f42808555b\"}}");
	free(o);
	bp_userop_free(&a);
	bp_userop_free(&b);
}

BP_UNIT_SUITE(bundler_7702, NULL, NULL,
    { "7702: the op's JSON-RPC form keeps factory 0x7702 and eip7702Auth", test_json },
    { "7702: eip7702Auth's chainId and signer, checked without a node", test_prepare },
    { "7702: the authorization's gas is in preVerificationGas", test_pre_verification_gas },
    { "7702: delegation code and the state overrides", test_code })
