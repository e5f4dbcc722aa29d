/*
 * lib/evm/abi.c: selectors and topics, the encoder against encodings made by ethers v6
 * (AbiCoder.defaultAbiCoder().encode), and the decoder on those and on hostile blobs whose
 * offsets and lengths point past the end or near SIZE_MAX.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "evm/abi.h"
#include "evm/u256.h"
#include "unit.h"

/*
 * abi1 = encode(['uint256','address','bool','bytes32','bytes','string'],
 *     [12345, A1, true, keccak256('0x'), '0x0102030405', 'hello world'])
 * abi2 = encode(['uint256[]','(uint256,string)','(uint256,address)[]','string[]','bytes'],
 *     [[1,2,3], [7,'seven'], [[1,A1],[2,A2]], ['a','','x' * 40], '0x'])
 * abi3 = encode(['(uint256,uint256)','uint256[]','(string,(uint256,bytes))'],
 *     [[1,2], [], ['s',[9,'0xff']]])
 * with A1 = 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 and
 * A2 = 0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC.
 */
static const char abi1_hex[] = "0x"
    "0000000000000000000000000000000000000000000000000000000000003039"
    "00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
    "00000000000000000000000000000000000000000000000000000000000000c0"
    "0000000000000000000000000000000000000000000000000000000000000100"
    "0000000000000000000000000000000000000000000000000000000000000005"
    "0102030405000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000b"
    "68656c6c6f20776f726c64000000000000000000000000000000000000000000";

static const char abi2_hex[] = "0x"
    "00000000000000000000000000000000000000000000000000000000000000a0"
    "0000000000000000000000000000000000000000000000000000000000000120"
    "00000000000000000000000000000000000000000000000000000000000001a0"
    "0000000000000000000000000000000000000000000000000000000000000240"
    "0000000000000000000000000000000000000000000000000000000000000380"
    "0000000000000000000000000000000000000000000000000000000000000003"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "0000000000000000000000000000000000000000000000000000000000000002"
    "0000000000000000000000000000000000000000000000000000000000000003"
    "0000000000000000000000000000000000000000000000000000000000000007"
    "0000000000000000000000000000000000000000000000000000000000000040"
    "0000000000000000000000000000000000000000000000000000000000000005"
    "736576656e000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000002"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8"
    "0000000000000000000000000000000000000000000000000000000000000002"
    "0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc"
    "0000000000000000000000000000000000000000000000000000000000000003"
    "0000000000000000000000000000000000000000000000000000000000000060"
    "00000000000000000000000000000000000000000000000000000000000000a0"
    "00000000000000000000000000000000000000000000000000000000000000c0"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "6100000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000028"
    "7878787878787878787878787878787878787878787878787878787878787878"
    "7878787878787878000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000";

static const char abi3_hex[] = "0x"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "0000000000000000000000000000000000000000000000000000000000000002"
    "0000000000000000000000000000000000000000000000000000000000000080"
    "00000000000000000000000000000000000000000000000000000000000000a0"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000040"
    "0000000000000000000000000000000000000000000000000000000000000080"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "7300000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000009"
    "0000000000000000000000000000000000000000000000000000000000000040"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "ff00000000000000000000000000000000000000000000000000000000000000";

static const uint8_t a1[20] = {
	0x70, 0x99, 0x79, 0x70, 0xc5, 0x18, 0x12, 0xdc, 0x3a, 0x01,
	0x0c, 0x7d, 0x01, 0xb5, 0x0e, 0x0d, 0x17, 0xdc, 0x79, 0xc8,
};
static const uint8_t a2[20] = {
	0x3c, 0x44, 0xcd, 0xdd, 0xb6, 0xa9, 0x00, 0xfa, 0x2b, 0x58,
	0x5d, 0xd2, 0x99, 0xe0, 0x3d, 0x12, 0xfa, 0x42, 0x93, 0xbc,
};

/* Decodes a hex literal the test knows is valid into a new buffer (freed by the caller). */
static uint8_t *
unhex(const char *s, size_t *n)
{
	size_t len = strlen(s);
	uint8_t *b = malloc(len / 2 + 1);

	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_FATAL(bp_hex_decode(s, len, b, len / 2, n) == 0);
	return b;
}

