/*
 * Webhooks, the resource: validation of /v1/webhooks bodies and the webhooks table
 * (docs/webhooks.md).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/db.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "core/valid.h"
#include "evm/address.h"
#include "net/fetch.h"
#include "webhook.h"
#include "webhook_b.h"

static const char *const type_names[BP_WEBHOOK_TYPE__MAX] = {
	"address_activity",	/* BP_WEBHOOK_ADDRESS_ACTIVITY */
	"token_transfer",	/* BP_WEBHOOK_TOKEN_TRANSFER */
	"nft_transfer",		/* BP_WEBHOOK_NFT_TRANSFER */
	"mined_transaction",	/* BP_WEBHOOK_MINED_TRANSACTION */
	"log",			/* BP_WEBHOOK_LOG */
};

static const char *const status_names[BP_WEBHOOK_STATUS__MAX] = {
	"active",	/* BP_WEBHOOK_ACTIVE */
	"paused",	/* BP_WEBHOOK_PAUSED */
	"disabled",	/* BP_WEBHOOK_DISABLED */
};

#define TOPICS_MAX	4

const char *
bp_webhook_type_name(enum bp_webhook_type t)
{
	return t < BP_WEBHOOK_TYPE__MAX ? type_names[t] : "?";
}

int
bp_webhook_name_index(const char *const *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

int
bp_webhook_type_parse(const char *s, enum bp_webhook_type *out)
{
	int i = bp_webhook_name_index(type_names, BP_WEBHOOK_TYPE__MAX, s);

	if (i >= 0)
		*out = (enum bp_webhook_type)i;
	return i >= 0 ? 0 : -1;
}

const char *
bp_webhook_status_name(enum bp_webhook_status s)
{
	return s < BP_WEBHOOK_STATUS__MAX ? status_names[s] : "?";
}

int
bp_webhook_status_parse(const char *s, enum bp_webhook_status *out)
{
	int i = bp_webhook_name_index(status_names, BP_WEBHOOK_STATUS__MAX, s);

	if (i >= 0)
		*out = (enum bp_webhook_status)i;
	return i >= 0 ? 0 : -1;
}

/* ---- config ---- */

/* A 0x hex string of n bytes, any case, written lower-case into out (2n + 3 bytes). */
static int
hex_item(const cJSON *j, size_t n, char *out)
{
	uint8_t b[32];

	if (!cJSON_IsString(j) || n > sizeof(b) ||
	    bp_hex_decode_fixed(j->valuestring, strlen(j->valuestring), b, n) == -1)
		return -1;
	return bp_hex_encode(b, n, out, 2 * n + 3);
}

/*
 * Appends "name":[items] to canon from the array j of n-byte hex strings (20: addresses, 32:
 * hashes), 1 to BP_WEBHOOK_ITEMS_MAX of them. 0, or -1 with why.
 */
static int
hex_list(const cJSON *j, const char *name, size_t n, struct bp_buf *canon, char *why,
    size_t cap)
{
	const cJSON *it;
	char s[67];
	int i = 0;

	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 ||
	    cJSON_GetArraySize(j) > BP_WEBHOOK_ITEMS_MAX) {
		snprintf(why, cap, "config.%s must be an array of 1 to %d %s", name,
		    BP_WEBHOOK_ITEMS_MAX, n == 20 ? "addresses" : "hashes");
		return -1;
	}
	if (bp_buf_printf(canon, "\"%s\":[", name) == -1)
		goto big;
	cJSON_ArrayForEach(it, j) {
		if (hex_item(it, n, s) == -1) {
			snprintf(why, cap, "config.%s[%d] must be a 0x %s of %zu hex digits", name,
			    i, n == 20 ? "address" : "hash", 2 * n);
			return -1;
		}
		if (bp_buf_printf(canon, "%s\"%s\"", i++ > 0 ? "," : "", s) == -1)
			goto big;
	}
	if (bp_buf_adds(canon, "]") == -1)
		goto big;
	return 0;
big:
	snprintf(why, cap, "config is too large");
	return -1;
}

