/*
 * The chain index's readers (docs/indexer.md): the tables the indexer writes
 * (schema/002_indexer.sql), read for the features built on them: NFT owners, the ERC-20
 * contracts an address has touched, ERC-4337 account deployments, mined transactions, and how
 * far the index (and its final part) goes.
 *
 * Chain keys are "CHAIN.NETWORK" ("ethereum.devnet"); addresses are lower-case 0x strings and
 * token ids decimal strings, as they are stored.
 */
#ifndef BP_INDEX_READ_H
#define BP_INDEX_READ_H

#include <stddef.h>
#include <stdint.h>

#include "evm/u256.h"

struct bp_db;

#define BP_INDEX_CHAIN_MAX	72	/* "CHAIN.NETWORK" + NUL */
#define BP_INDEX_HASH_STR	67	/* "0x" + 64 + NUL */
#define BP_INDEX_ADDR_STR	43	/* "0x" + 40 + NUL */

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
 * Calls fn for each NFT owner holds on chain (by contract, then token id as a number); fn
 * returns 0 to go on, non-zero to stop. block_number is 0 (not read). Returns the number of
 * calls, or -1 on a database error.
 */
int		bp_index_each_nft(struct bp_db *, const char *chain, const char *owner,
		    int (*fn)(const struct bp_index_nft *, void *), void *arg);

/*
 * Calls fn(contract, first_block, arg) for each ERC-20 contract owner has sent or received on
 * chain; fn returns 0 to go on. Returns the number of calls, or -1 on a database error.
 */
int		bp_index_each_erc20(struct bp_db *, const char *chain, const char *owner,
		    int (*fn)(const char *contract, int64_t first_block, void *), void *arg);

/*
 * Calls fn(contract, arg) once for each address owner chose, as far as its last `last`
 * transactions on chain tell (transactions are kept for the retention only): those it sent a
 * transaction to, and the ERC-20 contracts of transfers to or from owner inside a transaction
 * it sent (a swap, a claim, a withdrawal). Not every one is a token (a router is there too).
 * In no order; fn returns 0 to go on. Returns the number of calls, or -1 on a database error.
 */
int		bp_index_each_erc20_chosen(struct bp_db *, const char *chain, const char *owner,
		    int64_t last, int (*fn)(const char *contract, void *), void *arg);

/* An ERC-4337 account's deployment. */
struct bp_index_deployment {
	char		factory[43];
	char		paymaster[43];
	char		user_op_hash[BP_INDEX_HASH_STR];
	char		tx_hash[BP_INDEX_HASH_STR];
	int64_t		block_number;
};

/*
 * The first AccountDeployed record of sender (lowest block, then log index). Returns 1 when
 * found, 0 when not, -1 on error.
 */
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

/*
 * The hash of block number of chain, as indexed, into out (room for BP_INDEX_HASH_STR bytes).
 * Returns 1 when the block is indexed, 0 when not, -1 on a database error.
 */
int		bp_index_block_hash(struct bp_db *, const char *chain, int64_t number, char *out,
		    size_t outlen);

/* ---- Readers for the wallet resource (lib/wallet/wallets.c); self-contained, may move as a block. */

/*
 * The timestamp (Unix seconds) of block number of chain, as indexed, into *ts. Returns 1 when
 * the block is indexed, 0 when not, -1 on a database error.
 */
int		bp_index_block_time(struct bp_db *, const char *chain, int64_t number,
		    int64_t *ts);

/* ---- End of the wallet resource's readers. */

/* ---- Readers for the NFT resource (lib/nft/nft.c); self-contained, may move as a block. */

/*
 * Calls fn for the NFTs owner holds on chain, in bp_index_each_nft's order, skipping offset
 * and stopping after limit: one page of the owned list. Returns the number of calls, or -1.
 */
int		bp_index_nft_page(struct bp_db *, const char *chain, const char *owner,
		    int64_t offset, int64_t limit, int (*fn)(const struct bp_index_nft *, void *),
		    void *arg);

/* The number of NFT rows (tokens, ERC-1155 ids) owner holds on chain into *count (kept by the
 * store, one lookup); 0 or -1. */
int		bp_index_nft_count(struct bp_db *, const char *chain, const char *owner,
		    int64_t *count);

/*
 * The holders of one token: *count is 0, 1 or 2 (2 meaning "more than one"), and one (room for
 * onelen bytes; 43 suffice) the first holder, "" when none. Returns 0 or -1.
 */
int		bp_index_nft_holders(struct bp_db *, const char *chain, const char *contract,
		    const char *token_id, char *one, size_t onelen, int64_t *count);

/* The distinct tokens held and distinct holders of contract on chain; 0 or -1. */
int		bp_index_nft_collection(struct bp_db *, const char *chain, const char *contract,
		    int64_t *tokens, int64_t *owners);

