#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>

#include "config.h"
#include "limits.h"
#include "limits_redis.h"
#include "log.h"
#include "util.h"

#define LIMITS_MAGIC	UINT64_C(0x42504c494d495431)	/* "BPLIMIT1" */
#define NSLOTS		65536u				/* power of two */
#define KEY_SLOTS	(NSLOTS / 2)	/* [0, KEY_SLOTS): keys, by id */
#define ADDR_SLOTS	(NSLOTS / 2)	/* [KEY_SLOTS, NSLOTS): client addresses, by hash */
#define PROBES		64
#define ADDR_IDLE	60		/* seconds before an address's slot may be reused */
#define KEY_IDLE	300		/* ... a key's, when it has not counted today either */
#define ADDR_BIT	(UINT64_C(1) << 63)
#define NS		INT64_C(1000000000)
#define WINDOW_MIN	(UINT64_C(1) << 62)	/* a calendar second's word is at least this */

/*
 * One slot: the owner and three packed counters. sec_req and sec_cu hold either a bucket (the
 * plan has a burst: the bucket's theoretical arrival time, nanoseconds since the epoch, below
 * 2^62 until the year 2116) or a calendar second's count (second << 32 | count, at or above 2^62
 * since 2004); day_req holds (day << 40 | count). A counter whose second or day is not the
 * current one reads as zero, a bucket in the past as full, so nothing ever has to be reset.
 */
struct slot {
	uint64_t	who;
	uint64_t	sec_req;
	uint64_t	sec_cu;
	uint64_t	day_req;
};

struct header {
	uint64_t	magic;
	uint64_t	nslots;
	uint64_t	generation;
	uint64_t	redis_gen;	/* Redis's generation as this head last read it */
	int64_t		redis_next;	/* bp_mono_us() before which no process reads it again */
	uint64_t	pad[3];
};

/*
 * A head's lease on a key's counts in Redis (with [server] limits = redis://): tokens a script
 * counted there for several requests at once, spent here with a compare-and-swap (see
 * lease_take). One slot a key, in the file limits_file-leases.
 */
#define LEASE_SLOTS	4096
#define LEASE_PROBES	16
#define LEASE_US	INT64_C(62500)	/* a grant is spent within 1/16 s of its count */
#define LEASE_PARTS	16		/* a grant is at most 1/16 of a second's budget */
#define T_REQ(t)	((t) >> 44)
#define T_DAY(t)	(((t) >> 24) & 0xfffff)
#define T_CU(t)		((t) & 0xffffff)
#define T_PACK(r, d, c)	((uint64_t)(r) << 44 | (uint64_t)(d) << 24 | (uint64_t)(c))

struct lease {
	uint64_t	who;		/* the key id; 0: free */
	uint64_t	tokens;		/* T_PACK(requests, day's requests, compute units) left */
	int64_t		until;		/* bp_mono_us() before which they may be spent */
	int64_t		last;		/* bp_mono_us() of the last grant (or exact count) */
	uint64_t	grant;		/* the next grant, in requests */
	int64_t		limit;		/* the X-RateLimit figures the last grant answered */
	int64_t		remaining;
	int64_t		reset;
};

struct bp_limits {
	struct header	*hdr;
	struct lease	*leases;	/* NULL: none (no Redis, or the file failed) */
	struct slot	*slots;
	size_t		 maplen;
	uint64_t	 warned;	/* the last second a full table was logged (once a second) */
	struct bp_limits_redis *redis;	/* NULL: the file only */
	char		*url;		/* the redis:// URL, for the threads' handles */
	int		 borrowed;	/* a thread's handle: the mapping is its parent's */
};

const char *
bp_limit_what(enum bp_limit_verdict v)
{
	static const char *const what[BP_LIMIT__MAX] = {
		"",					/* BP_LIMIT_OK */
		"requests per second",			/* BP_LIMIT_RPS */
		"requests per day",			/* BP_LIMIT_RPD */
		"compute units per second",		/* BP_LIMIT_CUPS */
		"clients at once (the counters are full)",	/* BP_LIMIT_FULL */
		"requests without a valid key while the shared counters are unavailable",
							/* BP_LIMIT_DOWN */
	};

	return (unsigned)v < BP_LIMIT__MAX ? what[v] : "a limit";
}

