/*
 * lib/evm/userop.c and lib/gas/paymaster.c: UserOperation v0.6 parsing (with hostile rows), the
 * userOpHash and VerifyingPaymaster 0.6.0 getHash against vectors read from the devchain, the
 * paymasterAndData signature, the worst-case cost, and the callData decoder.
 *
 * How the vectors were obtained (once, by hand): scripts/stack.sh start DIR --test, then with
 * viem readContract against the devchain: EntryPoint(0x5ff137d4...).getUserOpHash(OP) and
 * VerifyingPaymaster(0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0).getHash(OP, 1700000600,
 * 1700000000), where OP is the op of op_json() below (paymasterAndData 149 bytes of 0xee,
 * signature 65 bytes of 0x77) and the paymaster's senderNonce of its sender is 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/secp.h"
#include "evm/userop.h"
#include "gas/paymaster.h"
#include "unit.h"

#define EP	"0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789"
#define PM	"0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0"
#define USEROP_HASH	"0x6b3e5f8829ddec2d927cac1ade01b4c63f20a2deb3ed7a56d8977b689eca8f4c"
#define PM_HASH		"0x76133fa76f4e5e5d4b5f1453a0bc389c06630ed697bf28828158d1ff8a8ef86f"
/* anvil's dev account 9: the devchain paymaster's signer (a public key, DEV ONLY). */
#define SIGNER_KEY	"0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6"
#define SIGNER		"0xa0ee7a142d267c1f36714e4a8f75612f20a79720"

static char *
repeat(const char *pair, size_t n)
{
	char *s = malloc(2 + 2 * n + 1);
	size_t i;

	CU_ASSERT_FATAL(s != NULL);
	memcpy(s, "0x", 2);
	for (i = 0; i < n; i++)
		memcpy(s + 2 + 2 * i, pair, 2);
	s[2 + 2 * n] = '\0';
	return s;
}

static cJSON *
op_json(void)
{
	cJSON *j = cJSON_CreateObject();
	char *ic = repeat("ab", 70), *cd = repeat("cd", 33), *pnd = repeat("ee", 149),
	    *sig = repeat("77", 65);

	cJSON_AddStringToObject(j, "sender", "0x1111111111111111111111111111111111111111");
	cJSON_AddStringToObject(j, "nonce", "0x5");
	cJSON_AddStringToObject(j, "initCode", ic);
	cJSON_AddStringToObject(j, "callData", cd);
	cJSON_AddStringToObject(j, "callGasLimit", "0x186a0");
	cJSON_AddStringToObject(j, "verificationGasLimit", "0x030d40");	/* padded */
	cJSON_AddStringToObject(j, "preVerificationGas", "0xc350");
	cJSON_AddStringToObject(j, "maxFeePerGas", "0xb2d05e00");
	cJSON_AddStringToObject(j, "maxPriorityFeePerGas", "0x3B9ACA00");
	cJSON_AddStringToObject(j, "paymasterAndData", pnd);
	cJSON_AddStringToObject(j, "signature", sig);
	free(ic);
	free(cd);
	free(pnd);
	free(sig);
	return j;
}

static void
hex_is(const uint8_t *p, size_t n, const char *want)
{
	char got[256];

	CU_ASSERT_FATAL(bp_hex_encode(p, n, got, sizeof(got)) == 0);
	CU_ASSERT_STRING_EQUAL(got, want);
}

static void
test_hashes(void)
{
	struct bp_userop op;
	struct bp_u256 zero = { { 0 } };
	const char *field;
	char why[256];
	uint8_t ep[20], pm[20], h[32];
	cJSON *j = op_json();

	CU_ASSERT_FATAL(bp_userop_from_json(j, &op, &field, why, sizeof(why)) == 0);
	CU_ASSERT(op.len[BP_USEROP_INIT_CODE] == 70 && op.len[BP_USEROP_SIGNATURE] == 65);
	bp_addr_parse(EP, strlen(EP), 0, ep);
	bp_addr_parse(PM, strlen(PM), 0, pm);
	bp_userop_hash(&op, ep, 31337, h);
	hex_is(h, 32, USEROP_HASH);
	/* getHash reads only the length of paymasterAndData, whatever its bytes. */
	CU_ASSERT_FATAL(bp_paymaster_hash(&op, 31337, pm, &zero, 1700000600, 1700000000, h) == 0);
	hex_is(h, 32, PM_HASH);
	bp_userop_free(&op);
	bp_userop_free(&op);	/* a freed op is a no-op */
	cJSON_Delete(j);
}

