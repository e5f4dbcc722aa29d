/*
 * eth_estimateUserOperationGas (bundler_estimate.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bundler.h"
#include "bundler_7702.h"
#include "bundler_estimate.h"
#include "bundler_paymaster.h"
#include "bundler_v07.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "userop_validate.h"

#define SIG_SIMULATE_HANDLE_OP "simulateHandleOp((address,uint256,bytes,bytes,uint256,uint256," \
	"uint256,uint256,uint256,bytes,bytes),address,bytes)"
#define SIG_SIMULATE_HANDLE_OP_V07 "simulateHandleOp((address,uint256,bytes,bytes,bytes32," \
	"uint256,bytes32,bytes,bytes),address,bytes)"
#define SIG_EXECUTION_RESULT "ExecutionResult(uint256,uint256,uint48,uint48,bool,bytes)"
#define SIG_FAILED_OP	"FailedOp(uint256,string)"

/* What the estimation op carries while simulated. */
#define EST_VERIFICATION_GAS	3000000
#define EST_CALL_GAS		10000000

int
bp_bundler_execution_result(const uint8_t *data, size_t len, uint64_t *pre_op_gas,
    uint64_t *paid, int *target_success, const uint8_t **result, size_t *result_len,
    struct bp_userop_validate_error *err)
{
	uint8_t sel[4];
	struct bp_userop_validate_result ignored;

	bp_abi_selector(SIG_EXECUTION_RESULT, sel);
	if (data == NULL || len < 4 || memcmp(data, sel, 4) != 0) {
		bp_abi_selector(SIG_FAILED_OP, sel);
		if (data != NULL && len >= 4 && memcmp(data, sel, 4) == 0)
			return bp_userop_validate_decode_validation(data, len, &ignored, err);
		err->code = BP_USEROP_VALIDATE_REJECTED_ACCOUNT;
		snprintf(err->message, sizeof(err->message), "simulateHandleOp reverted without "
		    "an ExecutionResult");
		return -1;
	}
	if (bp_abi_read_u64(data + 4, len - 4, 0, pre_op_gas) == -1 ||
	    bp_abi_read_u64(data + 4, len - 4, 1, paid) == -1 ||
	    bp_abi_read_bool(data + 4, len - 4, 4, target_success) == -1 ||
	    bp_abi_read_bytes(data + 4, len - 4, 5, result, result_len) == -1) {
		err->code = BP_USEROP_VALIDATE_REJECTED_ACCOUNT;
		snprintf(err->message, sizeof(err->message), "ExecutionResult does not decode");
		return -1;
	}
	return 0;
}

/* The calldata of simulateHandleOp(op, target, tdata); NULL when out of memory. */
static uint8_t *
handle_op_calldata(const struct bp_userop *op, const uint8_t target[20], const uint8_t *tdata,
    size_t tlen, size_t *len)
{
	uint8_t *enc, *out;
	size_t elen, packed, padded = (tlen + 31) / 32 * 32, n;

	if ((enc = bp_userop_abi(op, (size_t)-1, &elen, &packed)) == NULL)
		return NULL;
	n = 4 + 3 * 32 + elen + 32 + padded;
	if ((out = calloc(1, n)) != NULL) {
		bp_abi_selector(op->version == BP_EP_V06 ? SIG_SIMULATE_HANDLE_OP :
		    SIG_SIMULATE_HANDLE_OP_V07, out);
		out[4 + 31] = 0x60;
		memcpy(out + 4 + 32 + 12, target, 20);
		out[4 + 64 + 24] = (uint8_t)((0x60 + elen) >> 56);
		out[4 + 64 + 25] = (uint8_t)((0x60 + elen) >> 48);
		out[4 + 64 + 26] = (uint8_t)((0x60 + elen) >> 40);
		out[4 + 64 + 27] = (uint8_t)((0x60 + elen) >> 32);
		out[4 + 64 + 28] = (uint8_t)((0x60 + elen) >> 24);
		out[4 + 64 + 29] = (uint8_t)((0x60 + elen) >> 16);
		out[4 + 64 + 30] = (uint8_t)((0x60 + elen) >> 8);
		out[4 + 64 + 31] = (uint8_t)(0x60 + elen);
		memcpy(out + 4 + 96, enc, elen);
		out[4 + 96 + elen + 28] = (uint8_t)(tlen >> 24);
		out[4 + 96 + elen + 29] = (uint8_t)(tlen >> 16);
		out[4 + 96 + elen + 30] = (uint8_t)(tlen >> 8);
		out[4 + 96 + elen + 31] = (uint8_t)tlen;
		if (tlen > 0)
			memcpy(out + 4 + 96 + elen + 32, tdata, tlen);
		*len = n;
	}
	free(enc);
	return out;
}

