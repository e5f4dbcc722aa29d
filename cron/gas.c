/*
 * The gas sampler (docs/gas.md): each pass samples every EVM network of the config
 * (eth_feeHistory over the last blocks, lib/gas/gas.c) and stores the estimates in gas_samples,
 * which GET /v1/gas/{chain}/prices answers from. Run from cron (cron/gas.cron) or with --loop.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "core/log.h"
#include "core/worker.h"
#include "gas/gas.h"
#include "net/upstream.h"

static int
gas_init(struct bp_worker_ctx *w)
{
	struct bp_upstream *up;

	if ((up = bp_upstream_new(w->cfg)) == NULL)
		return -1;
	w->state = up;
	return 0;
}

static int
gas_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	struct bp_gas_sample s;
	size_t i, ok = 0, failed = 0;

	for (i = 0; i < w->cfg->nnets && !bp_worker_stopping(); i++) {
		const struct bp_network *net = &w->cfg->nets[i];

		if (net->kind != BP_CHAIN_EVM || !net->gas_sample)
			continue;
		if (bp_gas_sample_chain(w->state, net, &s) == -1 ||
		    bp_gas_store(w->db, net, &s) == -1) {
			failed++;
			continue;
		}
		ok++;
	}
	snprintf(msg, msglen, "%zu networks sampled, %zu failed", ok, failed);
	if (failed > 0)
		w->failed = 1;
	return ok == 0 && failed > 0 ? BP_WORKER_FAILED : BP_WORKER_IDLE;
}

static void
gas_fini(struct bp_worker_ctx *w)
{
	bp_upstream_free(w->state);
	w->state = NULL;
}

static const struct bp_worker_def gas = { "gas", gas_init, gas_pass, gas_fini, NULL };

int	main(int, char *[]);

int
main(int argc, char *argv[])
{
	return bp_worker_main(&gas, argc, argv);
}
