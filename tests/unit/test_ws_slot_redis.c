/*
 * lib/ws/ws_slot.c with limits = redis:// (BLOCKPORT_TEST_REDIS, scripts/test.sh's "limits on
 * Redis" step): a key's ws_connections cap holds across heads (each connection a handle, as each
 * is a process); a slot comes free when its connection ends; a lowered cap moves a connection
 * below it or refuses it; with Redis gone the caller is told at once (it takes a file slot).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/auth.h"
#include "core/config.h"
#include "core/util.h"
#include "unit.h"
#include "ws/ws_slot.h"

static struct bp_config cfg;

static struct bp_key
key_capped(int64_t id, int64_t cap)
{
	struct bp_key k;

	memset(&k, 0, sizeof(k));
	k.id = id;
	k.plan.ws_connections = cap;
	return k;
}

/* A key id no other run used: the clock. */
static int64_t
fresh_id(void)
{
	return 1000000000 + bp_now_us() % 1000000000;
}

static void
test_cap_across_heads(void)
{
	struct bp_key k = key_capped(fresh_id(), 2);
	struct bp_ws_slots *a, *b, *c;
	int fa = -1, fb = -1, fc = -1;
	int64_t na = 0, nb = 0, nc = 0;

	bp_strlcpy(cfg.limits_url, getenv("BLOCKPORT_TEST_REDIS"), sizeof(cfg.limits_url));
	CU_ASSERT_FATAL((a = bp_ws_slots_redis(&cfg)) != NULL);
	CU_ASSERT_FATAL((b = bp_ws_slots_redis(&cfg)) != NULL);
	CU_ASSERT_FATAL((c = bp_ws_slots_redis(&cfg)) != NULL);
	CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(a, &k, &fa, &na), 0);
	CU_ASSERT_EQUAL(fa, BP_WS_SLOT_REDIS);
	CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(b, &k, &fb, &nb), 0);
	CU_ASSERT_NOT_EQUAL(na, nb);
	/* The third, on whichever head: refused. Kept ones stay kept, and renew. */
	CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(c, &k, &fc, &nc), -2);
	CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(a, &k, &fa, &na), 0);
	CU_ASSERT_EQUAL(bp_ws_slot_renew(a), 0);
	CU_ASSERT_EQUAL(bp_ws_slot_renew(c), 0);	/* holds none: nothing to do */
	/* One ends: its slot is free for the next. */
	bp_ws_slots_free(a);
	CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(c, &k, &fc, &nc), 0);
	CU_ASSERT_EQUAL(nc, na);
	/* The plan now allows one: the connection past it moves below it, or is refused. */
	k.plan.ws_connections = 1;
	if (nb == 0) {
		CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(b, &k, &fb, &nb), 0);
		CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(c, &k, &fc, &nc), -2);
	} else {
		CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(c, &k, &fc, &nc), 0);
		CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(b, &k, &fb, &nb), -2);
	}
	/* No cap: the slot goes. */
	k.plan.ws_connections = 0;
	CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(b, &k, &fb, &nb), 0);
	CU_ASSERT_EQUAL(fb, -3);
	bp_ws_slots_free(b);
	bp_ws_slots_free(c);
	/* Every slot of the key was deleted with its connection. */
	k.plan.ws_connections = 2;
	CU_ASSERT_FATAL((a = bp_ws_slots_redis(&cfg)) != NULL);
	CU_ASSERT_FATAL((b = bp_ws_slots_redis(&cfg)) != NULL);
	fa = fb = -1;
	CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(a, &k, &fa, &na), 0);
	CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(b, &k, &fb, &nb), 0);
	bp_ws_slots_free(a);
	bp_ws_slots_free(b);
}

static void
test_redis_down(void)
{
	struct bp_key k = key_capped(fresh_id(), 2);
	struct bp_config down;
	struct bp_ws_slots *a;
	int fd = -1;
	int64_t n = 0, t0;

	memset(&down, 0, sizeof(down));
	CU_ASSERT_PTR_NULL(bp_ws_slots_redis(&down));	/* no redis://: files */
	bp_strlcpy(down.limits_url, "redis://127.0.0.1:1", sizeof(down.limits_url));
	CU_ASSERT_FATAL((a = bp_ws_slots_redis(&down)) != NULL);
	t0 = bp_mono_us();
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_ws_slot_keep_redis(a, &k, &fd, &n), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "capped per head"));
	CU_ASSERT(bp_mono_us() - t0 < 500000);
	CU_ASSERT_EQUAL(fd, -1);
	bp_ws_slots_free(a);
}

static const struct bp_unit_case cases[] = {
	{ "a key's cap holds across heads; slots come free", test_cap_across_heads },
	{ "Redis down: told at once", test_redis_down },
};
static const struct bp_unit_suite suite = { "ws_slot_redis", NULL, NULL, cases,
    BP_NITEMS(cases) };

__attribute__((constructor)) static void
ws_slot_redis_register(void)
{
	const char *url = getenv("BLOCKPORT_TEST_REDIS");

	if (url == NULL || *url == '\0')
		return;		/* limits_redis says why */
	bp_unit_register(&suite);
}
