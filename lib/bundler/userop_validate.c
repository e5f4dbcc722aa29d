/*
 * Validation of a UserOperation for the bundler (userop_validate.h; docs/bundler.md).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "bundler_7702.h"
#include "core/buf.h"
#include "core/hex.h"
#include "core/log.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "net/upstream.h"
#include "userop_validate.h"

#define SIG_VALIDATION_RESULT "ValidationResult((uint256,uint256,bool,uint48,uint48,bytes)," \
	"(uint256,uint256),(uint256,uint256),(uint256,uint256))"
#define SIG_VALIDATION_RESULT_AGG "ValidationResultWithAggregation((uint256,uint256,bool," \
	"uint48,uint48,bytes),(uint256,uint256),(uint256,uint256),(uint256,uint256)," \
	"(address,(uint256,uint256)))"
#define SIG_FAILED_OP	"FailedOp(uint256,string)"
#define SIG_ERROR	"Error(string)"
#define SIG_SIMULATE_VALIDATION BP_USEROP_VALIDATE_SIG_SIMULATE

#define ANSWER_MAX	(4 * 1024 * 1024)

void
bp_userop_validate_error_free(struct bp_userop_validate_error *e)
{
	free(e->data);
	e->data = NULL;
	e->len = 0;
}

static int
fail(struct bp_userop_validate_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -1;
}

int
bp_userop_validate_reason_code(const char *reason)
{
	int d1, d2;

	if (strncmp(reason, "AA", 2) != 0 || reason[2] < '0' || reason[2] > '9' ||
	    reason[3] < '0' || reason[3] > '9')
		return BP_USEROP_VALIDATE_REJECTED_ACCOUNT;
	d1 = reason[2] - '0';
	d2 = reason[3] - '0';
	if ((d1 == 2 || d1 == 3) && d2 == 2)	/* AA22 / AA32 expired or not due */
		return BP_USEROP_VALIDATE_SHORT_DEADLINE;
	if ((d1 == 2 || d1 == 3) && d2 == 4)	/* AA24 / AA34 signature error */
		return BP_USEROP_VALIDATE_BAD_SIGNATURE;
	if (d1 == 9 && d2 == 6)			/* AA96 invalid aggregator */
		return BP_USEROP_VALIDATE_AGGREGATOR;
	if (d1 == 3)				/* AA3x: the paymaster */
		return BP_USEROP_VALIDATE_REJECTED_PAYMASTER;
	return BP_USEROP_VALIDATE_REJECTED_ACCOUNT;		/* AA1x factory, AA2x account, AA4x, AA5x, AA9x */
}

/* 1 when data starts with the selector of sig. */
static int
is_error(const uint8_t *data, size_t len, const char *sig)
{
	uint8_t sel[BP_ABI_SELECTOR_LEN];

	bp_abi_selector(sig, sel);
	return len >= 4 && memcmp(data, sel, 4) == 0;
}

/* Copies the revert data into err->data (best effort). */
static void
keep_data(struct bp_userop_validate_error *err, const uint8_t *data, size_t len)
{
	free(err->data);
	err->data = NULL;
	err->len = 0;
	if (len > 0 && (err->data = malloc(len)) != NULL) {
		memcpy(err->data, data, len);
		err->len = len;
	}
}

int
bp_userop_validate_decode_validation(const uint8_t *data, size_t len, struct bp_userop_validate_result *out,
    struct bp_userop_validate_error *err)
{
	const uint8_t *b, *sub;
	size_t blen, sublen;
	char reason[256];

