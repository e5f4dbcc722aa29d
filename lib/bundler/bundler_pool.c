/*
 * The bundler's mempool and bundles: rows in and out (bundler_pool.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bundler_pool.h"
#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/u256.h"
#include "core/metrics.h"

#define OP_COLS "chain, user_op_hash, entry_point, sender, nonce, max_fee, max_priority, gas," \
	" staked, op_json, status, reason, bundle_id, tx_hash, block_number, block_hash," \
	" success, created_at"

void
bp_bundler_pool_op_free(struct bp_bundler_pool_op *op)
{
	free(op->op_json);
	op->op_json = NULL;
}

void
bp_bundler_pool_bundle_free(struct bp_bundler_pool_bundle *b)
{
	free(b->raw_tx);
	b->raw_tx = NULL;
}

static void
copy(char *dst, const char *src, size_t n)
{
	if (bp_strlcpy(dst, src, n) == -1)
		dst[0] = '\0';
}

/* Fills op from a row of OP_COLS; 0, or -1 out of memory. */
static int
op_row(struct bp_stmt *st, struct bp_bundler_pool_op *op)
{
	memset(op, 0, sizeof(*op));
	copy(op->chain, bp_col_text(st, 0), sizeof(op->chain));
	copy(op->hash, bp_col_text(st, 1), sizeof(op->hash));
	copy(op->entry_point, bp_col_text(st, 2), sizeof(op->entry_point));
	copy(op->sender, bp_col_text(st, 3), sizeof(op->sender));
	copy(op->nonce, bp_col_text(st, 4), sizeof(op->nonce));
	copy(op->max_fee, bp_col_text(st, 5), sizeof(op->max_fee));
	copy(op->max_priority, bp_col_text(st, 6), sizeof(op->max_priority));
	op->gas = bp_col_int(st, 7);
	op->staked = (int)bp_col_int(st, 8);
	if ((op->op_json = strdup(bp_col_text(st, 9))) == NULL)
		return -1;
	copy(op->status, bp_col_text(st, 10), sizeof(op->status));
	copy(op->reason, bp_col_text(st, 11), sizeof(op->reason));
	op->bundle_id = bp_col_is_null(st, 12) ? 0 : bp_col_int(st, 12);
	copy(op->tx_hash, bp_col_text(st, 13), sizeof(op->tx_hash));
	op->block_number = bp_col_is_null(st, 14) ? -1 : bp_col_int(st, 14);
	copy(op->block_hash, bp_col_text(st, 15), sizeof(op->block_hash));
	op->success = bp_col_is_null(st, 16) ? -1 : (int)bp_col_int(st, 16);
	op->created_at = bp_col_int(st, 17);
	return 0;
}

int
bp_bundler_pool_get(struct bp_db *db, const char *chain, const char *hash, struct bp_bundler_pool_op *out)
{
	static const char sql[] = "SELECT " OP_COLS " FROM bundler_user_ops"
	    " WHERE chain = ? AND user_op_hash = ?";
	struct bp_stmt *st;
	enum bp_db_step step;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, chain) == -1 ||
	    bp_stmt_text(st, 2, hash) == -1)
		return -1;
	if ((step = bp_stmt_step(st)) == BP_DB_ROW)
		rc = op_row(st, out) == 0 ? 1 : -1;
	else if (step == BP_DB_DONE)
		rc = 0;
	bp_stmt_reset(st);
	return rc;
}

/* A stored word (64 hex digits, no 0x) as a number; 0 or -1. */
static int
word(const char *s, struct bp_u256 *out)
{
	char hex[2 + 64 + 1] = "0x";

	if (bp_strlcpy(hex + 2, s, sizeof(hex) - 2) == -1)
		return -1;
	return bp_u256_from_hex(out, hex, strlen(hex));
}

