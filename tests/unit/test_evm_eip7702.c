/*
 * EIP-7702: lib/evm/tx.c's authorizations and type 4 transactions, and lib/evm/userop.c's
 * eip7702Auth and v0.8 userOpHash of an EIP-7702 op, against viem 2.57.20.
 *
 * The vectors were printed once by tests/e2e/eip7702-vectors.mjs (viem's hashAuthorization,
 * signAuthorization, serializeTransaction, signTransaction and getUserOperationHash with
 * entryPointVersion 0.8 and an authorization) and pasted here. RFC 6979 on both sides makes the
 * signatures identical.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/hex.h"
#include "evm/address.h"
#include "evm/rlp.h"
#include "evm/secp.h"
#include "evm/tx.h"
#include "evm/u256.h"
#include "evm/userop.h"
#include "unit.h"

/* anvil's dev accounts 0 (the sender) and 1 (the EOA that delegates); public keys, DEV ONLY. */
#define KEY0	"0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
#define KEY1	"0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
#define ADDR1	"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
#define SIMPLE7702 "0xe6Cae83BdE06E4c305530e199D7217f42808555B"
#define EP08	"0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108"

struct authrow {
	uint64_t	 chain_id;
	const char	*address;
	uint64_t	 nonce;
	const char	*hash, *r, *s;
	uint8_t		 y_parity;
};

static const struct authrow authrows[] = {
	{ 31337, SIMPLE7702, 0,
	    "0x6d7378c73c7bde23a55d7b071bc1082492c34349a45ef0d7abaf3829b67d535a",
	    "0xfbf62bea42845db583da030712373a9e010fb5fe930f9833799bfdd0c383d2ba",
	    "0x7c42b938830b959ff2b9452bccefff68c22b057471e6507af74f5dfb5131f75f", 0 },
	{ 0, ADDR1, 7,
	    "0xb22a2df0f8bfb7363dc66e3f3d20e5dd1132d5359dc581ff2024b61c1b011c13",
	    "0x4442b45c254ec9ad03fcea13769560e5ca3c4f85c8d4500d19616a5b280a45e4",
	    "0x342be596edc515d181eaa85f8589fee45c8a79cd5b02e5cef61e459dd97db532", 1 },
	{ 1, EP08, UINT64_C(18446744073709551614),
	    "0xbb6e63eff2b334a09327f1e02163d38bdb3e77649cb0a864b90d834e5498ec2c",
	    "0xede39fe38939cea094f52dd654a17214d49e0869c1628f2267aae85af16ed2ca",
	    "0x22bc25156eb6f31f2051f01707ab9374ff7637dadea48567cc6c7604ee8a3540", 0 },
};

struct txrow {
	uint64_t	 chain_id, nonce;
	uint64_t	 prio, maxfee, gas;
	const char	*to, *value, *data;	/* value decimal */
	size_t		 first, nauth;		/* authrows[first .. first + nauth) */
	const char	*signing_hash, *raw, *hash;
};

