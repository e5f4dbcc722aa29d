/*
 * The indexer's reorg step (index_reorg.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/u256.h"
#include "index_headers.h"
#include "index_logs.h"
#include "index_reorg.h"

#define WALK_STEP	32		/* stored blocks compared per request while walking back */
#define HASH_STR	BP_BLOCKS_HASH_STR
#define ADDR_STR	BP_BLOCKS_ADDR_STR

/* A token (and for ERC-1155, a holder) whose ownership a rollback must recompute. */
struct affected {
	char	contract[ADDR_STR];
	char	id[BP_U256_DEC_MAX];
	char	owner[ADDR_STR];	/* ERC-1155 only */
	int	erc721;
};


/* Collects the tokens touched above block `above`. The list is the caller's to free. */
static int
collect_affected(struct bp_db *db, const struct bp_index_store_chain *c, int64_t above,
    struct affected **out, size_t *nout)
{
	static const char sql[] = "SELECT DISTINCT contract, token_id, standard, from_addr"
	    " FROM index_transfers WHERE chain = ?1 AND block_number > ?2 AND standard != 'erc20'"
	    " UNION SELECT DISTINCT contract, token_id, standard, to_addr FROM index_transfers"
	    " WHERE chain = ?1 AND block_number > ?2 AND standard != 'erc20'";
	struct affected *list = NULL, *p;
	size_t n = 0, cap = 0;
	struct bp_stmt *st;
	enum bp_db_step r;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, above);
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			if ((p = realloc(list, cap * sizeof(*p))) == NULL) {
				r = BP_DB_ERROR;
				break;
			}
			list = p;
		}
		p = &list[n++];
		bp_strlcpy(p->contract, bp_col_text(st, 0), sizeof(p->contract));
		bp_strlcpy(p->id, bp_col_text(st, 1), sizeof(p->id));
		p->erc721 = strcmp(bp_col_text(st, 2), "erc721") == 0;
		bp_strlcpy(p->owner, bp_col_text(st, 3), sizeof(p->owner));
	}
	bp_stmt_reset(st);
	if (r == BP_DB_ERROR) {
		free(list);
		return -1;
	}
	*out = list;
	*nout = n;
	return 0;
}

/* Recomputes an ERC-721 token's owner from the transfers that remain. */
static int
recompute_721(struct bp_db *db, const struct bp_index_store_chain *c, const struct affected *a)
{
	static const char sql[] = "SELECT to_addr, block_number FROM index_transfers"
	    " WHERE chain = ? AND contract = ? AND token_id = ? AND standard = 'erc721'"
	    " ORDER BY block_number DESC, log_index DESC LIMIT 1";
	char owner[ADDR_STR];
	struct bp_stmt *st;
	enum bp_db_step r;
	int64_t block = 0;

	if (bp_index_store_owners_clear(db, c, a->contract, a->id, "erc721") == -1 ||
	    (st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, a->contract);
	bp_stmt_text(st, 3, a->id);
	owner[0] = '\0';
	if ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		bp_strlcpy(owner, bp_col_text(st, 0), sizeof(owner));
		block = bp_col_int(st, 1);
	}
	bp_stmt_reset(st);
	if (r == BP_DB_ERROR)
		return -1;
	if (owner[0] == '\0' || strcmp(owner, BP_INDEX_STORE_ZERO_ADDR) == 0)
		return 0;
	return bp_index_store_owner_set(db, c, a->contract, a->id, owner, "erc721", "1", block);
}

/*
 * Recomputes one holder's ERC-1155 quantity from the transfers that remain, in block order, with
 * the same clamping at zero as the forward path.
 */
static int
recompute_1155(struct bp_db *db, const struct bp_index_store_chain *c, const struct affected *a)
{
	static const char sql[] = "SELECT from_addr, to_addr, value, block_number"
	    " FROM index_transfers WHERE chain = ?1 AND contract = ?2 AND token_id = ?3"
	    " AND standard = 'erc1155' AND (from_addr = ?4 OR to_addr = ?4)"
	    " ORDER BY block_number, log_index, batch_index";
	char dec[BP_U256_DEC_MAX];
	struct bp_u256 q, v;
	struct bp_stmt *st;
	enum bp_db_step r;
	int64_t block = 0;

	if (strcmp(a->owner, BP_INDEX_STORE_ZERO_ADDR) == 0)
		return 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_text(st, 2, a->contract);
	bp_stmt_text(st, 3, a->id);
	bp_stmt_text(st, 4, a->owner);
	bp_u256_from_u64(&q, 0);
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		const char *t = bp_col_text(st, 2);

		if (bp_u256_from_dec(&v, t, strlen(t)) == -1)
			continue;
		/* A self-transfer takes and gives back: net zero, as on the forward path. */
		if (strcmp(bp_col_text(st, 0), a->owner) == 0 && bp_u256_sub(&q, &q, &v) != 0)
			bp_u256_from_u64(&q, 0);
		if (strcmp(bp_col_text(st, 1), a->owner) == 0)
			bp_u256_add(&q, &q, &v);
		block = bp_col_int(st, 3);
	}
	bp_stmt_reset(st);
	if (r == BP_DB_ERROR)
		return -1;
	bp_u256_to_dec(&q, dec, sizeof(dec));
	return bp_index_store_owner_set(db, c, a->contract, a->id, a->owner, "erc1155", dec, block);
}

