/*
 * The indexer's prune step (index_prune.h).
 */
#include "core/db.h"
#include "index_prune.h"

int
bp_index_prune(struct bp_db *db, const struct bp_index_store_chain *c, int64_t retention, int64_t head)
{
	static const char oldest[] = "SELECT min(number) FROM index_blocks WHERE chain = ?";
	int64_t keep, limit, lo;
	struct bp_stmt *st;

	if (retention == 0)
		return 0;
	keep = retention;
	if (keep < c->confirmations + BP_INDEX_PRUNE_MIN_KEEP)
		keep = c->confirmations + BP_INDEX_PRUNE_MIN_KEEP;
	limit = head - keep;
	if ((st = bp_db_stmt(db, oldest)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	if (bp_stmt_step(st) != BP_DB_ROW || bp_col_is_null(st, 0)) {
		bp_stmt_reset(st);
		return 0;
	}
	lo = bp_col_int(st, 0);
	bp_stmt_reset(st);
	if (lo > limit)
		return 0;
	if (limit > lo + BP_INDEX_PRUNE_SLICE - 1)
		limit = lo + BP_INDEX_PRUNE_SLICE - 1;
	if (bp_db_begin(db) == -1)
		return -1;
	if (bp_index_store_delete(db, c, limit, 0) == -1 || bp_db_commit(db) == -1) {
		bp_db_rollback(db);
		return -1;
	}
	return 0;
}
