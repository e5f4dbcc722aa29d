/*
 * The token balance list of an address (token_balance.h, docs/tokens.md "Balances").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/chain.h"
#include "index/index_read.h"
#include "net/upstream.h"
#include "price.h"
#include "token.h"
#include "token_balance.h"
#include "token_list.h"

#define USD_MAX	128	/* a USD value longer than this (a token of over 90 decimals) is null */

/* One entry of a sorted list. */
struct holding {
	struct bp_token	 tok;
	char		 checksum[BP_ADDR_STR_MAX];
	struct bp_u256	 balance;
	char		 usd[USD_MAX];		/* "" when unpriced */
	const char	*logo;			/* the token list's (lives as long as it), or NULL */
	size_t		 json_off, json_len;	/* its entry of the answer, in the list's json */
};

/* A sorted list of one address at one block. */
struct list {
	char		 chain[BP_INDEX_CHAIN_MAX];
	char		 owner[BP_ADDR_STR_MAX];
	char		 hash[BP_INDEX_HASH_STR];	/* the head block's hash; "" never hits */
	int64_t		 built_at;
	int		 truncated;	/* holdings past token_balances_max were left out */
	struct holding	*h;
	size_t		 n;
	struct bp_buf	 json;		/* every entry rendered once, back to back */
};

/* Frees what l holds; l may be used again. */
static void
list_clear(struct list *l)
{
	free(l->h);
	l->h = NULL;
	l->n = 0;
	bp_buf_free(&l->json);
}

struct bp_token_ctx {
	struct bp_upstream	*up;
	struct bp_chain		*chain;
	struct bp_token_memo	*memo;
	struct list		 cache[BP_TOKEN_BALANCE_CACHE];
	size_t			 next;		/* the slot the next list replaces */
};

struct bp_token_ctx *
bp_token_ctx_new(const struct bp_config *cfg)
{
	struct bp_token_ctx *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if ((c->up = bp_upstream_new(cfg)) == NULL ||
	    (c->chain = bp_chain_new(cfg, c->up)) == NULL ||
	    (c->memo = bp_token_memo_new()) == NULL) {
		bp_token_ctx_free(c);
		return NULL;
	}
	return c;
}

void
bp_token_ctx_free(struct bp_token_ctx *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < BP_TOKEN_BALANCE_CACHE; i++)
		list_clear(&c->cache[i]);
	bp_token_memo_free(c->memo);
	bp_chain_free(c->chain);
	bp_upstream_free(c->up);
	free(c);
}

struct bp_chain *
bp_token_ctx_chain(struct bp_token_ctx *c)
{
	return c->chain;
}

struct bp_token_memo *
bp_token_ctx_memo(struct bp_token_ctx *c)
{
	return c->memo;
}

/* ---- order ---- */

int
bp_token_cmp_decimal(const char *a, const char *b)
{
	size_t ia = strcspn(a, "."), ib = strcspn(b, "."), i;
	const char *fa = a[ia] == '.' ? a + ia + 1 : "", *fb = b[ib] == '.' ? b + ib + 1 : "";
	int c;

	/* Whole parts carry no leading zeros: the longer is the larger. */
	if (ia != ib)
		return ia < ib ? -1 : 1;
	if ((c = strncmp(a, b, ia)) != 0)
		return c;
	for (i = 0; fa[i] != '\0' || fb[i] != '\0'; i++) {
		char x = fa[i] != '\0' ? fa[i] : '0', y = fb[i] != '\0' ? fb[i] : '0';

		if (x != y)
			return x < y ? -1 : 1;
		if (fa[i] == '\0' || fb[i] == '\0') {
			/* One ran out: the rest of the other decides (zeros are trimmed). */
			const char *rest = fa[i] != '\0' ? fa + i + 1 : fb + i + 1;

			if (strspn(rest, "0") != strlen(rest))
				return fa[i] != '\0' ? 1 : -1;
			return 0;
		}
	}
	return 0;
}