/*
 * The log filter's topics: up to 4 positions, each null, a hash or an array of hashes. *named
 * is set when a position is not null (a filter of nulls only matches every log).
 */
static int
topics_list(const cJSON *j, struct bp_buf *canon, int *named, char *why, size_t cap)
{
	const cJSON *pos, *it;
	char s[67];
	int i = 0, k;

	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) > TOPICS_MAX) {
		snprintf(why, cap, "config.topics must be an array of at most 4 positions");
		return -1;
	}
	if (bp_buf_adds(canon, "\"topics\":[") == -1)
		goto big;
	cJSON_ArrayForEach(pos, j) {
		if (i > 0 && bp_buf_adds(canon, ",") == -1)
			goto big;
		*named |= !cJSON_IsNull(pos);
		if (cJSON_IsNull(pos)) {
			if (bp_buf_adds(canon, "null") == -1)
				goto big;
		} else if (cJSON_IsString(pos)) {
			if (hex_item(pos, 32, s) == -1)
				goto bad;
			if (bp_buf_printf(canon, "\"%s\"", s) == -1)
				goto big;
		} else if (cJSON_IsArray(pos) && cJSON_GetArraySize(pos) >= 1 &&
		    cJSON_GetArraySize(pos) <= BP_WEBHOOK_ITEMS_MAX) {
			k = 0;
			if (bp_buf_adds(canon, "[") == -1)
				goto big;
			cJSON_ArrayForEach(it, pos) {
				if (hex_item(it, 32, s) == -1)
					goto bad;
				if (bp_buf_printf(canon, "%s\"%s\"", k++ > 0 ? "," : "", s) == -1)
					goto big;
			}
			if (bp_buf_adds(canon, "]") == -1)
				goto big;
		} else
			goto bad;
		i++;
	}
	return bp_buf_adds(canon, "]") == -1 ? (snprintf(why, cap, "config is too large"), -1) : 0;
bad:
	snprintf(why, cap, "config.topics[%d] must be null, a 0x hash of 64 hex digits or an array"
	    " of them", i);
	return -1;
big:
	snprintf(why, cap, "config is too large");
	return -1;
}

/* Whether every member of config is one of the names (NULL-terminated); else why. */
static int
known_keys(const cJSON *config, const char *const *names, char *why, size_t cap)
{
	const cJSON *m;
	size_t i;

	cJSON_ArrayForEach(m, config) {
		for (i = 0; names[i] != NULL; i++)
			if (m->string != NULL && strcmp(m->string, names[i]) == 0)
				break;
		if (names[i] == NULL) {
			snprintf(why, cap, "config.%.40s is not a key of this event_type",
			    m->string != NULL ? m->string : "?");
			return -1;
		}
	}
	return 0;
}