static const struct txrow txrows[] = {
	{ 31337, 5, 1000000000, 2000000000, 100000, ADDR1, "0", "0x", 0, 1,
	    "0x77fa766aebbf4ed2cf644ef448649d8af83f041ac6a27337c743491dff5f3872",
	    "0x04f8cd827a6905843b9aca008477359400830186a09470997970c51812dc3a010c7d01b50e0d17dc79"
	    "c88080c0f85ef85c827a6994e6cae83bde06e4c305530e199d7217f42808555b8080a0fbf62bea42845d"
	    "b583da030712373a9e010fb5fe930f9833799bfdd0c383d2baa07c42b938830b959ff2b9452bccefff68"
	    "c22b057471e6507af74f5dfb5131f75f80a07cb5389f26a87201b2932fee1cc4f4ec25b74c4191c32841"
	    "17f07544f06041c7a01a763908f34a5073b43b07c003951d84b27a00d666abb4bd3167408a9df337a4",
	    "0x5f97d8b1aac47e97c6f3401f7099d0ab99a8a2b3da956131c3f10f1edd69c191" },
	{ 1, 0, 0, 30000000000, 200000, SIMPLE7702, "1000000000000000000", "0xdeadbeef", 1, 2,
	    "0x27d3394bad5900b2f2b4e50cea16c70f181a5177c76ac4b02cf79360472460be",
	    "0x04f901360180808506fc23ac0083030d4094e6cae83bde06e4c305530e199d7217f42808555b880de0"
	    "b6b3a764000084deadbeefc0f8c0f85a809470997970c51812dc3a010c7d01b50e0d17dc79c80701a044"
	    "42b45c254ec9ad03fcea13769560e5ca3c4f85c8d4500d19616a5b280a45e4a0342be596edc515d181ea"
	    "a85f8589fee45c8a79cd5b02e5cef61e459dd97db532f86201944337084d9e255ff0702461cf8895ce9e"
	    "3b5ff10888fffffffffffffffe80a0ede39fe38939cea094f52dd654a17214d49e0869c1628f2267aae8"
	    "5af16ed2caa022bc25156eb6f31f2051f01707ab9374ff7637dadea48567cc6c7604ee8a354001a0d968"
	    "118c5a07349a58cee7564b5ef4b77fb5e7dadfd53cbd36f8e7c2b6597c97a066806bee5ca0de224a1407"
	    "8ff554f4cec05e9c032a0ec21080a9d20835076144",
	    "0x827005c0b26f1308c7c9a35bdf38885b70b407e94f3109085f966cf4437a0131" },
};

/* viem's getUserOperationHash (v0.8, EntryPoint 0x4337..., chain 31337) of user_op(). */
#define UOH_7702	"0xa3badb19c3553c8c04801386072d60cc369c5db46d34346052ef6a90b7322c0e"
#define UOH_7702_FDATA	"0x9b1c61822bda022a25871bbf30be961e422c95ae5c035a00443c4d13f2706a09"
#define UOH_MARKER	"0xd6bc1a6bc0ed18cc0216f8435250f8373d516f4c3a32b081609c06c62f3a7ec2"
#define UOH_PLAIN	"0x40218479abb1716ec9522e77c52419222b0d43946406c99a4786673765fa054d"

static uint8_t key0[32], key1[32];

static int
setup(void)
{
	return bp_hex_decode_fixed(KEY0, strlen(KEY0), key0, 32) == -1 ||
	    bp_hex_decode_fixed(KEY1, strlen(KEY1), key1, 32) == -1 ? -1 : 0;
}

static int
teardown(void)
{
	bp_secp_cleanup();
	return 0;
}

static void
addr(const char *s, uint8_t out[20])
{
	CU_ASSERT_FATAL(bp_addr_parse(s, strlen(s), 0, out) == 0);
}

static void
assert_bytes(const uint8_t *got, size_t n, const char *want)
{
	uint8_t w[512];
	size_t wn = 0;

	CU_ASSERT_FATAL(bp_hex_decode(want, strlen(want), w, sizeof(w), &wn) == 0);
	CU_ASSERT_EQUAL(n, wn);
	CU_ASSERT(n == wn && memcmp(got, w, n) == 0);
}

/* The unsigned tuple of row r. */
static void
auth_fill(struct bp_tx_auth *a, const struct authrow *r)
{
	memset(a, 0, sizeof(*a));
	bp_u256_from_u64(&a->chain_id, r->chain_id);
	addr(r->address, a->address);
	a->nonce = r->nonce;
}

