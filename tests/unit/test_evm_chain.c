/*
 * lib/evm/chain.c without a node: upstream answers (canned bytes, read by bp_chain_parse exactly
 * as bp_chain_batch reads them) into typed results, hostile answers into the right error kind,
 * and Multicall3's aggregate3 calldata and return data against encodings made by viem 2
 * (encodeFunctionData / encodeFunctionResult with Multicall3's ABI). The reads against a real
 * node are exercised by tests/e2e/wallets.test.mjs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "evm/chain.h"
#include "evm/u256.h"
#include "unit.h"

/*
 * aggregate3([{target: 0x11..11, allowFailure: true, callData: getNonce(0x..01, 0)},
 *             {target: 0x22..22, allowFailure: true, callData: 0x}])
 */
static const char mc3_call_hex[] = "0x"
    "82ad56cb"
    "0000000000000000000000000000000000000000000000000000000000000020"
    "0000000000000000000000000000000000000000000000000000000000000002"
    "0000000000000000000000000000000000000000000000000000000000000040"
    "0000000000000000000000000000000000000000000000000000000000000120"
    "0000000000000000000000001111111111111111111111111111111111111111"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "0000000000000000000000000000000000000000000000000000000000000060"
    "0000000000000000000000000000000000000000000000000000000000000044"
    "35567e1a00000000000000000000000000000000000000000000000000000000"
    "0000000100000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000002222222222222222222222222222222222222222"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "0000000000000000000000000000000000000000000000000000000000000060"
    "0000000000000000000000000000000000000000000000000000000000000000";

/* The result [{success: true, returnData: uint256 42}, {success: false, returnData: 0x08c379a0}]. */
static const char mc3_ret_hex[] = "0x"
    "0000000000000000000000000000000000000000000000000000000000000020"
    "0000000000000000000000000000000000000000000000000000000000000002"
    "0000000000000000000000000000000000000000000000000000000000000040"
    "00000000000000000000000000000000000000000000000000000000000000c0"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "0000000000000000000000000000000000000000000000000000000000000040"
    "0000000000000000000000000000000000000000000000000000000000000020"
    "000000000000000000000000000000000000000000000000000000000000002a"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000040"
    "0000000000000000000000000000000000000000000000000000000000000004"
    "08c379a000000000000000000000000000000000000000000000000000000000";

static uint8_t *
unhex(const char *s, size_t *n)
{
	size_t len = strlen(s);
	uint8_t *p = malloc(len / 2 + 1);

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(bp_hex_decode(s, len, p, len / 2 + 1, n) == 0);
	return p;
}

/* Five reads of every kind, answered in another order than asked: each gets its typed result. */
static void
test_parse_batch(void)
{
	static const char ans[] = "["
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":\"0x000000000000000000000000000000000000000000"
	    "000000000000000000002a\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":\"0x1b4\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"0xde0b6b3a7640000\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"0x6080\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"0x00ff\"}]";
	struct bp_chain_read r[5];
	struct bp_u256 wei;
	uint8_t data[4] = { 0x35, 0x56, 0x7e, 0x1a };
	uint64_t v;

	memset(r, 0, sizeof(r));
	r[0].op = BP_CHAIN_BLOCK_NUMBER;
	r[1].op = BP_CHAIN_CODE;
	r[2].op = BP_CHAIN_BALANCE;
	r[3].op = BP_CHAIN_TX_COUNT;
	r[4].op = BP_CHAIN_CALL;
	r[4].data = data;
	r[4].len = sizeof(data);
	r[1].block = r[2].block = r[3].block = BP_CHAIN_LATEST;
	r[4].block = 7;
	CU_ASSERT_EQUAL(bp_chain_parse(r, 5, ans, strlen(ans)), 5);
	CU_ASSERT_EQUAL(r[0].u64, 436);
	CU_ASSERT_EQUAL(r[1].nbytes, 2);
	CU_ASSERT(r[1].bytes != NULL && r[1].bytes[0] == 0x60 && r[1].bytes[1] == 0x80);
	CU_ASSERT(bp_u256_to_u64(&r[2].u256, &v) == 0 && v == 1000000000000000000ULL);
	bp_u256_from_u64(&wei, 0);
	CU_ASSERT_EQUAL(r[3].u64, 255);	/* nodes may pad; read leniently */
	CU_ASSERT_EQUAL(r[4].nbytes, 32);
	CU_ASSERT(r[4].bytes != NULL && r[4].bytes[31] == 42);
	CU_ASSERT_EQUAL(r[4].err.kind, BP_CHAIN_OK);
	bp_chain_reads_free(r, 5);
	CU_ASSERT(r[1].bytes == NULL && r[4].bytes == NULL && r[1].nbytes == 0);
}

