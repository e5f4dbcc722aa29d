/*
 * The key of a WebSocket connection (docs/websocket.md, "Admission" and "Accounting"): admitted
 * at the upgrade (scope, test or live, a slot among the plan's ws_connections), admitted again
 * at every message (the key may have been revoked; requests per second), and charged for the
 * notifications it is sent.
 */
#ifndef BP_WS_ADMIT_H
#define BP_WS_ADMIT_H

#include <stddef.h>

struct bp_ws_conn;

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

/* Charges the CUs of the notifications sent since the last call (c->owed). */
void	bp_ws_admit_charge(struct bp_ws_conn *c);

#endif
