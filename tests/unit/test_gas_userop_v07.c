/*
 * lib/evm/userop.c and lib/gas/paymaster.c for EntryPoint v0.7 and v0.8: the JSON-RPC form
 * packed as the EntryPoint takes it, both userOpHashes and VerifyingPaymaster v0.7's getHash
 * against vectors read from the devchain, and the refusals of the v0.7 form.
 *
 * How the vectors were obtained (once, by hand): scripts/stack.sh start DIR --test, then with
 * viem's toPackedUserOperation and readContract against the devchain: getUserOpHash(OP) of
 * EntryPoint v0.7 (0x0000000071727de2...) and v0.8 (0x4337084d...), and
 * VerifyingPaymaster v0.7 (0xa51c1fc2f0d1a1b8494ed1fe312d7c3a78ed91c0, its address on a new
 * devchain).getHash(OP, 1700000600, 1700000000), where OP is op_json() below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hex.h"
#include "core/util.h"
#include "evm/address.h"
#include "evm/userop.h"
#include "gas/paymaster.h"
#include "unit.h"

#define EP07	"0x0000000071727de22e5e9d8baf0edac6f37da032"
#define EP08	"0x4337084d9e255ff0702461cf8895ce9e3b5ff108"
#define PM07	"0xa51c1fc2f0d1a1b8494ed1fe312d7c3a78ed91c0"
#define HASH07	"0xea848c319deca2269f20090e23db621806cd30d9ca34c2aa8b2aebf73e1240ca"
#define HASH08	"0xa8d598e510eb8e9ba913a271b3d3cc990ae86e23b2b4789f6498f6e1650a7792"
#define PM_HASH	"0x9054247b0ca0d5fd65b87041c8da8f844e516dd22137eaa8fb8a4189f65131c3"

static cJSON *
op_json(void)
{
	cJSON *j = cJSON_Parse("{\"sender\":\"0x1111111111111111111111111111111111111111\","
	    "\"nonce\":\"0x1234\",\"factory\":\"0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985\","
	    "\"factoryData\":\"0x5fbfb9cf00\",\"callData\":\"0xb61d27f6aabbcc\","
	    "\"callGasLimit\":\"0x186a0\",\"verificationGasLimit\":\"0x927c0\","
	    "\"preVerificationGas\":\"0xea60\",\"maxFeePerGas\":\"0xb2d05e00\","
	    "\"maxPriorityFeePerGas\":\"0x3b9aca00\","
	    "\"paymaster\":\"0xA51c1fc2f0D1a1b8494Ed1FE312d7C3a78Ed91C0\","
	    "\"paymasterVerificationGasLimit\":\"0x186a0\",\"paymasterPostOpGasLimit\":\"0x7\","
	    "\"paymasterData\":\"0x0102\",\"signature\":\"0x\"}");

	CU_ASSERT_FATAL(j != NULL);
	return j;
}

static void
addr(const char *s, uint8_t out[20])
{
	CU_ASSERT_FATAL(bp_addr_parse(s, strlen(s), 0, out) == 0);
}

static void
assert_hash(const uint8_t h[32], const char *want)
{
	char got[67];

	bp_hex_encode(h, 32, got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, want);
}

/* The packed fields, both userOpHashes and the paymaster's hash equal the chain's. */
static void
test_vectors(void)
{
	struct bp_userop op;
	struct bp_userop_digests d;
	struct bp_u256 gas[2];
	uint8_t ep[20], pm[20], h[32], w[32];
	const char *field;
	char why[256];
	cJSON *j = op_json();

	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V07, j, &op, &field, why, sizeof(why)) == 0);
	CU_ASSERT_EQUAL(op.version, BP_EP_V07);
	/* initCode = factory ++ factoryData; paymasterAndData = pm ++ 16 ++ 16 ++ data. */
	CU_ASSERT_EQUAL(op.len[BP_USEROP_INIT_CODE], 25);
	CU_ASSERT_EQUAL(op.len[BP_USEROP_PAYMASTER_AND_DATA], 20 + 32 + 2);
	CU_ASSERT(op.bytes[BP_USEROP_PAYMASTER_AND_DATA][35] == 0xa0 &&
	    op.bytes[BP_USEROP_PAYMASTER_AND_DATA][51] == 7);
	CU_ASSERT(op.has_pm_gas[0] && op.has_pm_gas[1]);
	bp_userop_account_gas_limits(&op, w);
	CU_ASSERT(w[15] == 0xc0 && w[31] == 0xa0);	/* 0x927c0 ++ 0x186a0 */
	addr(EP07, ep);
	bp_userop_hash_v(&op, ep, 31337, h);
	assert_hash(h, HASH07);
	addr(PM07, pm);
	gas[0] = op.pm_gas[0];
	gas[1] = op.pm_gas[1];
	bp_paymaster_hash_v07(&op, NULL, 31337, pm, gas, 1700000600, 1700000000, h);
	assert_hash(h, PM_HASH);
	/* The op's digests taken once serve both hashes, with the same results. */
	bp_userop_digests(&op, &d);
	bp_paymaster_hash_v07(&op, &d, 31337, pm, gas, 1700000600, 1700000000, h);
	assert_hash(h, PM_HASH);
	bp_userop_hash_vd(&op, ep, 31337, &d, h);
	assert_hash(h, HASH07);
	/* The paymaster hash covers its gas limits. */
	bp_u256_from_u64(&gas[1], 8);
	bp_paymaster_hash_v07(&op, NULL, 31337, pm, gas, 1700000600, 1700000000, h);
	CU_ASSERT(memcmp(h, "\x90\x54", 2) != 0);
	bp_userop_free(&op);

	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V08, j, &op, &field, why, sizeof(why)) == 0);
	CU_ASSERT_EQUAL(op.version, BP_EP_V08);
	addr(EP08, ep);
	bp_userop_hash_v(&op, ep, 31337, h);
	assert_hash(h, HASH08);
	bp_userop_digests(&op, &d);
	bp_userop_hash_vd(&op, ep, 31337, &d, h);
	assert_hash(h, HASH08);
	bp_userop_free(&op);
	cJSON_Delete(j);
}