	memset(out, 0, sizeof(*out));
	if (data == NULL || len < 4)
		return fail(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "simulateValidation did not revert with a "
		    "result (the entry point is not a v0.6 EntryPoint?)");
	b = data + 4;
	blen = len - 4;
	if (is_error(data, len, SIG_FAILED_OP)) {
		if (bp_abi_read_string(b, blen, 1, reason, sizeof(reason)) == -1)
			return fail(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "FailedOp with an unreadable reason");
		keep_data(err, data, len);
		return fail(err, bp_userop_validate_reason_code(reason), "%s", reason);
	}
	if (is_error(data, len, SIG_VALIDATION_RESULT_AGG))
		return fail(err, BP_USEROP_VALIDATE_AGGREGATOR, "signature aggregators are not supported");
	if (is_error(data, len, SIG_ERROR)) {
		if (bp_abi_read_string(b, blen, 0, reason, sizeof(reason)) == -1)
			reason[0] = '\0';
		keep_data(err, data, len);
		return fail(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "validation reverted: %s", reason);
	}
	if (!is_error(data, len, SIG_VALIDATION_RESULT)) {
		keep_data(err, data, len);
		return fail(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "validation reverted");
	}
	if (bp_abi_read_tuple(b, blen, 0, &sub, &sublen) == -1 ||
	    bp_abi_read_u256(sub, sublen, 0, &out->pre_op_gas) == -1 ||
	    bp_abi_read_u256(sub, sublen, 1, &out->prefund) == -1 ||
	    bp_abi_read_bool(sub, sublen, 2, &out->sig_failed) == -1 ||
	    bp_abi_read_u64(sub, sublen, 3, &out->valid_after) == -1 ||
	    bp_abi_read_u64(sub, sublen, 4, &out->valid_until) == -1 ||
	    bp_abi_read_u256(b, blen, 1, &out->sender_stake) == -1 ||
	    bp_abi_read_u64(b, blen, 2, &out->sender_unstake_delay) == -1 ||
	    bp_abi_read_u256(b, blen, 5, &out->paymaster_stake) == -1 ||
	    bp_abi_read_u256(b, blen, 3, &out->factory_stake) == -1 ||
	    bp_abi_read_u64(b, blen, 4, &out->factory_unstake_delay) == -1 ||
	    bp_abi_read_u64(b, blen, 6, &out->paymaster_unstake_delay) == -1)
		return fail(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "ValidationResult does not decode");
	return 0;
}

int
bp_userop_validate_check_result(const struct bp_userop_validate_result *res, uint64_t now, struct bp_userop_validate_error *err)
{
	if (res->sig_failed)
		return fail(err, BP_USEROP_VALIDATE_BAD_SIGNATURE, "invalid UserOperation signature or paymaster "
		    "signature");
	if (res->valid_after > now)
		return fail(err, BP_USEROP_VALIDATE_SHORT_DEADLINE, "the UserOperation is not valid before %llu",
		    (unsigned long long)res->valid_after);
	if (res->valid_until != 0 && res->valid_until < now + BP_USEROP_VALIDATE_DEADLINE_MARGIN)
		return fail(err, BP_USEROP_VALIDATE_SHORT_DEADLINE, "the UserOperation expires too soon (%llu)",
		    (unsigned long long)res->valid_until);
	return 0;
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t
num64(const struct bp_userop *op, enum bp_userop_num i)
{
	uint64_t v;

	return bp_u256_to_u64(&op->num[i], &v) == -1 ? UINT64_MAX : v;
}

uint64_t
bp_userop_validate_total_gas(const struct bp_userop *op)
{
	uint64_t g, pm[2] = { 0, 0 };

	g = sat_add(sat_add(num64(op, BP_USEROP_CALL_GAS_LIMIT),
	    num64(op, BP_USEROP_VERIFICATION_GAS_LIMIT)), num64(op, BP_USEROP_PRE_VERIFICATION_GAS));
	/* v0.7 and v0.8: the paymaster's own two limits count too. */
	if (op->version != BP_EP_V06 && (bp_u256_to_u64(&op->pm_gas[0], &pm[0]) == -1 ||
	    bp_u256_to_u64(&op->pm_gas[1], &pm[1]) == -1))
		return UINT64_MAX;
	return sat_add(g, sat_add(pm[0], pm[1]));
}

uint64_t
bp_userop_validate_pre_verification_gas(const struct bp_userop *op, int with_fixed)
{
	static const uint8_t dummy[65] = { 1 };
	struct bp_userop o = *op;
	uint8_t *enc;
	size_t len, packed, i;
	uint64_t gas = 0;

	/* A shallow copy: nothing of it is freed. Fill what estimation leaves empty. */
	if (o.len[BP_USEROP_SIGNATURE] == 0) {
		o.bytes[BP_USEROP_SIGNATURE] = (uint8_t *)(uintptr_t)dummy;
		o.len[BP_USEROP_SIGNATURE] = sizeof(dummy);
	}
	if ((enc = bp_userop_abi(&o, (size_t)-1, &len, &packed)) == NULL)
		return UINT64_MAX;
	for (i = 0; i < len; i++)
		gas += enc[i] == 0 ? 4 : 16;
	free(enc);
	gas = sat_add(gas, 18300 + 4 * ((len + 31) / 32));
	/* The bundle's type 4 transaction pays for the authorization the op brings. */
	if (op->has_auth)
		gas = sat_add(gas, BP_BUNDLER_7702_AUTH_GAS);
	return with_fixed ? sat_add(gas, 21000) : gas;
}

int
bp_userop_validate_check_fields(const struct bp_userop *op, const struct bp_u256 *base_fee,
    struct bp_userop_validate_error *err)
{
	const struct bp_u256 *fee = &op->num[BP_USEROP_MAX_FEE_PER_GAS];
	const struct bp_u256 *tip = &op->num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS];
	uint64_t min_pvg;
	char have[80];

	if (bp_u256_cmp(tip, fee) > 0)
		return fail(err, BP_USEROP_VALIDATE_INVALID_PARAMS, "maxPriorityFeePerGas is above maxFeePerGas");
	if (base_fee != NULL && bp_u256_cmp(fee, base_fee) < 0) {
		bp_u256_to_dec(base_fee, have, sizeof(have));
		return fail(err, BP_USEROP_VALIDATE_INVALID_PARAMS, "maxFeePerGas is below the base fee (%s wei)",
		    have);
	}
	if (num64(op, BP_USEROP_VERIFICATION_GAS_LIMIT) > BP_USEROP_VALIDATE_MAX_VERIFICATION_GAS)
		return fail(err, BP_USEROP_VALIDATE_INVALID_PARAMS, "verificationGasLimit is above %d",
		    BP_USEROP_VALIDATE_MAX_VERIFICATION_GAS);
	if (bp_userop_validate_total_gas(op) > BP_USEROP_VALIDATE_MAX_OP_GAS)
		return fail(err, BP_USEROP_VALIDATE_INVALID_PARAMS, "the gas limits add up to more than %d",
		    BP_USEROP_VALIDATE_MAX_OP_GAS);
	if (op->len[BP_USEROP_CALL_DATA] > 0 &&
	    num64(op, BP_USEROP_CALL_GAS_LIMIT) < BP_USEROP_VALIDATE_MIN_CALL_GAS)
		return fail(err, BP_USEROP_VALIDATE_INVALID_PARAMS, "callGasLimit is below %d",
		    BP_USEROP_VALIDATE_MIN_CALL_GAS);
	min_pvg = bp_userop_validate_pre_verification_gas(op, 0);
	if (num64(op, BP_USEROP_PRE_VERIFICATION_GAS) < min_pvg)
		return fail(err, BP_USEROP_VALIDATE_INVALID_PARAMS, "preVerificationGas is below %llu",
		    (unsigned long long)min_pvg);
	return 0;
}

