/*
 * The chain index's readers: the read side of the indexer's tables for the features built on
 * them (index_read.h). The writers are index_store.c (index_reorg.c and index_prune.c write
 * through it), index_logs.c and index_headers.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "index_read.h"
#include "core/metrics.h"

/* ---- the indexer's tables ---- */

/*
 * The statement for sql with the strings keys[0..nkeys) bound to its parameters 1..nkeys. It
 * belongs to the db module's cache (the caller resets it); NULL after bp_db_stmt logged why.
 */
static struct bp_stmt *
query(struct bp_db *db, const char *sql, const char *const keys[], size_t nkeys)
{
	struct bp_stmt *st;
	size_t i;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return NULL;
	for (i = 0; i < nkeys; i++)
		bp_stmt_text(st, (int)i + 1, keys[i]);
	return st;
}

/*
 * A query for at most one row: steps the statement of query() once. On a row, fill(st, out)
 * copies the columns out and returns 0, or -1 when they do not fit. Returns 1 for a row, 0 for
 * none, -1 on a database error (logged by the db module) or when fill failed.
 */
static int
lookup(struct bp_db *db, const char *sql, const char *const keys[], size_t nkeys,
    int (*fill)(struct bp_stmt *, void *), void *out)
{
	struct bp_stmt *st;
	int rc = -1;

	if ((st = query(db, sql, keys, nkeys)) == NULL)
		return -1;
	switch (bp_stmt_step(st)) {
	case BP_DB_ROW:
		rc = fill(st, out) == 0 ? 1 : -1;
		break;
	case BP_DB_DONE:
		rc = 0;
		break;
	default:
		break;
	}
	bp_stmt_reset(st);
	return rc;
}

/* A text column copied into a caller's buffer, for lookup. */
struct text_out {
	char	*s;
	size_t	 size;
};

/* Column 0 into the text_out at arg; 0, or -1 when it does not fit. */
static int
fill_text(struct bp_stmt *st, void *arg)
{
	struct text_out *t = arg;

	return bp_strlcpy(t->s, bp_col_text(st, 0), t->size);
}

/* A cursor row into the bp_index_head at arg, for lookup. */
static int
fill_head(struct bp_stmt *st, void *arg)
{
	struct bp_index_head *out = arg;

	out->head = bp_col_int(st, 0);
	out->confirmed = bp_col_int(st, 1);
	out->chain_head = bp_col_int(st, 2);
	out->checked_at = bp_col_int(st, 3);
	out->reorgs = bp_col_int(st, 4);
	bp_strlcpy(out->head_hash, bp_col_text(st, 5), sizeof(out->head_hash));
	return 0;
}

int
bp_index_get_head(struct bp_db *db, const char *chain, struct bp_index_head *out)
{
	static const char sql[] = "SELECT head, confirmed, chain_head, checked_at, reorgs,"
	    " head_hash FROM index_cursors WHERE chain = ?";
	const char *keys[] = { chain };
	int rc;

	if ((rc = lookup(db, sql, keys, BP_NITEMS(keys), fill_head, out)) == 0) {
		memset(out, 0, sizeof(*out));
		out->head = out->confirmed = out->chain_head = -1;
	}
	return rc;
}

int
bp_index_nft_owner(struct bp_db *db, const char *chain, const char *contract,
    const char *token_id, char *owner, size_t ownerlen)
{
	static const char sql[] = "SELECT owner FROM index_nft_owners WHERE chain = ?"
	    " AND contract = ? AND token_id = ? AND standard = 'erc721'";
	const char *keys[] = { chain, contract, token_id };
	struct text_out t = { owner, ownerlen };

	return lookup(db, sql, keys, BP_NITEMS(keys), fill_text, &t);
}

int
bp_index_nft_balance(struct bp_db *db, const char *chain, const char *contract,
    const char *token_id, const char *owner, char *out, size_t outlen)
{
	static const char sql[] = "SELECT quantity FROM index_nft_owners WHERE chain = ?"
	    " AND contract = ? AND token_id = ? AND owner = ?";
	const char *keys[] = { chain, contract, token_id, owner };
	struct text_out t = { out, outlen };

	switch (lookup(db, sql, keys, BP_NITEMS(keys), fill_text, &t)) {
	case 1:
		return 0;
	case 0:
		return bp_strlcpy(out, "0", outlen);
	default:
		return -1;
	}
}