/* What the v0.7 form refuses, naming the member; null members are absent. */
static void
test_refusals(void)
{
	static const struct {
		const char	*member, *value;
		const char	*field, *says;
	} rows[] = {
		{ "callGasLimit", "\"0x100000000000000000000000000000000\"", "callGasLimit", "2^128" },
		{ "maxFeePerGas", "\"0x100000000000000000000000000000000\"", "maxFeePerGas", "2^128" },
		{ "paymasterPostOpGasLimit", "\"0x100000000000000000000000000000000\"",
		    "paymasterPostOpGasLimit", "2^128" },
		{ "factory", "\"0x12\"", "factory", "address" },
		{ "factory", "7", "factory", "hex string" },
		{ "paymasterData", "\"0x1\"", "paymasterData", "hex data" },
	};
	struct bp_userop op;
	struct bp_u256 wei;
	const char *field;
	char why[256];
	cJSON *j;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		j = op_json();
		cJSON_ReplaceItemInObjectCaseSensitive(j, rows[i].member,
		    cJSON_Parse(rows[i].value));
		CU_ASSERT(bp_userop_from_json_v07(j, &op, &field, why, sizeof(why)) == -1);
		CU_ASSERT(field != NULL && strcmp(field, rows[i].field) == 0);
		CU_ASSERT(strstr(why, rows[i].says) != NULL);
		cJSON_Delete(j);
	}
	/* preVerificationGas is not packed: a full word is fine. */
	j = op_json();
	cJSON_ReplaceItemInObjectCaseSensitive(j, "preVerificationGas",
	    cJSON_CreateString("0x100000000000000000000000000000000"));
	CU_ASSERT(bp_userop_from_json_v07(j, &op, &field, why, sizeof(why)) == 0);
	bp_userop_free(&op);
	cJSON_Delete(j);
	/* factoryData without factory; nulls are absent. */
	j = op_json();
	cJSON_DeleteItemFromObjectCaseSensitive(j, "factory");
	CU_ASSERT(bp_userop_from_json_v07(j, &op, &field, why, sizeof(why)) == -1);
	CU_ASSERT(strcmp(field, "factoryData") == 0);
	cJSON_ReplaceItemInObjectCaseSensitive(j, "factoryData", cJSON_CreateNull());
	cJSON_ReplaceItemInObjectCaseSensitive(j, "paymaster", cJSON_CreateNull());
	CU_ASSERT_FATAL(bp_userop_from_json_v07(j, &op, &field, why, sizeof(why)) == 0);
	CU_ASSERT(op.len[BP_USEROP_INIT_CODE] == 0 && op.len[BP_USEROP_PAYMASTER_AND_DATA] == 0);
	/* The worst case: (0x927c0 + 0x186a0 + 0xea60 + 0x186a0 + 7) x 3 gwei. */
	CU_ASSERT_FATAL(bp_userop_max_cost(&op, &wei) == 0);
	{
		uint64_t v;

		CU_ASSERT(bp_u256_to_u64(&wei, &v) == 0 &&
		    v == (600000ULL + 100000 + 60000 + 100000 + 7) * 3000000000ULL);
	}
	bp_userop_free(&op);
	cJSON_Delete(j);
}