/* Finishes e (no selector) and compares with the hex literal want; frees e. */
static void
check_enc(struct bp_abi_enc *e, const char *want)
{
	uint8_t *got = NULL, *w;
	size_t gn = 0, wn;

	CU_ASSERT_EQUAL_FATAL(bp_abi_enc_finish(e, NULL, &got, &gn), 0);
	w = unhex(want, &wn);
	CU_ASSERT_EQUAL(gn, wn);
	CU_ASSERT(gn == wn && memcmp(got, w, wn) == 0);
	free(got);
	free(w);
	bp_abi_enc_free(e);
}

static void
test_selectors(void)
{
	static const struct {
		const char	*sig;
		const char	*sel;
	} rows[] = {
		{ "transfer(address,uint256)", "0xa9059cbb" },
		{ "balanceOf(address)", "0x70a08231" },
		{ "approve(address,uint256)", "0x095ea7b3" },
		{ "Error(string)", "0x08c379a0" },
	};
	static const struct {
		const char	*sig;
		const char	*topic;
	} topics[] = {
		{ "Transfer(address,address,uint256)",
		    "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef" },
		{ "Approval(address,address,uint256)",
		    "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925" },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t sel[4], want[4];

		CU_ASSERT_FATAL(bp_hex_decode_fixed(rows[i].sel, 10, want, 4) == 0);
		bp_abi_selector(rows[i].sig, sel);
		CU_ASSERT(memcmp(sel, want, 4) == 0);
	}
	for (i = 0; i < sizeof(topics) / sizeof(topics[0]); i++) {
		uint8_t t[32], want[32];

		CU_ASSERT_FATAL(bp_hex_decode_fixed(topics[i].topic, 66, want, 32) == 0);
		bp_abi_event_topic(topics[i].sig, t);
		CU_ASSERT(memcmp(t, want, 32) == 0);
	}
}

static void
test_encode_static_and_bytes(void)
{
	struct bp_abi_enc *e = bp_abi_enc_new(4096);
	uint8_t h[32];

	CU_ASSERT_FATAL(e != NULL);
	/* keccak256("0x") of ethers is the hash of no bytes. */
	CU_ASSERT_FATAL(bp_hex_decode_fixed(
	    "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470", 66, h, 32) == 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 12345), 0);
	CU_ASSERT_EQUAL(bp_abi_put_address(e, a1), 0);
	CU_ASSERT_EQUAL(bp_abi_put_bool(e, 7), 0);	/* any non-zero is true */
	CU_ASSERT_EQUAL(bp_abi_put_bytes32(e, h), 0);
	CU_ASSERT_EQUAL(bp_abi_put_bytes(e, "\x01\x02\x03\x04\x05", 5), 0);
	CU_ASSERT_EQUAL(bp_abi_put_string(e, "hello world", 11), 0);
	check_enc(e, abi1_hex);
}