/* Hash, signature and authority of each authorization. */
static void
test_auth(void)
{
	struct bp_tx_auth a;
	uint8_t h[32], who[20], addr1[20];
	size_t i;

	addr(ADDR1, addr1);
	for (i = 0; i < sizeof(authrows) / sizeof(authrows[0]); i++) {
		auth_fill(&a, &authrows[i]);
		CU_ASSERT_EQUAL(bp_tx_auth_hash(&a, h), 0);
		assert_bytes(h, 32, authrows[i].hash);
		CU_ASSERT_EQUAL_FATAL(bp_tx_auth_sign(&a, key1), 0);
		assert_bytes(a.r, 32, authrows[i].r);
		assert_bytes(a.s, 32, authrows[i].s);
		CU_ASSERT_EQUAL(a.y_parity, authrows[i].y_parity);
		CU_ASSERT_EQUAL(bp_tx_auth_authority(&a, who), 0);
		CU_ASSERT(memcmp(who, addr1, 20) == 0);
		/* Another nonce is another hash: the signature names someone else. */
		a.nonce ^= 1;
		CU_ASSERT(bp_tx_auth_authority(&a, who) == -1 || memcmp(who, addr1, 20) != 0);
	}
	/* A y parity of 27 is not a tuple's; a high s does not recover (EIP-2). */
	auth_fill(&a, &authrows[0]);
	CU_ASSERT_EQUAL_FATAL(bp_tx_auth_sign(&a, key1), 0);
	a.y_parity = 27;
	CU_ASSERT_EQUAL(bp_tx_auth_authority(&a, who), -1);
	a.y_parity = 0;
	memset(a.s, 0xff, 32);
	CU_ASSERT_EQUAL(bp_tx_auth_authority(&a, who), -1);
	memset(h, 0, 32);
	CU_ASSERT_EQUAL(bp_tx_auth_sign(&a, h), -1);
	CU_ASSERT_EQUAL(bp_tx_auth_hash(NULL, h), -1);
}

/* Fills t from row r: its authorizations signed into auth, its data into buf. */
static void
tx_fill(struct bp_tx7702 *t, const struct txrow *r, struct bp_tx_auth *auth, uint8_t *buf,
    size_t cap)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->tx.chain_id = r->chain_id;
	t->tx.nonce = r->nonce;
	bp_u256_from_u64(&t->tx.max_priority_fee_per_gas, r->prio);
	bp_u256_from_u64(&t->tx.max_fee_per_gas, r->maxfee);
	t->tx.gas_limit = r->gas;
	t->tx.has_to = 1;
	addr(r->to, t->tx.to);
	CU_ASSERT_FATAL(bp_u256_from_dec(&t->tx.value, r->value, strlen(r->value)) == 0);
	CU_ASSERT_FATAL(bp_hex_decode(r->data, strlen(r->data), buf, cap, &t->tx.data_len) == 0);
	t->tx.data = buf;
	for (i = 0; i < r->nauth; i++) {
		auth_fill(&auth[i], &authrows[r->first + i]);
		CU_ASSERT_FATAL(bp_tx_auth_sign(&auth[i], key1) == 0);
	}
	t->auth = auth;
	t->nauth = r->nauth;
}

/* Type 4 transactions: signing hash, raw bytes and hash as viem's. */
static void
test_tx(void)
{
	size_t i;

	for (i = 0; i < sizeof(txrows) / sizeof(txrows[0]); i++) {
		struct bp_tx7702 t;
		struct bp_tx_auth auth[2];
		uint8_t data[16], h[32], th[32], *raw = NULL;
		size_t rawlen = 0;

		tx_fill(&t, &txrows[i], auth, data, sizeof(data));
		CU_ASSERT_EQUAL(bp_tx7702_signing_hash(&t, h), 0);
		assert_bytes(h, 32, txrows[i].signing_hash);
		CU_ASSERT_EQUAL_FATAL(bp_tx7702_sign(&t, key0, &raw, &rawlen, th), 0);
		assert_bytes(raw, rawlen, txrows[i].raw);
		assert_bytes(th, 32, txrows[i].hash);
		free(raw);
	}
}

