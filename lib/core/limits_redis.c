/*
 * The rate-limit counters in Redis (limits_redis.h). Each counted owner (a key, or a client
 * address) is one hash, bp:l:k:ID or bp:l:a:HASH, holding the same three counters as a slot of
 * the mapped file: for requests and compute units a mode (b: a bucket's full-again time as
 * seconds and nanoseconds; w: a calendar second and its count) and the UTC day with its count.
 * Lua numbers are doubles, exact to 2^53 only, so times are never whole nanoseconds since the
 * epoch: the script works in nanoseconds relative to now. Keys expire (PEXPIRE) once nothing in
 * them could still refuse: a bucket once full again, a second once past, a day at midnight.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "limits_redis.h"
#include "log.h"
#include "util.h"

#define GEN_KEY		"bp:gen"
#define CONNECT_MS	100	/* loopback or a LAN: a live Redis answers within a millisecond */
#define COMMAND_MS	250
#define RETRY_US	INT64_C(1000000)	/* a failed connection is tried again after this */
#define ADDR_BIT	(UINT64_C(1) << 63)

/*
 * KEYS[1] the owner's hash, KEYS[2] the generation. ARGV: rps rpd cups burst nreq nday cu, then
 * now as seconds and nanoseconds (seconds -1: Redis's own clock, one clock for every head).
 * Returns { verdict, limit, remaining, reset, retry_after, generation (-1: none) }; the same steps, in the
 * same order, as bp_limits_take_ns: what passed before a refusal stays counted.
 */
static const char script[] =
"local rps, rpd, cups, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]),\n"
"    tonumber(ARGV[4])\n"
"local nreq, nday, cu = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])\n"
"local s, n = tonumber(ARGV[8]), tonumber(ARGV[9])\n"
"if s < 0 then local t = redis.call('TIME'); s = tonumber(t[1]); n = tonumber(t[2]) * 1000 end\n"
"local NS, UNL, M32, M40 = 1000000000, 2147483647, 4294967295, 1099511627775\n"
"local h = redis.call('HMGET', KEYS[1], 'rm', 'rs', 'rn', 'um', 'us', 'un', 'dd', 'dc')\n"
"local set, day = {}, math.floor(s / 86400)\n"
"local lim, rem, reset, retry = UNL, UNL, s + 1, 0\n"
"local function fill(rate, count)\n"
"  local l = rate > 0 and rate or UNL\n"
"  local r = l > count and l - count or 0\n"
"  if rate <= 0 and r == 0 then r = 1 end\n"
"  return l, r\n"
"end\n"
"lim, rem = fill(rps, 0)\n"
"if rps > 0 and burst > 0 then lim = rps * burst; rem = lim end\n"
"local function waits(ns)\n"
"  local w = math.floor((ns + NS - 1) / NS)\n"
"  return w > 0 and w or 1\n"
"end\n"
"local function second(i, f, max, k, req)\n"
"  local mode, a, b = h[i], tonumber(h[i + 1]), tonumber(h[i + 2])\n"
"  if max > 0 and burst > 0 then\n"
"    local t, span, d = math.floor(NS / max), burst * NS, 0\n"
"    if t < 1 then t = 1 end\n"
"    if mode == 'b' then d = (a - s) * NS + (b - n) end\n"
"    if d < 0 then d = 0 end\n"
"    if d > span then d = span end\n"
"    local nx = d + k * t\n"
"    if nx > span then\n"
"      if req then lim = max * burst; rem = math.floor((span - d) / t);\n"
"        reset = s + math.floor((n + d + NS - 1) / NS) end\n"
"      retry = waits(nx - span)\n"
"      return false\n"
"    end\n"
"    if k > 0 then\n"
"      local at = n + nx\n"
"      local sec = math.floor(at / NS)\n"
"      table.insert(set, f .. 'm'); table.insert(set, 'b')\n"
"      table.insert(set, f .. 's'); table.insert(set, s + sec)\n"
"      table.insert(set, f .. 'n'); table.insert(set, at - sec * NS)\n"
"    end\n"
"    if req then lim = max * burst; rem = math.floor((span - nx) / t);\n"
"      reset = s + math.floor((n + nx + NS - 1) / NS) end\n"
"    return true\n"
"  end\n"
"  local count = (mode == 'w' and a == s) and b or 0\n"
"  if max > 0 and count + k > max then\n"
"    if req then rem = 0 end\n"
"    retry = 1\n"
"    return false\n"
"  end\n"
"  if count + k > M32 then count = M32 - k end\n"
"  count = count + k\n"
"  if k > 0 then\n"
"    table.insert(set, f .. 'm'); table.insert(set, 'w')\n"
"    table.insert(set, f .. 's'); table.insert(set, s)\n"
"    table.insert(set, f .. 'n'); table.insert(set, count)\n"
"  end\n"
"  if req then lim, rem = fill(max, count) end\n"
"  return true\n"
"end\n"
"local dd = tonumber(h[7])\n"
"local function done(v)\n"
"  if #set > 0 then\n"
"    redis.call('HSET', KEYS[1], unpack(set))\n"
"    local ttl = 2 + burst\n"
"    if dd == day then ttl = math.max(ttl, (day + 1) * 86400 - s + 300) end\n"
"    redis.call('PEXPIRE', KEYS[1], ttl * 1000)\n"
"  end\n"
"  return { v, lim, rem, reset, retry, tonumber(redis.call('GET', KEYS[2]) or '-1') }\n"
"end\n"
"if not second(1, 'r', rps, nreq, true) then return done(1) end\n"
"if nday > 0 then\n"
"  local count = dd == day and tonumber(h[8]) or 0\n"
"  if rpd > 0 and count + nday > rpd then\n"
"    retry = (day + 1) * 86400 - s\n"
"    return done(2)\n"
"  end\n"
"  if count + nday > M40 then count = M40 - nday end\n"
"  dd = day\n"
"  table.insert(set, 'dd'); table.insert(set, day)\n"
"  table.insert(set, 'dc'); table.insert(set, count + nday)\n"
"end\n"
"if cu > 0 and not second(4, 'u', cups, cu, false) then return done(3) end\n"
"return done(0)\n";

