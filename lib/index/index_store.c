/*
 * The indexer's store step (index_store.h): the writes of the index_* tables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/db.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/address.h"
#include "evm/u256.h"
#include "index_headers.h"
#include "index_logs.h"
#include "index_store.h"

#define HASH_STR	BP_BLOCKS_HASH_STR
#define ADDR_STR	BP_BLOCKS_ADDR_STR

static void
addr_str(const uint8_t a[20], char out[ADDR_STR])
{
	bp_addr_format_lower(a, out, ADDR_STR);
}

static void
u256_str(const struct bp_u256 *v, char out[BP_U256_DEC_MAX])
{
	bp_u256_to_dec(v, out, BP_U256_DEC_MAX);
}

int
bp_index_store_cursor_load(struct bp_db *db, const struct bp_index_store_chain *c,
    struct bp_index_store_cursor *cur)
{
	static const char sql[] = "SELECT head, head_hash FROM index_cursors WHERE chain = ?";
	struct bp_stmt *st;
	enum bp_db_step r;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	r = bp_stmt_step(st);
	if (r == BP_DB_ROW) {
		cur->head = bp_col_int(st, 0);
		bp_strlcpy(cur->hash, bp_col_text(st, 1), sizeof(cur->hash));
	} else if (r == BP_DB_DONE) {
		/* A new chain starts at start_block; the cursor is the block before it. */
		cur->head = c->start_block - 1;
		cur->hash[0] = '\0';
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

static int64_t
confirmed_of(const struct bp_index_store_chain *c, int64_t head, int64_t chain_head)
{
	int64_t conf = chain_head - c->confirmations;

	if (conf > head)
		conf = head;
	return conf < -1 ? -1 : conf;
}

int
bp_index_store_cursor_save(struct bp_db *db, const struct bp_index_store_chain *c,
    const struct bp_index_store_cursor *cur, int64_t chain_head, int reorg)
{
	static const char sql[] = "INSERT INTO index_cursors (chain, head, head_hash, chain_head,"
	    " confirmed, checked_at, reorgs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT(chain) DO UPDATE SET head = ?2, head_hash = ?3, chain_head = ?4,"
	    " confirmed = ?5, checked_at = ?6, reorgs = index_cursors.reorgs + ?7";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, cur->head);
	bp_stmt_text(st, 3, cur->hash);
	bp_stmt_int(st, 4, chain_head);
	bp_stmt_int(st, 5, confirmed_of(c, cur->head, chain_head));
	bp_stmt_int(st, 6, (int64_t)time(NULL));
	bp_stmt_int(st, 7, reorg ? 1 : 0);
	return bp_stmt_run(st);
}

static int
store_block(struct bp_db *db, const struct bp_index_store_chain *c, const cJSON *blk, const char *hash,
    int64_t number, struct bp_index_store_counts *n)
{
	static const char sql[] = "INSERT INTO index_blocks (chain, number, hash, parent_hash,"
	    " timestamp, gas_used, gas_limit, base_fee, tx_count)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
	char parent[HASH_STR], basefee[BP_U256_DEC_MAX];
	uint64_t ts, used, limit;
	struct bp_stmt *st;
	int ntx, rc;

	if (bp_blocks_jhash(blk, "parentHash", parent) == -1 ||
	    bp_blocks_jquantity(blk, "timestamp", &ts) == -1 ||
	    bp_blocks_jquantity(blk, "gasUsed", &used) == -1 ||
	    bp_blocks_jquantity(blk, "gasLimit", &limit) == -1 ||
	    ts > INT64_MAX || used > INT64_MAX || limit > INT64_MAX) {
		bp_err("%s: block %lld: bad header fields", c->key, (long long)number);
		return -1;
	}
	ntx = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(blk, "transactions"));
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, number);
	bp_stmt_text(st, 3, hash);
	bp_stmt_text(st, 4, parent);
	bp_stmt_int(st, 5, (int64_t)ts);
	bp_stmt_int(st, 6, (int64_t)used);
	bp_stmt_int(st, 7, (int64_t)limit);
	bp_stmt_text(st, 8, bp_blocks_jdec(blk, "baseFeePerGas", basefee) == 0 ? basefee : NULL);
	bp_stmt_int(st, 9, ntx);
	rc = bp_stmt_run(st);
	n->blocks++;
	return rc;
}