/* Tells the hook of each stored block above ancestor, newest first. 0 or -1. */
static int
hook_rollback(struct bp_db *db, const struct bp_index_store_chain *c, int64_t ancestor)
{
	static const char sql[] = "SELECT number, hash FROM index_blocks WHERE chain = ?"
	    " AND number > ? ORDER BY number DESC";
	const struct bp_index_store_hook *h = c->hook;
	struct bp_stmt *st;
	enum bp_db_step r;
	int rc = 0;

	if (h == NULL || h->rollback == NULL)
		return 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, c->key);
	bp_stmt_int(st, 2, ancestor);
	while (rc == 0 && (r = bp_stmt_step(st)) == BP_DB_ROW)
		if (h->rollback(h->arg, db, c->key, bp_col_int(st, 0), bp_col_text(st, 1)) == -1) {
			bp_err("%s: the store hook failed on rolling back block %lld", c->key,
			    (long long)bp_col_int(st, 0));
			rc = -1;
		}
	bp_stmt_reset(st);
	return rc == 0 && r == BP_DB_ERROR ? -1 : rc;
}


int
bp_index_reorg_rollback(struct bp_db *db, const struct bp_index_store_chain *c, int64_t ancestor,
    int64_t chain_head)
{
	struct affected *aff = NULL;
	struct bp_index_store_cursor cur;
	size_t naff = 0, i;
	int r;

	if (bp_db_begin(db) == -1)
		return -1;
	if (hook_rollback(db, c, ancestor) == -1 ||
	    collect_affected(db, c, ancestor, &aff, &naff) == -1)
		goto fail;
	if (bp_index_store_delete(db, c, ancestor, 1) == -1 ||
	    bp_index_logs_delete(db, c->key, ancestor, 1) == -1 ||
	    bp_index_headers_delete(db, c->key, ancestor, 1) == -1)
		goto fail;
	for (i = 0; i < naff; i++)
		if ((aff[i].erc721 ? recompute_721(db, c, &aff[i]) :
		    recompute_1155(db, c, &aff[i])) == -1)
			goto fail;
	cur.head = ancestor;
	if ((r = bp_index_store_hash(db, c, ancestor, cur.hash)) == -1)
		goto fail;
	if (r == 0)
		cur.hash[0] = '\0';
	if (bp_index_store_cursor_save(db, c, &cur, chain_head, 1) == -1 || bp_db_commit(db) == -1)
		goto fail;
	bp_warn("%s: reorg: rolled back to block %lld (%zu tokens' owners recomputed)", c->key,
	    (long long)ancestor, naff);
	free(aff);
	return 0;
fail:
	free(aff);
	bp_db_rollback(db);
	return -1;
}

int
bp_index_reorg_walk(struct bp_db *db, const struct bp_index_store_chain *c, struct bp_blocks_src *src,
    const struct bp_index_store_cursor *cur, int64_t chain_head, char *err, size_t errlen)
{
	char theirs[WALK_STEP][HASH_STR], ours[HASH_STR];
	int64_t hi = cur->head, lo, n, ancestor = -2;
	int r;

	while (ancestor == -2) {
		lo = hi - WALK_STEP + 1 < 0 ? 0 : hi - WALK_STEP + 1;
		if (hi < 0) {
			ancestor = -1;
			break;
		}
		if (bp_blocks_hashes(src, lo, hi, theirs, err, errlen) == -1)
			return -1;
		for (n = hi; n >= lo; n--) {
			if ((r = bp_index_store_hash(db, c, n, ours)) == -1) {
				snprintf(err, errlen, "database error");
				return -1;
			}
			if (r == 0) {
				/* Below the stored blocks (pruned, or before start_block). */
				bp_warn("%s: reorg deeper than the stored blocks: rolling back to %lld",
				    c->key, (long long)n);
				ancestor = n;
				break;
			}
			if (theirs[n - lo][0] != '\0' && strcmp(ours, theirs[n - lo]) == 0) {
				ancestor = n;
				break;
			}
		}
		hi = lo - 1;
	}
	if (bp_index_reorg_rollback(db, c, ancestor, chain_head) == -1) {
		snprintf(err, errlen, "database error while rolling back a reorg");
		return -1;
	}
	return 0;
}

int
bp_index_reorg_check_head(struct bp_db *db, const struct bp_index_store_chain *c,
    struct bp_blocks_src *src, const struct bp_index_store_cursor *cur, int64_t head, char *err,
    size_t errlen)
{
	char theirs[1][HASH_STR], ours[HASH_STR];
	int r;

	if ((r = bp_index_store_hash(db, c, head, ours)) == -1) {
		snprintf(err, errlen, "database error");
		return -1;
	}
	if (r == 0)
		return 0;
	if (bp_blocks_hashes(src, head, head, theirs, err, errlen) == -1)
		return -1;
	if (theirs[0][0] == '\0' || strcmp(theirs[0], ours) == 0)
		return 0;
	return bp_index_reorg_walk(db, c, src, cur, head, err, errlen) == -1 ? -1 : 1;
}