/* Runs simulateHandleOp; 0 with the decoded result (res/res_len into *buf), or -1. */
static int
simulate(struct bp_bundler_call *c, const uint8_t ep[20], const struct bp_userop *op,
    const uint8_t *delegate, const uint8_t target[20], const uint8_t *tdata, size_t tlen, uint64_t *pre, uint64_t *paid,
    int *ok, uint8_t **buf, const uint8_t **res, size_t *res_len)
{
	char override[160], sender[BP_ADDR_STRLEN], *v07 = NULL;
	uint8_t *data;
	size_t len, retlen;
	int rc;

	*buf = NULL;
	bp_addr_format_lower(op->sender, sender, sizeof(sender));
	snprintf(override, sizeof(override), "{\"%s\":{\"balance\":\"0x56bc75e2d63100000\"}}",
	    sender);
	/* v0.7/v0.8: EntryPointSimulations at the EntryPoint's address too (and a delegation). */
	if ((op->version != BP_EP_V06 && (v07 = bp_bundler_v07_override(op->version, ep,
	    op->sender, 1, delegate)) == NULL) || (data = handle_op_calldata(op, target, tdata, tlen,
	    &len)) == NULL) {
		free(v07);
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
	}
	rc = bp_userop_validate_eth_call(c->up, c->net, ep, data, len, "latest", v07 ? v07 : override,
	    buf, &retlen, &c->err);
	free(data);
	free(v07);
	if (rc == -1)
		return -1;
	if (op->version != BP_EP_V06)	/* it returns its result, and reverts only to fail */
		return rc == 1 ? bp_bundler_v07_decode_revert(*buf, retlen, &c->err) :
		    bp_bundler_v07_execution_result(*buf, retlen, pre, paid, ok, res, res_len, &c->err);
	if (rc == 0)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "simulateHandleOp did not revert: "
		    "the entry point is not a v0.6 EntryPoint");
	return bp_bundler_execution_result(*buf, retlen, pre, paid, ok, res, res_len, &c->err);
}

/* A copy of params[0] with absent gas fields as "0x0"; NULL when it is not an object. */
static cJSON *
with_defaults(const cJSON *j)
{
	static const char *const gas[] = { "callGasLimit", "verificationGasLimit",
	    "preVerificationGas", "maxFeePerGas", "maxPriorityFeePerGas" };
	cJSON *d;
	size_t i;

	if (!cJSON_IsObject(j) || (d = cJSON_Duplicate(j, 1)) == NULL)
		return NULL;
	for (i = 0; i < sizeof(gas) / sizeof(gas[0]); i++)
		if (cJSON_GetObjectItemCaseSensitive(d, gas[i]) == NULL)
			cJSON_AddStringToObject(d, gas[i], "0x0");
	return d;
}

