/*
 * The NFT resource (nft.h; docs/nfts.md): chain reads, the metadata and collection caches of
 * schema/006_nfts.sql (this module owns them), and the answers of fcgi/nfts.c. Documents are
 * fetched with lib/fetch.h outside any transaction; each cache write is one statement.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/chain.h"
#include "fetch.h"
#include "index_read.h"
#include "log.h"
#include "nft.h"
#include "nft_doc.h"
#include "nft_uri.h"
#include "upstream.h"
#include "util.h"

/*
 * TEMPORARY, until lib/fetch.c lands on main (its interface, lib/fetch.h, is there): weak
 * references keep this branch linking; without the fetcher every URL fetch fails cleanly.
 */
#ifndef BP_NFT_FETCH_LINKED
#pragma weak bp_fetch_get
#pragma weak bp_fetch_result_free
#define FETCHER_MISSING()	(bp_fetch_get == NULL)
#else
#define FETCHER_MISSING()	0
#endif

#define FETCH_CONNECT_MS	3000
#define FETCH_TOTAL_MS		5000
#define FETCH_REDIRECTS		3
#define RETRY_MAX_SECONDS	86400
#define STR_MAX			(64 * 1024)	/* name(), symbol(), tokenURI() answers kept */

/* Function selectors and ERC-165 interface ids (EIP-165, EIP-721, EIP-1155). */
static const uint8_t SEL_SUPPORTS[4] = { 0x01, 0xff, 0xc9, 0xa7 };	/* supportsInterface(bytes4) */
static const uint8_t SEL_OWNER_OF[4] = { 0x63, 0x52, 0x21, 0x1e };	/* ownerOf(uint256) */
static const uint8_t SEL_TOKEN_URI[4] = { 0xc8, 0x7b, 0x56, 0xdd };	/* tokenURI(uint256) */
static const uint8_t SEL_URI[4] = { 0x0e, 0x89, 0x34, 0x1c };		/* uri(uint256) */
static const uint8_t SEL_NAME[4] = { 0x06, 0xfd, 0xde, 0x03 };		/* name() */
static const uint8_t SEL_SYMBOL[4] = { 0x95, 0xd8, 0x9b, 0x41 };	/* symbol() */
static const uint8_t SEL_TOTAL[4] = { 0x18, 0x16, 0x0d, 0xdd };		/* totalSupply() */
static const uint8_t SEL_TOTAL_ID[4] = { 0xbd, 0x85, 0xb0, 0x39 };	/* totalSupply(uint256) */
static const uint8_t SEL_CONTRACT_URI[4] = { 0xe8, 0xa3, 0xd4, 0x85 };	/* contractURI() */
static const uint8_t IID_ERC721[4] = { 0x80, 0xac, 0x58, 0xcd };
static const uint8_t IID_ERC1155[4] = { 0xd9, 0xb6, 0x7a, 0x26 };

enum standard {
	STD_NONE,	/* 0 */
	STD_721,	/* 1 */
	STD_1155,	/* 2 */
	STD__MAX
};
static const char *const std_db[STD__MAX] = { "", "erc721", "erc1155" };
static const char *const std_api[STD__MAX] = { "", "ERC721", "ERC1155" };

struct bp_nft {
	const struct bp_config	*cfg;
	struct bp_upstream	*up;
	struct bp_chain		*chain;
};

/* A collection's cached row. Strings malloc'd (NULL when unknown); coll_free frees them. */
struct coll {
	int		 found;
	enum standard	 standard;
	char		*name, *symbol, *contract_uri, *description, *image, *banner;
	int		 spam;		/* -1 not judged */
	char		 status[8];
	int64_t		 attempts, next_retry;
};

/* A token's cached metadata row, as struct coll. */
struct meta {
	int		 found;
	int		 ok;
	char		*token_uri, *name, *description, *image, *traits, *error;
	int64_t		 attempts, next_retry;
};

/* The strings a call works with: the chain key and the lower-case contract. */
struct names {
	char	chain[BP_INDEX_CHAIN_MAX];
	char	contract[BP_ADDR_STR_MAX];
	char	contract_cs[BP_ADDR_STR_MAX];
	char	token_id[BP_U256_DEC_MAX];
};

struct bp_nft *
bp_nft_new(const struct bp_config *cfg)
{
	struct bp_nft *n;

	if ((n = calloc(1, sizeof(*n))) == NULL) {
		bp_err("%s: out of memory", __func__);
		return NULL;
	}
	n->cfg = cfg;
	if ((n->up = bp_upstream_new(cfg)) == NULL || (n->chain = bp_chain_new(cfg, n->up)) == NULL) {
		bp_err("%s: cannot make the upstream pool", __func__);
		bp_nft_free(n);
		return NULL;
	}
	return n;
}

void
bp_nft_free(struct bp_nft *n)
{
	if (n == NULL)
		return;
	bp_chain_free(n->chain);
	bp_upstream_free(n->up);
	free(n);
}

/* Sets *err and returns -1, for "return fail(err, 404, ...)". */
static int __attribute__((format(printf, 4, 5)))
fail(struct bp_nft_error *err, int status, const char *code, const char *fmt, ...)
{
	va_list ap;

	err->status = status;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -1;
}

