/*
 * Validation of a UserOperation for the bundler's mempool (ERC-7769, EntryPoint v0.6;
 * docs/bundler.md): the checks of fields, gas and fees, and EntryPoint.simulateValidation,
 * called with eth_call and decoded from its revert (ValidationResult, or FailedOp whose AAxx
 * reason maps to an ERC-7769 code). Also the eth_call that keeps a revert's data, the
 * preVerificationGas of an op, and the calldata of the EntryPoint functions that take one op.
 *
 * The revert data of a node is untrusted: every decoder here checks bounds (tests/fuzz).
 * EntryPoint v0.7 and v0.8 simulate otherwise (lib/bundler/bundler_v07.h) with the same codes
 * and checks; bp_userop_validate_calldata and the gas sums follow the op's version.
 */
#ifndef BP_USEROP_VALIDATE_H
#define BP_USEROP_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "evm/u256.h"
#include "evm/userop.h"

struct bp_upstream;

#define BP_USEROP_VALIDATE_SIG_SIMULATE "simulateValidation((address,uint256,bytes,bytes," \
	"uint256,uint256,uint256,uint256,uint256,bytes,bytes))"

/* ERC-7769 error codes, and JSON-RPC's invalid params. */
#define BP_USEROP_VALIDATE_INVALID_PARAMS	(-32602)
#define BP_USEROP_VALIDATE_REJECTED_ACCOUNT	(-32500)	/* by the entry point or the account */
#define BP_USEROP_VALIDATE_REJECTED_PAYMASTER (-32501)
#define BP_USEROP_VALIDATE_BANNED_OPCODE	(-32502)
#define BP_USEROP_VALIDATE_SHORT_DEADLINE	(-32503)	/* expires too soon, or not due yet */
#define BP_USEROP_VALIDATE_THROTTLED	(-32504)
#define BP_USEROP_VALIDATE_STAKE_TOO_LOW	(-32505)
#define BP_USEROP_VALIDATE_AGGREGATOR	(-32506)
#define BP_USEROP_VALIDATE_BAD_SIGNATURE	(-32507)
#define BP_USEROP_VALIDATE_EXEC_REVERTED	(-32521)
#define BP_USEROP_VALIDATE_INTERNAL		(-32603)

/* Gas bounds the bundler takes an op with. */
#define BP_USEROP_VALIDATE_MAX_VERIFICATION_GAS	5000000
#define BP_USEROP_VALIDATE_MAX_OP_GAS		20000000	/* call + verification + preVerification */
#define BP_USEROP_VALIDATE_MIN_CALL_GAS		9100		/* a CALL with value, when callData is set */
#define BP_USEROP_VALIDATE_DEADLINE_MARGIN		30		/* seconds an op must stay valid, at least */

/* Why an op was refused; data (heap, may be NULL) is revert data for the error's data member. */
struct bp_userop_validate_error {
	int		 code;
	char		 message[320];
	uint8_t		*data;
	size_t		 len;
};

void		bp_userop_validate_error_free(struct bp_userop_validate_error *);

/* What simulateValidation found. */
struct bp_userop_validate_result {
	struct bp_u256	pre_op_gas;
	struct bp_u256	prefund;
	int		sig_failed;
	uint64_t	valid_after;
	uint64_t	valid_until;
	struct bp_u256	sender_stake;
	uint64_t	sender_unstake_delay;
	struct bp_u256	paymaster_stake;
	/* The rest of the StakeInfos, for ERC-7562's staked entities (lib/bundler/erc7562.h). */
	struct bp_u256	factory_stake;
	uint64_t	factory_unstake_delay;
	uint64_t	paymaster_unstake_delay;
};

/* The ERC-7769 code of an EntryPoint FailedOp reason ("AA21 didn't pay prefund"). */
int		bp_userop_validate_reason_code(const char *reason);

/*
 * Decodes the revert data of simulateValidation (data, len; untrusted, selector included).
 * Returns 0 with out filled for ValidationResult, or -1 with err set: FailedOp (code from its
 * reason), ValidationResultWithAggregation (-32506), Error(string) or anything else (-32500).
 */
int		bp_userop_validate_decode_validation(const uint8_t *data, size_t len, struct bp_userop_validate_result *out,
		    struct bp_userop_validate_error *err);

/*
 * The checks that need no simulation: sender and fields are set, the fees (maxPriorityFeePerGas
 * at most maxFeePerGas, maxFeePerGas at least base_fee), the gas limits (bounds above; and
 * preVerificationGas at least bp_userop_validate_pre_verification_gas without its fixed part). 0, or -1
 * with err set (-32602).
 */
int		bp_userop_validate_check_fields(const struct bp_userop *op, const struct bp_u256 *base_fee,
		    struct bp_userop_validate_error *err);

/* The checks of a ValidationResult (signature, validity window against now). 0 or -1. */
int		bp_userop_validate_check_result(const struct bp_userop_validate_result *res, uint64_t now,
		    struct bp_userop_validate_error *err);

/*
 * preVerificationGas of op as the reference bundler computes it: the calldata cost of its
 * packed encoding (16 a non-zero byte, 4 a zero; a 65-byte dummy signature when it has none),
 * plus 21000 (one op to a bundle) and 18300 per op and 4 a word, and an op with eip7702Auth
 * the authorization's 25,000 in the bundle's type 4 transaction. Saturates at UINT64_MAX.
 */
uint64_t	bp_userop_validate_pre_verification_gas(const struct bp_userop *op, int with_fixed);

/* Sum of op's gas limits (three; v0.7/v0.8 the paymaster's two too), saturated at UINT64_MAX. */
uint64_t	bp_userop_validate_total_gas(const struct bp_userop *op);

/*
 * The calldata of sig, an EntryPoint function whose one argument is a UserOperation tuple
 * (simulateValidation, getUserOpHash): selector, offset, the op's encoding. Returns a buffer
 * the caller frees, or NULL when out of memory.
 */
uint8_t		*bp_userop_validate_calldata(const char *sig, const struct bp_userop *op, size_t *len);

/*
 * eth_call of data to `to` on net at block (a tag: "latest", or "pending" for checks of what
 * the next block will see, its timestamp included), with the state override JSON object text
 * override (NULL for none). Returns 0 with the return data in *ret (heap, NULL for "0x"), 1 when
 * the call reverted with the revert data in *ret, or -1 with why in err (no answer, another
 * error).
 */
int		bp_userop_validate_eth_call(struct bp_upstream *, const struct bp_network *net,
		    const uint8_t to[20], const uint8_t *data, size_t len, const char *block,
		    const char *override, uint8_t **ret, size_t *retlen, struct bp_userop_validate_error *err);

/*
 * simulateValidation(op) of a v0.6 entry point decoded from its answer (untrusted: an eth_call's,
 * or the top call of its trace, bundler_rules.c): its revert data ret when reverted, else its
 * return data. 0 with out filled and bp_userop_validate_check_result passed, or -1 with err set
 * (an ERC-7769 code).
 */
int		bp_userop_validate_simulated(int reverted, const uint8_t *ret, size_t retlen,
		    struct bp_userop_validate_result *out, struct bp_userop_validate_error *err);

/*
 * The next block's base fee and the gas limit of the latest block of net
 * (eth_getBlockByNumber). 0, or -1 with err set (-32603).
 */
int		bp_userop_validate_block_fees(struct bp_upstream *, const struct bp_network *net,
		    struct bp_u256 *base_fee, uint64_t *gas_limit, struct bp_userop_validate_error *err);

#endif
