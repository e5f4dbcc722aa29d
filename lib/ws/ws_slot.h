/*
 * The per-key cap on open WebSocket connections (docs/websocket.md, "Admission"): the plan's
 * ws_connections as slot files DATABASE.ws/KEYID.N, N < cap, each held with flock for the
 * connection's life. The kernel drops the lock when the process ends however it ends, so a
 * crash never leaks a slot.
 */
#ifndef BP_WS_SLOT_H
#define BP_WS_SLOT_H

#include <stdint.h>

#include "core/auth.h"

/*
 * Takes a free slot of key k beside database. Returns the fd held (close it to free the slot;
 * O_CLOEXEC) and its number in *n, -2 when every slot is taken, -3 when the plan has no cap,
 * -1 on an error (logged).
 */
int	bp_ws_slot_take(const char *database, const struct bp_key *k, int64_t *n);

/*
 * Keeps a connection within the cap of k's plan, which may have changed since it took *fd (a
 * slot fd numbered *n, or negative: none): a slot numbered below the cap is kept; past it (or
 * with none) another is taken below it and the old one freed; with no cap, the slot is freed.
 * 0, -2 when every slot below the cap is taken (*fd kept), -1 on an error (logged).
 */
int	bp_ws_slot_keep(const char *database, const struct bp_key *k, int *fd, int64_t *n);

/*
 * On several heads (limits = redis://, docs/limits.md) the cap holds across them: slot N of key
 * K is bp:ws:K:N in Redis, SET NX with this connection's token and a lease of
 * BP_WS_SLOT_LEASE_MS, renewed at each of the connection's rechecks and deleted when it ends. A
 * process killed outright holds its slot until the lease runs out. While Redis does not answer
 * (the counters' connection and failure rules) a connection takes a file slot above: the cap
 * then holds per head, as the counters do.
 */
#define BP_WS_SLOT_LEASE_MS	30000
#define BP_WS_SLOT_REDIS	(-4)	/* the *fd of a slot held in Redis */

struct bp_config;
struct bp_ws_slots;

/* The Redis slots of one connection when cfg's limits is a redis:// URL; NULL otherwise. */
struct bp_ws_slots *bp_ws_slots_redis(const struct bp_config *cfg);
/* Frees h, deleting the slot it holds. NULL is a no-op. */
void	bp_ws_slots_free(struct bp_ws_slots *h);
/*
 * bp_ws_slot_keep in Redis: a slot held there has *fd BP_WS_SLOT_REDIS. The same answers, and
 * -1 when Redis did not answer (the caller takes a file slot instead); a file slot already held
 * below the cap is kept.
 */
int	bp_ws_slot_keep_redis(struct bp_ws_slots *h, const struct bp_key *k, int *fd,
	    int64_t *n);
/* Renews the lease of the slot h holds; 0, -1 when Redis did not answer or it was lost. */
int	bp_ws_slot_renew(struct bp_ws_slots *h);

#endif
