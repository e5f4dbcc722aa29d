/*
 * /v1/tokens: token balances and token metadata (SPEC.md sections 2 and 4; docs/tokens.md).
 * A route table and thin handlers: metadata and its cache live in lib/token/token.c, the balance
 * list in lib/token/token_balance.c, prices in lib/token/price.c, logos in lib/token/token_list.c, spam verdicts
 * in lib/token/spam.c.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "core/fcgi.h"
#include "core/util.h"
#include "evm/address.h"
#include "token/price.h"
#include "token/token.h"
#include "token/token_balance.h"
#include "token/token_list.h"

static int	balances(struct bp_req *);
static int	metadata(struct bp_req *);
static int	app_init(const struct bp_config *, struct bp_db *);
static void	app_fini(void);
static void	*thread_init(const struct bp_config *, struct bp_db *);
static void	 thread_fini(void *);

/*
 * Compute units (Alchemy's figures for the same work): metadata 16 (cached after the first
 * read), balances 26 (every holding's balanceOf in one Multicall3 call, cached per block).
 */
static const struct bp_route routes[] = {
	{ "GET", "/v1/tokens/:chain/balances/:address", balances, BP_SCOPE_DATA_READ, 26, 0 },
	{ "GET", "/v1/tokens/:chain/metadata/:contract", metadata, BP_SCOPE_DATA_READ, 16, 0 },
};

static const struct bp_app app = { "tokens", routes, BP_NITEMS(routes), app_init, app_fini };
static const struct bp_app_threads threads = { thread_init, thread_fini };

int	main(void);

int
main(void)
{
	return bp_fcgi_main_threads(&app, &threads);
}

#define LIMIT_DEFAULT	50

/* Per process, set once at init and read-only while the threads serve. */
static const struct bp_config *config;
static struct bp_token_list *logos;	/* NULL without [server] token_list */

static int
app_init(const struct bp_config *cfg, struct bp_db *db)
{
	(void)db;
	config = cfg;
	/* A list that does not load is logged (lib/token/token_list.c) and leaves logos null. */
	if (cfg->token_list[0] != '\0')
		logos = bp_token_list_load(cfg->token_list);
	return 0;
}

static void
app_fini(void)
{
	bp_token_list_free(logos);
	logos = NULL;
}

static void *
thread_init(const struct bp_config *cfg, struct bp_db *db)
{
	(void)db;
	return bp_token_ctx_new(cfg);
}

static void
thread_fini(void *ctx)
{
	bp_token_ctx_free(ctx);
}

/* ---- small helpers ---- */

static int
node_down(struct bp_req *r, const struct bp_network *net)
{
	return bp_error(r, 500, "internal_error", "the %s %s node did not answer; retry later",
	    net->chain, net->network);
}

/* ---- handlers ---- */

/* GET /v1/tokens/{chain}/balances/{address}?page&limit&exclude_spam&network */
static int
balances(struct bp_req *r)
{
	struct bp_token_balance_query q;
	int rc;

	memset(&q, 0, sizeof(q));
	if ((q.net = bp_req_path_network(r)) == NULL || bp_addr_param(r, "address", q.owner) != 0 ||
	    bp_req_paging(r, LIMIT_DEFAULT, &q.page, &q.limit) == -1 ||
	    bp_req_query_bool(r, "exclude_spam", &q.exclude_spam) == -1)
		return r->status;
	q.chain = bp_req_param(r, "chain");
	bp_buf_reset(&r->out);
	rc = bp_token_balances(r->db, r->ctx, config, logos, &q, (int64_t)time(NULL), &r->out);
	if (rc == 1)
		return node_down(r, q.net);
	if (rc != 0)
		return bp_error(r, 500, "internal_error", "database error");
	return bp_reply_out(r, 200);
}

/* GET /v1/tokens/{chain}/metadata/{contract}[?network] */
static int
metadata(struct bp_req *r)
{
	const struct bp_network *net;
	char lower[BP_ADDR_STR_MAX];
	const char *contracts[1] = { lower };
	struct bp_token tok;
	struct bp_price price;
	uint8_t addr[20];
	int64_t now = (int64_t)time(NULL);
	int found, priced;

	if ((net = bp_req_path_network(r)) == NULL || bp_addr_param(r, "contract", addr) != 0)
		return r->status;
	bp_addr_format_lower(addr, lower, sizeof(lower));
	if (bp_token_get_many(r->db, bp_token_ctx_chain(r->ctx), bp_token_ctx_memo(r->ctx), config,
	    net, contracts, 1, now, &tok, &found) == -1)
		return bp_error(r, 500, "internal_error", "database error");
	if (found == BP_TOKEN_UNREAD)
		return node_down(r, net);
	if (found != BP_TOKEN_OK)
		return bp_error(r, 404, "not_found", "no ERC-20 token at %s on %s %s (no code, or "
		    "no decimals() and totalSupply())", bp_req_param(r, "contract"), net->chain,
		    net->network);
	priced = bp_price_token(config, r->db, net->chain, lower, now, &price) == 0;
	bp_buf_reset(&r->out);
	if (bp_token_metadata_json(&tok, bp_req_param(r, "chain"), priced ? &price : NULL,
	    bp_token_list_logo(logos, net->chain_id, lower), &r->out) == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	return bp_reply_out(r, 200);
}
