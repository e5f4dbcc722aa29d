/*
 * Recursive Length Prefix encoding (Ethereum Yellow Paper, appendix B; ethereum.org "RLP").
 *
 * Encoding is a builder with a byte cap and sticky errors, like the ABI encoder. Decoding
 * borrows the caller's bytes: an item is a view (pointer + length of its payload) into them,
 * and a list is walked with an iterator, so decoding allocates nothing and recursion depth is
 * the caller's choice. The decoder accepts only canonical encodings (the shortest form, as
 * geth's rlp package demands), so one value has one encoding and hashes of it are stable.
 */
#ifndef BP_EVM_RLP_H
#define BP_EVM_RLP_H

#include <stddef.h>
#include <stdint.h>

#include "u256.h"

/* Nesting limit of lists in the encoder. */
#define BP_RLP_MAX_DEPTH	32

struct bp_rlp_enc;

/* A decoded item: a byte string or a list, as a view of its payload inside the input. */
struct bp_rlp_item {
	int		 list;	/* 1 for a list, 0 for a byte string */
	const uint8_t	*p;	/* the payload (the string's bytes, or the list's items) */
	size_t		 len;	/* payload length */
};

/* Walks the items of a list; fields private to rlp.c. */
struct bp_rlp_iter {
	const uint8_t	*p;
	size_t		 left;
};

/*
 * Returns a new encoder whose output may not exceed cap bytes, or NULL when out of memory,
 * cap is 0 or cap > SIZE_MAX / 2. The caller frees it with bp_rlp_enc_free.
 */
struct bp_rlp_enc	*bp_rlp_enc_new(size_t cap);

/* Frees an encoder; NULL is a no-op. */
void	bp_rlp_enc_free(struct bp_rlp_enc *e);

/*
 * Appends a byte string (p may be NULL when n == 0). Returns 0, or -1 when the cap is hit or
 * an earlier call failed (sticky).
 */
int	bp_rlp_put_bytes(struct bp_rlp_enc *e, const void *p, size_t n);

/* Appends an integer as its minimal big-endian bytes (0 is the empty string). 0 or -1. */
int	bp_rlp_put_u64(struct bp_rlp_enc *e, uint64_t v);

/* Appends a 256-bit integer as its minimal big-endian bytes. Returns 0 or -1. */
int	bp_rlp_put_u256(struct bp_rlp_enc *e, const struct bp_u256 *v);

/* Opens a list; the puts that follow are its items. -1 past BP_RLP_MAX_DEPTH. */
int	bp_rlp_list_begin(struct bp_rlp_enc *e);

/* Closes the list opened last. Returns 0, or -1 when none is open or the cap is hit. */
int	bp_rlp_list_end(struct bp_rlp_enc *e);

/*
 * Finishes: on success *out is the encoding (*outlen bytes, possibly 0 when nothing was put),
 * a buffer the caller now owns and frees with free(); the encoder can then only be freed.
 * Returns -1 when an earlier call failed or a list is still open.
 */
int	bp_rlp_enc_finish(struct bp_rlp_enc *e, uint8_t **out, size_t *outlen);

/*
 * Decodes the item at the front of data/len into *item and stores its whole encoded size
 * (prefix included) in *used. Returns 0, or -1 when the input is empty, truncated or not
 * canonical (a single byte below 0x80 wrapped in a prefix, a long form for a length below 56,
 * a length with leading zero bytes or too large for size_t).
 */
int	bp_rlp_decode_item(const uint8_t *data, size_t len, struct bp_rlp_item *item,
	    size_t *used);

/* Decodes data/len as exactly one item with no bytes after it. Returns 0 or -1. */
int	bp_rlp_decode(const uint8_t *data, size_t len, struct bp_rlp_item *item);

/* Starts walking the list item. Returns 0, or -1 when item is a byte string. */
int	bp_rlp_iter_init(struct bp_rlp_iter *it, const struct bp_rlp_item *list);

/*
 * Stores the next item of the list in *item. Returns 1 when an item was stored, 0 at the end
 * of the list, -1 when the rest of the payload is not a valid item.
 */
int	bp_rlp_iter_next(struct bp_rlp_iter *it, struct bp_rlp_item *item);

/*
 * Reads a byte-string item as a canonical integer: at most 8 bytes, no leading zero byte,
 * the empty string is 0. Returns 0, or -1 (a list, too long, a leading zero).
 */
int	bp_rlp_item_u64(const struct bp_rlp_item *item, uint64_t *out);

/* As bp_rlp_item_u64 for a 256-bit integer (at most 32 bytes). */
int	bp_rlp_item_u256(const struct bp_rlp_item *item, struct bp_u256 *out);

#endif
