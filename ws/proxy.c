/*
 * The JSON-RPC proxy of one WebSocket connection (docs/websocket.md, "Memory"). ws/subscribe
 * starts it (fork and exec, its stdin and stdout two pipes) at the connection's first message
 * that is not a subscription, so a connection that only subscribes never loads libcurl and the
 * ~30 libraries that come with it. Every message goes through bp_rpc_proxy_serve, the code of
 * POST /v1/rpc: the same envelope rules, method classes, scopes, plan checks, CUs and upstream
 * failover. ws/subscribe has admitted the connection and admits each message before passing it;
 * the key is looked up again here for each (its plan may have changed since the start).
 *
 * On stdin, one line each: first the chain, the network, the client address and the API key,
 * tab-separated; then one JSON-RPC message a line (at most max_body bytes). On stdout, for each
 * message one line: the HTTP status the proxy answered, a space, its body (newlines made spaces).
 * It exits at the end of its input.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/admit.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/db.h"
#include "core/http.h"
#include "core/limits.h"
#include "core/log.h"
#include "rpc/rpc_methods.h"
#include "rpc/rpc_proxy.h"

extern char **environ;

/* Splits the header line into its four fields; 0 or -1. */
static int
header(char *line, char **f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		f[i] = strsep(&line, i + 1 < n ? "\t" : "\n");
		if (f[i] == NULL)
			return -1;
	}
	return 0;
}

static int
serve(struct bp_config *cfg, struct bp_admit *adm, const char *key, const struct bp_network *net,
    const char *addr)
{
	struct bp_rpc_proxy *p;
	struct bp_req r;
	char *line = NULL;
	size_t cap = 0, i;
	ssize_t n;
	int status;

	if ((p = bp_rpc_proxy_new(cfg, &bp_rpc_node_table)) == NULL)
		return 1;
	bp_req_init(&r);
	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (n > cfg->max_body) {
			fputs("413 {}\n", stdout);
			fflush(stdout);
			continue;
		}
		bp_req_reset(&r);
		r.cfg = cfg;
		r.db = adm->db;
		r.lim = adm->lim;
		r.envp = environ;
		r.remote_addr = addr;
		r.authed = 1;
		r.body = line;
		r.body_len = (size_t)n;
		/*
		 * The key as it is now, not as it was when the connection started: a plan changed
		 * since (debug methods, limits) applies at the next message. Through the key cache,
		 * so SQLite only when the key generation moved or key_cache_seconds passed.
		 */
		switch (bp_auth_lookup(adm->keys, adm->db, adm->lim, cfg, key, &r.key)) {
		case BP_AUTH_OK:
			status = bp_rpc_proxy_serve(p, &r, net);
			break;
		case BP_AUTH_ERROR:
			status = bp_error(&r, 500, "internal_error", "authentication is unavailable");
			break;
		default:
			status = bp_error(&r, 401, "unauthorized", "invalid or revoked API key");
			break;
		}
		for (i = 0; i < r.out.len; i++)
			if (r.out.data[i] == '\n' || r.out.data[i] == '\r')
				r.out.data[i] = ' ';
		printf("%d ", status);
		fwrite(r.out.data, 1, r.out.len, stdout);
		putchar('\n');
		if (fflush(stdout) == EOF)
			break;
	}
	free(line);
	bp_req_free(&r);
	bp_rpc_proxy_free(p);
	return 0;
}

int
main(void)
{
	struct bp_config *cfg;
	struct bp_db *db = NULL;
	struct bp_limits *lim = NULL;
	struct bp_admit adm;
	struct bp_admission ad;
	const struct bp_network *net;
	char err[512], *line = NULL, *f[4];
	size_t cap = 0;
	int rc = 1;

	bp_log_init("ws-proxy");
	signal(SIGPIPE, SIG_IGN);
	memset(&adm, 0, sizeof(adm));
	if ((cfg = bp_config_load(NULL, err, sizeof(err))) == NULL) {
		bp_err("config: %s", err);
		return 1;
	}
	if (getline(&line, &cap, stdin) <= 0 || header(line, f, 4) == -1 ||
	    (net = bp_config_network(cfg, f[0], f[1])) == NULL) {
		bp_err("a bad first line from ws/subscribe");
		goto out;
	}
	if ((db = bp_db_open(cfg->database, 0)) == NULL ||
	    (lim = bp_limits_open_config(cfg)) == NULL ||
	    bp_admit_init(&adm, cfg, db, lim) == -1)
		goto out;
	/*
	 * The key as ws/subscribe admitted it (its plan and scopes). This counts one request more
	 * for the connection; a limit it meets then is not a refusal (the message was admitted).
	 */
	if (bp_admit(&adm, f[3], f[2], 0, 0, &ad) != 0 && ad.auth != BP_AUTH_OK) {
		bp_err("the connection's key was refused: %s", ad.message);
		goto out;
	}
	rc = serve(cfg, &adm, f[3], net, f[2]);
out:
	free(line);
	bp_admit_fini(&adm);
	bp_limits_close(lim);
	bp_db_close(db);
	bp_config_free(cfg);
	return rc;
}
