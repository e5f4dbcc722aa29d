/*
 * Format-B webhooks: types, filters, envelope and data (webhook_b.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/hex.h"
#include "evm/address.h"
#include "evm/blocks.h"
#include "net/upstream.h"
#include "rpc/rpc_client.h"
#include "webhook.h"
#include "webhook_b.h"

static const char *const btype_names[BP_WEBHOOK_B__MAX] = {
	"ADDRESS_ACTIVITY",	/* BP_WEBHOOK_B_ADDRESS_ACTIVITY */
	"MINED_TRANSACTION",	/* BP_WEBHOOK_B_MINED_TRANSACTION */
	"NFT_ACTIVITY",		/* BP_WEBHOOK_B_NFT_ACTIVITY */
	"TOKEN_TRANSFER",	/* BP_WEBHOOK_B_TOKEN_TRANSFER */
	"INTERNAL_TRANSFER",	/* BP_WEBHOOK_B_INTERNAL_TRANSFER */
	"NEW_BLOCK",		/* BP_WEBHOOK_B_NEW_BLOCK */
	"PENDING_TRANSACTION",	/* BP_WEBHOOK_B_PENDING_TRANSACTION */
};

#define B_ALL	"ADDRESS_ACTIVITY, MINED_TRANSACTION, NFT_ACTIVITY, TOKEN_TRANSFER," \
	" INTERNAL_TRANSFER, NEW_BLOCK or PENDING_TRANSACTION"

const char *
bp_webhook_btype_name(enum bp_webhook_btype t)
{
	return t < BP_WEBHOOK_B__MAX ? btype_names[t] : "?";
}

int
bp_webhook_btype_parse(const char *s, enum bp_webhook_btype *out)
{
	int i = bp_webhook_name_index(btype_names, BP_WEBHOOK_B__MAX, s);

	if (i >= 0)
		*out = (enum bp_webhook_btype)i;
	return i >= 0 ? 0 : -1;
}

enum bp_webhook_btype
bp_webhook_btype_first(uint32_t mask)
{
	enum bp_webhook_btype t;

	for (t = 0; t < BP_WEBHOOK_B__MAX && !(mask & BP_WEBHOOK_B_BIT(t)); t++)
		;
	return t;
}

int
bp_webhook_btypes_format(uint32_t mask, char *out, size_t cap)
{
	size_t i, len = 0;
	int n;

	if (cap == 0)
		return -1;
	out[0] = '\0';
	for (i = 0; i < BP_WEBHOOK_B__MAX; i++) {
		if (!(mask & BP_WEBHOOK_B_BIT(i)))
			continue;
		n = snprintf(out + len, cap - len, "%s%s", len > 0 ? "," : "", btype_names[i]);
		if (n < 0 || (size_t)n >= cap - len)
			return -1;
		len += (size_t)n;
	}
	return 0;
}

uint32_t
bp_webhook_btypes_parse(const char *s)
{
	enum bp_webhook_btype t;
	char name[32];
	uint32_t mask = 0;
	size_t n;

	while (s != NULL && *s != '\0') {
		n = strcspn(s, ",");
		if (n < sizeof(name)) {
			memcpy(name, s, n);
			name[n] = '\0';
			if (bp_webhook_btype_parse(name, &t) == 0)
				mask |= BP_WEBHOOK_B_BIT(t);
		}
		s += n;
		if (*s == ',')
			s++;
	}
	return mask;
}

/* Whether s starts with an upper-case letter: a format-B name, or a wrong one of its kind. */
static int
upper(const char *s)
{
	return s[0] >= 'A' && s[0] <= 'Z';
}