const char *
bp_limit_name(enum bp_limit_verdict v)
{
	static const char *const name[BP_LIMIT__MAX] = {
		"", "rps", "rpd", "cups", "full", "down"
	};

	return (unsigned)v < BP_LIMIT__MAX ? name[v] : "other";
}

struct bp_limits *
bp_limits_open(const char *path)
{
	size_t len = sizeof(struct header) + NSLOTS * sizeof(struct slot);
	struct bp_limits *l = NULL;
	void *p;

	if ((p = bp_map_file(path, len)) == NULL)
		return NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		munmap(p, len);
		return NULL;
	}
	l->hdr = p;
	l->slots = (struct slot *)((char *)p + sizeof(struct header));
	l->maplen = len;
	{
		uint64_t zero = 0;

		/* The first process to map a new file stamps it; a zero-filled file is valid. */
		__atomic_compare_exchange_n(&l->hdr->magic, &zero, LIMITS_MAGIC, 0,
		    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		__atomic_store_n(&l->hdr->nslots, NSLOTS, __ATOMIC_RELAXED);
	}
	if (__atomic_load_n(&l->hdr->magic, __ATOMIC_SEQ_CST) != LIMITS_MAGIC) {
		bp_err("%s: %s is not a Blockport limits file", __func__, path);
		bp_limits_close(l);
		return NULL;
	}
	return l;
}

void
bp_limits_close(struct bp_limits *l)
{
	if (l == NULL)
		return;
	bp_limits_redis_free(l->redis);
	if (!l->borrowed) {
		munmap(l->hdr, l->maplen);
		if (l->leases != NULL)
			munmap(l->leases, LEASE_SLOTS * sizeof(struct lease));
	}
	free(l->url);
	free(l);
}

struct bp_limits *
bp_limits_open_config(const struct bp_config *cfg)
{
	struct bp_limits *l;

	if ((l = bp_limits_open(cfg->limits_file)) == NULL || cfg->limits_url[0] == '\0')
		return l;
	/* Not connected yet: a Redis down at start is an outage like any other. */
	if ((l->url = strdup(cfg->limits_url)) == NULL ||
	    (l->redis = bp_limits_redis_new(l->url)) == NULL) {
		bp_limits_close(l);
		return NULL;
	}
	{
		char path[sizeof(cfg->limits_file) + 8];

		/* Without it every request is counted in Redis, as before: slower, as exact. */
		snprintf(path, sizeof(path), "%s-leases", cfg->limits_file);
		l->leases = bp_map_file(path, LEASE_SLOTS * sizeof(struct lease));
	}
	return l;
}

struct bp_limits *
bp_limits_thread(struct bp_limits *l)
{
	struct bp_limits *t;

	if (l->redis == NULL)
		return l;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->hdr = l->hdr;
	t->leases = l->leases;
	t->slots = l->slots;
	t->maplen = l->maplen;
	t->borrowed = 1;
	if ((t->redis = bp_limits_redis_new(l->url)) == NULL) {
		free(t);
		return NULL;
	}
	return t;
}

void
bp_limits_thread_close(struct bp_limits *l, struct bp_limits *t)
{
	if (t != l)
		bp_limits_close(t);
}

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/* FNV-1a over n bytes, continuing from h. */
static uint64_t
fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n-- > 0)
		h = (h ^ *b++) * UINT64_C(1099511628211);
	return h;
}

uint64_t
bp_limits_addr_id(const char *addr)
{
	uint64_t h = UINT64_C(1469598103934665603);
	unsigned char a[16];

	/*
	 * An IPv6 client usually holds a whole /64 and picks addresses in it at will, so it is one
	 * client: only the first 8 bytes count. An IPv4-mapped address is its IPv4 address.
	 */
	if (inet_pton(AF_INET6, addr, a) == 1) {
		if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)a))
			h = fnv1a(fnv1a(h, "4", 1), a + 12, 4);
		else
			h = fnv1a(fnv1a(h, "6", 1), a, 8);
	} else if (inet_pton(AF_INET, addr, a) == 1)
		h = fnv1a(fnv1a(h, "4", 1), a, 4);
	else
		h = fnv1a(fnv1a(h, "?", 1), addr, strlen(addr));
	return h | ADDR_BIT;	/* key ids never have the top bit */
}