int
bp_webhook_config_parse(enum bp_webhook_type t, const cJSON *config, struct bp_buf *canon,
    char *why, size_t cap)
{
	static const char *const k_activity[] = { "addresses", NULL };
	static const char *const k_transfer[] = { "addresses", "contracts", NULL };
	static const char *const k_mined[] = { "tx_hashes", NULL };
	static const char *const k_log[] = { "address", "topics", NULL };
	const cJSON *a, *b;
	int named = 0;

	bp_buf_reset(canon);
	if (!cJSON_IsObject(config)) {
		snprintf(why, cap, "config must be an object");
		return -1;
	}
	if (bp_buf_adds(canon, "{") == -1)
		return -1;
	switch (t) {
	case BP_WEBHOOK_ADDRESS_ACTIVITY:
		if (known_keys(config, k_activity, why, cap) == -1)
			return -1;
		if ((a = cJSON_GetObjectItemCaseSensitive(config, "addresses")) == NULL) {
			snprintf(why, cap, "config.addresses is required for address_activity");
			return -1;
		}
		if (hex_list(a, "addresses", 20, canon, why, cap) == -1)
			return -1;
		break;
	case BP_WEBHOOK_TOKEN_TRANSFER:
	case BP_WEBHOOK_NFT_TRANSFER:
		if (known_keys(config, k_transfer, why, cap) == -1)
			return -1;
		a = cJSON_GetObjectItemCaseSensitive(config, "addresses");
		b = cJSON_GetObjectItemCaseSensitive(config, "contracts");
		if (a == NULL && b == NULL) {
			snprintf(why, cap, "config.addresses: give addresses, contracts or both for %s",
			    type_names[t]);
			return -1;
		}
		if (a != NULL && hex_list(a, "addresses", 20, canon, why, cap) == -1)
			return -1;
		if (a != NULL && b != NULL && bp_buf_adds(canon, ",") == -1)
			return -1;
		if (b != NULL && hex_list(b, "contracts", 20, canon, why, cap) == -1)
			return -1;
		break;
	case BP_WEBHOOK_MINED_TRANSACTION:
		if (known_keys(config, k_mined, why, cap) == -1)
			return -1;
		if ((a = cJSON_GetObjectItemCaseSensitive(config, "tx_hashes")) == NULL) {
			snprintf(why, cap, "config.tx_hashes is required for mined_transaction");
			return -1;
		}
		if (hex_list(a, "tx_hashes", 32, canon, why, cap) == -1)
			return -1;
		break;
	case BP_WEBHOOK_LOG:
		if (known_keys(config, k_log, why, cap) == -1)
			return -1;
		a = cJSON_GetObjectItemCaseSensitive(config, "address");
		b = cJSON_GetObjectItemCaseSensitive(config, "topics");
		if (a == NULL && b == NULL) {
			snprintf(why, cap, "config.address: give address, topics or both for log");
			return -1;
		}
		if (a != NULL && cJSON_IsString(a)) {
			char s[BP_ADDR_STR_MAX];

			if (hex_item(a, 20, s) == -1) {
				snprintf(why, cap, "config.address must be a 0x address or an array of"
				    " them");
				return -1;
			}
			if (bp_buf_printf(canon, "\"address\":[\"%s\"]", s) == -1)
				return -1;
		} else if (a != NULL && hex_list(a, "address", 20, canon, why, cap) == -1)
			return -1;
		if (a != NULL && b != NULL && bp_buf_adds(canon, ",") == -1)
			return -1;
		if (b != NULL && topics_list(b, canon, &named, why, cap) == -1)
			return -1;
		/* Without an address, only a named topic keeps it from matching every log. */
		if (a == NULL && !named) {
			snprintf(why, cap, "config.topics must name at least one topic when config.address"
			    " is not given");
			return -1;
		}
		break;
	default:
		snprintf(why, cap, "event_type: unknown");
		return -1;
	}
	if (bp_buf_adds(canon, "}") == -1) {
		snprintf(why, cap, "config is too large");
		return -1;
	}
	return 0;
}

/* ---- request bodies ---- */

/* The string members of a POST and of a PATCH body; config and the domain's rules come after. */
static const struct bp_valid_field create_fields[] = {
	{ "url", BP_VALID_STRING, 1, 0, NULL },
	{ "chain", BP_VALID_STRING, 1, 0, NULL },
	{ "network", BP_VALID_STRING, 0, 0, NULL },
	{ "event_type", BP_VALID_STRING, 0, 0, NULL },	/* or format B's event_types */
};
static const struct bp_valid_field patch_fields[] = {
	{ "url", BP_VALID_STRING, 0, 0, NULL },
	{ "status", BP_VALID_STRING, 0, 0, NULL },
};

