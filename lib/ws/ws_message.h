/*
 * The client's messages on a WebSocket connection (docs/websocket.md): one JSON-RPC message a
 * line from websocketd, each admitted again (ws_admit.h); eth_subscribe and eth_unsubscribe
 * answered here, every other message through the JSON-RPC proxy of /v1/rpc
 * (lib/rpc/rpc_proxy.h, in the helper process ws/proxy: the same envelope rules, method
 * classes, scopes and CUs).
 */
#ifndef BP_WS_MESSAGE_H
#define BP_WS_MESSAGE_H

#include <stddef.h>

struct bp_ws_conn;

/*
 * Reads what stdin has and handles each whole line (a message over max_body is refused and
 * closes). 0, or -1 at end of input or on an error.
 */
int	bp_ws_message_read(struct bp_ws_conn *c);

/* Handles one message (a line without its newline, NUL-terminated at body[len]). */
void	bp_ws_message_handle(struct bp_ws_conn *c, char *body, size_t len);

#endif
