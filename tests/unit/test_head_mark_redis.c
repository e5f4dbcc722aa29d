/*
 * lib/rpc/head_mark.c with limits = redis:// (BLOCKPORT_TEST_REDIS, set by scripts/test.sh's
 * "limits on Redis" step): two heads (two limits files, one Redis) share one mark with the
 * file's rule; with Redis gone each head keeps to its own file at once, without waiting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/util.h"
#include "rpc/head_mark.h"
#include "unit.h"

static char dir[] = "/tmp/bp-unit-hmr.XXXXXX";

/* A config of head n (its own limits file) on url; a network only this run uses. */
static void
head(struct bp_config *cfg, int n, const char *url)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->limits_file, sizeof(cfg->limits_file), "%s/head%d", dir, n);
	bp_strlcpy(cfg->limits_url, url, sizeof(cfg->limits_url));
}

static struct bp_network
fresh_net(void)
{
	struct bp_network n;

	memset(&n, 0, sizeof(n));
	bp_strlcpy(n.chain, "ethereum", sizeof(n.chain));
	snprintf(n.network, sizeof(n.network), "hm%d%ld", (int)getpid(), (long)bp_mono_us());
	return n;
}

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

static void
test_two_heads(void)
{
	struct bp_network a = fresh_net();
	struct bp_config c1, c2;
	struct bp_head_mark *h1, *h2;

	head(&c1, 1, getenv("BLOCKPORT_TEST_REDIS"));
	head(&c2, 2, getenv("BLOCKPORT_TEST_REDIS"));
	CU_ASSERT_FATAL((h1 = bp_head_mark_open(&c1)) != NULL);
	CU_ASSERT_FATAL((h2 = bp_head_mark_open(&c2)) != NULL);
	CU_ASSERT_EQUAL(bp_head_mark_get(h2, &a), -1);
	CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 100, 0), 100);
	/* The other head, with a file of its own, answers the first's mark. */
	CU_ASSERT_EQUAL(bp_head_mark_see(h2, &a, 95, 1), 100);
	usleep(110000);		/* past the recent read each handle keeps */
	CU_ASSERT_EQUAL(bp_head_mark_get(h2, &a), 100);
	CU_ASSERT_EQUAL(bp_head_mark_owner(h2, &a), 0);
	CU_ASSERT_EQUAL(bp_head_mark_see(h2, &a, 101, 1), 101);
	usleep(110000);
	CU_ASSERT_EQUAL(bp_head_mark_owner(h1, &a), 1);
	CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 101, 0), 101);
	CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 99, 0), 101);
	/* The upstream that set it goes back: believed on every head. */
	CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 90, 1), 90);
	usleep(110000);
	CU_ASSERT_EQUAL(bp_head_mark_get(h2, &a), 90);
	bp_head_mark_close(h1);
	bp_head_mark_close(h2);
}

/* Scripts Redis has run (INFO commandstats: EVAL and EVALSHA calls), or -1. */
static long
evals(const char *url)
{
	char cmd[256], line[256];
	long n = 0, c;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "redis-cli -u '%s' INFO commandstats", url);
	if ((f = popen(cmd, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "cmdstat_evalsha:calls=%ld", &c) == 1 ||
		    sscanf(line, "cmdstat_eval:calls=%ld", &c) == 1)
			n += c;
	return pclose(f) == 0 ? n : -1;
}

static void
test_steady_head(void)
{
	const char *url = getenv("BLOCKPORT_TEST_REDIS");
	struct bp_network a = fresh_net();
	struct bp_config c1;
	struct bp_head_mark *h1;
	long before, after;
	int i;

	head(&c1, 5, url);
	CU_ASSERT_FATAL((h1 = bp_head_mark_open(&c1)) != NULL);
	CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 200, 0), 200);
	CU_ASSERT_FATAL((before = evals(url)) >= 0);
	/*
	 * The same head again, and a lagging fallback's lower one: neither moves the mark, so
	 * neither costs a round trip while the last answer is recent (each did before: 200).
	 */
	for (i = 0; i < 100; i++) {
		CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 200, 0), 200);
		CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 150, 1), 200);
	}
	after = evals(url);
	CU_ASSERT(after >= before && after - before < 10);
	/* A new head, and the owner's own lower one, still go to Redis at once. */
	CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 201, 0), 201);
	CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 199, 0), 199);
	CU_ASSERT(evals(url) - after >= 2);
	bp_head_mark_close(h1);
}

static void
test_redis_down(void)
{
	struct bp_network a = fresh_net();
	struct bp_config c1, c2;
	struct bp_head_mark *h1, *h2;
	int64_t t0;

	/* Port 1 of loopback: refused at once, as a stopped Redis is. */
	head(&c1, 3, "redis://127.0.0.1:1");
	head(&c2, 4, "redis://127.0.0.1:1");
	CU_ASSERT_FATAL((h1 = bp_head_mark_open(&c1)) != NULL);
	CU_ASSERT_FATAL((h2 = bp_head_mark_open(&c2)) != NULL);
	t0 = bp_mono_us();
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 100, 0), 100);
	CU_ASSERT_EQUAL(bp_head_mark_see(h1, &a, 95, 1), 100);	/* the head's own mark holds */
	CU_ASSERT_EQUAL(bp_head_mark_get(h1, &a), 100);
	CU_ASSERT_EQUAL(bp_head_mark_see(h2, &a, 95, 1), 95);	/* another head: its own */
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "this head's own mark"));
	CU_ASSERT(bp_mono_us() - t0 < 500000);
	bp_head_mark_close(h1);
	bp_head_mark_close(h2);
}

static const struct bp_unit_case cases[] = {
	{ "two heads share one mark through Redis", test_two_heads },
	{ "a head that stays put costs no round trip per report", test_steady_head },
	{ "Redis down: each head's own file, no wait", test_redis_down },
};
static const struct bp_unit_suite suite = { "head_mark_redis", setup, teardown, cases,
    BP_NITEMS(cases) };

__attribute__((constructor)) static void
head_mark_redis_register(void)
{
	const char *url = getenv("BLOCKPORT_TEST_REDIS");

	if (url == NULL || *url == '\0')
		return;		/* limits_redis says why */
	bp_unit_register(&suite);
}
