/*
 * The bundler's EntryPoint v0.7/v0.8 pieces (lib/bundler/bundler_v07.c): handleOps' selector
 * per version, the PackedUserOperation encoding (lib/evm/userop.c), validationData words,
 * the ValidationResult and ExecutionResult decoders with hostile data, FailedOpWithRevert,
 * the penalty taken out of an estimate, the gas total with the paymaster's limits, and the
 * embedded EntryPointSimulations code.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bundler/bundler.h"
#include "bundler/bundler_v07.h"
#include "bundler/userop_validate.h"
#include "core/hex.h"
#include "evm/abi.h"
#include "unit.h"

/* 1 when a is v. */
static int
eq(const struct bp_u256 *a, uint64_t v)
{
	struct bp_u256 b;

	bp_u256_from_u64(&b, v);
	return bp_u256_cmp(a, &b) == 0;
}

/* A v0.7 op read from its JSON-RPC form, with a paymaster. */
static void
op07(struct bp_userop *op)
{
	const char *field;
	char why[200];
	cJSON *j = cJSON_Parse("{\"sender\":\"0x1111111111111111111111111111111111111111\","
	    "\"nonce\":\"0x18c0000000000000000000000000000000000000000000005\","
	    "\"factory\":\"0x2222222222222222222222222222222222222222\",\"factoryData\":\"0xabcd\","
	    "\"callData\":\"0x1234\",\"callGasLimit\":\"0x30000\",\"verificationGasLimit\":\"0x20000\","
	    "\"preVerificationGas\":\"0xc350\",\"maxFeePerGas\":\"0x77359400\","
	    "\"maxPriorityFeePerGas\":\"0x3b9aca00\","
	    "\"paymaster\":\"0x3333333333333333333333333333333333333333\","
	    "\"paymasterVerificationGasLimit\":\"0x186a0\",\"paymasterPostOpGasLimit\":\"0x10\","
	    "\"paymasterData\":\"0x99\",\"signature\":\"0x55\"}");

	CU_ASSERT_FATAL(j != NULL);
	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V07, j, op, &field, why, sizeof(why)) == 0);
	cJSON_Delete(j);
}

static void
test_encoding(void)
{
	struct bp_userop op;
	uint8_t sel[4], *enc, w[32];
	size_t len, packed;
	const uint8_t *p;
	size_t n;

	bp_abi_selector(bp_bundler_v07_handle_ops_sig(BP_EP_V06), sel);
	CU_ASSERT(memcmp(sel, "\x1f\xad\x94\x8c", 4) == 0);
	bp_abi_selector(bp_bundler_v07_handle_ops_sig(BP_EP_V07), sel);
	CU_ASSERT(memcmp(sel, "\x76\x5e\x82\x7f", 4) == 0);	/* v0.7's and v0.8's handleOps */
	CU_ASSERT(strcmp(bp_bundler_v07_handle_ops_sig(BP_EP_V08),
	    bp_bundler_v07_handle_ops_sig(BP_EP_V07)) == 0);

	op07(&op);
	CU_ASSERT_FATAL((enc = bp_userop_abi(&op, (size_t)-1, &len, &packed)) != NULL);
	/* Nine head words, then the tails: initCode, callData and signature a word each, pnd two. */
	CU_ASSERT_EQUAL(len, 9 * 32 + 3 * 64 + 96);
	bp_userop_account_gas_limits(&op, w);
	CU_ASSERT(memcmp(enc + 4 * 32, w, 32) == 0);
	CU_ASSERT_EQUAL(enc[4 * 32 + 13], 0x02);	/* verificationGasLimit 0x20000 in the high half */
	CU_ASSERT_EQUAL(enc[4 * 32 + 29], 0x03);	/* callGasLimit 0x30000 in the low half */
	bp_userop_gas_fees(&op, w);
	CU_ASSERT(memcmp(enc + 6 * 32, w, 32) == 0);
	CU_ASSERT(bp_abi_read_bytes(enc, len, 7, &p, &n) == 0);
	CU_ASSERT_EQUAL(n, 52 + 1);
	CU_ASSERT_EQUAL(p[52], 0x99);
	CU_ASSERT(bp_abi_read_bytes(enc, len, 8, &p, &n) == 0 && n == 1 && p[0] == 0x55);
	free(enc);
	/* The five limits count toward the total, the paymaster's two included. */
	CU_ASSERT_EQUAL(bp_userop_validate_total_gas(&op), 0x30000 + 0x20000 + 0xc350 + 0x186a0 + 0x10);
	bp_userop_free(&op);
}