int
bp_webhook_b_traces_served(const struct bp_config *cfg, const struct bp_network *net,
    char *why, size_t cap)
{
	struct bp_rpc_client_error err;
	struct bp_upstream *up;
	cJSON *blk = NULL, *tr = NULL, *p = NULL;
	const char *h;
	char params[BP_BLOCKS_HASH_STR + 40];

	memset(&err, 0, sizeof(err));
	if ((up = bp_upstream_new(cfg)) == NULL ||
	    (p = cJSON_Parse("[\"latest\"]")) == NULL) {
		snprintf(why, cap, "event_types: INTERNAL_TRANSFER: out of memory");
		goto out;
	}
	/* As the indexer asks (index_fetch.h): trace_block, else debug_traceBlockByHash. */
	if ((tr = bp_rpc_client_call(up, net, "trace_block", p, &err)) != NULL &&
	    cJSON_IsArray(tr))
		goto out;
	cJSON_Delete(tr);
	tr = NULL;
	cJSON_Delete(p);
	if ((p = cJSON_Parse("[\"latest\",false]")) == NULL ||
	    (blk = bp_rpc_client_call(up, net, "eth_getBlockByNumber", p, &err)) == NULL ||
	    (h = bp_blocks_jstr(blk, "hash")) == NULL) {
		snprintf(why, cap, "event_types: INTERNAL_TRANSFER: the node of %s.%s did not"
		    " answer (%s); try again", net->chain, net->network, blk == NULL ?
		    err.message : "no latest block");
		goto out;
	}
	cJSON_Delete(p);
	snprintf(params, sizeof(params), "[\"%.66s\",{\"tracer\":\"callTracer\"}]", h);
	if ((p = cJSON_Parse(params)) == NULL ||
	    (tr = bp_rpc_client_call(up, net, "debug_traceBlockByHash", p, &err)) == NULL ||
	    !cJSON_IsArray(tr))
		snprintf(why, cap, "event_types: INTERNAL_TRANSFER needs call traces, which the"
		    " node of %s.%s does not serve (trace_block, debug_traceBlockByHash: %s)",
		    net->chain, net->network, tr == NULL ? err.message : "not an array");
out:
	cJSON_Delete(p);
	cJSON_Delete(blk);
	bp_upstream_free(up);
	if (tr == NULL || !cJSON_IsArray(tr)) {
		cJSON_Delete(tr);
		return -1;
	}
	cJSON_Delete(tr);
	return 0;
}

int
bp_webhook_btypes_input(const cJSON *body, uint32_t *mask, char *why, size_t cap)
{
	const cJSON *one = cJSON_GetObjectItemCaseSensitive(body, "event_type");
	const cJSON *many = cJSON_GetObjectItemCaseSensitive(body, "event_types"), *it;
	enum bp_webhook_btype t;
	int i = 0;

	*mask = 0;
	if (many == NULL) {
		if (!cJSON_IsString(one) || !upper(one->valuestring))
			return 0;
		if (bp_webhook_btype_parse(one->valuestring, &t) == -1) {
			snprintf(why, cap, "event_type must be %s (format B), or a format-A type",
			    B_ALL);
			return -1;
		}
		*mask = BP_WEBHOOK_B_BIT(t);
		return 1;
	}
	if (one != NULL) {
		snprintf(why, cap, "event_type: give event_type or event_types, not both");
		return -1;
	}
	if (!cJSON_IsArray(many) || cJSON_GetArraySize(many) < 1 ||
	    cJSON_GetArraySize(many) > BP_WEBHOOK_B__MAX) {
		snprintf(why, cap, "event_types must be an array of 1 to %d format-B types",
		    BP_WEBHOOK_B__MAX);
		return -1;
	}
	cJSON_ArrayForEach(it, many) {
		if (!cJSON_IsString(it) || bp_webhook_btype_parse(it->valuestring, &t) == -1) {
			snprintf(why, cap, "event_types[%d] must be %s", i, B_ALL);
			return -1;
		}
		if (*mask & BP_WEBHOOK_B_BIT(t)) {
			snprintf(why, cap, "event_types[%d]: %s is listed twice", i,
			    btype_names[t]);
			return -1;
		}
		*mask |= BP_WEBHOOK_B_BIT(t);
		i++;
	}
	return 1;
}

/* ---- filters ---- */