static int
store_tx(struct bp_db *db, const struct bp_index_store_chain *c, const cJSON *tx, const cJSON *receipt,
    int64_t number, struct bp_index_store_counts *n)
{
	static const char sql[] = "INSERT INTO index_transactions (chain, hash, block_number,"
	    " tx_index, from_addr, to_addr, value, nonce, status, gas_used, contract_created)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	char hash[HASH_STR], from[ADDR_STR], to[ADDR_STR], value[BP_U256_DEC_MAX];
	char created[ADDR_STR];
	uint64_t idx, nonce, status = 2, gas = 0;
	struct bp_stmt *st;
	int rc, have_gas = 0;

	if (bp_blocks_jhash(tx, "hash", hash) == -1 || bp_blocks_jaddr(tx, "from", from, 0) == -1 ||
	    bp_blocks_jaddr(tx, "to", to, 1) == -1 || bp_blocks_jdec(tx, "value", value) == -1 ||
	    bp_blocks_jquantity(tx, "transactionIndex", &idx) == -1 ||
	    bp_blocks_jquantity(tx, "nonce", &nonce) == -1 ||
	    idx > INT64_MAX || nonce > INT64_MAX) {
		bp_err("%s: a transaction of block %lld has bad fields", c->key, (long long)number);
		return -1;
	}
	created[0] = '\0';
	if (receipt != NULL) {
		/* Receipts before Byzantium carry a state root instead of a status. */
		if (bp_blocks_jquantity(receipt, "status", &status) == -1 || status > 1)
			status = 2;
		have_gas = bp_blocks_jquantity(receipt, "gasUsed", &gas) == 0 && gas <= INT64_MAX;
		if (bp_blocks_jaddr(receipt, "contractAddress", created, 1) == -1 || status == 0)
			created[0] = '\0';
	}
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, hash);
	bp_stmt_int(st, 3, number);
	bp_stmt_int(st, 4, (int64_t)idx);
	bp_stmt_text(st, 5, from);
	bp_stmt_text(st, 6, to[0] ? to : NULL);
	bp_stmt_text(st, 7, value);
	bp_stmt_int(st, 8, (int64_t)nonce);
	if (status <= 1)
		bp_stmt_int(st, 9, (int64_t)status);
	if (have_gas)
		bp_stmt_int(st, 10, (int64_t)gas);
	bp_stmt_text(st, 11, created[0] ? created : NULL);
	rc = bp_stmt_run(st);
	n->txs++;
	return rc;
}

static int
insert_transfer(struct bp_db *db, const struct bp_index_store_chain *c, const struct bp_blocks_logpos *p,
    int64_t batch_index, const char *standard, const char *operator_, const char *from,
    const char *to, const char *token_id, const char *value)
{
	static const char sql[] = "INSERT INTO index_transfers (chain, block_number, tx_hash,"
	    " log_index, batch_index, standard, contract, from_addr, to_addr, token_id, value,"
	    " operator) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, p->block);
	bp_stmt_text(st, 3, p->tx_hash);
	bp_stmt_int(st, 4, p->log_index);
	bp_stmt_int(st, 5, batch_index);
	bp_stmt_text(st, 6, standard);
	bp_stmt_text(st, 7, p->contract);
	bp_stmt_text(st, 8, from);
	bp_stmt_text(st, 9, to);
	bp_stmt_text(st, 10, token_id);
	bp_stmt_text(st, 11, value);
	bp_stmt_text(st, 12, operator_);
	return bp_stmt_run(st);
}

static int
erc20_touch(struct bp_db *db, const struct bp_index_store_chain *c, const char *owner,
    const char *contract, int64_t block)
{
	/* The first block stays: a later transfer of the pair changes nothing. */
	static const char sql[] = "INSERT INTO index_erc20_holdings (chain, owner, contract,"
	    " first_block) VALUES (?, ?, ?, ?) ON CONFLICT (chain, owner, contract) DO NOTHING";
	struct bp_stmt *st;

	if (strcmp(owner, BP_INDEX_STORE_ZERO_ADDR) == 0)
		return 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, owner);
	bp_stmt_text(st, 3, contract);
	bp_stmt_int(st, 4, block);
	return bp_stmt_run(st);
}

