/*
 * ERC-4337 UserOperations of EntryPoint v0.6 (SPEC.md section 2; docs/gas.md): reading one from
 * a client's JSON object, its userOpHash, its ABI encoding as EntryPoint passes it to a
 * paymaster, and the calls a SimpleAccount v0.6 makes from its callData (execute and
 * executeBatch). Everything here is a pure function of its arguments; parsing is the trust
 * boundary (tests/fuzz/fuzz_userop.c).
 *
 *	userOpHash = keccak256(abi.encode(keccak256(abi.encode(sender, nonce, keccak256(initCode),
 *	    keccak256(callData), callGasLimit, verificationGasLimit, preVerificationGas,
 *	    maxFeePerGas, maxPriorityFeePerGas, keccak256(paymasterAndData))), entryPoint, chainId))
 */
#ifndef BP_EVM_USEROP_H
#define BP_EVM_USEROP_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "entry_point.h"
#include "tx.h"
#include "u256.h"

/* The most bytes a client's initCode, callData, paymasterAndData or signature may hold. */
#define BP_USEROP_BYTES_MAX	(48 * 1024)
/* The most calls of an executeBatch the decoder reads. */
#define BP_USEROP_CALLS_MAX	64

/* The byte fields of a UserOperation, in their ABI order. */
enum bp_userop_bytes {
	BP_USEROP_INIT_CODE,		/* 0 */
	BP_USEROP_CALL_DATA,		/* 1 */
	BP_USEROP_PAYMASTER_AND_DATA,	/* 2 */
	BP_USEROP_SIGNATURE,		/* 3 */
	BP_USEROP_BYTES__MAX
};

/* The uint256 fields, in their ABI order. */
enum bp_userop_num {
	BP_USEROP_NONCE,			/* 0 */
	BP_USEROP_CALL_GAS_LIMIT,		/* 1 */
	BP_USEROP_VERIFICATION_GAS_LIMIT,	/* 2 */
	BP_USEROP_PRE_VERIFICATION_GAS,		/* 3 */
	BP_USEROP_MAX_FEE_PER_GAS,		/* 4 */
	BP_USEROP_MAX_PRIORITY_FEE_PER_GAS,	/* 5 */
	BP_USEROP_NUM__MAX
};

/*
 * A UserOperation. The byte fields are heap copies owned by the op (bp_userop_free). A v0.7 or
 * v0.8 op is held packed as its EntryPoint takes it: initCode = factory ++ factoryData,
 * paymasterAndData = paymaster ++ paymasterVerificationGasLimit (16 bytes) ++
 * paymasterPostOpGasLimit (16) ++ paymasterData.
 */
struct bp_userop {
	uint8_t		 sender[20];
	struct bp_u256	 num[BP_USEROP_NUM__MAX];
	uint8_t		*bytes[BP_USEROP_BYTES__MAX];	/* NULL when empty */
	size_t		 len[BP_USEROP_BYTES__MAX];
	enum bp_ep_version version;		/* the form it was read in: 0 is v0.6 */
	/* v0.7+: paymasterVerificationGasLimit, paymasterPostOpGasLimit (0 when absent). */
	struct bp_u256	 pm_gas[2];
	int		 has_pm_gas[2];		/* the client gave it */
	/* v0.7+: eip7702Auth, the sender's EIP-7702 authorization (unchecked signature). */
	int		 has_auth;
	struct bp_tx_auth auth;
};

/* EntryPoint v0.8's initCode marker of an EIP-7702 account: 0x7702 and 18 zero bytes. */
extern const uint8_t bp_userop_7702_marker[20];

/* One call an account makes: target, value and the call's first four bytes. */
struct bp_userop_call {
	uint8_t		 target[20];
	int		 has_selector;	/* 0: data shorter than 4 bytes (a plain transfer) */
	uint8_t		 selector[4];
};

/* The JSON member name of a field ("callGasLimit"). */
const char	*bp_userop_num_name(enum bp_userop_num);
const char	*bp_userop_bytes_name(enum bp_userop_bytes);