/* The filters and the width of their items in bytes (0: min_value). In canonical order. */
static const struct {
	const char	*name;
	size_t		 width;
	size_t		 max;
} filter_keys[] = {
	{ "addresses", 20, BP_WEBHOOK_ITEMS_MAX },
	{ "contracts", 20, BP_WEBHOOK_ITEMS_MAX },
	{ "min_value", 0, 0 },
	{ "selectors", 4, BP_WEBHOOK_B_SELECTORS_MAX },
	{ "topics", 32, BP_WEBHOOK_ITEMS_MAX },
	{ "tx_hashes", 32, BP_WEBHOOK_ITEMS_MAX },
};
#define NKEYS	(sizeof(filter_keys) / sizeof(filter_keys[0]))

/* What each kind of item is called in a message. */
static const char *
item_kind(size_t width)
{
	return width == 20 ? "address of 40 hex digits" : width == 4 ?
	    "selector of 8 hex digits" : "hash of 64 hex digits";
}

/* Appends "name":[items] of n-byte hex strings from the array j. 0, or -1 with why. */
static int
hex_array(const cJSON *j, const char *name, size_t width, size_t max, struct bp_buf *canon,
    char *why, size_t cap)
{
	const cJSON *it;
	uint8_t v[32];
	char s[67];
	int i = 0;

	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 || (size_t)cJSON_GetArraySize(j) > max) {
		snprintf(why, cap, "filters.%s must be an array of 1 to %zu items", name, max);
		return -1;
	}
	if (bp_buf_printf(canon, "\"%s\":[", name) == -1)
		goto big;
	cJSON_ArrayForEach(it, j) {
		if (!cJSON_IsString(it) || bp_hex_decode_fixed(it->valuestring,
		    strlen(it->valuestring), v, width) == -1) {
			snprintf(why, cap, "filters.%s[%d] must be a 0x %s", name, i,
			    item_kind(width));
			return -1;
		}
		bp_hex_encode(v, width, s, sizeof(s));
		if (bp_buf_printf(canon, "%s\"%s\"", i++ > 0 ? "," : "", s) == -1)
			goto big;
	}
	if (bp_buf_adds(canon, "]") == -1)
		goto big;
	return 0;
big:
	snprintf(why, cap, "filters are too large");
	return -1;
}

/* min_value: a decimal string of a uint256, or a non-negative integer number. */
static int
min_value(const cJSON *j, struct bp_buf *canon, char *why, size_t cap)
{
	struct bp_u256 v;
	char s[80];

	if (cJSON_IsNumber(j) && j->valuedouble >= 0 && j->valuedouble <= 9007199254740991.0 &&
	    (double)(int64_t)j->valuedouble == j->valuedouble)
		snprintf(s, sizeof(s), "%lld", (long long)j->valuedouble);
	else if (cJSON_IsString(j) && strlen(j->valuestring) > 0 &&
	    strlen(j->valuestring) <= 78 &&
	    strspn(j->valuestring, "0123456789") == strlen(j->valuestring) &&
	    bp_u256_from_dec(&v, j->valuestring, strlen(j->valuestring)) == 0 &&
	    bp_u256_to_dec(&v, s, sizeof(s)) == 0)
		;
	else {
		snprintf(why, cap, "filters.min_value must be a decimal string of a uint256 (wei or"
		    " the token's smallest unit)");
		return -1;
	}
	return bp_buf_printf(canon, "\"min_value\":\"%s\"", s) == -1 ? -1 : 0;
}

/* The requirement of one type on the filters given (bits of filter_keys); NULL when met. */
static const char *
needs(enum bp_webhook_btype t, unsigned int given)
{
	unsigned int addr = 1u << 0, contr = 1u << 1, hashes = 1u << 5;

	switch (t) {
	case BP_WEBHOOK_B_ADDRESS_ACTIVITY:
	case BP_WEBHOOK_B_INTERNAL_TRANSFER:
	case BP_WEBHOOK_B_PENDING_TRANSACTION:
		return given & addr ? NULL : "filters.addresses is required for %s";
	case BP_WEBHOOK_B_TOKEN_TRANSFER:
	case BP_WEBHOOK_B_NFT_ACTIVITY:
		return given & (addr | contr) ? NULL :
		    "filters.addresses: give addresses, contracts or both for %s";
	case BP_WEBHOOK_B_MINED_TRANSACTION:
		return given & (addr | hashes) ? NULL :
		    "filters.tx_hashes: give tx_hashes or addresses for %s";
	default:
		return NULL;
	}
}