/* Moves owner's row count in index_nft_counts (schema/012) by delta. 0 or -1. */
static int
count_move(struct bp_db *db, const struct bp_index_store_chain *c, const char *owner, int delta)
{
	static const char sql[] = "INSERT INTO index_nft_counts (chain, owner, tokens)"
	    " VALUES (?, ?, ?) ON CONFLICT (chain, owner) DO UPDATE SET"
	    " tokens = index_nft_counts.tokens + excluded.tokens";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, owner);
	bp_stmt_int(st, 3, delta);
	return bp_stmt_run(st);
}

int
bp_index_store_owners_clear(struct bp_db *db, const struct bp_index_store_chain *c, const char *contract,
    const char *id, const char *standard)
{
	/* The holders lose a row each, in the counts first, while the rows still name them. */
	static const char uncount[] = "UPDATE index_nft_counts SET tokens = tokens - 1"
	    " WHERE chain = ?1 AND owner IN (SELECT owner FROM index_nft_owners WHERE chain = ?1"
	    " AND contract = ?2 AND token_id = ?3 AND standard = ?4)";
	static const char sql[] = "DELETE FROM index_nft_owners WHERE chain = ?1 AND contract = ?2"
	    " AND token_id = ?3 AND standard = ?4";
	const char *const stmts[] = { uncount, sql };
	struct bp_stmt *st;
	size_t i;

	for (i = 0; i < BP_NITEMS(stmts); i++) {
		if ((st = bp_db_stmt(db, stmts[i])) == NULL)
			return -1;
		bp_stmt_text(st, 1, c->key);
		bp_stmt_text(st, 2, contract);
		bp_stmt_text(st, 3, id);
		bp_stmt_text(st, 4, standard);
		if (bp_stmt_run(st) == -1)
			return -1;
	}
	return 0;
}

/* Whether owner has a row for the token: 1, 0, or -1 on an error. */
static int
owner_held(struct bp_db *db, const struct bp_index_store_chain *c, const char *contract,
    const char *id, const char *owner)
{
	static const char sql[] = "SELECT 1 FROM index_nft_owners WHERE chain = ?"
	    " AND contract = ? AND token_id = ? AND owner = ?";
	struct bp_stmt *st;
	enum bp_db_step r;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, id);
	bp_stmt_text(st, 4, owner);
	r = bp_stmt_step(st);
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : r == BP_DB_ROW;
}

