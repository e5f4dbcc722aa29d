#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "admit.h"
#include "config.h"

int
bp_admit_init(struct bp_admit *a, const struct bp_config *cfg, struct bp_db *db,
    struct bp_limits *lim)
{
	a->cfg = cfg;
	a->db = db;
	a->lim = lim;
	return (a->keys = bp_auth_cache_new()) == NULL ? -1 : 0;
}

void
bp_admit_fini(struct bp_admit *a)
{
	bp_auth_cache_free(a->keys);
	a->keys = NULL;
}

/* Sets out to a refusal; returns status. */
static int
refuse(struct bp_admission *out, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
refuse(struct bp_admission *out, int status, const char *code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->message, sizeof(out->message), fmt, ap);
	va_end(ap);
	out->status = status;
	out->code = code;
	return status;
}

int
bp_admit_limited(struct bp_admission *out, enum bp_limit_verdict v)
{
	out->verdict = v;
	return refuse(out, 429, "rate_limited", "rate limit exceeded: %s; retry after %lld s",
	    bp_limit_what(v), (long long)out->limit.retry_after);
}

/* The message of a 401: what was wrong with the credentials sent. */
static int
unauthorized(struct bp_admission *out, const char *key)
{
	switch (out->auth) {
	case BP_AUTH_MISSING:
		return refuse(out, 401, "unauthorized", "missing API key: send it in the X-API-Key "
		    "header or as \"Authorization: Bearer KEY\"");
	case BP_AUTH_SCHEME: {
		size_t n = strcspn(key, " ");

		return refuse(out, 401, "unauthorized", "the Authorization scheme %.*s is not "
		    "supported: send the API key as \"Authorization: Bearer KEY\" or in the "
		    "X-API-Key header", (int)(n > 32 ? 32 : n), key);
	}
	case BP_AUTH_MALFORMED:
		return refuse(out, 401, "unauthorized", "malformed API key");
	default:
		return refuse(out, 401, "unauthorized", "invalid or revoked API key");
	}
}

enum bp_limit_verdict
bp_admit_charge(struct bp_limits *lim, const struct bp_key *k, unsigned nreq, unsigned nday,
    unsigned cu, struct bp_limit_state *st)
{
	struct bp_limit_plan lp = { k->plan.rps, k->plan.rpd, k->plan.cups, k->plan.burst };

	return bp_limits_take(lim, (uint64_t)k->id, &lp, nreq, nday, cu, st);
}

static int
admit(const struct bp_admit *a, const char *key, const char *addr, int count, unsigned nday,
    unsigned cu, struct bp_admission *out)
{
	/* No burst: a client without a valid key gets only 401s, nothing worth a burst. */
	struct bp_limit_plan anon = { a->cfg->anon_rps, 0, 0, 0 };
	uint64_t who = bp_limits_addr_id(addr != NULL ? addr : "");

	memset(out, 0, sizeof(*out));
	out->auth = bp_auth_lookup(a->keys, a->db, a->lim, a->cfg, key, &out->key);
	if (out->auth == BP_AUTH_ERROR) {
		/* Nothing counted, but the figures are the client address's, as for any 401. */
		bp_limits_take(a->lim, who, &anon, 0, 0, 0, &out->limit);
		return refuse(out, 500, "internal_error", "authentication is unavailable");
	}
	if (out->auth != BP_AUTH_OK) {
		/* Requests without a valid key are counted per client address (key guessing). */
		out->verdict = bp_limits_take(a->lim, who, &anon, 1, 0, 0, &out->limit);
		if (out->verdict != BP_LIMIT_OK)
			return bp_admit_limited(out, out->verdict);
		return unauthorized(out, key);
	}
	if (!count)
		return 0;
	out->verdict = bp_admit_charge(a->lim, &out->key, 1, nday, cu, &out->limit);
	if (out->verdict != BP_LIMIT_OK)
		return bp_admit_limited(out, out->verdict);
	return 0;
}

int
bp_admit(const struct bp_admit *a, const char *key, const char *addr, unsigned nday,
    unsigned cu, struct bp_admission *out)
{
	return admit(a, key, addr, 1, nday, cu, out);
}

int
bp_admit_deferred(const struct bp_admit *a, const char *key, const char *addr,
    struct bp_admission *out)
{
	return admit(a, key, addr, 0, 0, 0, out);
}