/* 1 when a >= b * (100 + BP_BUNDLER_POOL_REPLACE_BUMP) / 100, as geth's pool rounds (64-hex words). */
static int
bumped(const char *a, const char *b)
{
	struct bp_u256 ua, ub, need;
	uint64_t rem;

	if (word(a, &ua) == -1 || word(b, &ub) == -1)
		return 0;
	if (bp_u256_mul_u64(&need, &ub, 100 + BP_BUNDLER_POOL_REPLACE_BUMP) == -1)
		return 0;
	bp_u256_div_u64(&need, &need, 100, &rem);
	return bp_u256_cmp(&ua, &need) >= 0;
}

static int
insert_op(struct bp_db *db, const struct bp_bundler_pool_op *op, int64_t now)
{
	static const char sql[] = "INSERT INTO bundler_user_ops (chain, user_op_hash, entry_point,"
	    " sender, nonce, max_fee, max_priority, gas, staked, op_json, status, created_at,"
	    " updated_at, paymaster, paymaster_staked)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)";
	struct bp_stmt *st;
	int rc = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	if (bp_stmt_text(st, 1, op->chain) == 0 && bp_stmt_text(st, 2, op->hash) == 0 &&
	    bp_stmt_text(st, 3, op->entry_point) == 0 && bp_stmt_text(st, 4, op->sender) == 0 &&
	    bp_stmt_text(st, 5, op->nonce) == 0 && bp_stmt_text(st, 6, op->max_fee) == 0 &&
	    bp_stmt_text(st, 7, op->max_priority) == 0 && bp_stmt_int(st, 8, op->gas) == 0 &&
	    bp_stmt_int(st, 9, op->staked) == 0 && bp_stmt_text(st, 10, op->op_json) == 0 &&
	    bp_stmt_int(st, 11, now) == 0 && bp_stmt_int(st, 12, now) == 0 &&
	    bp_stmt_text(st, 13, op->paymaster) == 0 &&
	    bp_stmt_int(st, 14, op->paymaster_staked) == 0 && bp_stmt_step(st) == BP_DB_DONE)
		rc = 0;
	bp_stmt_reset(st);
	return rc;
}

static int
set_status(struct bp_db *db, const char *chain, const char *hash, const char *from,
    const char *to, const char *reason)
{
	static const char sql[] = "UPDATE bundler_user_ops SET status = ?, reason = ?,"
	    " updated_at = ? WHERE chain = ? AND user_op_hash = ? AND status = ?";
	struct bp_stmt *st;
	int rc = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	if (bp_stmt_text(st, 1, to) == 0 && bp_stmt_text(st, 2, reason) == 0 &&
	    bp_stmt_int(st, 3, (int64_t)time(NULL)) == 0 && bp_stmt_text(st, 4, chain) == 0 &&
	    bp_stmt_text(st, 5, hash) == 0 && bp_stmt_text(st, 6, from) == 0 &&
	    bp_stmt_step(st) == BP_DB_DONE)
		rc = bp_db_changes(db) == 1 ? 0 : -1;
	bp_stmt_reset(st);
	return rc;
}

/* Within the add transaction: the result of the checks, or BP_BUNDLER_POOL_ADDED to insert. */
/* Within the add transaction: whether an unstaked paymaster is at its cap. */
static enum bp_bundler_pool_add_result
paymaster_check(struct bp_db *db, const struct bp_bundler_pool_op *op, int cap)
{
	static const char sql[] = "SELECT count(*) FROM bundler_user_ops"
	    " WHERE chain = ? AND paymaster = ? AND status IN ('pending', 'submitted')";
	enum bp_bundler_pool_add_result res = BP_BUNDLER_POOL_ERROR;
	struct bp_stmt *st;

	if (op->paymaster[0] == '\0' || cap <= 0)	/* the caller's bound, by reputation and stake */
		return BP_BUNDLER_POOL_ADDED;
	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, op->chain) == -1 ||
	    bp_stmt_text(st, 2, op->paymaster) == -1)
		return BP_BUNDLER_POOL_ERROR;
	if (bp_stmt_step(st) == BP_DB_ROW)
		res = bp_col_int(st, 0) >= cap ? BP_BUNDLER_POOL_PAYMASTER_CAP : BP_BUNDLER_POOL_ADDED;
	bp_stmt_reset(st);
	return res;
}

