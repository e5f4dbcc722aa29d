/*
 * Gas price estimates (SPEC.md section 2, Gas prices; docs/gas.md): the estimator, which turns an
 * eth_feeHistory answer into slow, standard and fast fees; the sample of one network (one chain
 * read, behind bp_gas_sample_chain); and the gas_samples table (schema/004_gas.sql), which
 * cron/gas.c fills and fcgi/gas.c reads. Fees are wei in struct bp_u256 and are written in gwei
 * with exact decimals (at most 9); there is no floating point.
 *
 * The method, after MetaMask's gas-fee controller (written anew): the rewards at the 10th, 50th
 * and 90th percentiles of the last BP_GAS_BLOCKS blocks; per level the median over the blocks
 * that were not empty, at least the network's priority floor, and never below the level under
 * it; the max fee is the next block's base fee times a per-level multiplier plus that tip.
 */
#ifndef BP_GAS_H
#define BP_GAS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/config.h"
#include "evm/u256.h"

struct bp_db;
struct bp_upstream;

#define BP_GAS_BLOCKS	5	/* blocks of fee history an estimate reads */
/* Room for a fee in gwei: 78 digits, a point, NUL. */
#define BP_GAS_GWEI_MAX	BP_U256_UNITS_MAX

enum bp_gas_level {
	BP_GAS_SLOW,		/* 0 */
	BP_GAS_STANDARD,	/* 1 */
	BP_GAS_FAST,		/* 2 */
	BP_GAS__MAX
};

/* What the chain said: eth_feeHistory over the last blocks, or eth_gasPrice without EIP-1559. */
struct bp_gas_history {
	int		 eip1559;	/* 0: no base fee; gas_price holds eth_gasPrice */
	int64_t		 newest;	/* the newest block's number */
	size_t		 n;		/* blocks, 0 .. BP_GAS_BLOCKS */
	struct bp_u256	 base_fee[BP_GAS_BLOCKS + 1];	/* [n] is the next block's */
	struct bp_u256	 reward[BP_GAS_BLOCKS][BP_GAS__MAX];
	int		 empty[BP_GAS_BLOCKS];	/* gasUsedRatio 0: no transactions */
	struct bp_u256	 gas_price;
};

struct bp_gas_estimate {
	struct bp_u256	 max_fee;
	struct bp_u256	 max_priority;
	int64_t		 seconds;
};

/* One sample: the answer of GET /v1/gas/{chain}/prices. */
struct bp_gas_sample {
	int64_t			block_number;
	struct bp_u256		base_fee;	/* the next block's; 0 without EIP-1559 */
	struct bp_gas_estimate	est[BP_GAS__MAX];
	int64_t			sampled_at;	/* Unix seconds */
};

/* The level's name ("slow"). */
const char	*bp_gas_level_name(enum bp_gas_level);

/*
 * Reads an eth_feeHistory result (untrusted) into h: oldestBlock, baseFeePerGas (n + 1
 * quantities), gasUsedRatio (n numbers) and reward (n arrays of BP_GAS__MAX quantities), n at
 * most BP_GAS_BLOCKS. Returns 0, or -1 when it is not that shape. A history whose base fees
 * are all zero (a node that fills them without EIP-1559) has eip1559 clear.
 */
int		 bp_gas_history_parse(const cJSON *res, struct bp_gas_history *h);

/*
 * The estimates of h (see above) for a network with priority floor floor_wei and block
 * interval block_seconds, into s (block_number and base_fee too; sampled_at is left alone).
 * Guarantees slow <= standard <= fast on both fees and max_fee >= max_priority. Cannot fail.
 */
void		 bp_gas_estimate(const struct bp_gas_history *h, const struct bp_u256 *floor_wei,
		    int64_t block_seconds, struct bp_gas_sample *s);

/*
 * Chain read and estimate: eth_feeHistory(BP_GAS_BLOCKS, latest, percentiles), and eth_gasPrice
 * with eth_blockNumber when the chain has no EIP-1559; sampled_at is now. Returns 0, or -1
 * after logging why.
 */
int		 bp_gas_sample_chain(struct bp_upstream *, const struct bp_network *,
		    struct bp_gas_sample *s);

/*
 * Writes s as the JSON answer of the prices endpoint for chain into b. Returns 0, or -1 when b
 * is full.
 */
int		 bp_gas_json(const struct bp_gas_sample *s, const char *chain, struct bp_buf *b);

/*
 * The gas_samples table: stores s as the latest sample of net, with its answer for chain
 * rendered once (a read serves it as it is). Returns 0, or -1 after logging why.
 */
int		 bp_gas_store(struct bp_db *, const struct bp_network *net, const struct bp_gas_sample *s);
/*
 * The latest stored sample of net: its answer appended to b and its time in *sampled_at.
 * Returns 1 found, 0 none, -1 database error.
 */
int		 bp_gas_load(struct bp_db *, const struct bp_network *net, struct bp_buf *b,
		    int64_t *sampled_at);

/*
 * The answer of GET /v1/gas/{chain}/prices for net into b: the stored sample while it is at most
 * max_age seconds old, else a new one (bp_gas_sample_chain), stored; when the node does not
 * answer, the older stored sample. Returns 0, 1 when there is none to answer (the node did not
 * answer), or -1 on a database error or a full b.
 */
int		 bp_gas_prices(struct bp_db *, struct bp_upstream *, const struct bp_network *net,
		    int64_t max_age, struct bp_buf *b);

#endif
