/*
 * Solidity ABI encoding and bounds-checked decoding (abi.h, docs/evm.md).
 *
 * The encoder keeps a stack of frames, one per open tuple or array (frame 0 is the argument
 * list). A frame has its own head and tail. When a dynamic value is put, its head word gets the
 * value's position in the frame's tail and the position of that word is remembered; when the
 * frame closes, its head size is known and is added to every remembered word, which turns it
 * into the offset from the start of the frame's encoding, as the spec wants. The frame's
 * encoding then goes into its parent: inline in the head when static, into the tail behind an
 * offset word when dynamic.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "keccak.h"
#include "u256.h"

#define WORD	32

/* A growing byte buffer; its length never exceeds the encoder's cap. */
struct buf {
	uint8_t		*p;
	size_t		 len;
	size_t		 alloc;
};

enum frame_kind {
	FRAME_ARGS,	/* 0: the top-level argument list */
	FRAME_TUPLE,	/* 1 */
	FRAME_ARRAY,	/* 2 */
	FRAME__MAX
};

struct frame {
	enum frame_kind	 kind;
	struct buf	 head;
	struct buf	 tail;
	size_t		*patch;		/* head positions of offset words to fix at close */
	size_t		 npatch;
	size_t		 patchalloc;
	size_t		 count;		/* values put directly into this frame */
	int		 dynamic;	/* holds a dynamic value (or is an array) */
};

struct bp_abi_enc {
	size_t		cap;
	int		failed;
	int		finished;
	size_t		depth;		/* index of the open frame */
	struct frame	frames[BP_ABI_MAX_DEPTH + 1];
};

void
bp_abi_selector(const char *sig, uint8_t out[BP_ABI_SELECTOR_LEN])
{
	uint8_t h[32];

	bp_keccak256(sig, strlen(sig), h);
	memcpy(out, h, BP_ABI_SELECTOR_LEN);
}

void
bp_abi_event_topic(const char *sig, uint8_t out[32])
{
	bp_keccak256(sig, strlen(sig), out);
}

/* Makes room for n more bytes without letting the length pass cap. */
static int
buf_reserve(struct buf *b, size_t n, size_t cap)
{
	size_t want, na;
	uint8_t *np;

	if (b->len > cap || n > cap - b->len)
		return -1;
	want = b->len + n;
	if (want <= b->alloc)
		return 0;
	na = b->alloc < 64 ? 64 : b->alloc;
	while (na < want)
		na = na > cap / 2 ? cap : na * 2;
	if (na > cap)
		na = cap;
	if ((np = realloc(b->p, na)) == NULL)
		return -1;
	b->p = np;
	b->alloc = na;
	return 0;
}