/* The signed bytes: 13 fields, the list of 6-field tuples at 9; and what is refused. */
static void
test_tx_structure(void)
{
	struct bp_tx7702 t;
	struct bp_tx_auth auth[2];
	struct bp_rlp_item list, it, f[13], tup, af;
	struct bp_rlp_iter iter, ti, ai;
	uint8_t data[16], h[32], rs[32], *raw = NULL;
	size_t rawlen, k = 0, n = 0, m;

	tx_fill(&t, &txrows[1], auth, data, sizeof(data));
	CU_ASSERT_FATAL(bp_tx7702_sign(&t, key0, &raw, &rawlen, NULL) == 0);
	CU_ASSERT_EQUAL(raw[0], 0x04);
	CU_ASSERT_FATAL(bp_rlp_decode(raw + 1, rawlen - 1, &list) == 0);
	CU_ASSERT_FATAL(bp_rlp_iter_init(&iter, &list) == 0);
	while (k < 13 && bp_rlp_iter_next(&iter, &it) == 1)
		f[k++] = it;
	CU_ASSERT_EQUAL_FATAL(k, 13);
	CU_ASSERT_EQUAL(bp_rlp_iter_next(&iter, &it), 0);
	CU_ASSERT(f[8].list && f[8].len == 0);
	CU_ASSERT_FATAL(bp_rlp_iter_init(&ti, &f[9]) == 0);
	while (bp_rlp_iter_next(&ti, &tup) == 1) {
		CU_ASSERT_FATAL(bp_rlp_iter_init(&ai, &tup) == 0);
		for (m = 0; bp_rlp_iter_next(&ai, &af) == 1; m++)
			;
		CU_ASSERT_EQUAL(m, 6);
		n++;
	}
	CU_ASSERT_EQUAL(n, 2);
	free(raw);

	/* No destination, no authorization, a y parity of 2, NULL: refused. */
	memset(rs, 1, sizeof(rs));
	t.tx.has_to = 0;
	CU_ASSERT_EQUAL(bp_tx7702_signing_hash(&t, h), -1);
	t.tx.has_to = 1;
	t.nauth = 0;
	CU_ASSERT_EQUAL(bp_tx7702_sign(&t, key0, &raw, &rawlen, NULL), -1);
	t.nauth = 1;
	t.auth = NULL;
	CU_ASSERT_EQUAL(bp_tx7702_signing_hash(&t, h), -1);
	t.auth = auth;
	CU_ASSERT_EQUAL(bp_tx7702_encode_signed(&t, 2, rs, rs, &raw, &rawlen), -1);
	CU_ASSERT_EQUAL(bp_tx7702_encode_signed(&t, 1, rs, rs, &raw, &rawlen), 0);
	free(raw);
	CU_ASSERT_EQUAL(bp_tx7702_signing_hash(NULL, h), -1);
	CU_ASSERT_EQUAL(bp_tx7702_sign(NULL, key0, &raw, &rawlen, NULL), -1);
}

/*
 * The op of tests/e2e/eip7702-vectors.mjs in its JSON-RPC form: factory (NULL: none),
 * factoryData, and eip7702Auth (authrows[0] signed by dev account 1) when auth is set.
 */
static cJSON *
user_op(const char *factory, const char *fdata, int auth)
{
	cJSON *j = cJSON_Parse("{\"sender\":\"" ADDR1 "\",\"nonce\":\"0x3\","
	    "\"callData\":\"0xb61d27f6\",\"callGasLimit\":\"0x186a0\","
	    "\"verificationGasLimit\":\"0x30d40\",\"preVerificationGas\":\"0xc350\","
	    "\"maxFeePerGas\":\"0x77359400\",\"maxPriorityFeePerGas\":\"0x3b9aca00\","
	    "\"signature\":\"0x\"}");

	CU_ASSERT_FATAL(j != NULL);
	if (factory != NULL) {
		cJSON_AddStringToObject(j, "factory", factory);
		cJSON_AddStringToObject(j, "factoryData", fdata);
	}
	if (auth)
		cJSON_AddItemToObject(j, "eip7702Auth", cJSON_Parse("{\"address\":\"" SIMPLE7702
		    "\",\"chainId\":\"0x7a69\",\"nonce\":\"0x0\",\"r\":\"" "0xfbf62bea42845db583da"
		    "030712373a9e010fb5fe930f9833799bfdd0c383d2ba\",\"s\":\"0x7c42b938830b959ff2b9"
		    "452bccefff68c22b057471e6507af74f5dfb5131f75f\",\"yParity\":\"0x00\"}"));
	return j;
}