/*
 * Steps st (contract, token_id, standard, quantity, block_number rows), calling fn for each
 * until it returns non-zero, and resets st. Returns the number of calls, or -1 on an error.
 */
static int
each_nft_row(struct bp_stmt *st, int (*fn)(const struct bp_index_nft *, void *), void *arg)
{
	struct bp_index_nft n;
	enum bp_db_step r;
	int count = 0;

	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		n.contract = bp_col_text(st, 0);
		n.token_id = bp_col_text(st, 1);
		n.standard = bp_col_text(st, 2);
		n.quantity = bp_col_text(st, 3);
		n.block_number = bp_col_int(st, 4);
		count++;
		if (fn(&n, arg) != 0)
			break;
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : count;
}

int
bp_index_each_nft(struct bp_db *db, const char *chain, const char *owner,
    int (*fn)(const struct bp_index_nft *, void *), void *arg)
{
	return bp_index_nft_page(db, chain, owner, 0, INT64_MAX, fn, arg);
}

int
bp_index_each_erc20(struct bp_db *db, const char *chain, const char *owner,
    int (*fn)(const char *, int64_t, void *), void *arg)
{
	static const char sql[] = "SELECT contract, first_block FROM index_erc20_holdings"
	    " WHERE chain = ? AND owner = ? ORDER BY contract";
	const char *keys[] = { chain, owner };
	struct bp_stmt *st;
	enum bp_db_step r;
	int count = 0;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		count++;
		if (fn(bp_col_text(st, 0), bp_col_int(st, 1), arg) != 0)
			break;
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : count;
}

/* A caller's fn(text, arg) over rows of one text column, for bp_stmt_each. */
struct text_fn {
	int	(*fn)(const char *, void *);
	void	*arg;
};

static int
text_row(struct bp_stmt *st, void *arg)
{
	struct text_fn *t = arg;

	return t->fn(bp_col_text(st, 0), t->arg);
}

int
bp_index_each_erc20_chosen(struct bp_db *db, const char *chain, const char *owner, int64_t last,
    int (*fn)(const char *, void *), void *arg)
{
	/*
	 * Only transactions owner sent count: a Transfer event names any "from" its contract
	 * likes (address poisoning fakes transfers out of the victim), a transaction's sender
	 * cannot be faked. Its last transactions by block, through index_transactions_from; the
	 * transfers of each through index_transfers' primary key.
	 */
	static const char sql[] =
	    "WITH x AS (SELECT hash, to_addr FROM index_transactions"
	    "  WHERE chain = ?1 AND from_addr = ?2 ORDER BY block_number DESC LIMIT ?3)"
	    " SELECT to_addr FROM x WHERE to_addr IS NOT NULL"
	    " UNION SELECT t.contract FROM x JOIN index_transfers t"
	    "  ON t.chain = ?1 AND t.tx_hash = x.hash"
	    "  WHERE t.standard = 'erc20' AND (t.to_addr = ?2 OR t.from_addr = ?2)";
	const char *keys[] = { chain, owner };
	struct text_fn cb = { fn, arg };
	struct bp_stmt *st;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	bp_stmt_int(st, 3, last);
	return bp_stmt_each(st, text_row, &cb);
}

/* An AccountDeployed row into the bp_index_deployment at arg, for lookup. */
static int
fill_deployment(struct bp_stmt *st, void *arg)
{
	struct bp_index_deployment *out = arg;

	bp_strlcpy(out->factory, bp_col_text(st, 0), sizeof(out->factory));
	bp_strlcpy(out->paymaster, bp_col_text(st, 1), sizeof(out->paymaster));
	bp_strlcpy(out->user_op_hash, bp_col_text(st, 2), sizeof(out->user_op_hash));
	bp_strlcpy(out->tx_hash, bp_col_text(st, 3), sizeof(out->tx_hash));
	out->block_number = bp_col_int(st, 4);
	return 0;
}