static void
test_json(void)
{
	struct bp_userop op, back;
	struct bp_buf b;
	const char *field;
	char why[200];
	cJSON *j;

	op07(&op);
	bp_buf_init(&b, 1 << 20);
	CU_ASSERT_FATAL(bp_bundler_op_json(&op, &b) == 0 && bp_buf_add(&b, "", 1) == 0);
	CU_ASSERT(strstr(b.data, "\"initCode\"") == NULL);
	CU_ASSERT(strstr(b.data, "\"paymasterAndData\"") == NULL);
	CU_ASSERT(strstr(b.data, "\"factoryData\":\"0xabcd\"") != NULL);
	CU_ASSERT(strstr(b.data, "\"paymasterVerificationGasLimit\":\"0x186a0\"") != NULL);
	CU_ASSERT(strstr(b.data, "\"paymasterPostOpGasLimit\":\"0x10\"") != NULL);
	CU_ASSERT(strstr(b.data, "\"paymasterData\":\"0x99\"") != NULL);
	/* It reads back as the same op (the submitter parses what the pool stored). */
	CU_ASSERT_FATAL((j = cJSON_Parse(b.data)) != NULL);
	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V07, j, &back, &field, why, sizeof(why)) == 0);
	CU_ASSERT_EQUAL(back.len[BP_USEROP_PAYMASTER_AND_DATA], op.len[BP_USEROP_PAYMASTER_AND_DATA]);
	CU_ASSERT(memcmp(back.bytes[BP_USEROP_PAYMASTER_AND_DATA], op.bytes[BP_USEROP_PAYMASTER_AND_DATA],
	    op.len[BP_USEROP_PAYMASTER_AND_DATA]) == 0);
	CU_ASSERT(memcmp(back.bytes[BP_USEROP_INIT_CODE], op.bytes[BP_USEROP_INIT_CODE], 22) == 0);
	CU_ASSERT(bp_u256_cmp(&back.num[BP_USEROP_NONCE], &op.num[BP_USEROP_NONCE]) == 0);
	cJSON_Delete(j);
	bp_userop_free(&back);
	/* Without factory and paymaster, neither is written. */
	free(op.bytes[BP_USEROP_INIT_CODE]);
	free(op.bytes[BP_USEROP_PAYMASTER_AND_DATA]);
	op.bytes[BP_USEROP_INIT_CODE] = op.bytes[BP_USEROP_PAYMASTER_AND_DATA] = NULL;
	op.len[BP_USEROP_INIT_CODE] = op.len[BP_USEROP_PAYMASTER_AND_DATA] = 0;
	b.len = 0;
	CU_ASSERT_FATAL(bp_bundler_op_json(&op, &b) == 0 && bp_buf_add(&b, "", 1) == 0);
	CU_ASSERT(strstr(b.data, "factory") == NULL && strstr(b.data, "paymaster") == NULL);
	bp_buf_free(&b);
	bp_userop_free(&op);
}

/* validationData of authorizer a (its last byte), validUntil and validAfter. */
static void
vd(uint8_t w[32], uint8_t a, uint64_t until, uint64_t after)
{
	int i;

	memset(w, 0, 32);
	for (i = 0; i < 6; i++) {
		w[5 - i] = (uint8_t)(after >> (8 * i));
		w[11 - i] = (uint8_t)(until >> (8 * i));
	}
	w[31] = a;
}