int
bp_index_store_owner_set(struct bp_db *db, const struct bp_index_store_chain *c, const char *contract,
    const char *id, const char *owner, const char *standard, const char *quantity,
    int64_t block)
{
	static const char put[] = "INSERT INTO index_nft_owners (chain, contract, token_id, owner,"
	    " standard, quantity, block_number) VALUES (?, ?, ?, ?, ?, ?, ?)"
	    " ON CONFLICT (chain, contract, token_id, owner) DO UPDATE SET"
	    " standard = excluded.standard, quantity = excluded.quantity,"
	    " block_number = excluded.block_number";
	static const char del[] = "DELETE FROM index_nft_owners WHERE chain = ? AND contract = ?"
	    " AND token_id = ? AND owner = ?";
	int zero = strcmp(quantity, "0") == 0, held;
	struct bp_stmt *st;

	if ((held = owner_held(db, c, contract, id, owner)) == -1)
		return -1;
	if (zero && !held)
		return 0;
	if ((st = bp_db_stmt(db, zero ? del : put)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, id);
	bp_stmt_text(st, 4, owner);
	if (!zero) {
		bp_stmt_text(st, 5, standard);
		bp_stmt_text(st, 6, quantity);
		bp_stmt_int(st, 7, block);
	}
	if (bp_stmt_run(st) == -1)
		return -1;
	/* A new row counts one more; a removed one, one less; a changed quantity, none. */
	return zero ? count_move(db, c, owner, -1) : held ? 0 : count_move(db, c, owner, 1);
}

/* owner's current ERC-1155 quantity of a token into *q (zero when none). 0 or -1. */
static int
owner_get(struct bp_db *db, const struct bp_index_store_chain *c, const char *contract, const char *id,
    const char *owner, struct bp_u256 *q)
{
	static const char sql[] = "SELECT quantity FROM index_nft_owners WHERE chain = ?"
	    " AND contract = ? AND token_id = ? AND owner = ?";
	struct bp_stmt *st;
	enum bp_db_step r;
	const char *t;

	bp_u256_from_u64(q, 0);
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, id);
	bp_stmt_text(st, 4, owner);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		t = bp_col_text(st, 0);
		if (bp_u256_from_dec(q, t, strlen(t)) == -1)
			bp_u256_from_u64(q, 0);
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

/*
 * Adds (sign > 0) or takes (sign < 0) v from owner's ERC-1155 quantity. A quantity that would go
 * below zero (history before start_block) stays at zero.
 */
static int
owner_add(struct bp_db *db, const struct bp_index_store_chain *c, const char *contract, const char *id,
    const char *owner, const struct bp_u256 *v, int sign, int64_t block)
{
	char dec[BP_U256_DEC_MAX];
	struct bp_u256 q;

	if (strcmp(owner, BP_INDEX_STORE_ZERO_ADDR) == 0)
		return 0;
	if (owner_get(db, c, contract, id, owner, &q) == -1)
		return -1;
	if (sign > 0)
		bp_u256_add(&q, &q, v);
	else if (bp_u256_sub(&q, &q, v) != 0)
		bp_u256_from_u64(&q, 0);
	u256_str(&q, dec);
	return bp_index_store_owner_set(db, c, contract, id, owner, "erc1155", dec, block);
}

static int
store_1155(struct bp_db *db, const struct bp_index_store_chain *c, const struct bp_blocks_logpos *p,
    int64_t bi, const char *op, const char *from, const char *to, const struct bp_u256 *id,
    const struct bp_u256 *v)
{
	char ids[BP_U256_DEC_MAX], vs[BP_U256_DEC_MAX];

	u256_str(id, ids);
	u256_str(v, vs);
	if (insert_transfer(db, c, p, bi, "erc1155", op, from, to, ids, vs) == -1 ||
	    owner_add(db, c, p->contract, ids, from, v, -1, p->block) == -1 ||
	    owner_add(db, c, p->contract, ids, to, v, 1, p->block) == -1)
		return -1;
	return 0;
}

static int
store_user_op(struct bp_db *db, const struct bp_index_store_chain *c, const struct bp_blocks_logpos *p,
    const struct bp_index_event *ev)
{
	static const char sql[] = "INSERT INTO index_user_ops (chain, user_op_hash, sender,"
	    " paymaster, nonce, success, actual_gas_cost, actual_gas_used, tx_hash, block_number,"
	    " log_index, entry_point) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	char h[HASH_STR], s[ADDR_STR], pm[ADDR_STR], ep[ADDR_STR], nonce[BP_U256_DEC_MAX];
	char cost[BP_U256_DEC_MAX], used[BP_U256_DEC_MAX];
	struct bp_stmt *st;

	bp_hex_encode(ev->user_op_hash, 32, h, sizeof(h));
	addr_str(ev->sender, s);
	addr_str(ev->paymaster, pm);
	addr_str(ev->entry_point, ep);
	u256_str(&ev->nonce, nonce);
	u256_str(&ev->gas_cost, cost);
	u256_str(&ev->gas_used, used);
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, h);
	bp_stmt_text(st, 3, s);
	bp_stmt_text(st, 4, pm);
	bp_stmt_text(st, 5, nonce);
	bp_stmt_int(st, 6, ev->success);
	bp_stmt_text(st, 7, cost);
	bp_stmt_text(st, 8, used);
	bp_stmt_text(st, 9, p->tx_hash);
	bp_stmt_int(st, 10, p->block);
	bp_stmt_int(st, 11, p->log_index);
	bp_stmt_text(st, 12, ep);
	return bp_stmt_run(st);
}

static int
store_deployment(struct bp_db *db, const struct bp_index_store_chain *c, const struct bp_blocks_logpos *p,
    const struct bp_index_event *ev)
{
	static const char sql[] = "INSERT INTO index_account_deployments (chain, sender, factory,"
	    " paymaster, user_op_hash, tx_hash, block_number, log_index, entry_point)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
	char h[HASH_STR], s[ADDR_STR], f[ADDR_STR], pm[ADDR_STR], ep[ADDR_STR];
	struct bp_stmt *st;

	bp_hex_encode(ev->user_op_hash, 32, h, sizeof(h));
	addr_str(ev->sender, s);
	addr_str(ev->factory, f);
	addr_str(ev->paymaster, pm);
	addr_str(ev->entry_point, ep);
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, s);
	bp_stmt_text(st, 3, f);
	bp_stmt_text(st, 4, pm);
	bp_stmt_text(st, 5, h);
	bp_stmt_text(st, 6, p->tx_hash);
	bp_stmt_int(st, 7, p->block);
	bp_stmt_int(st, 8, p->log_index);
	bp_stmt_text(st, 9, ep);
	return bp_stmt_run(st);
}

