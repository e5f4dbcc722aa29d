/*
 * GET /v1/ws/{chain}/{network}: WebSocket subscriptions (SPEC.md section 4; docs/websocket.md).
 *
 * websocketd runs this program once per connection, after the upgrade, with the request in CGI
 * variables (REQUEST_URI, QUERY_STRING, REMOTE_ADDR, HTTP_*) and one JSON message a line on stdin
 * and stdout. The program:
 *
 *  - admits the connection: the key from ?apiKey=, else X-API-Key or Bearer on the upgrade
 *    (lib/core/admit.h), the rpc:read scope, live keys only on mainnets, and a slot among the key's
 *    plan's ws_connections; a refusal is one JSON-RPC error naming the HTTP status, then close;
 *  - admits every message again (the key may have been revoked; requests per second) and answers
 *    eth_subscribe / eth_unsubscribe itself; every other message goes through the JSON-RPC proxy
 *    of /v1/rpc (lib/rpc/rpc_proxy.h): the same envelope rules, method classes, scopes and CUs;
 *  - sends newHeads from the chain index (lib/ws/ws_follow.h): the indexer is the one follower of
 *    the node, whatever the number of connections;
 *  - stays bounded: a message cap (max_body), a cap on subscriptions, an idle timeout, and an
 *    output buffer cap past which a reader too slow to keep up is disconnected.
 *
 * The connection is lib/ws/ws_conn.h; its key, messages, notifications and loop are ws_admit,
 * ws_message, ws_notify and ws_loop there. This file is the process: its priority, one
 * connection served, its exit status.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include "core/log.h"
#include "core/metrics.h"
#include "ws/ws_admit.h"
#include "ws/ws_conn.h"
#include "ws/ws_loop.h"

#define WS_NICE		10			/* the connections' niceness */

int
main(void)
{
	struct bp_ws_conn *c;
	int rc = 1;

	bp_log_init("ws");
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Below the web server and websocketd: a block wakes every connection at once, and at the
	 * same priority the thousand of them would share the CPU with the two processes that
	 * carry their messages out, so none would arrive before nearly all were written.
	 */
	if (setpriority(PRIO_PROCESS, 0, WS_NICE) == -1)
		bp_warn("setpriority: %s", strerror(errno));
	if ((c = bp_ws_conn_new()) == NULL)
		return 1;
	if (bp_ws_conn_open(c) == 0 && bp_ws_admit_connection(c) == 0) {
		rc = 0;
		/* Counted while admitted: a process killed outright stays counted (docs/metrics.md). */
		bp_metrics_add(c->metrics, "blockport_ws_connections", 1);
	} else
		c->closing = 1;	/* the refusal, if any, goes out */
	bp_ws_loop_run(c);
	if (rc == 0)
		bp_metrics_add(c->metrics, "blockport_ws_connections", -1);
	bp_ws_conn_free(c);
	return rc;
}