static void
test_sign(void)
{
	uint8_t key[32], pm[20], hash[32], pnd[BP_PAYMASTER_PND_LEN], who[20], want[20];
	struct bp_u256 v;
	uint64_t u;

	bp_hex_decode_fixed(SIGNER_KEY, strlen(SIGNER_KEY), key, 32);
	bp_addr_parse(PM, strlen(PM), 0, pm);
	bp_addr_parse(SIGNER, strlen(SIGNER), 0, want);
	memset(hash, 0x42, sizeof(hash));
	CU_ASSERT_FATAL(bp_paymaster_sign(key, pm, hash, 1700000600, 1700000000, pnd) == 0);
	CU_ASSERT(memcmp(pnd, pm, 20) == 0);
	CU_ASSERT(bp_abi_read_u256(pnd + 20, 64, 0, &v) == 0 && bp_u256_to_u64(&v, &u) == 0 &&
	    u == 1700000600);
	CU_ASSERT(bp_abi_read_u256(pnd + 20, 64, 1, &v) == 0 && bp_u256_to_u64(&v, &u) == 0 &&
	    u == 1700000000);
	CU_ASSERT(pnd[84 + 64] == 27 || pnd[84 + 64] == 28);
	CU_ASSERT_FATAL(bp_secp_personal_recover(hash, 32, pnd + 84, who) == 0);
	CU_ASSERT(memcmp(who, want, 20) == 0);
}

/* Each row: a member set to a bad value (NULL: removed) and the field the error must name. */
static void
test_parse_hostile(void)
{
	static const struct {
		const char *name, *value;
	} rows[] = {
		{ "sender", NULL }, { "sender", "0x1234" }, { "sender", "" },
		{ "sender", "0x111111111111111111111111111111111111111g" },
		{ "sender", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD" },	/* bad checksum */
		{ "nonce", NULL }, { "nonce", "0x" }, { "nonce", "5" }, { "nonce", "-0x1" },
		{ "nonce", "0x1 " }, { "nonce", "0x1" "0000000000000000000000000000000000000000000000000000000000000000" },
		/* 2^256 above; a value below it padded past 64 digits below */
		{ "callGasLimit", "0x00000000000000000000000000000000000000000000000000000000000000001" },
		{ "maxFeePerGas", NULL }, { "maxPriorityFeePerGas", "0xzz" },
		{ "callData", NULL }, { "callData", "0x1" }, { "callData", "cd" },
		{ "initCode", "0xabc" }, { "paymasterAndData", "0x\xff\xff" }, { "signature", "x" },
	};
	struct bp_userop op;
	const char *field;
	char why[256];
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		cJSON *j = op_json();

		cJSON_DeleteItemFromObjectCaseSensitive(j, rows[i].name);
		if (rows[i].value != NULL)
			cJSON_AddStringToObject(j, rows[i].name, rows[i].value);
		if (bp_userop_from_json(j, &op, &field, why, sizeof(why)) != -1) {
			CU_FAIL("a hostile row passed");
			fprintf(stderr, "row %zu passed\n", i);
			bp_userop_free(&op);
		}
		CU_ASSERT(field != NULL && strcmp(field, rows[i].name) == 0);
		CU_ASSERT(strstr(why, rows[i].name) != NULL);
		CU_ASSERT(op.bytes[0] == NULL && op.bytes[1] == NULL);
		cJSON_Delete(j);
	}
	/* A number where a string goes; not an object. */
	{
		cJSON *j = op_json(), *arr = cJSON_CreateArray();

		cJSON_ReplaceItemInObjectCaseSensitive(j, "nonce", cJSON_CreateNumber(5));
		CU_ASSERT(bp_userop_from_json(j, &op, &field, why, sizeof(why)) == -1);
		CU_ASSERT_STRING_EQUAL(field, "nonce");
		CU_ASSERT(bp_userop_from_json(arr, &op, &field, why, sizeof(why)) == -1);
		CU_ASSERT(bp_userop_from_json(NULL, &op, &field, why, sizeof(why)) == -1);
		cJSON_Delete(j);
		cJSON_Delete(arr);
	}
	/* Optional members absent: empty. */
	{
		cJSON *j = op_json();

		cJSON_DeleteItemFromObjectCaseSensitive(j, "initCode");
		cJSON_DeleteItemFromObjectCaseSensitive(j, "paymasterAndData");
		cJSON_DeleteItemFromObjectCaseSensitive(j, "signature");
		CU_ASSERT_FATAL(bp_userop_from_json(j, &op, &field, why, sizeof(why)) == 0);
		CU_ASSERT(op.len[BP_USEROP_INIT_CODE] == 0 && op.bytes[BP_USEROP_SIGNATURE] == NULL);
		bp_userop_free(&op);
		cJSON_Delete(j);
	}
}

