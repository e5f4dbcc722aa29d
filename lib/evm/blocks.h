/*
 * Typed block and log reads from an EVM node (docs/indexer.md, "Reading the chain"): the chain's
 * head, a block by number, the hashes of a range of blocks, a range of blocks with their logs and
 * receipts in one JSON-RPC batch, and eth_getLogs over a range that is split when the node
 * refuses it as too large. All go through the JSON-RPC client (bp_rpc_client_call,
 * bp_rpc_client_batch) with its failover.
 *
 * The node is not trusted. The readers of its JSON (bp_blocks_j*, bp_blocks_parse_log,
 * bp_blocks_parse_head) check the type and form of every member they read; the fetchers check
 * only the shape of the answers (an object for a block, an array for logs and receipts), and the
 * caller checks that they are one chain (lib/index/index_fetch.c does).
 *
 * No process-global state: what adapts to the node (the eth_getLogs range, whether receipts are
 * asked for) lives in the caller's struct bp_blocks_src.
 */
#ifndef BP_EVM_BLOCKS_H
#define BP_EVM_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "u256.h"

struct bp_upstream;
struct bp_network;
struct bp_rpc_client_call;

#define BP_BLOCKS_MAX_TOPICS	4	/* LOG0 .. LOG4 */
#define BP_BLOCKS_HASH_STR	67	/* "0x" + 64 + NUL */
#define BP_BLOCKS_ADDR_STR	43	/* "0x" + 40 + NUL */

/* ---- readers of the JSON a node answers ---- */

/*
 * Readers of one member of one object of eth_getBlockByNumber, eth_getBlockReceipts and
 * eth_getLogs answers. Every member's type and form is checked, and a member that fails is as
 * good as absent. o may be any cJSON item (one that is not an object has no members, NULL
 * included); names match case-sensitively. None allocates; what they write is the caller's.
 */

/* The string member name of o, borrowed from o; NULL when absent or not a string. */
const char	*bp_blocks_jstr(const cJSON *o, const char *name);

/*
 * A QUANTITY member as a uint64 into *out, leniently ("0x" and 1 or more hex digits, leading
 * zeros allowed: nodes pad). Returns 0, or -1 when absent, not a string, not a quantity or over
 * 64 bits; *out is then untouched.
 */
int		bp_blocks_jquantity(const cJSON *o, const char *name, uint64_t *out);

/*
 * A 32-byte hash member ("0x" or "0X" and 64 hex digits of either case), written canonically
 * into out: "0x" and 64 lower-case digits. Returns 0, or -1 when absent, not a string or not
 * exactly 32 bytes of hex; out is then untouched.
 */
int		bp_blocks_jhash(const cJSON *o, const char *name,
		    char out[BP_BLOCKS_HASH_STR]);

/*
 * An address member ("0x" or "0X" and 40 hex digits of any case; no checksum is checked: the
 * node is not a user) into out as "0x" and 40 lower-case digits. With nullable, an absent
 * member or a JSON null gives "" and 0 (a contract creation's "to"). Returns 0, or -1 when
 * absent (not nullable), not a string or not an address; out is then untouched.
 */
int		bp_blocks_jaddr(const cJSON *o, const char *name,
		    char out[BP_BLOCKS_ADDR_STR], int nullable);

/*
 * A QUANTITY member of up to 256 bits as decimal text into out (room for BP_U256_DEC_MAX bytes;
 * no leading zeros, "0" for zero). Returns 0, or -1 when absent, not a string, not a quantity or
 * over 256 bits; out is then untouched.
 */
int		bp_blocks_jdec(const cJSON *o, const char *name, char *out);

/*
 * An eth_blockNumber answer (a QUANTITY string) into *out. Returns 0, or -1 when it is not a
 * string, not a quantity or over INT64_MAX; *out is then untouched.
 */
int		bp_blocks_parse_head(const cJSON *answer, int64_t *out);

/* One event log, decoded from hex; data is borrowed (from bp_blocks_parse_log's buffer). */
struct bp_blocks_log {
	uint8_t		 address[20];		/* the emitting contract */
	uint8_t		 topics[BP_BLOCKS_MAX_TOPICS][32];
	size_t		 ntopics;
	const uint8_t	*data;
	size_t		 datalen;
};

/* Where a log sits: its block, its transaction and its index in the block. */
struct bp_blocks_logpos {
	int64_t		block;
	int64_t		log_index;
	char		tx_hash[BP_BLOCKS_HASH_STR];	/* lower-case */
	char		contract[BP_BLOCKS_ADDR_STR];	/* the emitter, lower-case */
};

/*
 * Reads one element j of an eth_getLogs answer into *log and *pos: address, topics (at most
 * BP_BLOCKS_MAX_TOPICS, each 32 bytes of hex), data (hex, decoded), blockNumber, logIndex (at
 * most INT64_MAX) and transactionHash. blockNumber is taken as a uint64 and stored cast to
 * int64: the caller checks it against the blocks it asked for. The "removed" member is not
 * looked at (the caller skips removed logs).
 *
 * The data is decoded into *buf, a buffer of *bufcap bytes the caller owns and reuses across
 * logs: when it is too small it is grown with realloc (*buf and *bufcap updated; a NULL *buf
 * with *bufcap 0 starts one), and the caller frees it with free() once done, also after a
 * failure. log->data points into *buf, so it is valid until the next call or the free.
 *
 * Returns 0, or -1 when a member is missing or malformed, or out of memory: the node's answer
 * is then not to be trusted. After -1, *log and *pos hold partial values.
 */