static enum bp_bundler_pool_add_result
add_checks(struct bp_db *db, const struct bp_bundler_pool_op *op, int sender_cap, char *replace,
    size_t replen)
{
	static const char known_sql[] = "SELECT 1 FROM bundler_user_ops"
	    " WHERE chain = ? AND user_op_hash = ?";
	static const char same_sql[] = "SELECT user_op_hash, status, max_fee, max_priority"
	    " FROM bundler_user_ops WHERE chain = ? AND sender = ? AND nonce = ?"
	    " AND status IN ('pending', 'submitted')";
	static const char count_sql[] = "SELECT count(*) FROM bundler_user_ops"
	    " WHERE chain = ? AND sender = ? AND status IN ('pending', 'submitted')";
	enum bp_bundler_pool_add_result res = BP_BUNDLER_POOL_ERROR;
	struct bp_stmt *st;
	enum bp_db_step step;

	replace[0] = '\0';
	if ((st = bp_db_stmt(db, known_sql)) == NULL || bp_stmt_text(st, 1, op->chain) == -1 ||
	    bp_stmt_text(st, 2, op->hash) == -1)
		return BP_BUNDLER_POOL_ERROR;
	step = bp_stmt_step(st);
	bp_stmt_reset(st);
	if (step == BP_DB_ROW)
		return BP_BUNDLER_POOL_KNOWN;
	if (step != BP_DB_DONE)
		return BP_BUNDLER_POOL_ERROR;
	if ((st = bp_db_stmt(db, same_sql)) == NULL || bp_stmt_text(st, 1, op->chain) == -1 ||
	    bp_stmt_text(st, 2, op->sender) == -1 || bp_stmt_text(st, 3, op->nonce) == -1)
		return BP_BUNDLER_POOL_ERROR;
	if ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		if (strcmp(bp_col_text(st, 1), "submitted") == 0)
			res = BP_BUNDLER_POOL_IN_BUNDLE;
		else if (!bumped(op->max_fee, bp_col_text(st, 2)) ||
		    !bumped(op->max_priority, bp_col_text(st, 3)))
			res = BP_BUNDLER_POOL_UNDERPRICED;
		else {
			copy(replace, bp_col_text(st, 0), replen);
			res = BP_BUNDLER_POOL_ADDED;
		}
	}
	bp_stmt_reset(st);
	if (step == BP_DB_ROW || step == BP_DB_ERROR)
		return step == BP_DB_ERROR ? BP_BUNDLER_POOL_ERROR : res;
	if (op->staked || sender_cap <= 0)
		return BP_BUNDLER_POOL_ADDED;
	if ((st = bp_db_stmt(db, count_sql)) == NULL || bp_stmt_text(st, 1, op->chain) == -1 ||
	    bp_stmt_text(st, 2, op->sender) == -1)
		return BP_BUNDLER_POOL_ERROR;
	if (bp_stmt_step(st) == BP_DB_ROW)
		res = bp_col_int(st, 0) >= sender_cap ? BP_BUNDLER_POOL_SENDER_CAP : BP_BUNDLER_POOL_ADDED;
	bp_stmt_reset(st);
	return res;
}