/* The receiver's url: https, at most 2,048 bytes, a host that is allowed. */
static int
check_url(const struct bp_config *cfg, const char *url, char *why, size_t cap)
{
	char w[200];

	if (strlen(url) > BP_WEBHOOK_URL_MAX) {
		snprintf(why, cap, "url must be at most %d bytes", BP_WEBHOOK_URL_MAX);
		return -1;
	}
	if (strncmp(url, "https://", 8) != 0) {
		snprintf(why, cap, "url must be an https:// URL");
		return -1;
	}
	if (strchr("/?#:", url[8]) != NULL) {	/* "https:///x": no host (url[8] may be NUL) */
		snprintf(why, cap, "url has no host");
		return -1;
	}
	if (bp_fetch_check_url(url, cfg->allow_private_urls != 0, true, w, sizeof(w)) == -1) {
		snprintf(why, cap, "url: %s", w);
		return -1;
	}
	return 0;
}

/*
 * Format B's part of a body: its types (create) and filters, in place of config. 0, or -1
 * with why.
 */
static int
input_b(const cJSON *body, int create, struct bp_webhook_input *in, char *why, size_t cap)
{
	const cJSON *filters = cJSON_GetObjectItemCaseSensitive(body, "filters");

	if (cJSON_GetObjectItemCaseSensitive(body, "config") != NULL) {
		snprintf(why, cap, "config: a format-B webhook (upper-case event types) takes"
		    " filters");
		return -1;
	}
	if (!create && filters == NULL)
		return 0;
	if (bp_webhook_filters_parse(in->types, filters, &in->canon, why, cap) == -1)
		return -1;
	in->has_config = 1;
	return 0;
}

static int
input(const struct bp_config *cfg, const cJSON *body, int create, int testkey,
    enum bp_webhook_type current_type, uint32_t types, struct bp_webhook_input *in, char *why,
    size_t cap)
{
	const cJSON *config = cJSON_GetObjectItemCaseSensitive(body, "config");
	const char *v[BP_NITEMS(create_fields)], *type, *status, *network;
	int b;

	memset(in, 0, sizeof(*in));
	bp_buf_init(&in->canon, BP_WEBHOOK_CONFIG_MAX);
	if ((create ? bp_valid_body(body, create_fields, BP_NITEMS(create_fields), v, why, cap) :
	    bp_valid_body(body, patch_fields, BP_NITEMS(patch_fields), v, why, cap)) == -1)
		return -1;
	in->url = v[0];
	in->chain = create ? v[1] : NULL;
	network = create ? v[2] : NULL;
	type = create ? v[3] : NULL;
	status = create ? NULL : v[1];
	if (!create) {
		static const char *const fixed[] = { "chain", "network", "event_type",
		    "event_types" };
		size_t i;

		for (i = 0; i < BP_NITEMS(fixed); i++)
			if (cJSON_GetObjectItemCaseSensitive(body, fixed[i]) != NULL) {
				snprintf(why, cap, "%s cannot be changed; create a new webhook",
				    fixed[i]);
				return -1;
			}
	}
	if (in->url != NULL && check_url(cfg, in->url, why, cap) == -1)
		return -1;
	if (create) {
		in->net = bp_config_rest_network(cfg, in->chain, testkey, network);
		if (in->net == NULL || in->net->kind != BP_CHAIN_EVM) {
			snprintf(why, cap, "chain: no EVM chain \"%.32s\" for this key", in->chain);
			return -1;
		}
		if ((b = bp_webhook_btypes_input(body, &in->types, why, cap)) == -1)
			return -1;
		if (b == 1) {
			/* Stored as 'log' (migration 016); event_types says what it is. */
			in->type = BP_WEBHOOK_LOG;
			in->has_type = 1;
			if (input_b(body, 1, in, why, cap) == -1)
				return -1;
			return (in->types & BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_INTERNAL_TRANSFER)) ?
			    bp_webhook_b_traces_served(cfg, in->net, why, cap) : 0;
		}
		if (type == NULL) {
			snprintf(why, cap, "event_type is required");
			return -1;
		}
		if (bp_webhook_type_parse(type, &in->type) == -1) {
			snprintf(why, cap, "event_type must be address_activity, token_transfer,"
			    " nft_transfer, mined_transaction or log");
			return -1;
		}
		in->has_type = 1;
		current_type = in->type;
		if (cJSON_GetObjectItemCaseSensitive(body, "filters") != NULL) {
			snprintf(why, cap, "filters: only format-B webhooks (upper-case event"
			    " types) take filters; %s takes config", type_names[in->type]);
			return -1;
		}
		if (config == NULL) {
			snprintf(why, cap, "config is required for %s", type_names[in->type]);
			return -1;
		}
	}
	if (status != NULL) {
		if (bp_webhook_status_parse(status, &in->status) == -1 ||
		    in->status == BP_WEBHOOK_DISABLED) {
			snprintf(why, cap, "status must be active or paused");
			return -1;
		}
		in->has_status = 1;
	}
	if (types != 0) {
		in->types = types;
		if (input_b(body, 0, in, why, cap) == -1)
			return -1;
	} else if (cJSON_GetObjectItemCaseSensitive(body, "filters") != NULL) {
		snprintf(why, cap, "filters: only format-B webhooks take filters; this one takes"
		    " config");
		return -1;
	} else if (config != NULL) {
		if (bp_webhook_config_parse(current_type, config, &in->canon, why, cap) == -1)
			return -1;
		in->has_config = 1;
	}
	if (!create && in->url == NULL && !in->has_status && !in->has_config) {
		snprintf(why, cap, "url: give at least one of url, status, %s",
		    types != 0 ? "filters" : "config");
		return -1;
	}
	return 0;
}

