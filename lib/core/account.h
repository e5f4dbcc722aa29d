/*
 * Accounts and their API keys (schema/001_init.sql): this module owns accounts and api_keys and
 * is their one writer; the admin CLI (admin/blockport.c) creates, lists and changes them through
 * it. The request path reads keys through lib/core/auth.c's cached lookup, which stays there
 * (one SELECT by hash) so a cache miss costs one step and no copy through this module.
 *
 * A key's text is never stored: only its SHA-256, and its first BP_ACCOUNT_KEY_PREFIX_LEN
 * characters ("blockport_test_3f9a") so a list can show which key is which. A caller that changes
 * keys or plans bumps the key generation (bp_limits_bump_generation) afterwards, so every process
 * drops its key cache.
 */
#ifndef BP_ACCOUNT_H
#define BP_ACCOUNT_H

#include <stdint.h>

#include "config.h"

struct bp_db;

#define BP_ACCOUNT_EMAIL_MAX		254	/* characters of an e-mail address (RFC 5321) */
#define BP_ACCOUNT_KEY_PREFIX_LEN	19	/* "blockport_test_" and 4 hex digits */

/* An account, copied out (bp_account_find). */
struct bp_account {
	int64_t		 id;
	char		 email[BP_ACCOUNT_EMAIL_MAX + 1];
	char		 plan[BP_NAME_MAX];
};

/* A row of bp_account_each; the strings are valid during the call only. */
struct bp_account_row {
	int64_t		 id;
	const char	*email;
	const char	*plan;
	int64_t		 created_at;	/* Unix seconds */
	int64_t		 active_keys;	/* not revoked */
};

/* A row of bp_account_each_key; the strings are valid during the call only. */
struct bp_account_key_row {
	int64_t		 id;
	const char	*email;		/* of the key's account */
	const char	*prefix;	/* the key's first BP_ACCOUNT_KEY_PREFIX_LEN characters */
	const char	*kind;		/* "live" or "test" */
	const char	*scopes;	/* comma list; "" is every scope */
	const char	*name;
	int64_t		 created_at;	/* Unix seconds */
	int		 revoked;
};

/*
 * The account whose id or e-mail is who, into *out (may be NULL). 1 found, 0 none, -1 database
 * error.
 */
int		 bp_account_find(struct bp_db *, const char *who, struct bp_account *out);
/* The account of id, for the other domains (webhook quotas and e-mails): as bp_account_find. */
int		 bp_account_get(struct bp_db *, int64_t id, struct bp_account *out);
/* A new account; its id, 0 when an account has that e-mail, -1 on a database error. */
int64_t		 bp_account_create(struct bp_db *, const char *email, const char *plan);
/* Moves account id to plan. 0, or -1 on a database error. */
int		 bp_account_set_plan(struct bp_db *, int64_t id, const char *plan);
/*
 * Calls fn for every account in id order; fn returns 0 to go on, non-zero to stop. Returns the
 * number of calls, or -1 on a database error.
 */
int		 bp_account_each(struct bp_db *, int (*fn)(const struct bp_account_row *, void *),
		    void *arg);

/*
 * Stores key (a whole key, bp_key_generate) for account_id with scopes (a canonical comma list,
 * bp_scopes_format) and name; its kind is the one in its text. Returns the key's id, or -1 when
 * key is not the shape of a key or on a database error.
 */
int64_t		 bp_account_key_add(struct bp_db *, int64_t account_id, const char *key,
		    const char *scopes, const char *name);
/*
 * Calls fn for the keys of account_id (every account's when it is negative), revoked ones too,
 * in id order; fn returns 0 to go on, non-zero to stop. The number of calls, or -1.
 */
int		 bp_account_each_key(struct bp_db *, int64_t account_id,
		    int (*fn)(const struct bp_account_key_row *, void *), void *arg);
/* Revokes key id now. 1 revoked, 0 when no active key has that id, -1 on a database error. */
int		 bp_account_key_revoke(struct bp_db *, int64_t id);

#endif
