/*
 * POST /v1/rpc/{chain}/{network}: the JSON-RPC proxy (SPEC.md section 4; docs/rpc.md).
 *
 * The pipeline has authenticated the key and counted the request against requests per second;
 * lib/rpc/rpc_proxy.c does the rest (BP_ROUTE_SELF_LIMIT, BP_SCOPE_NONE) with the node method table
 * (bp_rpc_node_table): it validates the envelope, judges each item (class, scope, plan), charges
 * each valid item one request for the day and its compute units, and forwards only the items
 * that passed.
 */
#include <stddef.h>

#include "core/config.h"
#include "core/fcgi.h"
#include "core/util.h"
#include "rpc/rpc_methods.h"
#include "rpc/rpc_proxy.h"

static int	rpc_post(struct bp_req *);
static void	*rpc_thread_init(const struct bp_config *, struct bp_db *);
static void	 rpc_thread_fini(void *);

static const struct bp_route routes[] = {
	{ "POST", "/v1/rpc/:chain/:network", rpc_post, BP_SCOPE_NONE, 0, BP_ROUTE_SELF_LIMIT },
};

static const struct bp_app app = { "rpc", routes, BP_NITEMS(routes), NULL, NULL };
static const struct bp_app_threads threads = { rpc_thread_init, rpc_thread_fini };

/*
 * Each thread's proxy (r->ctx): its buffers and upstream handles are reused by its requests; the
 * response cache goes through the thread's database connection.
 */
static void *
rpc_thread_init(const struct bp_config *cfg, struct bp_db *db)
{
	struct bp_rpc_proxy *p = bp_rpc_proxy_new(cfg, &bp_rpc_node_table);

	if (p != NULL)
		bp_rpc_proxy_use_cache(p, db);
	return p;
}

static void
rpc_thread_fini(void *ctx)
{
	bp_rpc_proxy_free(ctx);
}

static int
rpc_post(struct bp_req *r)
{
	const char *chain = bp_req_param(r, "chain"), *network = bp_req_param(r, "network");
	const struct bp_network *net = bp_config_network(r->cfg, chain, network);

	if (net == NULL)
		return bp_error(r, 404, "not_found", "no such chain or network: %s/%s", chain,
		    network);
	return bp_rpc_proxy_serve(r->ctx, r, net);
}

int
main(void)
{
	return bp_fcgi_main_threads(&app, &threads);
}
