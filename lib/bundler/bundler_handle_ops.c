/*
 * handleOps calldata, decoded (bundler_handle_ops.h). The calldata is a transaction's input:
 * untrusted, every offset and length checked by lib/evm/abi.c's readers.
 *
 *	v0.6:       handleOps((address sender, uint256 nonce, bytes initCode, bytes callData,
 *	            uint256 callGasLimit, uint256 verificationGasLimit, uint256 preVerificationGas,
 *	            uint256 maxFeePerGas, uint256 maxPriorityFeePerGas, bytes paymasterAndData,
 *	            bytes signature)[] ops, address beneficiary)
 *	v0.7, v0.8: handleOps((address sender, uint256 nonce, bytes initCode, bytes callData,
 *	            bytes32 accountGasLimits, uint256 preVerificationGas, bytes32 gasFees,
 *	            bytes paymasterAndData, bytes signature)[] ops, address beneficiary)
 */
#include <stdlib.h>
#include <string.h>

#include "bundler_handle_ops.h"
#include "bundler_v07.h"
#include "evm/abi.h"

/* The word index of each bytes member, in the order of enum bp_userop_bytes. */
static const size_t bytes_v06[BP_USEROP_BYTES__MAX] = { 2, 3, 9, 10 };
static const size_t bytes_v07[BP_USEROP_BYTES__MAX] = { 2, 3, 7, 8 };

/* A copy of p[0..n) into op's byte field k (NULL when empty); 0 or -1. */
static int
put_bytes(struct bp_userop *op, enum bp_userop_bytes k, const uint8_t *p, size_t n)
{
	if (n == 0)
		return 0;
	if (n > BP_USEROP_BYTES_MAX || (op->bytes[k] = malloc(n)) == NULL)
		return -1;
	memcpy(op->bytes[k], p, n);
	op->len[k] = n;
	return 0;
}

/* Two 16-byte halves of w into hi and lo. */
static void
split16(const uint8_t w[32], struct bp_u256 *hi, struct bp_u256 *lo)
{
	bp_u256_from_be(hi, w, 16);
	bp_u256_from_be(lo, w + 16, 16);
}

int
bp_bundler_handle_ops_op(const uint8_t *t, size_t len, enum bp_ep_version v,
    struct bp_userop *op)
{
	const size_t *bw = v == BP_EP_V06 ? bytes_v06 : bytes_v07;
	const uint8_t *p;
	uint8_t w[32];
	size_t i, n;

	memset(op, 0, sizeof(*op));
	op->version = v;
	if (bp_abi_read_address(t, len, 0, op->sender) == -1 ||
	    bp_abi_read_u256(t, len, 1, &op->num[BP_USEROP_NONCE]) == -1)
		goto bad;
	for (i = 0; i < BP_USEROP_BYTES__MAX; i++)
		if (bp_abi_read_bytes(t, len, bw[i], &p, &n) == -1 ||
		    put_bytes(op, (enum bp_userop_bytes)i, p, n) == -1)
			goto bad;
	if (v == BP_EP_V06) {
		/* callGasLimit .. maxPriorityFeePerGas: words 4 to 8, the enum's order. */
		for (i = BP_USEROP_CALL_GAS_LIMIT; i < BP_USEROP_NUM__MAX; i++)
			if (bp_abi_read_u256(t, len, 3 + i, &op->num[i]) == -1)
				goto bad;
		return 0;
	}
	if (bp_abi_read_bytes32(t, len, 4, w) == -1)
		goto bad;
	split16(w, &op->num[BP_USEROP_VERIFICATION_GAS_LIMIT], &op->num[BP_USEROP_CALL_GAS_LIMIT]);
	if (bp_abi_read_u256(t, len, 5, &op->num[BP_USEROP_PRE_VERIFICATION_GAS]) == -1 ||
	    bp_abi_read_bytes32(t, len, 6, w) == -1)
		goto bad;
	split16(w, &op->num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS],
	    &op->num[BP_USEROP_MAX_FEE_PER_GAS]);
	/* The paymaster's two gas limits are packed after its address, as the EntryPoint reads. */
	if (op->len[BP_USEROP_PAYMASTER_AND_DATA] >= 52) {
		p = op->bytes[BP_USEROP_PAYMASTER_AND_DATA];
		bp_u256_from_be(&op->pm_gas[0], p + 20, 16);
		bp_u256_from_be(&op->pm_gas[1], p + 36, 16);
		op->has_pm_gas[0] = op->has_pm_gas[1] = 1;
	}
	return 0;
bad:
	bp_userop_free(op);
	return -1;
}

int
bp_bundler_handle_ops_find(const uint8_t *data, size_t len, enum bp_ep_version v,
    const uint8_t sender[20], const struct bp_u256 *nonce, struct bp_userop *op)
{
	const uint8_t *elems, *t;
	uint8_t sel[4], a[20];
	struct bp_u256 n;
	size_t elen, count, tlen, i;

	bp_abi_selector(bp_bundler_v07_handle_ops_sig(v), sel);
	if (data == NULL || len < 4 || memcmp(data, sel, 4) != 0)
		return -1;
	data += 4;
	len -= 4;
	if (bp_abi_read_array(data, len, 0, 1, &elems, &elen, &count) == -1)
		return -1;
	for (i = 0; i < count; i++) {
		/* Sender and nonce first: only the op asked for is copied out. */
		if (bp_abi_read_tuple(elems, elen, i, &t, &tlen) == -1 ||
		    bp_abi_read_address(t, tlen, 0, a) == -1 ||
		    bp_abi_read_u256(t, tlen, 1, &n) == -1)
			return -1;
		if (memcmp(a, sender, 20) != 0 || bp_u256_cmp(&n, nonce) != 0)
			continue;
		return bp_bundler_handle_ops_op(t, tlen, v, op) == -1 ? -1 : 1;
	}
	return 0;
}
