/*
 * Keccak-256 as Ethereum uses it: the original Keccak submission padding (0x01 ... 0x80), not
 * the FIPS 202 SHA3-256 padding (0x06 ... 0x80) that OpenSSL implements. Rate 136 bytes.
 */
#ifndef BP_EVM_KECCAK_H
#define BP_EVM_KECCAK_H

#include <stddef.h>
#include <stdint.h>

#define BP_KECCAK256_LEN	32

/*
 * Streaming state, for hashing pieces without joining them (the EIP-191 prefix, ABI parts).
 * Kept on the caller's stack; the fields are private to keccak.c.
 */
struct bp_keccak {
	uint64_t	st[25];
	size_t		pos;	/* bytes absorbed into the current block, 0..135 */
};

/* Starts a Keccak-256 computation in *k. */
void	bp_keccak_init(struct bp_keccak *k);

/* Absorbs n bytes (p may be NULL when n == 0). */
void	bp_keccak_update(struct bp_keccak *k, const void *p, size_t n);

/* Pads, writes the 32-byte digest to out and wipes *k; init it again before reuse. */
void	bp_keccak_final(struct bp_keccak *k, uint8_t out[32]);

/* Writes Keccak-256 of the n bytes at p (NULL allowed when n == 0) to out. Cannot fail. */
void	bp_keccak256(const void *p, size_t n, uint8_t out[32]);

#endif