/* The hash of user_op(factory, fdata, auth) read as v0.8 is want. */
static void
assert_op_hash(const char *factory, const char *fdata, int auth, const char *want)
{
	struct bp_userop op;
	uint8_t ep[20], h[32];
	const char *field;
	char why[256];
	cJSON *j = user_op(factory, fdata, auth);

	addr(EP08, ep);
	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V08, j, &op, &field, why, sizeof(why)) == 0);
	bp_userop_hash_v(&op, ep, 31337, h);
	assert_bytes(h, 32, want);
	bp_userop_free(&op);
	cJSON_Delete(j);
}

/* v0.8 userOpHash of an EIP-7702 op: the authorization's delegate in place of the marker. */
static void
test_userop_hash(void)
{
	static const char marker[] = "0x7702000000000000000000000000000000000000";

	assert_op_hash(marker, "0x", 1, UOH_7702);
	assert_op_hash("0x7702", "0x", 1, UOH_7702);
	assert_op_hash(marker, "0x1234", 1, UOH_7702_FDATA);

	/* Already delegated (no authorization): viem hashes the marker itself. */
	assert_op_hash(marker, "0x", 0, UOH_MARKER);
	/* No marker: the plain hash, authorization or not. */
	assert_op_hash(NULL, NULL, 0, UOH_PLAIN);
	assert_op_hash(NULL, NULL, 1, UOH_PLAIN);
}

/* eip7702Auth read into the op; the marker's forms; the delegate given by a caller. */
static void
test_userop_auth(void)
{
	struct bp_userop op;
	uint8_t ep[20], h[32], h2[32], who[20], addr1[20], delegate[20];
	const char *field;
	char why[256];
	cJSON *j = user_op("0x7702", "0x", 1);

	addr(EP08, ep);
	addr(ADDR1, addr1);
	addr(SIMPLE7702, delegate);
	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V08, j, &op, &field, why, sizeof(why)) == 0);
	CU_ASSERT(op.has_auth);
	/* Packed as viem packs it: 0x7702 ++ factoryData. */
	CU_ASSERT_EQUAL(op.len[BP_USEROP_INIT_CODE], 2);
	CU_ASSERT(memcmp(op.bytes[BP_USEROP_INIT_CODE], "\x77\x02", 2) == 0);
	CU_ASSERT(bp_userop_is_7702(&op));
	CU_ASSERT(memcmp(op.auth.address, delegate, 20) == 0);
	/* The tuple read is the one the EOA signed. */
	CU_ASSERT_EQUAL(bp_tx_auth_authority(&op.auth, who), 0);
	CU_ASSERT(memcmp(who, addr1, 20) == 0);
	/* The delegate read from the sender's code, for an op without the authorization. */
	bp_userop_hash_v(&op, ep, 31337, h);
	op.has_auth = 0;
	bp_userop_hash_7702(&op, ep, 31337, delegate, h2);
	CU_ASSERT(memcmp(h, h2, 32) == 0);
	/* A marker that is not the whole word, or a 1-byte initCode, is no marker. */
	op.len[BP_USEROP_INIT_CODE] = 1;
	CU_ASSERT(!bp_userop_is_7702(&op));
	bp_userop_free(&op);
	cJSON_Delete(j);
	/*
	 * The short form with factoryData packs 0x7702 ++ 0x1234, whose first word is not the
	 * marker's: no 7702 op for the EntryPoint (tests/e2e/eip7702.test.mjs checks its hash on
	 * chain), though viem's own hash would take delegate ++ factoryData.
	 */
	j = user_op("0x7702", "0x1234", 1);
	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V08, j, &op, &field, why, sizeof(why)) == 0);
	CU_ASSERT(op.len[BP_USEROP_INIT_CODE] == 4 && !bp_userop_is_7702(&op));
	bp_userop_free(&op);
	cJSON_Delete(j);
	j = user_op("0x7702000000000000000000000000000000000000", "0x", 0);
	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V08, j, &op, &field, why, sizeof(why)) == 0);
	CU_ASSERT(op.len[BP_USEROP_INIT_CODE] == 20 && bp_userop_is_7702(&op) && !op.has_auth);
	op.bytes[BP_USEROP_INIT_CODE][19] = 1;
	CU_ASSERT(!bp_userop_is_7702(&op));
	bp_userop_free(&op);
	cJSON_Delete(j);
	/* v0.7 reads the authorization too (its EntryPoint has no marker). */
	j = user_op(NULL, NULL, 1);
	CU_ASSERT_FATAL(bp_userop_from_json_v(BP_EP_V07, j, &op, &field, why, sizeof(why)) == 0);
	CU_ASSERT(op.has_auth && !bp_userop_is_7702(&op));
	bp_userop_free(&op);
	cJSON_Delete(j);
}