/* USD value descending (unpriced last), then symbol ascending (unknown last), then contract. */
static int
cmp_holding(const void *pa, const void *pb)
{
	const struct holding *a = pa, *b = pb;
	int c;

	if ((a->usd[0] != '\0') != (b->usd[0] != '\0'))
		return a->usd[0] != '\0' ? -1 : 1;
	if (a->usd[0] != '\0' && (c = bp_token_cmp_decimal(a->usd, b->usd)) != 0)
		return -c;
	if (a->tok.has_symbol != b->tok.has_symbol)
		return a->tok.has_symbol ? -1 : 1;
	if (a->tok.has_symbol && (c = strcmp(a->tok.symbol, b->tok.symbol)) != 0)
		return c;
	return strcmp(a->tok.contract, b->tok.contract);
}

static int	entry_json(const struct holding *, struct bp_buf *);

/* ---- building a list ---- */

/*
 * The contracts of the holdings, as the index gives them (by contract address), at most
 * BP_TOKEN_BALANCE_SCAN; cut to max (cut_holdings) before their balances are read.
 */
struct contracts {
	char	(*c)[BP_ADDR_STR_MAX];
	size_t	 n, cap, max;
	int	 cut;		/* holdings were left out */
	int	 failed;	/* out of memory */
};

static int
add_contract(const char *contract, int64_t first_block, void *arg)
{
	struct contracts *cs = arg;
	void *p;

	(void)first_block;
	if (cs->n == BP_TOKEN_BALANCE_SCAN)
		return 1;
	if (cs->n == cs->cap) {
		/* Past max only for the ranking of cut_holdings: grown, never allocated upfront. */
		if ((p = reallocarray(cs->c, cs->cap * 2, sizeof(cs->c[0]))) == NULL) {
			cs->failed = 1;
			return 1;
		}
		cs->c = p;
		cs->cap *= 2;
	}
	if (bp_strlcpy(cs->c[cs->n], contract, sizeof(cs->c[0])) == 0)
		cs->n++;
	return 0;
}

/* What cut_holdings knows of each holding. */
struct ranked {
	const struct contracts	*cs;
	char			*chosen;	/* per holding: the owner chose it */
};

