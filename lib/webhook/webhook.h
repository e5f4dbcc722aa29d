/*
 * Webhooks, the resource (SPEC.md sections 2-4, docs/webhooks.md): the rules of /v1/webhooks
 * (the url, the config of each event type, the states, the per-plan cap) and the webhooks
 * table (schema/007_webhooks.sql). Matching lives in webhook_match.c, the delivery queue in
 * webhook_queue.c, signing in webhook_sign.c.
 */
#ifndef BP_WEBHOOK_H
#define BP_WEBHOOK_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/config.h"

struct bp_db;

#define BP_WEBHOOK_ID_MAX	28	/* "wh_" + 24 hex digits + NUL */
#define BP_WEBHOOK_URL_MAX	2048	/* characters of a url */
#define BP_WEBHOOK_SECRET_MAX	72	/* "whsec_" + 64 hex digits + NUL */
#define BP_WEBHOOK_ITEMS_MAX	1000	/* addresses, contracts or hashes in a config list */
#define BP_WEBHOOK_CONFIG_MAX	(256 * 1024)	/* canonical config JSON, bytes */
#define BP_WEBHOOK_NETKEY_MAX	(2 * BP_NAME_MAX)	/* "ethereum.devnet" */

enum bp_webhook_type {
	BP_WEBHOOK_ADDRESS_ACTIVITY,	/* 0 */
	BP_WEBHOOK_TOKEN_TRANSFER,	/* 1 */
	BP_WEBHOOK_NFT_TRANSFER,	/* 2 */
	BP_WEBHOOK_MINED_TRANSACTION,	/* 3 */
	BP_WEBHOOK_LOG,			/* 4 */
	BP_WEBHOOK_TYPE__MAX
};

enum bp_webhook_status {
	BP_WEBHOOK_ACTIVE,	/* 0 */
	BP_WEBHOOK_PAUSED,	/* 1 */
	BP_WEBHOOK_DISABLED,	/* 2: set by the operator (blockport webhook disable) */
	BP_WEBHOOK_STATUS__MAX
};

struct bp_webhook {
	char			 id[BP_WEBHOOK_ID_MAX];
	int64_t			 account_id;
	char			 url[BP_WEBHOOK_URL_MAX + 1];
	char			 chain[BP_NAME_MAX];
	char			 network[BP_WEBHOOK_NETKEY_MAX];
	enum bp_webhook_type	 type;
	enum bp_webhook_status	 status;
	char			 secret[BP_WEBHOOK_SECRET_MAX];
	int64_t			 created_at;
	int64_t			 updated_at;
	char			*config;	/* canonical JSON; owned, bp_webhook_clear frees it */
	uint32_t		 types;		/* format B: its types (webhook_b.h); 0: format A */
};

/* The index of s in names[0..n), or -1: the names of types and states. */
int		 bp_webhook_name_index(const char *const *names, size_t n, const char *s);
const char	*bp_webhook_type_name(enum bp_webhook_type);
int		 bp_webhook_type_parse(const char *, enum bp_webhook_type *);
const char	*bp_webhook_status_name(enum bp_webhook_status);
/* "active", "paused" or "disabled"; 0 or -1. */
int		 bp_webhook_status_parse(const char *, enum bp_webhook_status *);

/*
 * Checks config (untrusted) for event type t and writes its canonical JSON (lower-case
 * addresses and hashes, known keys only) into canon. Returns 0, or -1 with why naming the field
 * ("config.addresses[3]: not an address").
 */
int		 bp_webhook_config_parse(enum bp_webhook_type t, const cJSON *config,
		    struct bp_buf *canon, char *why, size_t cap);

/* A POST or PATCH body, checked: pointers into the body, config canonical in canon. */
struct bp_webhook_input {
	const char		*url;		/* NULL: not given (PATCH) */
	const char		*chain;
	const struct bp_network	*net;		/* the network chain means for the key */
	int			 has_type;
	enum bp_webhook_type	 type;
	int			 has_status;
	enum bp_webhook_status	 status;
	int			 has_config;	/* config, or format B's filters */
	struct bp_buf		 canon;		/* bp_buf_free it */
	uint32_t		 types;		/* format B's types (create: asked; PATCH: the
						   webhook's); 0: format A */
};

