/*
 * ERC-7677 on the bundler's endpoint (docs/bundler.md): pm_getPaymasterStubData and
 * pm_getPaymasterData with params [userOperation, entryPoint, chainIdHex, {"policyId": "gp_..."}],
 * over the gas policies and the VerifyingPaymaster signer of /v1/gas (lib/gas/sponsor.c). For an
 * EntryPoint v0.6 the results carry paymasterAndData; the stub has the final data's length
 * (paymaster ++ abi.encode(validUntil, validAfter) ++ a 65-byte signature that recovers).
 */
#ifndef BP_BUNDLER_PAYMASTER_H
#define BP_BUNDLER_PAYMASTER_H

#include "bundler_rpc.h"

/* The 65-byte signature of stubs: recovers to some address without reverting (ECDSA). */
extern const uint8_t bp_bundler_dummy_sig[65];

int	bp_bundler_pm_stub(struct bp_bundler_call *);
int	bp_bundler_pm_data(struct bp_bundler_call *);

#endif
