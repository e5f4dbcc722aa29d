/*
 * The price sampler (docs/tokens.md, "Prices"): each pass reads every Chainlink aggregator that
 * a [prices CHAIN] section names (`0xTOKEN = chainlink:0xAGGREGATOR`) with latestRoundData()
 * and decimals(), on the chain's mainnet (the network live keys use; the test network when the
 * chain has no mainnet), and stores the answer in token_prices. Readers treat a sample whose
 * updatedAt is older than [server] price_max_age as no price. Run from cron (cron/prices.cron)
 * or with --loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/config.h"
#include "core/log.h"
#include "core/worker.h"
#include "evm/address.h"
#include "evm/chain.h"
#include "net/upstream.h"
#include "token/price.h"

struct prices_state {
	struct bp_upstream	*up;
	struct bp_chain		*chain;
};

static int
prices_init(struct bp_worker_ctx *w)
{
	struct prices_state *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	w->state = s;
	if ((s->up = bp_upstream_new(w->cfg)) == NULL ||
	    (s->chain = bp_chain_new(w->cfg, s->up)) == NULL)
		return -1;
	return 0;
}

/* The network whose aggregators a [prices CHAIN] section means, or NULL. */
static const struct bp_network *
network_for(const struct bp_config *cfg, const char *chain)
{
	const struct bp_network *net = bp_config_rest_network(cfg, chain, 0, NULL);

	if (net == NULL)
		net = bp_config_rest_network(cfg, chain, 1, NULL);
	return net != NULL && net->kind == BP_CHAIN_EVM ? net : NULL;
}

static int
prices_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	struct prices_state *s = w->state;
	struct bp_price_round round;
	size_t i, ok = 0, unusable = 0, failed = 0;
	uint8_t agg[20];
	int rc;

	for (i = 0; i < w->cfg->ntoken_prices && !bp_worker_stopping(); i++) {
		const struct bp_token_price *t = &w->cfg->token_prices[i];
		const struct bp_network *net;

		if (t->aggregator[0] == '\0')
			continue;
		if ((net = network_for(w->cfg, t->chain)) == NULL ||
		    bp_addr_parse(t->aggregator, 42, 0, agg) == -1) {
			bp_warn("prices: %s %s: no EVM network of chain %s", t->chain, t->contract,
			    t->chain);
			failed++;
			continue;
		}
		/*
		 * An aggregator without a usable answer (no code, reverted, not a positive price)
		 * is its own problem: counted, not a failed pass, so the others keep their pace.
		 * A node that does not answer fails the pass (the worker then backs off).
		 */
		if ((rc = bp_price_round_read(s->chain, net, agg, &round)) != 0) {
			bp_warn("prices: %s %s: aggregator %s %s", t->chain, t->contract,
			    t->aggregator, rc == 1 ? "did not answer" : "gave no usable price");
			if (rc == 1)
				failed++;
			else
				unusable++;
			continue;
		}
		if (bp_price_sample_store(w->db, t->chain, t->contract, t->aggregator, &round.price,
		    round.round_id, round.updated_at, (int64_t)time(NULL)) == -1) {
			failed++;
			continue;
		}
		ok++;
	}
	snprintf(msg, msglen, "%zu aggregators read, %zu without a usable price, %zu failed", ok,
	    unusable, failed);
	if (failed > 0)
		w->failed = 1;
	return ok == 0 && failed > 0 ? BP_WORKER_FAILED : BP_WORKER_IDLE;
}

static void
prices_fini(struct bp_worker_ctx *w)
{
	struct prices_state *s = w->state;

	if (s != NULL) {
		bp_chain_free(s->chain);
		bp_upstream_free(s->up);
		free(s);
	}
	w->state = NULL;
}

static const struct bp_worker_def prices = { "prices", prices_init, prices_pass, prices_fini,
    NULL };

int	main(int, char *[]);

int
main(int argc, char *argv[])
{
	return bp_worker_main(&prices, argc, argv);
}
