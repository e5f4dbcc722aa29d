/*
 * The bundler's mempool and bundles in SQLite (schema/008_bundler.sql; docs/bundler.md): the
 * FastCGI programs are stateless, so every UserOperation the bundler accepted, and every bundle
 * transaction the submitter signed, lives here. This module owns bundler_user_ops and
 * bundler_bundles; all their SQL is in lib/bundler/bundler_pool.c.
 *
 * Chain keys are "CHAIN.NETWORK"; addresses and hashes lower-case 0x hex; nonces and fees of ops
 * 64 hex digits without 0x (fixed width, so they sort as numbers).
 */
#ifndef BP_BUNDLER_POOL_H
#define BP_BUNDLER_POOL_H

#include <stddef.h>
#include <stdint.h>

struct bp_db;

#define BP_BUNDLER_POOL_CHAIN_MAX	72
#define BP_BUNDLER_POOL_HASH_STR	67	/* "0x" + 64 + NUL */
#define BP_BUNDLER_POOL_ADDR_STR	43
#define BP_BUNDLER_POOL_WORD_STR	65	/* 64 hex digits + NUL */
#define BP_BUNDLER_POOL_REPLACE_BUMP	10	/* percent a replacement raises both fees by, at least */

/* One UserOperation of the pool. */
struct bp_bundler_pool_op {
	char		 chain[BP_BUNDLER_POOL_CHAIN_MAX];
	char		 hash[BP_BUNDLER_POOL_HASH_STR];
	char		 entry_point[BP_BUNDLER_POOL_ADDR_STR];
	char		 sender[BP_BUNDLER_POOL_ADDR_STR];
	char		 nonce[BP_BUNDLER_POOL_WORD_STR];
	char		 max_fee[BP_BUNDLER_POOL_WORD_STR];
	char		 max_priority[BP_BUNDLER_POOL_WORD_STR];
	int64_t		 gas;		/* call + verification + preVerification gas, saturated */
	int		 staked;
	char		 paymaster[BP_BUNDLER_POOL_ADDR_STR];	/* "" when none (written, not read back) */
	int		 paymaster_staked;
	char		*op_json;	/* heap, owned by the struct (bp_bundler_pool_op_free) */
	char		 status[16];
	char		 reason[256];
	int64_t		 bundle_id;	/* 0: none */
	char		 tx_hash[BP_BUNDLER_POOL_HASH_STR];	/* "" while none */
	int64_t		 block_number;	/* -1 while none */
	char		 block_hash[BP_BUNDLER_POOL_HASH_STR];
	int		 success;	/* -1 while unknown */
	int64_t		 created_at;
};

/* Frees op's JSON; the rest is inline. A zeroed op is a no-op. */
void		bp_bundler_pool_op_free(struct bp_bundler_pool_op *op);

/* What bp_bundler_pool_add made of an op. */
enum bp_bundler_pool_add_result {
	BP_BUNDLER_POOL_ADDED,		/* 0: inserted (or replaced the pending op of its sender and nonce) */
	BP_BUNDLER_POOL_KNOWN,		/* 1: the same hash is in the pool already */
	BP_BUNDLER_POOL_UNDERPRICED,	/* 2: a pending op has its sender and nonce; fees not 10% higher */
	BP_BUNDLER_POOL_IN_BUNDLE,	/* 3: an op with its sender and nonce is in a bundle already */
	BP_BUNDLER_POOL_SENDER_CAP,	/* 4: an unstaked sender has sender_cap ops pending already */
	BP_BUNDLER_POOL_ERROR,		/* 5: a database error (logged) */
	BP_BUNDLER_POOL_PAYMASTER_CAP,	/* 6: an unstaked paymaster has paymaster_cap ops pending already */
	BP_BUNDLER_POOL_ADD__MAX
};

/*
 * Adds op (status pending) in one BEGIN IMMEDIATE transaction: refuses a hash already present,
 * replaces a pending op of the same sender and nonce only when both fees are at least
 * BP_BUNDLER_POOL_REPLACE_BUMP percent higher (the old one becomes dropped, "replaced by HASH"), and
 * refuses a new nonce of an unstaked sender that has sender_cap ops pending or submitted, and an
 * op of a paymaster that has paymaster_cap ops pending or submitted (0: no bound; the caller's
 * from ERC-7562's reputation and stake). Returns the result.
 */
enum bp_bundler_pool_add_result bp_bundler_pool_add(struct bp_db *, const struct bp_bundler_pool_op *op, int sender_cap,
		    int paymaster_cap);