/*
 * Reads, decodes and stores the log j. The log, its position and its event are left in *e, the
 * data in c->data (valid until the next log). 0, or -1 when the log is malformed (logged) or the
 * database failed.
 */
static int
store_log(struct bp_db *db, struct bp_index_store_chain *c, const cJSON *j, struct bp_index_store_event *e,
    struct bp_index_store_counts *n)
{
	char from[ADDR_STR], to[ADDR_STR], op[ADDR_STR], id[BP_U256_DEC_MAX];
	char v[BP_U256_DEC_MAX];
	const struct bp_blocks_logpos *p = &e->pos;
	const struct bp_index_event *ev = &e->ev;
	size_t i;

	memset(e, 0, sizeof(*e));
	if (bp_blocks_parse_log(j, &e->log, &e->pos, &c->data, &c->datacap) == -1) {
		bp_err("%s: a log in the answer has bad fields", c->key);
		return -1;
	}
	n->logs++;
	switch (bp_index_event_decode(&e->log, c->entry_points, c->n_entry_points,
	    &e->ev)) {
	case BP_INDEX_EVENT_OTHER:
		return 0;
	case BP_INDEX_EVENT_MALFORMED:
		n->malformed++;
		bp_log(BP_LOG_DEBUG, "%s: skipping a malformed transfer log %s#%lld", c->key,
		    p->tx_hash, (long long)p->log_index);
		return 0;
	case BP_INDEX_EVENT_ERC20:
		addr_str(ev->from, from);
		addr_str(ev->to, to);
		u256_str(&ev->value, v);
		n->transfers++;
		if (insert_transfer(db, c, p, 0, "erc20", NULL, from, to, NULL, v) == -1 ||
		    erc20_touch(db, c, from, p->contract, p->block) == -1 ||
		    erc20_touch(db, c, to, p->contract, p->block) == -1)
			return -1;
		return 0;
	case BP_INDEX_EVENT_ERC721:
		addr_str(ev->from, from);
		addr_str(ev->to, to);
		u256_str(&ev->id, id);
		n->transfers++;
		if (insert_transfer(db, c, p, 0, "erc721", NULL, from, to, id, "1") == -1 ||
		    bp_index_store_owners_clear(db, c, p->contract, id, "erc721") == -1)
			return -1;
		if (strcmp(to, BP_INDEX_STORE_ZERO_ADDR) != 0 &&
		    bp_index_store_owner_set(db, c, p->contract, id, to, "erc721", "1", p->block) == -1)
			return -1;
		return 0;
	case BP_INDEX_EVENT_ERC1155_SINGLE:
		addr_str(ev->operator_, op);
		addr_str(ev->from, from);
		addr_str(ev->to, to);
		n->transfers++;
		return store_1155(db, c, p, 0, op, from, to, &ev->id, &ev->value);
	case BP_INDEX_EVENT_ERC1155_BATCH:
		addr_str(ev->operator_, op);
		addr_str(ev->from, from);
		addr_str(ev->to, to);
		for (i = 0; i < ev->count; i++) {
			struct bp_u256 tid, tv;

			bp_index_event_batch_item(ev, i, &tid, &tv);
			n->transfers++;
			if (store_1155(db, c, p, (int64_t)i, op, from, to, &tid, &tv) == -1)
				return -1;
		}
		return 0;
	case BP_INDEX_EVENT_USER_OP:
		n->userops++;
		return store_user_op(db, c, p, ev);
	case BP_INDEX_EVENT_ACCOUNT_DEPLOYED:
		n->userops++;
		return store_deployment(db, c, p, ev);
	default:
		break;
	}
	return 0;
}

int
bp_index_store_hash(struct bp_db *db, const struct bp_index_store_chain *c, int64_t number,
    char out[HASH_STR])
{
	static const char sql[] = "SELECT hash FROM index_blocks WHERE chain = ? AND number = ?";
	struct bp_stmt *st;
	enum bp_db_step r;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, number);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW)
		bp_strlcpy(out, bp_col_text(st, 0), HASH_STR);
	bp_stmt_reset(st);
	return r == BP_DB_ROW ? 1 : r == BP_DB_DONE ? 0 : -1;
}