/* Marks contract chosen when it is a holding (cs->c is in strcmp order, as SQLite's BINARY). */
static int
mark_chosen(const char *contract, void *arg)
{
	struct ranked *r = arg;
	size_t lo = 0, hi = r->cs->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(r->cs->c[mid], contract)) == 0) {
			r->chosen[mid] = 1;
			break;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* The tiers of the cut, first kept first. */
enum cut_rank {
	RANK_CHOSEN,	/* 0: the owner sent a transaction to it or got it in one it sent */
	RANK_CLEAN,	/* 1: its cached verdict is "not spam" */
	RANK_UNKNOWN,	/* 2: never read: no verdict yet */
	RANK_SPAM,	/* 3: its cached verdict is spam */
	RANK__MAX
};

/*
 * Keeps max of the holdings of cs when it has more, so that spam never pushes out a real
 * holding (an airdrop of tokens at low addresses would with a cut by address): first those
 * the owner chose itself, then those known not to be spam, then those never judged, then known
 * spam; by contract address within a tier. Returns 0, or -1 on a database error or out of
 * memory.
 */
static int
cut_holdings(struct bp_db *db, const char *chain, const char *owner, struct contracts *cs)
{
	struct ranked r = { cs, NULL };
	const char **ptr = NULL;
	char (*kept)[BP_ADDR_STR_MAX] = NULL;
	int *verdict = NULL, rc = -1;
	unsigned char *rank = NULL;
	size_t i, k = 0;
	int t;

	if ((r.chosen = calloc(cs->n, 1)) == NULL || (rank = calloc(cs->n, 1)) == NULL ||
	    (ptr = calloc(cs->n, sizeof(*ptr))) == NULL ||
	    (verdict = calloc(cs->n, sizeof(*verdict))) == NULL ||
	    (kept = calloc(cs->max, sizeof(*kept))) == NULL)
		goto out;
	for (i = 0; i < cs->n; i++)
		ptr[i] = cs->c[i];
	if (bp_index_each_erc20_chosen(db, chain, owner, BP_TOKEN_BALANCE_CHOSEN_TXS, mark_chosen,
	    &r) == -1 || bp_token_spam_known(db, chain, ptr, cs->n, verdict) == -1)
		goto out;
	for (i = 0; i < cs->n; i++) {
		if (verdict[i] > 0)
			rank[i] = RANK_SPAM;
		else if (r.chosen[i])
			rank[i] = RANK_CHOSEN;
		else
			rank[i] = verdict[i] == 0 ? RANK_CLEAN : RANK_UNKNOWN;
	}
	/* A pass a tier over holdings already in address order: the order needs no sort. */
	for (t = 0; t < RANK__MAX && k < cs->max; t++)
		for (i = 0; i < cs->n && k < cs->max; i++)
			if (rank[i] == t)
				memcpy(kept[k++], cs->c[i], sizeof(kept[0]));
	free(cs->c);
	cs->c = kept;
	kept = NULL;
	cs->n = k;
	cs->cap = cs->max;
	cs->cut = 1;
	rc = 0;
out:
	free(r.chosen);
	free(rank);
	free(ptr);
	free(verdict);
	free(kept);
	return rc;
}

/*
 * balanceOf(owner) of every contract of cs at block into bal[], ok[i] 1 when it answered a
 * uint. Returns 0, or 1 when the node did not answer.
 */
static int
read_balances(struct bp_chain *ch, const struct bp_network *net, const uint8_t owner[20],
    const struct contracts *cs, int64_t block, struct bp_u256 *bal, int *ok)
{
	struct bp_chain_read *rd;
	uint8_t data[36];
	size_t i, k, n;
	int rc = 0;

	memcpy(data, (const uint8_t[]){ 0x70, 0xa0, 0x82, 0x31 }, 4);	/* balanceOf(address) */
	memset(data + 4, 0, 12);
	memcpy(data + 16, owner, 20);
	if ((rd = calloc(BP_TOKEN_BALANCE_CALLS, sizeof(*rd))) == NULL)
		return 1;
	for (i = 0; i < cs->n && rc == 0; i += n) {
		n = cs->n - i < BP_TOKEN_BALANCE_CALLS ? cs->n - i : BP_TOKEN_BALANCE_CALLS;
		for (k = 0; k < n; k++) {
			memset(&rd[k], 0, sizeof(rd[k]));
			rd[k].op = BP_CHAIN_CALL;
			rd[k].data = data;
			rd[k].len = sizeof(data);
			rd[k].block = block;
			if (bp_addr_parse(cs->c[i + k], strlen(cs->c[i + k]), 0, rd[k].address) == -1)
				rd[k].op = BP_CHAIN_CODE;	/* cannot happen: index rows are valid */
		}
		bp_chain_calls(ch, net, rd, n);
		for (k = 0; k < n; k++) {
			ok[i + k] = rd[k].err.kind == BP_CHAIN_OK && rd[k].op == BP_CHAIN_CALL &&
			    bp_abi_read_u256(rd[k].bytes, rd[k].nbytes, 0, &bal[i + k]) == 0;
			if (rd[k].err.kind == BP_CHAIN_ERR_TRANSPORT ||
			    rd[k].err.kind == BP_CHAIN_ERR_PROTOCOL ||
			    rd[k].err.kind == BP_CHAIN_ERR_INTERNAL ||
			    (rd[k].err.kind == BP_CHAIN_ERR_DECODE && n > 1)) {
				bp_warn("%s: %s.%s: balanceOf at %s: %s", __func__, net->chain,
				    net->network, cs->c[i + k], rd[k].err.message);
				rc = 1;
			}
		}
		bp_chain_reads_free(rd, n);
	}
	free(rd);
	return rc;
}

/*
 * Builds the sorted list of q's owner into *l (chain, owner and hash set by the caller).
 * Returns 0, 1 when the node did not answer, -1 on a database error.
 */
static int
build(struct bp_db *db, struct bp_token_ctx *ctx, const struct bp_config *cfg,
    const struct bp_token_list *logos, const struct bp_token_balance_query *q, int64_t block,
    int64_t now, struct list *l)
{
	struct contracts cs = { NULL, 0, (size_t)cfg->token_balances_max + 1,
	    (size_t)cfg->token_balances_max, 0, 0 };
	const char **nz = NULL;
	struct bp_token *tok = NULL;
	struct bp_u256 *bal = NULL;
	struct bp_price price;
	int *ok = NULL, *found = NULL, rc = -1;
	size_t i, nnz = 0;

	/* One more than max: whether there are more is known without growing. */
	if ((cs.c = calloc(cs.cap, sizeof(*cs.c))) == NULL)
		goto out;
	if (bp_index_each_erc20(db, l->chain, l->owner, add_contract, &cs) == -1 || cs.failed ||
	    (cs.n > cs.max && cut_holdings(db, l->chain, l->owner, &cs) == -1))
		goto out;
	l->truncated = cs.cut;
	if (cs.n > 0 && ((bal = calloc(cs.n, sizeof(*bal))) == NULL ||
	    (ok = calloc(cs.n, sizeof(*ok))) == NULL || (nz = calloc(cs.n, sizeof(*nz))) == NULL ||
	    (tok = calloc(cs.n, sizeof(*tok))) == NULL ||
	    (found = calloc(cs.n, sizeof(*found))) == NULL ||
	    (l->h = calloc(cs.n, sizeof(*l->h))) == NULL))
		goto out;
	if (cs.n > 0 && (rc = read_balances(ctx->chain, q->net, q->owner, &cs, block, bal, ok)) != 0)
		goto out;
	rc = -1;
	/* The non-zero ones, their balances moved to the front alongside. */
	for (i = 0; i < cs.n; i++)
		if (ok[i] && !bp_u256_is_zero(&bal[i])) {
			bal[nnz] = bal[i];
			nz[nnz++] = cs.c[i];
		}
	if (bp_token_get_many(db, ctx->chain, ctx->memo, cfg, q->net, nz, nnz, now, tok, found) == -1)
		goto out;
	l->n = 0;
	for (i = 0; i < nnz; i++) {
		struct holding *h = &l->h[l->n];
		uint8_t a[20];

		if (found[i] == BP_TOKEN_UNREAD) {
			rc = 1;
			goto out;
		}
		if (found[i] != BP_TOKEN_OK)
			continue;
		h->tok = tok[i];
		h->balance = bal[i];
		bp_addr_parse(h->tok.contract, strlen(h->tok.contract), 0, a);
		bp_addr_format_checksum(a, h->checksum, sizeof(h->checksum));
		if (bp_price_token(cfg, db, q->net->chain, h->tok.contract, now, &price) == 0 &&
		    bp_price_format_usd(&h->balance, h->tok.decimals, &price, h->usd,
		    sizeof(h->usd)) == -1)
			h->usd[0] = '\0';
		h->logo = bp_token_list_logo(logos, q->net->chain_id, h->tok.contract);
		l->n++;
	}
	if (l->n > 1)
		qsort(l->h, l->n, sizeof(*l->h), cmp_holding);
	/* Each entry's JSON once: the pages of the list only copy it. */
	bp_buf_init(&l->json, (l->n + 1) * 4096);
	for (i = 0; i < l->n; i++) {
		l->h[i].json_off = l->json.len;
		if (entry_json(&l->h[i], &l->json) == -1)
			goto out;
		l->h[i].json_len = l->json.len - l->h[i].json_off;
	}
	l->built_at = now;
	rc = 0;
out:
	free(cs.c);
	free(bal);
	free(ok);
	free(nz);
	free(tok);
	free(found);
	return rc;
}

/* ---- the answer ---- */

static int
entry_json(const struct holding *h, struct bp_buf *b)
{
	char bal[BP_U256_DEC_MAX], units[BP_U256_UNITS_MAX];

	if (bp_u256_to_dec(&h->balance, bal, sizeof(bal)) == -1 ||
	    bp_u256_format_units(&h->balance, h->tok.decimals, units, sizeof(units)) == -1)
		return -1;
	if (bp_buf_printf(b, "{\"contract\":\"%s\"", h->checksum) == -1 ||
	    bp_token_json_member(b, "symbol", h->tok.has_symbol ? h->tok.symbol : NULL) == -1 ||
	    bp_token_json_member(b, "name", h->tok.has_name ? h->tok.name : NULL) == -1 ||
	    bp_buf_printf(b, ",\"decimals\":%u,\"balance\":\"%s\",\"formatted_balance\":\"%s\"",
	    h->tok.decimals, bal, units) == -1 ||
	    bp_token_json_member(b, "usd_value", h->usd[0] != '\0' ? h->usd : NULL) == -1 ||
	    bp_token_json_member(b, "logo_url", h->logo) == -1 ||
	    bp_buf_printf(b, ",\"spam\":%s}", h->tok.spam != 0 ? "true" : "false") == -1)
		return -1;
	return 0;
}

static int
render(const struct list *l, const struct bp_token_balance_query *q, struct bp_buf *out)
{
	char cs[BP_ADDR_STR_MAX];
	int64_t total = 0, first = (q->page - 1) * q->limit, shown = 0;
	size_t i;

	bp_addr_format_checksum(q->owner, cs, sizeof(cs));
	if (bp_buf_printf(out, "{\"address\":\"%s\"", cs) == -1 ||
	    bp_token_json_member(out, "chain", q->chain) == -1 || bp_buf_adds(out, ",\"tokens\":[") == -1)
		return -1;
	for (i = 0; i < l->n; i++) {
		if (q->exclude_spam && l->h[i].tok.spam != 0)
			continue;
		if (total++ < first || shown == q->limit)
			continue;
		if ((shown++ > 0 && bp_buf_adds(out, ",") == -1) ||
		    bp_buf_add(out, l->json.data + l->h[i].json_off, l->h[i].json_len) == -1)
			return -1;
	}
	return bp_buf_printf(out, "],\"page\":%lld,\"total\":%lld,\"truncated\":%s}",
	    (long long)q->page, (long long)total, l->truncated ? "true" : "false");
}

int
bp_token_balances(struct bp_db *db, struct bp_token_ctx *ctx, const struct bp_config *cfg,
    const struct bp_token_list *logos, const struct bp_token_balance_query *q, int64_t now,
    struct bp_buf *out)
{
	struct bp_index_head head;
	struct list fresh, *l = NULL;
	int64_t block = BP_CHAIN_LATEST;
	size_t i;
	int rc;

	memset(&fresh, 0, sizeof(fresh));
	if (bp_token_chain_key(q->net, fresh.chain, sizeof(fresh.chain)) == -1 ||
	    bp_addr_format_lower(q->owner, fresh.owner, sizeof(fresh.owner)) == -1)
		return -1;
	/*
	 * The index's head: its holdings are as of that block, so the balances are read there,
	 * unless the index lags so far that a node might have pruned that block's state.
	 */
	if ((rc = bp_index_get_head(db, fresh.chain, &head)) == -1)
		return -1;
	if (rc == 1 && head.head >= 0 && head.chain_head - head.head <= BP_TOKEN_BALANCE_LAG) {
		block = head.head;
		bp_strlcpy(fresh.hash, head.head_hash, sizeof(fresh.hash));
	}
	for (i = 0; i < BP_TOKEN_BALANCE_CACHE && fresh.hash[0] != '\0'; i++) {
		struct list *c = &ctx->cache[i];

		if (strcmp(c->hash, fresh.hash) == 0 && strcmp(c->owner, fresh.owner) == 0 &&
		    strcmp(c->chain, fresh.chain) == 0 &&
		    now - c->built_at <= BP_TOKEN_BALANCE_CACHE_SECONDS) {
			l = c;
			break;
		}
	}
	if (l == NULL) {
		if ((rc = build(db, ctx, cfg, logos, q, block, now, &fresh)) != 0) {
			list_clear(&fresh);
			return rc;
		}
		l = &ctx->cache[ctx->next];
		ctx->next = (ctx->next + 1) % BP_TOKEN_BALANCE_CACHE;
		list_clear(l);
		*l = fresh;
	}
	if (render(l, q, out) == -1) {
		bp_err("%s: the answer does not fit", __func__);
		return -1;
	}
	return 0;
}