/* The generation's bump: a generation lost with Redis's data starts again above any before. */
static const char bump_script[] =
"if not redis.call('GET', KEYS[1]) then\n"
"  local t = redis.call('TIME')\n"
"  redis.call('SET', KEYS[1], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))\n"
"end\n"
"return redis.call('INCR', KEYS[1])\n";

struct bp_limits_redis {
	char		 host[256];
	int		 port;
	int		 db;
	char		 password[256];
	redisContext	*c;
	char		 sha[48];	/* the script's, loaded on this connection */
	int64_t		 retry_at;	/* bp_mono_us(): no connection tried before */
	uint64_t	 gen;		/* the generation last seen on this connection */
	int		 warned;	/* the current outage was logged */
	const char	*fallback;	/* what happens meanwhile, for the warning */
};

/* Parses url into r (may be NULL to only check it). */
static int
parse(const char *url, struct bp_limits_redis *r, char *err, size_t errlen)
{
	const char *p, *at, *colon, *slash;
	char host[256] = "", pass[256] = "";
	int64_t port = 6379, db = 0;
	size_t n;

	if (strncmp(url, "redis://", 8) != 0) {
		snprintf(err, errlen, "not a redis:// URL: '%s'", url);
		return -1;
	}
	p = url + 8;
	slash = p + strcspn(p, "/");
	if ((at = memchr(p, '@', (size_t)(slash - p))) != NULL) {
		/* redis://:PASSWORD@host (or a user name, which Redis 6 ACLs take; not kept) */
		const char *pw = memchr(p, ':', (size_t)(at - p));

		if (pw != NULL && (n = (size_t)(at - pw - 1)) < sizeof(pass))
			memcpy(pass, pw + 1, n), pass[n] = '\0';
		p = at + 1;
	}
	colon = memchr(p, ':', (size_t)(slash - p));
	n = (size_t)((colon != NULL ? colon : slash) - p);
	if (n == 0 || n >= sizeof(host)) {
		snprintf(err, errlen, "no host in '%s'", url);
		return -1;
	}
	memcpy(host, p, n);
	host[n] = '\0';
	if (colon != NULL) {
		char num[16];

		n = (size_t)(slash - colon - 1);
		if (n == 0 || n >= sizeof(num) ||
		    (memcpy(num, colon + 1, n), num[n] = '\0', bp_parse_int64(num, 1, 65535,
		    &port) == -1)) {
			snprintf(err, errlen, "not a port from 1 to 65535 in '%s'", url);
			return -1;
		}
	}
	if (*slash == '/' && slash[1] != '\0' && bp_parse_int64(slash + 1, 0, 1000, &db) == -1) {
		snprintf(err, errlen, "not a database number after the / in '%s'", url);
		return -1;
	}
	if (r != NULL) {
		memcpy(r->host, host, sizeof(host));
		memcpy(r->password, pass, sizeof(pass));
		r->port = (int)port;
		r->db = (int)db;
	}
	return 0;
}

int
bp_limits_redis_parse(const char *url, char *err, size_t errlen)
{
	return parse(url, NULL, err, errlen);
}

struct bp_limits_redis *
bp_limits_redis_new(const char *url)
{
	struct bp_limits_redis *r;
	char err[512];

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	if (parse(url, r, err, sizeof(err)) == -1) {
		bp_err("limits: %s", err);
		free(r);
		return NULL;
	}
	return r;
}