static void
test_encode_arrays_tuples(void)
{
	struct bp_abi_enc *e = bp_abi_enc_new(4096);
	char x40[40];
	int i;

	CU_ASSERT_FATAL(e != NULL);
	memset(x40, 'x', sizeof(x40));
	/* uint256[] */
	CU_ASSERT_EQUAL(bp_abi_array_begin(e), 0);
	for (i = 1; i <= 3; i++)
		CU_ASSERT_EQUAL(bp_abi_put_u64(e, (uint64_t)i), 0);
	CU_ASSERT_EQUAL(bp_abi_array_end(e), 0);
	/* (uint256,string): dynamic tuple */
	CU_ASSERT_EQUAL(bp_abi_tuple_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 7), 0);
	CU_ASSERT_EQUAL(bp_abi_put_string(e, "seven", 5), 0);
	CU_ASSERT_EQUAL(bp_abi_tuple_end(e), 0);
	/* (uint256,address)[]: static tuples inline in the array */
	CU_ASSERT_EQUAL(bp_abi_array_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_tuple_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 1), 0);
	CU_ASSERT_EQUAL(bp_abi_put_address(e, a1), 0);
	CU_ASSERT_EQUAL(bp_abi_tuple_end(e), 0);
	CU_ASSERT_EQUAL(bp_abi_tuple_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 2), 0);
	CU_ASSERT_EQUAL(bp_abi_put_address(e, a2), 0);
	CU_ASSERT_EQUAL(bp_abi_tuple_end(e), 0);
	CU_ASSERT_EQUAL(bp_abi_array_end(e), 0);
	/* string[] */
	CU_ASSERT_EQUAL(bp_abi_array_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_put_string(e, "a", 1), 0);
	CU_ASSERT_EQUAL(bp_abi_put_string(e, NULL, 0), 0);
	CU_ASSERT_EQUAL(bp_abi_put_string(e, x40, sizeof(x40)), 0);
	CU_ASSERT_EQUAL(bp_abi_array_end(e), 0);
	/* empty bytes */
	CU_ASSERT_EQUAL(bp_abi_put_bytes(e, NULL, 0), 0);
	check_enc(e, abi2_hex);

	e = bp_abi_enc_new(4096);
	CU_ASSERT_FATAL(e != NULL);
	/* (uint256,uint256): static tuple, inline */
	CU_ASSERT_EQUAL(bp_abi_tuple_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 1), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 2), 0);
	CU_ASSERT_EQUAL(bp_abi_tuple_end(e), 0);
	/* uint256[] empty */
	CU_ASSERT_EQUAL(bp_abi_array_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_array_end(e), 0);
	/* (string,(uint256,bytes)): nested dynamic tuples */
	CU_ASSERT_EQUAL(bp_abi_tuple_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_put_string(e, "s", 1), 0);
	CU_ASSERT_EQUAL(bp_abi_tuple_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 9), 0);
	CU_ASSERT_EQUAL(bp_abi_put_bytes(e, "\xff", 1), 0);
	CU_ASSERT_EQUAL(bp_abi_tuple_end(e), 0);
	CU_ASSERT_EQUAL(bp_abi_tuple_end(e), 0);
	check_enc(e, abi3_hex);
}

/* transfer(A1, 1000000) call data, as in the tx vectors; also a selector-only call. */
static void
test_encode_call(void)
{
	static const char want[] = "0xa9059cbb"
	    "00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8"
	    "00000000000000000000000000000000000000000000000000000000000f4240";
	struct bp_abi_enc *e = bp_abi_enc_new(68);
	uint8_t sel[4], *out = NULL, *w;
	size_t n, wn;

	CU_ASSERT_FATAL(e != NULL);
	bp_abi_selector("transfer(address,uint256)", sel);
	CU_ASSERT_EQUAL(bp_abi_put_address(e, a1), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 1000000), 0);
	CU_ASSERT_EQUAL(bp_abi_enc_finish(e, sel, &out, &n), 0);	/* exactly the cap */
	w = unhex(want, &wn);
	CU_ASSERT(n == wn && memcmp(out, w, n) == 0);
	/* Finished: no more puts, no second finish. */
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 1), -1);
	CU_ASSERT_EQUAL(bp_abi_enc_finish(e, sel, &out, &n), -1);
	free(out);
	free(w);
	bp_abi_enc_free(e);

	e = bp_abi_enc_new(4);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_abi_enc_finish(e, sel, &out, &n), 0);
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT(memcmp(out, sel, 4) == 0);
	free(out);
	bp_abi_enc_free(e);

	/* One byte short of the selector + 2 words: the finish fails. */
	e = bp_abi_enc_new(67);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_abi_put_address(e, a1), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 1000000), 0);
	CU_ASSERT_EQUAL(bp_abi_enc_finish(e, sel, &out, &n), -1);
	bp_abi_enc_free(e);
}