enum bp_bundler_pool_add_result
bp_bundler_pool_add(struct bp_db *db, const struct bp_bundler_pool_op *op, int sender_cap, int paymaster_cap)
{
	enum bp_bundler_pool_add_result res;
	char replace[BP_BUNDLER_POOL_HASH_STR], why[128];

	if (bp_db_begin(db) == -1)
		return BP_BUNDLER_POOL_ERROR;
	res = add_checks(db, op, sender_cap, replace, sizeof(replace));
	if (res == BP_BUNDLER_POOL_ADDED && replace[0] == '\0')
		res = paymaster_check(db, op, paymaster_cap);
	if (res == BP_BUNDLER_POOL_ADDED && replace[0] != '\0') {
		snprintf(why, sizeof(why), "replaced by %s", op->hash);
		if (set_status(db, op->chain, replace, "pending", "dropped", why) == -1)
			res = BP_BUNDLER_POOL_ERROR;
	}
	if (res == BP_BUNDLER_POOL_ADDED && insert_op(db, op, (int64_t)time(NULL)) == -1)
		res = BP_BUNDLER_POOL_ERROR;
	if (res != BP_BUNDLER_POOL_ADDED) {
		bp_db_rollback(db);
		return res;
	}
	if (bp_db_commit(db) == -1)
		return BP_BUNDLER_POOL_ERROR;
	/*
	 * The submitter waits for this between passes (cron/bundle): without it an op sat up to
	 * its --interval in the pool. The op is in: a lost wake-up only costs that wait.
	 */
	if (bp_db_notify(db, BP_DB_WAKE_POOL) == -1)
		bp_warn("bundler pool: no wake-up for %s", op->hash);
	return BP_BUNDLER_POOL_ADDED;
}

int
bp_bundler_pool_roles(struct bp_db *db, const char *chain, const char *address, int *sender,
    int *paymaster)
{
	static const char sql[] = "SELECT"
	    " EXISTS (SELECT 1 FROM bundler_user_ops WHERE chain = ? AND sender = ?"
	    " AND status IN ('pending', 'submitted')),"
	    " EXISTS (SELECT 1 FROM bundler_user_ops WHERE chain = ? AND paymaster = ?"
	    " AND status IN ('pending', 'submitted'))";
	struct bp_stmt *st;
	int rc = -1;

	*sender = *paymaster = 0;
	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, chain) == -1 ||
	    bp_stmt_text(st, 2, address) == -1 || bp_stmt_text(st, 3, chain) == -1 ||
	    bp_stmt_text(st, 4, address) == -1)
		return -1;
	if (bp_stmt_step(st) == BP_DB_ROW) {
		*sender = bp_col_int(st, 0) != 0;
		*paymaster = bp_col_int(st, 1) != 0;
		rc = 0;
	}
	bp_stmt_reset(st);
	return rc;
}

int
bp_bundler_pool_each_pending(struct bp_db *db, const char *chain, int limit,
    int (*fn)(const struct bp_bundler_pool_op *, void *), void *arg)
{
	static const char sql[] = "SELECT " OP_COLS " FROM bundler_user_ops"
	    " WHERE chain = ? AND status = 'pending'"
	    " ORDER BY max_priority DESC, created_at, user_op_hash LIMIT ?";
	struct bp_bundler_pool_op op;
	struct bp_stmt *st;
	enum bp_db_step step;
	int n = 0, stop = 0;

	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, chain) == -1 ||
	    bp_stmt_int(st, 2, limit) == -1)
		return -1;
	while (!stop && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		if (op_row(st, &op) == -1) {
			bp_bundler_pool_op_free(&op);
			step = BP_DB_ERROR;
			break;
		}
		stop = fn(&op, arg);
		bp_bundler_pool_op_free(&op);
		n++;
	}
	bp_stmt_reset(st);
	return !stop && step == BP_DB_ERROR ? -1 : n;
}

int
bp_bundler_pool_drop(struct bp_db *db, const char *chain, const char *hash, const char *reason)
{
	return set_status(db, chain, hash, "pending", "dropped", reason);
}

