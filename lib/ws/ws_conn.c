/*
 * One WebSocket connection (ws_conn.h): its resources, its database handle and the messages it
 * queues for websocketd, one JSON text a line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/admit.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/db.h"
#include "core/db_wake.h"
#include "core/http.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/util.h"
#include "index/index_feed.h"
#include "rpc/rpc_envelope.h"
#include "ws_conn.h"
#include "ws_helper.h"
#include "ws_logs.h"
#include "ws_slot.h"

extern char **environ;

struct bp_ws_conn *
bp_ws_conn_new(void)
{
	struct bp_ws_conn *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->slot_fd = -1;
	bp_buf_init(&c->out, BP_WS_CONN_OUT_CAP);
	bp_buf_init(&c->msg, BP_RESP_CAP);
	bp_buf_init(&c->feedbuf, BP_INDEX_FEED_MAX + 1);
	fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);
	return c;
}

int
bp_ws_conn_open(struct bp_ws_conn *c)
{
	char err[512];
	const char *target = getenv("REQUEST_URI");
	struct bp_req *r;

	if ((c->cfg = bp_config_load(NULL, err, sizeof(err))) == NULL) {
		bp_err("config: %s", err);
		return -1;
	}
	bp_buf_init(&c->in, (size_t)c->cfg->max_body);
	c->metrics = bp_metrics_open(c->cfg);	/* none: nothing counted, nothing refused */
	c->db_used = bp_mono_us();
	if ((c->db = bp_db_open(c->cfg->database, 0)) == NULL ||
	    (c->lim = bp_limits_open_config(c->cfg)) == NULL ||
	    bp_admit_init(&c->adm, c->cfg, c->db, c->lim) == -1 ||
	    (c->req = malloc(sizeof(*c->req))) == NULL)
		return -1;
	r = c->req;
	bp_req_init(r);
	r->cfg = c->cfg;
	r->db = c->db;
	r->lim = c->lim;
	r->envp = environ;
	c->addr = getenv("REMOTE_ADDR");
	if (bp_req_parse(r, "GET", target != NULL ? target : "/") != 0 || r->nseg != 4 ||
	    strcmp(r->seg[0], "v1") != 0 || strcmp(r->seg[1], "ws") != 0) {
		bp_ws_conn_refuse(c, NULL, 0, BP_JSONRPC_INVALID_REQUEST, 404, "not_found",
		    "no such endpoint: the WebSocket path is /v1/ws/{chain}/{network}");
		return -1;
	}
	if ((c->net = bp_config_network(c->cfg, r->seg[2], r->seg[3])) == NULL) {
		char m[160];

		snprintf(m, sizeof(m), "no such chain or network: %s/%s", r->seg[2], r->seg[3]);
		bp_ws_conn_refuse(c, NULL, 0, BP_JSONRPC_INVALID_REQUEST, 404, "not_found", m);
		return -1;
	}
	snprintf(c->chain, sizeof(c->chain), "%s.%s", c->net->chain, c->net->network);
	/* No feed on PostgreSQL: the indexer may run on another head (cron/indexer.c). */
	if (bp_db_is_url(c->cfg->database) ||
	    bp_index_feed_path(c->cfg, c->chain, c->feed, sizeof(c->feed)) == -1)
		c->feed[0] = '\0';
	/* Spread over 2 s, so the connections' SQLite checks do not all come at once. */
	c->next_check = bp_mono_us() + BP_WS_CONN_CHECK_US + (int64_t)(getpid() % 2000) * 1000;
	return 0;
}

void
bp_ws_conn_free(struct bp_ws_conn *c)
{
	bp_ws_helper_stop(&c->helper);
	while (c->nsubs > 0)
		bp_ws_logs_free(c->subs[--c->nsubs].logs);
	if (c->req != NULL) {
		bp_req_free(c->req);
		free(c->req);
	}
	if (c->slot_fd >= 0)
		close(c->slot_fd);
	bp_ws_slots_free(c->slots);
	bp_db_wake_close(c->wake);
	bp_admit_fini(&c->adm);
	bp_limits_close(c->lim);
	bp_metrics_close(c->metrics);
	bp_db_close(c->db);
	bp_config_free(c->cfg);
	free(c->key);
	bp_buf_free(&c->in);
	bp_buf_free(&c->out);
	bp_buf_free(&c->msg);
	bp_buf_free(&c->feedbuf);
	free(c);
}

struct bp_db *
bp_ws_conn_db(struct bp_ws_conn *c)
{
	if (c->db == NULL) {
		if ((c->db = bp_db_open(c->cfg->database, 0)) == NULL)
			return NULL;
		c->adm.db = c->db;
		c->req->db = c->db;
		/* PRAGMA data_version belongs to a handle: read again from the last head sent. */
		c->follow.version = -1;
	}
	c->db_used = bp_mono_us();
	return c->db;
}

/*
 * Logs and pending subscriptions read SQLite at every block, and so do heads without a feed
 * (PostgreSQL: the index's tables); the others keep no handle open.
 * Every open handle holds a lock on the database's shared memory for its life, and every
 * SQLite lock call on the machine walks all of them: a thousand idle connections made each
 * request of the FastCGI programs slower.
 */