/*
 * Reads a UserOperation from the JSON object j: sender (an address; a mixed-case one must carry
 * its EIP-55 checksum), the six quantities ("0x" and 1 to 64 hex digits, leading zeros allowed:
 * clients pad), callData (DATA, "0x" allowed) required; initCode, paymasterAndData and
 * signature optional (absent means empty). Members it does not know are ignored. Returns 0, or
 * -1 with the offending member's name in *field (a static string) and why in why (room for
 * cap bytes); op is then empty. On success the caller owns op's bytes (bp_userop_free).
 */
int		 bp_userop_from_json(const cJSON *j, struct bp_userop *op, const char **field,
		    char *why, size_t cap);
/*
 * Reads a v0.7 or v0.8 UserOperation in its JSON-RPC form (the same for both): sender, the six
 * quantities of v0.6 (verificationGasLimit, callGasLimit, maxFeePerGas and
 * maxPriorityFeePerGas below 2^128: they are packed), callData required; signature, factory
 * and factoryData, paymaster, paymasterVerificationGasLimit and paymasterPostOpGasLimit (below
 * 2^128) and paymasterData optional, null taken as absent. Packs initCode and
 * paymasterAndData as the EntryPoint does. Returns as bp_userop_from_json; op->version is v0.7.
 * factory may be "0x7702" (viem's short form of the EIP-7702 marker): initCode is then
 * 0x7702 ++ factoryData, as clients pack it. eip7702Auth is optional: {chainId, address, nonce
 * (below 2^64), yParity (0 or 1), r, s}, quantities of 1 to 64 hex digits, into op->auth
 * (has_auth set); its signature is not checked here (clients estimate with a dummy one).
 */
int		 bp_userop_from_json_v07(const cJSON *j, struct bp_userop *op, const char **field,
		    char *why, size_t cap);
/*
 * Reads an EIP-7702 authorization object {chainId, address, nonce, yParity, r, s} (eip7702Auth,
 * or an item of a type 4 transaction's authorizationList: viem and nodes write every member as
 * a quantity, r and s padded to 32 bytes) into *t, unchecked, with bp_userop_from_json_v07's
 * rules. 0, or -1 with the member ("eip7702Auth.nonce") in *field and why in why.
 */
int		 bp_userop_auth_from_json(const cJSON *a, struct bp_tx_auth *t, const char **field,
		    char *why, size_t cap);
/* The form of version v: bp_userop_from_json or bp_userop_from_json_v07 (version set). */
int		 bp_userop_from_json_v(enum bp_ep_version v, const cJSON *j, struct bp_userop *op,
		    const char **field, char *why, size_t cap);

/* v0.7's accountGasLimits (verificationGasLimit ++ callGasLimit, 16 bytes each). */
void		 bp_userop_account_gas_limits(const struct bp_userop *op, uint8_t out[32]);
/* v0.7's gasFees (maxPriorityFeePerGas ++ maxFeePerGas, 16 bytes each). */
void		 bp_userop_gas_fees(const struct bp_userop *op, uint8_t out[32]);
/* Keccak-256 of v0.8's PackedUserOperation type string. */
extern const uint8_t bp_userop_v08_typehash[32];
/*
 * The userOpHash of op as its version's EntryPoint ep on chain_id computes it: v0.6 as
 * bp_userop_hash, v0.7 keccak256(abi.encode(keccak256(encode(op)), ep, chainId)), v0.8 the
 * EIP-712 hash of domain ("ERC4337", "1", chainId, ep), with an EIP-7702 marker's rule
 * (bp_userop_hash_7702). Cannot fail.
 */
void		 bp_userop_hash_v(const struct bp_userop *op, const uint8_t ep[20],
		    uint64_t chain_id, uint8_t out[32]);
/*
 * keccak256 of an op's initCode and callData, which several hashes of one op take: the
 * sponsor path hashes the op for the paymaster's getHash and again for its userOpHash.
 */