int
bp_bundler_pool_bundle_record(struct bp_db *db, struct bp_bundler_pool_bundle *b,
    char (*hashes)[BP_BUNDLER_POOL_HASH_STR], size_t n)
{
	static const char ins[] = "INSERT INTO bundler_bundles (chain, bundler, nonce, tx_hash,"
	    " raw_tx, max_fee, max_priority, gas_limit, ops, status, sent_at, created_at)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'sent', ?, ?)";
	static const char upd[] = "UPDATE bundler_user_ops SET status = 'submitted',"
	    " bundle_id = ?, reason = NULL, updated_at = ?"
	    " WHERE chain = ? AND user_op_hash = ? AND status = 'pending'";
	struct bp_stmt *st;
	int64_t now = (int64_t)time(NULL), id;
	size_t i;
	int ok;

	if (bp_db_begin(db) == -1)
		return -1;
	if ((st = bp_db_stmt(db, ins)) == NULL)
		goto fail;
	ok = bp_stmt_text(st, 1, b->chain) == 0 && bp_stmt_text(st, 2, b->bundler) == 0 &&
	    bp_stmt_int(st, 3, b->nonce) == 0 && bp_stmt_text(st, 4, b->tx_hash) == 0 &&
	    bp_stmt_text(st, 5, b->raw_tx) == 0 && bp_stmt_text(st, 6, b->max_fee) == 0 &&
	    bp_stmt_text(st, 7, b->max_priority) == 0 && bp_stmt_int(st, 8, b->gas_limit) == 0 &&
	    bp_stmt_int(st, 9, (int64_t)n) == 0 && bp_stmt_int(st, 10, now) == 0 &&
	    bp_stmt_int(st, 11, now) == 0 && bp_stmt_step(st) == BP_DB_DONE;
	bp_stmt_reset(st);
	if (!ok)
		goto fail;
	id = bp_db_last_id(db);
	for (i = 0; i < n; i++) {
		if ((st = bp_db_stmt(db, upd)) == NULL)
			goto fail;
		ok = bp_stmt_int(st, 1, id) == 0 && bp_stmt_int(st, 2, now) == 0 &&
		    bp_stmt_text(st, 3, b->chain) == 0 && bp_stmt_text(st, 4, hashes[i]) == 0 &&
		    bp_stmt_step(st) == BP_DB_DONE && bp_db_changes(db) == 1;
		bp_stmt_reset(st);
		if (!ok)
			goto fail;
	}
	if (bp_db_commit(db) == 0) {
		b->id = id;	/* only once it is stored: a retry after a failure starts clean */
		b->sent_at = now;
		return 0;
	}
fail:
	bp_db_rollback(db);
	return -1;
}

#define BUNDLES_MAX	64	/* bundles a pass looks at */

int
bp_bundler_pool_each_bundle(struct bp_db *db, const char *chain, int included, int64_t min_block,
    int (*fn)(struct bp_bundler_pool_bundle *, void *), void *arg)
{
	static const char sent_sql[] = "SELECT id, chain, bundler, nonce, tx_hash, old_tx_hashes,"
	    " raw_tx, max_fee, max_priority, gas_limit, ops, status, block_number, block_hash,"
	    " sent_at FROM bundler_bundles WHERE chain = ? AND status = 'sent' AND ? >= 0"
	    " ORDER BY id LIMIT 64";
	static const char inc_sql[] = "SELECT id, chain, bundler, nonce, tx_hash, old_tx_hashes,"
	    " raw_tx, max_fee, max_priority, gas_limit, ops, status, block_number, block_hash,"
	    " sent_at FROM bundler_bundles WHERE chain = ? AND status = 'included'"
	    " AND block_number >= ? ORDER BY id LIMIT 64";
	struct bp_bundler_pool_bundle *bs, *b;
	struct bp_stmt *st;
	enum bp_db_step step;
	int n = 0, i, stop = 0;

	if ((bs = calloc(BUNDLES_MAX, sizeof(*bs))) == NULL)
		return -1;
	if ((st = bp_db_stmt(db, included ? inc_sql : sent_sql)) == NULL ||
	    bp_stmt_text(st, 1, chain) == -1 || bp_stmt_int(st, 2, min_block) == -1) {
		free(bs);
		return -1;
	}
	/* Read them all first: the callbacks write the tables. */
	while (n < BUNDLES_MAX && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		b = &bs[n];
		b->id = bp_col_int(st, 0);
		copy(b->chain, bp_col_text(st, 1), sizeof(b->chain));
		copy(b->bundler, bp_col_text(st, 2), sizeof(b->bundler));
		b->nonce = bp_col_int(st, 3);
		copy(b->tx_hash, bp_col_text(st, 4), sizeof(b->tx_hash));
		copy(b->old_tx_hashes, bp_col_text(st, 5), sizeof(b->old_tx_hashes));
		if ((b->raw_tx = strdup(bp_col_text(st, 6))) == NULL) {
			step = BP_DB_ERROR;
			break;
		}
		copy(b->max_fee, bp_col_text(st, 7), sizeof(b->max_fee));
		copy(b->max_priority, bp_col_text(st, 8), sizeof(b->max_priority));
		b->gas_limit = bp_col_int(st, 9);
		b->ops = bp_col_int(st, 10);
		copy(b->status, bp_col_text(st, 11), sizeof(b->status));
		b->block_number = bp_col_is_null(st, 12) ? -1 : bp_col_int(st, 12);
		copy(b->block_hash, bp_col_text(st, 13), sizeof(b->block_hash));
		b->sent_at = bp_col_int(st, 14);
		n++;
	}
	bp_stmt_reset(st);
	for (i = 0; i < n && !stop && step != BP_DB_ERROR; i++)
		stop = fn(&bs[i], arg);
	for (i = 0; i < n; i++)
		bp_bundler_pool_bundle_free(&bs[i]);
	free(bs);
	return step == BP_DB_ERROR ? -1 : n;
}