void
bp_limits_redis_free(struct bp_limits_redis *r)
{
	if (r == NULL)
		return;
	if (r->c != NULL)
		redisFree(r->c);
	free(r);
}

/* Drops the connection after a failure: nothing is tried again for RETRY_US. */
static void
fail(struct bp_limits_redis *r, const char *what)
{
	if (!r->warned)
		bp_warn("limits: Redis %s:%d: %s; %s, until it answers (logged once an outage)",
		    r->host, r->port, what, r->fallback != NULL ? r->fallback : "keys are counted "
		    "on this head only, requests without a valid key refused");
	r->warned = 1;
	if (r->c != NULL)
		redisFree(r->c);
	r->c = NULL;
	r->retry_at = bp_mono_us() + RETRY_US;
}

/* A command's reply, or NULL (and the connection dropped) when it failed or was an error. */
static redisReply *
command(struct bp_limits_redis *r, int argc, const char **argv, const size_t *lens)
{
	redisReply *rep = redisCommandArgv(r->c, argc, argv, lens);

	if (rep == NULL) {
		fail(r, r->c->errstr[0] != '\0' ? r->c->errstr : "no answer");
		return NULL;
	}
	if (rep->type == REDIS_REPLY_ERROR) {
		char what[300];

		snprintf(what, sizeof(what), "%s: %s", argv[0], rep->str);
		freeReplyObject(rep);
		fail(r, what);
		return NULL;
	}
	return rep;
}

/* Connects when not connected (and not inside a retry pause); 0, or -1. */
static int
connected(struct bp_limits_redis *r)
{
	struct timeval ct = { 0, CONNECT_MS * 1000 }, rt = { 0, COMMAND_MS * 1000 };
	const char *argv[3];
	size_t lens[3];
	char db[16];
	redisReply *rep;

	if (r->c != NULL)
		return 0;
	if (bp_mono_us() < r->retry_at)
		return -1;
	if ((r->c = redisConnectWithTimeout(r->host, r->port, ct)) == NULL || r->c->err) {
		fail(r, r->c != NULL ? r->c->errstr : "cannot connect");
		return -1;
	}
	redisSetTimeout(r->c, rt);
	if (r->password[0] != '\0') {
		argv[0] = "AUTH", argv[1] = r->password;
		lens[0] = 4, lens[1] = strlen(r->password);
		if ((rep = command(r, 2, argv, lens)) == NULL)
			return -1;
		freeReplyObject(rep);
	}
	if (r->db != 0) {
		snprintf(db, sizeof(db), "%d", r->db);
		argv[0] = "SELECT", argv[1] = db;
		lens[0] = 6, lens[1] = strlen(db);
		if ((rep = command(r, 2, argv, lens)) == NULL)
			return -1;
		freeReplyObject(rep);
	}
	/* Loaded once per connection; EVALSHA sends only its digest afterwards. */
	argv[0] = "SCRIPT", argv[1] = "LOAD", argv[2] = script;
	lens[0] = 6, lens[1] = 4, lens[2] = sizeof(script) - 1;
	if ((rep = command(r, 3, argv, lens)) == NULL)
		return -1;
	if (rep->type != REDIS_REPLY_STRING || rep->len >= sizeof(r->sha)) {
		freeReplyObject(rep);
		fail(r, "SCRIPT LOAD did not answer a digest");
		return -1;
	}
	memcpy(r->sha, rep->str, rep->len);
	r->sha[rep->len] = '\0';
	freeReplyObject(rep);
	if (r->warned)
		bp_info("limits: Redis %s:%d answers again", r->host, r->port);
	r->warned = 0;
	return 0;
}

/* The owner's hash: keys and client addresses apart, as in the file's two halves. */
static void
owner_key(char *buf, size_t len, uint64_t who)
{
	if (who & ADDR_BIT)
		snprintf(buf, len, "bp:l:a:%016llx", (unsigned long long)who);
	else
		snprintf(buf, len, "bp:l:k:%llu", (unsigned long long)who);
}