/* What eip7702Auth refuses, naming the member. */
static void
test_userop_refusals(void)
{
	static const struct {
		const char	*member, *value, *field, *says;
	} rows[] = {
		{ NULL, "7", "eip7702Auth", "object" },
		{ "address", "\"0x12\"", "eip7702Auth.address", "address" },
		{ "chainId", NULL, "eip7702Auth.chainId", "required" },
		{ "chainId", "\"0x\"", "eip7702Auth.chainId", "hex quantity" },
		{ "nonce", "\"0x10000000000000000\"", "eip7702Auth.nonce", "2^64" },
		{ "yParity", "\"0x2\"", "eip7702Auth.yParity", "0x0 or 0x1" },
		{ "yParity", "1", "eip7702Auth.yParity", "hex string" },
		{ "r", "\"0x1" "0000000000000000000000000000000000000000000000000000000000000000\"",
		    "eip7702Auth.r", "hex quantity" },
		{ "s", NULL, "eip7702Auth.s", "required" },
	};
	struct bp_userop op;
	const char *field;
	char why[256];
	cJSON *j, *a;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		j = user_op("0x7702", "0x", 1);
		a = cJSON_GetObjectItemCaseSensitive(j, "eip7702Auth");
		if (rows[i].member == NULL)
			cJSON_ReplaceItemInObject(j, "eip7702Auth", cJSON_Parse(rows[i].value));
		else if (rows[i].value == NULL)
			cJSON_DeleteItemFromObject(a, rows[i].member);
		else
			cJSON_ReplaceItemInObject(a, rows[i].member, cJSON_Parse(rows[i].value));
		CU_ASSERT_EQUAL(bp_userop_from_json_v(BP_EP_V08, j, &op, &field, why,
		    sizeof(why)), -1);
		CU_ASSERT_STRING_EQUAL(field, rows[i].field);
		CU_ASSERT_PTR_NOT_NULL(strstr(why, rows[i].says));
		CU_ASSERT_FALSE(op.has_auth);
		cJSON_Delete(j);
	}
	/* null is absent, as for the other members; "0x7703" is no factory. */
	j = user_op("0x7703", "0x", 0);
	CU_ASSERT_EQUAL(bp_userop_from_json_v(BP_EP_V08, j, &op, &field, why, sizeof(why)), -1);
	CU_ASSERT_STRING_EQUAL(field, "factory");
	cJSON_Delete(j);
	j = user_op(NULL, NULL, 0);
	cJSON_AddNullToObject(j, "eip7702Auth");
	CU_ASSERT_EQUAL(bp_userop_from_json_v(BP_EP_V08, j, &op, &field, why, sizeof(why)), 0);
	CU_ASSERT_FALSE(op.has_auth);
	bp_userop_free(&op);
	cJSON_Delete(j);
}

BP_UNIT_SUITE(evm_eip7702, setup, teardown,
	{ "viem vectors: authorization hash, signature, authority", test_auth },
	{ "viem vectors: type 4 signing hash, raw, tx hash", test_tx },
	{ "type 4 fields and refusals", test_tx_structure },
	{ "viem vectors: v0.8 userOpHash of EIP-7702 ops", test_userop_hash },
	{ "eip7702Auth read, the marker's forms, a caller's delegate", test_userop_auth },
	{ "eip7702Auth refusals", test_userop_refusals })