int
bp_bundler_estimate(struct bp_bundler_call *c)
{
	static const uint8_t zero[20];
	struct bp_userop op, est;
	uint8_t ep[20], *buf = NULL, *pnd = NULL, delegate[20];
	const uint8_t *res;
	size_t res_len;
	uint64_t pvg, pre, paid, verif, call, post_op = 0, pm_verif = 0;
	cJSON *orig, *d;
	int ok, rc = -1, pm, apply = 0;

	memset(&op, 0, sizeof(op));
	orig = cJSON_GetArrayItem(c->params, 0);
	if (orig != NULL && (d = with_defaults(orig)) != NULL) {
		/* The op with defaults takes params[0]'s place for the parse. */
		cJSON_ReplaceItemInArray((cJSON *)c->params, 0, d);
	}
	if (bp_bundler_op_param(c, &op, ep) == -1 ||
	    bp_bundler_7702_prepare(c->up, c->net, &op, 0, delegate, &apply, &c->err) == -1)
		goto out;
	est = op;	/* shallow: only op's own bytes are freed */
	if (est.len[BP_USEROP_SIGNATURE] == 0) {
		est.bytes[BP_USEROP_SIGNATURE] = (uint8_t *)(uintptr_t)bp_bundler_dummy_sig;
		est.len[BP_USEROP_SIGNATURE] = sizeof(bp_bundler_dummy_sig);
	}
	pvg = bp_userop_validate_pre_verification_gas(&est, 1);
	bp_u256_from_u64(&est.num[BP_USEROP_PRE_VERIFICATION_GAS], pvg);
	bp_u256_from_u64(&est.num[BP_USEROP_VERIFICATION_GAS_LIMIT], EST_VERIFICATION_GAS);
	bp_u256_from_u64(&est.num[BP_USEROP_CALL_GAS_LIMIT], EST_CALL_GAS);
	bp_u256_from_u64(&est.num[BP_USEROP_MAX_FEE_PER_GAS], 1);
	bp_u256_from_u64(&est.num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS], 1);
	/*
	 * v0.7/v0.8 with a paymaster: its verification limit as the account's while simulated,
	 * its postOp limit the op's own (0 when absent), on a copy of the packed data.
	 */
	pm = op.version != BP_EP_V06 && op.len[BP_USEROP_PAYMASTER_AND_DATA] >= 52;
	if (pm) {
		if (bp_u256_to_u64(&op.pm_gas[1], &post_op) == -1 || post_op > EST_CALL_GAS) {
			bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "userOperation."
			    "paymasterPostOpGasLimit is above %d", EST_CALL_GAS);
			goto out;
		}
		if ((pnd = malloc(op.len[BP_USEROP_PAYMASTER_AND_DATA])) == NULL) {
			bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
			goto out;
		}
		memcpy(pnd, op.bytes[BP_USEROP_PAYMASTER_AND_DATA], op.len[BP_USEROP_PAYMASTER_AND_DATA]);
		est.bytes[BP_USEROP_PAYMASTER_AND_DATA] = pnd;
		bp_bundler_v07_set_pm_gas(&est, EST_VERIFICATION_GAS, post_op);
	}
	if (simulate(c, ep, &est, apply ? delegate : NULL, zero, NULL, 0, &pre, &paid, &ok, &buf, &res, &res_len) == -1)
		goto out;
	free(buf);
	buf = NULL;
	verif = pre > pvg ? pre - pvg : 0;
	call = paid > pre ? paid - pre : 0;
	/* v0.7/v0.8 charged 10% of the call and postOp gas left unused: taken out again. */
	if (op.version != BP_EP_V06)
		call = bp_bundler_v07_exec_gas(call, EST_CALL_GAS + post_op);
	/*
	 * The simulation measures the account's and the paymaster's verification together; the
	 * paymaster's alone is its validatePaymasterUserOp called from the EntryPoint, or when the
	 * node cannot tell, the whole again (an overestimate costs only prefund, never a penalty).
	 */
	if (pm && (pm_verif = bp_bundler_v07_paymaster_gas(c->up, c->net, ep, &est)) == 0)
		pm_verif = verif;
	verif = verif + verif / 2 + 20000;
	pm_verif = pm_verif + pm_verif / 2 + 20000;
	call = call + call / 4 + 10000;
	if (op.len[BP_USEROP_CALL_DATA] > 0 && call < BP_USEROP_VALIDATE_MIN_CALL_GAS)
		call = BP_USEROP_VALIDATE_MIN_CALL_GAS;
	/* The call alone, from the entry point once the op has been validated (and deployed). */
	if (op.len[BP_USEROP_CALL_DATA] > 0) {
		struct bp_userop probe = est;

		probe.bytes[BP_USEROP_CALL_DATA] = NULL;
		probe.len[BP_USEROP_CALL_DATA] = 0;
		if (simulate(c, ep, &probe, apply ? delegate : NULL, op.sender, op.bytes[BP_USEROP_CALL_DATA],
		    op.len[BP_USEROP_CALL_DATA], &pre, &paid, &ok, &buf, &res, &res_len) == -1)
			goto out;
		if (!ok) {
			bp_bundler_fail(c, BP_USEROP_VALIDATE_EXEC_REVERTED, "the UserOperation's call reverted");
			if (res_len > 0 && (c->err.data = malloc(res_len)) != NULL) {
				memcpy(c->err.data, res, res_len);
				c->err.len = res_len;
			}
			goto out;
		}
	}
	rc = bp_buf_printf(c->result, "{\"preVerificationGas\":\"0x%llx\","
	    "\"verificationGasLimit\":\"0x%llx\",\"callGasLimit\":\"0x%llx\"",
	    (unsigned long long)pvg, (unsigned long long)verif, (unsigned long long)call);
	if (rc == 0 && pm)
		rc = bp_buf_printf(c->result, ",\"paymasterVerificationGasLimit\":\"0x%llx\","
		    "\"paymasterPostOpGasLimit\":\"0x%llx\"", (unsigned long long)pm_verif,
		    (unsigned long long)post_op);
	if (rc == 0)
		rc = bp_buf_adds(c->result, "}");
out:
	free(pnd);
	free(buf);
	bp_userop_free(&op);
	return rc;
}