static int
db_fail(struct bp_nft_error *err)
{
	return fail(err, 500, "internal_error", "database error");
}

static int
node_fail(struct bp_nft_error *err, const struct bp_network *net)
{
	return fail(err, 500, "internal_error",
	    "the %s %s node did not answer; retry with exponential backoff", net->chain,
	    net->network);
}

static int
too_large(struct bp_nft_error *err)
{
	return fail(err, 500, "internal_error", "response too large");
}

static void
names_init(struct names *nm, const struct bp_network *net, const uint8_t contract[20],
    const struct bp_u256 *id)
{
	snprintf(nm->chain, sizeof(nm->chain), "%s.%s", net->chain, net->network);
	bp_addr_format_lower(contract, nm->contract, sizeof(nm->contract));
	bp_addr_format_checksum(contract, nm->contract_cs, sizeof(nm->contract_cs));
	nm->token_id[0] = '\0';
	if (id != NULL)
		bp_u256_to_dec(id, nm->token_id, sizeof(nm->token_id));
}

static char *
col_dup(struct bp_stmt *st, int col)
{
	return bp_col_is_null(st, col) ? NULL : strdup(bp_col_text(st, col));
}

static enum standard
std_parse(const char *s)
{
	return strcmp(s, "erc721") == 0 ? STD_721 : strcmp(s, "erc1155") == 0 ? STD_1155 :
	    STD_NONE;
}

/* ---- chain reads ---- */

/* A call read of selector sel with an optional 32-byte argument, into r (data in buf[36]). */
static void
call_read(struct bp_chain_read *r, const uint8_t to[20], const uint8_t sel[4],
    const uint8_t *arg, size_t arglen, uint8_t buf[36])
{
	memset(r, 0, sizeof(*r));
	r->op = BP_CHAIN_CALL;
	memcpy(r->address, to, 20);
	memcpy(buf, sel, 4);
	memset(buf + 4, 0, 32);
	if (arg != NULL)
		memcpy(buf + 4 + (32 - arglen), arg, arglen);
	r->data = buf;
	r->len = arg != NULL ? 36 : 4;
	r->block = BP_CHAIN_LATEST;
}

/* supportsInterface(iid): a bytes4 is left-aligned in its word, unlike a uint. */
static void
supports_read(struct bp_chain_read *r, const uint8_t to[20], const uint8_t iid[4],
    uint8_t buf[36])
{
	call_read(r, to, SEL_SUPPORTS, iid, 4, buf);
	memset(buf + 4, 0, 32);
	memcpy(buf + 4, iid, 4);
}

/* The ABI string a read returned, as a malloc'd copy; NULL when it failed or is no string. */
static char *
read_string(const struct bp_chain_read *r)
{
	char *s;

	if (r->err.kind != BP_CHAIN_OK || r->bytes == NULL || (s = malloc(STR_MAX)) == NULL)
		return NULL;
	if (bp_abi_read_string(r->bytes, r->nbytes, 0, s, STR_MAX) == -1) {
		free(s);
		return NULL;
	}
	return s;
}

/* 1 when a supportsInterface read answered true. */
static int
read_true(const struct bp_chain_read *r)
{
	int b = 0;

	return r->err.kind == BP_CHAIN_OK && r->bytes != NULL &&
	    bp_abi_read_bool(r->bytes, r->nbytes, 0, &b) == 0 && b == 1;
}

/* 1 when every read failed for want of a node. */
static int
all_transport(const struct bp_chain_read *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].err.kind != BP_CHAIN_ERR_TRANSPORT)
			return 0;
	return 1;
}

/* ---- the collection cache ---- */

static void
coll_free(struct coll *c)
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
static int
coll_load(struct bp_db *db, const struct names *nm, struct coll *c)
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
static int
coll_store(struct bp_db *db, const struct names *nm, const struct coll *c)
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
	enum bp_db_step r;

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
	r = bp_stmt_step(st);
	bp_stmt_reset(st);
	return r == BP_DB_DONE ? 0 : -1;
}

/*
 * The collection row of nm's contract, learnt from the chain when the cache has none: ERC-165
 * for both standards, name() and symbol() in one round trip. Returns 0 with c, or -1 with err
 * (404 when the contract is neither ERC-721 nor ERC-1155).
 */
static int
coll_get(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t contract[20], const struct names *nm, struct coll *c,
    struct bp_nft_error *err)
{
	struct bp_chain_read r[4];
	uint8_t data[4][36];

