/*
 * Token symbols and decimals for webhook events (webhook_token.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/chain.h"
#include "evm/u256.h"
#include "webhook_queue.h"
#include "webhook_token.h"

#define SYMBOL_MAX	64
#define UNKNOWN_MAX	32	/* contracts read in one call */

/*
 * symbol(): a string, or a bytes32 for the old tokens (MKR); "" when neither. -1 when no node
 * answered: the events then wait for a later pass rather than go out without a symbol.
 */
static int
read_symbol(struct bp_chain *ch, const struct bp_network *net, const uint8_t a[20],
    char out[SYMBOL_MAX])
{
	static const uint8_t sel[4] = { 0x95, 0xd8, 0x9b, 0x41 };
	struct bp_chain_error err;
	uint8_t *ret = NULL;
	size_t len = 0, i;

	out[0] = '\0';
	memset(&err, 0, sizeof(err));
	if (bp_chain_call(ch, net, a, sel, sizeof(sel), BP_CHAIN_LATEST, &ret, &len, &err) == -1 &&
	    err.kind == BP_CHAIN_ERR_TRANSPORT)
		return -1;
	if (err.kind == BP_CHAIN_OK) {
		if (bp_abi_read_string(ret, len, 0, out, SYMBOL_MAX) == -1 && len == 32) {
			for (i = 0; i < 32 && i < SYMBOL_MAX - 1 && ret[i] >= 0x20 && ret[i] < 0x7f;
			    i++)
				out[i] = (char)ret[i];
			out[i] = '\0';
		}
	}
	free(ret);
	return 0;
}

/* decimals(): 0 to 255, or -1. */
static int
read_decimals(struct bp_chain *ch, const struct bp_network *net, const uint8_t a[20])
{
	static const uint8_t sel[4] = { 0x31, 0x3c, 0xe5, 0x67 };
	struct bp_u256 v;
	uint64_t d;

	if (bp_chain_call_u256(ch, net, a, sel, sizeof(sel), BP_CHAIN_LATEST, &v, NULL) == -1 ||
	    bp_u256_to_u64(&v, &d) == -1 || d > 255)
		return -1;
	return (int)d;
}

struct unknown {
	char	network[2 * BP_NAME_MAX];
	char	contract[BP_ADDR_STR_MAX];
};

/* Reads and stores the tokens that waiting events need and webhook_tokens lacks. */
static int
learn(struct bp_db *db, const struct bp_config *cfg, struct bp_chain *ch)
{
	static const char sql_unknown[] = "SELECT DISTINCT e.network, e.token FROM webhook_events e"
	    " WHERE e.state = 'pending' AND e.token IS NOT NULL AND NOT EXISTS (SELECT 1 FROM"
	    " webhook_tokens t WHERE t.network = e.network AND t.contract = e.token) LIMIT 32";
	static const char sql_put[] = "INSERT INTO webhook_tokens (network, contract, symbol,"
	    " decimals, read_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (network, contract) DO NOTHING";
	struct unknown u[UNKNOWN_MAX];
	struct bp_stmt *st;
	enum bp_db_step step;
	size_t n = 0, i;
	char sym[SYMBOL_MAX], chain[BP_NAME_MAX], *dot;
	uint8_t a[20];
	int dec;

	if ((st = bp_db_stmt(db, sql_unknown)) == NULL)
		return -1;
	while (n < UNKNOWN_MAX && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		bp_strlcpy(u[n].network, bp_col_text(st, 0), sizeof(u[n].network));
		bp_strlcpy(u[n].contract, bp_col_text(st, 1), sizeof(u[n].contract));
		n++;
	}
	bp_stmt_reset(st);
	/* The chain reads happen outside any transaction. */
	for (i = 0; i < n; i++) {
		const struct bp_network *net = NULL;

		bp_strlcpy(chain, u[i].network, sizeof(chain));
		if ((dot = strchr(chain, '.')) != NULL) {
			*dot = '\0';
			net = bp_config_network(cfg, chain, dot + 1);
		}
		sym[0] = '\0';
		dec = -1;
		if (net != NULL && bp_addr_parse(u[i].contract, strlen(u[i].contract), 0, a) == 0) {
			if (read_symbol(ch, net, a, sym) == -1)
				continue;	/* the node is down: try again next pass */
			dec = read_decimals(ch, net, a);
		}
		if ((st = bp_db_stmt(db, sql_put)) == NULL)
			return -1;
		bp_stmt_text(st, 1, u[i].network);
		bp_stmt_text(st, 2, u[i].contract);
		if (sym[0] != '\0')
			bp_stmt_text(st, 3, sym);
		else
			bp_stmt_null(st, 3);
		if (dec >= 0)
			bp_stmt_int(st, 4, dec);
		else
			bp_stmt_null(st, 4);
		bp_stmt_int(st, 5, (int64_t)time(NULL));
		step = bp_stmt_step(st);
		bp_stmt_reset(st);
		if (step != BP_DB_DONE)
			return -1;
	}
	return 0;
}

/* Replaces the first `from` in body with `to` into out. */
static int
replace(struct bp_buf *out, const char *body, const char *from, const char *to)
{
	const char *p = strstr(body, from);

	bp_buf_reset(out);
	if (p == NULL)
		return bp_buf_adds(out, body);
	return bp_buf_add(out, body, (size_t)(p - body)) == -1 || bp_buf_adds(out, to) == -1 ||
	    bp_buf_adds(out, p + strlen(from)) == -1 ? -1 : 0;
}

static int
copy(struct bp_buf *out, const char *body)
{
	bp_buf_reset(out);
	return bp_buf_adds(out, body);
}

/*
 * Format B's TOKEN_TRANSFER: "valueFormatted":null in body becomes value / 10^decimals as a
 * decimal string ("1.5"), into out (body as it is when there is none or decimals is unknown).
 */
