/*
 * The block headers near the head (index_headers.h): the writes of the store and the reorg. They
 * are read joined to index_blocks by the heads' readers (bp_index_heads_after and
 * bp_index_heads_recent, index_read.c), for the heads feed and the WebSocket follower.
 */
#include <stdlib.h>
#include <string.h>

#include "core/db.h"
#include "core/log.h"
#include "index_headers.h"

/*
 * blk's members but "transactions", printed compactly: references, so nothing of blk is copied
 * or changed. NULL when out of memory; the caller frees the text.
 */
static char *
header_text(const cJSON *blk)
{
	cJSON *o, *m;
	char *txt = NULL;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	for (m = blk->child; m != NULL; m = m->next) {
		if (m->string == NULL || strcmp(m->string, "transactions") == 0)
			continue;
		if (!cJSON_AddItemReferenceToObject(o, m->string, m))
			goto out;
	}
	txt = cJSON_PrintUnformatted(o);
out:
	cJSON_Delete(o);	/* references only: blk's items stay */
	return txt;
}

int
bp_index_headers_put(struct bp_db *db, const char *chain, int64_t number, const char *hash,
    const cJSON *blk)
{
	static const char sql[] = "INSERT INTO index_headers (chain, number, hash, header)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (chain, number) DO UPDATE SET hash = ?3,"
	    " header = ?4";
	struct bp_stmt *st;
	char *txt;
	int rc;

	if (!cJSON_IsObject(blk) || (txt = header_text(blk)) == NULL)
		return -1;
	if (strlen(txt) > BP_INDEX_HEADERS_MAX) {
		bp_log(BP_LOG_DEBUG, "%s: block %lld: a header of %zu bytes is not kept", chain,
		    (long long)number, strlen(txt));
		free(txt);
		return 0;
	}
	if ((st = bp_db_stmt(db, sql)) == NULL) {
		free(txt);
		return -1;
	}
	bp_stmt_text(st, 1, chain);
	bp_stmt_int(st, 2, number);
	bp_stmt_text(st, 3, hash);
	bp_stmt_text(st, 4, txt);
	rc = bp_stmt_run(st);
	free(txt);
	return rc;
}

int
bp_index_headers_delete(struct bp_db *db, const char *chain, int64_t number, int above)
{
	struct bp_stmt *st = bp_db_stmt(db, above ?
	    "DELETE FROM index_headers WHERE chain = ? AND number > ?" :
	    "DELETE FROM index_headers WHERE chain = ? AND number <= ?");

	return st == NULL || bp_stmt_text(st, 1, chain) == -1 ||
	    bp_stmt_int(st, 2, number) == -1 ? -1 : bp_stmt_run(st);
}
