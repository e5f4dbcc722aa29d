/*
 * libFuzzer harness for the decoders of untrusted binary data: ABI return blobs (every reader,
 * arrays and nested tuples followed to a bounded depth) and RLP (decoded, walked, and
 * re-encoded: a canonical decoder must give back the very same bytes). Any pointer or length
 * handed out must lie inside the input; a violation aborts so the fuzzer reports it.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Ilib lib/evm/[a-z]*.c tests/fuzz/fuzz_abi.c \
 *       -lsecp256k1 -lcrypto
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evm/abi.h"
#include "evm/rlp.h"
#include "evm/u256.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Aborts unless [p, p + n) lies inside [base, base + len). */
static void
inside(const uint8_t *base, size_t len, const uint8_t *p, size_t n)
{
	if (p < base || (size_t)(p - base) > len || n > len - (size_t)(p - base))
		abort();
}

/* Calls every ABI reader on the first words of a blob, recursing into arrays and tuples. */
static void
abi_walk(const uint8_t *d, size_t len, int depth)
{
	size_t i, words = len / 32;

	if (words > 8)
		words = 8;
	for (i = 0; i < words + 1; i++) {	/* + 1: one index past the end */
		struct bp_u256 u;
		uint64_t v;
		uint8_t a[32];
		char s[64];
		const uint8_t *p, *el;
		size_t n, eln, cnt, ew, j;
		int b;

		(void)bp_abi_read_u256(d, len, i, &u);
		(void)bp_abi_read_u64(d, len, i, &v);
		(void)bp_abi_read_address(d, len, i, a);
		(void)bp_abi_read_bool(d, len, i, &b);
		(void)bp_abi_read_bytes32(d, len, i, a);
		if (bp_abi_read_bytes(d, len, i, &p, &n) == 0)
			inside(d, len, p, n);
		if (bp_abi_read_string(d, len, i, s, sizeof(s)) == 0 && strlen(s) >= sizeof(s))
			abort();
		for (ew = 1; ew <= 3; ew++) {
			if (bp_abi_read_array(d, len, i, ew, &el, &eln, &cnt) != 0)
				continue;
			inside(d, len, el, eln);
			/* The promise: cnt * ew words lie inside the elements. */
			if (cnt > eln / 32 / ew)
				abort();
			for (j = 0; j < cnt && j < 16; j++) {
				(void)bp_abi_read_u256(el, eln, j * ew, &u);
				if (bp_abi_read_bytes(el, eln, j * ew, &p, &n) == 0)
					inside(d, len, p, n);
			}
			/* Nested dynamic elements: only the first, to keep the fan-out small. */
			if (depth > 0 && ew == 1 && cnt > 0)
				abi_walk(el, eln, depth - 1);
		}
		if (bp_abi_read_tuple(d, len, i, &el, &eln) == 0) {
			inside(d, len, el, eln);
			if (depth > 0 && eln < len)
				abi_walk(el, eln, depth - 1);
		}
	}
	(void)bp_abi_read_u256(d, len, SIZE_MAX, &(struct bp_u256){ { 0 } });
}

/*
 * Walks an RLP item, checking bounds, and re-encodes it into e. Returns 0 when every nested
 * item decoded, -1 otherwise.
 */
static int
rlp_walk(const uint8_t *base, size_t len, const struct bp_rlp_item *it, struct bp_rlp_enc *e,
    int depth)
{
	struct bp_rlp_iter iter;
	struct bp_rlp_item sub;
	int rc;

	inside(base, len, it->p, it->len);
	if (!it->list) {
		uint64_t v;
		struct bp_u256 u;

		(void)bp_rlp_item_u64(it, &v);
		(void)bp_rlp_item_u256(it, &u);
		return bp_rlp_put_bytes(e, it->p, it->len);
	}
	if (depth == 0 || bp_rlp_iter_init(&iter, it) != 0)
		return -1;
	if (bp_rlp_list_begin(e) != 0)
		return -1;
	while ((rc = bp_rlp_iter_next(&iter, &sub)) == 1)
		if (rlp_walk(base, len, &sub, e, depth - 1) != 0)
			return -1;
	if (rc != 0)
		return -1;
	return bp_rlp_list_end(e);
}

static void
rlp_fuzz(const uint8_t *d, size_t len)
{
	struct bp_rlp_item it;
	struct bp_rlp_enc *e;
	uint8_t *out = NULL;
	size_t used, n;

	if (bp_rlp_decode_item(d, len, &it, &used) == 0 && (used == 0 || used > len))
		abort();
	if (bp_rlp_decode(d, len, &it) != 0)
		return;
	if ((e = bp_rlp_enc_new(len + 1)) == NULL)
		return;
	/* Depth below BP_RLP_MAX_DEPTH, so a failure here means a bad inner item. */
	if (rlp_walk(d, len, &it, e, BP_RLP_MAX_DEPTH - 1) == 0 &&
	    bp_rlp_enc_finish(e, &out, &n) == 0) {
		if (n != len || memcmp(out, d, len) != 0)
			abort();	/* canonical in, so identical out */
		free(out);
	}
	bp_rlp_enc_free(e);
}

/* Encodes pieces of the input as (bytes, uint256, string[]) and decodes them back. */
static void
abi_round_trip(const uint8_t *d, size_t len)
{
	struct bp_abi_enc *e;
	const uint8_t *p, *el;
	uint8_t *out = NULL, w[32];
	size_t half = len / 2, n, eln, cnt, outlen;
	struct bp_u256 u, back;

	memset(w, 0, sizeof(w));
	memcpy(w, d, len < 32 ? len : 32);
	bp_u256_from_be32(&u, w);
	if ((e = bp_abi_enc_new(1 << 16)) == NULL)
		return;
	(void)bp_abi_put_bytes(e, d, half);
	(void)bp_abi_put_u256(e, &u);
	(void)bp_abi_array_begin(e);
	(void)bp_abi_put_string(e, (const char *)d + half, len - half);
	(void)bp_abi_put_string(e, (const char *)d, half);
	(void)bp_abi_array_end(e);
	if (bp_abi_enc_finish(e, NULL, &out, &outlen) != 0) {
		bp_abi_enc_free(e);
		return;
	}
	if (bp_abi_read_bytes(out, outlen, 0, &p, &n) != 0 || n != half ||
	    (n > 0 && memcmp(p, d, n) != 0))
		abort();
	if (bp_abi_read_u256(out, outlen, 1, &back) != 0 || bp_u256_cmp(&u, &back) != 0)
		abort();
	if (bp_abi_read_array(out, outlen, 2, 1, &el, &eln, &cnt) != 0 || cnt != 2)
		abort();
	if (bp_abi_read_bytes(el, eln, 0, &p, &n) != 0 || n != len - half ||
	    (n > 0 && memcmp(p, d + half, n) != 0))
		abort();
	free(out);
	bp_abi_enc_free(e);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes, so any over-read hits ASan's redzone. */
	uint8_t *d = malloc(size > 0 ? size : 1);

	if (d == NULL)
		return 0;
	if (size > 0)
		memcpy(d, data, size);
	abi_walk(d, size, 2);
	if (size >= 4)
		abi_walk(d + 4, size - 4, 1);	/* as after a selector */
	rlp_fuzz(d, size);
	abi_round_trip(d, size);
	free(d);
	return 0;
}