int
bp_index_account_deployed(struct bp_db *db, const char *chain, const char *sender,
    struct bp_index_deployment *out)
{
	/*
	 * No ORDER BY: with one, SQLite walks every deployment of the chain by block and sorts in a
	 * temporary b-tree; the (chain, sender) index finds the few rows, and column 5 (log_index)
	 * only picks the first of them here.
	 */
	static const char sql[] = "SELECT factory, paymaster, user_op_hash, tx_hash,"
	    " block_number, log_index FROM index_account_deployments WHERE chain = ? AND sender = ?";
	const char *keys[] = { chain, sender };
	struct bp_index_deployment cur;
	struct bp_stmt *st;
	enum bp_db_step step;
	int64_t best_log = 0;
	int found = 0;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		fill_deployment(st, &cur);
		if (!found || cur.block_number < out->block_number ||
		    (cur.block_number == out->block_number && bp_col_int(st, 5) < best_log)) {
			*out = cur;
			best_log = bp_col_int(st, 5);
		}
		found = 1;
	}
	bp_stmt_reset(st);
	return step == BP_DB_ERROR ? -1 : found;
}

/* A transaction row into the bp_index_tx at arg, for lookup. */
static int
fill_tx(struct bp_stmt *st, void *arg)
{
	struct bp_index_tx *out = arg;

	out->block_number = bp_col_int(st, 0);
	out->tx_index = bp_col_int(st, 1);
	bp_strlcpy(out->from, bp_col_text(st, 2), sizeof(out->from));
	bp_strlcpy(out->to, bp_col_text(st, 3), sizeof(out->to));
	bp_strlcpy(out->value, bp_col_text(st, 4), sizeof(out->value));
	out->status = bp_col_is_null(st, 5) ? -1 : (int)bp_col_int(st, 5);
	bp_strlcpy(out->contract_created, bp_col_text(st, 6), sizeof(out->contract_created));
	return 0;
}

int
bp_index_get_tx(struct bp_db *db, const char *chain, const char *hash, struct bp_index_tx *out)
{
	static const char sql[] = "SELECT block_number, tx_index, from_addr, to_addr, value,"
	    " status, contract_created FROM index_transactions WHERE chain = ? AND hash = ?";
	const char *keys[] = { chain, hash };

	return lookup(db, sql, keys, BP_NITEMS(keys), fill_tx, out);
}

/* ---- Readers for the wallet resource (lib/wallet/wallets.c); self-contained, may move as a block. */

/* Column 0 as an int64 into the int64_t at arg, for lookup. */
static int
fill_int(struct bp_stmt *st, void *arg)
{
	*(int64_t *)arg = bp_col_int(st, 0);
	return 0;
}

int
bp_index_block_time(struct bp_db *db, const char *chain, int64_t number, int64_t *ts)
{
	/* The number is bound as text: the column's INTEGER affinity makes it a number again. */
	static const char sql[] = "SELECT timestamp FROM index_blocks WHERE chain = ? AND number = ?";
	char num[24];
	const char *keys[] = { chain, num };

	snprintf(num, sizeof(num), "%lld", (long long)number);
	return lookup(db, sql, keys, BP_NITEMS(keys), fill_int, ts);
}

int
bp_index_block_hash(struct bp_db *db, const char *chain, int64_t number, char *out,
    size_t outlen)
{
	static const char sql[] = "SELECT hash FROM index_blocks WHERE chain = ? AND number = ?";
	struct text_out t = { out, outlen };
	char num[24];
	const char *keys[] = { chain, num };

	snprintf(num, sizeof(num), "%lld", (long long)number);
	return lookup(db, sql, keys, BP_NITEMS(keys), fill_text, &t);
}

/* ---- End of the wallet resource's readers. */

/* ---- Readers for the NFT resource (lib/nft/nft.c); self-contained, may move as a block. */

/* Column 0 and 1 as int64s into the int64_t[2] at arg, for lookup. */
static int
fill_int2(struct bp_stmt *st, void *arg)
{
	((int64_t *)arg)[0] = bp_col_int(st, 0);
	((int64_t *)arg)[1] = bp_col_int(st, 1);
	return 0;
}