int
bp_index_store_delete(struct bp_db *db, const struct bp_index_store_chain *c, int64_t number,
    int above)
{
	static const char *const rollback[] = {
		"DELETE FROM index_blocks WHERE chain = ? AND number > ?",
		"DELETE FROM index_transactions WHERE chain = ? AND block_number > ?",
		"DELETE FROM index_transfers WHERE chain = ? AND block_number > ?",
		"DELETE FROM index_user_ops WHERE chain = ? AND block_number > ?",
		"DELETE FROM index_account_deployments WHERE chain = ? AND block_number > ?",
		/* first_block above number: no transfer at or below it touched the pair. */
		"DELETE FROM index_erc20_holdings WHERE chain = ? AND first_block > ?",
	};
	/* The retention: the raw rows only; what is derived from them is kept whole. */
	static const char *const prune[] = {
		"DELETE FROM index_blocks WHERE chain = ? AND number <= ?",
		"DELETE FROM index_transactions WHERE chain = ? AND block_number <= ?",
	};
	const char *const *dels = above ? rollback : prune;
	size_t i, n = above ? BP_NITEMS(rollback) : BP_NITEMS(prune);
	struct bp_stmt *st;

	for (i = 0; i < n; i++) {
		if ((st = bp_db_stmt(db, dels[i])) == NULL)
			return -1;
		bp_stmt_text(st, 1, c->key);
		bp_stmt_int(st, 2, number);
		if (bp_stmt_run(st) == -1)
			return -1;
	}
	return 0;
}

/* ---- the hook's view of a batch ---- */

/* The logs of a batch, kept for the hook: each with its own copy of its data. */
struct kept {
	struct bp_index_store_event	*ev;
	size_t			 n, cap;
};

static void
kept_free(struct kept *k)
{
	size_t i;

	for (i = 0; k->ev != NULL && i < k->n; i++)
		free((void *)k->ev[i].log.data);
	free(k->ev);
	memset(k, 0, sizeof(*k));
}

/*
 * Appends e to k, with a copy of its data; an ERC-1155 batch's views are moved into the copy.
 * 0, or -1 when out of memory.
 */
static int
kept_add(struct kept *k, const struct bp_index_store_event *e)
{
	struct bp_index_store_event *d;
	uint8_t *data;

	if (k->n == k->cap) {
		size_t ncap = k->cap ? k->cap * 2 : 64;

		if ((d = realloc(k->ev, ncap * sizeof(*d))) == NULL)
			return -1;
		k->ev = d;
		k->cap = ncap;
	}
	if ((data = malloc(e->log.datalen ? e->log.datalen : 1)) == NULL)
		return -1;
	if (e->log.datalen > 0)
		memcpy(data, e->log.data, e->log.datalen);
	d = &k->ev[k->n++];
	*d = *e;
	d->log.data = data;
	if (d->ev.kind == BP_INDEX_EVENT_ERC1155_BATCH) {
		d->ev.ids = data + (e->ev.ids - e->log.data);
		d->ev.values = data + (e->ev.values - e->log.data);
	}
	return 0;
}

/*
 * Calls the hook's block function once per block of b, oldest first, with the block's logs in
 * the order they were stored (a stable bucket sort by block: bp_index_fetch_check made sure every
 * log's block is one of b's). 0, or -1 when the hook failed or out of memory.
 */
static int
hook_blocks(struct bp_db *db, const struct bp_index_store_chain *c, const struct bp_index_fetch *b,
    const struct kept *k)
{
	struct bp_index_store_event *sorted = NULL;
	size_t *start = NULL, i;
	char parent[HASH_STR];
	int rc = -1;

	if ((start = calloc(b->r.n + 1, sizeof(*start))) == NULL ||
	    (sorted = malloc((k->n ? k->n : 1) * sizeof(*sorted))) == NULL)
		goto out;
	for (i = 0; i < k->n; i++) {
		if (k->ev[i].pos.block < b->r.from || k->ev[i].pos.block > b->r.to)
			goto out;	/* bp_index_fetch_check refuses such a batch */
		start[k->ev[i].pos.block - b->r.from + 1]++;
	}
	for (i = 1; i <= b->r.n; i++)
		start[i] += start[i - 1];
	for (i = 0; i < k->n; i++)
		sorted[start[k->ev[i].pos.block - b->r.from]++] = k->ev[i];
	/* start[i] is now the end of block i's events, and so the start of block i + 1's. */
	for (i = 0; i < b->r.n; i++) {
		struct bp_index_store_block blk;
		size_t first = i == 0 ? 0 : start[i - 1];

		if (bp_blocks_jhash(b->r.blocks[i], "parentHash", parent) == -1)
			goto out;
		blk.number = b->r.from + (int64_t)i;
		blk.hash = b->hashes[i];
		blk.parent_hash = parent;
		blk.events = sorted + first;
		blk.nevents = start[i] - first;
		blk.receipts = b->r.receipts != NULL ? b->r.receipts[i] : NULL;
		blk.block = b->r.blocks[i];
		blk.traces = b->traces != NULL ? b->traces[i] : NULL;
		blk.traces_flat = b->traces_flat;
		if (c->hook->block(c->hook->arg, db, c->key, &blk) == -1) {
			bp_err("%s: the store hook failed on block %lld", c->key,
			    (long long)blk.number);
			goto out;
		}
	}
	rc = 0;
out:
	free(sorted);
	free(start);
	return rc;
}