/*
 * Checks a POST (create set) or PATCH body: url (https, at most 2,048 bytes, a host that is not
 * private unless allow_private_urls), chain (an EVM chain the key may use), event_type, config
 * (required on create; re-checked on PATCH against current_type), status (PATCH: active or
 * paused). Returns 0, or -1 with why, which starts with the field's name. in->canon is
 * initialised either way.
 */
int		 bp_webhook_input(const struct bp_config *cfg, const cJSON *body, int create,
		    int testkey, enum bp_webhook_type current_type, struct bp_webhook_input *in,
		    char *why, size_t cap);
/*
 * A PATCH body of webhook w: bp_webhook_input for a format-A webhook; for a format-B one,
 * filters in place of config. (A create body with an upper-case event_type or with
 * event_types is read by bp_webhook_input as format B: in->types set, filters in in->canon.)
 */
int		 bp_webhook_input_patch(const struct bp_config *cfg, const cJSON *body,
		    int testkey, const struct bp_webhook *w, struct bp_webhook_input *in,
		    char *why, size_t cap);

/*
 * Inserts the account's new webhook (active, with a fresh signing secret) unless the account
 * already has cap webhooks (0: no cap). Returns 1 with out filled, 0 at the cap, -1 on a
 * database error. out->config is owned by out.
 */
int		 bp_webhook_create(struct bp_db *, int64_t account_id, int64_t cap,
		    const struct bp_webhook_input *in, struct bp_webhook *out);
/* The account's webhook id (account_id < 0: any account's): 1 found, 0 none, -1 error. */
int		 bp_webhook_get(struct bp_db *, int64_t account_id, const char *id,
		    struct bp_webhook *out);
/*
 * Sets url, config and status (each NULL: unchanged) on the account's webhook id. A status
 * asked of a disabled webhook writes nothing at all and returns 2 (out filled). 1 done with
 * out filled, 0 none, -1 error.
 */
int		 bp_webhook_update(struct bp_db *, int64_t account_id, const char *id,
		    const char *url, const char *config, const enum bp_webhook_status *status,
		    struct bp_webhook *out);
/* Sets the status whatever it was (the operator's enable/disable). */
int		 bp_webhook_set_status(struct bp_db *, const char *id, enum bp_webhook_status);
/*
 * Pauses webhook id if it is active (the worker, after the last retry; in the caller's
 * transaction), updated_at now (Unix seconds): 1 paused now, 0 it was not active, -1 error.
 */
int		 bp_webhook_pause(struct bp_db *, const char *id, int64_t now);
/* Deletes the account's webhook and its events (pending ones are dropped). 1, 0 none, -1. */
int		 bp_webhook_delete(struct bp_db *, int64_t account_id, const char *id);
/*
 * Whether w is of the key's kind: a test key's (testkey) webhooks watch a network configured
 * testnet = true, a live key's any other. 1 or 0.
 */
/* The configured network of a chain key ("ethereum.devnet"); NULL when it is not. */
const struct bp_network *bp_webhook_network(const struct bp_config *, const char *key);
int		 bp_webhook_of_kind(const struct bp_config *, const struct bp_webhook *w,
		    int testkey);
/*
 * Appends {webhooks:[...], page, limit, total} of the account's webhooks of the key's kind
 * (bp_webhook_of_kind), newest first. 0 or -1.
 */
int		 bp_webhook_list(struct bp_db *, const struct bp_config *, int64_t account_id,
		    int testkey, const enum bp_webhook_status *, int64_t page, int64_t limit,
		    struct bp_buf *b);
/*
 * Appends a webhook's JSON: with full, the whole webhook and its signing secret (the create
 * answer); without, what PATCH answers (id, url, chain, event_type, status, updated_at).
 */
int		 bp_webhook_json(const struct bp_webhook *, int full, struct bp_buf *b);
/* Frees what w owns. */
void		 bp_webhook_clear(struct bp_webhook *w);

#endif