/*
 * Whether the slot s may be handed to another owner at now. An address counts requests per
 * second only, so its slot is idle ADDR_IDLE seconds after its last request. A key's slot also
 * holds the day's count, which must last the day: it is idle once nothing counted in it today
 * and nothing in the last KEY_IDLE seconds (a request just before midnight keeps it).
 */
/* The last second a per-second word (a bucket or a calendar second) counted in. */
static uint64_t
word_second(uint64_t w)
{
	return w >= WINDOW_MIN ? w >> 32 : w / NS;
}

static int
slot_idle(struct slot *s, uint64_t who, uint64_t now)
{
	uint64_t sec = word_second(__atomic_load_n(&s->sec_req, __ATOMIC_RELAXED));
	uint64_t cu = word_second(__atomic_load_n(&s->sec_cu, __ATOMIC_RELAXED));
	uint64_t d = __atomic_load_n(&s->day_req, __ATOMIC_RELAXED) >> 40;

	if (cu > sec)
		sec = cu;
	if (who & ADDR_BIT)
		return sec + ADDR_IDLE < now;
	return d < now / 86400 && sec + KEY_IDLE < now;
}

/*
 * Finds or claims the slot of who: keys and addresses each probe their own half of the file, so
 * no number of client addresses can take a key's slot. A key starts at its id (ids are dense, so
 * keys rarely collide), an address at a hash. An idle slot (slot_idle) may be taken over; if two
 * processes race for it, both count in it for a moment, which only errs on the strict side.
 * NULL when every probed slot is busy: the caller refuses the request.
 */
static struct slot *
find_slot(struct bp_limits *l, uint64_t who, uint64_t now)
{
	size_t base, mask, i, idx;

	if (who & ADDR_BIT) {
		base = KEY_SLOTS;
		mask = ADDR_SLOTS - 1;
		idx = (size_t)(mix64(who) & mask);
	} else {
		base = 0;
		mask = KEY_SLOTS - 1;
		idx = (size_t)(who & mask);
	}
	for (i = 0; i < PROBES; i++) {
		struct slot *s = &l->slots[base + ((idx + i) & mask)];
		uint64_t cur = __atomic_load_n(&s->who, __ATOMIC_ACQUIRE);

		if (cur == who)
			return s;
		if (cur != 0 && !slot_idle(s, cur, now))
			continue;
		if (__atomic_compare_exchange_n(&s->who, &cur, who, 0, __ATOMIC_ACQ_REL,
		    __ATOMIC_ACQUIRE) || cur == who)
			return s;
	}
	return NULL;
}

/* Adds n to a packed (period << shift | count) word if the result stays within max. */
static int
add_packed(uint64_t *w, uint64_t period, unsigned shift, uint64_t n, int64_t max,
    uint64_t *after)
{
	uint64_t mask = (UINT64_C(1) << shift) - 1;
	uint64_t cur = __atomic_load_n(w, __ATOMIC_RELAXED), next, count;

	do {
		count = (cur >> shift) == period ? (cur & mask) : 0;
		if (max > 0 && count + n > (uint64_t)max) {
			*after = count;
			return -1;
		}
		if (count + n > mask)
			count = mask - n;	/* unlimited plans saturate instead of wrapping */
		next = (period << shift) | (count + n);
	} while (!__atomic_compare_exchange_n(w, &cur, next, 1, __ATOMIC_ACQ_REL,
	    __ATOMIC_RELAXED));
	*after = count + n;
	return 0;
}

/*
 * Takes n units from the token bucket in *w, refilled at rate units a second and holding burst
 * seconds' worth (GCRA: the word is the time the bucket would be full again, and a take moves it
 * n / rate seconds later, allowed while it stays within burst seconds of now). A word in the
 * other format (a plan that had no burst) or further ahead than the bucket can be (a plan made
 * smaller) is read as a full or an empty bucket. n 0 only reads. Sets *left to the whole units
 * left, *full to the time (ns) the bucket is full again; when refused, *wait to the ns until n
 * units are there. Returns 0, or -1 when refused.
 */