static int
formatted(struct bp_buf *out, const char *body, int64_t decimals)
{
	const char *v = strstr(body, "\"value\":\"");
	char text[BP_U256_UNITS_MAX + 24];
	struct bp_u256 u;
	size_t n;

	if (v == NULL || decimals < 0 || decimals > BP_U256_MAX_DECIMALS ||
	    strstr(body, "\"valueFormatted\":null") == NULL)
		return copy(out, body);
	v += 9;
	n = strspn(v, "0123456789");
	memcpy(text, "\"valueFormatted\":\"", 18);
	if (bp_u256_from_dec(&u, v, n) == -1 ||
	    bp_u256_format_units(&u, (unsigned int)decimals, text + 18, sizeof(text) - 19) == -1)
		return copy(out, body);
	n = strlen(text);	/* the room for the quote was kept above */
	text[n] = '"';
	text[n + 1] = '\0';
	return replace(out, body, "\"valueFormatted\":null", text);
}

/*
 * NFT_ACTIVITY: "metadata":null in body becomes the token's cached metadata (meta's), into out
 * (body as it is for the other types, or when the cache has none). 0 or -1.
 */
static int
nft_metadata(struct bp_buf *out, struct bp_db *db, const struct bp_webhook_nft_meta *meta,
    const char *network, const char *body, struct bp_buf *tmp)
{
	const cJSON *data, *contract, *id;
	cJSON *j;
	int rc;

	if (meta == NULL || strstr(body, "\"metadata\":null") == NULL ||
	    strstr(body, "\"type\":\"NFT_ACTIVITY\"") == NULL ||
	    (j = cJSON_Parse(body)) == NULL)
		return copy(out, body);
	data = cJSON_GetObjectItemCaseSensitive(j, "data");
	contract = cJSON_GetObjectItemCaseSensitive(data, "contract");
	id = cJSON_GetObjectItemCaseSensitive(data, "tokenId");
	bp_buf_reset(tmp);
	if (!cJSON_IsString(contract) || !cJSON_IsString(id) ||
	    bp_buf_adds(tmp, "\"metadata\":") == -1 ||
	    meta->fn(meta->arg, db, network, contract->valuestring, id->valuestring, tmp) == -1)
		rc = copy(out, body);
	else
		rc = replace(out, body, "\"metadata\":null", tmp->data);
	cJSON_Delete(j);
	return rc;
}

int
bp_webhook_tokens_fill(struct bp_db *db, const struct bp_config *cfg, struct bp_chain *ch,
    const struct bp_webhook_nft_meta *meta, size_t max)
{
	static const char sql_wait[] = "SELECT e.id, e.body, t.symbol, t.decimals, e.network FROM"
	    " webhook_events e JOIN webhook_tokens t ON t.network = e.network AND"
	    " t.contract = e.token WHERE e.state = 'pending' AND e.token IS NOT NULL LIMIT ?";
	struct bp_buf a, b, sym, fields, md;
	struct bp_stmt *st;
	enum bp_db_step step;
	int n = 0, fail = 0;

	if (learn(db, cfg, ch) == -1)
		return -1;
	bp_buf_init(&a, 2 * 1024 * 1024);
	bp_buf_init(&b, 2 * 1024 * 1024);
	bp_buf_init(&sym, 512);
	bp_buf_init(&fields, 512);
	bp_buf_init(&md, 256 * 1024);	/* an NFT's metadata; larger goes out as null */
	if (bp_db_begin(db) == -1)
		return -1;
	if ((st = bp_db_stmt(db, sql_wait)) == NULL)
		goto fail;
	bp_stmt_int(st, 1, (int64_t)max);
	while (!fail && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		bp_buf_reset(&sym);
		bp_buf_reset(&fields);
		if (bp_col_is_null(st, 2))
			fail = bp_buf_adds(&sym, "null") == -1;
		else
			fail = bp_buf_adds(&sym, "\"") == -1 ||
			    bp_buf_json_str(&sym, bp_col_text(st, 2)) == -1 ||
			    bp_buf_adds(&sym, "\"") == -1;
		fail = fail || bp_buf_printf(&fields, "\"symbol\":%s,\"decimals\":", sym.data) == -1 ||
		    (bp_col_is_null(st, 3) ? bp_buf_adds(&fields, "null") :
		    bp_buf_printf(&fields, "%lld", (long long)bp_col_int(st, 3))) == -1;
		fail = fail || replace(&a, bp_col_text(st, 1), "\"symbol\":null,\"decimals\":null",
		    fields.data) == -1;
		bp_buf_reset(&fields);
		fail = fail || bp_buf_printf(&fields, "\"asset\":%s", sym.data) == -1 ||
		    replace(&b, a.data, "\"asset\":null", fields.data) == -1 ||
		    formatted(&a, b.data, bp_col_is_null(st, 3) ? -1 : bp_col_int(st, 3)) == -1 ||
		    nft_metadata(&b, db, meta, bp_col_text(st, 4), a.data, &md) == -1;
		if (fail || bp_webhook_queue_complete(db, bp_col_text(st, 0), b.data) == -1) {
			fail = 1;
			break;
		}
		n++;
	}
	bp_stmt_reset(st);
	if (fail || step == BP_DB_ERROR || bp_db_commit(db) == -1)
		goto fail;
	bp_buf_free(&a);
	bp_buf_free(&b);
	bp_buf_free(&sym);
	bp_buf_free(&fields);
	bp_buf_free(&md);
	return n;
fail:
	bp_db_rollback(db);
	bp_buf_free(&a);
	bp_buf_free(&b);
	bp_buf_free(&sym);
	bp_buf_free(&fields);
	bp_buf_free(&md);
	return -1;
}
