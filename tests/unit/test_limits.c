/*
 * lib/core/limits.c against a temporary counters file: the per-second, per-day and compute-unit
 * limits to the exact count, unlimited plans, two handles (two processes' mappings) on one file,
 * two forked processes hammering one key without losing an increment, client addresses (IPv6 per
 * /64), a table filled by a flood of addresses (refused, keys spared, slots back within minutes).
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "core/config.h"
#include "core/limits.h"
#include "core/limits_redis.h"
#include "core/util.h"
#include "unit.h"

static char dir[] = "/tmp/bp-unit-limits.XXXXXX";
static char path[sizeof(dir) + 32];
static struct bp_limits *lim;
static uint64_t next_who = 1000;
static const char *redis_url;	/* the limits_redis suite's: the same cases in Redis */
static int scale = 1;		/* Redis's cases take fewer turns: each is a round trip */

/* A handle on the counters of the suite running: the file, or the file and Redis at url. */
static struct bp_limits *
open_url(const char *url)
{
	struct bp_config *cfg = calloc(1, sizeof(*cfg));
	struct bp_limits *l;

	if (cfg == NULL)
		return NULL;
	snprintf(cfg->limits_file, sizeof(cfg->limits_file), "%s", path);
	snprintf(cfg->limits_url, sizeof(cfg->limits_url), "%s", url != NULL ? url : "");
	l = bp_limits_open_config(cfg);
	free(cfg);
	return l;
}

static struct bp_limits *
open_handle(void)
{
	return open_url(redis_url);
}

static int
setup(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof(path), "%s/counters", dir);
	return (lim = open_handle()) == NULL;
}

static int
teardown(void)
{
	bp_limits_close(lim);
	unlink(path);
	rmdir(dir);
	memcpy(dir + sizeof(dir) - 7, "XXXXXX", 6);	/* for the other suite's mkdtemp */
	return 0;
}

/*
 * The Redis suite: key ids no earlier run against the same server used (a day's counts last
 * until midnight there).
 */
static redisContext *redis_peek(void);

static int
setup_redis(void)
{
	redisContext *c;
	redisReply *r;
	int up;

	redis_url = getenv("BLOCKPORT_TEST_REDIS");
	scale = 10;
	/* A Redis that does not answer would leave every case to the file's fallback: refuse. */
	if ((c = redis_peek()) == NULL)
		return 1;
	r = c->err == 0 ? redisCommand(c, "PING") : NULL;
	up = r != NULL && r->type == REDIS_REPLY_STATUS;
	freeReplyObject(r);
	redisFree(c);
	if (!up) {
		fprintf(stderr, "limits_redis: nothing answers at %s\n", redis_url);
		return 1;
	}
	next_who = (((uint64_t)time(NULL) << 20) | ((uint64_t)getpid() & 0xfffff)) << 10;
	return setup();
}

static int
teardown_redis(void)
{
	teardown();
	redis_url = NULL;
	scale = 1;
	return 0;
}

/* A key id no other test used. */
static uint64_t
fresh_who(void)
{
	return next_who++;
}

static enum bp_limit_verdict
take(uint64_t who, int64_t rps, int64_t rpd, int64_t cups, unsigned nreq, unsigned nday,
    unsigned cu, struct bp_limit_state *st)
{
	struct bp_limit_plan p = { rps, rpd, cups, 0 };

	return bp_limits_take(lim, who, &p, nreq, nday, cu, st);
}

