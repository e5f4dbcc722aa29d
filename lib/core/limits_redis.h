/*
 * The rate-limit counters in Redis (config: [server] limits = redis://HOST[:PORT][/DB]), for
 * several web heads that must count a key together. Used by lib/core/limits.c only: one
 * connection per handle (a thread's), one Lua script per admission (EVALSHA) that counts and
 * answers exactly as the mapped file does. See docs/limits.md.
 */
#ifndef BP_LIMITS_REDIS_H
#define BP_LIMITS_REDIS_H

#include <stdint.h>

#include "limits.h"

struct bp_limits_redis;

/* Checks url ("redis://host[:port][/db]"); 0, or -1 with why in err. */
int		 bp_limits_redis_parse(const char *url, char *err, size_t errlen);

/* A handle on url, not yet connected (the first use connects); NULL when url is not valid. */
struct bp_limits_redis *bp_limits_redis_new(const char *url);
void		 bp_limits_redis_free(struct bp_limits_redis *);

/*
 * Counts as bp_limits_take_ns does, at now_ns (or Redis's clock when now_ns is -1). Returns the
 * verdict, or -1 when Redis did not answer (down, timed out, refused the script): the caller
 * decides. A failed connection is not tried again for a second, so a dead Redis costs a request
 * at most one connect timeout a second per thread.
 */
int		 bp_limits_redis_take(struct bp_limits_redis *, uint64_t who,
		    const struct bp_limit_plan *, unsigned nreq, unsigned nday, unsigned cu,
		    int64_t now_ns, struct bp_limit_state *st);

/*
 * The key generation in Redis: read now (GET) into *gen, 0; -1 when Redis did not answer. Every
 * admission's script answers it too: bp_limits_redis_seen is the last value this connection
 * saw either way (0 before any). lib/core/limits.c reads it for a whole head at most every
 * BP_LIMITS_REDIS_GEN_MS.
 */
#define BP_LIMITS_REDIS_GEN_MS	100
int		 bp_limits_redis_generation(struct bp_limits_redis *, uint64_t *gen);
uint64_t	 bp_limits_redis_seen(const struct bp_limits_redis *);
/* Bumps it; -1 when Redis did not answer. */
int		 bp_limits_redis_bump(struct bp_limits_redis *);

/*
 * For the other state several heads share through the same Redis (lib/rpc/head_mark.c, the
 * WebSocket slots): runs script (EVAL) with nkeys of the argc strings of argv as its KEYS and the
 * rest as ARGV, under the same connection and failure rules as the counters (100 ms connect,
 * 250 ms command, a second's pause after a failure, logged once an outage). The script answers
 * an array of integers: at most nout go to out. Returns how many the array had, or -1 when Redis
 * did not answer (the caller falls back to its file).
 */
int		 bp_limits_redis_eval(struct bp_limits_redis *, const char *script, int nkeys,
		    int argc, const char **argv, int64_t *out, size_t nout);
/* What a failure means for this handle's user, for the outage's one warning. */
void		 bp_limits_redis_fallback(struct bp_limits_redis *, const char *what);

#endif
