/*
 * Typed chain reads (docs/evm.md, "chain"): the JSON-RPC state reads every program needs, over
 * the JSON-RPC client of lib/rpc/jsonrpc.c (bp_rpc_client_call, bp_rpc_client_batch) and so over
 * lib/net/upstream.c's failover. Callers give and get C types (uint64, struct bp_u256, byte
 * arrays); the JSON is built and checked here. An answer is untrusted: every result is checked
 * for its form before it is used.
 *
 * Reads are described by struct bp_chain_read, so one read and a batch of them are the same
 * thing: bp_chain_batch sends n reads as one JSON-RPC batch (one call when n is 1); the
 * one-read functions below are shorthands. bp_chain_calls sends n eth_calls through Multicall3's
 * aggregate3 when the network has it, else as a batch.
 *
 * Block-by-number, eth_getLogs over a range and receipts are lib/evm/blocks.h's.
 *
 * A context (struct bp_chain) holds no request state: the upstream pool it borrows and, per
 * network, whether Multicall3 was found there. One per process (or per thread).
 */
#ifndef BP_EVM_CHAIN_H
#define BP_EVM_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "u256.h"

struct bp_upstream;
struct bp_chain;

/* The block argument of a read: a number (0 and up), or this for the tag "latest". */
#define BP_CHAIN_LATEST		(-1)

/* Multicall3's address, the same on every chain that has it (https://www.multicall3.com). */
#define BP_CHAIN_MULTICALL3	"0xcA11bde05977b3631167028862bE2a173976CA11"

/* Why a read failed. */
enum bp_chain_err_kind {
	BP_CHAIN_OK,			/* 0 */
	BP_CHAIN_ERR_TRANSPORT,		/* 1: no upstream answered (or the answer was too large) */
	BP_CHAIN_ERR_RPC,		/* 2: the node answered an error (execution reverted ...) */
	BP_CHAIN_ERR_PROTOCOL,		/* 3: the answer was not JSON-RPC, or lacked this read */
	BP_CHAIN_ERR_DECODE,		/* 4: a result of the wrong form for its type */
	BP_CHAIN_ERR_INTERNAL,		/* 5: out of memory, or arguments out of range */
	BP_CHAIN_ERR__MAX
};

struct bp_chain_error {
	enum bp_chain_err_kind	kind;
	int64_t			code;		/* the node's code, for BP_CHAIN_ERR_RPC */
	char			message[256];
};

/* What a read asks for. */
enum bp_chain_op {
	BP_CHAIN_BLOCK_NUMBER,	/* 0: eth_blockNumber -> u64 */
	BP_CHAIN_CODE,		/* 1: eth_getCode(address, block) -> bytes */
	BP_CHAIN_BALANCE,	/* 2: eth_getBalance(address, block) -> u256 */
	BP_CHAIN_TX_COUNT,	/* 3: eth_getTransactionCount(address, block) -> u64 */
	BP_CHAIN_CALL,		/* 4: eth_call({to: address, data}, block) -> bytes */
	BP_CHAIN_OP__MAX
};

/*
 * One read. The caller fills op, address, data/len (BP_CHAIN_CALL; borrowed) and block; the
 * read fills err and the result of its op. bytes is owned by the read once set: free it with
 * bp_chain_reads_free (or take it and set the member to NULL). A read can be sent again after
 * bp_chain_reads_free.
 */
struct bp_chain_read {
	enum bp_chain_op	 op;
	uint8_t			 address[20];
	const uint8_t		*data;
	size_t			 len;
	int64_t			 block;		/* BP_CHAIN_LATEST or a block number */
	struct bp_chain_error	 err;		/* kind BP_CHAIN_OK when the result is set */
	uint64_t		 u64;		/* BLOCK_NUMBER, TX_COUNT */
	struct bp_u256		 u256;		/* BALANCE */
	uint8_t			*bytes;		/* CODE, CALL: NULL when the node answered "0x" */
	size_t			 nbytes;
};

/*
 * A context over up (borrowed: it must outlive the context) for the networks of cfg (also
 * borrowed). Returns it, owned by the caller (bp_chain_free), or NULL when out of memory.
 */
struct bp_chain	*bp_chain_new(const struct bp_config *cfg, struct bp_upstream *up);
/* Frees a context; NULL is a no-op. */
void		 bp_chain_free(struct bp_chain *);

/*
 * Sends reads[0..n) to net as one JSON-RPC batch (a single call when n is 1) and reads the
 * answer into them. Returns the number of reads that succeeded; each other one has err set
 * (every one, when no upstream answered).
 */
size_t		 bp_chain_batch(struct bp_chain *, const struct bp_network *net,
		    struct bp_chain_read *reads, size_t n);

