/*
 * The SQL of the NFT caches (schema/006_nfts.sql): this file is their one writer, for lib/nft/nft.c
 * and cron/nftmeta, and their reader for lib/nft/nft_owned.c (nft_priv.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/db.h"
#include "core/util.h"
#include "nft_priv.h"

static const char *const std_db[BP_NFT_STD__MAX] = { "", "erc721", "erc1155" };

/* Moves chain's cache version (nft_cache_versions); 0 or -1. */
static int
bump(struct bp_db *db, const char *chain)
{
	static const char sql[] = "INSERT INTO nft_cache_versions (chain, version) VALUES (?, 1)"
	    " ON CONFLICT (chain) DO UPDATE SET version = nft_cache_versions.version + 1";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	return bp_stmt_run(st);
}

int
bp_nft_cache_version(struct bp_db *db, const char *chain, int64_t *version)
{
	static const char sql[] = "SELECT version FROM nft_cache_versions WHERE chain = ?";
	struct bp_stmt *st;
	enum bp_db_step r;

	*version = 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW)
		*version = bp_col_int(st, 0);
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

static char *
col_dup(struct bp_stmt *st, int col)
{
	return bp_col_is_null(st, col) ? NULL : strdup(bp_col_text(st, col));
}

static enum bp_nft_std
std_parse(const char *s)
{
	return strcmp(s, "erc721") == 0 ? BP_NFT_STD_721 : strcmp(s, "erc1155") == 0 ? BP_NFT_STD_1155 :
	    BP_NFT_STD_NONE;
}

void
bp_nft_coll_free(struct bp_nft_coll *c)
{
	free(c->name);
	free(c->symbol);
	free(c->contract_uri);
	free(c->description);
	free(c->image);
	free(c->banner);
	memset(c, 0, sizeof(*c));
}

/* Loads the cached row into c; 0 (c->found tells), or -1 on a database error. */
int
bp_nft_coll_load(struct bp_db *db, const struct bp_nft_names *nm, struct bp_nft_coll *c)
{
	static const char sql[] = "SELECT standard, name, symbol, contract_uri, description, image,"
	    " banner, spam, status, attempts, next_retry FROM nft_collections"
	    " WHERE chain = ? AND contract = ?";
	struct bp_stmt *st;
	enum bp_db_step r;

	memset(c, 0, sizeof(*c));
	c->spam = -1;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, nm->chain);
	bp_stmt_text(st, 2, nm->contract);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		c->found = 1;
		c->standard = std_parse(bp_col_text(st, 0));
		c->name = col_dup(st, 1);
		c->symbol = col_dup(st, 2);
		c->contract_uri = col_dup(st, 3);
		c->description = col_dup(st, 4);
		c->image = col_dup(st, 5);
		c->banner = col_dup(st, 6);
		c->spam = bp_col_is_null(st, 7) ? -1 : (int)bp_col_int(st, 7);
		bp_strlcpy(c->status, bp_col_text(st, 8), sizeof(c->status));
		c->attempts = bp_col_int(st, 9);
		c->next_retry = bp_col_int(st, 10);
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

/* Writes c as the row of nm's contract (insert or replace); 0 or -1. */
int
bp_nft_coll_store(struct bp_db *db, const struct bp_nft_names *nm, const struct bp_nft_coll *c)
{
	static const char sql[] = "INSERT INTO nft_collections (chain, contract, standard, name,"
	    " symbol, contract_uri, description, image, banner, spam, status, attempts, fetched_at,"
	    " next_retry) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	    " ON CONFLICT (chain, contract) DO UPDATE SET standard = excluded.standard,"
	    " name = excluded.name, symbol = excluded.symbol, contract_uri = excluded.contract_uri,"
	    " description = excluded.description, image = excluded.image,"
	    " banner = excluded.banner, spam = excluded.spam, status = excluded.status,"
	    " attempts = excluded.attempts, fetched_at = excluded.fetched_at,"
	    " next_retry = excluded.next_retry";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, nm->chain);
	bp_stmt_text(st, 2, nm->contract);
	bp_stmt_text(st, 3, std_db[c->standard]);
	bp_stmt_text(st, 4, c->name);
	bp_stmt_text(st, 5, c->symbol);
	bp_stmt_text(st, 6, c->contract_uri);
	bp_stmt_text(st, 7, c->description);
	bp_stmt_text(st, 8, c->image);
	bp_stmt_text(st, 9, c->banner);
	if (c->spam < 0)
		bp_stmt_null(st, 10);
	else
		bp_stmt_int(st, 10, c->spam);
	bp_stmt_text(st, 11, c->status[0] != '\0' ? c->status : "pending");
	bp_stmt_int(st, 12, c->attempts);
	bp_stmt_int(st, 13, (int64_t)time(NULL));
	bp_stmt_int(st, 14, c->next_retry);
	return bp_stmt_run(st) == 0 ? bump(db, nm->chain) : -1;
}

void
bp_nft_meta_free(struct bp_nft_meta *m)
{
	free(m->token_uri);
	free(m->name);
	free(m->description);
	free(m->image);
	free(m->traits);
	free(m->error);
	memset(m, 0, sizeof(*m));
}

