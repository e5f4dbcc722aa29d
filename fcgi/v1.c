/*
 * The fallback program: every path that no resource program owns (an unknown /v1 resource, or
 * anything outside /v1) is authenticated and counted like any request, then answered 404
 * not_found in the uniform body (SPEC.md sections 7 and 9).
 *
 * And GET /metrics, for operators (docs/metrics.md): the head's counters and what the database
 * knows, in Prometheus text, to loopback and [server] metrics_allow only (BP_ROUTE_OPERATOR);
 * for anyone else it is one more path the API does not have. Both web servers already send
 * every path outside the resource prefixes here.
 */
#include "bundler/bundler_pool.h"
#include "core/fcgi.h"
#include "core/metrics.h"
#include "core/util.h"
#include "core/worker.h"
#include "index/index_read.h"
#include "webhook/webhook_queue.h"

static int	metrics_get(struct bp_req *);

static const struct bp_route routes[] = {
	{ "GET", "/metrics", metrics_get, BP_SCOPE_NONE, 0, BP_ROUTE_OPERATOR },
};

/* What the database adds to the head's counters, each from the module that owns its tables. */
static const bp_metrics_source sources[] = {
	bp_worker_metrics, bp_index_metrics, bp_webhook_queue_metrics, bp_bundler_pool_metrics,
};

static const struct bp_app app = { "v1", routes, BP_NITEMS(routes), NULL, NULL };

static int
metrics_get(struct bp_req *r)
{
	return bp_metrics_serve(r, sources, BP_NITEMS(sources));
}

int
main(void)
{
	return bp_fcgi_main_threads(&app, NULL);	/* stateless: thread-safe as it is */
}