static void
test_encode_limits(void)
{
	struct bp_abi_enc *e;
	uint8_t *out = NULL;
	size_t n;
	int i;

	CU_ASSERT_PTR_NULL(bp_abi_enc_new(0));
	CU_ASSERT_PTR_NULL(bp_abi_enc_new(SIZE_MAX));
	bp_abi_enc_free(NULL);

	/* The cap is sticky: a put past it fails, and so does everything after. */
	e = bp_abi_enc_new(64);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 1), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 2), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 3), -1);
	CU_ASSERT_EQUAL(bp_abi_tuple_begin(e), -1);
	CU_ASSERT_EQUAL(bp_abi_enc_finish(e, NULL, &out, &n), -1);
	bp_abi_enc_free(e);

	/* Dynamic bytes longer than the cap fail before any arithmetic on their length. */
	e = bp_abi_enc_new(1024);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_abi_put_bytes(e, "x", SIZE_MAX), -1);
	bp_abi_enc_free(e);
	e = bp_abi_enc_new(1024);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_abi_put_bytes(e, NULL, 1), -1);
	bp_abi_enc_free(e);

	/* Head and tail each fit but not together. */
	e = bp_abi_enc_new(96);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_abi_put_bytes(e, "abc", 3), 0);	/* 32 head + 64 tail */
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 1), 0);		/* head 64 */
	CU_ASSERT_EQUAL(bp_abi_enc_finish(e, NULL, &out, &n), -1);
	bp_abi_enc_free(e);

	/* Unbalanced and mismatched frames. */
	e = bp_abi_enc_new(1024);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_abi_tuple_end(e), -1);
	bp_abi_enc_free(e);
	e = bp_abi_enc_new(1024);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_abi_array_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_tuple_end(e), -1);
	bp_abi_enc_free(e);
	e = bp_abi_enc_new(1024);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(bp_abi_tuple_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 1), 0);
	CU_ASSERT_EQUAL(bp_abi_enc_finish(e, NULL, &out, &n), -1);
	bp_abi_enc_free(e);

	/* Depth: BP_ABI_MAX_DEPTH levels open, one more fails. */
	e = bp_abi_enc_new(1 << 16);
	CU_ASSERT_FATAL(e != NULL);
	for (i = 0; i < BP_ABI_MAX_DEPTH; i++)
		CU_ASSERT_EQUAL(bp_abi_array_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_array_begin(e), -1);
	bp_abi_enc_free(e);
	e = bp_abi_enc_new(1 << 16);
	CU_ASSERT_FATAL(e != NULL);
	for (i = 0; i < BP_ABI_MAX_DEPTH; i++)
		CU_ASSERT_EQUAL(bp_abi_array_begin(e), 0);
	CU_ASSERT_EQUAL(bp_abi_put_u64(e, 5), 0);
	for (i = 0; i < BP_ABI_MAX_DEPTH; i++)
		CU_ASSERT_EQUAL(bp_abi_array_end(e), 0);
	CU_ASSERT_EQUAL(bp_abi_enc_finish(e, NULL, &out, &n), 0);
	/* Each level: offset 0x20 word + count 1; the innermost ends with the 5. */
	CU_ASSERT_EQUAL(n, 32 * (2 * BP_ABI_MAX_DEPTH + 1));
	CU_ASSERT_EQUAL(out[n - 1], 5);
	free(out);
	bp_abi_enc_free(e);

	/* A NULL encoder is an error everywhere. */
	CU_ASSERT_EQUAL(bp_abi_put_u64(NULL, 1), -1);
	CU_ASSERT_EQUAL(bp_abi_put_bytes(NULL, "", 0), -1);
	CU_ASSERT_EQUAL(bp_abi_tuple_begin(NULL), -1);
	CU_ASSERT_EQUAL(bp_abi_array_end(NULL), -1);
	CU_ASSERT_EQUAL(bp_abi_enc_finish(NULL, NULL, &out, &n), -1);
}