static void
test_cost(void)
{
	struct bp_userop op;
	struct bp_u256 wei, want;
	char dec[BP_U256_DEC_MAX];

	memset(&op, 0, sizeof(op));
	bp_u256_from_u64(&op.num[BP_USEROP_CALL_GAS_LIMIT], 100000);
	bp_u256_from_u64(&op.num[BP_USEROP_VERIFICATION_GAS_LIMIT], 1500000);
	bp_u256_from_u64(&op.num[BP_USEROP_PRE_VERIFICATION_GAS], 60000);
	bp_u256_from_u64(&op.num[BP_USEROP_MAX_FEE_PER_GAS], 2000000000);
	CU_ASSERT_FATAL(bp_userop_max_cost(&op, &wei) == 0);
	bp_u256_to_dec(&wei, dec, sizeof(dec));
	CU_ASSERT_STRING_EQUAL(dec, "9320000000000000");	/* 4,660,000 gas x 2 gwei */
	/* Overflows: gas past 2^64, cost past 2^256. */
	bp_u256_from_dec(&op.num[BP_USEROP_CALL_GAS_LIMIT], "18446744073709551615", 20);
	CU_ASSERT(bp_userop_max_cost(&op, &wei) == -1);
	bp_u256_from_u64(&op.num[BP_USEROP_CALL_GAS_LIMIT], 1);
	memset(&op.num[BP_USEROP_MAX_FEE_PER_GAS], 0xff, sizeof(want));
	CU_ASSERT(bp_userop_max_cost(&op, &wei) == -1);
}

/* Builds execute / executeBatch calldata with the ABI encoder, then decodes it. */
static size_t
calldata(const char *sig, int batch, size_t n, uint8_t **out)
{
	struct bp_abi_enc *e = bp_abi_enc_new(8192);
	uint8_t sel[4], target[20], inner[4 + 32];
	size_t len, i;

	bp_abi_selector(sig, sel);
	memset(inner, 0, sizeof(inner));
	bp_abi_selector("transfer(address,uint256)", inner);
	if (!batch) {
		memset(target, 0x22, 20);
		bp_abi_put_address(e, target);
		bp_abi_put_u64(e, 0);
		bp_abi_put_bytes(e, inner, sizeof(inner));
	} else {
		bp_abi_array_begin(e);
		for (i = 0; i < n; i++) {
			memset(target, 0x30 + (int)i, 20);
			bp_abi_put_address(e, target);
		}
		bp_abi_array_end(e);
		bp_abi_array_begin(e);
		for (i = 0; i < n; i++)
			bp_abi_put_bytes(e, inner, i == 1 ? 0 : sizeof(inner));	/* #1: no selector */
		bp_abi_array_end(e);
	}
	CU_ASSERT_FATAL(bp_abi_enc_finish(e, sel, out, &len) == 0);
	bp_abi_enc_free(e);
	return len;
}

static void
test_calls(void)
{
	struct bp_userop_call c[BP_USEROP_CALLS_MAX];
	uint8_t *d, transfer[4], t[20];
	size_t n;

	bp_abi_selector("transfer(address,uint256)", transfer);
	CU_ASSERT(bp_userop_calls(NULL, 0, c, 4) == 0);
	CU_ASSERT(bp_userop_calls((const uint8_t *)"\xb6\x1d\x27", 3, c, 4) == -1);
	n = calldata("execute(address,uint256,bytes)", 0, 1, &d);
	CU_ASSERT_FATAL(bp_userop_calls(d, n, c, 4) == 1);
	memset(t, 0x22, 20);
	CU_ASSERT(memcmp(c[0].target, t, 20) == 0 && c[0].has_selector &&
	    memcmp(c[0].selector, transfer, 4) == 0);
	CU_ASSERT(bp_userop_calls(d, n - 40, c, 4) == -1);	/* cut into the bytes */
	CU_ASSERT(bp_userop_calls(d, n, c, 0) == -1);		/* no room */
	d[0] ^= 1;						/* another selector */
	CU_ASSERT(bp_userop_calls(d, n, c, 4) == -1);
	free(d);
	n = calldata("executeBatch(address[],bytes[])", 1, 3, &d);
	CU_ASSERT_FATAL(bp_userop_calls(d, n, c, 4) == 3);
	memset(t, 0x32, 20);
	CU_ASSERT(memcmp(c[2].target, t, 20) == 0 && c[2].has_selector);
	CU_ASSERT(!c[1].has_selector);
	CU_ASSERT(bp_userop_calls(d, n, c, 2) == -1);		/* more calls than room */
	free(d);
	n = calldata("executeBatch(address[],bytes[])", 1, 0, &d);
	CU_ASSERT(bp_userop_calls(d, n, c, 4) == 0);
	free(d);
}

BP_UNIT_SUITE(gas_userop, NULL, NULL,
    { "userOpHash and VerifyingPaymaster getHash vectors", test_hashes },
    { "paymasterAndData carries the window and a signature of the signer", test_sign },
    { "hostile UserOperation fields are refused naming the field", test_parse_hostile },
    { "worst-case cost and its overflows", test_cost },
    { "SimpleAccount execute and executeBatch calls", test_calls })
