/*
 * EIP-7702 ops in the bundler (docs/bundler.md, "EIP-7702"): a v0.8 op whose initCode is the
 * marker 0x7702 (bp_userop_is_7702) runs as the code its sender, an EOA, delegates to. With
 * eip7702Auth the EOA delegates in the bundle itself: the op is simulated with the delegation
 * applied by eth_call's state override (the sender's code 0xef0100 ++ delegate), and the bundle
 * that carries it is a type 4 transaction with its authorization. Without eip7702Auth the
 * sender must be delegated already: its delegate is read from the chain, as the EntryPoint's
 * userOpHash does.
 */
#ifndef BP_BUNDLER_7702_H
#define BP_BUNDLER_7702_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "evm/userop.h"
#include "userop_validate.h"

struct bp_upstream;

/* Intrinsic gas of an authorization in a type 4 transaction (EIP-7702's PER_EMPTY_ACCOUNT_COST). */
#define BP_BUNDLER_7702_AUTH_GAS	25000

/*
 * What op needs of EIP-7702 before it is simulated and hashed on net. With eip7702Auth: its
 * chainId must be the network's or 0, and with strict set (eth_sendUserOperation; an estimate
 * may carry a dummy signature, as viem's does) its signer must be the sender and its nonce the
 * sender's nonce (at the latest block); its address is the delegate. Without it, a v0.8 op whose initCode
 * is the marker needs a sender delegated already: its delegate is read from the chain.
 * Returns 1 with the delegate written (*apply set when the simulation must apply the
 * delegation: the op carries eip7702Auth), 0 when op has nothing of EIP-7702, or -1 with err
 * set (-32602 naming eip7702Auth; -32603 when the node did not answer).
 */
int	bp_bundler_7702_prepare(struct bp_upstream *, const struct bp_network *net,
	    const struct bp_userop *op, int strict, uint8_t delegate[20], int *apply,
	    struct bp_userop_validate_error *err);

/*
 * The userOpHash of op on EntryPoint ep of net, given what bp_bundler_7702_prepare returned
 * (rc, delegate): the EntryPoint's, which for a marker op hashes the delegate the sender has
 * when the op runs.
 */
void	bp_bundler_7702_hash(const struct bp_userop *op, const uint8_t ep[20],
	    const struct bp_network *net, int rc, const uint8_t delegate[20], uint8_t out[32]);

/*
 * Whether the authorization of op (which has one) still applies when its bundle is built: its
 * nonce is the sender's nonce, or the sender is delegated to its address already (the
 * node skips a tuple whose nonce moved, and the op runs as it was checked). 1 yes, 0 no, -1
 * when the node did not answer.
 */
int	bp_bundler_7702_usable(struct bp_upstream *, const struct bp_network *net,
	    const struct bp_userop *op);

/*
 * The state override (JSON object text, heap) of a bundle's re-check: each of ops[0..n) that
 * carries an authorization gets the delegation as its code. NULL when none does, or out of
 * memory (*oom set).
 */
char	*bp_bundler_7702_bundle_override(const struct bp_userop *const *ops, size_t n, int *oom);

#endif
