/*
 * The ERC-7562 validation rules over a struct-log trace (docs/bundler.md, "ERC-7562").
 *
 * The engine knows no EntryPoint version: it gets the trace of the validation call (anvil's
 * or geth's default tracer, as debug_traceCall answers it: per step op, depth, stack) and the
 * entities' addresses and stakes, and judges the opcodes, the storage each entity touched,
 * calls into the EntryPoint, CREATE2 and out-of-gas. Which entity a step belongs to follows
 * from the frames the EntryPoint opens itself (depth 2): a call to the sender is the account's
 * validation, to the paymaster the paymaster's, to another contract when the op names a factory
 * the deployment (v0.6's and v0.7's SenderCreator); the EntryPoint's own frames are trusted.
 *
 * The trace is untrusted input from a node: every member is type-checked, sizes are capped.
 */
#ifndef BP_ERC7562_H
#define BP_ERC7562_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* The entities of an op, in the order ERC-7562 names them. */
enum bp_erc7562_entity {
	BP_ERC7562_FACTORY,		/* 0 */
	BP_ERC7562_ACCOUNT,		/* 1: the sender */
	BP_ERC7562_PAYMASTER,		/* 2 */
	BP_ERC7562_AGGREGATOR,		/* 3 */
	BP_ERC7562__MAX
};

/* What the engine is told about an op. */
struct bp_erc7562_input {
	uint8_t		entry_point[20];
	uint8_t		addr[BP_ERC7562__MAX][20];
	int		present[BP_ERC7562__MAX];	/* the op names this entity */
	int		staked[BP_ERC7562__MAX];	/* bp_erc7562_staked of its stake info */
	/*
	 * A v0.8 EIP-7702 op with an initialisation call (initCode past the marker): the
	 * SenderCreator calls the sender with it, and that code is the account's.
	 */
	int		init_account;
};

/* ERC-7562's staking thresholds (MIN_UNSTAKE_DELAY; MIN_STAKE_VALUE is chain-specific: any). */
#define BP_ERC7562_MIN_UNSTAKE_DELAY	86400

/* The verdict: code 0 (passed), -32502 (a rule broken) or -32505 (allowed only with stake). */
struct bp_erc7562_verdict {
	int	code;
	char	rule[8];		/* "OP-011", "STO-031" ... */
	char	message[320];		/* "[OP-011] account uses banned opcode TIMESTAMP" */
};

/* 1 when op is banned in validation (OP-011, OP-013), with *stake_cures set for OP-080's. */
int		 bp_erc7562_banned(const char *op, int *stake_cures);

/* 1 for a precompile of prague (0x01-0x11) or RIP-7212's 0x100: callable (OP-062). */
int		 bp_erc7562_precompile(const uint8_t a[20]);

/* 1 for CALL, CALLCODE, DELEGATECALL, STATICCALL. */
int		 bp_erc7562_call_family(const char *op);

/*
 * The entity whose validation a frame the EntryPoint opens (at depth 2) runs, by its address to:
 * the sender's, the paymaster's, the aggregator's, else the factory's when the op has one (its
 * SenderCreator), the account's when init_account is set; -1 for the EntryPoint's own frames
 * (not judged).
 */
int		 bp_erc7562_phase(const struct bp_erc7562_input *in, const uint8_t to[20]);

/* The name of entity e ("factory", "account", "paymaster", "aggregator"). */
const char	*bp_erc7562_entity_name(enum bp_erc7562_entity e);

/* 1 when a stake (32 bytes, big-endian) and unstake delay make an entity staked. */
int		 bp_erc7562_staked(const uint8_t stake_be[32], uint64_t unstake_delay);

/*
 * Judges the trace text (a debug_traceCall answer, or its result object) of the validation
 * call against in. Returns 0 (v->code 0: passed, or -32502/-32505 with the rule and message
 * set), or -1 when the trace does not read (v->message says why).
 */
int		 bp_erc7562_check(const char *trace, size_t len, const struct bp_erc7562_input *in,
		    struct bp_erc7562_verdict *v);

/* The same over the trace parsed (the answer, or its result object: not consumed). */
int		 bp_erc7562_check_json(const cJSON *trace, const struct bp_erc7562_input *in,
		    struct bp_erc7562_verdict *v);

#endif
