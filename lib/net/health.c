#include <sys/mman.h>

#include <stddef.h>
#include <stdlib.h>

#include <stdio.h>

#include "core/limits_redis.h"
#include "core/util.h"
#include "health.h"

#define NSLOTS		256	/* upstream URLs of the whole config, with room to spare */
#define PROBES		16	/* slots probed from a URL's home slot */

/* One URL; every word is read and written atomically (the file is shared, lock-free). */
struct slot {
	uint64_t	key;		/* a hash of the URL, never 0; 0 = free */
	int64_t		down_until;	/* 0 = up */
	int64_t		probe_until;	/* the lease of the request probing an expired mark */
	int64_t		shared_at;	/* when Redis may be asked again (bp_health_share) */
};
_Static_assert(offsetof(struct slot, key) == 0, "bp_slot_claim needs the key first");

struct bp_health {
	struct slot	*slots;
	size_t		 maplen;
	struct bp_limits_redis *redis;	/* NULL: this host's marks only */
};

/*
 * With bp_health_share, a mark is also the key bp:up:HASH in Redis, expiring with the mark
 * (PX), so Redis needs no clock of ours. A head reads it at most every SHARED_US per URL (one
 * thread of all the host's, the one that moves the slot's shared_at) and copies a mark it finds
 * into its own file; a found-up URL deletes the key. Redis down: each head keeps its own marks.
 */
#define SHARED_US	INT64_C(100000)

static const char fail_script[] =
"redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])\n"
"return { 1 }\n";
static const char ok_script[] =
"redis.call('DEL', KEYS[1])\n"
"return { 1 }\n";
static const char ttl_script[] =
"return { redis.call('PTTL', KEYS[1]) }\n";

struct bp_health *
bp_health_open(const char *path)
{
	size_t len = NSLOTS * sizeof(struct slot);
	struct bp_health *h;
	void *p;

	if ((p = bp_map_file(path, len)) == NULL)
		return NULL;
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		munmap(p, len);
		return NULL;
	}
	h->slots = p;
	h->maplen = len;
	return h;
}

void
bp_health_close(struct bp_health *h)
{
	if (h == NULL)
		return;
	munmap(h->slots, h->maplen);
	bp_limits_redis_free(h->redis);
	free(h);
}

int
bp_health_share(struct bp_health *h, const char *url)
{
	if ((h->redis = bp_limits_redis_new(url)) == NULL)
		return -1;
	bp_limits_redis_fallback(h->redis, "upstream health stays this head's own");
	return 0;
}

static void
shared_key(const char *url, char *buf, size_t len)
{
	snprintf(buf, len, "bp:up:%016llx", (unsigned long long)bp_fnv1a_str(BP_FNV1A_BASIS, url));
}

/* Runs one of the scripts on url's key with at most one argument; its first integer, or -1. */
static int64_t
shared(struct bp_health *h, const char *script, const char *url, const char *arg)
{
	char key[32];
	const char *argv[2] = { key, arg };
	int64_t out = -1;

	shared_key(url, key, sizeof(key));
	if (bp_limits_redis_eval(h->redis, script, 1, arg != NULL ? 2 : 1, argv, &out, 1) < 1)
		return -1;
	return out;
}

/*
 * Another head's mark of url into this host's slot: asked of Redis by one thread at most every
 * SHARED_US (the one that moves shared_at), the others keep to the file meanwhile.
 */
static void
sync_shared(struct bp_health *h, struct slot *s, const char *url, int64_t now)
{
	int64_t at = __atomic_load_n(&s->shared_at, __ATOMIC_ACQUIRE), ttl, down;

	if (h->redis == NULL || at > now || !__atomic_compare_exchange_n(&s->shared_at, &at,
	    now + SHARED_US, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if ((ttl = shared(h, ttl_script, url, NULL)) <= 0)
		return;
	down = __atomic_load_n(&s->down_until, __ATOMIC_ACQUIRE);
	if (down < now + ttl * 1000 && __atomic_compare_exchange_n(&s->down_until, &down,
	    now + ttl * 1000, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		__atomic_store_n(&s->probe_until, 0, __ATOMIC_RELEASE);
}

/*
 * url's slot (keyed by FNV-1a of url, never 0), claimed when it has none; NULL when its probes
 * are all taken by other URLs.
 */
static struct slot *
slot_for(struct bp_health *h, const char *url)
{
	uint64_t k = bp_fnv1a_str(BP_FNV1A_BASIS, url);

	return bp_slot_claim(h->slots, sizeof(struct slot), NSLOTS, PROBES, k != 0 ? k : 1);
}

enum bp_health_state
bp_health_check(struct bp_health *h, const char *url, int64_t now, int64_t lease_us)
{
	struct slot *s = slot_for(h, url);
	int64_t down, lease;

	if (s != NULL)
		sync_shared(h, s, url, now);
	if (s == NULL || (down = __atomic_load_n(&s->down_until, __ATOMIC_ACQUIRE)) == 0)
		return BP_HEALTH_UP;
	if (down > now)
		return BP_HEALTH_DOWN;
	/* The mark expired: one request probes, the others keep to the fallback meanwhile. */
	lease = __atomic_load_n(&s->probe_until, __ATOMIC_ACQUIRE);
	if (lease > now || !__atomic_compare_exchange_n(&s->probe_until, &lease, now + lease_us, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return BP_HEALTH_DOWN;
	return BP_HEALTH_PROBE;
}

int
bp_health_down(struct bp_health *h, const char *url, int64_t now)
{
	struct slot *s = slot_for(h, url);

	if (s != NULL)
		sync_shared(h, s, url, now);
	return s != NULL && __atomic_load_n(&s->down_until, __ATOMIC_ACQUIRE) > now;
}

void
bp_health_ok(struct bp_health *h, const char *url)
{
	struct slot *s = slot_for(h, url);

	if (s != NULL && __atomic_exchange_n(&s->down_until, 0, __ATOMIC_ACQ_REL) != 0) {
		__atomic_store_n(&s->probe_until, 0, __ATOMIC_RELEASE);
		/* Found up: the other heads' next read finds no mark (theirs run out meanwhile). */
		if (h->redis != NULL)
			shared(h, ok_script, url, NULL);
	}
}

void
bp_health_fail(struct bp_health *h, const char *url, int64_t until)
{
	struct slot *s = slot_for(h, url);
	char ms[24];
	int64_t left;

	if (s == NULL)
		return;
	__atomic_store_n(&s->down_until, until, __ATOMIC_RELEASE);
	__atomic_store_n(&s->probe_until, 0, __ATOMIC_RELEASE);
	if (h->redis != NULL && (left = (until - bp_mono_us()) / 1000) > 0) {
		snprintf(ms, sizeof(ms), "%lld", (long long)left);
		shared(h, fail_script, url, ms);
	}
}