static int
take_bucket(uint64_t *w, int64_t now, uint64_t n, int64_t rate, int64_t burst, int64_t *left,
    int64_t *full, int64_t *wait)
{
	int64_t t = NS / rate > 0 ? NS / rate : 1, span = burst * NS;
	uint64_t cur = __atomic_load_n(w, __ATOMIC_RELAXED);
	int64_t tat, next;

	do {
		tat = cur >= WINDOW_MIN ? now : (int64_t)cur;
		if (tat < now)
			tat = now;
		if (tat - now > span)
			tat = now + span;
		next = tat + (int64_t)n * t;
		if (next - now > span) {
			*left = (span - (tat - now)) / t;
			*full = tat;
			*wait = next - now - span;
			return -1;
		}
		if (n == 0)
			break;
	} while (!__atomic_compare_exchange_n(w, &cur, (uint64_t)next, 1, __ATOMIC_ACQ_REL,
	    __ATOMIC_RELAXED));
	*left = (span - (next - now)) / t;
	*full = next;
	return 0;
}

/* Whole seconds, at least 1, to wait ns nanoseconds (Retry-After). */
static int64_t
wait_seconds(int64_t ns)
{
	int64_t s = (ns + NS - 1) / NS;

	return s > 0 ? s : 1;
}

/* The X-RateLimit figures of a plan with count requests already in this second. */
static void
fill_state(struct bp_limit_state *st, int64_t rps, uint64_t count)
{
	int64_t limit = rps > 0 ? rps : BP_LIMIT_UNLIMITED;

	st->limit = limit;
	st->remaining = (uint64_t)limit > count ? limit - (int64_t)count : 0;
	if (rps <= 0 && st->remaining == 0)
		st->remaining = 1;	/* never 0 on an unlimited plan: clients would wait */
}

/*
 * Counts n requests (or compute units) per second in *w against max a second: a bucket when the
 * plan has a burst, else the calendar second's count. Fills st when req (the word counts
 * requests, which the X-RateLimit headers describe). Returns 0, or -1 when refused, with
 * st->retry_after set.
 */
static int
take_second(uint64_t *w, const struct bp_limit_plan *plan, int64_t max, unsigned n,
    int64_t now_ns, int req, struct bp_limit_state *st)
{
	int64_t left, full, wait = 0, sec = now_ns / NS;
	uint64_t after = 0;
	int rc;

	if (max > 0 && plan->burst > 0) {
		rc = take_bucket(w, now_ns, n, max, plan->burst, &left, &full, &wait);
		if (req) {
			st->limit = max * plan->burst;
			st->remaining = left;
			st->reset = (full + NS - 1) / NS;
		}
		if (rc == -1)
			st->retry_after = wait_seconds(wait);
		return rc;
	}
	if (add_packed(w, (uint64_t)sec, 32, n, max, &after) == -1) {
		if (req)
			st->remaining = 0;
		st->retry_after = 1;
		return -1;
	}
	if (req)
		fill_state(st, max, after);
	return 0;
}

static void	raise_to(uint64_t *, uint64_t);
static enum bp_limit_verdict take_file(struct bp_limits *, uint64_t,
		    const struct bp_limit_plan *, unsigned, unsigned, unsigned, int64_t,
		    struct bp_limit_state *);
static enum bp_limit_verdict redis_take(struct bp_limits *, uint64_t,
		    const struct bp_limit_plan *, unsigned, unsigned, unsigned, int64_t,
		    struct bp_limit_state *);

enum bp_limit_verdict
bp_limits_take(struct bp_limits *l, uint64_t who, const struct bp_limit_plan *plan,
    unsigned nreq, unsigned nday, unsigned cu, struct bp_limit_state *st)
{
	struct timespec ts;

	/* In Redis, Redis's clock: one clock for every head. */
	if (l->redis != NULL)
		return redis_take(l, who, plan, nreq, nday, cu, -1, st);
	clock_gettime(CLOCK_REALTIME, &ts);
	return bp_limits_take_ns(l, who, plan, nreq, nday, cu,
	    (int64_t)ts.tv_sec * NS + ts.tv_nsec, st);
}

enum bp_limit_verdict
bp_limits_take_at(struct bp_limits *l, uint64_t who, const struct bp_limit_plan *plan,
    unsigned nreq, unsigned nday, unsigned cu, int64_t when, struct bp_limit_state *st)
{
	return bp_limits_take_ns(l, who, plan, nreq, nday, cu, when * NS, st);
}

/* The figures of a plan before anything is counted, at now. */
static void
start_state(struct bp_limit_state *st, const struct bp_limit_plan *plan, int64_t now)
{
	fill_state(st, plan->rps, 0);
	if (plan->rps > 0 && plan->burst > 0)
		st->limit = st->remaining = plan->rps * plan->burst;
	st->reset = now + 1;
	st->retry_after = 0;
}