	if (coll_load(db, nm, c) == -1)
		return db_fail(err);
	if (c->found)
		return 0;
	supports_read(&r[0], contract, IID_ERC721, data[0]);
	supports_read(&r[1], contract, IID_ERC1155, data[1]);
	call_read(&r[2], contract, SEL_NAME, NULL, 0, data[2]);
	call_read(&r[3], contract, SEL_SYMBOL, NULL, 0, data[3]);
	bp_chain_calls(n->chain, net, r, 4);
	if (all_transport(r, 4)) {
		bp_chain_reads_free(r, 4);
		return node_fail(err, net);
	}
	c->standard = read_true(&r[0]) ? STD_721 : read_true(&r[1]) ? STD_1155 : STD_NONE;
	c->name = read_string(&r[2]);
	c->symbol = read_string(&r[3]);
	c->spam = -1;
	bp_chain_reads_free(r, 4);
	if (c->standard == STD_NONE)
		return fail(err, 404, "not_found", "%s is not an ERC-721 or ERC-1155 contract on %s %s",
		    nm->contract_cs, net->chain, net->network);
	if (coll_store(db, nm, c) == -1)
		return db_fail(err);
	c->found = 1;
	return 0;
}

/* ---- the metadata cache ---- */

static void
meta_free(struct meta *m)
{
	free(m->token_uri);
	free(m->name);
	free(m->description);
	free(m->image);
	free(m->traits);
	free(m->error);
	memset(m, 0, sizeof(*m));
}

static int
meta_load(struct bp_db *db, const struct names *nm, struct meta *m)
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

/* The next retry after the attempts-th failure in a row: base x 2^(attempts-1), a day at most. */
static int64_t
backoff(int64_t base, int64_t attempts)
{
	int64_t d = base;

	while (--attempts > 0 && d < RETRY_MAX_SECONDS)
		d *= 2;
	return d < RETRY_MAX_SECONDS ? d : RETRY_MAX_SECONDS;
}

static int
meta_store(struct bp_db *db, const struct names *nm, const struct meta *m)
{
	static const char sql[] = "INSERT INTO nft_metadata (chain, contract, token_id, token_uri,"
	    " status, name, description, image, traits, error, attempts, fetched_at, next_retry)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chain, contract, token_id)"
	    " DO UPDATE SET token_uri = excluded.token_uri, status = excluded.status,"
	    " name = excluded.name, description = excluded.description, image = excluded.image,"
	    " traits = excluded.traits, error = excluded.error, attempts = excluded.attempts,"
	    " fetched_at = excluded.fetched_at, next_retry = excluded.next_retry";
	struct bp_stmt *st;
	enum bp_db_step r;

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
	r = bp_stmt_step(st);
	bp_stmt_reset(st);
	return r == BP_DB_DONE ? 0 : -1;
}

/* ---- fetching documents ---- */

/*
 * The document uri (a tokenURI after {id} substitution, or a contractURI) means, parsed into
 * doc. Returns 0, or -1 with why set (doc empty).
 */
static int
fetch_doc(struct bp_nft *n, const struct bp_network *net, const char *uri,
    struct bp_nft_doc *doc, char *why, size_t whylen)
{
	struct bp_nft_gateways gw = { n->cfg->ipfs_gateway, n->cfg->arweave_gateway };
	struct bp_fetch_opts fo;
	struct bp_fetch_result res;
	struct bp_buf where;
	int rc = -1;

	memset(doc, 0, sizeof(*doc));
	bp_buf_init(&where, BP_NFT_DATA_MAX);
	switch (bp_nft_uri_resolve(uri, strlen(uri), &gw, &where)) {
	case BP_NFT_URI_DATA:
		if ((rc = bp_nft_doc_parse(where.data, where.len, doc)) == -1)
			snprintf(why, whylen, "the data: URI is not a JSON object");
		break;
	case BP_NFT_URI_URL:
		memset(&fo, 0, sizeof(fo));
		fo.allow_private = net->allow_private_urls >= 0 ? net->allow_private_urls :
		    n->cfg->allow_private_urls;
		fo.connect_ms = FETCH_CONNECT_MS;
		fo.total_ms = FETCH_TOTAL_MS;
		fo.max_bytes = BP_NFT_DATA_MAX;
		fo.max_redirects = FETCH_REDIRECTS;
		if (FETCHER_MISSING()) {
			snprintf(why, whylen, "no fetcher built in");
			break;
		}
		if (bp_fetch_get(where.data, &fo, &res) == -1)
			snprintf(why, whylen, "%s", res.error);
		else if (res.status < 200 || res.status > 299)
			snprintf(why, whylen, "HTTP %ld", res.status);
		else if ((rc = bp_nft_doc_parse(res.body.data, res.body.len, doc)) == -1)
			snprintf(why, whylen, "the document is not a JSON object");
		bp_fetch_result_free(&res);
		break;
	default:
		snprintf(why, whylen, "unsupported URI");
		break;
	}
	bp_buf_free(&where);
	return rc;
}

/*
 * Fetches the metadata of nm's token from uri (as the contract gave it; {id} substituted
 * here for ERC-1155) and stores the outcome in m and the cache (prev: the attempts so far).
 * Returns 0, or -1 on a database error.
 */