uint8_t *
bp_userop_validate_calldata(const char *sig, const struct bp_userop *op, size_t *len)
{
	uint8_t *enc, *out;
	size_t elen, packed;

	if ((enc = bp_userop_abi(op, (size_t)-1, &elen, &packed)) == NULL)
		return NULL;
	if ((out = malloc(4 + 32 + elen)) != NULL) {
		bp_abi_selector(sig, out);
		memset(out + 4, 0, 32);
		out[4 + 31] = 0x20;
		memcpy(out + 36, enc, elen);
		*len = 4 + 32 + elen;
	}
	free(enc);
	return out;
}

/* Decodes the hex string j (a "0x..." DATA) into a new buffer; 0 or -1. */
static int
hex_data(const cJSON *j, uint8_t **out, size_t *len)
{
	size_t n;

	*out = NULL;
	*len = 0;
	if (!cJSON_IsString(j))
		return -1;
	n = strlen(j->valuestring);
	if (n < 2 || n / 2 > ANSWER_MAX)
		return -1;
	if (n == 2)
		return strcmp(j->valuestring, "0x") == 0 ? 0 : -1;
	if ((*out = malloc(n / 2)) == NULL)
		return -1;
	if (bp_hex_decode(j->valuestring, n, *out, n / 2, len) == -1) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

int
bp_userop_validate_eth_call(struct bp_upstream *up, const struct bp_network *net, const uint8_t to[20],
    const uint8_t *data, size_t len, const char *block, const char *override, uint8_t **ret,
    size_t *retlen, struct bp_userop_validate_error *err)
{
	struct bp_upstream_info info;
	struct bp_buf req, ans;
	char addr[BP_ADDR_STRLEN], *hex = NULL;
	cJSON *a = NULL, *e, *d;
	int rc = -1;

	*ret = NULL;
	*retlen = 0;
	bp_buf_init(&req, SIZE_MAX / 4);
	bp_buf_init(&ans, ANSWER_MAX);
	bp_addr_format_lower(to, addr, sizeof(addr));
	if ((hex = malloc(2 * len + 3)) == NULL || bp_hex_encode(data, len, hex, 2 * len + 3) == -1 ||
	    bp_buf_printf(&req, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_call\",\"params\":"
	    "[{\"to\":\"%s\",\"data\":\"%s\"},\"%s\"%s%s]}", addr, hex, block,
	    override ? "," : "", override ? override : "") == -1) {
		fail(err, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
		goto out;
	}
	if (bp_upstream_post(up, net, req.data, req.len, &ans, &info) != BP_UPSTREAM_OK) {
		fail(err, BP_USEROP_VALIDATE_INTERNAL, "the %s %s node did not answer", net->chain, net->network);
		goto out;
	}
	if ((a = cJSON_ParseWithLength(ans.data, ans.len)) == NULL || !cJSON_IsObject(a)) {
		fail(err, BP_USEROP_VALIDATE_INTERNAL, "the node's answer is not JSON-RPC");
		goto out;
	}
	if ((e = cJSON_GetObjectItemCaseSensitive(a, "error")) != NULL) {
		d = cJSON_GetObjectItemCaseSensitive(e, "data");
		if (cJSON_IsObject(d))		/* some nodes nest it: {"data": {"data": "0x.."}} */
			d = cJSON_GetObjectItemCaseSensitive(d, "data");
		if (hex_data(d, ret, retlen) == 0) {
			rc = 1;
			goto out;
		}
		e = cJSON_GetObjectItemCaseSensitive(e, "message");
		fail(err, BP_USEROP_VALIDATE_INTERNAL, "eth_call failed: %.200s",
		    cJSON_IsString(e) ? e->valuestring : "no message");
		goto out;
	}
	if (hex_data(cJSON_GetObjectItemCaseSensitive(a, "result"), ret, retlen) == -1) {
		fail(err, BP_USEROP_VALIDATE_INTERNAL, "the node's eth_call result is not hex data");
		goto out;
	}
	rc = 0;
out:
	free(hex);
	cJSON_Delete(a);
	bp_buf_free(&req);
	bp_buf_free(&ans);
	return rc;
}

int
bp_userop_validate_simulated(int reverted, const uint8_t *ret, size_t retlen,
    struct bp_userop_validate_result *out, struct bp_userop_validate_error *err)
{
	if (!reverted)
		return fail(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "simulateValidation did not revert: "
		    "the entry point is not a v0.6 EntryPoint");
	if (bp_userop_validate_decode_validation(ret, retlen, out, err) == -1)
		return -1;
	return bp_userop_validate_check_result(out, (uint64_t)time(NULL), err);
}

int
bp_userop_validate_block_fees(struct bp_upstream *up, const struct bp_network *net, struct bp_u256 *base_fee,
    uint64_t *gas_limit, struct bp_userop_validate_error *err)
{
	struct bp_upstream_info info;
	struct bp_buf ans;
	static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_getBlockByNumber\","
	    "\"params\":[\"latest\",false]}";
	cJSON *a = NULL, *r, *f, *g;
	int rc = -1;

	bp_buf_init(&ans, ANSWER_MAX);
	if (bp_upstream_post(up, net, req, sizeof(req) - 1, &ans, &info) != BP_UPSTREAM_OK) {
		fail(err, BP_USEROP_VALIDATE_INTERNAL, "the %s %s node did not answer", net->chain, net->network);
		goto out;
	}
	if ((a = cJSON_ParseWithLength(ans.data, ans.len)) == NULL ||
	    !cJSON_IsObject(r = cJSON_GetObjectItemCaseSensitive(a, "result"))) {
		fail(err, BP_USEROP_VALIDATE_INTERNAL, "the node's latest block does not read");
		goto out;
	}
	f = cJSON_GetObjectItemCaseSensitive(r, "baseFeePerGas");
	g = cJSON_GetObjectItemCaseSensitive(r, "gasLimit");
	bp_u256_from_u64(base_fee, 0);
	*gas_limit = 30000000;
	if (cJSON_IsString(f) &&
	    bp_u256_from_quantity(base_fee, f->valuestring, strlen(f->valuestring)) == -1)
		bp_u256_from_u64(base_fee, 0);
	if (cJSON_IsString(g) &&
	    bp_hex_quantity_lenient(g->valuestring, strlen(g->valuestring), gas_limit) == -1)
		*gas_limit = 30000000;
	rc = 0;
out:
	cJSON_Delete(a);
	bp_buf_free(&ans);
	return rc;
}
