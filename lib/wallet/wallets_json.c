/*
 * The JSON of /v1/wallets answers (docs/wallets.md), written straight into the response buffer:
 * a get is the hot path of the resource, so no cJSON tree is built.
 */
#include <stdint.h>

#include "core/buf.h"
#include "core/hex.h"
#include "evm/simple_account.h"
#include "wallets.h"

/* Appends ,"name":"value" (value escaped) to b; 0 or -1. */
static int
put_str(struct bp_buf *b, const char *name, const char *value)
{
	return bp_buf_adds(b, ",\"") == -1 || bp_buf_adds(b, name) == -1 ||
	    bp_buf_adds(b, "\":\"") == -1 || bp_buf_json_str(b, value) == -1 ||
	    bp_buf_adds(b, "\"") == -1 ? -1 : 0;
}

/* Appends ,"entry_point":"0x..." (null when the config has none now),"entry_point_version". */
static int
put_entry_point(struct bp_buf *b, const char *ep, enum bp_ep_version v)
{
	return (ep[0] != '\0' ? put_str(b, "entry_point", ep) :
	    bp_buf_adds(b, ",\"entry_point\":null")) == -1 ||
	    put_str(b, "entry_point_version", bp_ep_version_name(v)) == -1 ? -1 : 0;
}

int
bp_wallets_json(const struct bp_wallet *w, enum bp_wallets_view view, struct bp_buf *b)
{
	uint8_t ic[BP_SIMPLE_ACCOUNT_INIT_CODE_LEN];
	char s[2 * BP_SIMPLE_ACCOUNT_INIT_CODE_LEN + 3];
	int fail;

	fail = bp_buf_adds(b, "{\"address\":\"") == -1 || bp_buf_adds(b, w->address_cs) == -1 ||
	    bp_buf_adds(b, "\"") == -1;
	fail = fail || put_str(b, "owner", w->owner_cs) == -1;
	fail = fail || put_str(b, "chain", w->chain) == -1;
	fail = fail || put_str(b, "network", w->network) == -1;
	fail = fail || put_str(b, "status", bp_wallets_status_name(w->status)) == -1;
	fail = fail || put_str(b, "factory", w->factory_cs) == -1;
	fail = fail || put_entry_point(b, w->entry_point_cs, w->version) == -1;
	bp_simple_account_format_salt(w->salt, s, sizeof(s));
	fail = fail || put_str(b, "salt", s) == -1;
	if (view == BP_WALLETS_VIEW_GET)
		fail = fail || (w->nonce >= 0 ? bp_buf_printf(b, ",\"nonce\":%lld",
		    (long long)w->nonce) : bp_buf_adds(b, ",\"nonce\":null")) == -1;
	fail = fail || bp_buf_json_time(b, "created_at", w->created_at) == -1;
	if (w->status == BP_WALLET_COUNTERFACTUAL) {
		/* What the first UserOperation carries to deploy the wallet. */
		bp_simple_account_init_code(w->factory, w->owner, w->salt, ic);
		bp_hex_encode(ic, sizeof(ic), s, sizeof(s));
		fail = fail || put_str(b, "init_code", s) == -1;
	} else if (view == BP_WALLETS_VIEW_GET) {
		fail = fail || bp_buf_json_time(b, "deployed_at", w->deployed_at) == -1;
		fail = fail || (w->deploy_tx[0] != '\0' ? put_str(b, "deploy_tx", w->deploy_tx) :
		    bp_buf_adds(b, ",\"deploy_tx\":null")) == -1;
	}
	return fail || bp_buf_adds(b, "}") == -1 ? -1 : 0;
}

/* A list answer being written: the buffer and the items so far. */
struct list_out {
	struct bp_buf	*b;
	size_t		 n;
};

/* Appends one wallet of a list; 0 or -1 (full), which stops bp_wallets_list. */
static int
list_item(const struct bp_wallets_item *it, void *arg)
{
	struct list_out *o = arg;
	struct bp_buf *b = o->b;

	return bp_buf_adds(b, o->n++ > 0 ? "," : "") == -1 ||
	    bp_buf_adds(b, "{\"address\":\"") == -1 || bp_buf_json_str(b, it->address) == -1 ||
	    bp_buf_adds(b, "\"") == -1 || put_str(b, "owner", it->owner) == -1 ||
	    put_str(b, "chain", it->chain) == -1 || put_str(b, "network", it->network) == -1 ||
	    put_str(b, "status", bp_wallets_status_name(it->status)) == -1 ||
	    put_entry_point(b, it->entry_point, it->version) == -1 ||
	    bp_buf_json_time(b, "created_at", it->created_at) == -1 ||
	    bp_buf_adds(b, "}") == -1 ? -1 : 0;
}

int
bp_wallets_list_json(struct bp_wallets *ws, struct bp_db *db, const struct bp_key *key,
    const char *chain, int64_t page, int64_t limit, struct bp_buf *b, struct bp_error *err)
{
	struct list_out o = { b, 0 };
	int64_t total;

	if (bp_buf_adds(b, "{\"wallets\":[") == -1)
		return bp_error_set(err, 500, "internal_error", "response too large");
	if (bp_wallets_list(ws, db, key, chain, page, limit, list_item, &o, &total, err) == -1)
		return -1;
	if (bp_buf_printf(b, "],\"page\":%lld,\"limit\":%lld,\"total\":%lld}", (long long)page,
	    (long long)limit, (long long)total) == -1)
		return bp_error_set(err, 500, "internal_error", "response too large");
	return 0;
}