static void
test_rps(void)
{
	struct bp_limit_state st;
	uint64_t who = fresh_who(), other = fresh_who();
	int64_t now;
	int i;

	bp_unit_fresh_second();
	now = (int64_t)time(NULL);
	for (i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(take(who, 5, 0, 0, 1, 1, 0, &st), BP_LIMIT_OK);
		CU_ASSERT_EQUAL(st.limit, 5);
		CU_ASSERT_EQUAL(st.remaining, 4 - i);
		CU_ASSERT_EQUAL(st.reset, now + 1);
		CU_ASSERT_EQUAL(st.retry_after, 0);
	}
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(take(who, 5, 0, 0, 1, 1, 0, &st), BP_LIMIT_RPS);
		CU_ASSERT_EQUAL(st.remaining, 0);
		CU_ASSERT_EQUAL(st.retry_after, 1);
	}
	/* Another key has its own count. */
	CU_ASSERT_EQUAL(take(other, 5, 0, 0, 1, 1, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 4);

	/* Several requests at once: all or nothing. */
	who = fresh_who();
	CU_ASSERT_EQUAL(take(who, 5, 0, 0, 3, 0, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 2);
	CU_ASSERT_EQUAL(take(who, 5, 0, 0, 3, 0, 0, &st), BP_LIMIT_RPS);
	CU_ASSERT_EQUAL(take(who, 5, 0, 0, 2, 0, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 0);
	/* Counting nothing (a self-limiting route's first pass) never refuses, and reads the count. */
	CU_ASSERT_EQUAL(take(who, 5, 0, 0, 0, 0, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 0);
	CU_ASSERT_EQUAL(st.limit, 5);
}

static void
test_cups(void)
{
	struct bp_limit_state st;
	uint64_t who = fresh_who();

	bp_unit_fresh_second();
	CU_ASSERT_EQUAL(take(who, 0, 0, 10, 1, 1, 4, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(take(who, 0, 0, 10, 1, 1, 4, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(take(who, 0, 0, 10, 1, 1, 4, &st), BP_LIMIT_CUPS);	/* 12 > 10 */
	CU_ASSERT_EQUAL(st.retry_after, 1);
	CU_ASSERT_EQUAL(take(who, 0, 0, 10, 1, 1, 2, &st), BP_LIMIT_OK);	/* exactly 10 */
	CU_ASSERT_EQUAL(take(who, 0, 0, 10, 1, 1, 1, &st), BP_LIMIT_CUPS);
	CU_ASSERT_EQUAL(take(who, 0, 0, 10, 1, 1, 0, &st), BP_LIMIT_OK);	/* free calls pass */
	/* One call dearer than the whole budget. */
	CU_ASSERT_EQUAL(take(fresh_who(), 0, 0, 10, 1, 1, 11, &st), BP_LIMIT_CUPS);
	/* Compute units counted later in the request (bp_req_charge). */
	who = fresh_who();
	CU_ASSERT_EQUAL(take(who, 100, 0, 10, 1, 0, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(take(who, 100, 0, 10, 0, 1, 10, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(take(who, 100, 0, 10, 0, 1, 1, &st), BP_LIMIT_CUPS);
}

static void
test_day(void)
{
	struct bp_limit_state st;
	uint64_t who = fresh_who();
	int64_t before, after;
	int i;

	for (i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(take(who, 0, 3, 0, 1, 1, 0, &st), BP_LIMIT_OK);
	before = (int64_t)time(NULL);
	CU_ASSERT_EQUAL(take(who, 0, 3, 0, 1, 1, 0, &st), BP_LIMIT_RPD);
	after = (int64_t)time(NULL);
	/* Until the next UTC midnight. */
	CU_ASSERT(st.retry_after <= 86400 - before % 86400 && st.retry_after >= 86400 -
	    after % 86400);
	CU_ASSERT(st.retry_after >= 1 && st.retry_after <= 86400);
	CU_ASSERT_EQUAL(take(who, 0, 3, 0, 1, 1, 0, &st), BP_LIMIT_RPD);
	/* A request that does not count for the day still passes. */
	CU_ASSERT_EQUAL(take(who, 0, 3, 0, 1, 0, 0, &st), BP_LIMIT_OK);
	/* Several at once: all or nothing. */
	who = fresh_who();
	CU_ASSERT_EQUAL(take(who, 0, 3, 0, 1, 2, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(take(who, 0, 3, 0, 1, 2, 0, &st), BP_LIMIT_RPD);
	CU_ASSERT_EQUAL(take(who, 0, 3, 0, 1, 1, 0, &st), BP_LIMIT_OK);
}

static void
test_unlimited(void)
{
	struct bp_limit_state st;
	uint64_t who = fresh_who();
	int i, ok = 0;

	for (i = 0; i < 100000 / scale; i++)
		ok += take(who, 0, 0, 0, 1, 1, 1000, &st) == BP_LIMIT_OK;
	CU_ASSERT_EQUAL(ok, 100000 / scale);
	/* No per-second limit: a large Limit, and a Remaining that never says "stop". */
	CU_ASSERT_EQUAL(st.limit, BP_LIMIT_UNLIMITED);
	CU_ASSERT(st.remaining >= 1 && st.remaining <= BP_LIMIT_UNLIMITED);
	CU_ASSERT_EQUAL(st.retry_after, 0);
	/* Counters saturate instead of wrapping: a huge count is still no refusal. */
	CU_ASSERT_EQUAL(take(who, 0, 0, 0, UINT32_MAX, UINT32_MAX, UINT32_MAX, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(take(who, 0, 0, 0, UINT32_MAX, UINT32_MAX, UINT32_MAX, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 1);	/* past 2^31 in a second: still not 0 */
	/* A limit on one axis only. */
	who = fresh_who();
	bp_unit_fresh_second();
	for (i = 0; i < 10; i++)
		CU_ASSERT_EQUAL(take(who, 10, 0, 0, 1, 1, 500, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(take(who, 10, 0, 0, 1, 1, 500, &st), BP_LIMIT_RPS);
}

static void
test_two_handles(void)
{
	struct bp_limits *other = open_handle();
	struct bp_limit_plan p = { 4, 0, 0, 0 };
	struct bp_limit_state st;
	uint64_t who = fresh_who(), g;

	CU_ASSERT_FATAL(other != NULL);
	bp_unit_fresh_second();
	CU_ASSERT_EQUAL(bp_limits_take(lim, who, &p, 1, 1, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(bp_limits_take(other, who, &p, 1, 1, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 2);
	CU_ASSERT_EQUAL(bp_limits_take(lim, who, &p, 1, 1, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(bp_limits_take(other, who, &p, 1, 1, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 0);
	CU_ASSERT_EQUAL(bp_limits_take(lim, who, &p, 1, 1, 0, &st), BP_LIMIT_RPS);
	CU_ASSERT_EQUAL(bp_limits_take(other, who, &p, 1, 1, 0, &st), BP_LIMIT_RPS);

	/* The key generation is shared too: at once in the file, within 100 ms in Redis. */
	g = bp_limits_generation(other);
	bp_limits_bump_generation(lim);
	if (redis_url == NULL) {
		CU_ASSERT_EQUAL(bp_limits_generation(other), g + 1);
		bp_limits_bump_generation(other);
		CU_ASSERT_EQUAL(bp_limits_generation(lim), g + 2);
	} else {
		int i;

		for (i = 0; i < 30 && bp_limits_generation(other) == g; i++)
			usleep(10000);
		CU_ASSERT(bp_limits_generation(other) > g);
		CU_ASSERT(i * 10 <= BP_LIMITS_REDIS_GEN_MS + 20);
	}
	bp_limits_close(other);
	bp_limits_close(NULL);
}

/*
 * In a child: waits for the start signal on go, takes one day request for who n times, and
 * writes how many passed to fd.
 */
static void
hammer(int go, int fd, uint64_t who, int64_t rpd, int n)
{
	struct bp_limits *l = open_handle();
	struct bp_limit_plan p = { 0, rpd, 0, 0 };
	struct bp_limit_state st;
	int i, ok = 0;
	char c;

	if (l == NULL || read(go, &c, 1) != 1)
		_exit(2);
	for (i = 0; i < n; i++)
		ok += bp_limits_take(l, who, &p, 1, 1, 0, &st) == BP_LIMIT_OK;
	if (write(fd, &ok, sizeof(ok)) != (ssize_t)sizeof(ok))
		_exit(3);
	bp_limits_close(l);
	_exit(0);
}

/* Two processes, n takes each against rpd; returns how many passed in all, or -1. */
static int
race(uint64_t who, int64_t rpd, int n)
{
	int fds[2], go[2], total = 0, k;
	pid_t pid[2];

	CU_ASSERT_FATAL(pipe(fds) == 0 && pipe(go) == 0);
	for (k = 0; k < 2; k++) {
		pid[k] = fork();
		CU_ASSERT_FATAL(pid[k] != -1);
		if (pid[k] == 0) {
			close(fds[0]);
			close(go[1]);
			hammer(go[0], fds[1], who, rpd, n);
		}
	}
	close(fds[1]);
	close(go[0]);
	/* Both are mapped and waiting: start them together, so their takes interleave. */
	CU_ASSERT(write(go[1], "gg", 2) == 2);
	close(go[1]);
	for (k = 0; k < 2; k++) {
		int status, ok = 0;

		if (read(fds[0], &ok, sizeof(ok)) != (ssize_t)sizeof(ok))
			total = -1;
		else if (total >= 0)
			total += ok;
		CU_ASSERT(waitpid(pid[k], &status, 0) == pid[k] && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0);
	}
	close(fds[0]);
	return total;
}

static void
test_fork_no_lost_increments(void)
{
	struct bp_limit_state st;
	uint64_t who = fresh_who();

	/* 40000 takes against a limit of 40000: all pass, and the next one is refused. */
	CU_ASSERT_EQUAL(race(who, 40000 / scale, 20000 / scale), 40000 / scale);
	CU_ASSERT_EQUAL(take(who, 0, 40000 / scale, 0, 1, 1, 0, &st), BP_LIMIT_RPD);
	/* 40000 takes against 30000: exactly 30000 pass, none more, none fewer. */
	who = fresh_who();
	CU_ASSERT_EQUAL(race(who, 30000 / scale, 20000 / scale), 30000 / scale);
	CU_ASSERT_EQUAL(take(who, 0, 30000 / scale, 0, 1, 1, 0, &st), BP_LIMIT_RPD);
}

static void
test_addresses(void)
{
	uint64_t a = bp_limits_addr_id("198.51.100.7");

	CU_ASSERT(a >> 63 == 1);			/* never a key id */
	CU_ASSERT(bp_limits_addr_id("") >> 63 == 1);
	CU_ASSERT(bp_limits_addr_id("not an address") >> 63 == 1);
	CU_ASSERT_EQUAL(bp_limits_addr_id("198.51.100.7"), a);
	CU_ASSERT_NOT_EQUAL(bp_limits_addr_id("198.51.100.8"), a);
	/* IPv6 clients are counted per /64: every address of one /64 is one client. */
	CU_ASSERT_EQUAL(bp_limits_addr_id("2001:db8:1:2::1"), bp_limits_addr_id("2001:db8:1:2::2"));
	CU_ASSERT_EQUAL(bp_limits_addr_id("2001:db8:1:2::1"),
	    bp_limits_addr_id("2001:db8:1:2:ffff:eeee:dddd:cccc"));
	CU_ASSERT_EQUAL(bp_limits_addr_id("::1"), bp_limits_addr_id("::2"));
	CU_ASSERT_NOT_EQUAL(bp_limits_addr_id("2001:db8:1:2::1"), bp_limits_addr_id("2001:db8:1:3::1"));
	CU_ASSERT_NOT_EQUAL(bp_limits_addr_id("2001:db8:1:2::1"), bp_limits_addr_id("2001:db8:2:2::1"));
	/* An IPv4-mapped address is its IPv4 address, not the /64 of every IPv4 client. */
	CU_ASSERT_EQUAL(bp_limits_addr_id("::ffff:198.51.100.7"), a);
	CU_ASSERT_NOT_EQUAL(bp_limits_addr_id("::ffff:198.51.100.8"), a);
}

/*
 * The counters file filled with client addresses (an IPv6 flood from 40000 /64s): addresses past
 * the full region are refused (fail closed), an address that holds a slot is still throttled at
 * its rate, keys are untouched and limited to the exact count, and the slots of the flood come
 * back once it has been idle for a minute.
 */
static void
test_full(void)
{
	struct bp_limit_plan anon = { 2, 0, 0, 0 }, gold = { 3, 0, 0, 0 };
	struct bp_limit_state st;
	int64_t t = (int64_t)time(NULL) + 100000;	/* a second no other test counts in */
	uint64_t first = bp_limits_addr_id("2001:db8:0:0::1"), key = fresh_who();
	int i, ok = 0, full = 0, other = 0;
	char addr[64];

	CU_ASSERT_EQUAL(bp_limits_take_at(lim, first, &anon, 1, 0, 0, t, &st), BP_LIMIT_OK);
	bp_unit_log_begin();
	for (i = 1; i < 40000; i++) {
		enum bp_limit_verdict v;

		snprintf(addr, sizeof(addr), "2001:db8:%x:%x::1", i >> 16, i & 0xffff);
		v = bp_limits_take_at(lim, bp_limits_addr_id(addr), &anon, 1, 0, 0, t, &st);
		ok += v == BP_LIMIT_OK;
		full += v == BP_LIMIT_FULL;
		other += v != BP_LIMIT_OK && v != BP_LIMIT_FULL;
		if (v == BP_LIMIT_FULL) {
			CU_ASSERT_EQUAL(st.retry_after, 1);
			CU_ASSERT_EQUAL(st.remaining, 0);
		}
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "counters file full"));
	CU_ASSERT(ok <= 32768 - 1);			/* at most the addresses' half */
	CU_ASSERT(ok > 30000);
	CU_ASSERT(full >= 40000 - 32768);
	CU_ASSERT_EQUAL(other, 0);
	/* A new address is refused, not let through. */
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, bp_limits_addr_id("2001:db8:ffff:1::1"), &anon, 1,
	    0, 0, t, &st), BP_LIMIT_FULL);
	/* The address that holds a slot is still throttled, to the exact count. */
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, first, &anon, 1, 0, 0, t, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, first, &anon, 1, 0, 0, t, &st), BP_LIMIT_RPS);
	/* A key is counted as ever: 3 pass, the 4th is refused. */
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(bp_limits_take_at(lim, key, &gold, 1, 1, 0, t, &st), BP_LIMIT_OK);
		CU_ASSERT_EQUAL(st.remaining, 2 - i);
	}
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, key, &gold, 1, 1, 0, t, &st), BP_LIMIT_RPS);
	/* Many keys too: the keys' half does not fill with addresses. */
	for (i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(bp_limits_take_at(lim, fresh_who(), &gold, 1, 1, 0, t, &st),
		    BP_LIMIT_OK);

	/* Idle addresses come back within minutes: a minute later a new address gets a slot... */
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, bp_limits_addr_id("2001:db8:ffff:1::1"), &anon, 1,
	    0, 0, t + 30, &st), BP_LIMIT_FULL);
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, bp_limits_addr_id("2001:db8:ffff:1::1"), &anon, 1,
	    0, 0, t + 61, &st), BP_LIMIT_OK);
	bp_unit_log_end();
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, bp_limits_addr_id("2001:db8:ffff:1::1"), &anon, 2,
	    0, 0, t + 61, &st), BP_LIMIT_RPS);
	/* ...while a key that counted today keeps its slot, and its day, the whole day. */
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, key, &gold, 1, 1, 0, t + 3600, &st), BP_LIMIT_OK);
}

/* A key's day survives an idle key colliding with it; its slot is reused the next day. */
static void
test_key_slots(void)
{
	struct bp_limit_plan daily = { 0, 2, 0, 0 };
	struct bp_limit_state st;
	int64_t t = ((int64_t)time(NULL) / 86400 + 10) * 86400 + 3600;	/* 01:00, a later day */
	uint64_t key = fresh_who(), twin = key + 32768;		/* the same home slot */

	CU_ASSERT_EQUAL(bp_limits_take_at(lim, key, &daily, 1, 2, 0, t, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, twin, &daily, 1, 2, 0, t + 600, &st), BP_LIMIT_OK);
	/* Ten minutes idle, but key has counted today: it keeps its count. */
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, key, &daily, 1, 1, 0, t + 700, &st), BP_LIMIT_RPD);
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, twin, &daily, 1, 1, 0, t + 700, &st), BP_LIMIT_RPD);
	/* The next day both start again. */
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, key, &daily, 1, 2, 0, t + 86400, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(bp_limits_take_at(lim, twin, &daily, 1, 2, 0, t + 86400, &st),
	    BP_LIMIT_OK);
}

/*
 * A plan with a burst: a bucket of rps x burst requests refilled at rps a second. A burst of
 * that size passes at once, the average still holds to rps, and the headers say what the bucket
 * holds; compute units are a bucket too. Times in ns, from a fixed second.
 */
static void
test_bucket(void)
{
	struct bp_limit_plan free = { 10, 0, 200, 3 };
	struct bp_limit_state st;
	int64_t t = ((int64_t)time(NULL) / 86400 + 20) * 86400 * INT64_C(1000000000);
	int64_t ms = INT64_C(1000000);
	uint64_t who = fresh_who();
	int i, passed;

	/* 30 at once (a page load, then ethers sending a transaction), then 429. */
	for (i = 0; i < 30; i++) {
		CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 1, 1, 1, t + i * ms, &st),
		    BP_LIMIT_OK);
		CU_ASSERT_EQUAL(st.limit, 30);
		CU_ASSERT_EQUAL(st.remaining, 29 - i);
	}
	/* Full again 3 s after the first request (30 x 100 ms), refilled by 29 ms meanwhile. */
	CU_ASSERT_EQUAL(st.reset, t / INT64_C(1000000000) + 3);
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 1, 1, 1, t + 30 * ms, &st),
	    BP_LIMIT_RPS);
	CU_ASSERT_EQUAL(st.remaining, 0);
	CU_ASSERT_EQUAL(st.retry_after, 1);
	/* Refilled at 10 a second: one request every 100 ms, no more. */
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 1, 1, 1, t + 100 * ms, &st),
	    BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 0);
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 1, 1, 1, t + 150 * ms, &st),
	    BP_LIMIT_RPS);
	/* Over ten seconds of hammering the average holds: 10 a second. */
	passed = 0;
	for (i = 0; i < 1000; i++)
		passed += bp_limits_take_ns(lim, who, &free, 1, 1, 1, t + 200 * ms + i * 10 * ms,
		    &st) == BP_LIMIT_OK;
	CU_ASSERT(passed >= 99 && passed <= 101);
	/* Idle for 3 s: the whole bucket is back. */
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 0, 0, 0, t + 13500 * ms, &st),
	    BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 30);
	/* Several at once: all or nothing, and Retry-After until there are enough. */
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 25, 0, 0, t + 13500 * ms, &st),
	    BP_LIMIT_OK);
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 20, 0, 0, t + 13500 * ms, &st),
	    BP_LIMIT_RPS);
	CU_ASSERT_EQUAL(st.remaining, 5);
	CU_ASSERT_EQUAL(st.retry_after, 2);	/* 15 more needed: 1.5 s */

	/* Compute units: 600 at once, then refilled at 200 a second. */
	who = fresh_who();
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 1, 0, 590, t, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 1, 0, 20, t, &st), BP_LIMIT_CUPS);
	CU_ASSERT_EQUAL(st.retry_after, 1);
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 1, 0, 20, t + 50 * ms, &st),
	    BP_LIMIT_OK);

	/* A word of the other kind (the plan had no burst) reads as a full bucket, and back. */
	who = fresh_who();
	free.burst = 0;
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 10, 0, 0, t, &st), BP_LIMIT_OK);
	free.burst = 3;
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 30, 0, 0, t, &st), BP_LIMIT_OK);
	free.burst = 0;
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 10, 0, 0, t, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 0);
	/* A plan made smaller: the bucket is at most empty, never owed for longer. */
	who = fresh_who();
	free.burst = 3;
	free.rps = 1000;
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 3000, 0, 0, t, &st), BP_LIMIT_OK);
	free.rps = 1;
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 1, 0, 0, t, &st), BP_LIMIT_RPS);
	CU_ASSERT_EQUAL(st.retry_after, 1);
	CU_ASSERT_EQUAL(bp_limits_take_ns(lim, who, &free, 1, 0, 0, t + 1000 * ms, &st),
	    BP_LIMIT_OK);
}