static void
test_decode_vectors(void)
{
	uint8_t *d, addr[20], b32[32];
	const uint8_t *p, *el, *sub, *sub2;
	size_t n, pn, eln, cnt, subn, sub2n, j;
	struct bp_u256 v;
	uint64_t x;
	char s[64];
	int b;

	d = unhex(abi1_hex, &n);
	CU_ASSERT_EQUAL(bp_abi_read_u64(d, n, 0, &x), 0);
	CU_ASSERT_EQUAL(x, 12345);
	CU_ASSERT_EQUAL(bp_abi_read_u256(d, n, 0, &v), 0);
	CU_ASSERT_EQUAL(bp_abi_read_address(d, n, 1, addr), 0);
	CU_ASSERT(memcmp(addr, a1, 20) == 0);
	CU_ASSERT_EQUAL(bp_abi_read_bool(d, n, 2, &b), 0);
	CU_ASSERT_EQUAL(b, 1);
	CU_ASSERT_EQUAL(bp_abi_read_bytes32(d, n, 3, b32), 0);
	CU_ASSERT_EQUAL(b32[0], 0xc5);
	CU_ASSERT_EQUAL(bp_abi_read_bytes(d, n, 4, &p, &pn), 0);
	CU_ASSERT(pn == 5 && memcmp(p, "\x01\x02\x03\x04\x05", 5) == 0);
	CU_ASSERT_EQUAL(bp_abi_read_string(d, n, 5, s, sizeof(s)), 0);
	CU_ASSERT_STRING_EQUAL(s, "hello world");
	/* The bytes32 word read as an address has high bytes set. */
	CU_ASSERT_EQUAL(bp_abi_read_address(d, n, 3, addr), -1);
	/* 12345 is not a bool. */
	CU_ASSERT_EQUAL(bp_abi_read_bool(d, n, 0, &b), -1);
	/* String caps: exact fit and one short. */
	CU_ASSERT_EQUAL(bp_abi_read_string(d, n, 5, s, 12), 0);
	CU_ASSERT_EQUAL(bp_abi_read_string(d, n, 5, s, 11), -1);
	CU_ASSERT_STRING_EQUAL(s, "");
	free(d);

	d = unhex(abi2_hex, &n);
	CU_ASSERT_EQUAL(bp_abi_read_array(d, n, 0, 1, &el, &eln, &cnt), 0);
	CU_ASSERT_EQUAL(cnt, 3);
	for (j = 0; j < cnt; j++) {
		CU_ASSERT_EQUAL(bp_abi_read_u64(el, eln, j, &x), 0);
		CU_ASSERT_EQUAL(x, j + 1);
	}
	CU_ASSERT_EQUAL(bp_abi_read_tuple(d, n, 1, &sub, &subn), 0);
	CU_ASSERT_EQUAL(bp_abi_read_u64(sub, subn, 0, &x), 0);
	CU_ASSERT_EQUAL(x, 7);
	CU_ASSERT_EQUAL(bp_abi_read_string(sub, subn, 1, s, sizeof(s)), 0);
	CU_ASSERT_STRING_EQUAL(s, "seven");
	CU_ASSERT_EQUAL(bp_abi_read_array(d, n, 2, 2, &el, &eln, &cnt), 0);
	CU_ASSERT_EQUAL(cnt, 2);
	CU_ASSERT_EQUAL(bp_abi_read_u64(el, eln, 2 * 1 + 0, &x), 0);
	CU_ASSERT_EQUAL(x, 2);
	CU_ASSERT_EQUAL(bp_abi_read_address(el, eln, 2 * 1 + 1, addr), 0);
	CU_ASSERT(memcmp(addr, a2, 20) == 0);
	CU_ASSERT_EQUAL(bp_abi_read_array(d, n, 3, 1, &el, &eln, &cnt), 0);
	CU_ASSERT_EQUAL(cnt, 3);
	CU_ASSERT_EQUAL(bp_abi_read_string(el, eln, 0, s, sizeof(s)), 0);
	CU_ASSERT_STRING_EQUAL(s, "a");
	CU_ASSERT_EQUAL(bp_abi_read_string(el, eln, 1, s, sizeof(s)), 0);
	CU_ASSERT_STRING_EQUAL(s, "");
	CU_ASSERT_EQUAL(bp_abi_read_string(el, eln, 2, s, sizeof(s)), 0);
	CU_ASSERT_EQUAL(strlen(s), 40);
	CU_ASSERT_EQUAL(bp_abi_read_bytes(d, n, 4, &p, &pn), 0);
	CU_ASSERT_EQUAL(pn, 0);
	free(d);

	d = unhex(abi3_hex, &n);
	CU_ASSERT_EQUAL(bp_abi_read_u64(d, n, 1, &x), 0);	/* static tuple inline */
	CU_ASSERT_EQUAL(x, 2);
	CU_ASSERT_EQUAL(bp_abi_read_array(d, n, 2, 1, &el, &eln, &cnt), 0);
	CU_ASSERT_EQUAL(cnt, 0);
	CU_ASSERT_EQUAL(bp_abi_read_tuple(d, n, 3, &sub, &subn), 0);
	CU_ASSERT_EQUAL(bp_abi_read_string(sub, subn, 0, s, sizeof(s)), 0);
	CU_ASSERT_STRING_EQUAL(s, "s");
	CU_ASSERT_EQUAL(bp_abi_read_tuple(sub, subn, 1, &sub2, &sub2n), 0);
	CU_ASSERT_EQUAL(bp_abi_read_u64(sub2, sub2n, 0, &x), 0);
	CU_ASSERT_EQUAL(x, 9);
	CU_ASSERT_EQUAL(bp_abi_read_bytes(sub2, sub2n, 1, &p, &pn), 0);
	CU_ASSERT(pn == 1 && p[0] == 0xff);
	free(d);
}

