/*
 * The sponsorship signature of a VerifyingPaymaster v0.6 (the 0.6.0 contract the devchain
 * deploys; docs/gas.md): the hash its getHash answers, the paymasterAndData that carries the
 * validity window and the signer's EIP-191 signature of that hash, the one chain read it needs
 * (senderNonce), and the signer's key file. The bundler's ERC-7677 methods reuse it.
 *
 * Quirk of 0.6.0 (notes in docs/gas.md): getHash hashes the op's raw ABI encoding up to the
 * length word of paymasterAndData, so the hash depends on that field's length (it moves the
 * signature's offset); it is computed here with BP_PAYMASTER_PND_LEN zero bytes, the length of
 * the paymasterAndData the signature goes into. It also covers senderNonce[sender], which rises
 * on every validation: a signature is good for one landing of one op with these gas fields.
 */
#ifndef BP_PAYMASTER_H
#define BP_PAYMASTER_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "evm/u256.h"
#include "evm/userop.h"

struct bp_upstream;

/* paymaster (20) ++ abi.encode(uint48 validUntil, uint48 validAfter) (64) ++ signature (65). */
#define BP_PAYMASTER_DATA_LEN	(64 + 65)
#define BP_PAYMASTER_PND_LEN	(20 + BP_PAYMASTER_DATA_LEN)
/* What VerifyingPaymaster's validation takes beyond the account's (v0.6 shares the limit). */
#define BP_PAYMASTER_VERIFICATION_GAS	60000
#define BP_PAYMASTER_POSTOP_GAS		0	/* it returns no context: no postOp */
/*
 * v0.7 and v0.8: paymasterAndData = paymaster (20) ++ paymasterVerificationGasLimit (16) ++
 * paymasterPostOpGasLimit (16) ++ paymasterData, where paymasterData is abi.encode(uint48
 * validUntil, uint48 validAfter) (64) ++ signature (65), as v0.6's data.
 */
#define BP_PAYMASTER_V07_PND_LEN	(20 + 32 + BP_PAYMASTER_DATA_LEN)
#define BP_PAYMASTER_PND_MAX		BP_PAYMASTER_V07_PND_LEN
/*
 * The paymaster validation gas answered for a v0.7/v0.8 op that does not carry its own: what
 * VerifyingPaymaster v0.7's validatePaymasterUserOp takes (hashing, ecrecover) with room; the
 * EntryPoint charges the gas used, not this limit.
 */
#define BP_PAYMASTER_V07_VERIFICATION_GAS	100000

/*
 * Writes getHash(op, valid_until, valid_after) of the VerifyingPaymaster at paymaster on
 * chain_id, whose senderNonce(op.sender) is sender_nonce. Returns 0, or -1 when out of memory.
 */
int	bp_paymaster_hash(const struct bp_userop *op, uint64_t chain_id, const uint8_t paymaster[20],
	    const struct bp_u256 *sender_nonce, uint64_t valid_until, uint64_t valid_after,
	    uint8_t out[32]);

/*
 * Signs hash with key (EIP-191 personal message, v 27/28) and writes paymasterAndData to pnd:
 * paymaster ++ abi.encode(valid_until, valid_after) ++ signature. Returns 0 or -1 (bad key).
 */
int	bp_paymaster_sign(const uint8_t key[32], const uint8_t paymaster[20], const uint8_t hash[32],
	    uint64_t valid_until, uint64_t valid_after, uint8_t pnd[BP_PAYMASTER_PND_LEN]);

/*
 * Writes getHash(op, valid_until, valid_after) of the VerifyingPaymaster v0.7 at paymaster on
 * chain_id (the devchain's v0.8 one runs the same code): the op's fields packed, with the
 * paymaster gas limits pm_gas (what paymasterAndData[20:52] will hold) and no sender nonce, so
 * no chain read; d: the op's digests (NULL: computed). Cannot fail.
 */
void	bp_paymaster_hash_v07(const struct bp_userop *op, const struct bp_userop_digests *d,
	    uint64_t chain_id, const uint8_t paymaster[20], const struct bp_u256 pm_gas[2],
	    uint64_t valid_until, uint64_t valid_after, uint8_t out[32]);

/* A sponsorship signed for one op. */
struct bp_paymaster_grant {
	enum bp_ep_version version;		/* the op's */
	uint8_t		 pnd[BP_PAYMASTER_PND_MAX];	/* the op's paymasterAndData */
	size_t		 pnd_len;
	struct bp_u256	 pm_gas[2];	/* v0.7+: the paymaster gas limits signed over */
	uint64_t	 valid_until;
	uint64_t	 valid_after;
	uint8_t		 op_hash[32];	/* the userOpHash of the op with pnd: what its owner signs */
};

/*
 * Signs op for the paymaster of net with key, valid from valid_after to valid_until: v0.6
 * reads senderNonce (bp_paymaster_sender_nonce); v0.7 and v0.8 read nothing and sign over the
 * op's paymaster gas limits, or BP_PAYMASTER_V07_VERIFICATION_GAS and 0 where it gives none.
 * Hashes, signs, and computes the op's userOpHash with the new paymasterAndData, for the
 * op's version's EntryPoint and paymaster on net. Returns 0, or -1 after logging why (the
 * chain did not answer, a bad config).
 */
int	bp_paymaster_grant(struct bp_upstream *, const struct bp_network *net, const uint8_t key[32],
	    const struct bp_userop *op, uint64_t valid_until, uint64_t valid_after,
	    struct bp_paymaster_grant *out);

/*
 * Chain read: the paymaster's senderNonce(sender) at "latest", by eth_call on net. Returns 0, or
 * -1 after logging why (no answer, a revert, an answer that is not one word).
 */
int	bp_paymaster_sender_nonce(struct bp_upstream *, const struct bp_network *net,
	    const uint8_t paymaster[20], const uint8_t sender[20], struct bp_u256 *out);

/*
 * Reads the signer's private key from path: "0x" and 64 hex digits, optionally followed by
 * white space. Writes the key and its address. Returns 0, or -1 after logging why (the path,
 * never the key).
 */
int	bp_paymaster_key_load(const char *path, uint8_t key[32], uint8_t addr[20]);

/*
 * The signer key of net for sponsorship: its paymaster_key_file, which must hold the key of
 * paymaster_signer when that is set, on a network with an entry point and its paymaster (of
 * any version: the key signs for all). Returns 0 with key filled, or -1: no key file
 * (silently), or one that cannot be used (logged).
 */
int	bp_paymaster_key_for(const struct bp_network *net, uint8_t key[32]);

/* Each network's signer key, by its index in the config: what a process loads once at init. */
struct bp_paymaster_keys {
	struct {
		int	ok;
		uint8_t	key[32];
	} net[BP_MAX_NETWORKS];
};

/* Loads the key of each of cfg's networks (bp_paymaster_key_for) into k. */
void	bp_paymaster_keys_load(struct bp_paymaster_keys *k, const struct bp_config *cfg);
/* The signer key of net, one of cfg's networks, or NULL when it has none. */
const uint8_t *bp_paymaster_keys_get(const struct bp_paymaster_keys *k,
	    const struct bp_config *cfg, const struct bp_network *net);
/* Wipes every key of k. */
void	bp_paymaster_keys_wipe(struct bp_paymaster_keys *k);

#endif