static void
test_open(void)
{
	char other[sizeof(path) + 16];
	struct bp_limits *l;
	int fd;

	/* A file that is something else is refused, and left as it was in its first bytes. */
	snprintf(other, sizeof(other), "%s/not-limits", dir);
	fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd != -1);
	CU_ASSERT(write(fd, "not a counters file", 19) == 19);
	close(fd);
	bp_unit_log_begin();
	CU_ASSERT_PTR_NULL(bp_limits_open(other));
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "is not a Blockport limits file"));
	unlink(other);
	/* A directory that is not there. */
	snprintf(other, sizeof(other), "%s/missing/counters", dir);
	bp_unit_log_begin();
	CU_ASSERT_PTR_NULL(bp_limits_open(other));
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "No such file or directory"));
	/* An empty file is a new counters file. */
	snprintf(other, sizeof(other), "%s/empty", dir);
	fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd != -1);
	close(fd);
	l = bp_limits_open(other);
	CU_ASSERT(l != NULL);
	bp_limits_close(l);
	/* Reopened, it is recognised. */
	l = bp_limits_open(other);
	CU_ASSERT(l != NULL);
	bp_limits_close(l);
	unlink(other);
}

/* The request threads of one process share one mapping (lib/core/fcgi.h). */
#define NTHREADS	8
#define THREAD_ROUNDS	200

