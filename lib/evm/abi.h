/*
 * Solidity contract ABI: encoding call data, decoding returned data and event logs, function
 * selectors and event topics (https://docs.soliditylang.org/en/latest/abi-spec.html).
 *
 * Encoding is a builder: put the arguments in order, open a tuple or an array, put its
 * members, close it, then finish. Errors are sticky: after the first failure every call returns
 * -1 and bp_abi_enc_finish fails, so a caller may put all arguments and check once.
 *
 * Decoding works on a blob (pointer + length) that the caller owns; nothing is allocated and
 * every offset and length read from the blob is checked against the blob's length before use.
 * A blob is a tuple: word i is bytes 32i .. 32i+31, and the offsets of dynamic values are
 * counted from the blob's first byte. bp_abi_read_tuple and bp_abi_read_array hand out
 * sub-blobs for nested values, which the same functions read.
 */
#ifndef BP_EVM_ABI_H
#define BP_EVM_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "u256.h"

#define BP_ABI_SELECTOR_LEN	4
/* Nesting limit of tuples and arrays in the encoder. */
#define BP_ABI_MAX_DEPTH	16

struct bp_abi_enc;

/*
 * Writes the function selector of sig, a canonical signature such as "transfer(address,uint256)"
 * (no spaces, no names, uint256 not uint), to out: the first 4 bytes of its Keccak-256.
 */
void	bp_abi_selector(const char *sig, uint8_t out[BP_ABI_SELECTOR_LEN]);

/*
 * Writes the topic 0 of the event sig, e.g. "Transfer(address,address,uint256)", to out: the
 * whole Keccak-256 of the canonical signature.
 */
void	bp_abi_event_topic(const char *sig, uint8_t out[32]);

/*
 * Returns a new encoder whose output (selector included) may not exceed cap bytes, or NULL
 * when out of memory, cap is 0 or cap > SIZE_MAX / 4. The caller owns it and frees it with
 * bp_abi_enc_free.
 */
struct bp_abi_enc	*bp_abi_enc_new(size_t cap);

/* Frees an encoder; NULL is a no-op. */
void	bp_abi_enc_free(struct bp_abi_enc *e);

/* Appends a uint256 (any uintN: values are left-padded alike). Returns 0 or -1 (cap, sticky). */
int	bp_abi_put_u256(struct bp_abi_enc *e, const struct bp_u256 *v);

/* Appends a uint256 given as a uint64. Returns 0 or -1. */
int	bp_abi_put_u64(struct bp_abi_enc *e, uint64_t v);

/* Appends an address. Returns 0 or -1. */
int	bp_abi_put_address(struct bp_abi_enc *e, const uint8_t addr[20]);

/* Appends a bool (any non-zero b is true). Returns 0 or -1. */
int	bp_abi_put_bool(struct bp_abi_enc *e, int b);

/* Appends a bytes32 (also any bytesN, N <= 32, right-padded with zeros by the caller). */
int	bp_abi_put_bytes32(struct bp_abi_enc *e, const uint8_t v[32]);

/*
 * Appends dynamic bytes: an offset in the head, the length and the data padded to a multiple
 * of 32 in the tail. p may be NULL when n == 0. Returns 0 or -1.
 */
int	bp_abi_put_bytes(struct bp_abi_enc *e, const void *p, size_t n);

/* Appends a string (encoded as dynamic bytes; the bytes are not checked for UTF-8). */
int	bp_abi_put_string(struct bp_abi_enc *e, const char *s, size_t n);

/*
 * Opens a tuple (a struct argument, or a fixed-size array T[k], which encodes the same way);
 * the puts that follow are its members until bp_abi_tuple_end. A tuple with a dynamic member
 * is itself dynamic and goes into the tail. Returns 0, or -1 past BP_ABI_MAX_DEPTH.
 */
int	bp_abi_tuple_begin(struct bp_abi_enc *e);