/* A blob of up to 8 words built by the hostile tests: set by word, read as one array. */
struct blob {
	union {
		uint8_t	w[8][32];
		uint8_t	raw[256];
	} u;
};

static void
set_word(struct blob *b, size_t i, uint64_t v)
{
	memset(b->u.w[i], 0, 32);
	for (int k = 0; k < 8; k++)
		b->u.w[i][31 - k] = (uint8_t)(v >> (8 * k));
}

/* Word i = 2^bit (bit 64..255) or all ones (bit 256). */
static void
set_big(struct blob *b, size_t i, int bit)
{
	memset(b->u.w[i], bit == 256 ? 0xff : 0, 32);
	if (bit < 256)
		b->u.w[i][31 - bit / 8] = (uint8_t)(1u << (bit % 8));
}

struct hrow {
	const char	*name;
	uint64_t	 off;		/* word 0 */
	int		 off_big;	/* when set, word 0 = 2^off_big instead (256: all ones) */
	uint64_t	 len;		/* the word the offset points at, when in range */
	int		 len_big;
	size_t		 blob_len;	/* bytes of the blob given to the reader */
	int		 bytes_ok;
	int		 array_ok;	/* elem_words 1 */
};

static const struct hrow hrows[] = {
	{ "valid: 1 byte at offset 32", 32, 0, 1, 0, 96, 1, 1 },
	{ "valid: empty at the last word", 224, 0, 0, 0, 256, 1, 1 },
	{ "length runs one past the end", 32, 0, 33, 0, 96, 0, 0 },
	{ "offset == length of blob", 96, 0, 0, 0, 96, 0, 0 },
	{ "offset leaves 31 bytes", 65, 0, 0, 0, 96, 0, 0 },
	{ "offset leaves exactly the length word", 64, 0, 0, 0, 96, 1, 1 },
	{ "offset past the end", 1000, 0, 0, 0, 96, 0, 0 },
	{ "offset SIZE_MAX", UINT64_MAX, 0, 0, 0, 96, 0, 0 },
	{ "offset SIZE_MAX - 31", UINT64_MAX - 31, 0, 0, 0, 96, 0, 0 },
	{ "offset 2^64", 0, 64, 0, 0, 96, 0, 0 },
	{ "offset 2^255", 0, 255, 0, 0, 96, 0, 0 },
	{ "offset 2^256 - 1", 0, 256, 0, 0, 96, 0, 0 },
	{ "length SIZE_MAX", 32, 0, UINT64_MAX, 0, 96, 0, 0 },
	{ "length SIZE_MAX - 31", 32, 0, UINT64_MAX - 31, 0, 96, 0, 0 },
	{ "length SIZE_MAX / 32 + 1", 32, 0, UINT64_MAX / 32 + 1, 0, 96, 0, 0 },
	{ "length 2^64", 32, 0, 0, 64, 96, 0, 0 },
	{ "length 2^256 - 1", 32, 0, 0, 256, 96, 0, 0 },
	{ "offset into a truncated blob", 32, 0, 1, 0, 63, 0, 0 },
	{ "blob shorter than a word", 0, 0, 0, 0, 31, 0, 0 },
	{ "offset 0: its own word is a length of 0", 0, 0, 0, 0, 96, 1, 1 },
};