int
bp_index_nft_page(struct bp_db *db, const char *chain, const char *owner, int64_t offset,
    int64_t limit, int (*fn)(const struct bp_index_nft *, void *), void *arg)
{
	/*
	 * Read from index_nft_owners_owned alone (schema/012): it holds every column asked for,
	 * in the list's order, so nothing is sorted and no table row is read. block_number is not
	 * in it and comes back 0.
	 */
	static const char sql[] = "SELECT contract, token_id, standard, quantity, 0"
	    " FROM index_nft_owners WHERE chain = ? AND owner = ?"
	    " ORDER BY contract, length(token_id), token_id LIMIT ? OFFSET ?";
	const char *keys[] = { chain, owner };
	struct bp_stmt *st;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	bp_stmt_int(st, 3, limit);
	bp_stmt_int(st, 4, offset);
	return each_nft_row(st, fn, arg);
}

int
bp_index_nft_count(struct bp_db *db, const char *chain, const char *owner, int64_t *count)
{
	/* Kept by the store (schema/012); an owner the index never saw has no row. */
	static const char sql[] = "SELECT tokens, 0 FROM index_nft_counts"
	    " WHERE chain = ? AND owner = ?";
	const char *keys[] = { chain, owner };
	int64_t v[2];
	int r;

	if ((r = lookup(db, sql, keys, BP_NITEMS(keys), fill_int2, v)) == -1)
		return -1;
	*count = r == 1 ? v[0] : 0;
	return 0;
}

int
bp_index_nft_holders(struct bp_db *db, const char *chain, const char *contract,
    const char *token_id, char *one, size_t onelen, int64_t *count)
{
	static const char sql[] = "SELECT owner FROM index_nft_owners WHERE chain = ?"
	    " AND contract = ? AND token_id = ? LIMIT 2";
	const char *keys[] = { chain, contract, token_id };
	struct bp_stmt *st;
	enum bp_db_step r;
	int rc = 0;

	*count = 0;
	if (onelen > 0)
		one[0] = '\0';
	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	while ((r = bp_stmt_step(st)) == BP_DB_ROW)
		if (++*count == 1 && bp_strlcpy(one, bp_col_text(st, 0), onelen) == -1)
			rc = -1;
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : rc;
}

int
bp_index_nft_collection(struct bp_db *db, const char *chain, const char *contract,
    int64_t *tokens, int64_t *owners)
{
	static const char sql[] = "SELECT count(DISTINCT token_id), count(DISTINCT owner)"
	    " FROM index_nft_owners WHERE chain = ? AND contract = ?";
	const char *keys[] = { chain, contract };
	int64_t v[2];

	if (lookup(db, sql, keys, BP_NITEMS(keys), fill_int2, v) != 1)
		return -1;
	*tokens = v[0];
	*owners = v[1];
	return 0;
}

int
bp_index_nft_tokens_after(struct bp_db *db, const char *chain, const char *contract,
    const char *token_id, int64_t limit, int (*fn)(const struct bp_index_nft *, void *),
    void *arg)
{
	/* One row per token (the first holder's): the primary key's order, no sort. */
	static const char sql[] = "SELECT contract, token_id, min(standard), min(quantity),"
	    " max(block_number) FROM index_nft_owners WHERE chain = ? AND (contract, token_id) >"
	    " (?, ?) GROUP BY contract, token_id ORDER BY contract, token_id LIMIT ?";
	const char *keys[] = { chain, contract, token_id };
	struct bp_stmt *st;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	bp_stmt_int(st, 4, limit);
	return each_nft_row(st, fn, arg);
}

/* ---- End of the NFT resource's readers. */
/* ---- Readers for the bundler (lib/bundler/bundler.c); self-contained, may move as a block. */

/* An index_user_ops row into the bp_index_user_op at arg, for lookup. */
static int
fill_user_op(struct bp_stmt *st, void *arg)
{
	struct bp_index_user_op *o = arg;

	bp_strlcpy(o->tx_hash, bp_col_text(st, 0), sizeof(o->tx_hash));
	o->block_number = bp_col_int(st, 1);
	bp_strlcpy(o->entry_point, bp_col_text(st, 2), sizeof(o->entry_point));
	bp_strlcpy(o->sender, bp_col_text(st, 3), sizeof(o->sender));
	bp_strlcpy(o->nonce, bp_col_text(st, 4), sizeof(o->nonce));
	return 0;
}