/*
 * Calls fn once per token held on chain after (contract, token_id) in (contract, token id
 * text) order, at most limit times ("" and "" start at the beginning); quantity and owner-side
 * fields are those of one holder. Returns the number of calls, or -1.
 */
int		bp_index_nft_tokens_after(struct bp_db *, const char *chain,
		    const char *contract, const char *token_id, int64_t limit,
		    int (*fn)(const struct bp_index_nft *, void *), void *arg);

/* ---- End of the NFT resource's readers. */
/* ---- Readers for the bundler (lib/bundler/bundler.c); self-contained, may move as a block. */

/* The UserOperationEvent of an op, as indexed. */
struct bp_index_user_op {
	char		tx_hash[BP_INDEX_HASH_STR];
	int64_t		block_number;
	char		entry_point[43];	/* lower-case; "" for a row from before schema 022:
						   the network's entry_point (v0.6) */
	char		sender[43];		/* lower-case */
	char		nonce[BP_U256_DEC_MAX];	/* decimal */
};

/*
 * The UserOperationEvent of user_op_hash (lower-case) on chain, the latest when several
 * EntryPoints share it, into *out. Returns 1 when indexed, 0 when not, -1 on error.
 */
int		bp_index_user_op(struct bp_db *, const char *chain, const char *user_op_hash,
		    struct bp_index_user_op *out);

/* ---- End of the bundler's readers. */
/* ---- Readers for the token spam check (lib/token/spam.c); self-contained, may move as a block. */

/*
 * Who received contract's tokens on chain, for the airdrop signal (docs/tokens.md, "Spam"):
 * the first sample distinct receivers of its transfers of any standard (mints included, the
 * zero address not) into *receivers; of them, those that never sent a transaction to the
 * contract nor transferred its tokens out, as far as the index tells, into *passive; the
 * distinct transactions that delivered to them into *txs. One read-only statement. Returns 0,
 * or -1 on a database error (the counts then 0).
 */
int		bp_index_receivers(struct bp_db *, const char *chain, const char *contract,
		    int64_t sample, int64_t *receivers, int64_t *passive, int64_t *txs);

/* ---- End of the token spam check's readers. */

/* ---- Readers for webhooks (lib/webhook/webhook_match.c); self-contained, may move as a block. */

/* A transaction of a block, for bp_index_each_block_tx. Strings valid during the callback only. */
struct bp_index_block_tx {
	const char	*hash;
	int64_t		 tx_index;
	const char	*from;
	const char	*to;		/* NULL for a contract creation */
	const char	*value;		/* wei, decimal */
	int		 status;	/* 1, 0, or -1 unknown */
	int64_t		 gas_used;	/* -1 unknown */
};

/*
 * Calls fn for each transaction of block number of chain, as indexed, by tx_index; fn returns
 * 0 to go on, non-zero to stop. Returns the number of calls, or -1 on a database error.
 */
int		bp_index_each_block_tx(struct bp_db *, const char *chain, int64_t number,
		    int (*fn)(const struct bp_index_block_tx *, void *), void *arg);

/* ---- End of the webhooks' readers. */

/* ---- Readers for the heads (lib/index/index_feed.c, lib/ws/ws_follow.c); self-contained, may move as a block. */

/* One block as the index holds it, with the node's header when the store kept it. */
struct bp_index_block_head {
	int64_t		number;
	char		hash[BP_INDEX_HASH_STR];
	char		parent_hash[BP_INDEX_HASH_STR];
	int64_t		timestamp;
	int64_t		gas_used;
	int64_t		gas_limit;
	char		base_fee[80];		/* wei, decimal; "" before London */
	const char	*header;	/* the node's header JSON (index_headers.h), valid during the
					   callback; NULL when the store did not keep it */
};

#define BP_INDEX_HEADS_BATCH	64	/* the blocks bp_index_heads_after reads at most */

/*
 * Calls fn for the blocks of chain after number after, in number order, at most
 * BP_INDEX_HEADS_BATCH; fn returns 0 to go on, non-zero to stop. Returns the number of calls,
 * or -1 on a database error.
 */
int		bp_index_heads_after(struct bp_db *, const char *chain, int64_t after,
		    int (*fn)(const struct bp_index_block_head *, void *), void *arg);

/* The same for the newest limit blocks of chain, newest first. */
int		bp_index_heads_recent(struct bp_db *, const char *chain, int64_t limit,
		    int (*fn)(const struct bp_index_block_head *, void *), void *arg);

/* ---- End of the heads' readers. */

struct bp_buf;
struct bp_config;
/*
 * /metrics: each indexed network's head, the node's head as the indexer last saw it, the lag
 * between them in blocks, and the time of the last pass (a bp_metrics_source).
 */
int		bp_index_metrics(struct bp_db *, const struct bp_config *, struct bp_buf *);

#endif