/* ---- a batch ---- */

/* The transactionIndex of log l, or -1 when it has none. */
static int64_t
tx_index_of(const cJSON *l)
{
	uint64_t ti;

	return bp_blocks_jquantity(l, "transactionIndex", &ti) == 0 && ti <= INT64_MAX ?
	    (int64_t)ti : -1;
}

int
bp_index_store_batch(struct bp_db *db, struct bp_index_store_chain *c, const struct bp_index_fetch *b,
    int64_t chain_head, struct bp_index_store_counts *n)
{
	int hooked = c->hook != NULL && c->hook->block != NULL;
	struct bp_index_store_cursor cur;
	struct bp_index_store_event e;
	struct kept k;
	size_t i, j;

	memset(&k, 0, sizeof(k));
	if (b->r.n == 0 || bp_db_begin(db) == -1)
		return -1;
	for (i = 0; i < b->r.n; i++) {
		const cJSON *blk = b->r.blocks[i], *tx, *r = NULL;
		int64_t num = b->r.from + (int64_t)i;

		if (store_block(db, c, blk, b->hashes[i], num, n) == -1)
			goto fail;
		/* The node's header, for the WebSocket newHeads subscriptions, near the head only. */
		if (num > chain_head - BP_INDEX_LOGS_WINDOW &&
		    bp_index_headers_put(db, c->key, num, b->hashes[i], blk) == -1)
			goto fail;
		if (b->r.receipts != NULL && b->r.receipts[i] != NULL)
			r = b->r.receipts[i]->child;
		cJSON_ArrayForEach(tx, cJSON_GetObjectItemCaseSensitive(blk, "transactions")) {
			if (store_tx(db, c, tx, r, num, n) == -1)
				goto fail;
			if (r != NULL)
				r = r->next;
		}
	}
	for (j = 0; j < b->r.nlogs; j++) {
		const cJSON *l;

		cJSON_ArrayForEach(l, b->r.logs[j]) {
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(l, "removed")))
				continue;
			if (store_log(db, c, l, &e, n) == -1)
				goto fail;
			/* The raw log, for the WebSocket logs subscriptions, near the head only. */
			if (e.pos.block > chain_head - BP_INDEX_LOGS_WINDOW && e.pos.block >= b->r.from &&
			    e.pos.block <= b->r.to && bp_index_logs_put(db, c->key,
			    b->hashes[e.pos.block - b->r.from], tx_index_of(l), &e.pos, &e.log) == -1)
				goto fail;
			if (hooked && kept_add(&k, &e) == -1)
				goto fail;
		}
	}
	if (hooked && hook_blocks(db, c, b, &k) == -1)
		goto fail;
	if (bp_index_logs_delete(db, c->key, b->r.to - BP_INDEX_LOGS_WINDOW, 0) == -1 ||
	    bp_index_headers_delete(db, c->key, b->r.to - BP_INDEX_LOGS_WINDOW, 0) == -1)
		goto fail;
	cur.head = b->r.to;
	bp_strlcpy(cur.hash, b->hashes[b->r.n - 1], sizeof(cur.hash));
	if (bp_index_store_cursor_save(db, c, &cur, chain_head, 0) == -1 || bp_db_commit(db) == -1)
		goto fail;
	kept_free(&k);
	return 0;
fail:
	kept_free(&k);
	bp_db_rollback(db);
	return -1;
}
