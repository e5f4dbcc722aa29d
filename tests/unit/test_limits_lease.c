/*
 * Leases on the counts in Redis (lib/core/limits.c, lease_take; BLOCKPORT_TEST_REDIS): a busy key
 * of 1,000 requests a second costs a script a grant, not one a request, and Redis still counted
 * every request; a key of 64 a second is admitted no more than its bucket and a grant's worth;
 * a Free key (10 a second) is counted alone, a script a request, as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "core/config.h"
#include "core/limits.h"
#include "core/util.h"
#include "unit.h"

static char base[64];

static int
lease_setup(void)
{
	snprintf(base, sizeof(base), "/tmp/bp-unit-lease.%d", (int)getpid());
	return 0;
}

static int
lease_teardown(void)
{
	char p[96];
	int i;

	for (i = 1; i <= 2; i++) {
		snprintf(p, sizeof(p), "%s.%d", base, i);
		unlink(p);
		snprintf(p, sizeof(p), "%s.%d-leases", base, i);
		unlink(p);
	}
	return 0;
}

/* Head n's counters on the test Redis. */
static struct bp_limits *
head(int n)
{
	struct bp_config *cfg = calloc(1, sizeof(*cfg));
	struct bp_limits *l;

	if (cfg == NULL)
		return NULL;
	snprintf(cfg->limits_file, sizeof(cfg->limits_file), "%s.%d", base, n);
	snprintf(cfg->limits_url, sizeof(cfg->limits_url), "%s", getenv("BLOCKPORT_TEST_REDIS"));
	l = bp_limits_open_config(cfg);
	free(cfg);
	return l;
}

/* The admission scripts Redis ran so far. */
static long long
scripts(void)
{
	const char *url = getenv("BLOCKPORT_TEST_REDIS");
	redisContext *c;
	redisReply *r;
	const char *p;
	long long n = -1;
	int port;

	if (url == NULL || sscanf(url, "redis://127.0.0.1:%d", &port) != 1 ||
	    (c = redisConnect("127.0.0.1", port)) == NULL)
		return -1;
	r = c->err == 0 ? redisCommand(c, "INFO commandstats") : NULL;
	if (r != NULL && r->type == REDIS_REPLY_STRING)
		n = (p = strstr(r->str, "cmdstat_evalsha:calls=")) != NULL ? atoll(p + 22) : 0;
	freeReplyObject(r);
	redisFree(c);
	return n;
}

static uint64_t
fresh_key(void)
{
	static uint64_t n;

	return ((((uint64_t)time(NULL) << 20) | ((uint64_t)getpid() & 0xfffff)) << 10) + 512 + n++;
}

static void
test_busy_key(void)
{
	struct bp_limit_plan p = { 1000, 0, 0, 3 };
	struct bp_limit_state st;
	struct bp_limits *a = head(1), *b = head(2);
	uint64_t who = fresh_key();
	long long before;
	int i, ok = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_FATAL((before = scripts()) >= 0);
	for (i = 0; i < 400; i++) {
		ok += bp_limits_take(a, who, &p, 1, 1, 10, &st) == BP_LIMIT_OK;
		CU_ASSERT(st.limit == 3000 && st.remaining >= 0 && st.remaining <= 3000);
	}
	CU_ASSERT_EQUAL(ok, 400);
	CU_ASSERT(scripts() - before <= 40);
	/* Another head reads Redis's bucket: every request admitted there was counted. */
	CU_ASSERT_EQUAL(bp_limits_take(b, who, &p, 0, 0, 0, &st), BP_LIMIT_OK);
	CU_ASSERT(st.remaining <= 3000 - 400 + 1000);	/* refilled 1,000 a second meanwhile */
	bp_limits_close(a);
	bp_limits_close(b);
}

static void
test_no_more_than_bucket(void)
{
	struct bp_limit_plan p = { 64, 0, 0, 1 };
	struct bp_limit_state st;
	struct bp_limits *a = head(1);
	uint64_t who = fresh_key();
	int64_t t0 = bp_mono_us(), ms;
	int i, ok = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	for (i = 0; i < 300; i++)
		ok += bp_limits_take(a, who, &p, 1, 0, 0, &st) == BP_LIMIT_OK;
	ms = (bp_mono_us() - t0) / 1000;
	/* The bucket (64), its refill meanwhile, and tokens counted up to 2/16 s before. */
	CU_ASSERT(ok <= 64 + 64 * (ms + 1) / 1000 + 8);
	CU_ASSERT(ok >= 64 - 8);
	bp_limits_close(a);
}

static void
test_free_key_alone(void)
{
	struct bp_limit_plan p = { 10, 100000, 200, 3 };
	struct bp_limit_state st;
	struct bp_limits *a = head(1);
	uint64_t who = fresh_key();
	long long before;
	int i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	before = scripts();
	for (i = 0; i < 20; i++)
		CU_ASSERT_EQUAL(bp_limits_take(a, who, &p, 1, 1, 10, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 10);
	CU_ASSERT_EQUAL(scripts() - before, 20);
	bp_limits_close(a);
}

static const struct bp_unit_case cases[] = {
	{ "a busy key costs a script a grant, every request counted", test_busy_key },
	{ "no more than the bucket and a grant's worth", test_no_more_than_bucket },
	{ "a Free key: a script a request, as before", test_free_key_alone },
};
static const struct bp_unit_suite suite = { "limits_lease", lease_setup, lease_teardown,
    cases, BP_NITEMS(cases) };

__attribute__((constructor)) static void
limits_lease_register(void)
{
	const char *url = getenv("BLOCKPORT_TEST_REDIS");

	if (url != NULL && *url != '\0')	/* else limits_redis says why */
		bp_unit_register(&suite);
}