int
bp_index_user_op(struct bp_db *db, const char *chain, const char *user_op_hash,
    struct bp_index_user_op *out)
{
	static const char sql[] = "SELECT tx_hash, block_number, entry_point, sender, nonce"
	    " FROM index_user_ops WHERE chain = ? AND user_op_hash = ?"
	    " ORDER BY block_number DESC LIMIT 1";
	const char *keys[] = { chain, user_op_hash };

	return lookup(db, sql, keys, BP_NITEMS(keys), fill_user_op, out);
}

/* ---- End of the bundler's readers. */
/* ---- Readers for webhooks (lib/webhook/webhook_match.c); self-contained, may move as a block. */

int
bp_index_each_block_tx(struct bp_db *db, const char *chain, int64_t number,
    int (*fn)(const struct bp_index_block_tx *, void *), void *arg)
{
	/*
	 * Run by the webhook matcher per stored block, in the store's transaction: the
	 * (chain, block_number) index finds the block's rows, and the columns are handed over
	 * as they are, not copied.
	 */
	static const char sql[] = "SELECT hash, tx_index, from_addr, to_addr, value, status,"
	    " gas_used FROM index_transactions WHERE chain = ? AND block_number = ?"
	    " ORDER BY tx_index";
	const char *keys[] = { chain };
	struct bp_index_block_tx t;
	struct bp_stmt *st;
	enum bp_db_step r;
	int count = 0;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	bp_stmt_int(st, 2, number);
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		t.hash = bp_col_text(st, 0);
		t.tx_index = bp_col_int(st, 1);
		t.from = bp_col_text(st, 2);
		t.to = bp_col_is_null(st, 3) ? NULL : bp_col_text(st, 3);
		t.value = bp_col_text(st, 4);
		t.status = bp_col_is_null(st, 5) ? -1 : (int)bp_col_int(st, 5);
		t.gas_used = bp_col_is_null(st, 6) ? -1 : bp_col_int(st, 6);
		count++;
		if (fn(&t, arg) != 0)
			break;
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : count;
}

/* ---- End of the webhooks' readers. */

/* ---- Readers for the token spam check (lib/token/spam.c); self-contained, may move as a block. */

int
bp_index_receivers(struct bp_db *db, const char *chain, const char *contract, int64_t sample,
    int64_t *receivers, int64_t *passive, int64_t *txs)
{
	/*
	 * The first receivers of the contract's transfers (mints included, the zero address not),
	 * at most the sample; of them, those with no transaction to the contract and no transfer
	 * of its tokens out; and the transactions that delivered to them. One statement, read only:
	 * it is on the token balances path.
	 */
	static const char sql[] =
	    "WITH r AS (SELECT DISTINCT to_addr AS a FROM index_transfers"
	    "  WHERE chain = ?1 AND contract = ?2"
	    "  AND to_addr <> '0x0000000000000000000000000000000000000000' LIMIT ?3)"
	    " SELECT (SELECT count(*) FROM r),"
	    "  (SELECT count(*) FROM r WHERE NOT EXISTS (SELECT 1 FROM index_transactions t"
	    "    WHERE t.chain = ?1 AND t.from_addr = r.a AND t.to_addr = ?2)"
	    "   AND NOT EXISTS (SELECT 1 FROM index_transfers x"
	    "    WHERE x.chain = ?1 AND x.from_addr = r.a AND x.contract = ?2)),"
	    "  (SELECT count(DISTINCT tx_hash) FROM index_transfers"
	    "   WHERE chain = ?1 AND contract = ?2 AND to_addr IN (SELECT a FROM r))";
	const char *keys[] = { chain, contract };
	struct bp_stmt *st;
	int rc = -1;

	*receivers = *passive = *txs = 0;
	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	bp_stmt_int(st, 3, sample);
	if (bp_stmt_step(st) == BP_DB_ROW) {
		*receivers = bp_col_int(st, 0);
		*passive = bp_col_int(st, 1);
		*txs = bp_col_int(st, 2);
		rc = 0;
	}
	bp_stmt_reset(st);
	return rc;
}

