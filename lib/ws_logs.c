/*
 * The logs subscription (ws_logs.h). The filter is parsed with cJSON from a message already
 * capped at max_body and nesting-checked by the envelope scanner; what is kept per block is the
 * text of the logs sent, bounded in blocks and bytes.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hex.h"
#include "log.h"
#include "rpc_client.h"
#include "upstream.h"
#include "util.h"
#include "ws_logs.h"

#define MAX_ALTS	32	/* addresses, or alternatives of one topic */

struct kept {
	int64_t		 number;	/* -1: empty */
	char		 hash[67];
	char		*logs;		/* a JSON array of the logs sent, or NULL */
	size_t		 len;
};

struct bp_ws_logs {
	cJSON		*filter;	/* {"address":..,"topics":..}: what goes to eth_getLogs */
	struct kept	 kept[BP_WS_LOGS_KEEP];
	size_t		 kept_bytes;
};

/* 1 when j is a string of "0x" and n bytes in hex. */
static int
is_hex(const cJSON *j, size_t n)
{
	uint8_t buf[32];
	const char *s;

	if (!cJSON_IsString(j) || (s = j->valuestring) == NULL)
		return 0;
	return bp_hex_decode_fixed(s, strlen(s), buf, n) == 0;
}

/* 1 when j is one value of n bytes, or an array of 1..MAX_ALTS of them (null too if nulls). */
static int
alts_ok(const cJSON *j, size_t n, int nulls)
{
	const cJSON *e;
	int count = 0;

	if (nulls && cJSON_IsNull(j))
		return 1;
	if (!cJSON_IsArray(j))
		return is_hex(j, n);
	cJSON_ArrayForEach(e, j) {
		if (++count > MAX_ALTS || !is_hex(e, n))
			return 0;
	}
	return 1;
}

static int
filter_ok(const cJSON *f, char *err, size_t errlen)
{
	const cJSON *m, *t;
	int n = 0;

	if (f == NULL)
		return 1;
	if (!cJSON_IsObject(f)) {
		bp_strlcpy(err, "the logs filter must be an object {address?, topics?}", errlen);
		return 0;
	}
	cJSON_ArrayForEach(m, f) {
		if (strcmp(m->string, "address") == 0) {
			if (!alts_ok(m, 20, 0)) {
				bp_strlcpy(err, "address must be an address or an array of at most 32",
				    errlen);
				return 0;
			}
		} else if (strcmp(m->string, "topics") == 0) {
			if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) > 4) {
				bp_strlcpy(err, "topics must be an array of at most 4 entries", errlen);
				return 0;
			}
			cJSON_ArrayForEach(t, m) {
				if (!alts_ok(t, 32, 1)) {
					bp_strlcpy(err, "each topic must be null, a 32-byte hash or an "
					    "array of at most 32 of them", errlen);
					return 0;
				}
			}
		} else {
			bp_strlcpy(err, "the logs filter takes only address and topics", errlen);
			return 0;
		}
		n++;
	}
	return n <= 2;
}

struct bp_ws_logs *
bp_ws_logs_new(const char *params, size_t len, char *err, size_t errlen)
{
	struct bp_ws_logs *l = NULL;
	cJSON *p, *f;
	size_t i;

	if ((p = cJSON_ParseWithLength(params, len)) == NULL || !cJSON_IsArray(p) ||
	    cJSON_GetArraySize(p) > 2) {
		bp_strlcpy(err, "eth_subscribe takes [\"logs\", {address?, topics?}]", errlen);
		goto out;
	}
	f = cJSON_GetArrayItem(p, 1);
	if (!filter_ok(f, err, errlen))
		goto out;
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		bp_strlcpy(err, "out of memory", errlen);
		goto out;
	}
	for (i = 0; i < BP_WS_LOGS_KEEP; i++)
		l->kept[i].number = -1;
	l->filter = f != NULL ? cJSON_DetachItemFromArray(p, 1) : cJSON_CreateObject();
	if (l->filter == NULL) {
		bp_strlcpy(err, "out of memory", errlen);
		free(l);
		l = NULL;
	}