static void
test_decode_hostile(void)
{
	size_t i;

	for (i = 0; i < sizeof(hrows) / sizeof(hrows[0]); i++) {
		const struct hrow *r = &hrows[i];
		struct blob b;
		const uint8_t *p = NULL, *el;
		size_t n = 777, eln, cnt, slot;
		char s[8];

		memset(&b, 0, sizeof(b));
		if (r->off_big)
			set_big(&b, 0, r->off_big);
		else
			set_word(&b, 0, r->off);
		/* The length word sits where the offset points, when that is inside. */
		if (!r->off_big && r->off % 32 == 0 && r->off / 32 < 8) {
			slot = (size_t)(r->off / 32);
			if (slot != 0) {
				if (r->len_big)
					set_big(&b, slot, r->len_big);
				else
					set_word(&b, slot, r->len);
			}
		}
		CU_ASSERT_EQUAL(bp_abi_read_bytes(b.u.raw, r->blob_len, 0, &p, &n),
		    r->bytes_ok ? 0 : -1);
		if (!r->bytes_ok) {
			CU_ASSERT_EQUAL(n, 777);
		} else {
			/* The bytes lie inside the blob. */
			CU_ASSERT(p >= b.u.raw && p + n <= b.u.raw + r->blob_len);
		}
		CU_ASSERT_EQUAL(bp_abi_read_array(b.u.raw, r->blob_len, 0, 1, &el, &eln, &cnt),
		    r->array_ok ? 0 : -1);
		if (r->bytes_ok && n < sizeof(s) && memchr(p, 0, n) == NULL) {
			CU_ASSERT_EQUAL(bp_abi_read_string(b.u.raw, r->blob_len, 0, s, sizeof(s)), 0);
		} else {
			CU_ASSERT_EQUAL(bp_abi_read_string(b.u.raw, r->blob_len, 0, s, sizeof(s)), -1);
		}
		/* Every row gives a tuple only when the offset is inside. */
		CU_ASSERT_EQUAL(bp_abi_read_tuple(b.u.raw, r->blob_len, 0, &el, &eln),
		    (!r->off_big && r->blob_len >= 32 && r->off <= r->blob_len) ? 0 : -1);
	}
}

static void
test_decode_hostile_words(void)
{
	struct blob b;
	const uint8_t *el;
	size_t eln, cnt;
	uint8_t addr[20];
	uint64_t x;
	int v;

	memset(&b, 0, sizeof(b));
	/* Word indexes past the end, and ones whose byte offset would wrap. */
	CU_ASSERT_EQUAL(bp_abi_read_u64(b.u.raw, 64, 1, &x), 0);
	CU_ASSERT_EQUAL(bp_abi_read_u64(b.u.raw, 64, 2, &x), -1);
	CU_ASSERT_EQUAL(bp_abi_read_u64(b.u.raw, 63, 1, &x), -1);	/* partial word */
	CU_ASSERT_EQUAL(bp_abi_read_u64(b.u.raw, 64, SIZE_MAX, &x), -1);
	CU_ASSERT_EQUAL(bp_abi_read_u64(b.u.raw, 64, SIZE_MAX / 32 + 1, &x), -1);
	CU_ASSERT_EQUAL(bp_abi_read_bytes32(b.u.raw, 0, 0, b.u.w[7]), -1);
	CU_ASSERT_EQUAL(bp_abi_read_u64(NULL, 64, 0, &x), -1);

	/* A bool of 2, and of 2^64 + 1. */
	set_word(&b, 0, 2);
	CU_ASSERT_EQUAL(bp_abi_read_bool(b.u.raw, 32, 0, &v), -1);
	set_big(&b, 0, 64);
	b.u.w[0][31] = 1;
	CU_ASSERT_EQUAL(bp_abi_read_bool(b.u.raw, 32, 0, &v), -1);
	CU_ASSERT_EQUAL(bp_abi_read_u64(b.u.raw, 32, 0, &x), -1);
	/* An address with one dirty high byte. */
	memset(&b, 0, sizeof(b));
	b.u.w[0][0] = 1;
	CU_ASSERT_EQUAL(bp_abi_read_address(b.u.raw, 32, 0, addr), -1);
	b.u.w[0][0] = 0;
	b.u.w[0][11] = 1;
	CU_ASSERT_EQUAL(bp_abi_read_address(b.u.raw, 32, 0, addr), -1);
	b.u.w[0][11] = 0;
	CU_ASSERT_EQUAL(bp_abi_read_address(b.u.raw, 32, 0, addr), 0);

	/* Arrays: a count whose count * elem_words * 32 would wrap. */
	memset(&b, 0, sizeof(b));
	set_word(&b, 0, 32);
	set_word(&b, 1, 2);			/* count 2, two words follow in a 128-byte blob */
	CU_ASSERT_EQUAL(bp_abi_read_array(b.u.raw, 128, 0, 1, &el, &eln, &cnt), 0);
	CU_ASSERT_EQUAL(cnt, 2);
	CU_ASSERT_EQUAL(eln, 64);
	CU_ASSERT_EQUAL(bp_abi_read_array(b.u.raw, 128, 0, 2, &el, &eln, &cnt), -1);
	CU_ASSERT_EQUAL(bp_abi_read_array(b.u.raw, 127, 0, 1, &el, &eln, &cnt), -1);
	CU_ASSERT_EQUAL(bp_abi_read_array(b.u.raw, 128, 0, 0, &el, &eln, &cnt), -1);
	CU_ASSERT_EQUAL(bp_abi_read_array(b.u.raw, 128, 0, SIZE_MAX, &el, &eln, &cnt), -1);
	set_word(&b, 1, SIZE_MAX / 32 + 1);	/* * 32 wraps to 0 */
	CU_ASSERT_EQUAL(bp_abi_read_array(b.u.raw, 128, 0, 1, &el, &eln, &cnt), -1);
	set_word(&b, 1, (SIZE_MAX / 64) + 1);	/* * 2 * 32 wraps */
	CU_ASSERT_EQUAL(bp_abi_read_array(b.u.raw, 128, 0, 2, &el, &eln, &cnt), -1);
	set_word(&b, 1, 0);
	CU_ASSERT_EQUAL(bp_abi_read_array(b.u.raw, 128, 0, SIZE_MAX, &el, &eln, &cnt), 0);
	CU_ASSERT_EQUAL(cnt, 0);

	/* A string holding a NUL byte. */
	memset(&b, 0, sizeof(b));
	set_word(&b, 0, 32);
	set_word(&b, 1, 3);
	memcpy(b.u.w[2], "a\0b", 3);
	CU_ASSERT_EQUAL(bp_abi_read_string(b.u.raw, 96, 0, (char[8]){ 0 }, 8), -1);
	CU_ASSERT_EQUAL(bp_abi_read_string(b.u.raw, 96, 0, NULL, 8), -1);
}