/*
 * The largest grant, in requests of this shape (nreq, nday, cu), for plan: a 1/16 of a second's
 * requests and compute units (of a day's: 1/16 of its requests), within the token fields; 1 (no
 * lease: each request counted in Redis, exactly) for a plan under 32 requests a second or
 * without a bucket.
 */
static uint64_t
lease_max(const struct bp_limit_plan *p, unsigned nreq, unsigned nday, unsigned cu)
{
	uint64_t g;

	if (p->burst <= 0 || p->rps < 2 * LEASE_PARTS)
		return 1;
	g = (uint64_t)p->rps / LEASE_PARTS;
	if (p->cups > 0 && cu > 0 && g * cu > (uint64_t)p->cups / LEASE_PARTS)
		g = (uint64_t)p->cups / LEASE_PARTS / cu;
	if (p->rpd > 0 && nday > 0 && g * nday > (uint64_t)p->rpd / LEASE_PARTS)
		g = (uint64_t)p->rpd / LEASE_PARTS / nday;
	if (nreq > 0 && g * nreq >= (UINT64_C(1) << 18))
		g = ((UINT64_C(1) << 18) - 1) / nreq;
	if (nday > 0 && g * nday >= (UINT64_C(1) << 18))
		g = ((UINT64_C(1) << 18) - 1) / nday;
	if (cu > 0 && g * cu >= (UINT64_C(1) << 22))
		g = ((UINT64_C(1) << 22) - 1) / cu;
	return g;
}

/* The figures of a request spent from s with left requests still in it. */
static void
lease_state(struct lease *s, uint64_t left, struct bp_limit_state *st)
{
	int64_t limit = __atomic_load_n(&s->limit, __ATOMIC_RELAXED);
	int64_t rem = __atomic_load_n(&s->remaining, __ATOMIC_RELAXED) + (int64_t)left;

	st->limit = limit;
	st->remaining = rem < limit ? rem : limit;
	st->reset = __atomic_load_n(&s->reset, __ATOMIC_RELAXED);
	st->retry_after = 0;
}

/*
 * A key of a plan with a bucket and at least 32 requests a second, while Redis answers: its
 * requests are counted in Redis a grant at a time. The first request of a burst is counted alone,
 * as before; each further one within LEASE_US of the last count doubles the grant (up to
 * lease_max), so a key far under its limit costs one script a grant, and a key that slows down
 * is back to one a request. A grant is a script that counts g requests of this request's shape
 * at once (in Redis, for every head: nothing is ever admitted that Redis did not count); what
 * this request did not use goes into the head's lease, spent by any process of the head with a
 * compare-and-swap until LEASE_US after the grant (a grant while it is valid adds to it without
 * extending it), so a token is spent within LEASE_US of its count. Refused grant: this request
 * is counted alone. Returns the verdict, or -1 to count the request alone.
 */