int
bp_webhook_input(const struct bp_config *cfg, const cJSON *body, int create, int testkey,
    enum bp_webhook_type current_type, struct bp_webhook_input *in, char *why, size_t cap)
{
	return input(cfg, body, create, testkey, current_type, 0, in, why, cap);
}

int
bp_webhook_input_patch(const struct bp_config *cfg, const cJSON *body, int testkey,
    const struct bp_webhook *w, struct bp_webhook_input *in, char *why, size_t cap)
{
	return input(cfg, body, 0, testkey, w->type, w->types, in, why, cap);
}

/* ---- the table ---- */

#define WEBHOOK_COLS "id, account_id, url, chain, network, event_type, config, secret, status," \
	" created_at, updated_at, event_types"

void
bp_webhook_clear(struct bp_webhook *w)
{
	if (w == NULL)
		return;
	free(w->config);
	w->config = NULL;
}

/* Fills w from a row of WEBHOOK_COLS. 0, or -1 out of memory. */
static int
webhook_row(struct bp_stmt *st, struct bp_webhook *w)
{
	memset(w, 0, sizeof(*w));
	bp_strlcpy(w->id, bp_col_text(st, 0), sizeof(w->id));
	w->account_id = bp_col_int(st, 1);
	bp_strlcpy(w->url, bp_col_text(st, 2), sizeof(w->url));
	bp_strlcpy(w->chain, bp_col_text(st, 3), sizeof(w->chain));
	bp_strlcpy(w->network, bp_col_text(st, 4), sizeof(w->network));
	if (bp_webhook_type_parse(bp_col_text(st, 5), &w->type) == -1)
		w->type = BP_WEBHOOK_LOG;
	bp_strlcpy(w->secret, bp_col_text(st, 7), sizeof(w->secret));
	if (bp_webhook_status_parse(bp_col_text(st, 8), &w->status) == -1)
		w->status = BP_WEBHOOK_DISABLED;
	w->created_at = bp_col_int(st, 9);
	w->updated_at = bp_col_int(st, 10);
	w->types = bp_col_is_null(st, 11) ? 0 : bp_webhook_btypes_parse(bp_col_text(st, 11));
	return (w->config = strdup(bp_col_text(st, 6))) == NULL ? -1 : 0;
}

/* Steps st, an UPDATE or DELETE of webhooks, once and resets it: 1 a row changed, 0 none, -1. */
static int
changed(struct bp_db *db, struct bp_stmt *st)
{
	int rc = -1;

	if (bp_stmt_step(st) == BP_DB_DONE)
		rc = bp_db_changes(db) > 0;
	bp_stmt_reset(st);
	return rc;
}

