/*
 * The chain index (docs/indexer.md): reading the blocks, transactions, receipts and logs a node
 * answers in JSON, decoding the event logs the indexer stores, and reading the tables it writes
 * (schema/002_indexer.sql) for the features built on them: NFT owners, the ERC-20 contracts an
 * address has touched, ERC-4337 account deployments, mined transactions, and how far the index
 * (and its final part) goes.
 *
 * Chain keys are "CHAIN.NETWORK" ("ethereum.devnet"); addresses are lower-case 0x strings and
 * token ids decimal strings, as they are stored.
 */
#ifndef BP_INDEX_H
#define BP_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "evm/u256.h"

struct bp_db;

#define BP_INDEX_MAX_TOPICS	4	/* LOG0 .. LOG4 */
#define BP_INDEX_CHAIN_MAX	72	/* "CHAIN.NETWORK" + NUL */
#define BP_INDEX_HASH_STR	67	/* "0x" + 64 + NUL */
#define BP_INDEX_ADDR_STR	43	/* "0x" + 40 + NUL */

/* One event log, decoded from hex; data is borrowed from the caller. */
struct bp_index_log {
	uint8_t		 address[20];		/* the emitting contract */
	uint8_t		 topics[BP_INDEX_MAX_TOPICS][32];
	size_t		 ntopics;
	const uint8_t	*data;
	size_t		 datalen;
};

/* What a log is to the index. */
enum bp_index_kind {
	BP_INDEX_OTHER,			/* 0: not an event the index keeps */
	BP_INDEX_MALFORMED,		/* 1: a known event signature with a bad layout */
	BP_INDEX_ERC20,			/* 2: Transfer(from, to, value), 3 topics */
	BP_INDEX_ERC721,		/* 3: Transfer(from, to, tokenId), 4 topics */
	BP_INDEX_ERC1155_SINGLE,	/* 4: TransferSingle(operator, from, to, id, value) */
	BP_INDEX_ERC1155_BATCH,		/* 5: TransferBatch(operator, from, to, ids[], values[]) */
	BP_INDEX_USER_OP,		/* 6: EntryPoint v0.6 UserOperationEvent */
	BP_INDEX_ACCOUNT_DEPLOYED,	/* 7: EntryPoint v0.6 AccountDeployed */
	BP_INDEX__MAX
};

/*
 * A decoded event. Transfers fill operator (ERC-1155 only), from, to and, for all but a batch,
 * id and value (ERC-20: value only; ERC-721: id, and value 1). A batch gives count and views of
 * its two arrays inside the log's data: read item i with bp_index_batch_item. The ERC-4337
 * events fill user_op_hash, sender, paymaster and either factory (AccountDeployed) or nonce,
 * success, gas_cost and gas_used (UserOperationEvent).
 */
struct bp_index_event {
	enum bp_index_kind kind;
	uint8_t		 operator_[20];
	uint8_t		 from[20];
	uint8_t		 to[20];
	struct bp_u256	 id;
	struct bp_u256	 value;
	size_t		 count;			/* ERC-1155 batch: number of ids */
	const uint8_t	*ids, *values;		/* ERC-1155 batch: count words each */
	uint8_t		 user_op_hash[32];
	uint8_t		 sender[20];
	uint8_t		 paymaster[20];
	uint8_t		 factory[20];
	struct bp_u256	 nonce;
	int		 success;
	struct bp_u256	 gas_cost;
	struct bp_u256	 gas_used;
};

/*
 * Decodes log into *ev. The ERC-4337 events count only when entry_point (20 bytes, or NULL for
 * none) emitted them. Untrusted input: every topic and word is checked (address words must have
 * 12 zero bytes, bools be 0 or 1, arrays lie inside the data and be of equal length). Returns
 * ev->kind: BP_INDEX_OTHER for logs the index ignores, BP_INDEX_MALFORMED for one of its events
 * with the wrong number of topics or data of the wrong shape.
 */
enum bp_index_kind bp_index_decode_log(const struct bp_index_log *log,
		    const uint8_t *entry_point, struct bp_index_event *ev);

