/*
 * The NFT resource (nft.h; docs/nfts.md): chain reads, the metadata and collection caches of
 * schema/006_nfts.sql (this module owns them), and the answers of fcgi/nfts.c. Documents are
 * fetched with lib/net/fetch.h outside any transaction; each cache write is one statement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/db.h"
#include "core/error.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/chain.h"
#include "index/index_read.h"
#include "net/fetch.h"
#include "net/upstream.h"
#include "nft.h"
#include "nft_doc.h"
#include "nft_priv.h"
#include "nft_uri.h"
#include "token/spam.h"

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

static const char *const std_api[BP_NFT_STD__MAX] = { "", "ERC721", "ERC1155" };

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
	size_t i;

	if (n == NULL)
		return;
	for (i = 0; i < BP_NFT_OWNED_SLOTS; i++)
		free(n->owned[i].body);
	bp_chain_free(n->chain);
	bp_upstream_free(n->up);
	free(n);
}

static int
too_large(struct bp_error *err)
{
	return bp_error_set(err, 500, "internal_error", "response too large");
}

static void
names_init(struct bp_nft_names *nm, const struct bp_network *net, const uint8_t contract[20],
    const struct bp_u256 *id)
{
	snprintf(nm->chain, sizeof(nm->chain), "%s.%s", net->chain, net->network);
	bp_addr_format_lower(contract, nm->contract, sizeof(nm->contract));
	bp_addr_format_checksum(contract, nm->contract_cs, sizeof(nm->contract_cs));
	nm->token_id[0] = '\0';
	if (id != NULL)
		bp_u256_to_dec(id, nm->token_id, sizeof(nm->token_id));
}

/* 1 when a and b are both NULL or equal strings. */
static int
str_same(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
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

/*
 * lib/token/spam.c's verdict on a collection (docs/tokens.md, "Spam"): 1 spam, 0 not, -1 not judged
 * (a database error, logged there). It has code: ERC-165 answered.
 */
static int
coll_spam(struct bp_db *db, const struct bp_nft_names *nm, const struct bp_nft_coll *c)
{
	int v = bp_spam_check(db, nm->chain, nm->contract, c->name, c->symbol, 1);

	return v < 0 ? -1 : v != 0;
}

/*
 * The collection row of nm's contract, learnt from the chain when the cache has none: ERC-165
 * for both standards, name() and symbol() in one round trip. Returns 0 with c, or -1 with err
 * (404 when the contract is neither ERC-721 nor ERC-1155).
 */
static int
coll_get(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t contract[20], const struct bp_nft_names *nm, struct bp_nft_coll *c,
    struct bp_error *err)
{
	struct bp_chain_read r[4];
	uint8_t data[4][36];

	if (bp_nft_coll_load(db, nm, c) == -1)
		return bp_error_db(err);
	if (c->found)
		return 0;
	supports_read(&r[0], contract, IID_ERC721, data[0]);
	supports_read(&r[1], contract, IID_ERC1155, data[1]);
	call_read(&r[2], contract, SEL_NAME, NULL, 0, data[2]);
	call_read(&r[3], contract, SEL_SYMBOL, NULL, 0, data[3]);
	bp_chain_calls(n->chain, net, r, 4);
	if (all_transport(r, 4)) {
		bp_chain_reads_free(r, 4);
		return bp_error_node(err, net);
	}
	c->standard = read_true(&r[0]) ? BP_NFT_STD_721 : read_true(&r[1]) ? BP_NFT_STD_1155 :
	    BP_NFT_STD_NONE;
	c->name = read_string(&r[2]);
	c->symbol = read_string(&r[3]);
	bp_chain_reads_free(r, 4);
	if (c->standard == BP_NFT_STD_NONE)
		return bp_error_set(err, 404, "not_found", "%s is not an ERC-721 or ERC-1155 contract on %s %s",
		    nm->contract_cs, net->chain, net->network);
	c->spam = coll_spam(db, nm, c);
	if (bp_nft_coll_store(db, nm, c) == -1)
		return bp_error_db(err);
	c->found = 1;
	return 0;
}

/* ---- the metadata cache ---- */

/* The next retry after the attempts-th failure in a row: base x 2^(attempts-1), a day at most. */
static int64_t
backoff(int64_t base, int64_t attempts)
{
	int64_t d = base;

	while (--attempts > 0 && d < RETRY_MAX_SECONDS)
		d *= 2;
	return d < RETRY_MAX_SECONDS ? d : RETRY_MAX_SECONDS;
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
    const struct bp_nft_names *nm, enum bp_nft_std std, const struct bp_u256 *id, const char *uri,
    int64_t prev_attempts, struct bp_nft_meta *m)
{
	struct bp_nft_doc doc;
	struct bp_buf subst;
	char why[200];
	const char *target = uri;

	bp_nft_meta_free(m);
	m->found = 1;
	m->token_uri = strdup(uri);
	bp_buf_init(&subst, BP_NFT_DATA_MAX);
	if (std == BP_NFT_STD_1155 && strstr(uri, "{id}") != NULL &&
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
	return bp_nft_meta_store(db, nm, m);
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
    const uint8_t contract[20], const struct bp_nft_names *nm, enum bp_nft_std std,
    const struct bp_u256 *id, struct token *t, struct bp_error *err)
{
	struct bp_chain_read r[2];
	struct bp_u256 supply;
	uint8_t data[2][36], idbe[32], owner[20];
	char holder[BP_ADDR_STR_MAX];
	int64_t holders = 0;

	memset(t, 0, sizeof(*t));
	bp_u256_to_be32(id, idbe);
	if (std == BP_NFT_STD_721) {
		call_read(&r[0], contract, SEL_OWNER_OF, idbe, 32, data[0]);
		call_read(&r[1], contract, SEL_TOKEN_URI, idbe, 32, data[1]);
	} else {
		call_read(&r[0], contract, SEL_URI, idbe, 32, data[0]);
		call_read(&r[1], contract, SEL_TOTAL_ID, idbe, 32, data[1]);
	}
	bp_chain_calls(n->chain, net, r, 2);
	if (all_transport(r, 2) || (std == BP_NFT_STD_721 && r[0].err.kind == BP_CHAIN_ERR_TRANSPORT)) {
		bp_chain_reads_free(r, 2);
		return bp_error_node(err, net);
	}
	if (std == BP_NFT_STD_721) {
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
			return bp_error_db(err);
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
		return bp_error_set(err, 404, "not_found", "token %s of %s does not exist on %s %s",
		    nm->token_id, nm->contract_cs, net->chain, net->network);
	}
	return 0;
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
    const struct bp_nft_names *nm, enum bp_nft_std std, const struct token *t, const struct bp_nft_meta *m,
    struct bp_buf *out)
{
	const struct bp_nft_meta none = { 0 };
	struct bp_buf gw;
	int rc;

	if (!m->ok)
		m = &none;
	bp_buf_init(&gw, BP_NFT_URI_MAX + 1);
	rc = bp_buf_adds(out, "{\"contract\":\"") == -1 ||
	    bp_buf_adds(out, nm->contract_cs) == -1 ||
	    bp_buf_printf(out, "\",\"chain\":\"%s\",\"network\":\"%s\",\"token_id\":\"%s\","
	    "\"standard\":\"%s\"", net->chain, net->network, nm->token_id, std_api[std]) == -1 ||
	    bp_nft_json_member(out, "owner", t->owner[0] != '\0' ? t->owner : NULL) == -1 ||
	    bp_nft_json_member(out, "token_uri", t->uri) == -1 ||
	    bp_nft_json_member(out, "name", m->name) == -1 ||
	    bp_nft_json_member(out, "description", m->description) == -1 ||
	    bp_nft_json_member(out, "image_url", m->image) == -1 ||
	    bp_nft_json_member(out, "image_gateway_url", image_gateway(cfg, m->image, &gw)) == -1 ||
	    bp_buf_printf(out, ",\"traits\":%s", m->traits != NULL ? m->traits : "[]") == -1 ||
	    bp_buf_adds(out, "}") == -1 ? -1 : 0;
	bp_buf_free(&gw);
	return rc;
}

int
bp_nft_cached_metadata(const struct bp_config *cfg, struct bp_db *db,
    const struct bp_network *net, const uint8_t contract[20], const struct bp_u256 *id,
    struct bp_buf *out)
{
	struct bp_nft_names nm;
	struct bp_nft_meta m;
	struct bp_buf gw;
	int rc;

	names_init(&nm, net, contract, id);
	if (bp_nft_meta_load(db, &nm, &m) == -1)
		return -1;
	if (!m.ok) {
		bp_nft_meta_free(&m);
		return bp_buf_adds(out, "null");
	}
	bp_buf_init(&gw, BP_NFT_URI_MAX + 1);
	/* Members named as format B's data name theirs (camelCase). */
	rc = bp_buf_adds(out, "{\"name\":") == -1 || bp_nft_json_str_or_null(out, m.name) == -1 ||
	    bp_nft_json_member(out, "description", m.description) == -1 ||
	    bp_nft_json_member(out, "image", m.image) == -1 ||
	    bp_nft_json_member(out, "imageGatewayUrl", image_gateway(cfg, m.image, &gw)) == -1 ||
	    bp_buf_printf(out, ",\"traits\":%s}", m.traits != NULL ? m.traits : "[]") == -1 ? -1 : 0;
	bp_buf_free(&gw);
	bp_nft_meta_free(&m);
	return rc;
}

int
bp_nft_metadata(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t contract[20], const struct bp_u256 *id, struct bp_buf *out,
    struct bp_error *err)
{
	struct bp_nft_names nm;
	struct bp_nft_coll c;
	struct token t;
	struct bp_nft_meta m;
	int rc = -1;

	memset(&t, 0, sizeof(t));
	memset(&m, 0, sizeof(m));
	names_init(&nm, net, contract, id);
	if (coll_get(n, db, net, contract, &nm, &c, err) == -1 ||
	    token_read(n, db, net, contract, &nm, c.standard, id, &t, err) == -1)
		goto out;
	if (t.uri != NULL) {
		if (bp_nft_meta_load(db, &nm, &m) == -1) {
			bp_error_db(err);
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
				bp_error_db(err);
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
	bp_nft_meta_free(&m);
	bp_nft_coll_free(&c);
	return rc;
}

/* ---- GET collection ---- */

/*
 * Refreshes what the chain says of the collection (name, symbol, totalSupply, contractURI) and
 * the contractURI document when due. total is "" when totalSupply() is not there.
 */
static int
coll_refresh(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t contract[20], const struct bp_nft_names *nm, struct bp_nft_coll *c, char *total,
    size_t totallen, struct bp_error *err)
{
	struct bp_chain_read r[4];
	struct bp_nft_doc doc;
	struct bp_u256 supply;
	uint8_t data[4][36];
	char *name, *symbol, *uri, why[200];
	int64_t now = (int64_t)time(NULL);
	int changed = 0, spam;

	total[0] = '\0';
	call_read(&r[0], contract, SEL_NAME, NULL, 0, data[0]);
	call_read(&r[1], contract, SEL_SYMBOL, NULL, 0, data[1]);
	call_read(&r[2], contract, SEL_TOTAL, NULL, 0, data[2]);
	call_read(&r[3], contract, SEL_CONTRACT_URI, NULL, 0, data[3]);
	bp_chain_calls(n->chain, net, r, 4);
	if (all_transport(r, 4)) {
		bp_chain_reads_free(r, 4);
		return bp_error_node(err, net);
	}
	name = read_string(&r[0]);
	symbol = read_string(&r[1]);
	uri = read_string(&r[3]);
	if (r[2].err.kind == BP_CHAIN_OK && r[2].bytes != NULL &&
	    bp_abi_read_u256(r[2].bytes, r[2].nbytes, 0, &supply) == 0)
		bp_u256_to_dec(&supply, total, totallen);
	bp_chain_reads_free(r, 4);
	/* A name() that answers wins over the contractURI document's name, kept otherwise. */
	if (name != NULL && !str_same(c->name, name)) {
		free(c->name);
		c->name = name;
		name = NULL;
		changed = 1;
	}
	if (!str_same(c->symbol, symbol)) {
		free(c->symbol);
		c->symbol = symbol;
		symbol = NULL;
		changed = 1;
	}
	free(name);
	free(symbol);
	/* The document: again when the URI changed, or after its backoff. */
	if (uri == NULL || uri[0] == '\0') {
		if (c->contract_uri != NULL || strcmp(c->status, "ok") != 0)
			changed = 1;
		free(c->contract_uri);
		c->contract_uri = uri;
		uri = NULL;
		bp_strlcpy(c->status, "ok", sizeof(c->status));
	} else if (c->contract_uri == NULL || strcmp(c->contract_uri, uri) != 0 ||
	    strcmp(c->status, "pending") == 0 ||
	    (strcmp(c->status, "failed") == 0 && c->next_retry <= now)) {
		if (c->contract_uri == NULL || strcmp(c->contract_uri, uri) != 0)
			c->attempts = 0;
		changed = 1;
		free(c->contract_uri);
		c->contract_uri = uri;
		uri = NULL;
		free(c->description);
		free(c->image);
		free(c->banner);
		c->description = c->image = c->banner = NULL;
		if (fetch_doc(n, net, c->contract_uri, &doc, why, sizeof(why)) == 0) {
			bp_strlcpy(c->status, "ok", sizeof(c->status));
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
			bp_strlcpy(c->status, "failed", sizeof(c->status));
			c->attempts++;
			c->next_retry = now + backoff(n->cfg->nft_retry_seconds, c->attempts);
		}
	}
	free(uri);
	/* The verdict again: the index's airdrop signal grows with the transfers. */
	if ((spam = coll_spam(db, nm, c)) != c->spam) {
		c->spam = spam;
		changed = 1;
	}
	/* Unchanged rows are not written: a write moves the caches' version (nft_owned.c). */
	if (changed && bp_nft_coll_store(db, nm, c) == -1)
		return bp_error_db(err);
	return 0;
}

int
bp_nft_collection(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t contract[20], struct bp_buf *out, struct bp_error *err)
{
	struct bp_nft_names nm;
	struct bp_nft_coll c;
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
		bp_error_db(err);
		goto out;
	}
	if (total[0] == '\0')
		snprintf(total, sizeof(total), "%lld", (long long)tokens);
	if (bp_buf_adds(out, "{\"contract\":\"") == -1 ||
	    bp_buf_adds(out, nm.contract_cs) == -1 ||
	    bp_buf_printf(out, "\",\"chain\":\"%s\",\"network\":\"%s\"", net->chain,
	    net->network) == -1 ||
	    bp_nft_json_member(out, "name", c.name) == -1 || bp_nft_json_member(out, "symbol", c.symbol) == -1 ||
	    bp_buf_printf(out, ",\"standard\":\"%s\",\"total_supply\":%s,\"num_owners\":%lld,"
	    "\"floor_price_eth\":null,\"floor_price_usd\":null", std_api[c.standard], total,
	    (long long)owners) == -1 ||
	    bp_nft_json_member(out, "banner_url", image_gateway(n->cfg, c.banner, &gw)) == -1 ||
	    bp_nft_json_member(out, "image_url", image_gateway(n->cfg, c.image, &gw)) == -1 ||
	    bp_nft_json_member(out, "description", c.description) == -1 ||
	    bp_nft_json_member(out, "contract_uri", c.contract_uri) == -1 ||
	    bp_buf_printf(out, ",\"spam\":%s}", c.spam == 1 ? "true" : "false") == -1) {
		too_large(err);
		goto out;
	}
	rc = 0;
out:
	bp_buf_free(&gw);
	bp_nft_coll_free(&c);
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
	struct bp_nft_names nm;
	struct bp_nft_meta m;
	int64_t now = (int64_t)time(NULL);

	f->scanned++;
	bp_strlcpy(f->last_contract, x->contract, sizeof(f->last_contract));
	bp_strlcpy(f->last_token, x->token_id, sizeof(f->last_token));
	bp_strlcpy(nm.chain, f->chain, sizeof(nm.chain));
	bp_strlcpy(nm.contract, x->contract, sizeof(nm.contract));
	bp_strlcpy(nm.token_id, x->token_id, sizeof(nm.token_id));
	if (bp_nft_meta_load(f->db, &nm, &m) == -1) {
		f->failed = 1;
		return 1;
	}
	if (!m.found || (!m.ok && m.next_retry <= now)) {
		bp_strlcpy(f->items[f->n].contract, x->contract, BP_ADDR_STR_MAX);
		bp_strlcpy(f->items[f->n].token_id, x->token_id, BP_U256_DEC_MAX);
		f->items[f->n].attempts = m.attempts;
		f->n++;
	}
	bp_nft_meta_free(&m);
	return f->n == f->max;
}

/* Fetches one queued token's metadata (reading its URI first). 0, or -1 on a db error. */
static int
fill_one(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const struct fill_item *it)
{
	struct bp_error err;
	struct bp_nft_names nm;
	struct bp_u256 id;
	struct bp_nft_coll c;
	struct token t;
	struct bp_nft_meta m;
	uint8_t contract[20];
	int rc = 0;

	memset(&m, 0, sizeof(m));
	if (bp_addr_parse(it->contract, strlen(it->contract), 0, contract) == -1 ||
	    bp_u256_from_dec(&id, it->token_id, strlen(it->token_id)) == -1)
		return 0;
	names_init(&nm, net, contract, &id);
	/* A request may have fetched it since the scan. */
	if (bp_nft_meta_load(db, &nm, &m) == -1)
		return -1;
	if (m.found && (m.ok || m.next_retry > (int64_t)time(NULL))) {
		bp_nft_meta_free(&m);
		return 0;
	}
	bp_nft_meta_free(&m);
	if (coll_get(n, db, net, contract, &nm, &c, &err) == -1) {
		bp_nft_coll_free(&c);
		return err.status == 500 && strcmp(err.message, "database error") == 0 ? -1 : 0;
	}
	if (token_read(n, db, net, contract, &nm, c.standard, &id, &t, &err) == 0 &&
	    t.uri != NULL)
		rc = meta_refresh(n, db, net, &nm, c.standard, &id, t.uri, it->attempts, &m);
	free(t.uri);
	bp_nft_meta_free(&m);
	bp_nft_coll_free(&c);
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
	if (bp_nft_cursor_load(db, chain, from_c, from_t) == -1)
		goto fail;
	got = bp_index_nft_tokens_after(db, chain, from_c, from_t, scan, fill_scan, &f);
	if (got < 0 || f.failed)
		goto fail;
	/* The end of the index: the next pass starts over from the beginning. */
	if (f.n < f.max && got < scan)
		f.last_contract[0] = f.last_token[0] = '\0';
	if ((strcmp(from_c, f.last_contract) != 0 || strcmp(from_t, f.last_token) != 0) &&
	    bp_nft_cursor_store(db, chain, f.last_contract, f.last_token) == -1)
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