int
bp_webhook_get(struct bp_db *db, int64_t account_id, const char *id, struct bp_webhook *out)
{
	static const char sql[] = "SELECT " WEBHOOK_COLS " FROM webhooks WHERE id = ?"
	    " AND (?2 < 0 OR account_id = ?2)";
	struct bp_stmt *st;
	enum bp_db_step step;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, id);
	bp_stmt_int(st, 2, account_id);
	step = bp_stmt_step(st);
	if (step == BP_DB_ROW)
		rc = webhook_row(st, out) == -1 ? -1 : 1;
	else if (step == BP_DB_DONE)
		rc = 0;
	bp_stmt_reset(st);
	return rc;
}

/* The number of the account's webhooks; -1 on error. */
static int64_t
webhook_count(struct bp_db *db, int64_t account_id)
{
	static const char sql[] = "SELECT count(*) FROM webhooks WHERE account_id = ?";
	struct bp_stmt *st;
	int64_t n = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account_id);
	if (bp_stmt_step(st) == BP_DB_ROW)
		n = bp_col_int(st, 0);
	bp_stmt_reset(st);
	return n;
}

int
bp_webhook_create(struct bp_db *db, int64_t account_id, int64_t cap,
    const struct bp_webhook_input *in, struct bp_webhook *out)
{
	static const char sql[] = "INSERT INTO webhooks (" WEBHOOK_COLS ") VALUES"
	    " (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)";
	struct bp_stmt *st;
	uint8_t rnd[12], key[32];
	char id[BP_WEBHOOK_ID_MAX], secret[BP_WEBHOOK_SECRET_MAX], network[BP_WEBHOOK_NETKEY_MAX];
	char types[BP_WEBHOOK_B_TYPES_MAX];
	int64_t now = (int64_t)time(NULL), n;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (bp_random(rnd, sizeof(rnd)) == -1 || bp_random(key, sizeof(key)) == -1)
		return -1;
	memcpy(id, "wh_", 3);
	bp_hex_encode_digits(rnd, sizeof(rnd), id + 3, sizeof(id) - 3);
	/*
	 * whsec_ and the key in base64, as Standard Webhooks defines a secret, so its official
	 * libraries verify webhook-signature with the secret as given (webhook_sign.h).
	 */
	memcpy(secret, "whsec_", 6);
	EVP_EncodeBlock((unsigned char *)secret + 6, key, sizeof(key));
	OPENSSL_cleanse(key, sizeof(key));
	snprintf(network, sizeof(network), "%s.%s", in->net->chain, in->net->network);
	/* The count and the insert in one transaction, so two requests cannot pass the cap. */
	if (bp_db_begin(db) == -1)
		return -1;
	if ((n = webhook_count(db, account_id)) < 0)
		goto fail;
	if (cap > 0 && n >= cap) {
		bp_db_rollback(db);
		return 0;
	}
	if ((st = bp_db_stmt(db, sql)) == NULL)
		goto fail;
	bp_stmt_text(st, 1, id);
	bp_stmt_int(st, 2, account_id);
	bp_stmt_text(st, 3, in->url);
	bp_stmt_text(st, 4, in->chain);
	bp_stmt_text(st, 5, network);
	bp_stmt_text(st, 6, type_names[in->type]);
	bp_stmt_text(st, 7, in->canon.data);
	bp_stmt_text(st, 8, secret);
	bp_stmt_int(st, 9, now);
	bp_stmt_int(st, 10, now);
	if (in->types != 0 && bp_webhook_btypes_format(in->types, types, sizeof(types)) == 0)
		bp_stmt_text(st, 11, types);
	else
		bp_stmt_null(st, 11);
	rc = bp_stmt_step(st) == BP_DB_DONE ? 1 : -1;
	bp_stmt_reset(st);
	if (rc != 1 || bp_db_commit(db) == -1)
		goto fail;
	return bp_webhook_get(db, account_id, id, out);
fail:
	bp_db_rollback(db);
	return -1;
}