static void
test_validation_data(void)
{
	struct bp_userop_validate_result r;
	uint8_t w[32];

	memset(&r, 0, sizeof(r));
	vd(w, 0, 2000, 100);
	CU_ASSERT_EQUAL(bp_bundler_v07_validation_data(w, &r), 0);
	CU_ASSERT(r.valid_until == 2000 && r.valid_after == 100 && !r.sig_failed);
	/* The paymaster's window narrows the account's; 0 means no end. */
	vd(w, 1, 1500, 50);
	CU_ASSERT_EQUAL(bp_bundler_v07_validation_data(w, &r), 0);
	CU_ASSERT(r.valid_until == 1500 && r.valid_after == 100 && r.sig_failed);
	vd(w, 0, 0, 0);
	CU_ASSERT_EQUAL(bp_bundler_v07_validation_data(w, &r), 0);
	CU_ASSERT_EQUAL(r.valid_until, 1500);
	vd(w, 2, 0, 0);		/* an aggregator's address */
	CU_ASSERT_EQUAL(bp_bundler_v07_validation_data(w, &r), 1);
	vd(w, 0, 0, 0);
	w[12] = 1;
	CU_ASSERT_EQUAL(bp_bundler_v07_validation_data(w, &r), 1);
}

/* A ValidationResult as EntryPointSimulations returns it. */
static uint8_t *
validation_result(const uint8_t account[32], const uint8_t paymaster[32], size_t *len)
{
	struct bp_abi_enc *e = bp_abi_enc_new(4096);
	uint8_t *out = NULL;
	int i;

	bp_abi_tuple_begin(e);
	bp_abi_tuple_begin(e);
	bp_abi_put_u64(e, 70000);	/* preOpGas */
	bp_abi_put_u64(e, 12345);	/* prefund */
	bp_abi_put_bytes32(e, account);
	bp_abi_put_bytes32(e, paymaster);
	bp_abi_put_bytes(e, "ctx", 3);
	bp_abi_tuple_end(e);
	bp_abi_put_u64(e, 7);		/* senderInfo: stake, unstakeDelaySec */
	bp_abi_put_u64(e, 86400);
	bp_abi_put_u64(e, 8);		/* factoryInfo */
	bp_abi_put_u64(e, 172800);
	bp_abi_put_u64(e, 9);		/* paymasterInfo */
	bp_abi_put_u64(e, 1);
	for (i = 0; i < 3; i++)		/* aggregatorInfo */
		bp_abi_put_u64(e, 0);
	bp_abi_tuple_end(e);
	if (bp_abi_enc_finish(e, NULL, &out, len) == -1)
		out = NULL;
	bp_abi_enc_free(e);
	return out;
}