static int
buf_append(struct buf *b, const void *p, size_t n, size_t cap)
{
	if (n == 0)
		return 0;
	if (buf_reserve(b, n, cap) != 0)
		return -1;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static int
buf_zeros(struct buf *b, size_t n, size_t cap)
{
	if (n == 0)
		return 0;
	if (buf_reserve(b, n, cap) != 0)
		return -1;
	memset(b->p + b->len, 0, n);
	b->len += n;
	return 0;
}

/* Writes v as a 32-byte big-endian word at w. */
static void
word_from_size(uint8_t w[WORD], size_t v)
{
	int i;

	memset(w, 0, WORD);
	for (i = 0; i < 8; i++)
		w[WORD - 1 - i] = (uint8_t)((uint64_t)v >> (8 * i));
}

static void
frame_clear(struct frame *f)
{
	free(f->head.p);
	free(f->tail.p);
	free(f->patch);
	memset(f, 0, sizeof(*f));
}

struct bp_abi_enc *
bp_abi_enc_new(size_t cap)
{
	struct bp_abi_enc *e;

	/* The cap bound keeps every sum of two buffer lengths from wrapping. */
	if (cap == 0 || cap > SIZE_MAX / 4)
		return NULL;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	e->cap = cap;
	e->frames[0].kind = FRAME_ARGS;
	return e;
}

void
bp_abi_enc_free(struct bp_abi_enc *e)
{
	size_t i;

	if (e == NULL)
		return;
	for (i = 0; i <= BP_ABI_MAX_DEPTH; i++)
		frame_clear(&e->frames[i]);
	free(e);
}

/* Marks the encoder failed; returns -1 for the caller to pass on. */
static int
fail(struct bp_abi_enc *e)
{
	e->failed = 1;
	return -1;
}

/* The open frame, or NULL when the encoder can take no more values. */
static struct frame *
cur(struct bp_abi_enc *e)
{
	if (e == NULL || e->failed || e->finished)
		return NULL;
	return &e->frames[e->depth];
}

/* Appends a static 32-byte word to the head of the open frame. */
static int
put_word(struct bp_abi_enc *e, const uint8_t w[WORD])
{
	struct frame *f;

	if ((f = cur(e)) == NULL)
		return -1;
	if (buf_append(&f->head, w, WORD, e->cap) != 0)
		return fail(e);
	f->count++;
	return 0;
}

/*
 * Appends to the head of f an offset word holding the current tail length and remembers its
 * position for bp_*_end/finish to add the head size.
 */
static int
put_offset(struct bp_abi_enc *e, struct frame *f)
{
	uint8_t w[WORD];

	if (f->npatch == f->patchalloc) {
		size_t na = f->patchalloc == 0 ? 8 : f->patchalloc * 2;
		size_t *np;

		/* The patch list is bounded by the head, which is bounded by cap. */
		if (na > SIZE_MAX / sizeof(*np) || (np = realloc(f->patch,
		    na * sizeof(*np))) == NULL)
			return -1;
		f->patch = np;
		f->patchalloc = na;
	}
	word_from_size(w, f->tail.len);
	if (buf_append(&f->head, w, WORD, e->cap) != 0)
		return -1;
	f->patch[f->npatch++] = f->head.len - WORD;
	f->dynamic = 1;
	return 0;
}

/* Adds the head size of f to each remembered offset word. */
static void
patch_offsets(struct frame *f)
{
	size_t i;

	for (i = 0; i < f->npatch; i++) {
		uint8_t *w = f->head.p + f->patch[i];
		uint64_t v = 0;
		int j;

		/* Both terms are at most cap <= SIZE_MAX / 4 (bp_abi_enc_new), so no wrap. */
		for (j = 24; j < WORD; j++)
			v = v << 8 | w[j];
		word_from_size(w, (size_t)v + f->head.len);
	}
	f->npatch = 0;
}

int
bp_abi_put_u256(struct bp_abi_enc *e, const struct bp_u256 *v)
{
	uint8_t w[WORD];

	bp_u256_to_be32(v, w);
	return put_word(e, w);
}

int
bp_abi_put_u64(struct bp_abi_enc *e, uint64_t v)
{
	struct bp_u256 u;

	bp_u256_from_u64(&u, v);
	return bp_abi_put_u256(e, &u);
}

int
bp_abi_put_address(struct bp_abi_enc *e, const uint8_t addr[20])
{
	uint8_t w[WORD];

	memset(w, 0, 12);
	memcpy(w + 12, addr, 20);
	return put_word(e, w);
}

int
bp_abi_put_bool(struct bp_abi_enc *e, int b)
{
	return bp_abi_put_u64(e, b != 0);
}

int
bp_abi_put_bytes32(struct bp_abi_enc *e, const uint8_t v[32])
{
	return put_word(e, v);
}

int
bp_abi_put_bytes(struct bp_abi_enc *e, const void *p, size_t n)
{
	struct frame *f;
	uint8_t w[WORD];
	size_t pad;

	if ((f = cur(e)) == NULL)
		return -1;
	if (n > e->cap || (n > 0 && p == NULL))
		return fail(e);
	pad = (WORD - n % WORD) % WORD;
	if (put_offset(e, f) != 0)
		return fail(e);
	word_from_size(w, n);
	if (buf_append(&f->tail, w, WORD, e->cap) != 0 ||
	    buf_append(&f->tail, p, n, e->cap) != 0 ||
	    buf_zeros(&f->tail, pad, e->cap) != 0)
		return fail(e);
	f->count++;
	return 0;
}

int
bp_abi_put_string(struct bp_abi_enc *e, const char *s, size_t n)
{
	return bp_abi_put_bytes(e, s, n);
}

static int
open_frame(struct bp_abi_enc *e, enum frame_kind kind)
{
	struct frame *f;

	if (cur(e) == NULL)
		return -1;
	if (e->depth == BP_ABI_MAX_DEPTH)
		return fail(e);
	f = &e->frames[++e->depth];
	frame_clear(f);
	f->kind = kind;
	f->dynamic = kind == FRAME_ARRAY;
	return 0;
}

/* Closes the open frame of the given kind into its parent. */
static int
close_frame(struct bp_abi_enc *e, enum frame_kind kind)
{
	struct frame *c, *p;
	uint8_t w[WORD];

	if ((c = cur(e)) == NULL)
		return -1;
	if (e->depth == 0 || c->kind != kind)
		return fail(e);
	p = &e->frames[e->depth - 1];
	patch_offsets(c);
	if (c->dynamic) {
		if (put_offset(e, p) != 0)
			return fail(e);
		if (kind == FRAME_ARRAY) {
			word_from_size(w, c->count);
			if (buf_append(&p->tail, w, WORD, e->cap) != 0)
				return fail(e);
		}
		if (buf_append(&p->tail, c->head.p, c->head.len, e->cap) != 0 ||
		    buf_append(&p->tail, c->tail.p, c->tail.len, e->cap) != 0)
			return fail(e);
	} else if (buf_append(&p->head, c->head.p, c->head.len, e->cap) != 0)
		return fail(e);
	p->count++;
	frame_clear(c);
	e->depth--;
	return 0;
}

int
bp_abi_tuple_begin(struct bp_abi_enc *e)
{
	return open_frame(e, FRAME_TUPLE);
}

int
bp_abi_tuple_end(struct bp_abi_enc *e)
{
	return close_frame(e, FRAME_TUPLE);
}

int
bp_abi_array_begin(struct bp_abi_enc *e)
{
	return open_frame(e, FRAME_ARRAY);
}

int
bp_abi_array_end(struct bp_abi_enc *e)
{
	return close_frame(e, FRAME_ARRAY);
}

int
bp_abi_enc_finish(struct bp_abi_enc *e, const uint8_t *selector, uint8_t **out,
    size_t *outlen)
{
	struct frame *f;
	size_t sl = selector != NULL ? BP_ABI_SELECTOR_LEN : 0, total;
	uint8_t *res;

	if (out == NULL || outlen == NULL || (f = cur(e)) == NULL)
		return -1;
	if (e->depth != 0)
		return fail(e);
	patch_offsets(f);
	/* Each of head and tail is at most cap; check the sum against cap without wrapping. */
	if (f->head.len > e->cap || f->tail.len > e->cap - f->head.len ||
	    sl > e->cap - f->head.len - f->tail.len)
		return fail(e);
	total = sl + f->head.len + f->tail.len;
	if ((res = malloc(total > 0 ? total : 1)) == NULL)
		return fail(e);
	if (sl > 0)
		memcpy(res, selector, sl);
	if (f->head.len > 0)
		memcpy(res + sl, f->head.p, f->head.len);
	if (f->tail.len > 0)
		memcpy(res + sl + f->head.len, f->tail.p, f->tail.len);
	e->finished = 1;
	*out = res;
	*outlen = total;
	return 0;
}

/*
 * Decoding. Every index and offset comes from untrusted bytes, so each check is written as a
 * comparison of values already known to be in range, never as a sum that could wrap.
 */

/* Points *w at word i of data/len; -1 when the word does not lie wholly inside. */
static int
word_at(const uint8_t *data, size_t len, size_t i, const uint8_t **w)
{
	if (data == NULL || i >= len / WORD)
		return -1;
	*w = data + i * WORD;
	return 0;
}

/* Reads the 32 bytes at w as a size_t; -1 when the value does not fit. */
static int
word_to_size(const uint8_t *w, size_t *out)
{
	struct bp_u256 u;
	uint64_t v;

	bp_u256_from_be32(&u, w);
	if (bp_u256_to_u64(&u, &v) != 0 || v > SIZE_MAX)
		return -1;
	*out = (size_t)v;
	return 0;
}

/*
 * Follows the offset in word i to a length-prefixed area: *off is the offset, *n the length
 * word found there, and *avail the bytes after that length word (so the area's content may be
 * compared against it). -1 when the offset word or the length word is outside the blob.
 */
static int
follow(const uint8_t *data, size_t len, size_t i, size_t *off, size_t *n, size_t *avail)
{
	const uint8_t *w;
	size_t o;

	if (word_at(data, len, i, &w) != 0 || word_to_size(w, &o) != 0)
		return -1;
	if (o > len || len - o < WORD)
		return -1;
	if (word_to_size(data + o, n) != 0)
		return -1;
	*off = o;
	*avail = len - o - WORD;
	return 0;
}

int
bp_abi_read_u256(const uint8_t *data, size_t len, size_t i, struct bp_u256 *out)
{
	const uint8_t *w;

	if (word_at(data, len, i, &w) != 0)
		return -1;
	bp_u256_from_be32(out, w);
	return 0;
}

int
bp_abi_read_u64(const uint8_t *data, size_t len, size_t i, uint64_t *out)
{
	struct bp_u256 u;

	if (bp_abi_read_u256(data, len, i, &u) != 0)
		return -1;
	return bp_u256_to_u64(&u, out);
}

int
bp_abi_read_address(const uint8_t *data, size_t len, size_t i, uint8_t out[20])
{
	static const uint8_t zero[12];
	const uint8_t *w;

	if (word_at(data, len, i, &w) != 0 || memcmp(w, zero, 12) != 0)
		return -1;
	memcpy(out, w + 12, 20);
	return 0;
}

int
bp_abi_read_bool(const uint8_t *data, size_t len, size_t i, int *out)
{
	uint64_t v;

	if (bp_abi_read_u64(data, len, i, &v) != 0 || v > 1)
		return -1;
	*out = (int)v;
	return 0;
}

int
bp_abi_read_bytes32(const uint8_t *data, size_t len, size_t i, uint8_t out[32])
{
	const uint8_t *w;

	if (word_at(data, len, i, &w) != 0)
		return -1;
	memcpy(out, w, WORD);
	return 0;
}

int
bp_abi_read_bytes(const uint8_t *data, size_t len, size_t i, const uint8_t **p, size_t *n)
{
	size_t off, blen, avail;

	if (follow(data, len, i, &off, &blen, &avail) != 0 || blen > avail)
		return -1;
	*p = data + off + WORD;
	*n = blen;
	return 0;
}

int
bp_abi_read_string(const uint8_t *data, size_t len, size_t i, char *out, size_t cap)
{
	const uint8_t *p;
	size_t n;

	if (out == NULL || cap == 0)
		return -1;
	out[0] = '\0';
	if (bp_abi_read_bytes(data, len, i, &p, &n) != 0)
		return -1;
	if (n >= cap || (n > 0 && memchr(p, '\0', n) != NULL))
		return -1;
	if (n > 0)
		memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

int
bp_abi_read_array(const uint8_t *data, size_t len, size_t i, size_t elem_words,
    const uint8_t **elems, size_t *elems_len, size_t *count)
{
	size_t off, cnt, avail;

	if (elem_words == 0)
		return -1;
	if (follow(data, len, i, &off, &cnt, &avail) != 0)
		return -1;
	/* cnt * elem_words words must fit in avail bytes: divide, never multiply. */
	if (cnt > avail / WORD / elem_words)
		return -1;
	*elems = data + off + WORD;
	*elems_len = avail;
	*count = cnt;
	return 0;
}

int
bp_abi_read_tuple(const uint8_t *data, size_t len, size_t i, const uint8_t **sub,
    size_t *sublen)
{
	const uint8_t *w;
	size_t o;

	if (word_at(data, len, i, &w) != 0 || word_to_size(w, &o) != 0 || o > len)
		return -1;
	*sub = data + o;
	*sublen = len - o;
	return 0;
}