int
bp_webhook_update(struct bp_db *db, int64_t account_id, const char *id, const char *url,
    const char *config, const enum bp_webhook_status *status, struct bp_webhook *out)
{
	/*
	 * A disabled webhook stays disabled: only the operator lifts it. A PATCH that asks for a
	 * status of one writes nothing (the WHERE), so its 400 leaves url and config as they were.
	 */
	static const char sql[] = "UPDATE webhooks SET url = coalesce(?, url),"
	    " config = coalesce(?, config), status = coalesce(?3, status), updated_at = ?"
	    " WHERE id = ? AND account_id = ? AND (?3 IS NULL OR status <> 'disabled')";
	struct bp_stmt *st;
	int rc;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, url);
	bp_stmt_text(st, 2, config);
	bp_stmt_text(st, 3, status != NULL ? status_names[*status] : NULL);
	bp_stmt_int(st, 4, (int64_t)time(NULL));
	bp_stmt_text(st, 5, id);
	bp_stmt_int(st, 6, account_id);
	if ((rc = changed(db, st)) == -1)
		return -1;
	if (rc == 0) {
		/* Nothing written: no such webhook, or a status asked of a disabled one. */
		if ((rc = bp_webhook_get(db, account_id, id, out)) == 1)
			rc = out->status == BP_WEBHOOK_DISABLED ? 2 : -1;
		return rc;
	}
	return bp_webhook_get(db, account_id, id, out);
}

/* Sets webhook id's status to s, if it is from (NULL: whatever it is), at now. 1, 0 none, -1. */
static int
status_set(struct bp_db *db, const char *id, enum bp_webhook_status s, const char *from,
    int64_t now)
{
	static const char sql[] = "UPDATE webhooks SET status = ?, updated_at = ? WHERE id = ?"
	    " AND (?4 IS NULL OR status = ?4)";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, status_names[s]);
	bp_stmt_int(st, 2, now);
	bp_stmt_text(st, 3, id);
	bp_stmt_text(st, 4, from);
	return changed(db, st);
}

int
bp_webhook_set_status(struct bp_db *db, const char *id, enum bp_webhook_status s)
{
	return status_set(db, id, s, NULL, (int64_t)time(NULL));
}

int
bp_webhook_pause(struct bp_db *db, const char *id, int64_t now)
{
	/* Only an active one: a paused webhook is not paused again, a disabled one stays so. */
	return status_set(db, id, BP_WEBHOOK_PAUSED, status_names[BP_WEBHOOK_ACTIVE], now);
}

int
bp_webhook_delete(struct bp_db *db, int64_t account_id, const char *id)
{
	/* Its events go with it (ON DELETE CASCADE): pending deliveries are dropped. */
	static const char sql[] = "DELETE FROM webhooks WHERE id = ? AND account_id = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, id);
	bp_stmt_int(st, 2, account_id);
	return changed(db, st);
}

/*
 * {"id":..,"url":..,"chain":..,"event_type":..,"status":.. and, for format B, "event_types":
 * [..] (event_type its first, as SPEC.md names one) and "filters".
 */
static int
head_json(const struct bp_webhook *w, struct bp_buf *b)
{
	enum bp_webhook_btype t;
	const char *type = w->types != 0 ? bp_webhook_btype_name(bp_webhook_btype_first(w->types)) :
	    type_names[w->type];
	int fail, k = 0;

	fail = bp_buf_printf(b, "{\"id\":\"%s\",\"url\":\"", w->id) == -1 ||
	    bp_buf_json_str(b, w->url) == -1 ||
	    bp_buf_printf(b, "\",\"chain\":\"%s\",\"event_type\":\"%s\",\"status\":\"%s\"",
	    w->chain, type, status_names[w->status]) == -1;
	if (w->types == 0 || fail)
		return fail ? -1 : 0;
	fail = bp_buf_adds(b, ",\"event_types\":[") == -1;
	for (t = 0; t < BP_WEBHOOK_B__MAX; t++)
		if (w->types & BP_WEBHOOK_B_BIT(t))
			fail = fail || bp_buf_printf(b, "%s\"%s\"", k++ > 0 ? "," : "",
			    bp_webhook_btype_name(t)) == -1;
	return fail || bp_buf_printf(b, "],\"filters\":%s", w->config != NULL ? w->config :
	    "{}") == -1 ? -1 : 0;
}