static int
meta_refresh(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const struct names *nm, enum standard std, const struct bp_u256 *id, const char *uri,
    int64_t prev_attempts, struct meta *m)
{
	struct bp_nft_doc doc;
	struct bp_buf subst;
	char why[200];
	const char *target = uri;

	meta_free(m);
	m->found = 1;
	m->token_uri = strdup(uri);
	bp_buf_init(&subst, BP_NFT_DATA_MAX);
	if (std == STD_1155 && strstr(uri, "{id}") != NULL &&
	    bp_nft_uri_subst_id(uri, strlen(uri), id, &subst) == 0)
		target = subst.data;
	if (fetch_doc(n, net, target, &doc, why, sizeof(why)) == 0) {
		m->ok = 1;
		m->name = doc.name;
		m->description = doc.description;
		m->image = doc.image;
		m->traits = doc.traits;
		free(doc.banner);
		m->error = strdup("");
	} else {
		m->attempts = prev_attempts + 1;
		m->next_retry = (int64_t)time(NULL) + backoff(n->cfg->nft_retry_seconds, m->attempts);
		m->error = strdup(why);
		bp_info("nft metadata %s/%s #%s: %s (retry in %llds)", nm->chain, nm->contract,
		    nm->token_id, why, (long long)(m->next_retry - time(NULL)));
	}
	bp_buf_free(&subst);
	return meta_store(db, nm, m);
}

/* ---- GET metadata ---- */

/* The token's on-chain facts: whether it exists, its URI and its owner. */
struct token {
	int	exists;
	char	*uri;			/* NULL when tokenURI/uri reverted */
	char	owner[BP_ADDR_STR_MAX];	/* EIP-55, "" when none or not one */
};

static int
token_read(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t contract[20], const struct names *nm, enum standard std,
    const struct bp_u256 *id, struct token *t, struct bp_nft_error *err)
{
	struct bp_chain_read r[2];
	struct bp_u256 supply;
	uint8_t data[2][36], idbe[32], owner[20];
	char holder[BP_ADDR_STR_MAX];
	int64_t holders = 0;

	memset(t, 0, sizeof(*t));
	bp_u256_to_be32(id, idbe);
	if (std == STD_721) {
		call_read(&r[0], contract, SEL_OWNER_OF, idbe, 32, data[0]);
		call_read(&r[1], contract, SEL_TOKEN_URI, idbe, 32, data[1]);
	} else {
		call_read(&r[0], contract, SEL_URI, idbe, 32, data[0]);
		call_read(&r[1], contract, SEL_TOTAL_ID, idbe, 32, data[1]);
	}
	bp_chain_calls(n->chain, net, r, 2);
	if (all_transport(r, 2) || (std == STD_721 && r[0].err.kind == BP_CHAIN_ERR_TRANSPORT)) {
		bp_chain_reads_free(r, 2);
		return node_fail(err, net);
	}
	if (std == STD_721) {
		t->exists = r[0].err.kind == BP_CHAIN_OK && r[0].bytes != NULL &&
		    bp_abi_read_address(r[0].bytes, r[0].nbytes, 0, owner) == 0 &&
		    memcmp(owner, (uint8_t[20]){ 0 }, 20) != 0;
		if (t->exists)
			bp_addr_format_checksum(owner, t->owner, sizeof(t->owner));
		t->uri = read_string(&r[1]);
	} else {
		t->uri = read_string(&r[0]);
		if (bp_index_nft_holders(db, nm->chain, nm->contract, nm->token_id, holder,
		    sizeof(holder), &holders) == -1) {
			bp_chain_reads_free(r, 2);
			return db_fail(err);
		}
		if (holders == 1) {
			uint8_t a[20];

			if (bp_addr_parse(holder, strlen(holder), 0, a) == 0)
				bp_addr_format_checksum(a, t->owner, sizeof(t->owner));
		}
		/*
		 * ERC-1155 has no ownerOf: an id exists when the index has a holder, or
		 * ERC1155Supply's totalSupply(id) is not zero; on a network that is not indexed
		 * and without totalSupply(id), every id is taken to exist.
		 */
		if (holders > 0)
			t->exists = 1;
		else if (r[1].err.kind == BP_CHAIN_OK && r[1].bytes != NULL &&
		    bp_abi_read_u256(r[1].bytes, r[1].nbytes, 0, &supply) == 0)
			t->exists = !bp_u256_is_zero(&supply);
		else
			t->exists = !net->index;
	}
	bp_chain_reads_free(r, 2);
	if (!t->exists) {
		free(t->uri);
		t->uri = NULL;
		return fail(err, 404, "not_found", "token %s of %s does not exist on %s %s",
		    nm->token_id, nm->contract_cs, net->chain, net->network);
	}
	return 0;
}

static int
add_str(struct bp_buf *b, const char *name, const char *v)
{
	return bp_buf_printf(b, ",\"%s\":", name) == -1 || bp_nft_json_str_or_null(b, v) == -1 ?
	    -1 : 0;
}

/* image_gateway_url of an image field, or NULL; the URL in gw (reset). */
static const char *
image_gateway(const struct bp_config *cfg, const char *image, struct bp_buf *gw)
{
	struct bp_nft_gateways g = { cfg->ipfs_gateway, cfg->arweave_gateway };

	if (image == NULL || bp_nft_image_url(image, strlen(image), &g, gw) == -1)
		return NULL;
	return gw->data;
}