/* Item i (< ev->count) of an ERC-1155 batch: its id and value. */
void		bp_index_batch_item(const struct bp_index_event *ev, size_t i,
		    struct bp_u256 *id, struct bp_u256 *value);

/*
 * Readers of the JSON a node answers to eth_getBlockByNumber, eth_getBlockReceipts and
 * eth_getLogs, one member of one object each. The node is not trusted: every member's type and
 * form is checked, and a member that fails is as good as absent. o may be any cJSON item (one
 * that is not an object has no members, NULL included); names match case-sensitively. None
 * allocates; what they write is the caller's.
 */

/* The string member name of o, borrowed from o; NULL when absent or not a string. */
const char	*bp_index_jstr(const cJSON *o, const char *name);

/*
 * A QUANTITY member as a uint64 into *out, leniently ("0x" and 1 or more hex digits, leading
 * zeros allowed: nodes pad). Returns 0, or -1 when absent, not a string, not a quantity or over
 * 64 bits; *out is then untouched.
 */
int		bp_index_jquantity(const cJSON *o, const char *name, uint64_t *out);

/*
 * A 32-byte hash member ("0x" or "0X" and 64 hex digits of either case), written canonically
 * into out: "0x" and 64 lower-case digits. Returns 0, or -1 when absent, not a string or not
 * exactly 32 bytes of hex; out is then untouched.
 */
int		bp_index_jhash(const cJSON *o, const char *name,
		    char out[BP_INDEX_HASH_STR]);

/*
 * An address member ("0x" or "0X" and 40 hex digits of any case; no checksum is checked: the
 * node is not a user) into out as "0x" and 40 lower-case digits. With nullable, an absent
 * member or a JSON null gives "" and 0 (a contract creation's "to"). Returns 0, or -1 when
 * absent (not nullable), not a string or not an address; out is then untouched.
 */
int		bp_index_jaddr(const cJSON *o, const char *name,
		    char out[BP_INDEX_ADDR_STR], int nullable);

/*
 * A QUANTITY member of up to 256 bits as decimal text into out (room for BP_U256_DEC_MAX bytes;
 * no leading zeros, "0" for zero). Returns 0, or -1 when absent, not a string, not a quantity or
 * over 256 bits; out is then untouched.
 */
int		bp_index_jdec(const cJSON *o, const char *name, char *out);

/* Where a log sits: its block, its transaction and its index in the block. */
struct bp_index_logpos {
	int64_t		block;
	int64_t		log_index;
	char		tx_hash[BP_INDEX_HASH_STR];	/* lower-case */
	char		contract[BP_INDEX_ADDR_STR];	/* the emitter, lower-case */
};

/*
 * Reads one element j of an eth_getLogs answer into *log (for bp_index_decode_log) and *pos:
 * address, topics (at most BP_INDEX_MAX_TOPICS, each 32 bytes of hex), data (hex, decoded),
 * blockNumber, logIndex (at most INT64_MAX) and transactionHash. blockNumber is taken as a
 * uint64 and stored cast to int64: the caller checks it against the blocks it asked for. The
 * "removed" member is not looked at (the caller skips removed logs).
 *
 * The data is decoded into *buf, a buffer of *bufcap bytes the caller owns and reuses across
 * logs: when it is too small it is grown with realloc (*buf and *bufcap updated; a NULL *buf
 * with *bufcap 0 starts one), and the caller frees it with free() once done, also after a
 * failure. log->data points into *buf, so it is valid until the next call or the free.
 *
 * Returns 0, or -1 when a member is missing or malformed, or out of memory: the node's answer
 * is then not to be trusted. After -1, *log and *pos hold partial values.
 */
int		bp_index_parse_log(const cJSON *j, struct bp_index_log *log,
		    struct bp_index_logpos *pos, uint8_t **buf, size_t *bufcap);

/* How far the index of chain goes. */
struct bp_index_head {
	int64_t		head;		/* last indexed block, -1 when none */
	int64_t		confirmed;	/* last final block: consumers of final events stop here */
	int64_t		chain_head;	/* the node's head at the last pass */
	int64_t		checked_at;	/* Unix seconds of the last pass */
	int64_t		reorgs;
	char		head_hash[BP_INDEX_HASH_STR];
};

