/*
 * secp256k1 keys and recoverable ECDSA signatures for Ethereum, on libsecp256k1.
 *
 * Signatures are 65 bytes r || s || v. bp_secp_sign gives v = recovery id (0 or 1), the form
 * typed transactions carry as y_parity; the EIP-191 personal-message functions use v = 27/28,
 * the form wallets return from personal_sign. Signing is RFC 6979 deterministic and low-S.
 * Recovery accepts v in {0, 1, 27, 28} and rejects high-S signatures (EIP-2), so a signature
 * has one accepted form and cannot be replayed in its malleated twin.
 *
 * One static context is created on first use and randomized with RAND_bytes; it is not thread
 * safe (Blockport programs are single threaded). Private keys are the caller's; this module
 * keeps no copy of them and wipes its temporaries.
 */
#ifndef BP_EVM_SECP_H
#define BP_EVM_SECP_H

#include <stddef.h>
#include <stdint.h>

#define BP_SECP_SIG_LEN		65
#define BP_SECP_PUB_LEN		64	/* uncompressed X || Y, without the 0x04 prefix */

/*
 * Computes the public key of the 32-byte private key priv. Returns 0, or -1 when priv is 0 or
 * not below the curve order, or the context cannot be created (logged).
 */
int	bp_secp_pubkey(const uint8_t priv[32], uint8_t pub[BP_SECP_PUB_LEN]);

/* Writes the address of a public key: the last 20 bytes of Keccak-256(X || Y). */
void	bp_secp_pub_to_addr(const uint8_t pub[BP_SECP_PUB_LEN], uint8_t addr[20]);

/* Computes the address of the private key priv. Returns 0, or -1 as bp_secp_pubkey. */
int	bp_secp_priv_to_addr(const uint8_t priv[32], uint8_t addr[20]);

/*
 * Signs the 32-byte hash with priv: sig = r || s || v, v the recovery id 0 or 1. Returns 0,
 * or -1 on an invalid key or no context.
 */
int	bp_secp_sign(const uint8_t priv[32], const uint8_t hash[32],
	    uint8_t sig[BP_SECP_SIG_LEN]);

/*
 * Recovers the signer's address from hash and sig (r || s || v, v in 0, 1, 27, 28). Returns
 * 0, or -1 on another v, r or s of 0 or not below the order, a high s, or no point.
 */
int	bp_secp_recover(const uint8_t hash[32], const uint8_t sig[BP_SECP_SIG_LEN],
	    uint8_t addr[20]);

/*
 * Writes the EIP-191 (version 0x45) hash of a personal message: Keccak-256 of
 * "\x19Ethereum Signed Message:\n" + the decimal length of the message + the message. msg may
 * be NULL when n == 0.
 */
void	bp_secp_personal_hash(const void *msg, size_t n, uint8_t hash[32]);

/*
 * Signs msg as personal_sign does: the EIP-191 hash, with v = 27 or 28. Returns 0 or -1 as
 * bp_secp_sign.
 */
int	bp_secp_personal_sign(const uint8_t priv[32], const void *msg, size_t n,
	    uint8_t sig[BP_SECP_SIG_LEN]);

/* Recovers the signer of a personal message. Returns 0 or -1 as bp_secp_recover. */
int	bp_secp_personal_recover(const void *msg, size_t n, const uint8_t sig[BP_SECP_SIG_LEN],
	    uint8_t addr[20]);

/* Destroys the static context (for leak checkers at exit); the next call makes a new one. */
void	bp_secp_cleanup(void);

#endif