int
bp_webhook_filters_parse(uint32_t mask, const cJSON *filters, struct bp_buf *canon,
    char *why, size_t cap)
{
	const cJSON *m, *j;
	const char *need;
	unsigned int given = 0;
	size_t i, k = 0;

	bp_buf_reset(canon);
	if (filters != NULL && !cJSON_IsObject(filters)) {
		snprintf(why, cap, "filters must be an object");
		return -1;
	}
	cJSON_ArrayForEach(m, filters) {
		for (i = 0; i < NKEYS; i++)
			if (m->string != NULL && strcmp(m->string, filter_keys[i].name) == 0)
				break;
		if (i == NKEYS) {
			snprintf(why, cap, "filters.%.40s is not a filter (addresses, contracts,"
			    " min_value, selectors, topics, tx_hashes)", m->string != NULL ?
			    m->string : "?");
			return -1;
		}
	}
	if (bp_buf_adds(canon, "{") == -1)
		return -1;
	for (i = 0; i < NKEYS; i++) {
		/* Case-sensitive, and a repeated member is refused rather than half-read. */
		j = NULL;
		cJSON_ArrayForEach(m, filters)
			if (strcmp(m->string, filter_keys[i].name) == 0) {
				if (j != NULL) {
					snprintf(why, cap, "filters.%s is given twice",
					    filter_keys[i].name);
					return -1;
				}
				j = m;
			}
		if (j == NULL)
			continue;
		if (k++ > 0 && bp_buf_adds(canon, ",") == -1)
			return -1;
		if ((filter_keys[i].width == 0 ? min_value(j, canon, why, cap) :
		    hex_array(j, filter_keys[i].name, filter_keys[i].width, filter_keys[i].max,
		    canon, why, cap)) == -1)
			return -1;
		given |= 1u << i;
	}
	for (i = 0; i < BP_WEBHOOK_B__MAX; i++)
		if ((mask & BP_WEBHOOK_B_BIT(i)) &&
		    (need = needs((enum bp_webhook_btype)i, given)) != NULL) {
			snprintf(why, cap, need, btype_names[i]);
			return -1;
		}
	if (bp_buf_adds(canon, "}") == -1) {
		snprintf(why, cap, "filters are too large");
		return -1;
	}
	return 0;
}

/* ---- envelope and data ---- */

