/*
 * Pending transactions (ws_pending.h).
 */
#include <ctype.h>
#include <string.h>

#include "core/db.h"
#include "core/hex.h"
#include "core/util.h"
#include "ws_pending.h"

int
bp_ws_pending_last(struct bp_db *db, const char *chain, int64_t *seq)
{
	struct bp_stmt *st;
	enum bp_db_step r;

	if ((st = bp_db_stmt(db, "SELECT max(seq) FROM ws_pending WHERE chain = ?")) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	r = bp_stmt_step(st);
	*seq = r == BP_DB_ROW && !bp_col_is_null(st, 0) ? bp_col_int(st, 0) : 0;
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

int
bp_ws_pending_add(struct bp_db *db, const char *chain, const char *const *hashes, size_t n,
    int64_t now)
{
	static const char ins[] = "INSERT INTO ws_pending (chain, seq, hash, seen_at)"
	    " VALUES (?, ?, ?, ?)";
	static const char prune[] = "DELETE FROM ws_pending WHERE chain = ?"
	    " AND (seen_at < ? OR seq <= ?)";
	char h[67];
	uint8_t raw[32];
	struct bp_stmt *st;
	int64_t seq;
	size_t i, j;
	int added = 0;

	if (bp_db_begin(db) == -1)
		return -1;
	if (bp_ws_pending_last(db, chain, &seq) == -1)
		goto fail;
	for (i = 0; i < n; i++) {
		if (hashes[i] == NULL || strlen(hashes[i]) != 66 ||
		    bp_hex_decode_fixed(hashes[i], 66, raw, 32) == -1)
			continue;
		for (j = 0; j < 66; j++)
			h[j] = (char)tolower((unsigned char)hashes[i][j]);
		h[66] = '\0';
		if ((st = bp_db_stmt(db, ins)) == NULL)
			goto fail;
		bp_stmt_text(st, 1, chain);
		bp_stmt_int(st, 2, ++seq);
		bp_stmt_text(st, 3, h);
		bp_stmt_int(st, 4, now);
		if (bp_stmt_run(st) == -1)
			goto fail;
		added++;
	}
	if ((st = bp_db_stmt(db, prune)) == NULL)
		goto fail;
	bp_stmt_text(st, 1, chain);
	bp_stmt_int(st, 2, now - BP_WS_PENDING_KEEP_SECONDS);
	bp_stmt_int(st, 3, seq - BP_WS_PENDING_KEEP_ROWS);
	if (bp_stmt_run(st) == -1 || bp_db_commit(db) == -1)
		goto fail;
	return added;
fail:
	bp_db_rollback(db);
	return -1;
}

int
bp_ws_pending_read(struct bp_db *db, const char *chain, int64_t *after,
    int (*fn)(const char *hash, void *arg), void *arg)
{
	static const char sql[] = "SELECT seq, hash FROM ws_pending WHERE chain = ? AND seq > ?"
	    " ORDER BY seq LIMIT 256";
	struct bp_stmt *st;
	enum bp_db_step r;
	int n = 0, rc = 0;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_int(st, 2, *after);
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		*after = bp_col_int(st, 0);
		n++;
		if (fn(bp_col_text(st, 1), arg) == -1) {
			rc = -1;
			break;
		}
	}
	if (r == BP_DB_ERROR)
		rc = -1;
	bp_stmt_reset(st);
	return rc == -1 ? -1 : n;
}
