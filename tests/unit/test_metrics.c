/*
 * lib/core/metrics.c: counters shared by two mappings of one file (two processes) and added to
 * by many threads at once without a lost add; the exposition (families whole, histograms
 * cumulative, a family of no build left out); who may read /metrics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundler/bundler_pool.h"
#include "core/buf.h"
#include "core/db.h"
#include "core/metrics.h"
#include "core/util.h"
#include "core/worker.h"
#include "index/index_read.h"
#include "unit_db.h"
#include "webhook/webhook_queue.h"
#include "unit.h"

#define NTHREADS	8
#define NADDS		20000

static char dir[] = "/tmp/bp-unit-metrics.XXXXXX";
static char path[sizeof(dir) + 8];
static struct bp_metrics *shared;

static int
setup(void)
{
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/m", dir);
	return 0;
}

static int
teardown(void)
{
	unlink(path);
	rmdir(dir);
	return 0;
}

static void *
adder(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < NADDS; i++) {
		bp_metrics_request(shared, "v1", "/metrics", "GET", 200);
		bp_metrics_observe(shared, "blockport_upstream_request_duration_seconds"
		    "{network=\"eth.x\"}", 7000);
	}
	return NULL;
}

static const char req_200[] = "blockport_http_requests_total{program=\"v1\",route=\"/metrics\","
    "method=\"GET\",status=\"200\"}";

static void
test_shared_adds(void)
{
	struct bp_metrics *a, *b;
	struct bp_buf out;
	char want[128];

	CU_ASSERT_PTR_NOT_NULL_FATAL(a = bp_metrics_open_path(path));
	CU_ASSERT_PTR_NOT_NULL_FATAL(b = bp_metrics_open_path(path));
	shared = a;
	CU_ASSERT_EQUAL(bp_unit_threads(NTHREADS, adder), 0);
	/* Every add of every thread, seen through the other mapping. */
	CU_ASSERT_EQUAL(bp_metrics_value(b, req_200), (int64_t)NTHREADS * NADDS);
	bp_metrics_add(b, "blockport_ws_connections", 2);
	bp_metrics_add(a, "blockport_ws_connections", -1);
	CU_ASSERT_EQUAL(bp_metrics_value(a, "blockport_ws_connections"), 1);
	/* A route the table has never seen is a new series; its absence reads 0. */
	CU_ASSERT_EQUAL(bp_metrics_value(a, "blockport_http_requests_total{}"), 0);
	bp_metrics_close(b);

	bp_buf_init(&out, 1 << 20);
	CU_ASSERT_EQUAL(bp_metrics_render(a, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data,
	    "# TYPE blockport_upstream_request_duration_seconds histogram\n"));
	/* 7 ms: above the 5 ms bucket, in the 10 ms one and every one after. */
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "blockport_upstream_request_duration_seconds_bucket"
	    "{network=\"eth.x\",le=\"0.005\"} 0\n"));
	snprintf(want, sizeof(want), "_bucket{network=\"eth.x\",le=\"0.01\"} %d\n",
	    NTHREADS * NADDS);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, want));
	snprintf(want, sizeof(want), "_bucket{network=\"eth.x\",le=\"+Inf\"} %d\n",
	    NTHREADS * NADDS);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, want));
	snprintf(want, sizeof(want), "_count{network=\"eth.x\"} %d\n", NTHREADS * NADDS);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, want));
	snprintf(want, sizeof(want), "_sum{network=\"eth.x\"} %.6f\n", NTHREADS * NADDS * 0.007);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, want));
	snprintf(want, sizeof(want), "%s %d\n", req_200, NTHREADS * NADDS);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, want));
	bp_buf_free(&out);
	bp_metrics_close(a);
	/* NULL (no file) is a handle that counts nothing. */
	bp_metrics_add(NULL, "blockport_ws_connections", 1);
	CU_ASSERT_EQUAL(bp_metrics_render(NULL, NULL), 0);
}

static void
test_render_families(void)
{
	struct bp_metrics *m;
	struct bp_buf out;
	const char *p, *q;

	CU_ASSERT_PTR_NOT_NULL_FATAL(m = bp_metrics_open_path(path));
	/* Added in an order that interleaves families: rendered grouped, each header once. */
	bp_metrics_request(m, "wallets", "/v1/wallets/:address", "GET", 404);
	bp_metrics_add(m, "blockport_limit_refusals_total{limit=\"rps\"}", 1);
	bp_metrics_request(m, "wallets", NULL, "BREW", 404);
	bp_metrics_add(m, "blockport_unknown_total", 5);
	bp_buf_init(&out, 1 << 20);
	CU_ASSERT_EQUAL(bp_metrics_render(m, &out), 0);
	p = strstr(out.data, "# TYPE blockport_http_requests_total counter\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_PTR_NULL(strstr(p + 1, "# TYPE blockport_http_requests_total"));
	q = strstr(out.data, "# TYPE blockport_limit_refusals_total counter\n");
	CU_ASSERT_PTR_NOT_NULL(q);
	/* A path no route has: no method from the client, whatever it sent. */
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "{program=\"wallets\",route=\"\",method=\"\","
	    "status=\"404\"} 1\n"));
	CU_ASSERT_PTR_NULL(strstr(out.data, "BREW"));
	CU_ASSERT_PTR_NULL(strstr(out.data, "blockport_unknown_total"));
	bp_buf_free(&out);
	bp_metrics_close(m);
}

