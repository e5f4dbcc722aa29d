/*
 * The logs subscription (ws_logs.h). The filter is parsed with cJSON from a message already
 * capped at max_body and nesting-checked by the envelope scanner; what is kept per block is the
 * text of the logs sent, bounded in blocks and bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "index/index_logs.h"
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

/* 1 when s is one of the alternatives alts (a string or an array of them; null: any). */
static int
alt_match(const cJSON *alts, const char *s)
{
	const cJSON *e;

	if (alts == NULL || cJSON_IsNull(alts))
		return 1;
	if (s == NULL)
		return 0;
	if (cJSON_IsString(alts))
		return strcasecmp(alts->valuestring, s) == 0;
	cJSON_ArrayForEach(e, alts)
		if (cJSON_IsString(e) && strcasecmp(e->valuestring, s) == 0)
			return 1;
	return 0;
}

static int
row_matches(const cJSON *filter, const struct bp_index_logs_row *row)
{
	const cJSON *t;
	size_t i = 0;

	if (!alt_match(cJSON_GetObjectItemCaseSensitive(filter, "address"), row->address))
		return 0;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(filter, "topics")) {
		if (!alt_match(t, i < row->ntopics ? row->topics[i] : NULL))
			return 0;
		i++;
	}
	return 1;
}

/* What one block's read gathers: the matching logs as a JSON array, for the reorg memory. */
struct gather {
	const struct bp_ws_logs	*l;
	struct bp_buf		 arr;
	struct bp_buf		 one;
	bp_ws_logs_emit		 emit;
	void			*arg;
	int			 n;
	int			 full;		/* arr is past its cap */
};

static int
gather_row(const struct bp_index_logs_row *row, void *arg)
{
	struct gather *g = arg;

	if (!row_matches(g->l->filter, row))
		return 0;
	bp_buf_reset(&g->one);
	if (bp_index_logs_json(row, 0, &g->one) == -1) {
		bp_warn("block %lld: log %lld does not fit a message", (long long)row->block,
		    (long long)row->log_index);
		return 0;
	}
	/* Past the reorg memory's bytes, the block's logs are sent but not kept. */
	if (!g->full && (bp_buf_adds(&g->arr, g->n ? "," : "[") == -1 ||
	    bp_buf_add(&g->arr, g->one.data, g->one.len) == -1))
		g->full = 1;
	g->n++;
	return g->emit(g->one.data, g->one.len, g->arg);
}

int
bp_ws_logs_block(struct bp_ws_logs *l, struct bp_db *db, const char *chain, int64_t number,
    const char *hash, bp_ws_logs_emit emit, void *arg)
{
	struct gather g;
	cJSON *arr;
	int rc;

	memset(&g, 0, sizeof(g));
	g.l = l;
	g.emit = emit;
	g.arg = arg;
	bp_buf_init(&g.arr, BP_WS_LOGS_KEEP_BYTES + 2);
	bp_buf_init(&g.one, BP_WS_LOGS_KEEP_BYTES);
	rc = bp_index_logs_block(db, chain, number, hash, gather_row, &g);
	if (rc >= 0) {
		rc = g.n;
		if (g.n > 0 && !g.full && bp_buf_adds(&g.arr, "]") == 0 &&
		    (arr = cJSON_ParseWithLength(g.arr.data, g.arr.len)) != NULL) {
			keep(l, number, hash, arr);
			cJSON_Delete(arr);
		} else if (g.n > 0)
			bp_warn("block %lld: its logs are past the reorg memory; a reorg will not "
			    "send them again", (long long)number);
		else
			keep(l, number, hash, NULL);
	}
	bp_buf_free(&g.arr);
	bp_buf_free(&g.one);
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