static int
render_metadata(const struct bp_config *cfg, const struct bp_network *net,
    const struct names *nm, enum standard std, const struct token *t, const struct meta *m,
    struct bp_buf *out)
{
	const struct meta none = { 0 };
	struct bp_buf gw;
	int rc;

	if (!m->ok)
		m = &none;
	bp_buf_init(&gw, BP_NFT_URI_MAX + 1);
	rc = bp_buf_adds(out, "{\"contract\":\"") == -1 ||
	    bp_buf_adds(out, nm->contract_cs) == -1 ||
	    bp_buf_printf(out, "\",\"chain\":\"%s\",\"network\":\"%s\",\"token_id\":\"%s\","
	    "\"standard\":\"%s\"", net->chain, net->network, nm->token_id, std_api[std]) == -1 ||
	    add_str(out, "owner", t->owner[0] != '\0' ? t->owner : NULL) == -1 ||
	    add_str(out, "token_uri", t->uri) == -1 ||
	    add_str(out, "name", m->name) == -1 ||
	    add_str(out, "description", m->description) == -1 ||
	    add_str(out, "image_url", m->image) == -1 ||
	    add_str(out, "image_gateway_url", image_gateway(cfg, m->image, &gw)) == -1 ||
	    bp_buf_printf(out, ",\"traits\":%s", m->traits != NULL ? m->traits : "[]") == -1 ||
	    bp_buf_adds(out, "}") == -1 ? -1 : 0;
	bp_buf_free(&gw);
	return rc;
}

int
bp_nft_metadata(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t contract[20], const struct bp_u256 *id, struct bp_buf *out,
    struct bp_nft_error *err)
{
	struct names nm;
	struct coll c;
	struct token t;
	struct meta m;
	int rc = -1;

	memset(&t, 0, sizeof(t));
	memset(&m, 0, sizeof(m));
	names_init(&nm, net, contract, id);
	if (coll_get(n, db, net, contract, &nm, &c, err) == -1 ||
	    token_read(n, db, net, contract, &nm, c.standard, id, &t, err) == -1)
		goto out;
	if (t.uri != NULL) {
		if (meta_load(db, &nm, &m) == -1) {
			db_fail(err);
			goto out;
		}
		/*
		 * Fetch when the cache has nothing for this URI, or its backoff is over; a URI
		 * that changed (a reveal) starts over.
		 */
		if (!m.found || m.token_uri == NULL || strcmp(m.token_uri, t.uri) != 0 ||
		    (!m.ok && m.next_retry <= (int64_t)time(NULL))) {
			int64_t prev = m.found && m.token_uri != NULL &&
			    strcmp(m.token_uri, t.uri) == 0 ? m.attempts : 0;

			if (meta_refresh(n, db, net, &nm, c.standard, id, t.uri, prev, &m) == -1) {
				db_fail(err);
				goto out;
			}
		}
	}
	if (render_metadata(n->cfg, net, &nm, c.standard, &t, &m, out) == -1) {
		too_large(err);
		goto out;
	}
	rc = 0;
out:
	free(t.uri);
	meta_free(&m);
	coll_free(&c);
	return rc;
}

/* ---- GET collection ---- */

/*
 * Refreshes what the chain says of the collection (name, symbol, totalSupply, contractURI) and
 * the contractURI document when due. total is "" when totalSupply() is not there.
 */
static int
coll_refresh(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t contract[20], const struct names *nm, struct coll *c, char *total,
    size_t totallen, struct bp_nft_error *err)
{
	struct bp_chain_read r[4];
	struct bp_nft_doc doc;
	struct bp_u256 supply;
	uint8_t data[4][36];
	char *name, *symbol, *uri, why[200];
	int64_t now = (int64_t)time(NULL);

	total[0] = '\0';
	call_read(&r[0], contract, SEL_NAME, NULL, 0, data[0]);
	call_read(&r[1], contract, SEL_SYMBOL, NULL, 0, data[1]);
	call_read(&r[2], contract, SEL_TOTAL, NULL, 0, data[2]);
	call_read(&r[3], contract, SEL_CONTRACT_URI, NULL, 0, data[3]);
	bp_chain_calls(n->chain, net, r, 4);
	if (all_transport(r, 4)) {
		bp_chain_reads_free(r, 4);
		return node_fail(err, net);
	}
	name = read_string(&r[0]);
	symbol = read_string(&r[1]);
	uri = read_string(&r[3]);
	if (r[2].err.kind == BP_CHAIN_OK && r[2].bytes != NULL &&
	    bp_abi_read_u256(r[2].bytes, r[2].nbytes, 0, &supply) == 0)
		bp_u256_to_dec(&supply, total, totallen);
	bp_chain_reads_free(r, 4);
	free(c->name);
	free(c->symbol);
	c->name = name;
	c->symbol = symbol;
	/* The document: again when the URI changed, or after its backoff. */
	if (uri == NULL || uri[0] == '\0') {
		free(c->contract_uri);
		c->contract_uri = uri;
		uri = NULL;
		strcpy(c->status, "ok");
	} else if (c->contract_uri == NULL || strcmp(c->contract_uri, uri) != 0 ||
	    strcmp(c->status, "pending") == 0 ||
	    (strcmp(c->status, "failed") == 0 && c->next_retry <= now)) {
		if (c->contract_uri == NULL || strcmp(c->contract_uri, uri) != 0)
			c->attempts = 0;
		free(c->contract_uri);
		c->contract_uri = uri;
		uri = NULL;
		free(c->description);
		free(c->image);
		free(c->banner);
		c->description = c->image = c->banner = NULL;
		if (fetch_doc(n, net, c->contract_uri, &doc, why, sizeof(why)) == 0) {
			strcpy(c->status, "ok");
			c->attempts = 0;
			c->next_retry = 0;
			c->description = doc.description;
			c->image = doc.image;
			c->banner = doc.banner;
			if (c->name == NULL)
				c->name = doc.name;
			else
				free(doc.name);
			free(doc.traits);
		} else {
			strcpy(c->status, "failed");
			c->attempts++;
			c->next_retry = now + backoff(n->cfg->nft_retry_seconds, c->attempts);
		}
	}
	free(uri);
	if (coll_store(db, nm, c) == -1)
		return db_fail(err);
	return 0;
}

