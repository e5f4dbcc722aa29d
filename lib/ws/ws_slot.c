/*
 * The per-key cap on open WebSocket connections (ws_slot.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/limits_redis.h"
#include "core/log.h"
#include "core/util.h"
#include "ws_slot.h"

int
bp_ws_slot_take(const char *database, const struct bp_key *k, int64_t *n)
{
	char dir[4200], path[4300];
	int64_t i;
	int fd;

	if (k->plan.ws_connections <= 0)
		return -3;	/* no cap */
	snprintf(dir, sizeof(dir), "%s.ws", database);
	if (mkdir(dir, 0770) == -1 && errno != EEXIST) {
		bp_err("%s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < k->plan.ws_connections; i++) {
		snprintf(path, sizeof(path), "%s/%lld.%lld", dir, (long long)k->id, (long long)i);
		if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0660)) == -1) {
			bp_err("%s: %s", path, strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			*n = i;
			return fd;
		}
		close(fd);
	}
	return -2;
}


int
bp_ws_slot_keep(const char *database, const struct bp_key *k, int *fd, int64_t *n)
{
	int64_t i;
	int nfd;

	if (*fd >= 0 && *n < k->plan.ws_connections)
		return 0;
	if (k->plan.ws_connections <= 0) {
		if (*fd >= 0)
			close(*fd);
		*fd = -3;
		return 0;
	}
	/*
	 * Only numbers below the cap are tried, and the slot held is not one of them: flock
	 * would see the process's own lock on it through the new descriptor as another's.
	 */
	if ((nfd = bp_ws_slot_take(database, k, &i)) < 0)
		return nfd;
	if (*fd >= 0)
		close(*fd);
	*fd = nfd;
	*n = i;
	return 0;
}

/* ARGV: key id, cap, token, lease (ms). The first free slot below the cap, or -2. */
static const char take_script[] =
"for i = 0, tonumber(ARGV[2]) - 1 do\n"
"  if redis.call('SET', 'bp:ws:' .. ARGV[1] .. ':' .. i, ARGV[3], 'NX', 'PX', ARGV[4]) then\n"
"    return { i }\n"
"  end\n"
"end\n"
"return { -2 }\n";

/* KEYS[1] a slot, ARGV: token, lease (ms; 0: delete). 1 when it was ours. */
static const char hold_script[] =
"if redis.call('GET', KEYS[1]) ~= ARGV[1] then return { 0 } end\n"
"if ARGV[2] == '0' then redis.call('DEL', KEYS[1]) else\n"
"  redis.call('PEXPIRE', KEYS[1], ARGV[2]) end\n"
"return { 1 }\n";

struct bp_ws_slots {
	struct bp_limits_redis	*redis;
	char			 token[96];	/* this connection's, the value of its slot */
	char			 held[64];	/* bp:ws:K:N of the slot held; "" none */
};

struct bp_ws_slots *
bp_ws_slots_redis(const struct bp_config *cfg)
{
	struct bp_ws_slots *h;
	char host[64];

	if (strncmp(cfg->limits_url, "redis://", 8) != 0 || (h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	if ((h->redis = bp_limits_redis_new(cfg->limits_url)) == NULL) {
		free(h);
		return NULL;
	}
	bp_limits_redis_fallback(h->redis, "WebSocket connections are capped per head");
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "head");
	host[sizeof(host) - 1] = '\0';
	snprintf(h->token, sizeof(h->token), "%s:%d:%lld", host, (int)getpid(),
	    (long long)bp_now_us());
	return h;
}

/* Deletes (lease 0) or renews the slot held; 1 when it was ours, 0 when not, -1 no answer. */
static int
hold(struct bp_ws_slots *h, const char *lease)
{
	const char *argv[3] = { h->held, h->token, lease };
	int64_t ours = 0;

	if (h->held[0] == '\0')
		return 0;
	if (bp_limits_redis_eval(h->redis, hold_script, 1, 3, argv, &ours, 1) != 1)
		return -1;
	return ours == 1;
}

void
bp_ws_slots_free(struct bp_ws_slots *h)
{
	if (h == NULL)
		return;
	(void)hold(h, "0");
	bp_limits_redis_free(h->redis);
	free(h);
}

int
bp_ws_slot_renew(struct bp_ws_slots *h)
{
	char lease[16];

	int rc;

	if (h == NULL || h->held[0] == '\0')
		return 0;
	snprintf(lease, sizeof(lease), "%d", BP_WS_SLOT_LEASE_MS);
	if ((rc = hold(h, lease)) == 0) {
		/* Its lease ran out (Redis unreachable that long): another may hold it now. */
		bp_warn("%s: lost to another connection; this one goes on uncounted", h->held);
		h->held[0] = '\0';
	}
	return rc == 1 ? 0 : -1;
}

int
bp_ws_slot_keep_redis(struct bp_ws_slots *h, const struct bp_key *k, int *fd, int64_t *n)
{
	char id[24], cap[24], lease[16];
	const char *argv[4] = { id, cap, h->token, lease };
	int64_t got;

	if (*fd != -3 && *fd != -1 && *n < k->plan.ws_connections)
		return 0;	/* a slot below the cap, in Redis or in a file */
	if (k->plan.ws_connections <= 0) {
		(void)hold(h, "0");
		h->held[0] = '\0';
		if (*fd >= 0)
			close(*fd);
		*fd = -3;
		return 0;
	}
	snprintf(id, sizeof(id), "%lld", (long long)k->id);
	snprintf(cap, sizeof(cap), "%lld", (long long)k->plan.ws_connections);
	snprintf(lease, sizeof(lease), "%d", BP_WS_SLOT_LEASE_MS);
	if (bp_limits_redis_eval(h->redis, take_script, 0, 4, argv, &got, 1) != 1)
		return -1;
	if (got < 0)
		return -2;
	/* The new one is held: the old (past a lowered cap) goes. */
	(void)hold(h, "0");
	if (*fd >= 0)
		close(*fd);
	snprintf(h->held, sizeof(h->held), "bp:ws:%s:%lld", id, (long long)got);
	*fd = BP_WS_SLOT_REDIS;
	*n = got;
	return 0;
}