/* A revert reason: Error(string) after its selector. */
static void
test_decode_revert(void)
{
	static const char data[] = "0x08c379a0"
	    "0000000000000000000000000000000000000000000000000000000000000020"
	    "000000000000000000000000000000000000000000000000000000000000001a"
	    "4e6f7420656e6f7567682045746865722070726f76696465642e000000000000";
	uint8_t *d, sel[4];
	size_t n;
	char s[64];

	d = unhex(data, &n);
	bp_abi_selector("Error(string)", sel);
	CU_ASSERT(memcmp(d, sel, 4) == 0);
	CU_ASSERT_EQUAL(bp_abi_read_string(d + 4, n - 4, 0, s, sizeof(s)), 0);
	CU_ASSERT_STRING_EQUAL(s, "Not enough Ether provided.");
	/* Cut anywhere inside the string: an error, never a read past the cut. */
	for (size_t cut = 4; cut < n - 6; cut++) {
		uint8_t *t = malloc(cut - 4 + 1);

		CU_ASSERT_FATAL(t != NULL);
		memcpy(t, d + 4, cut - 4);
		CU_ASSERT_EQUAL(bp_abi_read_string(t, cut - 4, 0, s, sizeof(s)), -1);
		free(t);
	}
	free(d);
}

BP_UNIT_SUITE(evm_abi, NULL, NULL,
	{ "selectors and event topics", test_selectors },
	{ "encode static types, bytes and string", test_encode_static_and_bytes },
	{ "encode arrays and tuples", test_encode_arrays_tuples },
	{ "encode call with selector", test_encode_call },
	{ "encoder caps, depth and balance", test_encode_limits },
	{ "decode the encoder vectors", test_decode_vectors },
	{ "decode hostile offsets and lengths", test_decode_hostile },
	{ "decode hostile words and arrays", test_decode_hostile_words },
	{ "decode a revert reason", test_decode_revert })
