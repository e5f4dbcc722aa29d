/*
 * /v1/nfts: NFT metadata, collections and the NFTs an address owns (SPEC.md sections 2 and 4;
 * docs/nfts.md). A route table and thin handlers: chain reads, the caches and the fetches of
 * metadata documents live in lib/nft/nft.c, URIs in lib/nft/nft_uri.c, documents in lib/nft/nft_doc.c.
 */
#include <stdint.h>
#include <string.h>

#include "core/fcgi.h"
#include "core/util.h"
#include "evm/address.h"
#include "evm/u256.h"
#include "nft/nft.h"

static int	nft_metadata(struct bp_req *);
static int	nft_collection(struct bp_req *);
static int	nft_owned(struct bp_req *);
static void	*thread_init(const struct bp_config *, struct bp_db *);
static void	 thread_fini(void *);

/*
 * Compute units: a metadata read (ERC-165, ownerOf and tokenURI in one batch, maybe a fetch)
 * 10, a collection (two batches, maybe a fetch) 10, an owned page (the index only) 5.
 */
static const struct bp_route routes[] = {
	{ "GET", "/v1/nfts/:chain/metadata/:contract/:token_id", nft_metadata,
	    BP_SCOPE_DATA_READ, 10, 0 },
	{ "GET", "/v1/nfts/:chain/collection/:contract", nft_collection, BP_SCOPE_DATA_READ,
	    10, 0 },
	{ "GET", "/v1/nfts/:chain/owned/:address", nft_owned, BP_SCOPE_DATA_READ, 5, 0 },
};

static const struct bp_app app = { "nfts", routes, BP_NITEMS(routes), NULL, NULL };
static const struct bp_app_threads threads = { thread_init, thread_fini };

int	main(void);

int
main(void)
{
	return bp_fcgi_main_threads(&app, &threads);
}

/* Each thread's lib/nft context is r->ctx. */
static void *
thread_init(const struct bp_config *cfg, struct bp_db *db)
{
	(void)db;
	return bp_nft_new(cfg);
}

static void
thread_fini(void *ctx)
{
	bp_nft_free(ctx);
}

/* Answers a lib/nft/nft.h error, or 200 with the JSON in r->out. */
static int
reply(struct bp_req *r, int rc, const struct bp_error *err)
{
	return rc == -1 ? bp_error_reply(r, err) : bp_reply_out(r, 200);
}

/* ---- handlers ---- */

/* GET /v1/nfts/{chain}/metadata/{contract}/{token_id}: token_id decimal, at most 2^256 - 1. */
static int
nft_metadata(struct bp_req *r)
{
	const struct bp_network *net;
	const char *tid = bp_req_param(r, "token_id");
	struct bp_error err;
	struct bp_u256 id;
	uint8_t contract[20];
	size_t n = strlen(tid);

	if (bp_addr_param(r, "contract", contract) != 0)
		return r->status;
	/* Decimal digits only: no sign, space, 0x or exponent; leading zeros read as decimal. */
	if (n == 0 || n > 200 || strspn(tid, "0123456789") != n ||
	    bp_u256_from_dec(&id, tid, n) == -1)
		return bp_error(r, 400, "invalid_request", "token_id must be a decimal integer "
		    "from 0 to 2^256 - 1");
	if ((net = bp_req_path_network(r)) == NULL)
		return r->status;
	bp_buf_reset(&r->out);
	return reply(r, bp_nft_metadata(r->ctx, r->db, net, contract, &id, &r->out, &err), &err);
}

/* GET /v1/nfts/{chain}/collection/{contract}. */
static int
nft_collection(struct bp_req *r)
{
	const struct bp_network *net;
	struct bp_error err;
	uint8_t contract[20];

	if (bp_addr_param(r, "contract", contract) != 0 || (net = bp_req_path_network(r)) == NULL)
		return r->status;
	bp_buf_reset(&r->out);
	return reply(r, bp_nft_collection(r->ctx, r->db, net, contract, &r->out, &err), &err);
}

/* GET /v1/nfts/{chain}/owned/{address}?page&limit&exclude_spam: from the index and caches. */
static int
nft_owned(struct bp_req *r)
{
	const struct bp_network *net;
	struct bp_error err;
	uint8_t owner[20];
	int64_t page, limit;
	int exclude_spam;

	if (bp_addr_param(r, "address", owner) != 0 ||
	    bp_req_paging(r, 50, &page, &limit) == -1 ||
	    bp_req_query_bool(r, "exclude_spam", &exclude_spam) == -1 ||
	    (net = bp_req_path_network(r)) == NULL)
		return r->status;
	bp_buf_reset(&r->out);
	return reply(r, bp_nft_owned(r->ctx, r->db, net, owner, page, limit, exclude_spam,
	    &r->out, &err), &err);
}