static int
lease_take(struct bp_limits *l, uint64_t who, const struct bp_limit_plan *plan, unsigned nreq,
    unsigned nday, unsigned cu, struct bp_limit_state *st)
{
	struct lease *s;
	uint64_t gmax, g, cur, add, next;
	int64_t now, last;
	int keep;

	if (l->leases == NULL || (gmax = lease_max(plan, nreq, nday, cu)) < 2 ||
	    (s = bp_slot_claim(l->leases, sizeof(*s), LEASE_SLOTS, LEASE_PROBES, who)) == NULL)
		return -1;
	now = bp_mono_us();
	cur = __atomic_load_n(&s->tokens, __ATOMIC_ACQUIRE);
	while (__atomic_load_n(&s->until, __ATOMIC_ACQUIRE) > now && T_REQ(cur) >= nreq &&
	    T_DAY(cur) >= nday && T_CU(cur) >= cu) {
		next = cur - T_PACK(nreq, nday, cu);
		if (__atomic_compare_exchange_n(&s->tokens, &cur, next, 1, __ATOMIC_ACQ_REL,
		    __ATOMIC_ACQUIRE)) {
			lease_state(s, T_REQ(next), st);
			return BP_LIMIT_OK;
		}
	}
	last = __atomic_exchange_n(&s->last, now, __ATOMIC_ACQ_REL);
	g = __atomic_load_n(&s->grant, __ATOMIC_RELAXED);
	g = now - last < LEASE_US ? (g < 1 ? 2 : g * 2) : 1;
	if (g > gmax)
		g = gmax;
	__atomic_store_n(&s->grant, g, __ATOMIC_RELAXED);
	if (g < 2 || bp_limits_redis_take(l->redis, who, plan, (unsigned)g * nreq,
	    (unsigned)g * nday, (unsigned)g * cu, -1, st) != BP_LIMIT_OK) {
		if (g >= 2)
			__atomic_store_n(&s->grant, 1, __ATOMIC_RELAXED);
		return -1;
	}
	raise_to(&l->hdr->redis_gen, bp_limits_redis_seen(l->redis));
	__atomic_store_n(&s->limit, st->limit, __ATOMIC_RELAXED);
	__atomic_store_n(&s->remaining, st->remaining, __ATOMIC_RELAXED);
	__atomic_store_n(&s->reset, st->reset, __ATOMIC_RELAXED);
	add = T_PACK((g - 1) * nreq, (g - 1) * nday, (g - 1) * cu);
	cur = __atomic_load_n(&s->tokens, __ATOMIC_ACQUIRE);
	do {
		/*
		 * Added to a lease still valid, and expiring with it (never extended: a token is
		 * spent within LEASE_US of its count); an expired lease's rest is dropped. Both
		 * only leave counted what is never spent.
		 */
		keep = __atomic_load_n(&s->until, __ATOMIC_ACQUIRE) > now;
		next = keep ? cur : 0;
		if (T_REQ(next) + T_REQ(add) >= (UINT64_C(1) << 20) ||
		    T_DAY(next) + T_DAY(add) >= (UINT64_C(1) << 20) ||
		    T_CU(next) + T_CU(add) >= (UINT64_C(1) << 24))
			next = 0;
		next += add;
	} while (!__atomic_compare_exchange_n(&s->tokens, &cur, next, 1, __ATOMIC_ACQ_REL,
	    __ATOMIC_ACQUIRE));
	if (!keep)
		__atomic_store_n(&s->until, now + LEASE_US, __ATOMIC_RELEASE);
	lease_state(s, T_REQ(add), st);
	return BP_LIMIT_OK;
}

/*
 * Counts in Redis at now_ns (-1: Redis's clock). When Redis does not answer, a key is counted in
 * the file, so it stays limited (to its plan on each head) and the API stays up; a client
 * address is refused, as by a full table: it only ever gets a 401, and an outage must not open
 * the door to key guessing at N times the rate.
 */
static enum bp_limit_verdict
redis_take(struct bp_limits *l, uint64_t who, const struct bp_limit_plan *plan, unsigned nreq,
    unsigned nday, unsigned cu, int64_t now_ns, struct bp_limit_state *st)
{
	struct timespec ts;
	int v;

	/*
	 * A key whose plan limits nothing has nothing shared to enforce: it is counted in this
	 * head's file, so its figures (a Remaining counting down) are this head's, and costs no
	 * round trip. The key generation the script would have answered comes from
	 * bp_limits_generation's read, once per head every BP_LIMITS_REDIS_GEN_MS. Addresses
	 * always go to Redis: while it is down they are refused (BP_LIMIT_DOWN).
	 */
	if (!(who & ADDR_BIT) && plan->rps <= 0 && plan->rpd <= 0 && plan->cups <= 0)
		v = -1;
	else if (!(who & ADDR_BIT) && now_ns < 0 &&
	    (v = lease_take(l, who, plan, nreq, nday, cu, st)) >= 0)
		return (enum bp_limit_verdict)v;
	else if ((v = bp_limits_redis_take(l->redis, who, plan, nreq, nday, cu, now_ns,
	    st)) >= 0) {
		raise_to(&l->hdr->redis_gen, bp_limits_redis_seen(l->redis));
		return (enum bp_limit_verdict)v;
	}
	if (now_ns < 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		now_ns = (int64_t)ts.tv_sec * NS + ts.tv_nsec;
	}
	if (who & ADDR_BIT) {
		start_state(st, plan, now_ns / NS);
		st->remaining = 0;
		st->retry_after = 1;
		return BP_LIMIT_DOWN;
	}
	return take_file(l, who, plan, nreq, nday, cu, now_ns, st);
}

