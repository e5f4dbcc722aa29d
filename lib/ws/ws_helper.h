/*
 * The JSON-RPC proxy of a WebSocket connection in a process of its own (ws/proxy.c;
 * docs/websocket.md, "Memory"): ws/subscribe starts it at the first message that needs it, so a
 * connection that only subscribes never loads libcurl. One per connection, a plain struct.
 */
#ifndef BP_WS_HELPER_H
#define BP_WS_HELPER_H

#include <stdio.h>
#include <sys/types.h>

struct bp_buf;

struct bp_ws_helper {
	pid_t	 pid;		/* 0: not started */
	FILE	*to;		/* its stdin */
	FILE	*from;		/* its stdout */
	char	*line;		/* the last answer line read (getline's) */
	size_t	 cap;
};

/*
 * Starts the program next to this one named prog ("proxy") if h has none, and tells it the
 * connection: chain, network, the client's address and the API key. 0, or -1 (logged).
 */
int	bp_ws_helper_start(struct bp_ws_helper *h, const char *prog, const char *chain,
	    const char *network, const char *addr, const char *key);

/*
 * Sends message (one line, len bytes, no newline) and reads the answer: *status the HTTP status
 * the proxy answered, *body and *bodylen its body (valid until the next call). 0, or -1 when
 * the helper is gone (it is then stopped; the next start makes a new one).
 */
int	bp_ws_helper_call(struct bp_ws_helper *h, const char *message, size_t len, int *status,
	    const char **body, size_t *bodylen);

/* Ends the helper (end of its input) and waits for it. */
void	bp_ws_helper_stop(struct bp_ws_helper *h);

#endif
