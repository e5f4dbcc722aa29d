/*
 * Rate limits and compute units, shared by every process of every program through one
 * memory-mapped file (config: limits_file). Each key (or client address) owns a slot of three
 * 64-bit words, each updated with a compare-and-swap, so no increment is lost and a process that
 * dies mid-update leaves nothing locked. Keys and client addresses live in separate halves of
 * the file; a request that finds no free slot is refused (BP_LIMIT_FULL). See docs/limits.md.
 */
#ifndef BP_LIMITS_H
#define BP_LIMITS_H

#include <stdint.h>

struct bp_limits;

/*
 * A plan's limits as the counters see them; 0 means unlimited. With burst > 0 the per-second
 * limits are token buckets refilled at rps (cups) a second that hold burst seconds' worth, so a
 * client's ordinary burst passes while its average holds to the plan; with burst 0 they count
 * per calendar second (the anonymous limit, exact test plans).
 */
struct bp_limit_plan {
	int64_t	rps;
	int64_t	rpd;
	int64_t	cups;
	int64_t	burst;		/* seconds' worth the buckets hold; 0: per calendar second */
};

enum bp_limit_verdict {
	BP_LIMIT_OK,		/* 0 */
	BP_LIMIT_RPS,		/* 1: requests per second */
	BP_LIMIT_RPD,		/* 2: requests per UTC day */
	BP_LIMIT_CUPS,		/* 3: compute units per second */
	BP_LIMIT_FULL,		/* 4: no free slot for who: refused, never let through */
	BP_LIMIT_DOWN,		/* 5: Redis does not answer: a client address is refused */
	BP_LIMIT__MAX
};

/* X-RateLimit-Limit of a plan without a per-second limit (its Remaining never reaches 0). */
#define BP_LIMIT_UNLIMITED	INT64_C(2147483647)

/* What the X-RateLimit-* and Retry-After headers say. */
struct bp_limit_state {
	int64_t	limit;		/* what the bucket holds (rps x burst), or requests per second
				   with burst 0; BP_LIMIT_UNLIMITED when there is no limit */
	int64_t	remaining;	/* requests left in the bucket (in this second) */
	int64_t	reset;		/* Unix time the bucket is full again (the window resets) */
	int64_t	retry_after;	/* seconds, when limited */
};

/* What a verdict refused, for messages ("requests per second"); "" for BP_LIMIT_OK. */
const char	 *bp_limit_what(enum bp_limit_verdict);
/* Its short name, a metrics label: rps, rpd, cups, full, down. */
const char	 *bp_limit_name(enum bp_limit_verdict);

/*
 * Maps (creating if needed) the counters file. Returns a handle owned by the caller
 * (bp_limits_close), or NULL after logging why.
 */
struct bp_limits *bp_limits_open(const char *path);
void		  bp_limits_close(struct bp_limits *);

struct bp_config;
/*
 * What a program opens: the mapped file, and when the config names a redis:// URL ([server]
 * limits) the counters in Redis too, shared by every web head. With Redis, a key is counted
 * there; while Redis does not answer, a key is counted in the file (this head's share only) and
 * a client address is refused (BP_LIMIT_DOWN). NULL after logging why.
 */
struct bp_limits *bp_limits_open_config(const struct bp_config *);
/*
 * A thread's handle on l: its own Redis connection (a connection serves one thread at a time),
 * the same mapping; l itself when l has no Redis. Closed with bp_limits_thread_close.
 */
struct bp_limits *bp_limits_thread(struct bp_limits *l);
void		  bp_limits_thread_close(struct bp_limits *l, struct bp_limits *thread);

/*
 * Counts a request for who (a key id, or bp_limits_addr_id of a client address) against plan:
 * nreq requests in this second, nday requests in today's count, cu compute units in this second.
 * Nothing is counted for a limit that refuses; counting nothing (all 0) only reads the figures.
 * Fills st. Returns the verdict; BP_LIMIT_FULL when no slot is free for who.
 */
enum bp_limit_verdict bp_limits_take(struct bp_limits *, uint64_t who,
		    const struct bp_limit_plan *, unsigned nreq, unsigned nday, unsigned cu,
		    struct bp_limit_state *st);
/* The same at the Unix time now instead of the clock's (tests of idle slots and midnight). */
enum bp_limit_verdict bp_limits_take_at(struct bp_limits *, uint64_t who,
		    const struct bp_limit_plan *, unsigned nreq, unsigned nday, unsigned cu,
		    int64_t now, struct bp_limit_state *st);
/* The same at now_ns nanoseconds since the epoch (tests of the buckets' refill). */
enum bp_limit_verdict bp_limits_take_ns(struct bp_limits *, uint64_t who,
		    const struct bp_limit_plan *, unsigned nreq, unsigned nday, unsigned cu,
		    int64_t now_ns, struct bp_limit_state *st);
/*
 * The slot id of a client address (a different space from key ids): an IPv4 address, the /64 of
 * an IPv6 address (an IPv4-mapped one is its IPv4 address), or else the text as given.
 */
uint64_t	  bp_limits_addr_id(const char *addr);

/* The key generation: bumped whenever keys or plans change, so caches can tell. */
uint64_t	  bp_limits_generation(struct bp_limits *);
void		  bp_limits_bump_generation(struct bp_limits *);

#endif
