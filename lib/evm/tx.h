/*
 * EIP-1559 (type 2) transactions: the hash to sign, the signed raw bytes for
 * eth_sendRawTransaction, and the transaction hash.
 *
 *   signing hash = keccak256(0x02 || rlp([chain_id, nonce, max_priority_fee_per_gas,
 *                  max_fee_per_gas, gas_limit, to, value, data, access_list]))
 *   raw          = 0x02 || rlp([... the same nine ..., y_parity, r, s])
 *   tx hash      = keccak256(raw)
 *
 * The access list is always empty here. Integers are RLP's minimal big-endian bytes; a
 * contract creation has an empty `to`.
 *
 * EIP-7702 (type 4) set-code transactions add an authorization list after the access list:
 *
 *   raw  = 0x04 || rlp([chain_id, nonce, max_priority_fee_per_gas, max_fee_per_gas, gas_limit,
 *          to, value, data, access_list, authorization_list, y_parity, r, s])
 *   authorization_list = [[chain_id, address, nonce, y_parity, r, s], ...]
 *   authorization hash = keccak256(0x05 || rlp([chain_id, address, nonce])), signed by the EOA
 *
 * whose code becomes 0xef0100 || address once the transaction runs.
 */
#ifndef BP_EVM_TX_H
#define BP_EVM_TX_H

#include <stddef.h>
#include <stdint.h>

#include "u256.h"

/* Largest encoded transaction accepted, as geth's txpool (4 * 32 KiB). */
#define BP_TX_MAX_SIZE	(128 * 1024)

/* An unsigned type 2 transaction, filled in by the caller; data is borrowed. */
struct bp_tx1559 {
	uint64_t	 chain_id;
	uint64_t	 nonce;
	struct bp_u256	 max_priority_fee_per_gas;
	struct bp_u256	 max_fee_per_gas;
	uint64_t	 gas_limit;
	int		 has_to;	/* 0: contract creation, `to` is ignored */
	uint8_t		 to[20];
	struct bp_u256	 value;
	const uint8_t	*data;		/* may be NULL when data_len == 0 */
	size_t		 data_len;
};

/*
 * Writes the hash to sign for tx. Returns 0, or -1 when the encoding would pass
 * BP_TX_MAX_SIZE or memory runs out.
 */
int	bp_tx_signing_hash(const struct bp_tx1559 *tx, uint8_t hash[32]);

/*
 * Encodes tx with a signature (y_parity 0 or 1, r and s as 32 big-endian bytes) as raw bytes:
 * *raw is a new buffer of *rawlen bytes that the caller frees with free(). Returns 0, or -1 on
 * y_parity > 1, the size limit or no memory. The signature is not checked.
 */
int	bp_tx_encode_signed(const struct bp_tx1559 *tx, unsigned int y_parity,
	    const uint8_t r[32], const uint8_t s[32], uint8_t **raw, size_t *rawlen);

/*
 * Signs tx with the 32-byte private key priv: *raw and *rawlen as bp_tx_encode_signed (the caller
 * frees *raw), and the transaction hash in txhash when it is not NULL. Returns 0, or -1 on an
 * invalid key, the size limit or no memory.
 */
int	bp_tx_sign(const struct bp_tx1559 *tx, const uint8_t priv[32], uint8_t **raw,
	    size_t *rawlen, uint8_t txhash[32]);

/*
 * One EIP-7702 authorization: the EOA that signed it (its authority) delegates to address.
 * chain_id 0 is valid on every chain; a node skips a tuple whose nonce is not the authority's.
 */
struct bp_tx_auth {
	struct bp_u256	 chain_id;
	uint8_t		 address[20];
	uint64_t	 nonce;
	uint8_t		 y_parity;	/* 0 or 1 to recover; RLP carries a byte */
	uint8_t		 r[32];
	uint8_t		 s[32];
};

/* A type 4 transaction: tx's fields (has_to must be set) and at least one authorization. */
struct bp_tx7702 {
	struct bp_tx1559	 tx;
	const struct bp_tx_auth	*auth;		/* borrowed */
	size_t			 nauth;
};

/*
 * Writes the hash the authority signs for a: keccak256(0x05 || rlp([chain_id, address,
 * nonce])). Returns 0, or -1 out of memory.
 */
int	bp_tx_auth_hash(const struct bp_tx_auth *a, uint8_t hash[32]);

/*
 * Signs a with the EOA's private key priv: fills y_parity, r and s. Returns 0, or -1 on an
 * invalid key or no memory.
 */
int	bp_tx_auth_sign(struct bp_tx_auth *a, const uint8_t priv[32]);

/*
 * Recovers the authority of a (the EOA whose code it sets) into addr. Returns 0, or -1 when the
 * signature does not recover (y_parity above 1, high s, r or s out of range).
 */
int	bp_tx_auth_authority(const struct bp_tx_auth *a, uint8_t addr[20]);

/* The code of an EIP-7702 delegated EOA: 0xef0100 ++ the delegate's 20 bytes. */
#define BP_TX_DELEGATION_LEN	23

/* 1 when code (len bytes) is an EIP-7702 delegation, its delegate into delegate; else 0. */
int	bp_tx_delegation(const uint8_t *code, size_t len, uint8_t delegate[20]);

/* As bp_tx_signing_hash for a type 4 transaction; -1 also without `to` or authorizations. */
int	bp_tx7702_signing_hash(const struct bp_tx7702 *tx, uint8_t hash[32]);

/* As bp_tx_encode_signed for a type 4 transaction. */
int	bp_tx7702_encode_signed(const struct bp_tx7702 *tx, unsigned int y_parity,
	    const uint8_t r[32], const uint8_t s[32], uint8_t **raw, size_t *rawlen);

/* As bp_tx_sign for a type 4 transaction (priv is the sender's, not the authorities'). */
int	bp_tx7702_sign(const struct bp_tx7702 *tx, const uint8_t priv[32], uint8_t **raw,
	    size_t *rawlen, uint8_t txhash[32]);

#endif