void
bp_ws_conn_release_db(struct bp_ws_conn *c, int64_t now)
{
	size_t i;

	if (c->db == NULL || c->pending || (c->following && c->feed[0] == '\0') ||
	    now - c->db_used < BP_WS_CONN_DB_KEEP_US)
		return;
	for (i = 0; i < c->nsubs; i++)
		if (c->subs[i].kind == BP_WS_CONN_LOGS)
			return;
	bp_db_close(c->db);
	c->db = NULL;
	c->adm.db = NULL;
	c->req->db = NULL;
}

void
bp_ws_conn_send(struct bp_ws_conn *c, const char *msg, size_t len)
{
	size_t i, at = c->out.len;

	if (bp_buf_add(&c->out, msg, len) == -1 || bp_buf_add(&c->out, "\n", 1) == -1) {
		if (c->closing != 2)
			bp_warn("a slow reader: more than %u bytes unsent, disconnecting",
			    BP_WS_CONN_OUT_CAP);
		c->out.len = at;
		c->closing = 2;
		return;
	}
	/* A raw newline in JSON text is whitespace: line mode needs the message on one line. */
	for (i = at; i < c->out.len - 1; i++)
		if (c->out.data[i] == '\n' || c->out.data[i] == '\r')
			c->out.data[i] = ' ';
}

int
bp_ws_conn_write(struct bp_ws_conn *c)
{
	ssize_t n;

	if (c->out.len == 0)
		return 0;
	n = write(STDOUT_FILENO, c->out.data, c->out.len);
	if (n == -1)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	memmove(c->out.data, c->out.data + n, c->out.len - (size_t)n);
	c->out.len -= (size_t)n;
	return 0;
}

void
bp_ws_conn_refuse(struct bp_ws_conn *c, const char *id, size_t idlen, int rpc_code, int status,
    const char *code, const char *message)
{
	char text[BP_ADMIT_MSG + 64];

	snprintf(text, sizeof(text), "%d %s: %s", status, code, message);
	bp_buf_reset(&c->msg);
	if (bp_rpc_envelope_error_obj(&c->msg, id, idlen, rpc_code, text) == -1 || c->msg.len < 2)
		return;
	c->msg.len -= 2;	/* drop the closing "}}" to add data to the error object */
	if (bp_buf_printf(&c->msg, ",\"data\":{\"status\":%d,\"code\":\"", status) == -1 ||
	    bp_buf_json_str(&c->msg, code) == -1 || bp_buf_adds(&c->msg, "\"}}}") == -1)
		return;
	bp_ws_conn_send(c, c->msg.data, c->msg.len);
}

int
bp_ws_conn_rpc_code(int status)
{
	switch (status) {
	case 401:
		return BP_WS_CONN_UNAUTHORIZED;
	case 403:
		return BP_JSONRPC_FORBIDDEN;
	case 429:
		return BP_JSONRPC_LIMITED;
	case 413:
		return BP_WS_CONN_TOO_LARGE;
	default:
		return BP_JSONRPC_INTERNAL_ERROR;
	}
}

void
bp_ws_conn_result(struct bp_ws_conn *c, const char *id, size_t idlen, const char *result)
{
	bp_buf_reset(&c->msg);
	if (bp_buf_adds(&c->msg, "{\"jsonrpc\":\"2.0\",\"id\":") == -1 ||
	    bp_buf_add(&c->msg, idlen ? id : "null", idlen ? idlen : 4) == -1 ||
	    bp_buf_adds(&c->msg, ",\"result\":") == -1 || bp_buf_adds(&c->msg, result) == -1 ||
	    bp_buf_adds(&c->msg, "}") == -1)
		return;
	bp_ws_conn_send(c, c->msg.data, c->msg.len);
}

void
bp_ws_conn_error(struct bp_ws_conn *c, const char *id, size_t idlen, int code, const char *msg)
{
	bp_buf_reset(&c->msg);
	if (bp_rpc_envelope_error_obj(&c->msg, id, idlen, code, msg) == 0)
		bp_ws_conn_send(c, c->msg.data, c->msg.len);
}

int
bp_ws_conn_emit(const char *result, size_t len, void *arg)
{
	struct bp_ws_conn *c = arg;

	bp_buf_reset(&c->msg);
	if (bp_buf_printf(&c->msg, "{\"jsonrpc\":\"2.0\",\"method\":\"eth_subscription\","
	    "\"params\":{\"subscription\":\"%s\",\"result\":", c->cur->id) == -1 ||
	    bp_buf_add(&c->msg, result, len) == -1 || bp_buf_adds(&c->msg, "}}") == -1)
		return -1;
	bp_ws_conn_send(c, c->msg.data, c->msg.len);
	return c->closing ? -1 : 0;
}

struct bp_ws_conn_sub *
bp_ws_conn_sub_find(struct bp_ws_conn *c, const char *id)
{
	size_t i;

	for (i = 0; i < c->nsubs; i++)
		if (strcasecmp(c->subs[i].id, id) == 0)
			return &c->subs[i];
	return NULL;
}

void
bp_ws_conn_sub_remove(struct bp_ws_conn *c, struct bp_ws_conn_sub *s)
{
	size_t i;

	bp_ws_logs_free(s->logs);
	*s = c->subs[--c->nsubs];
	c->following = 0;
	c->pending = 0;
	for (i = 0; i < c->nsubs; i++) {
		if (c->subs[i].kind == BP_WS_CONN_HEADS || c->subs[i].kind == BP_WS_CONN_LOGS)
			c->following = 1;
		if (c->subs[i].kind == BP_WS_CONN_PENDING)
			c->pending = 1;
	}
}
