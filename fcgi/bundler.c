/*
 * POST /v1/bundler/{chain}/{network}: the ERC-4337 bundler and ERC-7677 paymaster (SPEC.md
 * section 4, ERC-7769, ERC-7677; docs/bundler.md). A route table, and a method table keyed by
 * JSON-RPC method with the scopes and compute units of each; lib/bundler/bundler_rpc.c reads the
 * envelope, checks and charges each call and answers; the methods live in lib/bundler/bundler.c,
 * lib/bundler/bundler_estimate.c and lib/bundler/bundler_paymaster.c. Bundles are sent by cron/bundle.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "bundler/bundler.h"
#include "bundler/bundler_debug.h"
#include "bundler/bundler_estimate.h"
#include "bundler/bundler_paymaster.h"
#include "bundler/bundler_rpc.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/fcgi.h"
#include "core/util.h"
#include "gas/paymaster.h"
#include "net/upstream.h"

static int	bundler_post(struct bp_req *);
static int	app_init(const struct bp_config *, struct bp_db *);
static void	app_fini(void);

static const struct bp_route routes[] = {
	{ "POST", "/v1/bundler/:chain/:network", bundler_post, BP_SCOPE_NONE, 0,
	    BP_ROUTE_SELF_LIMIT },
};

#define READ	(BP_SCOPE_BIT(BP_SCOPE_BUNDLER) | BP_SCOPE_BIT(BP_SCOPE_RPC_READ))
#define SEND	BP_SCOPE_BIT(BP_SCOPE_BUNDLER)
#define GAS	BP_SCOPE_BIT(BP_SCOPE_GAS)

/*
 * The methods, their scopes and compute units (docs/bundler.md): reads of the config 1, pool
 * lookups 5, a receipt (one chain read) 10, a sponsorship 20 (as POST /v1/gas/sponsor), a
 * send or an estimate (several simulations on the node) 50.
 */
static const struct bp_bundler_method methods[] = {
	{ "eth_chainId", bp_bundler_chain_id, READ, 1 },
	{ "eth_supportedEntryPoints", bp_bundler_entry_points, READ, 1 },
	{ "eth_sendUserOperation", bp_bundler_send, SEND, 50 },
	{ "eth_estimateUserOperationGas", bp_bundler_estimate, READ, 50 },
	{ "eth_getUserOperationByHash", bp_bundler_get_op, READ, 5 },
	{ "eth_getUserOperationReceipt", bp_bundler_receipt, READ, 10 },
	{ "pm_getPaymasterStubData", bp_bundler_pm_stub, GAS, 5 },
	{ "pm_getPaymasterData", bp_bundler_pm_data, GAS, 20 },
	/* eth-infinitism's spec-test methods: -32601 unless the network's debug_bundler is on. */
	{ "debug_bundler_clearState", bp_bundler_debug_clear_state, SEND, 5 },
	{ "debug_bundler_clearMempool", bp_bundler_debug_clear_mempool, SEND, 5 },
	{ "debug_bundler_dumpMempool", bp_bundler_debug_dump_mempool, SEND, 5 },
	{ "debug_bundler_sendBundleNow", bp_bundler_debug_send_bundle_now, SEND, 50 },
	{ "debug_bundler_setBundlingMode", bp_bundler_debug_set_bundling_mode, SEND, 1 },
	{ "debug_bundler_setReputation", bp_bundler_debug_set_reputation, SEND, 5 },
	{ "debug_bundler_dumpReputation", bp_bundler_debug_dump_reputation, SEND, 5 },
};

static const struct bp_app app = { "bundler", routes, BP_NITEMS(routes), app_init, app_fini };

int	main(void);

int
main(void)
{
	return bp_fcgi_main_threads(&app, &bp_upstream_threads);
}

/* Per process, set at init and read-only while the threads serve: each network's signer key. */
static struct bp_paymaster_keys signer;

static int
app_init(const struct bp_config *cfg, struct bp_db *db)
{
	(void)db;
	bp_paymaster_keys_load(&signer, cfg);
	return 0;
}

static void
app_fini(void)
{
	bp_paymaster_keys_wipe(&signer);
}

static int
bundler_post(struct bp_req *r)
{
	const char *chain = bp_req_param(r, "chain"), *network = bp_req_param(r, "network");
	const struct bp_network *net = bp_config_network(r->cfg, chain, network);

	if (net == NULL || net->kind != BP_CHAIN_EVM)
		return bp_error(r, 404, "not_found", "no such EVM chain or network: %s/%s", chain,
		    network);
	return bp_bundler_serve(r, net, r->ctx, bp_paymaster_keys_get(&signer, r->cfg, net),
	    methods, BP_NITEMS(methods));
}