/* ---- End of the token spam check's readers. */

/* ---- Readers for the heads (lib/index/index_feed.c, lib/ws/ws_follow.c); self-contained, may move as a block. */

/*
 * The newHeads path: the node's header joined on (chain, number, hash), so a header kept for
 * another hash of that number (a stale row) is not sent (index_headers.h).
 */
#define HEADS_SELECT	"SELECT b.number, b.hash, b.parent_hash, b.timestamp, b.gas_used," \
    " b.gas_limit, b.base_fee, h.header FROM index_blocks b LEFT JOIN index_headers h" \
    " ON h.chain = b.chain AND h.number = b.number AND h.hash = b.hash"

_Static_assert(BP_INDEX_HEADS_BATCH == 64, "the LIMIT of bp_index_heads_after");

/* Calls fn for each row of st (a HEADS_SELECT) until it returns non-zero, and resets st.
 * Returns the number of calls, or -1 on an error. */
static int
each_head_row(struct bp_stmt *st, int (*fn)(const struct bp_index_block_head *, void *),
    void *arg)
{
	struct bp_index_block_head h;
	enum bp_db_step r;
	int count = 0;

	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		h.number = bp_col_int(st, 0);
		bp_strlcpy(h.hash, bp_col_text(st, 1), sizeof(h.hash));
		bp_strlcpy(h.parent_hash, bp_col_text(st, 2), sizeof(h.parent_hash));
		h.timestamp = bp_col_int(st, 3);
		h.gas_used = bp_col_int(st, 4);
		h.gas_limit = bp_col_int(st, 5);
		bp_strlcpy(h.base_fee, bp_col_text(st, 6), sizeof(h.base_fee));
		h.header = bp_col_is_null(st, 7) ? NULL : bp_col_text(st, 7);
		count++;
		if (fn(&h, arg) != 0)
			break;
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : count;
}

int
bp_index_heads_after(struct bp_db *db, const char *chain, int64_t after,
    int (*fn)(const struct bp_index_block_head *, void *), void *arg)
{
	static const char sql[] = HEADS_SELECT " WHERE b.chain = ? AND b.number > ?"
	    " ORDER BY b.number LIMIT 64";
	const char *keys[] = { chain };
	struct bp_stmt *st;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	bp_stmt_int(st, 2, after);
	return each_head_row(st, fn, arg);
}

int
bp_index_heads_recent(struct bp_db *db, const char *chain, int64_t limit,
    int (*fn)(const struct bp_index_block_head *, void *), void *arg)
{
	static const char sql[] = HEADS_SELECT " WHERE b.chain = ? ORDER BY b.number DESC LIMIT ?";
	const char *keys[] = { chain };
	struct bp_stmt *st;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	bp_stmt_int(st, 2, limit);
	return each_head_row(st, fn, arg);
}

/* ---- End of the heads' readers. */

int
bp_index_metrics(struct bp_db *db, const struct bp_config *cfg, struct bp_buf *out)
{
	static const struct {
		const char	*name, *help, *sql;
	} fam[] = {
		{ "blockport_index_head_block", "The last block indexed, by network.",
		    "SELECT chain, head FROM index_cursors ORDER BY chain" },
		{ "blockport_index_node_head_block",
		    "The node's head at the indexer's last pass, by network.",
		    "SELECT chain, chain_head FROM index_cursors WHERE chain_head >= 0 ORDER BY chain" },
		{ "blockport_index_lag_blocks",
		    "Blocks the index is behind the node's head (at the last pass), by network.",
		    "SELECT chain, chain_head - head FROM index_cursors WHERE chain_head >= 0"
		    " ORDER BY chain" },
		{ "blockport_index_last_pass_timestamp_seconds",
		    "Unix time of the indexer's last pass over each network.",
		    "SELECT chain, checked_at FROM index_cursors ORDER BY chain" },
	};
	size_t i;

	(void)cfg;
	for (i = 0; i < BP_NITEMS(fam); i++)
		if (bp_metrics_query(db, out, fam[i].name, "gauge", fam[i].help, "network",
		    fam[i].sql) == -1)
			return -1;
	return 0;
}