struct bp_userop_digests {
	uint8_t		 init_code[32];
	uint8_t		 call_data[32];
};
void		 bp_userop_digests(const struct bp_userop *op, struct bp_userop_digests *d);
/* bp_userop_hash_v with the op's digests d (NULL: computed; v0.6 computes its own). */
void		 bp_userop_hash_vd(const struct bp_userop *op, const uint8_t ep[20],
		    uint64_t chain_id, const struct bp_userop_digests *d, uint8_t out[32]);

/*
 * Whether op is a v0.8 op whose initCode is the EIP-7702 marker its EntryPoint recognises
 * (Eip7702Support._isEip7702InitCode): at least 2 bytes, and its first 20, zero-padded, are
 * bp_userop_7702_marker. Anything after 20 bytes is the call that initialises the account.
 */
int		 bp_userop_is_7702(const struct bp_userop *op);
/*
 * The v0.8 userOpHash of an op whose initCode is the EIP-7702 marker, when the sender's delegate
 * (its code is 0xef0100 || delegate) is delegate: the EntryPoint hashes delegate ++ initCode[20:]
 * in place of initCode (Eip7702Support._getEip7702InitCodeHashOverride). bp_userop_hash_v calls
 * it with the delegate of op->auth, or without one (an EOA already delegated) with the marker
 * itself as viem does: then only a caller that read the sender's code gets the EntryPoint's
 * hash, through this function. Any other op: bp_userop_hash_v.
 */
void		 bp_userop_hash_7702(const struct bp_userop *op, const uint8_t ep[20],
		    uint64_t chain_id, const uint8_t delegate[20], uint8_t out[32]);

/* Frees op's bytes and zeroes it; an op that was zeroed or freed is a no-op. */
void		 bp_userop_free(struct bp_userop *op);

/* Writes the v0.6 userOpHash of op for entry point ep on chain_id. Cannot fail. */
void		 bp_userop_hash(const struct bp_userop *op, const uint8_t ep[20], uint64_t chain_id,
		    uint8_t out[32]);

/*
 * The ABI encoding of op as a tuple argument (its own head and tails, without an outer
 * offset): v0.6's UserOperation, or for a v0.7/v0.8 op (op->version) the PackedUserOperation
 * its EntryPoint takes (accountGasLimits and gasFees in a word each). With paymasterAndData
 * replaced by pnd_len zero bytes when pnd_len is not (size_t)-1: the bytes VerifyingPaymaster
 * 0.6.0's pack() copies, up to the length word of paymasterAndData, are the first *packed_len
 * bytes. Returns a buffer the caller frees, or NULL when out of memory.
 */
uint8_t		*bp_userop_abi(const struct bp_userop *op, size_t pnd_len, size_t *len,
		    size_t *packed_len);

/*
 * The most an op can cost its paymaster under EntryPoint v0.6, in wei: (callGasLimit +
 * verificationGasLimit x 3 + preVerificationGas) x maxFeePerGas (the prefund EntryPoint asks of
 * a paymaster, which may run postOp); under v0.7 and v0.8 the five gas limits' sum (the
 * paymaster's two in pm_gas) x maxFeePerGas. Returns 0, or -1 when it passes 2^256 or the gas passes 2^64.
 */
int		 bp_userop_max_cost(const struct bp_userop *op, struct bp_u256 *wei);

/*
 * Reads the calls a SimpleAccount makes from callData: execute(address,uint256,bytes) is
 * one call (every version), executeBatch(address[],bytes[]) (v0.6) one per element (the
 * arrays must have the same length), as are v0.7's executeBatch(address[],uint256[],bytes[])
 * (no values or one per call) and v0.8's executeBatch((address,uint256,bytes)[]); empty
 * callData none. A v0.6 account has no v0.7/v0.8 batch: such an op reverts, no call is made. Returns the number of calls written to calls (room for cap),
 * or -1 for anything else: another selector, a malformed encoding, more than cap calls.
 */
int		 bp_userop_calls(const uint8_t *data, size_t len, struct bp_userop_call *calls,
		    size_t cap);

#endif