static uint64_t thread_who;	/* written before the threads start */

static void *
count_day(void *arg)
{
	struct bp_limits *l = bp_limits_thread(lim);	/* in Redis, its own connection */
	/* A day limit just above the threads' total: an unlimited plan counts in the file only. */
	struct bp_limit_plan p = { 0, NTHREADS * THREAD_ROUNDS + 1, 0, 0 };
	struct bp_limit_state st;
	void *rv = NULL;
	int i;

	(void)arg;
	if (l == NULL)
		return (void *)1;
	for (i = 0; i < THREAD_ROUNDS; i++)
		if (bp_limits_take(l, thread_who, &p, 1, 1, 1, &st) != BP_LIMIT_OK)
			rv = (void *)1;
	bp_limits_thread_close(lim, l);
	return rv;
}

static void
test_threads(void)
{
	struct bp_limit_plan p = { 0, NTHREADS * THREAD_ROUNDS + 1, 0, 0 };
	struct bp_limit_state st;

	thread_who = fresh_who();
	CU_ASSERT_EQUAL(bp_unit_threads(NTHREADS, count_day), 0);
	/* One more request for the day fits; the next does not: every increment was kept. */
	CU_ASSERT_EQUAL(bp_limits_take(lim, thread_who, &p, 1, 1, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(bp_limits_take(lim, thread_who, &p, 1, 1, 0, &st), BP_LIMIT_RPD);
}

/*
 * Redis down (limits = redis:// and nothing answers there): a key is still counted, in this
 * head's file, to its exact count; a client address is refused (fail closed). A Redis that
 * accepts and never answers costs one request the command timeout, then nothing for a second.
 */
static void
test_redis_down(void)
{
	struct bp_limit_plan gold = { 3, 0, 0, 0 }, anon = { 20, 0, 0, 0 };
	struct bp_limit_state st;
	struct bp_limits *l;
	uint64_t key = fresh_who(), addr = bp_limits_addr_id("198.51.100.99");
	const char *log;
	char url[64];
	int64_t t0;
	int fd, port, i;

	/* Bound, not listening: every connection is refused. */
	CU_ASSERT_FATAL((fd = bp_unit_bind_loopback(&port)) >= 0);
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d/0", port);
	CU_ASSERT_FATAL((l = open_url(url)) != NULL);
	bp_unit_fresh_second();
	bp_unit_log_begin();
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(bp_limits_take(l, key, &gold, 1, 1, 0, &st), BP_LIMIT_OK);
		CU_ASSERT_EQUAL(st.remaining, 2 - i);
	}
	CU_ASSERT_EQUAL(bp_limits_take(l, key, &gold, 1, 1, 0, &st), BP_LIMIT_RPS);
	CU_ASSERT_EQUAL(bp_limits_take(l, addr, &anon, 1, 0, 0, &st), BP_LIMIT_DOWN);
	CU_ASSERT_EQUAL(st.limit, 20);
	CU_ASSERT_EQUAL(st.remaining, 0);
	CU_ASSERT_EQUAL(st.retry_after, 1);
	CU_ASSERT_STRING_EQUAL(bp_limit_what(BP_LIMIT_DOWN),
	    "requests without a valid key while the shared counters are unavailable");
	log = bp_unit_log_end();
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "keys are counted on this head only"));
	CU_ASSERT_PTR_NULL(strstr(strstr(log, "keys are counted") + 1, "keys are counted"));
	bp_limits_close(l);
	close(fd);

	/* Listening, never answering: the script's round trip times out (250 ms). */
	CU_ASSERT_FATAL((fd = bp_unit_bind_loopback(&port)) >= 0);
	CU_ASSERT_FATAL(listen(fd, 8) == 0);
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d/0", port);
	CU_ASSERT_FATAL((l = open_url(url)) != NULL);
	key = fresh_who();
	bp_unit_log_begin();
	t0 = bp_mono_us();
	CU_ASSERT_EQUAL(bp_limits_take(l, key, &gold, 1, 1, 0, &st), BP_LIMIT_OK);
	CU_ASSERT(bp_mono_us() - t0 < 600000);
	/* For the next second nothing is tried: no request waits. */
	t0 = bp_mono_us();
	for (i = 0; i < 100; i++)
		CU_ASSERT_EQUAL(bp_limits_take(l, addr, &anon, 1, 0, 0, &st), BP_LIMIT_DOWN);
	(void)bp_limits_generation(l);
	CU_ASSERT(bp_mono_us() - t0 < 50000);
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "Resource temporarily unavailable"));
	bp_limits_close(l);
	close(fd);
}