/*
 * v0.7's executeBatch(address[],uint256[],bytes[]) and v0.8's executeBatch(Call[]) as
 * permissionless.js encodes two calls (0x22..22 value 5 data 0xa9059cbb00, 0x33..33 no data).
 */
static void
test_batches(void)
{
	static const char *const rows[] = {
		"0x47e1da2a0000000000000000000000000000000000000000000000000000000000000060"
		"00000000000000000000000000000000000000000000000000000000000000c0"
		"0000000000000000000000000000000000000000000000000000000000000120"
		"0000000000000000000000000000000000000000000000000000000000000002"
		"0000000000000000000000002222222222222222222222222222222222222222"
		"0000000000000000000000003333333333333333333333333333333333333333"
		"0000000000000000000000000000000000000000000000000000000000000002"
		"0000000000000000000000000000000000000000000000000000000000000005"
		"0000000000000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000000000000000000000000000000000000000000002"
		"0000000000000000000000000000000000000000000000000000000000000040"
		"0000000000000000000000000000000000000000000000000000000000000080"
		"0000000000000000000000000000000000000000000000000000000000000005"
		"a9059cbb00000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000000000000000000000000000000000000000000000",
		"0x34fcd5be0000000000000000000000000000000000000000000000000000000000000020"
		"0000000000000000000000000000000000000000000000000000000000000002"
		"0000000000000000000000000000000000000000000000000000000000000040"
		"00000000000000000000000000000000000000000000000000000000000000e0"
		"0000000000000000000000002222222222222222222222222222222222222222"
		"0000000000000000000000000000000000000000000000000000000000000005"
		"0000000000000000000000000000000000000000000000000000000000000060"
		"0000000000000000000000000000000000000000000000000000000000000005"
		"a9059cbb00000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000003333333333333333333333333333333333333333"
		"0000000000000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000000000000000000000000000000000000000000060"
		"0000000000000000000000000000000000000000000000000000000000000000",
	};
	struct bp_userop_call c[4];
	uint8_t d[1024], t[20];
	size_t i, n;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		CU_ASSERT_FATAL(bp_hex_decode(rows[i], strlen(rows[i]), d, sizeof(d), &n) == 0);
		CU_ASSERT_FATAL(bp_userop_calls(d, n, c, 4) == 2);
		memset(t, 0x22, 20);
		CU_ASSERT(memcmp(c[0].target, t, 20) == 0 && c[0].has_selector &&
		    memcmp(c[0].selector, "\xa9\x05\x9c\xbb", 4) == 0);
		memset(t, 0x33, 20);
		CU_ASSERT(memcmp(c[1].target, t, 20) == 0 && !c[1].has_selector);
		CU_ASSERT(bp_userop_calls(d, n, c, 1) == -1);		/* no room */
		CU_ASSERT(bp_userop_calls(d, n - 64, c, 4) == -1);	/* cut */
	}
}

/* A network with only v0.7's EntryPoint and paymaster loads its signer key; none does not. */
static void
test_key_v07_only(void)
{
	struct bp_network *n = calloc(1, sizeof(*n));
	char path[] = "/tmp/bp_unit_pmkey_XXXXXX";
	uint8_t key[32];
	FILE *fp;
	int fd;

	CU_ASSERT_FATAL(n != NULL);
	CU_ASSERT_FATAL((fd = mkstemp(path)) != -1);
	CU_ASSERT_FATAL((fp = fdopen(fd, "w")) != NULL);
	/* anvil's dev account 9 (a public key, DEV ONLY). */
	fputs("0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6\n", fp);
	fclose(fp);
	bp_strlcpy(n->chain, "ethereum", sizeof(n->chain));
	bp_strlcpy(n->network, "v07only", sizeof(n->network));
	bp_strlcpy(n->paymaster_key_file, path, sizeof(n->paymaster_key_file));
	CU_ASSERT_EQUAL(bp_paymaster_key_for(n, key), -1);
	bp_strlcpy(n->entry_point_v07, EP07, sizeof(n->entry_point_v07));
	bp_strlcpy(n->paymaster_v07, PM07, sizeof(n->paymaster_v07));
	CU_ASSERT_EQUAL(bp_paymaster_key_for(n, key), 0);
	unlink(path);
	free(n);
}

BP_UNIT_SUITE(gas_userop_v07, NULL, NULL,
    { "a v0.7-only network has a signer key", test_key_v07_only },
    { "v0.7 and v0.8 executeBatch calls", test_batches },
    { "v0.7/v0.8 userOpHash and VerifyingPaymaster v0.7 getHash vectors", test_vectors },
    { "the v0.7 form's refusals, nulls and worst case", test_refusals })