int
bp_bundler_pool_bundle_bump(struct bp_db *db, int64_t id, const char *tx_hash, const char *raw_tx,
    const char *max_fee, const char *max_priority)
{
	static const char sql[] = "UPDATE bundler_bundles SET old_tx_hashes ="
	    " CASE WHEN old_tx_hashes = '' THEN tx_hash ELSE old_tx_hashes || ',' || tx_hash END,"
	    " tx_hash = ?, raw_tx = ?, max_fee = ?, max_priority = ?, sent_at = ?"
	    " WHERE id = ? AND status = 'sent'";
	struct bp_stmt *st;
	int rc = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	if (bp_stmt_text(st, 1, tx_hash) == 0 && bp_stmt_text(st, 2, raw_tx) == 0 &&
	    bp_stmt_text(st, 3, max_fee) == 0 && bp_stmt_text(st, 4, max_priority) == 0 &&
	    bp_stmt_int(st, 5, (int64_t)time(NULL)) == 0 && bp_stmt_int(st, 6, id) == 0 &&
	    bp_stmt_step(st) == BP_DB_DONE)
		rc = 0;
	bp_stmt_reset(st);
	return rc;
}

int
bp_bundler_pool_bundle_included(struct bp_db *db, int64_t id, const char *tx_hash, int64_t number,
    const char *block_hash, const struct bp_bundler_pool_outcome *ops, size_t n, const char *reason)
{
	static const char bsql[] = "UPDATE bundler_bundles SET status = 'included', tx_hash = ?,"
	    " block_number = ?, block_hash = ? WHERE id = ?";
	static const char osql[] = "UPDATE bundler_user_ops SET status = ?, success = ?,"
	    " reason = ?, tx_hash = ?, block_number = ?, block_hash = ?, updated_at = ?"
	    " WHERE bundle_id = ? AND user_op_hash = ?";
	struct bp_stmt *st;
	int64_t now = (int64_t)time(NULL);
	size_t i;
	int ok;

	if (bp_db_begin(db) == -1)
		return -1;
	if ((st = bp_db_stmt(db, bsql)) == NULL)
		goto fail;
	ok = bp_stmt_text(st, 1, tx_hash) == 0 && bp_stmt_int(st, 2, number) == 0 &&
	    bp_stmt_text(st, 3, block_hash) == 0 && bp_stmt_int(st, 4, id) == 0 &&
	    bp_stmt_step(st) == BP_DB_DONE;
	bp_stmt_reset(st);
	if (!ok)
		goto fail;
	for (i = 0; i < n; i++) {
		if ((st = bp_db_stmt(db, osql)) == NULL)
			goto fail;
		ok = bp_stmt_text(st, 1, ops[i].found ? "included" : "failed") == 0 &&
		    (ops[i].found ? bp_stmt_int(st, 2, ops[i].success) : bp_stmt_null(st, 2)) == 0 &&
		    bp_stmt_text(st, 3, ops[i].found ? NULL : reason) == 0 &&
		    bp_stmt_text(st, 4, tx_hash) == 0 && bp_stmt_int(st, 5, number) == 0 &&
		    bp_stmt_text(st, 6, block_hash) == 0 && bp_stmt_int(st, 7, now) == 0 &&
		    bp_stmt_int(st, 8, id) == 0 && bp_stmt_text(st, 9, ops[i].hash) == 0 &&
		    bp_stmt_step(st) == BP_DB_DONE;
		bp_stmt_reset(st);
		if (!ok)
			goto fail;
	}
	if (bp_db_commit(db) == 0)
		return 0;
fail:
	bp_db_rollback(db);
	return -1;
}

