/*
 * The key of a WebSocket connection (docs/websocket.md, "Admission" and "Accounting"): admitted
 * at the upgrade (scope, test or live, a slot among the plan's ws_connections), admitted again
 * at every message (the key may have been revoked; requests per second) and every few seconds
 * when the key generation moved (revoked keys, changed plans), and charged for the notifications
 * it is sent.
 */
#ifndef BP_WS_ADMIT_H
#define BP_WS_ADMIT_H

#include <stddef.h>
#include <stdint.h>

struct bp_ws_conn;

/*
 * How often an open connection looks whether its key or its plan may have changed (the key
 * generation in the limits file, bumped by the admin CLI): a revocation closes it, a plan
 * change applies, within this and a wake.
 */
#define BP_WS_ADMIT_RECHECK_US	INT64_C(5000000)

/*
 * Prices c's notifications and admits its key: ?apiKey=, else X-API-Key or Bearer on the
 * upgrade. 0, or -1 after queueing the refusal.
 */
int	bp_ws_admit_connection(struct bp_ws_conn *c);

/*
 * Admits c's key again for a message (id, idlen: its id for a refusal; idlen 0: null). 0, or
 * -1 after queueing the refusal (and closing, unless the key is only over its rate).
 */
int	bp_ws_admit_message(struct bp_ws_conn *c, const char *id, size_t idlen);

/*
 * Charges a method answered here (eth_subscribe, eth_unsubscribe) like the proxy's methods: a
 * request for the day and the method's CUs. 0, or -1 after queueing the refusal.
 */
int	bp_ws_admit_call(struct bp_ws_conn *c, const char *method, size_t len, const char *id,
	    size_t idlen);

/*
 * Admits c's key again when BP_WS_ADMIT_RECHECK_US have passed (now: monotonic us) and the key
 * generation moved since its last lookup; else nothing, no SQLite. A key revoked closes c after
 * a 401 error naming it; a plan changed applies at once: its limits, its debug methods (the
 * proxy looks the key up at each message), its cap on connections (past it, a 429 and close).
 */
void	bp_ws_admit_recheck(struct bp_ws_conn *c, int64_t now);

/* Charges the CUs of the notifications sent since the last call (c->owed). */
void	bp_ws_admit_charge(struct bp_ws_conn *c);

#endif
