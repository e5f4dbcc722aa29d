/*
 * The raw logs near the head (index_logs.h): the writes of the store and the reorg, and the
 * reads of the WebSocket logs subscriptions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/db.h"
#include "core/hex.h"
#include "index_logs.h"

int
bp_index_logs_put(struct bp_db *db, const char *chain, const char *block_hash, int64_t tx_index,
    const struct bp_blocks_logpos *pos, const struct bp_blocks_log *log)
{
	static const char sql[] = "INSERT INTO index_logs (chain, block_number, log_index,"
	    " block_hash, tx_hash, tx_index, address, topic0, topic1, topic2, topic3, data)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	    " ON CONFLICT (chain, block_number, log_index) DO NOTHING";
	char topic[BP_BLOCKS_MAX_TOPICS][BP_BLOCKS_HASH_STR], *data;
	size_t i, cap = log->datalen * 2 + 3;
	struct bp_stmt *st;
	int rc;

	if ((data = malloc(cap)) == NULL)
		return -1;
	bp_hex_encode(log->data, log->datalen, data, cap);
	if ((st = bp_db_stmt(db, sql)) == NULL) {
		free(data);
		return -1;
	}
	bp_stmt_text(st, 1, chain);
	bp_stmt_int(st, 2, pos->block);
	bp_stmt_int(st, 3, pos->log_index);
	bp_stmt_text(st, 4, block_hash);
	bp_stmt_text(st, 5, pos->tx_hash);
	if (tx_index >= 0)
		bp_stmt_int(st, 6, tx_index);
	else
		bp_stmt_null(st, 6);
	bp_stmt_text(st, 7, pos->contract);
	for (i = 0; i < BP_BLOCKS_MAX_TOPICS; i++) {
		if (i < log->ntopics) {
			bp_hex_encode(log->topics[i], 32, topic[i], sizeof(topic[i]));
			bp_stmt_text(st, 8 + (int)i, topic[i]);
		} else
			bp_stmt_null(st, 8 + (int)i);
	}
	bp_stmt_text(st, 12, data);
	rc = bp_stmt_run(st);
	free(data);
	return rc;
}

int
bp_index_logs_delete(struct bp_db *db, const char *chain, int64_t number, int above)
{
	struct bp_stmt *st;

	st = bp_db_stmt(db, above ? "DELETE FROM index_logs WHERE chain = ? AND block_number > ?" :
	    "DELETE FROM index_logs WHERE chain = ? AND block_number <= ?");
	if (st == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_int(st, 2, number);
	return bp_stmt_run(st);
}

int
bp_index_logs_block(struct bp_db *db, const char *chain, int64_t number, const char *hash,
    int (*fn)(const struct bp_index_logs_row *, void *arg), void *arg)
{
	static const char sql[] = "SELECT log_index, tx_hash, tx_index, address, topic0, topic1,"
	    " topic2, topic3, data FROM index_logs WHERE chain = ? AND block_number = ?"
	    " AND block_hash = ? ORDER BY log_index";
	struct bp_index_logs_row row;
	struct bp_stmt *st;
	enum bp_db_step step;
	int n = 0, rc = 0;
	size_t i;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_int(st, 2, number);
	bp_stmt_text(st, 3, hash);
	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		memset(&row, 0, sizeof(row));
		row.block = number;
		row.block_hash = hash;
		row.log_index = bp_col_int(st, 0);
		row.tx_hash = bp_col_text(st, 1);
		row.tx_index = bp_col_is_null(st, 2) ? -1 : bp_col_int(st, 2);
		row.address = bp_col_text(st, 3);
		for (i = 0; i < BP_BLOCKS_MAX_TOPICS && !bp_col_is_null(st, 4 + (int)i); i++)
			row.topics[i] = bp_col_text(st, 4 + (int)i);
		row.ntopics = i;
		row.data = bp_col_text(st, 8);
		if (fn(&row, arg) == -1) {
			rc = -1;
			break;
		}
		n++;
	}
	if (step == BP_DB_ERROR)
		rc = -1;
	bp_stmt_reset(st);
	return rc == -1 ? -1 : n;
}

/* Appends ,"name":"0x.." for v. 0 or -1. */
static int
put_qty(struct bp_buf *out, const char *name, int64_t v)
{
	char q[24];

	if (v < 0)
		return bp_buf_printf(out, ",\"%s\":null", name);
	if (bp_hex_quantity_encode((uint64_t)v, q, sizeof(q)) == -1)
		return -1;
	return bp_buf_printf(out, ",\"%s\":\"%s\"", name, q);
}

int
bp_index_logs_json(const struct bp_index_logs_row *row, int removed, struct bp_buf *out)
{
	size_t i;

	if (bp_buf_printf(out, "{\"address\":\"%s\",\"topics\":[", row->address) == -1)
		return -1;
	for (i = 0; i < row->ntopics; i++)
		if (bp_buf_printf(out, "%s\"%s\"", i ? "," : "", row->topics[i]) == -1)
			return -1;
	if (bp_buf_adds(out, "],\"data\":\"") == -1 || bp_buf_adds(out, row->data) == -1 ||
	    bp_buf_adds(out, "\"") == -1 || put_qty(out, "blockNumber", row->block) == -1 ||
	    bp_buf_printf(out, ",\"blockHash\":\"%s\",\"transactionHash\":\"%s\"",
	    row->block_hash, row->tx_hash) == -1 ||
	    put_qty(out, "transactionIndex", row->tx_index) == -1 ||
	    put_qty(out, "logIndex", row->log_index) == -1)
		return -1;
	return bp_buf_printf(out, ",\"removed\":%s}", removed ? "true" : "false");
}
