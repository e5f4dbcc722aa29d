/*
 * The NFT metadata filler (docs/nfts.md): each pass walks, per indexed EVM network, the tokens
 * the index holds from where the last pass stopped, and fetches the metadata documents the
 * cache lacks (or whose retry backoff is over), a bounded number per pass, so the owned lists
 * show names and images without a fetch per entry. Run from cron (cron/nftmeta.cron) or with
 * --loop.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "core/log.h"
#include "core/worker.h"
#include "nft/nft.h"

#define SCAN_PER_PASS	500	/* indexed tokens looked at per network and pass */
#define FETCH_PER_PASS	16	/* documents fetched per network and pass */

static int
nftmeta_init(struct bp_worker_ctx *w)
{
	return (w->state = bp_nft_new(w->cfg)) == NULL ? -1 : 0;
}

static int
nftmeta_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	size_t i;
	int n, fetched = 0, failed = 0, more = 0;

	for (i = 0; i < w->cfg->nnets && !bp_worker_stopping(); i++) {
		const struct bp_network *net = &w->cfg->nets[i];

		if (net->kind != BP_CHAIN_EVM || !net->index)
			continue;
		if ((n = bp_nft_fill(w->state, w->db, net, SCAN_PER_PASS, FETCH_PER_PASS)) < 0) {
			failed++;
			continue;
		}
		fetched += n;
		more |= n == FETCH_PER_PASS;
	}
	snprintf(msg, msglen, "%d documents fetched, %d networks failed", fetched, failed);
	if (failed > 0)
		w->failed = 1;
	if (failed > 0 && fetched == 0)
		return BP_WORKER_FAILED;
	return more ? BP_WORKER_MORE : BP_WORKER_IDLE;
}

static void
nftmeta_fini(struct bp_worker_ctx *w)
{
	bp_nft_free(w->state);
	w->state = NULL;
}

static const struct bp_worker_def nftmeta = { "nftmeta", nftmeta_init, nftmeta_pass,
	nftmeta_fini, NULL };

int	main(int, char *[]);

int
main(int argc, char *argv[])
{
	return bp_worker_main(&nftmeta, argc, argv);
}