/* A single read answered by an object; "0x" code is no bytes, not an error. */
static void
test_parse_single(void)
{
	static const char ans[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":\"0x\"}";
	static const char upper[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":\"0X\"}";
	struct bp_chain_read r = { .op = BP_CHAIN_CODE, .block = BP_CHAIN_LATEST };

	CU_ASSERT_EQUAL(bp_chain_parse(&r, 1, ans, strlen(ans)), 1);
	CU_ASSERT_EQUAL(r.err.kind, BP_CHAIN_OK);
	CU_ASSERT(r.bytes == NULL && r.nbytes == 0);
	/* "0X" is DATA too (bp_hex_decode); found by tests/fuzz/fuzz_chain.c. */
	CU_ASSERT_EQUAL(bp_chain_parse(&r, 1, upper, strlen(upper)), 1);
	CU_ASSERT(r.bytes == NULL && r.nbytes == 0);
}

/* Hostile answers, one row each: the kind of error the read gets. */
static void
test_parse_hostile(void)
{
	static const struct {
		enum bp_chain_op	 op;
		const char		*ans;
		enum bp_chain_err_kind	 kind;
	} rows[] = {
		{ BP_CHAIN_BLOCK_NUMBER, "not json", BP_CHAIN_ERR_PROTOCOL },
		{ BP_CHAIN_BLOCK_NUMBER, "", BP_CHAIN_ERR_PROTOCOL },
		{ BP_CHAIN_BLOCK_NUMBER, "{\"id\":0}", BP_CHAIN_ERR_PROTOCOL },
		{ BP_CHAIN_BLOCK_NUMBER, "{\"id\":0,\"result\":1}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_BLOCK_NUMBER, "{\"id\":0,\"result\":\"0x\"}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_BLOCK_NUMBER, "{\"id\":0,\"result\":\"0x10000000000000000\"}",
		  BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_BLOCK_NUMBER, "{\"id\":0,\"result\":null}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_TX_COUNT, "{\"id\":0,\"result\":\"12\"}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_BALANCE, "{\"id\":0,\"result\":\"0x1" "0000000000000000"
		  "0000000000000000" "0000000000000000" "0000000000000000\"}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_CODE, "{\"id\":0,\"result\":\"0x608\"}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_CODE, "{\"id\":0,\"result\":\"0xzz\"}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_CODE, "{\"id\":0,\"result\":\"\"}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_CODE, "{\"id\":0,\"result\":\"6080\"}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_CODE, "{\"id\":0,\"result\":\"1x\"}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_CALL, "{\"id\":0,\"result\":\"xx\"}", BP_CHAIN_ERR_DECODE },
		{ BP_CHAIN_CALL, "{\"id\":0,\"error\":{\"code\":3,\"message\":\"execution reverted\"}}",
		  BP_CHAIN_ERR_RPC },
		{ BP_CHAIN_CALL, "{\"id\":0,\"result\":{\"x\":1}}", BP_CHAIN_ERR_DECODE },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct bp_chain_read r = { .op = rows[i].op, .block = BP_CHAIN_LATEST };

		CU_ASSERT_EQUAL(bp_chain_parse(&r, 1, rows[i].ans, strlen(rows[i].ans)), 0);
		CU_ASSERT_EQUAL(r.err.kind, rows[i].kind);
		CU_ASSERT(r.bytes == NULL);
		if (r.err.kind != rows[i].kind)
			fprintf(stderr, "row %zu: kind %d\n", i, (int)r.err.kind);
	}
	{
		static const char ans[] = "{\"id\":0,\"error\":{\"code\":3,\"message\":\"reverted\"}}";
		struct bp_chain_read r = { .op = BP_CHAIN_CALL };

		CU_ASSERT_EQUAL(bp_chain_parse(&r, 1, ans, strlen(ans)), 0);
		CU_ASSERT_EQUAL(r.err.code, 3);
		CU_ASSERT_STRING_EQUAL(r.err.message, "reverted");
	}
	{
		/* A batch where only one read was answered: the other lacks its answer. */
		static const char ans[] = "[{\"id\":1,\"result\":\"0x1\"}]";
		struct bp_chain_read r[2];

		memset(r, 0, sizeof(r));
		CU_ASSERT_EQUAL(bp_chain_parse(r, 2, ans, strlen(ans)), 1);
		CU_ASSERT_EQUAL(r[0].err.kind, BP_CHAIN_ERR_PROTOCOL);
		CU_ASSERT_EQUAL(r[1].err.kind, BP_CHAIN_OK);
		CU_ASSERT_EQUAL(r[1].u64, 1);
	}
	{
		/* An op out of range is refused before anything is sent. */
		struct bp_chain_read r = { .op = BP_CHAIN_OP__MAX };

		CU_ASSERT_EQUAL(bp_chain_parse(&r, 1, "{\"id\":0,\"result\":\"0x1\"}", 23), 0);
		CU_ASSERT_EQUAL(r.err.kind, BP_CHAIN_ERR_INTERNAL);
	}
}

/* aggregate3 calldata byte for byte as viem encodes it. */
static void
test_mc3_encode(void)
{
	uint8_t nonce_call[68], *want, *got = NULL;
	size_t wantlen, gotlen = 0;
	struct bp_chain_read r[2];

	memset(r, 0, sizeof(r));
	memset(nonce_call, 0, sizeof(nonce_call));
	memcpy(nonce_call, "\x35\x56\x7e\x1a", 4);
	nonce_call[35] = 1;
	r[0].op = r[1].op = BP_CHAIN_CALL;
	memset(r[0].address, 0x11, 20);
	memset(r[1].address, 0x22, 20);
	r[0].data = nonce_call;
	r[0].len = sizeof(nonce_call);
	want = unhex(mc3_call_hex, &wantlen);
	CU_ASSERT_EQUAL_FATAL(bp_chain_mc3_encode(r, 2, &got, &gotlen), 0);
	CU_ASSERT_EQUAL(gotlen, wantlen);
	CU_ASSERT(gotlen == wantlen && memcmp(got, want, wantlen) == 0);
	free(got);
	/* Not a call, or nothing to send: refused. */
	r[1].op = BP_CHAIN_CODE;
	CU_ASSERT_EQUAL(bp_chain_mc3_encode(r, 2, &got, &gotlen), -1);
	CU_ASSERT_EQUAL(bp_chain_mc3_encode(r, 0, &got, &gotlen), -1);
	free(want);
}

/* aggregate3's return data: the success gets its bytes, the failure a revert with its data. */
static void
test_mc3_decode(void)
{
	struct bp_chain_read r[3];
	uint8_t *ret, *bad;
	size_t len;

	memset(r, 0, sizeof(r));
	ret = unhex(mc3_ret_hex, &len);
	CU_ASSERT_EQUAL(bp_chain_mc3_decode(ret, len, r, 2), 1);
	CU_ASSERT_EQUAL(r[0].err.kind, BP_CHAIN_OK);
	CU_ASSERT(r[0].nbytes == 32 && r[0].bytes != NULL && r[0].bytes[31] == 42);
	CU_ASSERT_EQUAL(r[1].err.kind, BP_CHAIN_ERR_RPC);
	CU_ASSERT_EQUAL(r[1].err.code, 3);
	CU_ASSERT(r[1].nbytes == 4 && r[1].bytes != NULL && r[1].bytes[0] == 0x08);
	bp_chain_reads_free(r, 2);

	/* Not one result per call. */
	CU_ASSERT_EQUAL(bp_chain_mc3_decode(ret, len, r, 3), -1);
	CU_ASSERT_EQUAL(r[2].err.kind, BP_CHAIN_ERR_DECODE);
	CU_ASSERT_EQUAL(bp_chain_mc3_decode(ret, len, r, 1), -1);
	/*
	 * Cut short anywhere before the last result's bytes end: refused, nothing kept. (Only the
	 * zero padding after them, the last 28 bytes, may be missing.)
	 */
	{
		size_t cut;

		for (cut = 0; cut < len - 28; cut++) {
			CU_ASSERT_EQUAL(bp_chain_mc3_decode(ret, cut, r, 2), -1);
			CU_ASSERT(r[0].bytes == NULL && r[1].bytes == NULL);
		}
		CU_ASSERT_EQUAL(bp_chain_mc3_decode(ret, len - 28, r, 2), 1);
		bp_chain_reads_free(r, 2);
	}
	/* A success flag of 2 is not a bool; an offset pointing past the end. */
	CU_ASSERT_FATAL((bad = malloc(len)) != NULL);
	memcpy(bad, ret, len);
	bad[4 * 32 + 31] = 2;
	CU_ASSERT_EQUAL(bp_chain_mc3_decode(bad, len, r, 2), -1);
	memcpy(bad, ret, len);
	bad[2 * 32 + 31] = 0xff;
	bad[2 * 32 + 30] = 0xff;
	CU_ASSERT_EQUAL(bp_chain_mc3_decode(bad, len, r, 2), -1);
	CU_ASSERT_EQUAL(r[0].err.kind, BP_CHAIN_ERR_DECODE);
	free(bad);
	free(ret);
}

/* The context is per process, holds nothing of a request, and frees cleanly. */
static void
test_context(void)
{
	struct bp_config *cfg = calloc(1, sizeof(*cfg));
	struct bp_chain *c;
	struct bp_network other;

	CU_ASSERT_FATAL(cfg != NULL);
	c = bp_chain_new(cfg, NULL);
	CU_ASSERT_FATAL(c != NULL);
	memset(&other, 0, sizeof(other));
	/* A network that is not one of the config's: unknown, no read is tried. */
	CU_ASSERT_EQUAL(bp_chain_has_multicall3(c, &other), -1);
	bp_chain_free(c);
	bp_chain_free(NULL);
	free(cfg);
}

BP_UNIT_SUITE(evm_chain, NULL, NULL,
    { "parse_batch", test_parse_batch },
    { "parse_single", test_parse_single },
    { "parse_hostile", test_parse_hostile },
    { "mc3_encode", test_mc3_encode },
    { "mc3_decode", test_mc3_decode },
    { "context", test_context })
