/*
 * The poll loop of a WebSocket connection (ws_loop.h). Every turn, whatever woke it: the heads
 * and the pending transactions are looked at (cheaply: a stat of the heads feed), the key
 * looked at again when its time came (cheaply: the key generation), the notifications' CUs
 * charged, what is queued written.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "core/util.h"
#include "core/db_wake.h"
#include "rpc/rpc_envelope.h"
#include "ws_admit.h"
#include "ws_conn.h"
#include "ws_loop.h"
#include "ws_message.h"
#include "ws_notify.h"

void
bp_ws_loop_run(struct bp_ws_conn *c)
{
	struct pollfd pfd[3];
	int64_t now;
	int timeout, ready;

	c->last_in = bp_mono_us();
	while (c->closing != 2) {
		if (c->closing && c->out.len == 0)
			break;
		pfd[0].fd = c->closing ? -1 : STDIN_FILENO;
		pfd[0].events = POLLIN;
		pfd[1].fd = STDOUT_FILENO;
		pfd[1].events = c->out.len > 0 ? POLLOUT : 0;
		pfd[2].fd = c->following || c->pending ? bp_db_wake_fd(c->wake) : -1;
		pfd[2].events = POLLIN;
		timeout = !c->following && !c->pending ? 1000 :
		    bp_db_wake_fd(c->wake) >= 0 ? BP_WS_NOTIFY_WATCH_MS : BP_WS_NOTIFY_POLL_MS;
		/* A connection that only listens still looks at its key in time. */
		now = bp_mono_us();
		if (!c->closing && c->recheck_at - now < (int64_t)timeout * 1000)
			timeout = now >= c->recheck_at ? 0 :
			    (int)((c->recheck_at - now + 999) / 1000);
		if ((ready = poll(pfd, 3, timeout)) == -1 && errno != EINTR)
			break;
		if ((pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    bp_db_wake_drain(c->wake) == -1) {
			/* The listener lost its server: poll the index until it is back. */
			bp_db_wake_close(c->wake);
			c->wake = NULL;
		}
		if ((pfd[1].revents & (POLLERR | POLLHUP)) != 0)
			break;
		if ((pfd[1].revents & POLLOUT) && bp_ws_conn_write(c) == -1)
			break;
		if ((pfd[0].revents & (POLLIN | POLLHUP)) && bp_ws_message_read(c) == -1)
			break;
		bp_ws_notify_heads(c, ready == 0);
		bp_ws_notify_pending(c);
		now = bp_mono_us();
		bp_ws_admit_recheck(c, now);
		bp_ws_admit_charge(c);
		if (c->nsubs == 0 && !c->closing &&
		    now - c->last_in > BP_WS_LOOP_IDLE_MS * INT64_C(1000)) {
			bp_ws_conn_refuse(c, NULL, 0, BP_JSONRPC_INVALID_REQUEST, 408, "timeout",
			    "no message and no subscription for 300 s: closing");
			c->closing = 1;
		}
		if (c->out.len > 0 && bp_ws_conn_write(c) == -1)
			break;
		bp_ws_conn_release_db(c, now);
	}
	/* Whatever is left goes out blocking: the last error message, say. */
	if (c->closing != 2 && c->out.len > 0) {
		fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) & ~O_NONBLOCK);
		bp_ws_conn_write(c);
	}
}