/* The list item: id, url, chain, event_type (event_types, filters), status, created_at. */
static int
item_json(const struct bp_webhook *w, struct bp_buf *b)
{
	return head_json(w, b) == -1 ||
	    bp_buf_json_time(b, "created_at", w->created_at) == -1 ||
	    bp_buf_adds(b, "}") == -1 ? -1 : 0;
}

int
bp_webhook_json(const struct bp_webhook *w, int full, struct bp_buf *b)
{
	int fail;

	fail = head_json(w, b) == -1;
	if (full)
		fail = fail || bp_buf_printf(b, ",\"network\":\"%s\"",
		    strchr(w->network, '.') + 1) == -1 || (w->types == 0 &&
		    bp_buf_printf(b, ",\"config\":%s", w->config != NULL ? w->config :
		    "{}") == -1) ||
		    bp_buf_printf(b, ",\"signing_secret\":\"%s\"", w->secret) == -1 ||
		    bp_buf_json_time(b, "created_at", w->created_at) == -1;
	fail = fail || bp_buf_json_time(b, "updated_at", w->updated_at) == -1;
	return fail || bp_buf_adds(b, "}") == -1 ? -1 : 0;
}

const struct bp_network *
bp_webhook_network(const struct bp_config *cfg, const char *key)
{
	char chain[BP_NAME_MAX];
	const char *dot = strchr(key, '.');

	if (dot == NULL || (size_t)(dot - key) >= sizeof(chain))
		return NULL;
	memcpy(chain, key, (size_t)(dot - key));
	chain[dot - key] = '\0';
	return bp_config_network(cfg, chain, dot + 1);
}

int
bp_webhook_of_kind(const struct bp_config *cfg, const struct bp_webhook *w, int testkey)
{
	/* A network no longer configured is not known to be a test one: live keys only. */
	const struct bp_network *n = bp_webhook_network(cfg, w->network);

	return (n != NULL && n->testnet) == (testkey != 0);
}

int
bp_webhook_list(struct bp_db *db, const struct bp_config *cfg, int64_t account_id, int testkey,
    const enum bp_webhook_status *status, int64_t page, int64_t limit, struct bp_buf *b)
{
	/*
	 * The kind of a webhook is its network's testnet flag, a fact of the config, not of the
	 * row: the account's rows are read in order and those of the other kind skipped here, so
	 * total and the page count only the key's kind. An account holds at most its plan's cap.
	 */
	static const char sql[] = "SELECT " WEBHOOK_COLS " FROM webhooks"
	    " WHERE account_id = ? AND (?2 IS NULL OR status = ?2)"
	    " ORDER BY created_at DESC, id DESC";
	struct bp_webhook w;
	struct bp_stmt *st;
	enum bp_db_step step;
	int64_t total = 0, from = (page - 1) * limit, n = 0;
	int fail;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account_id);
	bp_stmt_text(st, 2, status != NULL ? status_names[*status] : NULL);
	fail = bp_buf_adds(b, "{\"webhooks\":[") == -1;
	while (!fail && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		if ((fail = webhook_row(st, &w) == -1) == 0 && bp_webhook_of_kind(cfg, &w, testkey) &&
		    total++ >= from && n < limit)
			fail = (n++ > 0 && bp_buf_adds(b, ",") == -1) || item_json(&w, b) == -1;
		bp_webhook_clear(&w);
	}
	bp_stmt_reset(st);
	if (fail || step == BP_DB_ERROR)
		return -1;
	return bp_buf_printf(b, "],\"page\":%lld,\"limit\":%lld,\"total\":%lld}",
	    (long long)page, (long long)limit, (long long)total) == -1 ? -1 : 0;
}
