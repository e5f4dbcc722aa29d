/*
 * EntryPoint v0.7 and v0.8 for the bundler: simulations through a state override, their
 * results, and the ops' JSON-RPC form (bundler_v07.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bundler.h"
#include "bundler_v07.h"
#include "core/hex.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "rpc/rpc_client.h"

#define SIG_HANDLE_OPS_V06 "handleOps((address,uint256,bytes,bytes,uint256,uint256,uint256," \
	"uint256,uint256,bytes,bytes)[],address)"
#define SIG_HANDLE_OPS_V07 "handleOps((address,uint256,bytes,bytes,bytes32,uint256,bytes32," \
	"bytes,bytes)[],address)"
#define SIG_SIMULATE_VALIDATION "simulateValidation((address,uint256,bytes,bytes,bytes32," \
	"uint256,bytes32,bytes,bytes))"
#define SIG_FAILED_OP_REVERT	"FailedOpWithRevert(uint256,string,bytes)"
#define SIG_VALIDATE_PAYMASTER	"validatePaymasterUserOp((address,uint256,bytes,bytes,bytes32," \
	"uint256,bytes32,bytes,bytes),bytes32,uint256)"

/* 100 ETH: what a simulation gives an account that may not be funded yet. */
#define FUND_WEI	"0x56bc75e2d63100000"

/* Sets e's code and message; returns -1. */
static int
set_err(struct bp_userop_validate_error *e, int code, const char *msg)
{
	e->code = code;
	bp_strlcpy(e->message, msg, sizeof(e->message));
	return -1;
}

const char *
bp_bundler_v07_handle_ops_sig(enum bp_ep_version v)
{
	return v == BP_EP_V06 ? SIG_HANDLE_OPS_V06 : SIG_HANDLE_OPS_V07;
}