/* Closes the tuple opened last. Returns 0, or -1 when none is open or a limit was hit. */
int	bp_abi_tuple_end(struct bp_abi_enc *e);

/*
 * Opens a dynamic array T[]; the puts that follow are its elements, which must all be of the
 * same type T (not checked), until bp_abi_array_end. Returns 0, or -1 past the depth limit.
 */
int	bp_abi_array_begin(struct bp_abi_enc *e);

/* Closes the array opened last. Returns 0, or -1 when none is open or a limit was hit. */
int	bp_abi_array_end(struct bp_abi_enc *e);

/*
 * Finishes the encoding: selector (4 bytes, or NULL for none, as for constructor arguments and
 * abi.encode) + the head and tail of the arguments. On success *out is a new buffer of *outlen
 * bytes that the caller frees with free(); the encoder can then only be freed. Returns -1 when
 * an earlier call failed, a tuple or array is still open, the cap is exceeded or memory runs out.
 */
int	bp_abi_enc_finish(struct bp_abi_enc *e, const uint8_t *selector, uint8_t **out,
	    size_t *outlen);

/*
 * Readers. data/len is the blob (without the selector); i is a word index. Each returns 0, or
 * -1 when word i or what it points to lies outside the blob or the value is not a valid
 * encoding of the type; outputs are then untouched.
 */

/* Reads word i as a uint256. */
int	bp_abi_read_u256(const uint8_t *data, size_t len, size_t i, struct bp_u256 *out);

/* Reads word i as a uint that must fit a uint64 (-1 otherwise). */
int	bp_abi_read_u64(const uint8_t *data, size_t len, size_t i, uint64_t *out);

/* Reads word i as an address; its 12 high bytes must be zero, as Solidity's decoder demands. */
int	bp_abi_read_address(const uint8_t *data, size_t len, size_t i, uint8_t out[20]);

/* Reads word i as a bool; the word must be exactly 0 or 1. */
int	bp_abi_read_bool(const uint8_t *data, size_t len, size_t i, int *out);

/* Reads word i as a bytes32. */
int	bp_abi_read_bytes32(const uint8_t *data, size_t len, size_t i, uint8_t out[32]);

/*
 * Reads dynamic bytes whose offset is in word i: *p points into data (borrowed, valid while
 * data is) and *n is the length. The offset and the length must leave the bytes inside the blob.
 */
int	bp_abi_read_bytes(const uint8_t *data, size_t len, size_t i, const uint8_t **p,
	    size_t *n);

/*
 * Reads a string whose offset is in word i into out (room for cap bytes) with a NUL. Returns
 * -1 also when the string holds a NUL byte or does not fit with its NUL (out is then "" if
 * cap > 0). The bytes are not checked for UTF-8.
 */
int	bp_abi_read_string(const uint8_t *data, size_t len, size_t i, char *out, size_t cap);

/*
 * Reads a dynamic array T[] whose offset is in word i, where each element's head takes
 * elem_words words (1 for a static word type or any dynamic T, k for a static tuple of k
 * words). On success *count is the number of elements and *elems, *elems_len is the sub-blob
 * of the elements: element j's head starts at word j * elem_words of it, and offsets inside
 * it count from *elems. count * elem_words words are guaranteed to lie inside the sub-blob;
 * reading them is the caller's job, with indexes below count.
 */
int	bp_abi_read_array(const uint8_t *data, size_t len, size_t i, size_t elem_words,
	    const uint8_t **elems, size_t *elems_len, size_t *count);

/*
 * Reads a dynamic tuple (one with a dynamic member) whose offset is in word i: *sub, *sublen is
 * the sub-blob that starts at that offset and runs to the end of data. A static tuple has no
 * offset: its members are simply the next words of the enclosing blob.
 */
int	bp_abi_read_tuple(const uint8_t *data, size_t len, size_t i, const uint8_t **sub,
	    size_t *sublen);

#endif