int
bp_webhook_b_envelope(struct bp_buf *b, const char *id, enum bp_webhook_btype t,
    int64_t created_ms, const char *chain, int64_t chain_id, const char *data, size_t len)
{
	char iso[32];
	struct tm tm;
	time_t s = (time_t)(created_ms / 1000);

	gmtime_r(&s, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
	return bp_buf_printf(b, "{\"id\":\"%s\",\"type\":\"%s\",\"createdAt\":\"%s.%03dZ\","
	    "\"chain\":\"%s\",\"chainId\":%lld,\"data\":", id, bp_webhook_btype_name(t), iso,
	    (int)(created_ms % 1000), chain, (long long)chain_id) == -1 ||
	    bp_buf_add(b, data, len) == -1 || bp_buf_adds(b, "}") == -1 ? -1 : 0;
}

int
bp_webhook_b_put_addr(struct bp_buf *b, const char *name, const uint8_t *a)
{
	char s[BP_ADDR_STR_MAX];

	if (a == NULL)
		return bp_buf_printf(b, ",\"%s\":null", name);
	bp_addr_format_checksum(a, s, sizeof(s));
	return bp_buf_printf(b, ",\"%s\":\"%s\"", name, s);
}

int
bp_webhook_b_put_u256(struct bp_buf *b, const char *name, const struct bp_u256 *v, int quoted)
{
	char s[80];

	if (bp_u256_to_dec(v, s, sizeof(s)) == -1)
		return -1;
	return bp_buf_printf(b, quoted ? ",\"%s\":\"%s\"" : ",\"%s\":%s", name, s);
}

/* ,"token":{"address":"0xChecksummed" (the object is closed by the caller). */
static int
token_address(struct bp_buf *b, const uint8_t *a)
{
	char s[BP_ADDR_STR_MAX];

	bp_addr_format_checksum(a, s, sizeof(s));
	return bp_buf_printf(b, ",\"token\":{\"address\":\"%s\"", s);
}

/* What an NFT movement is: from the zero address a mint, to it a burn. */
static const char *
nft_activity(const struct bp_webhook_b_move *mv)
{
	static const uint8_t zero[20];

	if (memcmp(mv->from, zero, 20) == 0)
		return "mint";
	if (mv->to != NULL && memcmp(mv->to, zero, 20) == 0)
		return "burn";
	return "transfer";
}

int
bp_webhook_b_data_move(struct bp_buf *b, enum bp_webhook_btype t,
    const struct bp_webhook_b_move *mv)
{
	int fail;

	bp_buf_reset(b);
	fail = bp_buf_printf(b, "{\"blockNumber\":%lld,\"transactionHash\":\"%s\"",
	    (long long)mv->block, mv->tx_hash) == -1 ||
	    (mv->log_index >= 0 ? bp_buf_printf(b, ",\"logIndex\":%lld",
	    (long long)mv->log_index) : bp_buf_adds(b, ",\"logIndex\":null")) == -1 ||
	    bp_webhook_b_put_addr(b, "from", mv->from) == -1 ||
	    bp_webhook_b_put_addr(b, "to", mv->to) == -1;
	switch (t) {
	case BP_WEBHOOK_B_TOKEN_TRANSFER:
		/* The placeholders the token filler replaces (webhook_token.c). */
		fail = fail || token_address(b, mv->contract) == -1 ||
		    bp_buf_adds(b, ",\"symbol\":null,\"decimals\":null}") == -1 ||
		    bp_webhook_b_put_u256(b, "value", &mv->value, 1) == -1 ||
		    bp_buf_adds(b, ",\"valueFormatted\":null") == -1;
		break;
	case BP_WEBHOOK_B_NFT_ACTIVITY:
		fail = fail || bp_webhook_b_put_addr(b, "contract", mv->contract) == -1 ||
		    bp_webhook_b_put_u256(b, "tokenId", &mv->token_id, 1) == -1 ||
		    bp_buf_printf(b, ",\"standard\":\"%s\"", mv->standard) == -1 ||
		    bp_webhook_b_put_u256(b, "quantity", &mv->value, 0) == -1 ||
		    bp_buf_printf(b, ",\"activity\":\"%s\",\"metadata\":null",
		    nft_activity(mv)) == -1;
		break;
	default:	/* ADDRESS_ACTIVITY, INTERNAL_TRANSFER */
		fail = fail || bp_webhook_b_put_u256(b, "value", &mv->value, 1) == -1 ||
		    (mv->contract == NULL ? bp_buf_adds(b, ",\"asset\":\"ETH\"") :
		    bp_buf_adds(b, ",\"asset\":null")) == -1 ||
		    bp_webhook_b_put_addr(b, "contract", mv->contract) == -1 ||
		    (mv->standard != NULL &&
		    (bp_webhook_b_put_u256(b, "tokenId", &mv->token_id, 1) == -1 ||
		    bp_buf_printf(b, ",\"standard\":\"%s\"", mv->standard) == -1)) ||
		    (mv->direction != NULL &&
		    bp_buf_printf(b, ",\"direction\":\"%s\"", mv->direction) == -1) ||
		    (t == BP_WEBHOOK_B_INTERNAL_TRANSFER &&
		    bp_buf_printf(b, ",\"traceAddress\":%s,\"callType\":\"%s\"",
		    mv->trace_address, mv->call_type) == -1);
		break;
	}
	return fail || bp_buf_adds(b, "}") == -1 ? -1 : 0;
}

int
bp_webhook_b_data_tx(struct bp_buf *b, const uint8_t *from, const uint8_t *to,
    const char *value, int status, int64_t gas_used, const char *price)
{
	return bp_webhook_b_put_addr(b, "from", from) == -1 ||
	    bp_webhook_b_put_addr(b, "to", to) == -1 ||
	    bp_buf_printf(b, ",\"value\":\"%s\",\"status\":%s", value, status == 1 ?
	    "\"success\"" : status == 0 ? "\"reverted\"" : "null") == -1 ||
	    (gas_used >= 0 ? bp_buf_printf(b, ",\"gasUsed\":%lld", (long long)gas_used) :
	    bp_buf_adds(b, ",\"gasUsed\":null")) == -1 ||
	    (price[0] != '\0' ? bp_buf_printf(b, ",\"effectiveGasPrice\":\"%s\"}", price) :
	    bp_buf_adds(b, ",\"effectiveGasPrice\":null}")) == -1 ? -1 : 0;
}

int
bp_webhook_b_data_pending(struct bp_buf *b, const char *hash, const uint8_t *from,
    const uint8_t *to, const struct bp_u256 *value, const struct bp_u256 *nonce,
    const uint8_t *sel)
{
	char s[11];

	bp_buf_reset(b);
	if (sel != NULL)
		bp_hex_encode(sel, 4, s, sizeof(s));
	return bp_buf_printf(b, "{\"transactionHash\":\"%s\"", hash) == -1 ||
	    bp_webhook_b_put_addr(b, "from", from) == -1 ||
	    bp_webhook_b_put_addr(b, "to", to) == -1 ||
	    bp_webhook_b_put_u256(b, "value", value, 1) == -1 ||
	    bp_webhook_b_put_u256(b, "nonce", nonce, 0) == -1 ||
	    (sel != NULL ? bp_buf_printf(b, ",\"selector\":\"%s\"}", s) :
	    bp_buf_adds(b, ",\"selector\":null}")) == -1 ? -1 : 0;
}

/* A hex quantity member of o as an integer into *out; 0 or -1. */
static int
quantity(const cJSON *o, const char *name, int64_t *out)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, name);
	struct bp_u256 v;
	uint64_t u;

	if (!cJSON_IsString(j) ||
	    bp_u256_from_quantity(&v, j->valuestring, strlen(j->valuestring)) == -1 ||
	    bp_u256_to_u64(&v, &u) == -1 || u > INT64_MAX)
		return -1;
	*out = (int64_t)u;
	return 0;
}

