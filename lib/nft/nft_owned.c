/*
 * GET /v1/nfts/{chain}/owned/{address} (nft.h; docs/nfts.md): a page of the index's NFT owners
 * with the names and images the caches hold, never a chain read or a fetch. A thread keeps its
 * last answers while what they were made of stays put: the rows of index_nft_owners change only
 * with the index's cursor (lib/index/index_store.c writes both in one transaction), the caches only
 * with their version (nft_cache_versions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/db.h"
#include "core/error.h"
#include "core/util.h"
#include "index/index_read.h"
#include "nft.h"
#include "nft_doc.h"
#include "nft_priv.h"

struct owned {
	struct bp_db	*db;
	const char	*chain;
	struct bp_buf	*out;
	int		 n;		/* entries written */
	int		 failed;
	/* Exclude-spam pass: the spam contracts, and the window to write. */
	int		 windowed;
	char		(*spam)[BP_ADDR_STR_MAX];
	size_t		 nspam;
	int64_t		 seen, from, to;
	/* The last contract's names, looked up once per run of its tokens. */
	char		 last[BP_ADDR_STR_MAX];
	char		 last_cs[BP_ADDR_STR_MAX];
	char		*last_name;
};

/* Switches o's last contract to this one: its EIP-55 form and cached name. 0 or -1. */
static int
owned_contract(struct owned *o, const char *contract)
{
	uint8_t a[20];

	if (strcmp(o->last, contract) == 0)
		return 0;
	free(o->last_name);
	o->last_name = NULL;
	bp_strlcpy(o->last, contract, sizeof(o->last));
	if (bp_addr_parse(contract, strlen(contract), 0, a) == -1)
		return -1;
	bp_addr_format_checksum(a, o->last_cs, sizeof(o->last_cs));
	return bp_nft_cached_collection(o->db, o->chain, contract, &o->last_name);
}

/* One entry of the page (bp_index_nft_page's callback). */
static int
owned_entry(const struct bp_index_nft *x, void *arg)
{
	struct owned *o = arg;
	char *name = NULL, *image = NULL;
	size_t i;

	if (o->windowed) {	/* the exclude-spam pass counts and windows itself */
		for (i = 0; i < o->nspam; i++)
			if (strcmp(o->spam[i], x->contract) == 0)
				return 0;
		if (o->seen++ < o->from || o->seen > o->to)
			return 0;
	}
	if (owned_contract(o, x->contract) == -1 ||
	    bp_nft_cached_token(o->db, o->chain, x->contract, x->token_id, &name, &image) == -1) {
		o->failed = 1;
		return 1;
	}
	/* Appends, not printf: the index's text (hex, decimal digits) needs no escaping. */
	if ((o->n > 0 && bp_buf_adds(o->out, ",") == -1) ||
	    bp_buf_adds(o->out, "{\"contract\":\"") == -1 ||
	    bp_buf_adds(o->out, o->last_cs) == -1 ||
	    bp_buf_adds(o->out, "\",\"token_id\":\"") == -1 ||
	    bp_buf_adds(o->out, x->token_id) == -1 || bp_buf_adds(o->out, "\"") == -1 ||
	    bp_nft_json_member(o->out, "name", name) == -1 ||
	    bp_nft_json_member(o->out, "collection_name", o->last_name) == -1 ||
	    bp_nft_json_member(o->out, "image_url", image) == -1 ||
	    bp_buf_adds(o->out, strcmp(x->standard, "erc1155") == 0 ?
	    ",\"standard\":\"ERC1155\",\"quantity\":\"" :
	    ",\"standard\":\"ERC721\",\"quantity\":\"") == -1 ||
	    bp_buf_adds(o->out, x->quantity) == -1 || bp_buf_adds(o->out, "\"}") == -1)
		o->failed = 2;
	free(name);
	free(image);
	o->n++;
	return o->failed;
}

/* Renders the answer into out; 0, or -1 with err. */
static int
owned_render(struct bp_db *db, const struct bp_network *net, const char *chain,
    const char *addr, const char *addr_cs, int64_t page, int64_t limit, int exclude_spam,
    struct bp_buf *out, struct bp_error *err)
{
	struct owned o;
	int64_t total = 0;
	int rc = -1;

