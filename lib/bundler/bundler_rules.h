/*
 * ERC-7562's validation rules on the bundler's path (docs/bundler.md, "ERC-7562"): after
 * simulateValidation passed, the same call is traced with the node's debug_traceCall (the
 * default struct-log tracer, memory and storage off) and judged by lib/bundler/erc7562.c with
 * the op's entities and their stakes. The network's trace_validation says when: "" or "auto"
 * when the node answers debug_traceCall, "true" always (a node that cannot is an error),
 * "false" never (eth_call only: the risk is in docs/bundler.md).
 */
#ifndef BP_BUNDLER_RULES_H
#define BP_BUNDLER_RULES_H

#include <stdint.h>

#include "bundler/erc7562.h"
#include "core/config.h"
#include "evm/userop.h"
#include "userop_validate.h"

struct bp_upstream;

/*
 * The entities of op and their stakes from its ValidationResult, for the engine (v0.8's
 * EIP-7702 marker is no factory).
 */
void	bp_bundler_rules_entities(const struct bp_userop *op, const uint8_t ep[20],
	    const struct bp_userop_validate_result *res, struct bp_erc7562_input *in);

/*
 * Simulates op's validation on ep and judges it by ERC-7562: v0.6's simulateValidation on the
 * EntryPoint, v0.7/v0.8's with EntryPointSimulations put at ep by a state override, the
 * sender's code the delegation to delegate when it is not NULL (bp_bundler_7702_prepare). When
 * the network traces, the simulation's answer is read from the trace's call tree (one call
 * fewer); when it does not (trace_validation = false, or auto on a node without
 * debug_traceCall), it is the eth_call of the same call alone. Returns 0 with res filled and
 * checked, or -1 with err set: the simulation's refusal, -32502 or -32505 naming the rule,
 * -32603 when the node did not answer or (trace_validation = true) cannot trace.
 */
int	bp_bundler_rules_simulate(struct bp_upstream *, const struct bp_network *net,
	    const uint8_t ep[20], const struct bp_userop *op, const uint8_t *delegate,
	    struct bp_userop_validate_result *res, struct bp_userop_validate_error *err);

struct bp_db;

/*
 * ERC-7562's mempool rules before the pool takes op: a sender that is the paymaster of an op in
 * the pool, or a factory or paymaster that is the sender of one, is -32502 (STO-040); a banned
 * factory or paymaster is -32504; else *pm_cap is the number of ops of its paymaster the pool
 * may hold (0: no bound), by its reputation and stake, its status in pm_status. 0, or -1 with
 * err set.
 */
int	bp_bundler_rules_reputation(struct bp_db *, const struct bp_network *net,
	    const struct bp_userop *op, const uint8_t ep[20],
	    const struct bp_userop_validate_result *res, int *pm_cap, char *pm_status, size_t len,
	    struct bp_userop_validate_error *err);

/* Counts op as seen for its factory and paymaster, once the pool took it (logged on error). */
void	bp_bundler_rules_seen(struct bp_db *, const struct bp_network *net,
	    const struct bp_userop *op);

/*
 * An op that failed a bundle's re-check with the EntryPoint's reason (FailedOp "AAxx ..."):
 * an AA1x bans its factory, an AA3x its paymaster (ERC-7562: an entity whose validation held in
 * simulation and broke in the bundle). Logged on error.
 */
void	bp_bundler_rules_crashed(struct bp_db *, const struct bp_network *net,
	    const struct bp_userop *op, const char *reason);

#endif
