/*
 * API keys and scopes (SPEC.md section 5, DESIGN.md). A key is "blockport_live_" or
 * "blockport_test_" and 40 lower-case hex digits (160 random bits); only its SHA-256 is stored.
 * Lookups go through a per-process cache (struct bp_auth_cache, owned by the caller) that is
 * dropped whenever the admin CLI changes keys or plans (the generation counter in the limits
 * file), and after key_cache_seconds at most.
 */
#ifndef BP_AUTH_H
#define BP_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct bp_db;
struct bp_limits;

#define BP_KEY_PREFIX		"blockport_"
#define BP_KEY_RANDOM_BYTES	20
#define BP_KEY_LEN		(sizeof("blockport_live_") - 1 + 2 * BP_KEY_RANDOM_BYTES)

enum bp_scope {
	BP_SCOPE_RPC_READ,	/* 0: rpc:read */
	BP_SCOPE_RPC_WRITE,	/* 1: rpc:write */
	BP_SCOPE_DATA_READ,	/* 2: data:read */
	BP_SCOPE_WALLETS,	/* 3: wallets:manage */
	BP_SCOPE_WEBHOOKS,	/* 4: webhooks:manage */
	BP_SCOPE_GAS,		/* 5: gas:manage */
	BP_SCOPE_BUNDLER,	/* 6: bundler:send */
	BP_SCOPE__MAX
};

#define BP_SCOPE_BIT(s)		(1u << (s))
#define BP_SCOPES_ALL		((1u << BP_SCOPE__MAX) - 1)

/* A key that passed: who it is and what it may do. */
struct bp_key {
	int64_t		 id;
	int64_t		 account_id;
	int		 test;		/* a blockport_test_ key: testnets only */
	unsigned	 scopes;	/* BP_SCOPE_BIT()s */
	struct bp_plan	 plan;
};

enum bp_auth_result {
	BP_AUTH_OK,		/* 0 */
	BP_AUTH_MISSING,	/* 1: no key in the request */
	BP_AUTH_MALFORMED,	/* 2: not the shape of a key */
	BP_AUTH_UNKNOWN,	/* 3: no such key, or revoked */
	BP_AUTH_ERROR,		/* 4: the database failed */
	BP_AUTH_SCHEME,		/* 5: an Authorization scheme other than Bearer */
	BP_AUTH__MAX
};

/* The name of a scope ("rpc:read"), or NULL. */
const char	*bp_scope_name(enum bp_scope);
/*
 * Parses a comma list of scope names into a bit mask; an empty list is every scope.
 * Returns 0, or -1 naming the bad entry in bad (may be NULL).
 */
int		 bp_scopes_parse(const char *, unsigned *mask, char *bad, size_t badlen);
/* Writes the comma list of mask into buf; "" for every scope. What does not fit is left out. */
void		 bp_scopes_format(unsigned mask, char *buf, size_t len);

/*
 * Checks the shape of key: prefix, kind and 40 lower-case hex digits. Returns 1 for a test key,
 * 0 for a live key, -1 for anything else.
 */
int		 bp_key_shape(const char *key);
/* Makes a new random key of the given kind into buf (at least BP_KEY_LEN + 1); 0 or -1. */
int		 bp_key_generate(int test, char *buf, size_t len);

/* A key cache; one per process (or thread). NULL when out of memory; bp_auth_cache_free. */
struct bp_auth_cache *bp_auth_cache_new(void);
void		 bp_auth_cache_free(struct bp_auth_cache *);
/* Drops every entry (tests). */
void		 bp_auth_cache_clear(struct bp_auth_cache *);

/*
 * Finds the key: cache, then database. key is the key text; an Authorization header value of
 * another scheme ("Basic ...") is BP_AUTH_SCHEME. On BP_AUTH_OK fills *out (a copy the caller
 * owns).
 */
enum bp_auth_result bp_auth_lookup(struct bp_auth_cache *, struct bp_db *, struct bp_limits *,
		    const struct bp_config *, const char *key, struct bp_key *out);

#endif