/* A connection of our own to the test's Redis, to look at what the counters left there. */
static redisContext *
redis_peek(void)
{
	int port = 0;

	if (redis_url == NULL || sscanf(redis_url, "redis://127.0.0.1:%d", &port) != 1)
		return NULL;
	return redisConnect("127.0.0.1", port);
}

/* Every owner's hash expires: after a second's window, after a bucket's span, at midnight. */
static void
test_redis_expiry(void)
{
	struct bp_limit_plan p = { 5, 0, 0, 0 }, day = { 5, 100, 0, 3 };
	struct bp_limit_state st;
	uint64_t key = fresh_who(), daily = fresh_who();
	redisContext *c = redis_peek();
	redisReply *r;
	int64_t midnight = 86400 - (int64_t)time(NULL) % 86400;

	CU_ASSERT_FATAL(c != NULL && c->err == 0);
	CU_ASSERT_EQUAL(bp_limits_take(lim, key, &p, 1, 0, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(bp_limits_take(lim, daily, &day, 1, 1, 0, &st), BP_LIMIT_OK);
	r = redisCommand(c, "PTTL bp:l:k:%llu", (unsigned long long)key);
	CU_ASSERT(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer > 0 &&
	    r->integer <= 2000);
	freeReplyObject(r);
	r = redisCommand(c, "TTL bp:l:k:%llu", (unsigned long long)daily);
	CU_ASSERT(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= midnight &&
	    r->integer <= midnight + 301);
	freeReplyObject(r);
	/* An address: its own name, never a key's. */
	CU_ASSERT_EQUAL(bp_limits_take(lim, bp_limits_addr_id("198.51.100.1"), &p, 1, 0, 0, &st),
	    BP_LIMIT_OK);
	r = redisCommand(c, "EXISTS bp:l:a:%016llx",
	    (unsigned long long)bp_limits_addr_id("198.51.100.1"));
	CU_ASSERT(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1);
	freeReplyObject(r);
	redisFree(c);
}

/* A Redis that forgot the script (restarted, SCRIPT FLUSH): loaded again, nothing refused. */
static void
test_redis_noscript(void)
{
	struct bp_limit_plan p = { 2, 0, 0, 0 };
	struct bp_limit_state st;
	uint64_t key = fresh_who();
	redisContext *c = redis_peek();
	redisReply *r;

	CU_ASSERT_FATAL(c != NULL && c->err == 0);
	bp_unit_fresh_second();
	CU_ASSERT_EQUAL(bp_limits_take(lim, key, &p, 1, 0, 0, &st), BP_LIMIT_OK);
	r = redisCommand(c, "SCRIPT FLUSH");
	CU_ASSERT(r != NULL && r->type == REDIS_REPLY_STATUS);
	freeReplyObject(r);
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_limits_take(lim, key, &p, 1, 0, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 0);
	CU_ASSERT_EQUAL(bp_limits_take(lim, key, &p, 1, 0, 0, &st), BP_LIMIT_RPS);
	CU_ASSERT_STRING_EQUAL(bp_unit_log_end(), "");
	redisFree(c);
}

/* The calls of a command so far, as INFO commandstats names it ("evalsha", "get"); -1. */
static long long
redis_calls(redisContext *c, const char *name)
{
	redisReply *r = redisCommand(c, "INFO commandstats");
	char want[64];
	const char *p;
	long long n = -1;

	snprintf(want, sizeof(want), "cmdstat_%s:calls=", name);
	/* A command not called since the server started has no line: 0. */
	if (r != NULL && r->type == REDIS_REPLY_STRING)
		n = (p = strstr(r->str, want)) != NULL ? strtoll(p + strlen(want), NULL, 10) : 0;
	freeReplyObject(r);
	return n;
}

/* A plan that limits nothing shares nothing: no script, the figures from the head's file. */
static void
test_redis_unlimited(void)
{
	struct bp_limit_plan none = { 0, 0, 0, 3 }, day = { 0, 1000000, 0, 3 };
	struct bp_limit_state st;
	redisContext *c = redis_peek();
	uint64_t who = fresh_who();
	long long before;
	redisReply *r;
	int i, ok = 0;

	CU_ASSERT_FATAL(c != NULL && c->err == 0 && (before = redis_calls(c, "evalsha")) >= 0);
	bp_unit_fresh_second();
	for (i = 0; i < 50; i++)
		ok += bp_limits_take(lim, who, &none, 1, 1, 100, &st) == BP_LIMIT_OK;
	CU_ASSERT_EQUAL(ok, 50);
	CU_ASSERT_EQUAL(redis_calls(c, "evalsha"), before);
	CU_ASSERT_EQUAL(st.limit, BP_LIMIT_UNLIMITED);
	CU_ASSERT_EQUAL(st.remaining, BP_LIMIT_UNLIMITED - 50);
	r = redisCommand(c, "EXISTS bp:l:k:%llu", (unsigned long long)who);
	CU_ASSERT(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 0);
	freeReplyObject(r);
	/* One finite limit (a day's) is shared: the script runs; an address always is. */
	CU_ASSERT_EQUAL(bp_limits_take(lim, fresh_who(), &day, 1, 1, 0, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(bp_limits_take(lim, bp_limits_addr_id("203.0.113.77"), &none, 1, 0, 0,
	    &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(redis_calls(c, "evalsha"), before + 2);
	redisFree(c);
}

/* The key generation: read by one thread of the head every 100 ms, seen by all of them. */
static void
test_redis_generation(void)
{
	struct bp_limits *t[8];
	redisContext *c = redis_peek();
	long long before;
	int64_t t0;
	uint64_t g;
	int i, k, seen = 0;

	CU_ASSERT_FATAL(c != NULL && c->err == 0);
	for (i = 0; i < 8; i++)
		CU_ASSERT_PTR_NOT_NULL_FATAL(t[i] = bp_limits_thread(lim));
	g = bp_limits_generation(lim);
	before = redis_calls(c, "get");
	t0 = bp_mono_us();
	for (k = 0; k < 20; k++)
		for (i = 0; i < 8; i++)
			CU_ASSERT_EQUAL(bp_limits_generation(t[i]), g);
	CU_ASSERT(redis_calls(c, "get") - before <=
	    1 + (bp_mono_us() - t0) / 1000 / BP_LIMITS_REDIS_GEN_MS);
	freeReplyObject(redisCommand(c, "INCR bp:gen"));	/* another head's change */
	t0 = bp_mono_us();
	while (seen < 8 && bp_mono_us() - t0 < 1000000)
		for (usleep(5000), seen = 0, i = 0; i < 8; i++)
			seen += bp_limits_generation(t[i]) > g;
	CU_ASSERT_EQUAL(seen, 8);
	CU_ASSERT((bp_mono_us() - t0) / 1000 <= BP_LIMITS_REDIS_GEN_MS + 50);
	for (i = 0; i < 8; i++)
		bp_limits_thread_close(lim, t[i]);
	redisFree(c);
}

/* The cases both backends must pass alike. */
#define BOTH_CASES \
	{ "8 threads on one key: no increment lost", test_threads }, \
	{ "requests per second, exact count", test_rps }, \
	{ "compute units per second", test_cups }, \
	{ "a plan with a burst: buckets", test_bucket }, \
	{ "requests per day and Retry-After to midnight", test_day }, \
	{ "unlimited plans and saturation", test_unlimited }

BP_UNIT_SUITE(limits, setup, teardown,
	BOTH_CASES,
	{ "two handles on one file", test_two_handles },
	{ "two processes, 20000 each: no lost increments", test_fork_no_lost_increments },
	{ "client addresses: IPv4, IPv6 per /64, mapped", test_addresses },
	{ "a full table refuses addresses and spares keys", test_full },
	{ "a key's slot and day", test_key_slots },
	{ "opening odd files", test_open },
	{ "Redis down: keys counted here, addresses refused, no wait", test_redis_down })

/*
 * The same cases against Redis (limits = redis://), when BLOCKPORT_TEST_REDIS names a server
 * (scripts/test.sh starts one with scripts/redis.sh): the verdicts and figures must be the
 * file's. Not registered without it, and the run says so.
 */
static const struct bp_unit_case limits_redis_cases[] = {
	BOTH_CASES,
	{ "two handles (two heads) on one key", test_two_handles },
	{ "two processes, 2000 each: no lost increments", test_fork_no_lost_increments },
	{ "every hash expires", test_redis_expiry },
	{ "a forgotten script is loaded again", test_redis_noscript },
	{ "an unlimited key runs no script", test_redis_unlimited },
	{ "the key generation: one read a head every 100 ms", test_redis_generation },
};
static const struct bp_unit_suite limits_redis_suite = { "limits_redis", setup_redis,
    teardown_redis, limits_redis_cases,
    sizeof(limits_redis_cases) / sizeof(limits_redis_cases[0]) };

__attribute__((constructor)) static void
limits_redis_register(void)
{
	const char *url = getenv("BLOCKPORT_TEST_REDIS");

	if (url == NULL || *url == '\0') {
		fprintf(stderr, "limits_redis: skipped, BLOCKPORT_TEST_REDIS is not set "
		    "(scripts/test.sh sets it)\n");
		return;
	}
	bp_unit_register(&limits_redis_suite);
}