	memset(&o, 0, sizeof(o));
	o.db = db;
	o.chain = chain;
	o.out = out;
	if (bp_buf_printf(out, "{\"address\":\"%s\",\"chain\":\"%s\",\"network\":\"%s\","
	    "\"nfts\":[", addr_cs, net->chain, net->network) == -1) {
		bp_error_set(err, 500, "internal_error", "response too large");
		goto out;
	}
	if (exclude_spam) {
		o.windowed = 1;
		o.from = (page - 1) * limit;
		o.to = o.from + limit;
		if (bp_nft_spam_contracts(db, chain, &o.spam, &o.nspam) == -1 ||
		    bp_index_each_nft(db, chain, addr, owned_entry, &o) < 0 || o.failed == 1) {
			bp_error_db(err);
			goto out;
		}
		total = o.seen;
	} else if (bp_index_nft_count(db, chain, addr, &total) == -1 ||
	    bp_index_nft_page(db, chain, addr, (page - 1) * limit, limit, owned_entry, &o) < 0 ||
	    o.failed == 1) {
		bp_error_db(err);
		goto out;
	}
	if (o.failed || bp_buf_printf(out, "],\"page\":%lld,\"limit\":%lld,\"total\":%lld}",
	    (long long)page, (long long)limit, (long long)total) == -1) {
		bp_error_set(err, 500, "internal_error", "response too large");
		goto out;
	}
	rc = 0;
out:
	free(o.spam);
	free(o.last_name);
	return rc;
}

/* bp_nft_owned inside its read transaction. */
static int
owned_answer(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t owner[20], int64_t page, int64_t limit, int exclude_spam, struct bp_buf *out,
    struct bp_error *err)
{
	struct bp_nft_owned_slot *s, *victim = &n->owned[0];
	struct bp_index_head head;
	char chain[BP_INDEX_CHAIN_MAX], addr[BP_ADDR_STR_MAX], addr_cs[BP_ADDR_STR_MAX];
	char key[sizeof(victim->key)];
	int64_t version;
	size_t start = out->len, i;
	int keep;
	char *copy;

	snprintf(chain, sizeof(chain), "%s.%s", net->chain, net->network);
	bp_addr_format_lower(owner, addr, sizeof(addr));
	snprintf(key, sizeof(key), "%s %s %lld %lld %d", chain, addr, (long long)page,
	    (long long)limit, exclude_spam);
	/* Read before the answer: a change after them makes the kept answer older, not wrong. */
	keep = bp_index_get_head(db, chain, &head) != -1 &&
	    bp_nft_cache_version(db, chain, &version) == 0;
	/* The same question while the index and the caches stayed put: the same answer. */
	for (i = 0; i < BP_NFT_OWNED_SLOTS && keep; i++) {
		s = &n->owned[i];
		if (s->body != NULL && s->head == head.head && s->version == version &&
		    strcmp(s->head_hash, head.head_hash) == 0 && strcmp(s->key, key) == 0) {
			s->used = ++n->tick;
			return bp_buf_add(out, s->body, s->len) == -1 ?
			    bp_error_set(err, 500, "internal_error", "response too large") : 0;
		}
		if (s->used < victim->used)
			victim = s;
	}
	bp_addr_format_checksum(owner, addr_cs, sizeof(addr_cs));
	if (owned_render(db, net, chain, addr, addr_cs, page, limit, exclude_spam, out, err) == -1)
		return -1;
	if (keep && (copy = malloc(out->len - start)) != NULL) {
		memcpy(copy, out->data + start, out->len - start);
		free(victim->body);
		victim->body = copy;
		victim->len = out->len - start;
		victim->version = version;
		victim->head = head.head;
		bp_strlcpy(victim->head_hash, head.head_hash, sizeof(victim->head_hash));
		victim->used = ++n->tick;
		bp_strlcpy(victim->key, key, sizeof(victim->key));
	}
	return 0;
}

int
bp_nft_owned(struct bp_nft *n, struct bp_db *db, const struct bp_network *net,
    const uint8_t owner[20], int64_t page, int64_t limit, int exclude_spam, struct bp_buf *out,
    struct bp_error *err)
{
	int rc;

	/*
	 * One snapshot for the count, the page and the caches' rows (a total that matches its
	 * page), and one read lock instead of one for each of the page's 50-odd statements.
	 */
	if (bp_db_begin_read(db) == -1) {
		bp_error_db(err);
		return -1;
	}
	rc = owned_answer(n, db, net, owner, page, limit, exclude_spam, out, err);
	if (bp_db_commit(db) == -1) {
		bp_db_rollback(db);
		if (rc == 0) {
			bp_error_db(err);
			rc = -1;
		}
	}
	return rc;
}