/*
 * Reads ans (len bytes), an upstream's answer to the batch of reads[0..n) (ids 0..n-1), into
 * the reads, exactly as bp_chain_batch does (bp_rpc_client_parse, then each result checked
 * for its op's type). For the unit tests and the fuzz harness. Returns the number that succeeded.
 */
size_t		 bp_chain_parse(struct bp_chain_read *reads, size_t n, const char *ans,
		    size_t len);

/* Frees the bytes of reads[0..n) and sets them to NULL. */
void		 bp_chain_reads_free(struct bp_chain_read *reads, size_t n);

/*
 * The one-read shorthands. Each returns 0, or -1 with err (may be NULL) set. Results owned by
 * the caller: *code and *ret are malloc'd (free()), NULL with length 0 for "0x".
 */
int		 bp_chain_block_number(struct bp_chain *, const struct bp_network *,
		    uint64_t *out, struct bp_chain_error *err);
int		 bp_chain_code(struct bp_chain *, const struct bp_network *,
		    const uint8_t address[20], int64_t block, uint8_t **code, size_t *len,
		    struct bp_chain_error *err);
int		 bp_chain_balance(struct bp_chain *, const struct bp_network *,
		    const uint8_t address[20], int64_t block, struct bp_u256 *out,
		    struct bp_chain_error *err);
int		 bp_chain_tx_count(struct bp_chain *, const struct bp_network *,
		    const uint8_t address[20], int64_t block, uint64_t *out,
		    struct bp_chain_error *err);
int		 bp_chain_call(struct bp_chain *, const struct bp_network *, const uint8_t to[20],
		    const uint8_t *data, size_t len, int64_t block, uint8_t **ret, size_t *retlen,
		    struct bp_chain_error *err);

/* 1 when address has code at block, 0 when not, -1 with err set when the read failed. */
int		 bp_chain_has_code(struct bp_chain *, const struct bp_network *,
		    const uint8_t address[20], int64_t block, struct bp_chain_error *err);

/*
 * eth_call whose return data is ABI-decoded (lib/evm/abi.h) as one value in word 0: a uint256,
 * or an address (its 12 high bytes must be zero). Return data that does not decode is -1 with
 * BP_CHAIN_ERR_DECODE. 0 or -1, as above.
 */
int		 bp_chain_call_u256(struct bp_chain *, const struct bp_network *,
		    const uint8_t to[20], const uint8_t *data, size_t len, int64_t block,
		    struct bp_u256 *out, struct bp_chain_error *err);
int		 bp_chain_call_address(struct bp_chain *, const struct bp_network *,
		    const uint8_t to[20], const uint8_t *data, size_t len, int64_t block,
		    uint8_t out[20], struct bp_chain_error *err);

/*
 * Multicall3 (aggregate3((address target, bool allowFailure, bytes callData)[]) returns
 * ((bool success, bytes returnData)[])), every call with allowFailure true.
 *
 * bp_chain_mc3_encode writes the calldata of aggregate3 for the BP_CHAIN_CALL reads[0..n) into
 * *out (malloc'd, the caller frees it), *outlen bytes. 0, or -1 when a read is not a call, n is
 * 0, or out of memory.
 *
 * bp_chain_mc3_decode reads aggregate3's return data (ret, len; untrusted) into reads[0..n):
 * a call that succeeded gets its return bytes, one that reverted BP_CHAIN_ERR_RPC ("execution
 * reverted", code 3, the revert data in bytes). Returns the number that succeeded, or -1 (every
 * read then has BP_CHAIN_ERR_DECODE) when the data is not n results.
 */
int		 bp_chain_mc3_encode(const struct bp_chain_read *reads, size_t n, uint8_t **out,
		    size_t *outlen);
int		 bp_chain_mc3_decode(const uint8_t *ret, size_t len, struct bp_chain_read *reads,
		    size_t n);

/*
 * 1 when net has Multicall3 (code at BP_CHAIN_MULTICALL3), 0 when not, -1 when that could not
 * be read. Learnt once per context and network: the first answer is kept.
 */
int		 bp_chain_has_multicall3(struct bp_chain *, const struct bp_network *net);

/*
 * Sends the BP_CHAIN_CALL reads[0..n) (all at the same block): as one eth_call of Multicall3's
 * aggregate3 when net has it and n > 1, else as one JSON-RPC batch. Through Multicall3 each
 * call's msg.sender is the Multicall3 contract, not the zero address; for view functions that
 * do not look at msg.sender the answers are the same. Returns the number that succeeded, as
 * bp_chain_batch.
 */
size_t		 bp_chain_calls(struct bp_chain *, const struct bp_network *net,
		    struct bp_chain_read *reads, size_t n);

#endif