int
bp_nft_collection(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t contract[20], struct bp_buf *out, struct bp_nft_error *err)
{
	struct names nm;
	struct coll c;
	struct bp_buf gw;
	char total[BP_U256_DEC_MAX];
	int64_t tokens = 0, owners = 0;
	int rc = -1;

	bp_buf_init(&gw, BP_NFT_URI_MAX + 1);
	names_init(&nm, net, contract, NULL);
	if (coll_get(n, db, net, contract, &nm, &c, err) == -1 ||
	    coll_refresh(n, db, net, contract, &nm, &c, total, sizeof(total), err) == -1)
		goto out;
	if (bp_index_nft_collection(db, nm.chain, nm.contract, &tokens, &owners) == -1) {
		db_fail(err);
		goto out;
	}
	if (total[0] == '\0')
		snprintf(total, sizeof(total), "%lld", (long long)tokens);
	if (bp_buf_adds(out, "{\"contract\":\"") == -1 ||
	    bp_buf_adds(out, nm.contract_cs) == -1 ||
	    bp_buf_printf(out, "\",\"chain\":\"%s\",\"network\":\"%s\"", net->chain,
	    net->network) == -1 ||
	    add_str(out, "name", c.name) == -1 || add_str(out, "symbol", c.symbol) == -1 ||
	    bp_buf_printf(out, ",\"standard\":\"%s\",\"total_supply\":%s,\"num_owners\":%lld,"
	    "\"floor_price_eth\":null,\"floor_price_usd\":null", std_api[c.standard], total,
	    (long long)owners) == -1 ||
	    add_str(out, "banner_url", image_gateway(n->cfg, c.banner, &gw)) == -1 ||
	    add_str(out, "image_url", image_gateway(n->cfg, c.image, &gw)) == -1 ||
	    add_str(out, "description", c.description) == -1 ||
	    add_str(out, "contract_uri", c.contract_uri) == -1 ||
	    bp_buf_printf(out, ",\"spam\":%s}", c.spam == 1 ? "true" : "false") == -1) {
		too_large(err);
		goto out;
	}
	rc = 0;
out:
	bp_buf_free(&gw);
	coll_free(&c);
	return rc;
}

/* ---- GET owned ---- */

struct owned {
	struct bp_db	*db;
	const char	*chain;
	struct bp_buf	*out;
	int		 n;		/* entries written */
	int		 failed;
	/* Exclude-spam pass: the spam contracts, and the window to write. */
	char		(*spam)[BP_ADDR_STR_MAX];
	size_t		 nspam;
	int64_t		 seen, from, to;
	/* The last contract's names, looked up once per run of its tokens. */
	char		 last[BP_ADDR_STR_MAX];
	char		 last_cs[BP_ADDR_STR_MAX];
	char		*last_name;
};

