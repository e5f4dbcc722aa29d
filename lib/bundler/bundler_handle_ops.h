/*
 * The UserOperations of an EntryPoint's handleOps calldata (any version's), read back into the
 * form the bundler holds them in: eth_getUserOperationByHash answers an op another bundler
 * sent from the transaction that carried it (docs/bundler.md, "Ops of other bundlers").
 */
#ifndef BP_BUNDLER_HANDLE_OPS_H
#define BP_BUNDLER_HANDLE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "evm/userop.h"

/*
 * Decodes one op's tuple t (len bytes: its head and tails, as bp_userop_abi writes it) of
 * version v into op: v0.6's UserOperation, or the PackedUserOperation of v0.7/v0.8 unpacked
 * (accountGasLimits, gasFees and the paymaster's two gas limits into their fields; initCode
 * and paymasterAndData stay packed, as struct bp_userop holds them). 0 with op the caller's
 * (bp_userop_free), or -1 when t does not decode (op then empty).
 */
int	bp_bundler_handle_ops_op(const uint8_t *t, size_t len, enum bp_ep_version v,
	    struct bp_userop *op);

/*
 * Finds the op of sender with nonce in data (len bytes), the calldata of version v's
 * handleOps(ops, beneficiary), and decodes it into op. 1 found (op the caller's), 0 not
 * among the ops, -1 when data is not that call or does not decode.
 */
int	bp_bundler_handle_ops_find(const uint8_t *data, size_t len, enum bp_ep_version v,
	    const uint8_t sender[20], const struct bp_u256 *nonce, struct bp_userop *op);

#endif
