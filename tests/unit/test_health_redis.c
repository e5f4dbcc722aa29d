/*
 * lib/net/health.c shared through Redis (BLOCKPORT_TEST_REDIS, set by scripts/test.sh's "limits
 * on Redis" step): two heads (two files, one Redis); a node one head marks down is down on the
 * other at its next read, and up again on both once found up; Redis down, each keeps its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "net/health.h"
#include "unit.h"

#define SEC	INT64_C(1000000)

static char dir[] = "/tmp/bp-unit-hr.XXXXXX";

static int
setup(void)
{
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Head n's handle (its own file) on url. */
static struct bp_health *
head(int n, const char *url)
{
	char path[64];
	struct bp_health *h;

	snprintf(path, sizeof(path), "%s/head%d", dir, n);
	if ((h = bp_health_open(path)) != NULL && bp_health_share(h, url) == -1) {
		bp_health_close(h);
		return NULL;
	}
	return h;
}

static void
test_two_heads(void)
{
	const char *redis = getenv("BLOCKPORT_TEST_REDIS");
	struct bp_health *a, *b;
	char url[64];
	int64_t now = bp_mono_us();

	snprintf(url, sizeof(url), "http://node-%d-%lld.test", (int)getpid(), (long long)now);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a = head(1, redis));
	CU_ASSERT_PTR_NOT_NULL_FATAL(b = head(2, redis));
	CU_ASSERT_EQUAL(bp_health_check(b, url, now, SEC), BP_HEALTH_UP);
	bp_health_fail(a, url, bp_mono_us() + 400000);
	/* b read Redis a moment ago: its next read is due after 100 ms. */
	usleep(110000);
	now = bp_mono_us();
	CU_ASSERT_EQUAL(bp_health_check(b, url, now, SEC), BP_HEALTH_DOWN);
	CU_ASSERT(bp_health_down(b, url, now));
	/* For as long as a's mark, not more: past it, b probes. */
	usleep(400000);
	now = bp_mono_us();
	CU_ASSERT(!bp_health_down(b, url, now));
	CU_ASSERT_EQUAL(bp_health_check(b, url, now, SEC), BP_HEALTH_PROBE);
	bp_health_fail(a, url, bp_mono_us() + 3 * SEC);
	/* a finds it up: a new head's first read finds no mark. */
	bp_health_ok(a, url);
	bp_health_close(b);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b = head(3, redis));
	CU_ASSERT_EQUAL(bp_health_check(b, url, bp_mono_us(), SEC), BP_HEALTH_UP);
	bp_health_close(a);
	bp_health_close(b);
}

static void
test_redis_down(void)
{
	struct bp_health *a, *b;
	int64_t t0 = bp_mono_us();

	/* Port 1 of loopback: refused at once, as a stopped Redis is. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(a = head(4, "redis://127.0.0.1:1"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(b = head(5, "redis://127.0.0.1:1"));
	bp_unit_log_begin();
	bp_health_fail(a, "http://n.test", t0 + 3 * SEC);
	CU_ASSERT(bp_health_down(a, "http://n.test", bp_mono_us()));
	CU_ASSERT(!bp_health_down(b, "http://n.test", bp_mono_us()));
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "upstream health stays this head's own"));
	CU_ASSERT(bp_mono_us() - t0 < 500000);
	bp_health_close(a);
	bp_health_close(b);
}

static const struct bp_unit_case cases[] = {
	{ "a node one head marks down is down on the other", test_two_heads },
	{ "Redis down: each head's own marks, no wait", test_redis_down },
};
static const struct bp_unit_suite suite = { "health_redis", setup, teardown, cases,
    BP_NITEMS(cases) };

__attribute__((constructor)) static void
health_redis_register(void)
{
	const char *url = getenv("BLOCKPORT_TEST_REDIS");

	if (url == NULL || *url == '\0')
		return;		/* limits_redis says why */
	bp_unit_register(&suite);
}
