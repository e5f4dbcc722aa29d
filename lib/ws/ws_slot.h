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

#endif