/* Reads chain's cursor into *out. Returns 1 when found, 0 when the chain is not indexed yet,
 * -1 on a database error (logged). */
int		bp_index_get_head(struct bp_db *, const char *chain, struct bp_index_head *out);

/*
 * The owner of an ERC-721 token (contract lower-case, token_id decimal) into owner (room for
 * 43 bytes). Returns 1 when owned, 0 when unknown or burnt, -1 on a database error.
 */
int		bp_index_nft_owner(struct bp_db *, const char *chain, const char *contract,
		    const char *token_id, char *owner, size_t ownerlen);

/*
 * The quantity of an ERC-1155 id (or 1 for an ERC-721 token) that owner holds, as a decimal
 * string into out (room for BP_U256_DEC_MAX bytes); "0" when none. Returns 0 or -1.
 */
int		bp_index_nft_balance(struct bp_db *, const char *chain, const char *contract,
		    const char *token_id, const char *owner, char *out, size_t outlen);

/* One NFT an address holds, for bp_index_each_nft. Strings valid during the callback only. */
struct bp_index_nft {
	const char	*contract;
	const char	*token_id;
	const char	*standard;	/* "erc721" or "erc1155" */
	const char	*quantity;
	int64_t		 block_number;
};

/*
 * Calls fn for each NFT owner holds on chain (by contract, then token id text); fn returns 0 to
 * go on, non-zero to stop. Returns the number of calls, or -1 on a database error.
 */
int		bp_index_each_nft(struct bp_db *, const char *chain, const char *owner,
		    int (*fn)(const struct bp_index_nft *, void *), void *arg);

/*
 * Calls fn(contract, first_block, arg) for each ERC-20 contract owner has sent or received on
 * chain; fn returns 0 to go on. Returns the number of calls, or -1 on a database error.
 */
int		bp_index_each_erc20(struct bp_db *, const char *chain, const char *owner,
		    int (*fn)(const char *contract, int64_t first_block, void *), void *arg);

/* An ERC-4337 account's deployment. */
struct bp_index_deployment {
	char		factory[43];
	char		paymaster[43];
	char		user_op_hash[BP_INDEX_HASH_STR];
	char		tx_hash[BP_INDEX_HASH_STR];
	int64_t		block_number;
};

/* The AccountDeployed record of sender. Returns 1 when found, 0 when not, -1 on error. */
int		bp_index_account_deployed(struct bp_db *, const char *chain, const char *sender,
		    struct bp_index_deployment *out);

/* A mined transaction. */
struct bp_index_tx {
	int64_t		block_number;
	int64_t		tx_index;
	char		from[43];
	char		to[43];			/* "" for a contract creation */
	char		value[BP_U256_DEC_MAX];
	int		status;			/* 1, 0, or -1 unknown */
	char		contract_created[43];	/* "" when none */
};

/*
 * The transaction hash (lower-case) as indexed, when it is within the retention. Returns 1 when
 * found, 0 when not, -1 on a database error.
 */
int		bp_index_get_tx(struct bp_db *, const char *chain, const char *hash,
		    struct bp_index_tx *out);

/* ---- Readers for the wallet resource (lib/wallets.c); self-contained, may move as a block. */

/*
 * The timestamp (Unix seconds) of block number of chain, as indexed, into *ts. Returns 1 when
 * the block is indexed, 0 when not, -1 on a database error.
 */
int		bp_index_block_time(struct bp_db *, const char *chain, int64_t number,
		    int64_t *ts);

/*
 * The first AccountDeployed record of sender (lowest block, then log index; as
 * bp_index_account_deployed) into *out, found through the (chain, sender) index and picked in C:
 * with an ORDER BY, SQLite walks every deployment of the chain by block and sorts in a temporary
 * b-tree. For the per-request path of wallets. Returns 1 when found, 0 when not, -1 on error.
 */
int		bp_index_sender_deployment(struct bp_db *, const char *chain, const char *sender,
		    struct bp_index_deployment *out);

/* ---- End of the wallet resource's readers. */

#endif
