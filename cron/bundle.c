/*
 * The bundle submitter (docs/bundler.md): each pass, for every network with a bundler_key,
 * settles the bundles sent, re-checks recent ones for reorgs, and sends the pending ops of the
 * pool as one EntryPoint.handleOps transaction (lib/bundler/bundler_submit.c); while a bundle
 * is in flight the next pass comes after 10 ms, doubling up to --interval. Run from cron
 * (cron/bundle.cron) or with --loop (make run, the tests).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundler/bundler_submit.h"
#include "core/config.h"
#include "core/db.h"
#include "core/log.h"
#include "core/worker.h"
#include "net/upstream.h"

struct state {
	struct bp_upstream	*up;
	struct bp_bundler_submitter	 s[BP_MAX_NETWORKS];
	int			 on[BP_MAX_NETWORKS];
};

static int
bundle_init(struct bp_worker_ctx *w)
{
	struct state *st;
	size_t i;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	if ((st->up = bp_upstream_new(w->cfg)) == NULL) {
		free(st);
		return -1;
	}
	for (i = 0; i < w->cfg->nnets; i++) {
		int rc = bp_bundler_submit_init(&st->s[i], &w->cfg->nets[i]);

		if (rc == -1)
			bp_err("bundle: %s.%s: no bundler (bundler_key or bundler_beneficiary "
			    "unusable)", w->cfg->nets[i].chain, w->cfg->nets[i].network);
		st->on[i] = rc == 0;
	}
	w->state = st;
	return 0;
}

static int
bundle_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	struct state *st = w->state;
	char one[160];
	size_t i, used = 0;
	int more = 0, soon = 0, failed = 0, rc;

	msg[0] = '\0';
	for (i = 0; i < w->cfg->nnets && !bp_worker_stopping(); i++) {
		if (!st->on[i])
			continue;
		rc = bp_bundler_submit_pass(w->db, st->up, &st->s[i], one, sizeof(one));
		if (rc == -1)
			failed++;
		else if (rc == 1)
			more = 1;
		else if (rc == 2)
			soon = 1;
		used += (size_t)snprintf(msg + used, used < msglen ? msglen - used : 0, "%s%s",
		    used ? "; " : "", one);
	}
	if (failed > 0)
		w->failed = 1;
	/* A bundle in flight is looked for again soon, not after a whole --interval. */
	return more ? BP_WORKER_MORE : soon ? BP_WORKER_SOON : BP_WORKER_IDLE;
}

static void
bundle_fini(struct bp_worker_ctx *w)
{
	struct state *st = w->state;
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < BP_MAX_NETWORKS; i++)
		bp_bundler_submit_fini(&st->s[i]);
	bp_upstream_free(st->up);
	free(st);
	w->state = NULL;
}

/*
 * An op taken into the pool ends the idle wait: it is bundled without waiting --interval. So
 * does a block the indexer stored: the bundle in flight may be in it (on a chain of 12 s
 * blocks, the submitter looks when a block came rather than at its backoff's next turn).
 */
static const struct bp_worker_def bundle = { "bundle", bundle_init, bundle_pass, bundle_fini,
    BP_DB_WAKE_POOL "," BP_DB_WAKE_HEADS };

int	main(int, char *[]);

int
main(int argc, char *argv[])
{
	return bp_worker_main(&bundle, argc, argv);
}