static void
test_decode(void)
{
	struct bp_userop_validate_result r;
	struct bp_userop_validate_error err;
	uint8_t acc[32], pm[32], *data, *fo;
	const uint8_t *res;
	size_t len, i, rlen, folen;
	uint64_t pre, paid;
	int ok;
	struct bp_abi_enc *e;
	uint8_t sel[4];

	memset(&err, 0, sizeof(err));
	vd(acc, 0, 0, 0);
	vd(pm, 0, 0, 0);
	CU_ASSERT_FATAL((data = validation_result(acc, pm, &len)) != NULL);
	CU_ASSERT_EQUAL(bp_bundler_v07_decode_validation(data, len, &r, &err), 0);
	CU_ASSERT(eq(&r.pre_op_gas, 70000));
	CU_ASSERT(eq(&r.prefund, 12345));
	CU_ASSERT(eq(&r.sender_stake, 7) && r.sender_unstake_delay == 86400);
	CU_ASSERT(eq(&r.paymaster_stake, 9) && r.paymaster_unstake_delay == 1);
	/* The factory's stake too: ERC-7562's relaxations for a staked factory (bundler_rules.c). */
	CU_ASSERT(eq(&r.factory_stake, 8) && r.factory_unstake_delay == 172800);
	CU_ASSERT(!r.sig_failed);
	CU_ASSERT_EQUAL(bp_userop_validate_check_result(&r, 1000, &err), 0);
	/* Every truncation before the paymaster's context (not read) fails cleanly. */
	for (i = 0; i < len - 3 * 32; i += 7)
		CU_ASSERT_EQUAL(bp_bundler_v07_decode_validation(data, i, &r, &err), -1);
	free(data);
	/* The account's SIG_VALIDATION_FAILED: -32507; its window: -32503. */
	vd(acc, 1, 0, 0);
	CU_ASSERT_FATAL((data = validation_result(acc, pm, &len)) != NULL);
	CU_ASSERT_EQUAL(bp_bundler_v07_decode_validation(data, len, &r, &err), 0);
	CU_ASSERT_EQUAL(bp_userop_validate_check_result(&r, 1000, &err), -1);
	CU_ASSERT_EQUAL(err.code, BP_USEROP_VALIDATE_BAD_SIGNATURE);
	free(data);
	vd(acc, 0, 0, 0);
	vd(pm, 0, 1010, 0);
	CU_ASSERT_FATAL((data = validation_result(acc, pm, &len)) != NULL);
	CU_ASSERT_EQUAL(bp_bundler_v07_decode_validation(data, len, &r, &err), 0);
	CU_ASSERT_EQUAL(bp_userop_validate_check_result(&r, 1000, &err), -1);
	CU_ASSERT_EQUAL(err.code, BP_USEROP_VALIDATE_SHORT_DEADLINE);
	free(data);
	vd(acc, 5, 0, 0);
	CU_ASSERT_FATAL((data = validation_result(acc, pm, &len)) != NULL);
	CU_ASSERT_EQUAL(bp_bundler_v07_decode_validation(data, len, &r, &err), -1);
	CU_ASSERT_EQUAL(err.code, BP_USEROP_VALIDATE_AGGREGATOR);
	free(data);

	/* FailedOpWithRevert(0, "AA23 reverted", inner): -32500 with the data; AA33: -32501. */
	e = bp_abi_enc_new(1024);
	bp_abi_put_u64(e, 0);
	bp_abi_put_string(e, "AA33 reverted", 13);
	bp_abi_put_bytes(e, "\x01\x02", 2);
	bp_abi_selector("FailedOpWithRevert(uint256,string,bytes)", sel);
	CU_ASSERT_FATAL(bp_abi_enc_finish(e, sel, &fo, &folen) == 0);
	bp_abi_enc_free(e);
	CU_ASSERT_EQUAL(bp_bundler_v07_decode_revert(fo, folen, &err), -1);
	CU_ASSERT_EQUAL(err.code, BP_USEROP_VALIDATE_REJECTED_PAYMASTER);
	CU_ASSERT_STRING_EQUAL(err.message, "AA33 reverted");
	CU_ASSERT(err.len == folen && memcmp(err.data, fo, folen) == 0);
	for (i = 0; i < folen; i += 5)
		CU_ASSERT_EQUAL(bp_bundler_v07_decode_revert(fo, i, &err), -1);
	free(fo);
	CU_ASSERT_EQUAL(bp_bundler_v07_decode_revert(NULL, 0, &err), -1);
	CU_ASSERT_EQUAL(err.code, BP_USEROP_VALIDATE_REJECTED_ACCOUNT);
	bp_userop_validate_error_free(&err);

	/* ExecutionResult(preOpGas, paid, accountValidationData, pmValidationData, ok, result). */
	e = bp_abi_enc_new(1024);
	bp_abi_tuple_begin(e);
	bp_abi_put_u64(e, 50000);
	bp_abi_put_u64(e, 90000);
	bp_abi_put_bytes32(e, acc);
	bp_abi_put_bytes32(e, pm);
	bp_abi_put_bool(e, 1);
	bp_abi_put_bytes(e, "\xaa", 1);
	bp_abi_tuple_end(e);
	CU_ASSERT_FATAL(bp_abi_enc_finish(e, NULL, &data, &len) == 0);
	bp_abi_enc_free(e);
	CU_ASSERT_EQUAL(bp_bundler_v07_execution_result(data, len, &pre, &paid, &ok, &res, &rlen,
	    &err), 0);
	CU_ASSERT(pre == 50000 && paid == 90000 && ok == 1 && rlen == 1 && res[0] == 0xaa);
	for (i = 0; i < len - 31; i += 9)	/* up to the result's padding */
		CU_ASSERT_EQUAL(bp_bundler_v07_execution_result(data, i, &pre, &paid, &ok, &res,
		    &rlen, &err), -1);
	free(data);
}

