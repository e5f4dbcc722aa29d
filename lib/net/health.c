#include <sys/mman.h>

#include <stddef.h>
#include <stdlib.h>

#include "core/util.h"
#include "health.h"

#define NSLOTS		256	/* upstream URLs of the whole config, with room to spare */
#define PROBES		16	/* slots probed from a URL's home slot */

/* One URL; every word is read and written atomically (the file is shared, lock-free). */
struct slot {
	uint64_t	key;		/* a hash of the URL, never 0; 0 = free */
	int64_t		down_until;	/* 0 = up */
	int64_t		probe_until;	/* the lease of the request probing an expired mark */
	int64_t		spare;
};
_Static_assert(offsetof(struct slot, key) == 0, "bp_slot_claim needs the key first");

struct bp_health {
	struct slot	*slots;
	size_t		 maplen;
};

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
	free(h);
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

	return s != NULL && __atomic_load_n(&s->down_until, __ATOMIC_ACQUIRE) > now;
}

void
bp_health_ok(struct bp_health *h, const char *url)
{
	struct slot *s = slot_for(h, url);

	if (s != NULL && __atomic_load_n(&s->down_until, __ATOMIC_RELAXED) != 0) {
		__atomic_store_n(&s->down_until, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&s->probe_until, 0, __ATOMIC_RELEASE);
	}
}

void
bp_health_fail(struct bp_health *h, const char *url, int64_t until)
{
	struct slot *s = slot_for(h, url);

	if (s == NULL)
		return;
	__atomic_store_n(&s->down_until, until, __ATOMIC_RELEASE);
	__atomic_store_n(&s->probe_until, 0, __ATOMIC_RELEASE);
}