/*
 * Whether address is the sender (*sender) or the paymaster (*paymaster) of an op of chain that is
 * pending or submitted: ERC-7562's STO-040, one role an address. 0, or -1 on a database error.
 */
int		bp_bundler_pool_roles(struct bp_db *, const char *chain, const char *address,
		    int *sender, int *paymaster);

/* Reads the op hash of chain into out (bp_bundler_pool_op_free). 1 found, 0 not, -1 database error. */
int		bp_bundler_pool_get(struct bp_db *, const char *chain, const char *hash,
		    struct bp_bundler_pool_op *out);

/*
 * Calls fn for the pending ops of chain, highest maxPriorityFeePerGas first (then oldest), at
 * most limit of them; fn returns 0 to go on, non-zero to stop. The op is valid during the call
 * only. Returns the number of calls, or -1 on a database error.
 */
int		bp_bundler_pool_each_pending(struct bp_db *, const char *chain, int limit,
		    int (*fn)(const struct bp_bundler_pool_op *, void *), void *arg);

/* Marks a pending op dropped with reason. 0 or -1. */
int		bp_bundler_pool_drop(struct bp_db *, const char *chain, const char *hash,
		    const char *reason);

/* A bundle transaction. */
struct bp_bundler_pool_bundle {
	int64_t		id;
	char		chain[BP_BUNDLER_POOL_CHAIN_MAX];
	char		bundler[BP_BUNDLER_POOL_ADDR_STR];
	int64_t		nonce;
	char		tx_hash[BP_BUNDLER_POOL_HASH_STR];
	char		old_tx_hashes[1024];	/* comma-separated; earlier fee bumps */
	char		*raw_tx;		/* "0x..." heap (bp_bundler_pool_bundle_free) */
	char		max_fee[80];		/* decimal wei */
	char		max_priority[80];
	int64_t		gas_limit;
	int64_t		ops;
	char		status[16];
	int64_t		block_number;		/* -1 while none */
	char		block_hash[BP_BUNDLER_POOL_HASH_STR];
	int64_t		sent_at;
};

void		bp_bundler_pool_bundle_free(struct bp_bundler_pool_bundle *);

/*
 * Records bundle b (status sent; b->id is set) and moves the ops hashes[0..n) of its chain from
 * pending to submitted with its id, in one transaction, BEFORE the transaction is sent. Returns
 * 0, or -1 (nothing written) when an op was no longer pending or on a database error.
 */
int		bp_bundler_pool_bundle_record(struct bp_db *, struct bp_bundler_pool_bundle *b,
		    char (*hashes)[BP_BUNDLER_POOL_HASH_STR], size_t n);

/*
 * Calls fn for each bundle of chain with status sent (oldest first), or, with included set,
 * for each included bundle mined at min_block or later. Returns the count or -1.
 */
int		bp_bundler_pool_each_bundle(struct bp_db *, const char *chain, int included,
		    int64_t min_block, int (*fn)(struct bp_bundler_pool_bundle *, void *), void *arg);

/* Replaces the bundle's signed transaction by a fee bump (the old hash is kept). 0 or -1. */
int		bp_bundler_pool_bundle_bump(struct bp_db *, int64_t id, const char *tx_hash,
		    const char *raw_tx, const char *max_fee, const char *max_priority);

/* One op's outcome in a mined bundle. */
struct bp_bundler_pool_outcome {
	char	hash[BP_BUNDLER_POOL_HASH_STR];
	int	found;		/* its UserOperationEvent is in the receipt */
	int	success;
};

/*
 * Marks bundle id included in block (number, hash) by tx_hash, and its ops: those found
 * included (with their success), the others failed with reason, in one transaction. 0 or -1.
 */
int		bp_bundler_pool_bundle_included(struct bp_db *, int64_t id, const char *tx_hash,
		    int64_t number, const char *block_hash, const struct bp_bundler_pool_outcome *ops,
		    size_t n, const char *reason);

/*
 * Marks bundle id status (dropped or orphaned) and puts its ops back to pending, in one
 * transaction. 0 or -1.
 */
int		bp_bundler_pool_bundle_release(struct bp_db *, int64_t id, const char *status);

/*
 * Calls fn(hash, arg) for each op of bundle id (by hash); the count or
 * -1.
 */
int		bp_bundler_pool_bundle_ops(struct bp_db *, int64_t id,
		    int (*fn)(const char *hash, void *), void *arg);

struct bp_buf;
struct bp_config;
/* /metrics: UserOperations waiting in the mempool and bundles sent, by network. */
int	bp_bundler_pool_metrics(struct bp_db *, const struct bp_config *, struct bp_buf *);

#endif