static void
test_estimate_helpers(void)
{
	struct bp_userop op;
	char *o;

	/* used 40,000 of 10,000,000: the EntryPoint charged 996,000 more. */
	CU_ASSERT_EQUAL(bp_bundler_v07_exec_gas(40000 + (10000000 - 40000) / 10, 10000000), 40000);
	CU_ASSERT_EQUAL(bp_bundler_v07_exec_gas(500, 10000000), 500);
	CU_ASSERT_EQUAL(bp_bundler_v07_exec_gas(UINT64_MAX, 10), UINT64_MAX);
	op07(&op);
	bp_bundler_v07_set_pm_gas(&op, 3000000, 7);
	CU_ASSERT(eq(&op.pm_gas[0], 3000000) && eq(&op.pm_gas[1], 7));
	CU_ASSERT_EQUAL(op.bytes[BP_USEROP_PAYMASTER_AND_DATA][20 + 13], 0x2d);	/* 0x2dc6c0 */
	CU_ASSERT_EQUAL(op.bytes[BP_USEROP_PAYMASTER_AND_DATA][36 + 15], 7);
	CU_ASSERT_EQUAL(op.bytes[BP_USEROP_PAYMASTER_AND_DATA][52], 0x99);
	/* The override: the simulations' code at the EntryPoint, and a funded sender. */
	CU_ASSERT_FATAL((o = bp_bundler_v07_override(BP_EP_V08, op.sender, op.bytes[BP_USEROP_INIT_CODE],
	    1, NULL)) != NULL);
	CU_ASSERT(strncmp(o, "{\"0x1111111111111111111111111111111111111111\":{\"code\":\"0x6080",
	    strlen("{\"0x1111111111111111111111111111111111111111\":{\"code\":\"0x6080")) == 0);
	CU_ASSERT(strstr(o, bp_bundler_sim_code_v08) != NULL);
	CU_ASSERT(strstr(o, "\"0x2222222222222222222222222222222222222222\":{\"balance\":") != NULL);
	free(o);
	bp_userop_free(&op);
	/* Each embedded code dispatches simulateValidation and simulateHandleOp of its version. */
	CU_ASSERT(strstr(bp_bundler_sim_code_v07, "63c3bce009") != NULL);
	CU_ASSERT(strstr(bp_bundler_sim_code_v07, "6397b2dcb9") != NULL);
	CU_ASSERT(strlen(bp_bundler_sim_code_v08) > 40000);
}

BP_UNIT_SUITE(bundler_v07, NULL, NULL,
    { "v0.7: handleOps selectors, PackedUserOperation encoding, gas total", test_encoding },
    { "v0.7: the op's JSON-RPC form, written and read back", test_json },
    { "v0.7: validationData words", test_validation_data },
    { "v0.7: ValidationResult, FailedOpWithRevert, ExecutionResult with hostile data", test_decode },
    { "v0.7: the estimate's penalty, paymaster limits and state override", test_estimate_helpers })
