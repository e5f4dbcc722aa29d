/*
 * What the bundler does otherwise for EntryPoint v0.7 and v0.8 (docs/bundler.md). Neither has
 * simulation functions on chain: EntryPointSimulations (its code generated into
 * bundler_sim_v07.c and bundler_sim_v08.c by scripts/gen-sim-code.sh) is put at the
 * EntryPoint's address by eth_call's state override, and its simulateValidation and
 * simulateHandleOp RETURN their results (ValidationResult, ExecutionResult) where v0.6's
 * revert with them; failures still revert with FailedOp (or FailedOpWithRevert). The validity
 * window and the signature verdict come packed in the account's and the paymaster's
 * validationData. The op itself is the PackedUserOperation of bp_userop_abi.
 *
 * The revert and return data of a node are untrusted: every decoder checks bounds.
 */
#ifndef BP_BUNDLER_V07_H
#define BP_BUNDLER_V07_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"
#include "evm/userop.h"
#include "userop_validate.h"

struct bp_upstream;

/* The deployed code of EntryPointSimulations, "0x..." (generated). */
extern const char bp_bundler_sim_code_v07[];
extern const char bp_bundler_sim_code_v08[];

/* handleOps' signature of version v (v0.6's UserOperation[] or the PackedUserOperation[]). */
const char	*bp_bundler_v07_handle_ops_sig(enum bp_ep_version v);

/*
 * The state override (JSON object text, heap) that puts version v's EntryPointSimulations at
 * ep and, for sender (NULL: none), gives it 100 ETH when fund is set, and when delegate is not
 * NULL makes its code EIP-7702's delegation 0xef0100 ++ delegate, as if the op's eip7702Auth
 * had run. NULL when out of memory.
 */
char		*bp_bundler_v07_override(enum bp_ep_version v, const uint8_t ep[20],
		    const uint8_t *sender, int fund, const uint8_t *delegate);

/*
 * Reads a validationData word (aggregator or signature verdict in the low 20 bytes, validUntil
 * and validAfter above) into res: sig_failed when the authorizer is 1, the window narrowed
 * (the later validAfter, the earlier non-zero validUntil). Returns 0, or 1 when the authorizer
 * is an aggregator (neither 0 nor 1).
 */
int		bp_bundler_v07_validation_data(const uint8_t w[32], struct bp_userop_validate_result *res);

/*
 * Decodes simulateValidation's return data (untrusted): ValidationResult(ReturnInfo(preOpGas,
 * prefund, accountValidationData, paymasterValidationData, paymasterContext), senderInfo,
 * factoryInfo, paymasterInfo, aggregatorInfo). 0 with out filled, or -1 with err set (-32506
 * for an aggregator, -32501 for a paymaster's, -32500 when it does not decode).
 */
int		bp_bundler_v07_decode_validation(const uint8_t *data, size_t len,
		    struct bp_userop_validate_result *out, struct bp_userop_validate_error *err);

/*
 * Decodes the revert data of a simulation (untrusted): FailedOp and FailedOpWithRevert(i,
 * reason, inner) by their AAxx reason, Error(string) and anything else -32500. Always -1.
 */
int		bp_bundler_v07_decode_revert(const uint8_t *data, size_t len,
		    struct bp_userop_validate_error *err);

/*
 * The call of simulateValidation(op) on op's EntryPoint ep (v0.7/v0.8): its calldata (heap,
 * *len bytes) and the state override (heap) that puts EntryPointSimulations at ep and, when
 * delegate is not NULL, the delegation as the sender's code: what the eth_call and
 * ERC-7562's trace of the validation (bundler_rules.c) both run. 0, or -1 when
 * out of memory.
 */
int		bp_bundler_v07_validation_call(const struct bp_userop *op, const uint8_t ep[20],
		    const uint8_t *delegate, uint8_t **data, size_t *len, char **override);

/*
 * simulateValidation(op) of EntryPointSimulations (bp_bundler_v07_validation_call) decoded from
 * its answer (untrusted: an eth_call's, or the top call of its trace, bundler_rules.c): its
 * revert data ret when reverted, else its return data. 0 with out filled and
 * bp_userop_validate_check_result passed, or -1 with err set.
 */
int		bp_bundler_v07_simulated(int reverted, const uint8_t *ret, size_t retlen,
		    struct bp_userop_validate_result *out, struct bp_userop_validate_error *err);

/*
 * Decodes simulateHandleOp's return data: ExecutionResult(preOpGas, paid, accountValidationData,
 * paymasterValidationData, targetSuccess, targetResult). 0 (*result points into data), or -1
 * with err set (-32500).
 */
int		bp_bundler_v07_execution_result(const uint8_t *data, size_t len, uint64_t *pre_op_gas,
		    uint64_t *paid, int *target_success, const uint8_t **result, size_t *result_len,
		    struct bp_userop_validate_error *err);

/*
 * The execution gas an op used, from x (paid - preOpGas at a 1 wei gas price) of a simulation
 * whose callGasLimit and paymasterPostOpGasLimit add up to limit: the EntryPoint added 10% of
 * what was left unused as a penalty, which is taken out again.
 */
uint64_t	bp_bundler_v07_exec_gas(uint64_t x, uint64_t limit);

/*
 * The gas op's paymaster (the first 20 bytes of its packed paymasterAndData) takes to validate
 * it when the EntryPoint ep of net calls validatePaymasterUserOp(op, userOpHash, maxCost):
 * eth_estimateGas from ep, less a transaction's 21,000 (the calldata's cost stays, a margin for
 * the EntryPoint's own encoding of the call). 0 when the node cannot tell (it refuses a call
 * from a contract, or the paymaster reverts).
 */
uint64_t	bp_bundler_v07_paymaster_gas(struct bp_upstream *, const struct bp_network *net,
		    const uint8_t ep[20], const struct bp_userop *op);

/*
 * Sets the paymaster's two gas limits of a v0.7/v0.8 op (its pm_gas and the 16-byte fields of
 * its packed paymasterAndData, which must be at least 52 bytes and is the op's own copy).
 */
void		bp_bundler_v07_set_pm_gas(struct bp_userop *op, uint64_t verification, uint64_t post_op);

/*
 * Appends the members of op's (v0.7/v0.8) JSON-RPC form that follow sender and the six
 * quantities (bp_bundler_op_json writes those), and the closing brace, to b: callData,
 * signature, and factory, factoryData, paymaster, its gas limits, paymasterData and
 * eip7702Auth only when the op has them. 0 or -1.
 */
int		bp_bundler_v07_op_members(const struct bp_userop *op, struct bp_buf *b);

#endif