enum bp_limit_verdict
bp_limits_take_ns(struct bp_limits *l, uint64_t who, const struct bp_limit_plan *plan,
    unsigned nreq, unsigned nday, unsigned cu, int64_t now_ns, struct bp_limit_state *st)
{
	if (l->redis != NULL)
		return redis_take(l, who, plan, nreq, nday, cu, now_ns, st);
	return take_file(l, who, plan, nreq, nday, cu, now_ns, st);
}

static enum bp_limit_verdict
take_file(struct bp_limits *l, uint64_t who, const struct bp_limit_plan *plan,
    unsigned nreq, unsigned nday, unsigned cu, int64_t now_ns, struct bp_limit_state *st)
{
	uint64_t now = (uint64_t)(now_ns / NS), day = now / 86400, after = 0;
	struct slot *s;

	start_state(st, plan, (int64_t)now);
	if ((s = find_slot(l, who, now)) == NULL) {
		if (__atomic_exchange_n(&l->warned, now, __ATOMIC_RELAXED) != now)
			bp_warn("%s: counters file full around slot of %llx; refusing (logged "
			    "once a second)", __func__, (unsigned long long)who);
		st->remaining = 0;
		st->retry_after = 1;
		return BP_LIMIT_FULL;
	}
	if (take_second(&s->sec_req, plan, plan->rps, nreq, now_ns, 1, st) == -1)
		return BP_LIMIT_RPS;
	if (nday > 0 && add_packed(&s->day_req, day, 40, nday, plan->rpd, &after) == -1) {
		st->retry_after = (int64_t)((day + 1) * 86400 - now);
		return BP_LIMIT_RPD;
	}
	if (cu > 0 && take_second(&s->sec_cu, plan, plan->cups, cu, now_ns, 0, st) == -1)
		return BP_LIMIT_CUPS;
	return BP_LIMIT_OK;
}

/* Raises *w to v (a generation only grows: a lower value is an older read). */
static void
raise_to(uint64_t *w, uint64_t v)
{
	uint64_t cur = __atomic_load_n(w, __ATOMIC_ACQUIRE);

	while (cur < v && !__atomic_compare_exchange_n(w, &cur, v, 1, __ATOMIC_ACQ_REL,
	    __ATOMIC_ACQUIRE))
		;
}

/*
 * Reads Redis's generation into the header, by one thread of the whole head at most every
 * BP_LIMITS_REDIS_GEN_MS: the one that moves redis_next (as the upstream health's shared_at in
 * lib/net/health.c). A redis_next further ahead than that is from before a reboot (the
 * monotonic clock started again): due. Redis down: the last value stays.
 */
static void
read_redis_generation(struct bp_limits *l)
{
	int64_t now = bp_mono_us(), span = BP_LIMITS_REDIS_GEN_MS * INT64_C(1000);
	int64_t next = __atomic_load_n(&l->hdr->redis_next, __ATOMIC_ACQUIRE);
	uint64_t g;

	if ((next > now && next <= now + span) || !__atomic_compare_exchange_n(
	    &l->hdr->redis_next, &next, now + span, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (bp_limits_redis_generation(l->redis, &g) == 0)
		raise_to(&l->hdr->redis_gen, g);
}

/*
 * With Redis, the sum of the file's and Redis's: a change on any head moves Redis's, and a change
 * made while Redis was down still moves this head's file. Both only grow (a generation Redis lost
 * starts again above any before), so the sum never comes back to a value a cache holds.
 */
uint64_t
bp_limits_generation(struct bp_limits *l)
{
	uint64_t g = __atomic_load_n(&l->hdr->generation, __ATOMIC_ACQUIRE);

	if (l->redis == NULL)
		return g;
	read_redis_generation(l);
	return g + __atomic_load_n(&l->hdr->redis_gen, __ATOMIC_ACQUIRE);
}

void
bp_limits_bump_generation(struct bp_limits *l)
{
	__atomic_add_fetch(&l->hdr->generation, 1, __ATOMIC_ACQ_REL);
	if (l->redis == NULL)
		return;
	if (bp_limits_redis_bump(l->redis) == -1)
		bp_warn("limits: the key generation could not be bumped in Redis: other heads see "
		    "the change when their key caches expire (key_cache_seconds)");
	else
		raise_to(&l->hdr->redis_gen, bp_limits_redis_seen(l->redis));
}