out:
	cJSON_Delete(p);
	return l;
}

static void
forget(struct bp_ws_logs *l, struct kept *k)
{
	l->kept_bytes -= k->len;
	free(k->logs);
	k->logs = NULL;
	k->len = 0;
	k->number = -1;
}

void
bp_ws_logs_free(struct bp_ws_logs *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < BP_WS_LOGS_KEEP; i++)
		forget(l, &l->kept[i]);
	cJSON_Delete(l->filter);
	free(l);
}

/* Emits each element of arr; with removed, its "removed" member set to true first. */
static int
emit_all(cJSON *arr, int removed, bp_ws_logs_emit emit, void *arg)
{
	cJSON *e;
	char *s;
	int n = 0, rc;

	cJSON_ArrayForEach(e, arr) {
		if (removed) {
			cJSON_DeleteItemFromObjectCaseSensitive(e, "removed");
			cJSON_AddBoolToObject(e, "removed", 1);
		}
		if ((s = cJSON_PrintUnformatted(e)) == NULL)
			return -1;
		rc = emit(s, strlen(s), arg);
		free(s);
		if (rc == -1)
			return -1;
		n++;
	}
	return n;
}

/* Keeps the text of arr for block (number, hash), within the bounds. */
static void
keep(struct bp_ws_logs *l, int64_t number, const char *hash, const cJSON *arr)
{
	struct kept *k = &l->kept[number % BP_WS_LOGS_KEEP];
	char *s;

	forget(l, k);
	if (cJSON_GetArraySize(arr) == 0 || (s = cJSON_PrintUnformatted(arr)) == NULL)
		return;
	k->len = strlen(s);
	if (l->kept_bytes + k->len > BP_WS_LOGS_KEEP_BYTES) {
		bp_warn("block %lld: its logs are past the reorg memory; a reorg will not send "
		    "them again", (long long)number);
		free(s);
		k->len = 0;
		return;
	}
	k->logs = s;
	k->number = number;
	bp_strlcpy(k->hash, hash, sizeof(k->hash));
	l->kept_bytes += k->len;
}

int
bp_ws_logs_block(struct bp_ws_logs *l, struct bp_upstream *up, const struct bp_network *net,
    int64_t number, const char *hash, bp_ws_logs_emit emit, void *arg)
{
	struct bp_jsonrpc_error err;
	cJSON *params, *f, *res = NULL;
	int rc = -1;

	if ((params = cJSON_CreateArray()) == NULL ||
	    (f = cJSON_Duplicate(l->filter, 1)) == NULL)
		goto out;
	cJSON_AddItemToArray(params, f);
	if (cJSON_AddStringToObject(f, "blockHash", hash) == NULL)
		goto out;
	res = bp_jsonrpc_call(up, net, "eth_getLogs", params, &err);
	if (!cJSON_IsArray(res)) {
		bp_warn("block %lld: eth_getLogs: %s", (long long)number,
		    res == NULL ? err.message : "not an array");
		goto out;
	}
	if ((rc = emit_all(res, 0, emit, arg)) >= 0)
		keep(l, number, hash, res);
out:
	cJSON_Delete(params);
	cJSON_Delete(res);
	return rc;
}

int
bp_ws_logs_removed(struct bp_ws_logs *l, int64_t number, const char *hash, bp_ws_logs_emit emit,
    void *arg)
{
	struct kept *k = &l->kept[number % BP_WS_LOGS_KEEP];
	cJSON *arr;
	int rc = 0;

	if (number < 0 || k->number != number || strcmp(k->hash, hash) != 0)
		return 0;
	if ((arr = cJSON_ParseWithLength(k->logs, k->len)) != NULL)
		rc = emit_all(arr, 1, emit, arg);
	cJSON_Delete(arr);
	forget(l, k);
	return rc;
}