int
bp_bundler_pool_bundle_release(struct bp_db *db, int64_t id, const char *status)
{
	static const char bsql[] = "UPDATE bundler_bundles SET status = ? WHERE id = ?";
	static const char osql[] = "UPDATE bundler_user_ops SET status = 'pending', bundle_id = NULL,"
	    " tx_hash = NULL, block_number = NULL, block_hash = NULL, success = NULL,"
	    " reason = NULL, updated_at = ? WHERE bundle_id = ?";
	struct bp_stmt *st;
	int ok;

	if (bp_db_begin(db) == -1)
		return -1;
	if ((st = bp_db_stmt(db, bsql)) == NULL)
		goto fail;
	ok = bp_stmt_text(st, 1, status) == 0 && bp_stmt_int(st, 2, id) == 0 &&
	    bp_stmt_step(st) == BP_DB_DONE;
	bp_stmt_reset(st);
	if (!ok || (st = bp_db_stmt(db, osql)) == NULL)
		goto fail;
	ok = bp_stmt_int(st, 1, (int64_t)time(NULL)) == 0 && bp_stmt_int(st, 2, id) == 0 &&
	    bp_stmt_step(st) == BP_DB_DONE;
	bp_stmt_reset(st);
	if (ok && bp_db_commit(db) == 0)
		return 0;
fail:
	bp_db_rollback(db);
	return -1;
}

int
bp_bundler_pool_bundle_ops(struct bp_db *db, int64_t id, int (*fn)(const char *, void *), void *arg)
{
	static const char sql[] = "SELECT user_op_hash FROM bundler_user_ops WHERE bundle_id = ?"
	    " ORDER BY user_op_hash";
	struct bp_stmt *st;
	enum bp_db_step step;
	int n = 0, stop = 0;

	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_int(st, 1, id) == -1)
		return -1;
	while (!stop && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		stop = fn(bp_col_text(st, 0), arg);
		n++;
	}
	bp_stmt_reset(st);
	return !stop && step == BP_DB_ERROR ? -1 : n;
}

int
bp_bundler_pool_metrics(struct bp_db *db, const struct bp_config *cfg, struct bp_buf *out)
{
	(void)cfg;
	if (bp_metrics_query(db, out, "blockport_bundler_mempool_user_operations", "gauge",
	    "UserOperations accepted and not yet sent in a bundle, by network.", "network",
	    "SELECT chain, COUNT(*) FROM bundler_user_ops WHERE status = 'pending'"
	    " GROUP BY chain ORDER BY chain") == -1)
		return -1;
	return bp_metrics_query(db, out, "blockport_bundler_bundles_total", "counter",
	    "Bundle transactions sent, by network.", "network",
	    "SELECT chain, COUNT(*) FROM bundler_bundles GROUP BY chain ORDER BY chain");
}