int
bp_limits_redis_take(struct bp_limits_redis *r, uint64_t who, const struct bp_limit_plan *plan,
    unsigned nreq, unsigned nday, unsigned cu, int64_t now_ns, struct bp_limit_state *st)
{
	char key[40], a[9][24];
	const char *argv[14];
	size_t lens[14];
	int64_t v[9];
	redisReply *rep;
	int i, tries, verdict;

	if (connected(r) == -1)
		return -1;
	owner_key(key, sizeof(key), who);
	v[0] = plan->rps, v[1] = plan->rpd, v[2] = plan->cups, v[3] = plan->burst;
	v[4] = nreq, v[5] = nday, v[6] = cu;
	v[7] = now_ns < 0 ? -1 : now_ns / INT64_C(1000000000);
	v[8] = now_ns < 0 ? 0 : now_ns % INT64_C(1000000000);
	argv[0] = "EVALSHA", argv[1] = r->sha, argv[2] = "2", argv[3] = key, argv[4] = GEN_KEY;
	for (i = 0; i < 9; i++) {
		snprintf(a[i], sizeof(a[i]), "%lld", (long long)v[i]);
		argv[5 + i] = a[i];
	}
	for (i = 0; i < 14; i++)
		lens[i] = strlen(argv[i]);
	for (tries = 0;; tries++) {
		if ((rep = redisCommandArgv(r->c, 14, argv, lens)) == NULL) {
			fail(r, r->c->errstr[0] != '\0' ? r->c->errstr : "no answer");
			return -1;
		}
		/* A Redis restarted (or SCRIPT FLUSHed) forgot the script: load it again, once. */
		if (tries == 0 && rep->type == REDIS_REPLY_ERROR &&
		    strncmp(rep->str, "NOSCRIPT", 8) == 0) {
			freeReplyObject(rep);
			redisFree(r->c);
			r->c = NULL;
			if (connected(r) == -1)
				return -1;
			argv[1] = r->sha;
			continue;
		}
		break;
	}
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 6) {
		char what[300];

		snprintf(what, sizeof(what), "the admission script answered %s",
		    rep->type == REDIS_REPLY_ERROR ? rep->str : "no array of 6");
		freeReplyObject(rep);
		fail(r, what);
		return -1;
	}
	for (i = 0; i < 6; i++)
		v[i] = rep->element[i]->type == REDIS_REPLY_INTEGER ? rep->element[i]->integer : 0;
	freeReplyObject(rep);
	verdict = (int)v[0];
	st->limit = v[1];
	st->remaining = v[2];
	st->reset = v[3];
	st->retry_after = v[4];
	/* None: Redis lost its data and no key changed since, so nothing did. */
	if (v[5] >= 0)
		r->gen = (uint64_t)v[5];
	return verdict;
}

int
bp_limits_redis_generation(struct bp_limits_redis *r, uint64_t *gen)
{
	const char *argv[2] = { "GET", GEN_KEY };
	size_t lens[2] = { 3, sizeof(GEN_KEY) - 1 };
	redisReply *rep;
	int64_t g;

	if (connected(r) == -1 || (rep = command(r, 2, argv, lens)) == NULL)
		return -1;
	/* None: Redis lost its data and no key changed since, so nothing did. */
	if (rep->type == REDIS_REPLY_STRING && bp_parse_int64(rep->str, 0, INT64_MAX,
	    &g) == 0)
		r->gen = (uint64_t)g;
	freeReplyObject(rep);
	*gen = r->gen;
	return 0;
}

uint64_t
bp_limits_redis_seen(const struct bp_limits_redis *r)
{
	return r->gen;
}

int
bp_limits_redis_bump(struct bp_limits_redis *r)
{
	const char *argv[4] = { "EVAL", bump_script, "1", GEN_KEY };
	size_t lens[4] = { 4, sizeof(bump_script) - 1, 1, sizeof(GEN_KEY) - 1 };
	redisReply *rep;

	if (connected(r) == -1 || (rep = command(r, 4, argv, lens)) == NULL)
		return -1;
	if (rep->type == REDIS_REPLY_INTEGER)
		r->gen = (uint64_t)rep->integer;
	freeReplyObject(rep);
	return 0;
}

void
bp_limits_redis_fallback(struct bp_limits_redis *r, const char *what)
{
	r->fallback = what;
}

int
bp_limits_redis_eval(struct bp_limits_redis *r, const char *lua, int nkeys, int argc,
    const char **argv, int64_t *out, size_t nout)
{
	const char *av[16];
	size_t lens[16], i, n;
	char nk[16];
	redisReply *rep;

	if (argc < 0 || argc > 13 || connected(r) == -1)
		return -1;
	snprintf(nk, sizeof(nk), "%d", nkeys);
	av[0] = "EVAL", av[1] = lua, av[2] = nk;
	for (i = 0; i < (size_t)argc; i++)
		av[3 + i] = argv[i];
	for (i = 0; i < (size_t)argc + 3; i++)
		lens[i] = strlen(av[i]);
	if ((rep = command(r, argc + 3, av, lens)) == NULL)
		return -1;
	if (rep->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(rep);
		fail(r, "a script answered no array");
		return -1;
	}
	n = rep->elements;
	for (i = 0; i < n && i < nout; i++)
		out[i] = rep->element[i]->type == REDIS_REPLY_INTEGER ? rep->element[i]->integer : 0;
	freeReplyObject(rep);
	return (int)n;
}
