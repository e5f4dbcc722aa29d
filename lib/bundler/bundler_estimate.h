/*
 * eth_estimateUserOperationGas (ERC-7769, EntryPoint v0.6; docs/bundler.md): preVerificationGas
 * from the op's calldata cost and overhead (lib/bundler/userop_validate.c), verificationGasLimit and
 * callGasLimit from EntryPoint.simulateHandleOp run with eth_call (gas price 1 wei, the sender
 * given a balance by a state override, so `paid` is the gas used), and a second simulation
 * whose target call is the op's callData, to answer -32521 with the revert data when it
 * reverts. Gas fields may be "0x0" or absent and the signature a dummy. A v0.7/v0.8 op is
 * simulated by EntryPointSimulations through a state override (lib/bundler/bundler_v07.h),
 * its unused-gas penalty taken out, and answered with the paymaster's limits when it has one.
 */
#ifndef BP_BUNDLER_ESTIMATE_H
#define BP_BUNDLER_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "bundler_rpc.h"

int	bp_bundler_estimate(struct bp_bundler_call *);

/*
 * Decodes ExecutionResult(preOpGas, paid, validAfter, validUntil, targetSuccess, targetResult)
 * from revert data (untrusted, selector included). 0, or -1 with err set (a FailedOp mapped to
 * its ERC-7769 code, anything else -32500). *result points into data.
 */
int	bp_bundler_execution_result(const uint8_t *data, size_t len, uint64_t *pre_op_gas,
	    uint64_t *paid, int *target_success, const uint8_t **result, size_t *result_len,
	    struct bp_userop_validate_error *err);

#endif