/* A 32-byte hash member of o, lower-case, into out (67 bytes); 0 or -1. */
static int
hash(const cJSON *o, const char *name, char out[67])
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, name);
	uint8_t h[32];

	if (!cJSON_IsString(j) ||
	    bp_hex_decode_fixed(j->valuestring, strlen(j->valuestring), h, 32) == -1)
		return -1;
	return bp_hex_encode(h, 32, out, 67);
}

int
bp_webhook_b_data_block(struct bp_buf *b, const cJSON *block)
{
	const cJSON *txs = cJSON_GetObjectItemCaseSensitive(block, "transactions");
	char h[67], parent[67];
	int64_t number, ts, gas;

	bp_buf_reset(b);
	if (quantity(block, "number", &number) == -1 || quantity(block, "timestamp", &ts) == -1 ||
	    quantity(block, "gasUsed", &gas) == -1 || hash(block, "hash", h) == -1 ||
	    hash(block, "parentHash", parent) == -1 || !cJSON_IsArray(txs))
		return -1;
	return bp_buf_printf(b, "{\"blockNumber\":%lld,\"hash\":\"%s\",\"parentHash\":\"%s\","
	    "\"timestamp\":%lld,\"gasUsed\":%lld,\"transactionCount\":%d}", (long long)number, h,
	    parent, (long long)ts, (long long)gas, cJSON_GetArraySize(txs));
}