static void
test_allowed(void)
{
	char err[128];

	CU_ASSERT(bp_metrics_allowed("", "127.0.0.1"));
	CU_ASSERT(bp_metrics_allowed("", "127.3.2.1"));
	CU_ASSERT(bp_metrics_allowed("", "::1"));
	CU_ASSERT(bp_metrics_allowed("", "::ffff:127.0.0.1"));
	CU_ASSERT_FALSE(bp_metrics_allowed("", "192.0.2.2"));
	CU_ASSERT_FALSE(bp_metrics_allowed("", "::2"));
	CU_ASSERT_FALSE(bp_metrics_allowed("", NULL));
	CU_ASSERT_FALSE(bp_metrics_allowed("", ""));
	CU_ASSERT_FALSE(bp_metrics_allowed("", "127.0.0.1/8"));	/* an address, not a block */
	CU_ASSERT_FALSE(bp_metrics_allowed("", "localhost"));
	CU_ASSERT(bp_metrics_allowed("192.0.2.0/24", "192.0.2.2"));
	CU_ASSERT(bp_metrics_allowed("192.0.2.0/24", "::ffff:192.0.2.200"));
	CU_ASSERT_FALSE(bp_metrics_allowed("192.0.2.0/24", "192.0.3.2"));
	CU_ASSERT(bp_metrics_allowed("10.0.0.0/8, fd00::/8 198.51.100.7", "fd12::5"));
	CU_ASSERT(bp_metrics_allowed("10.0.0.0/8, fd00::/8 198.51.100.7", "198.51.100.7"));
	CU_ASSERT_FALSE(bp_metrics_allowed("10.0.0.0/8, fd00::/8 198.51.100.7", "198.51.100.8"));
	CU_ASSERT(bp_metrics_allowed("198.51.100.0/25", "198.51.100.127"));
	CU_ASSERT_FALSE(bp_metrics_allowed("198.51.100.0/25", "198.51.100.128"));
	CU_ASSERT(bp_metrics_allowed("0.0.0.0/0", "203.0.113.9"));
	CU_ASSERT_EQUAL(bp_metrics_allow_check("10.0.0.0/8, ::1", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(bp_metrics_allow_check("", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(bp_metrics_allow_check("10.0.0.0/8,10.0.0.0/99", err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "10.0.0.0/99"));
	CU_ASSERT_EQUAL(bp_metrics_allow_check("10.0.0.256", err, sizeof(err)), -1);
}

BP_UNIT_SUITE(metrics, setup, teardown,
	{ "adds of threads and mappings all counted; histogram exposition", test_shared_adds },
	{ "families rendered whole; a path no route has is one series", test_render_families },
	{ "loopback and metrics_allow only", test_allowed },
)

/*
 * The sources of the database's families, on both engines (scripts/test.sh runs this suite on
 * PostgreSQL too): their statements run, their figures come out, a table that cannot be read
 * leaves its family out whole.
 */
static void
test_sources(void)
{
	static const char rows[] =
	    "INSERT INTO worker_runs (name, started_at, finished_at, ok, message) VALUES"
	    " ('indexer', 1700000000, 1700000002, 1, 'ok'), ('deliver', 1700000005, NULL, 0, '');"
	    "INSERT INTO index_cursors (chain, head, chain_head, confirmed, checked_at) VALUES"
	    " ('ethereum.devnet', 90, 100, 88, 1700000001), ('base.x\"y', 5, -1, -1, 0)";
	static const bp_metrics_source sources[] = {
		bp_worker_metrics, bp_index_metrics, bp_webhook_queue_metrics,
		bp_bundler_pool_metrics,
	};
	struct bp_unit_db u;
	struct bp_buf out;
	size_t i;

	CU_ASSERT_FATAL(bp_unit_db_open(&u, "metrics") == 0);
	CU_ASSERT_EQUAL_FATAL(bp_db_exec(u.db, rows), 0);
	bp_buf_init(&out, 1 << 20);
	for (i = 0; i < BP_NITEMS(sources); i++)
		CU_ASSERT_EQUAL(sources[i](u.db, NULL, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data,
	    "blockport_worker_last_run_timestamp_seconds{worker=\"indexer\"} 1700000002\n"));
	/* Running: its start. Not finished: no verdict. */
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data,
	    "blockport_worker_last_run_timestamp_seconds{worker=\"deliver\"} 1700000005\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "blockport_worker_last_run_ok{worker=\"indexer\"} 1\n"));
	CU_ASSERT_PTR_NULL(strstr(out.data, "blockport_worker_last_run_ok{worker=\"deliver\"}"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data,
	    "blockport_index_lag_blocks{network=\"ethereum.devnet\"} 10\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data,
	    "blockport_index_head_block{network=\"base.x\\\"y\"} 5\n"));	/* escaped */
	CU_ASSERT_PTR_NULL(strstr(out.data, "blockport_index_lag_blocks{network=\"base"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "blockport_webhook_queue_depth 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "blockport_webhook_delivery_attempts_total 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data,
	    "# TYPE blockport_bundler_bundles_total counter\n"));
	/* A table gone: that source fails, and nothing of its family is left in the page. */
	bp_buf_reset(&out);
	CU_ASSERT_EQUAL_FATAL(bp_unit_db_drop(&u, "worker_runs"), 0);
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_worker_metrics(u.db, NULL, &out), -1);
	(void)bp_unit_log_end();
	CU_ASSERT_EQUAL(out.len, 0);
	bp_buf_free(&out);
	bp_unit_db_close(&u);
}

BP_UNIT_SUITE(metrics_db, NULL, NULL,
	{ "the database's families from their owners' tables", test_sources },
)