/* The cached name and image of a token into *name, *image (malloc'd or NULL); 0 or -1. */
static int
owned_meta(struct owned *o, const struct bp_index_nft *x, char **name, char **image)
{
	static const char sql[] = "SELECT name, image FROM nft_metadata WHERE chain = ?"
	    " AND contract = ? AND token_id = ? AND status = 'ok'";
	struct bp_stmt *st;
	enum bp_db_step r;

	*name = *image = NULL;
	if ((st = bp_db_stmt(o->db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, o->chain);
	bp_stmt_text(st, 2, x->contract);
	bp_stmt_text(st, 3, x->token_id);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		*name = col_dup(st, 0);
		*image = col_dup(st, 1);
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

/* Switches o's last contract to x's: its EIP-55 form and cached name. 0 or -1. */
static int
owned_contract(struct owned *o, const char *contract)
{
	static const char sql[] = "SELECT name FROM nft_collections WHERE chain = ?"
	    " AND contract = ?";
	struct bp_stmt *st;
	enum bp_db_step r;
	uint8_t a[20];

	if (strcmp(o->last, contract) == 0)
		return 0;
	free(o->last_name);
	o->last_name = NULL;
	bp_strlcpy(o->last, contract, sizeof(o->last));
	if (bp_addr_parse(contract, strlen(contract), 0, a) == -1)
		return -1;
	bp_addr_format_checksum(a, o->last_cs, sizeof(o->last_cs));
	if ((st = bp_db_stmt(o->db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, o->chain);
	bp_stmt_text(st, 2, contract);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW)
		o->last_name = col_dup(st, 0);
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : 0;
}

static int
owned_entry(const struct bp_index_nft *x, void *arg)
{
	struct owned *o = arg;
	char *name = NULL, *image = NULL;
	size_t i;

	if (o->spam != NULL) {	/* the exclude-spam pass counts and windows itself */
		for (i = 0; i < o->nspam; i++)
			if (strcmp(o->spam[i], x->contract) == 0)
				return 0;
		if (o->seen++ < o->from || o->seen > o->to)
			return 0;
	}
	if (owned_contract(o, x->contract) == -1 || owned_meta(o, x, &name, &image) == -1) {
		o->failed = 1;
		return 1;
	}
	if ((o->n > 0 && bp_buf_adds(o->out, ",") == -1) ||
	    bp_buf_printf(o->out, "{\"contract\":\"%s\",\"token_id\":\"%s\"", o->last_cs,
	    x->token_id) == -1 ||
	    add_str(o->out, "name", name) == -1 ||
	    add_str(o->out, "collection_name", o->last_name) == -1 ||
	    add_str(o->out, "image_url", image) == -1 ||
	    bp_buf_printf(o->out, ",\"standard\":\"%s\",\"quantity\":\"%s\"}",
	    strcmp(x->standard, "erc1155") == 0 ? "ERC1155" : "ERC721", x->quantity) == -1)
		o->failed = 2;
	free(name);
	free(image);
	o->n++;
	return o->failed;
}

/* The contracts of chain judged spam into o->spam (malloc'd); 0 or -1. */
static int
spam_list(struct owned *o)
{
	static const char sql[] = "SELECT contract FROM nft_collections WHERE chain = ?"
	    " AND spam = 1 ORDER BY contract";
	struct bp_stmt *st;
	enum bp_db_step r;
	size_t cap = 0;
	void *p;

	if ((st = bp_db_stmt(o->db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, o->chain);
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		if (o->nspam == cap) {
			cap = cap ? cap * 2 : 16;
			if ((p = realloc(o->spam, cap * sizeof(*o->spam))) == NULL) {
				r = BP_DB_ERROR;
				break;
			}
			o->spam = p;
		}
		bp_strlcpy(o->spam[o->nspam++], bp_col_text(st, 0), BP_ADDR_STR_MAX);
	}
	bp_stmt_reset(st);
	if (r != BP_DB_ERROR && o->spam == NULL && (o->spam = malloc(sizeof(*o->spam))) == NULL)
		r = BP_DB_ERROR;
	return r == BP_DB_ERROR ? -1 : 0;
}

int
bp_nft_owned(struct bp_db *db, const struct bp_network *net, const uint8_t owner[20],
    int64_t page, int64_t limit, int exclude_spam, struct bp_buf *out,
    struct bp_nft_error *err)
{
	struct owned o;
	char chain[BP_INDEX_CHAIN_MAX], addr[BP_ADDR_STR_MAX], addr_cs[BP_ADDR_STR_MAX];
	int64_t total = 0;
	int rc = -1;

	memset(&o, 0, sizeof(o));
	snprintf(chain, sizeof(chain), "%s.%s", net->chain, net->network);
	bp_addr_format_lower(owner, addr, sizeof(addr));
	bp_addr_format_checksum(owner, addr_cs, sizeof(addr_cs));
	o.db = db;
	o.chain = chain;
	o.out = out;
	if (bp_buf_printf(out, "{\"address\":\"%s\",\"chain\":\"%s\",\"network\":\"%s\","
	    "\"nfts\":[", addr_cs, net->chain, net->network) == -1) {
		too_large(err);
		goto out;
	}
	if (exclude_spam) {
		o.from = (page - 1) * limit;
		o.to = o.from + limit;
		if (spam_list(&o) == -1 || bp_index_each_nft(db, chain, addr, owned_entry, &o) < 0 ||
		    o.failed == 1) {
			db_fail(err);
			goto out;
		}
		total = o.seen;
	} else if (bp_index_nft_count(db, chain, addr, &total) == -1 ||
	    bp_index_nft_page(db, chain, addr, (page - 1) * limit, limit, owned_entry, &o) < 0 ||
	    o.failed == 1) {
		db_fail(err);
		goto out;
	}
	if (o.failed || bp_buf_printf(out, "],\"page\":%lld,\"limit\":%lld,\"total\":%lld}",
	    (long long)page, (long long)limit, (long long)total) == -1) {
		too_large(err);
		goto out;
	}
	rc = 0;
out:
	free(o.spam);
	free(o.last_name);
	return rc;
}

/* ---- cron/nftmeta ---- */

struct fill_item {
	char		contract[BP_ADDR_STR_MAX];
	char		token_id[BP_U256_DEC_MAX];
	int64_t		attempts;
	int		have_coll;
};

struct fill {
	struct bp_db		*db;
	const char		*chain;
	struct fill_item	*items;
	int			 n, max;
	int			 scanned;
	char			 last_contract[BP_ADDR_STR_MAX];
	char			 last_token[BP_U256_DEC_MAX];
	int			 failed;
};

/* One indexed token: queued when the cache lacks it or its backoff is over. */
static int
fill_scan(const struct bp_index_nft *x, void *arg)
{
	struct fill *f = arg;
	struct names nm;
	struct meta m;
	int64_t now = (int64_t)time(NULL);

	f->scanned++;
	bp_strlcpy(f->last_contract, x->contract, sizeof(f->last_contract));
	bp_strlcpy(f->last_token, x->token_id, sizeof(f->last_token));
	bp_strlcpy(nm.chain, f->chain, sizeof(nm.chain));
	bp_strlcpy(nm.contract, x->contract, sizeof(nm.contract));
	bp_strlcpy(nm.token_id, x->token_id, sizeof(nm.token_id));
	if (meta_load(f->db, &nm, &m) == -1) {
		f->failed = 1;
		return 1;
	}
	if (!m.found || (!m.ok && m.next_retry <= now)) {
		bp_strlcpy(f->items[f->n].contract, x->contract, BP_ADDR_STR_MAX);
		bp_strlcpy(f->items[f->n].token_id, x->token_id, BP_U256_DEC_MAX);
		f->items[f->n].attempts = m.attempts;
		f->n++;
	}
	meta_free(&m);
	return f->n == f->max;
}

static int
cursor_load(struct bp_db *db, const char *chain, char *contract, char *token)
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

static int
cursor_store(struct bp_db *db, const char *chain, const char *contract, const char *token)
{
	static const char sql[] = "INSERT INTO nft_fill_cursors (chain, contract, token_id)"
	    " VALUES (?, ?, ?) ON CONFLICT (chain) DO UPDATE SET contract = excluded.contract,"
	    " token_id = excluded.token_id";
	struct bp_stmt *st;
	enum bp_db_step r;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, token);
	r = bp_stmt_step(st);
	bp_stmt_reset(st);
	return r == BP_DB_DONE ? 0 : -1;
}

/* Fetches one queued token's metadata (reading its URI first). 0, or -1 on a db error. */
static int
fill_one(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const struct fill_item *it)
{
	struct bp_nft_error err;
	struct names nm;
	struct bp_u256 id;
	struct coll c;
	struct token t;
	struct meta m;
	uint8_t contract[20];
	int rc = 0;

	memset(&m, 0, sizeof(m));
	if (bp_addr_parse(it->contract, strlen(it->contract), 0, contract) == -1 ||
	    bp_u256_from_dec(&id, it->token_id, strlen(it->token_id)) == -1)
		return 0;
	names_init(&nm, net, contract, &id);
	/* A request may have fetched it since the scan. */
	if (meta_load(db, &nm, &m) == -1)
		return -1;
	if (m.found && (m.ok || m.next_retry > (int64_t)time(NULL))) {
		meta_free(&m);
		return 0;
	}
	meta_free(&m);
	if (coll_get(n, db, net, contract, &nm, &c, &err) == -1) {
		coll_free(&c);
		return err.status == 500 && strcmp(err.message, "database error") == 0 ? -1 : 0;
	}
	if (token_read(n, db, net, contract, &nm, c.standard, &id, &t, &err) == 0 &&
	    t.uri != NULL)
		rc = meta_refresh(n, db, net, &nm, c.standard, &id, t.uri, it->attempts, &m);
	free(t.uri);
	meta_free(&m);
	coll_free(&c);
	return rc;
}

int
bp_nft_fill(struct bp_nft *n, struct bp_db *db, const struct bp_network *net, int scan,
    int max)
{
	struct fill f;
	char chain[BP_INDEX_CHAIN_MAX], from_c[BP_ADDR_STR_MAX], from_t[BP_U256_DEC_MAX];
	int i, got, done = 0;

	memset(&f, 0, sizeof(f));
	snprintf(chain, sizeof(chain), "%s.%s", net->chain, net->network);
	if (max < 1 || scan < 1 || (f.items = calloc((size_t)max, sizeof(*f.items))) == NULL)
		return -1;
	f.db = db;
	f.chain = chain;
	f.max = max;
	if (cursor_load(db, chain, from_c, from_t) == -1)
		goto fail;
	got = bp_index_nft_tokens_after(db, chain, from_c, from_t, scan, fill_scan, &f);
	if (got < 0 || f.failed)
		goto fail;
	/* The end of the index: the next pass starts over from the beginning. */
	if (f.n < f.max && got < scan)
		f.last_contract[0] = f.last_token[0] = '\0';
	if (cursor_store(db, chain, f.last_contract, f.last_token) == -1)
		goto fail;
	for (i = 0; i < f.n; i++, done++)
		if (fill_one(n, db, net, &f.items[i]) == -1)
			goto fail;
	free(f.items);
	return done;
fail:
	free(f.items);
	return -1;
}