int
bp_nft_meta_load(struct bp_db *db, const struct bp_nft_names *nm, struct bp_nft_meta *m)
{
	static const char sql[] = "SELECT token_uri, status, name, description, image, traits,"
	    " error, attempts, next_retry FROM nft_metadata"
	    " WHERE chain = ? AND contract = ? AND token_id = ?";
	struct bp_stmt *st;
	enum bp_db_step r;

	memset(m, 0, sizeof(*m));
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, nm->chain);
	bp_stmt_text(st, 2, nm->contract);
	bp_stmt_text(st, 3, nm->token_id);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		m->found = 1;
		m->token_uri = col_dup(st, 0);
		m->ok = strcmp(bp_col_text(st, 1), "ok") == 0;
		m->name = col_dup(st, 2);
		m->description = col_dup(st, 3);
		m->image = col_dup(st, 4);
		m->traits = col_dup(st, 5);
		m->error = col_dup(st, 6);
		m->attempts = bp_col_int(st, 7);
		m->next_retry = bp_col_int(st, 8);
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

int
bp_nft_meta_store(struct bp_db *db, const struct bp_nft_names *nm, const struct bp_nft_meta *m)
{
	static const char sql[] = "INSERT INTO nft_metadata (chain, contract, token_id, token_uri,"
	    " status, name, description, image, traits, error, attempts, fetched_at, next_retry)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chain, contract, token_id)"
	    " DO UPDATE SET token_uri = excluded.token_uri, status = excluded.status,"
	    " name = excluded.name, description = excluded.description, image = excluded.image,"
	    " traits = excluded.traits, error = excluded.error, attempts = excluded.attempts,"
	    " fetched_at = excluded.fetched_at, next_retry = excluded.next_retry";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, nm->chain);
	bp_stmt_text(st, 2, nm->contract);
	bp_stmt_text(st, 3, nm->token_id);
	bp_stmt_text(st, 4, m->token_uri != NULL ? m->token_uri : "");
	bp_stmt_text(st, 5, m->ok ? "ok" : "failed");
	bp_stmt_text(st, 6, m->name);
	bp_stmt_text(st, 7, m->description);
	bp_stmt_text(st, 8, m->image);
	bp_stmt_text(st, 9, m->traits);
	bp_stmt_text(st, 10, m->error != NULL ? m->error : "");
	bp_stmt_int(st, 11, m->attempts);
	bp_stmt_int(st, 12, (int64_t)time(NULL));
	bp_stmt_int(st, 13, m->next_retry);
	return bp_stmt_run(st) == 0 ? bump(db, nm->chain) : -1;
}

int
bp_nft_cursor_load(struct bp_db *db, const char *chain, char *contract, char *token)
{
	static const char sql[] = "SELECT contract, token_id FROM nft_fill_cursors WHERE chain = ?";
	struct bp_stmt *st;
	enum bp_db_step r;

	contract[0] = token[0] = '\0';
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		bp_strlcpy(contract, bp_col_text(st, 0), BP_ADDR_STR_MAX);
		bp_strlcpy(token, bp_col_text(st, 1), BP_U256_DEC_MAX);
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

int
bp_nft_cursor_store(struct bp_db *db, const char *chain, const char *contract, const char *token)
{
	static const char sql[] = "INSERT INTO nft_fill_cursors (chain, contract, token_id)"
	    " VALUES (?, ?, ?) ON CONFLICT (chain) DO UPDATE SET contract = excluded.contract,"
	    " token_id = excluded.token_id";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, token);
	return bp_stmt_run(st);
}

int
bp_nft_cached_token(struct bp_db *db, const char *chain, const char *contract,
    const char *token_id, char **name, char **image)
{
	static const char sql[] = "SELECT name, image FROM nft_metadata WHERE chain = ?"
	    " AND contract = ? AND token_id = ? AND status = 'ok'";
	struct bp_stmt *st;
	enum bp_db_step r;

	*name = *image = NULL;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, token_id);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		*name = col_dup(st, 0);
		*image = col_dup(st, 1);
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

int
bp_nft_cached_collection(struct bp_db *db, const char *chain, const char *contract, char **name)
{
	static const char sql[] = "SELECT name FROM nft_collections WHERE chain = ?"
	    " AND contract = ?";
	struct bp_stmt *st;
	enum bp_db_step r;

	*name = NULL;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_text(st, 2, contract);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW)
		*name = col_dup(st, 0);
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

int
bp_nft_spam_contracts(struct bp_db *db, const char *chain, char (**list)[BP_ADDR_STR_MAX],
    size_t *n)
{
	static const char sql[] = "SELECT contract FROM nft_collections WHERE chain = ?"
	    " AND spam = 1 ORDER BY contract";
	struct bp_stmt *st;
	enum bp_db_step r;
	size_t cap = 0;
	void *p;

	*list = NULL;
	*n = 0;
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((p = realloc(*list, cap * sizeof(**list))) == NULL) {
				r = BP_DB_ERROR;
				break;
			}
			*list = p;
		}
		bp_strlcpy((*list)[(*n)++], bp_col_text(st, 0), BP_ADDR_STR_MAX);
	}
	bp_stmt_reset(st);
	if (r == BP_DB_ERROR) {
		free(*list);
		*list = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}