char *
bp_bundler_v07_override(enum bp_ep_version v, const uint8_t ep[20], const uint8_t *sender,
    int fund, const uint8_t *delegate)
{
	const char *code = v == BP_EP_V08 ? bp_bundler_sim_code_v08 : bp_bundler_sim_code_v07;
	char a[BP_ADDR_STRLEN];
	struct bp_buf b;
	int rc;

	bp_buf_init(&b, strlen(code) + 4096);
	bp_addr_format_lower(ep, a, sizeof(a));
	rc = bp_buf_printf(&b, "{\"%s\":{\"code\":\"%s\"}", a, code);
	if (rc == 0 && sender != NULL && (fund || delegate != NULL)) {
		bp_addr_format_lower(sender, a, sizeof(a));
		rc = bp_buf_printf(&b, ",\"%s\":{%s%s", a, fund ? "\"balance\":\"" FUND_WEI "\"" :
		    "", fund && delegate != NULL ? "," : "");
		/* The delegation's 23 bytes: the EntryPoint reads them with extcodecopy. */
		if (rc == 0 && delegate != NULL) {
			bp_addr_format_lower(delegate, a, sizeof(a));
			rc = bp_buf_printf(&b, "\"code\":\"0xef0100%s\"", a + 2);
		}
		if (rc == 0)
			rc = bp_buf_adds(&b, "}");
	}
	if (rc == 0)
		rc = bp_buf_add(&b, "}", 2);	/* with the NUL */
	if (rc == -1) {
		bp_buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* The 6-byte big-endian number at p. */
static uint64_t
be48(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 6; i++)
		v = v << 8 | p[i];
	return v;
}

int
bp_bundler_v07_validation_data(const uint8_t w[32], struct bp_userop_validate_result *res)
{
	static const uint8_t zero[20];
	uint64_t after = be48(w), until = be48(w + 6);

	if (after > res->valid_after)
		res->valid_after = after;
	if (until != 0 && (res->valid_until == 0 || until < res->valid_until))
		res->valid_until = until;
	if (memcmp(w + 12, zero, 19) != 0 || w[31] > 1)
		return 1;
	if (w[31] == 1)
		res->sig_failed = 1;
	return 0;
}

int
bp_bundler_v07_decode_validation(const uint8_t *data, size_t len,
    struct bp_userop_validate_result *out, struct bp_userop_validate_error *err)
{
	const uint8_t *vr, *ri;
	size_t vrlen, rilen;
	uint8_t account[32], paymaster[32];

	memset(out, 0, sizeof(*out));
	if (data == NULL || bp_abi_read_tuple(data, len, 0, &vr, &vrlen) == -1 ||
	    bp_abi_read_tuple(vr, vrlen, 0, &ri, &rilen) == -1 ||
	    bp_abi_read_u256(ri, rilen, 0, &out->pre_op_gas) == -1 ||
	    bp_abi_read_u256(ri, rilen, 1, &out->prefund) == -1 ||
	    bp_abi_read_bytes32(ri, rilen, 2, account) == -1 ||
	    bp_abi_read_bytes32(ri, rilen, 3, paymaster) == -1 ||
	    bp_abi_read_u256(vr, vrlen, 1, &out->sender_stake) == -1 ||
	    bp_abi_read_u64(vr, vrlen, 2, &out->sender_unstake_delay) == -1 ||
	    bp_abi_read_u256(vr, vrlen, 5, &out->paymaster_stake) == -1 ||
	    bp_abi_read_u256(vr, vrlen, 3, &out->factory_stake) == -1 ||
	    bp_abi_read_u64(vr, vrlen, 4, &out->factory_unstake_delay) == -1 ||
	    bp_abi_read_u64(vr, vrlen, 6, &out->paymaster_unstake_delay) == -1)
		return set_err(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "ValidationResult does not decode");
	if (bp_bundler_v07_validation_data(account, out) == 1)
		return set_err(err, BP_USEROP_VALIDATE_AGGREGATOR, "signature aggregators are not supported");
	if (bp_bundler_v07_validation_data(paymaster, out) == 1)
		return set_err(err, BP_USEROP_VALIDATE_REJECTED_PAYMASTER, "the paymaster's validationData "
		    "names an aggregator");
	return 0;
}

int
bp_bundler_v07_decode_revert(const uint8_t *data, size_t len, struct bp_userop_validate_error *err)
{
	struct bp_userop_validate_result ignored;
	uint8_t sel[4];
	char reason[256];

	if (data == NULL || len < 4)
		return set_err(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "the simulation reverted without "
		    "a reason");
	bp_abi_selector(SIG_FAILED_OP_REVERT, sel);
	if (memcmp(data, sel, 4) != 0)		/* FailedOp, Error(string), anything else */
		return bp_userop_validate_decode_validation(data, len, &ignored, err) == 0 ?
		    set_err(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "validation reverted") : -1;
	if (bp_abi_read_string(data + 4, len - 4, 1, reason, sizeof(reason)) == -1)
		return set_err(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "FailedOpWithRevert with an "
		    "unreadable reason");
	free(err->data);
	err->len = 0;
	if ((err->data = malloc(len)) != NULL) {
		memcpy(err->data, data, len);
		err->len = len;
	}
	return set_err(err, bp_userop_validate_reason_code(reason), reason);
}

int
bp_bundler_v07_validation_call(const struct bp_userop *op, const uint8_t ep[20],
    const uint8_t *delegate, uint8_t **data, size_t *len, char **override)
{
	*data = NULL;
	if ((*override = bp_bundler_v07_override(op->version, ep, op->sender, 0,
	    delegate)) == NULL ||
	    (*data = bp_userop_validate_calldata(SIG_SIMULATE_VALIDATION, op, len)) == NULL) {
		free(*override);
		*override = NULL;
		return -1;
	}
	return 0;
}

int
bp_bundler_v07_simulated(int reverted, const uint8_t *ret, size_t retlen,
    struct bp_userop_validate_result *out, struct bp_userop_validate_error *err)
{
	if ((reverted ? bp_bundler_v07_decode_revert(ret, retlen, err) :
	    bp_bundler_v07_decode_validation(ret, retlen, out, err)) == -1)
		return -1;
	return bp_userop_validate_check_result(out, (uint64_t)time(NULL), err);
}

int
bp_bundler_v07_execution_result(const uint8_t *data, size_t len, uint64_t *pre_op_gas,
    uint64_t *paid, int *target_success, const uint8_t **result, size_t *result_len,
    struct bp_userop_validate_error *err)
{
	const uint8_t *er;
	size_t erlen;

	if (data == NULL || bp_abi_read_tuple(data, len, 0, &er, &erlen) == -1 ||
	    bp_abi_read_u64(er, erlen, 0, pre_op_gas) == -1 ||
	    bp_abi_read_u64(er, erlen, 1, paid) == -1 ||
	    bp_abi_read_bool(er, erlen, 4, target_success) == -1 ||
	    bp_abi_read_bytes(er, erlen, 5, result, result_len) == -1)
		return set_err(err, BP_USEROP_VALIDATE_REJECTED_ACCOUNT, "ExecutionResult does not decode");
	return 0;
}

uint64_t
bp_bundler_v07_exec_gas(uint64_t x, uint64_t limit)
{
	/* x = used + (limit - used) / 10, so used = (10x - limit) / 9. */
	if (x > UINT64_MAX / 10 || 10 * x <= limit)
		return x;
	return (10 * x - limit) / 9;
}

uint64_t
bp_bundler_v07_paymaster_gas(struct bp_upstream *up, const struct bp_network *net,
    const uint8_t ep[20], const struct bp_userop *op)
{
	struct bp_rpc_client_error jerr;
	struct bp_u256 cost;
	uint8_t *enc, *data = NULL, *w;
	char from[BP_ADDR_STRLEN], to[BP_ADDR_STRLEN], *hex = NULL;
	size_t elen, packed, len;
	uint64_t g = 0;
	cJSON *params = NULL, *tx, *r = NULL;

	if (op->len[BP_USEROP_PAYMASTER_AND_DATA] < 20 || bp_userop_max_cost(op, &cost) == -1 ||
	    (enc = bp_userop_abi(op, (size_t)-1, &elen, &packed)) == NULL)
		return 0;
	len = 4 + 3 * 32 + elen;
	if ((data = calloc(1, len)) == NULL || (hex = malloc(2 * len + 3)) == NULL)
		goto out;
	bp_abi_selector(SIG_VALIDATE_PAYMASTER, data);
	w = data + 4;
	w[31] = 0x60;			/* the op's offset, after the hash and maxCost */
	bp_userop_hash_v(op, ep, (uint64_t)net->chain_id, w + 32);
	bp_u256_to_be32(&cost, w + 64);
	memcpy(w + 96, enc, elen);
	bp_hex_encode(data, len, hex, 2 * len + 3);
	bp_addr_format_lower(ep, from, sizeof(from));
	bp_addr_format_lower(op->bytes[BP_USEROP_PAYMASTER_AND_DATA], to, sizeof(to));
	if ((params = cJSON_CreateArray()) == NULL || (tx = cJSON_CreateObject()) == NULL)
		goto out;
	cJSON_AddItemToArray(params, tx);
	cJSON_AddStringToObject(tx, "from", from);
	cJSON_AddStringToObject(tx, "to", to);
	cJSON_AddStringToObject(tx, "data", hex);
	if ((r = bp_rpc_client_call(up, net, "eth_estimateGas", params, &jerr)) != NULL &&
	    cJSON_IsString(r) && bp_hex_quantity_lenient(r->valuestring, strlen(r->valuestring),
	    &g) == 0)
		g = g > 21000 ? g - 21000 : 0;
	else
		g = 0;
out:
	cJSON_Delete(r);
	cJSON_Delete(params);
	free(hex);
	free(data);
	free(enc);
	return g;
}

/* v into the 16-byte big-endian field at p: the low half of its 32-byte word. */
static void
put16(uint8_t *p, uint64_t v)
{
	struct bp_u256 u;
	uint8_t w[32];

	bp_u256_from_u64(&u, v);
	bp_u256_to_be32(&u, w);
	memcpy(p, w + 16, 16);
}

void
bp_bundler_v07_set_pm_gas(struct bp_userop *op, uint64_t verification, uint64_t post_op)
{
	bp_u256_from_u64(&op->pm_gas[0], verification);
	bp_u256_from_u64(&op->pm_gas[1], post_op);
	put16(op->bytes[BP_USEROP_PAYMASTER_AND_DATA] + 20, verification);
	put16(op->bytes[BP_USEROP_PAYMASTER_AND_DATA] + 36, post_op);
}

/* Appends ,"NAME":"QUANTITY" of the 16 big-endian bytes at p. */
static int
put_q16(struct bp_buf *b, const char *name, const uint8_t *p)
{
	struct bp_u256 v;
	char q[BP_U256_HEX_MAX];

	bp_u256_from_be(&v, p, 16);
	bp_u256_to_quantity(&v, q, sizeof(q));
	return bp_buf_printf(b, ",\"%s\":\"%s\"", name, q);
}

/* Appends ,"eip7702Auth":{...} as viem sends it, and the closing brace of the op. */
static int
auth_member(const struct bp_tx_auth *a, struct bp_buf *b)
{
	char id[BP_U256_HEX_MAX], addr[BP_ADDR_STRLEN], r[67], s[67];

	bp_u256_to_quantity(&a->chain_id, id, sizeof(id));
	bp_addr_format_checksum(a->address, addr, sizeof(addr));
	bp_hex_encode(a->r, 32, r, sizeof(r));
	bp_hex_encode(a->s, 32, s, sizeof(s));
	return bp_buf_printf(b, ",\"eip7702Auth\":{\"chainId\":\"%s\",\"address\":\"%s\","
	    "\"nonce\":\"0x%llx\",\"yParity\":\"0x%x\",\"r\":\"%s\",\"s\":\"%s\"}}", id, addr,
	    (unsigned long long)a->nonce, (unsigned)a->y_parity, r, s);
}

int
bp_bundler_v07_op_members(const struct bp_userop *op, struct bp_buf *b)
{
	const uint8_t *ic = op->bytes[BP_USEROP_INIT_CODE], *pnd = op->bytes[BP_USEROP_PAYMASTER_AND_DATA];
	size_t iclen = op->len[BP_USEROP_INIT_CODE], pndlen = op->len[BP_USEROP_PAYMASTER_AND_DATA];
	char addr[BP_ADDR_STRLEN];

	if (bp_bundler_json_bytes(b, "callData", op->bytes[BP_USEROP_CALL_DATA],
	    op->len[BP_USEROP_CALL_DATA]) == -1 || bp_bundler_json_bytes(b, "signature",
	    op->bytes[BP_USEROP_SIGNATURE], op->len[BP_USEROP_SIGNATURE]) == -1)
		return -1;
	if (iclen >= 20) {
		bp_addr_format_checksum(ic, addr, sizeof(addr));
		if (bp_buf_printf(b, ",\"factory\":\"%s\"", addr) == -1 ||
		    bp_bundler_json_bytes(b, "factoryData", ic + 20, iclen - 20) == -1)
			return -1;
	} else if (iclen >= 2) {
		/* viem's short marker, 0x7702 ++ factoryData: the only shorter initCode read. */
		if (bp_buf_adds(b, ",\"factory\":\"0x7702\"") == -1 ||
		    bp_bundler_json_bytes(b, "factoryData", ic + 2, iclen - 2) == -1)
			return -1;
	}
	if (pndlen >= 52) {
		bp_addr_format_checksum(pnd, addr, sizeof(addr));
		if (bp_buf_printf(b, ",\"paymaster\":\"%s\"", addr) == -1 ||
		    put_q16(b, "paymasterVerificationGasLimit", pnd + 20) == -1 ||
		    put_q16(b, "paymasterPostOpGasLimit", pnd + 36) == -1 ||
		    bp_bundler_json_bytes(b, "paymasterData", pnd + 52, pndlen - 52) == -1)
			return -1;
	}
	return op->has_auth ? auth_member(&op->auth, b) : bp_buf_adds(b, "}");
}
