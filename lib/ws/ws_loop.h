/*
 * The poll loop of a WebSocket connection (docs/websocket.md, "Bounds"): the client's lines on
 * stdin, the queued messages to stdout (non-blocking, a slow reader dropped past the output
 * cap), the wake file of new blocks and pending transactions, the idle timeout, and the
 * database handle released when unused.
 */
#ifndef BP_WS_LOOP_H
#define BP_WS_LOOP_H

struct bp_ws_conn;

#define BP_WS_LOOP_IDLE_MS	(300 * 1000)	/* no message and no subscription: close */

/* Serves c until the client or websocketd goes, or c closes; what is queued goes out first. */
void	bp_ws_loop_run(struct bp_ws_conn *c);

#endif