int		bp_blocks_parse_log(const cJSON *j, struct bp_blocks_log *log,
		    struct bp_blocks_logpos *pos, uint8_t **buf, size_t *bufcap);

/* ---- reads from the node ---- */

/*
 * Where reads go, and what the reads learnt about the node. The caller owns it (one per network
 * it reads, e.g. per indexed chain) and fills it before the first read.
 */
struct bp_blocks_src {
	struct bp_upstream	*up;		/* the caller's pool */
	const struct bp_network	*net;
	const char		*name;		/* for log lines: "ethereum.devnet" */
	/*
	 * Most blocks per eth_getLogs call (>= 1). Lowered, for the life of the struct, when the
	 * node refuses a range as too large.
	 */
	int64_t			 logs_range;
	/*
	 * Whether a range read asks eth_getBlockReceipts. Cleared, with one warning, when the node
	 * answers that it has no such method; the range then has no receipts.
	 */
	int			 receipts;
};

/*
 * What a range read fetched: views into the JSON answers, which the range owns. Filled by
 * bp_blocks_range or bp_blocks_logs; freed with bp_blocks_range_free. A caller with answers of
 * its own (a test, a fuzz harness) may fill the public part itself, leaving the private part
 * zero; the arrays are then its own, and it must not call bp_blocks_range_free.
 */
struct bp_blocks_range {
	int64_t		 from, to;	/* block range, inclusive */
	size_t		 n;		/* to - from + 1 (0 for a logs-only read) */
	const cJSON	**blocks;	/* n block objects */
	const cJSON	**receipts;	/* n receipt arrays, or NULLs (receipts off) */
	const cJSON	**logs;		/* arrays of log objects, in block order of the pieces */
	size_t		 nlogs;
	/* Private: the answers the views point into. */
	struct bp_rpc_client_call *calls;
	size_t		 ncalls;
	cJSON		**extra;	/* results of split eth_getLogs calls */
	size_t		 nextra;
	size_t		 logscap;
};

/* Frees what r owns and zeroes it; NULL or a zeroed range is a no-op. */
void		bp_blocks_range_free(struct bp_blocks_range *r);

/* The node's head block number into *head. Returns 0, or -1 with err set. */
int		bp_blocks_head(struct bp_blocks_src *, int64_t *head, char *err, size_t errlen);

/*
 * eth_getBlockByNumber(number, full). Returns the block object, owned by the caller
 * (cJSON_Delete), or NULL with err set (also when the node does not have the block: a JSON null).
 */
cJSON		*bp_blocks_by_number(struct bp_blocks_src *, int64_t number, int full, char *err,
		    size_t errlen);

/*
 * The hashes the chain has now for blocks [lo, hi], in one batch of header-only reads, into
 * out[hi - lo + 1]. A block the node does not have, or whose hash is malformed, gets "" (it
 * matches nothing). Returns 0, or -1 with err set when no upstream answered.
 */
int		bp_blocks_hashes(struct bp_blocks_src *, int64_t lo, int64_t hi,
		    char (*out)[BP_BLOCKS_HASH_STR], char *err, size_t errlen);

/*
 * Blocks [from, to] with their transactions, their logs and (when src->receipts) their receipts,
 * in one JSON-RPC batch: eth_getBlockByNumber(n, true) for each block, eth_getLogs over the
 * range in pieces of src->logs_range blocks (a piece the node refuses is fetched again on its
 * own, halved recursively: see bp_blocks_logs), eth_getBlockReceipts(n) for each block.
 * Returns 0, or -1 with err set; *too_large is set when the answer was over max_response (a
 * smaller range may pass). r is filled either way; the caller frees it with bp_blocks_range_free.
 */
int		bp_blocks_range(struct bp_blocks_src *, int64_t from, int64_t to,
		    struct bp_blocks_range *r, int *too_large, char *err, size_t errlen);

/* What eth_getLogs asks for beyond a range: NULL members match anything. */
struct bp_blocks_filter {
	const uint8_t	*address;			/* the emitter, 20 bytes */
	const uint8_t	*topics[BP_BLOCKS_MAX_TOPICS];	/* topic i, 32 bytes each */
};

/*
 * eth_getLogs over [from, to] (flt NULL: every log; else only those flt matches), in pieces of src->logs_range blocks; a piece
 * the node refuses as too large (its message or code says so) is halved, recursively down to one
 * block, and src->logs_range is lowered. Appends the answers' arrays to r->logs (r zeroed by the
 * caller, or a range being filled). Returns 0, or -1 with err set.
 */
int		bp_blocks_logs(struct bp_blocks_src *, const struct bp_blocks_filter *flt,
		    int64_t from, int64_t to,
		    struct bp_blocks_range *r, char *err, size_t errlen);

#endif
