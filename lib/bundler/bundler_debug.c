/*
 * debug_bundler_* (bundler_debug.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "bundler.h"
#include "bundler_debug.h"
#include "bundler_pool.h"
#include "bundler_reputation.h"
#include "bundler_submit.h"
#include "core/hex.h"
#include "core/util.h"
#include "evm/address.h"
#include "rpc/rpc_envelope.h"

#define CLEAR_BATCH	1024	/* pending ops dropped a round */
#define DUMP_MAX	10000	/* pending ops a dump shows */

/* -32601, as for a method the bundler does not offer, unless the network turned them on. */
static int
off(struct bp_bundler_call *c, const char *name)
{
	if (c->net->debug_bundler)
		return 0;
	return bp_bundler_fail(c, BP_JSONRPC_METHOD_NOT_FOUND, "the method %s is not offered by "
	    "the bundler", name);
}

static int
ok(struct bp_bundler_call *c)
{
	return bp_buf_adds(c->result, "\"ok\"") == -1 ?
	    bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory") : 0;
}

/* Renders j (consumed) as the result. */
static int
result(struct bp_bundler_call *c, cJSON *j)
{
	char *text = j != NULL ? cJSON_PrintUnformatted(j) : NULL;
	int rc;

	cJSON_Delete(j);
	if (text == NULL)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
	rc = bp_buf_adds(c->result, text);
	free(text);
	return rc == -1 ? bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "response too large") : 0;
}

struct hashes {
	char	(*h)[BP_BUNDLER_POOL_HASH_STR];
	size_t	 n;
};

static int
collect(const struct bp_bundler_pool_op *op, void *arg)
{
	struct hashes *hs = arg;

	bp_strlcpy(hs->h[hs->n++], op->hash, BP_BUNDLER_POOL_HASH_STR);
	return 0;
}

/* Drops every pending op of the network (read first: dropping writes the table). */
static int
clear_pool(struct bp_bundler_call *c)
{
	struct hashes hs;
	char chain[BP_BUNDLER_POOL_CHAIN_MAX];
	size_t i;
	int n, rc = 0;

	bp_bundler_chain_key(c->net, chain, sizeof(chain));
	if ((hs.h = calloc(CLEAR_BATCH, sizeof(*hs.h))) == NULL)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
	do {
		hs.n = 0;
		if ((n = bp_bundler_pool_each_pending(c->r->db, chain, CLEAR_BATCH, collect,
		    &hs)) == -1) {
			rc = -1;
			break;
		}
		for (i = 0; i < hs.n; i++)
			bp_bundler_pool_drop(c->r->db, chain, hs.h[i], "debug_bundler_clearState");
	} while (n == CLEAR_BATCH);
	free(hs.h);
	return rc == -1 ? bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error") : 0;
}

int
bp_bundler_debug_clear_mempool(struct bp_bundler_call *c)
{
	if (off(c, "debug_bundler_clearMempool") == -1 || clear_pool(c) == -1)
		return -1;
	return ok(c);
}

int
bp_bundler_debug_clear_state(struct bp_bundler_call *c)
{
	char chain[BP_BUNDLER_POOL_CHAIN_MAX];

	if (off(c, "debug_bundler_clearState") == -1 || clear_pool(c) == -1)
		return -1;
	bp_bundler_chain_key(c->net, chain, sizeof(chain));
	if (bp_bundler_reputation_clear(c->r->db, chain) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
	return ok(c);
}

static int
dump_op(const struct bp_bundler_pool_op *op, void *arg)
{
	cJSON *j = cJSON_Parse(op->op_json);

	return j == NULL || !cJSON_AddItemToArray(arg, j);
}

int
bp_bundler_debug_dump_mempool(struct bp_bundler_call *c)
{
	char chain[BP_BUNDLER_POOL_CHAIN_MAX];
	cJSON *a;

	if (off(c, "debug_bundler_dumpMempool") == -1)
		return -1;
	if ((a = cJSON_CreateArray()) == NULL)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
	bp_bundler_chain_key(c->net, chain, sizeof(chain));
	if (bp_bundler_pool_each_pending(c->r->db, chain, DUMP_MAX, dump_op, a) == -1) {
		cJSON_Delete(a);
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
	}
	return result(c, a);
}

int
bp_bundler_debug_send_bundle_now(struct bp_bundler_call *c)
{
	struct bp_bundler_submitter s;
	char msg[256];
	int rc;

	if (off(c, "debug_bundler_sendBundleNow") == -1)
		return -1;
	if ((rc = bp_bundler_submit_init(&s, c->net)) != 0) {
		bp_bundler_submit_fini(&s);
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, rc == 1 ? "this network has no "
		    "bundler_key" : "the bundler_key does not load");
	}
	s.force = 1;
	rc = bp_bundler_submit_pass(c->r->db, c->up, &s, msg, sizeof(msg));
	bp_bundler_submit_fini(&s);
	if (rc == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "the bundle failed: %s", msg);
	if (s.last_tx[0] == '\0')
		return bp_buf_adds(c->result, "null") == -1 ? -1 : 0;
	return bp_buf_printf(c->result, "\"%s\"", s.last_tx) == -1 ? -1 : 0;
}

int
bp_bundler_debug_set_bundling_mode(struct bp_bundler_call *c)
{
	char chain[BP_BUNDLER_POOL_CHAIN_MAX];
	const char *mode;

	if (off(c, "debug_bundler_setBundlingMode") == -1 ||
	    (mode = bp_bundler_param_str(c, 0, "mode")) == NULL)
		return -1;
	if (strcmp(mode, "manual") != 0 && strcmp(mode, "auto") != 0)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "params[0] (mode) must be "
		    "\"manual\" or \"auto\"");
	bp_bundler_chain_key(c->net, chain, sizeof(chain));
	if (bp_bundler_reputation_set_manual(c->r->db, chain, strcmp(mode, "manual") == 0) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
	return ok(c);
}

/* A count: a JSON number or a hex quantity, 0 to 2^53. 0 or -1. */
static int
count(const cJSON *j, int64_t *out)
{
	uint64_t v;

	if (cJSON_IsNumber(j) && j->valuedouble >= 0 && j->valuedouble <= 9007199254740992.0 &&
	    (double)(int64_t)j->valuedouble == j->valuedouble) {
		*out = (int64_t)j->valuedouble;
		return 0;
	}
	if (cJSON_IsString(j) && bp_hex_quantity_lenient(j->valuestring, strlen(j->valuestring),
	    &v) == 0 && v <= (UINT64_C(1) << 53)) {
		*out = (int64_t)v;
		return 0;
	}
	return -1;
}

int
bp_bundler_debug_set_reputation(struct bp_bundler_call *c)
{
	const cJSON *list = cJSON_GetArrayItem(c->params, 0), *e, *a;
	char chain[BP_BUNDLER_POOL_CHAIN_MAX], addr[BP_ADDR_STRLEN];
	int64_t seen, included;
	uint8_t raw[20];
	int i = 0;

	if (off(c, "debug_bundler_setReputation") == -1)
		return -1;
	if (!cJSON_IsArray(list))
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "params[0] must be an array "
		    "of {address, opsSeen, opsIncluded}");
	/* Checked whole first: nothing is written when one entry is bad. */
	cJSON_ArrayForEach(e, list) {
		a = cJSON_GetObjectItemCaseSensitive(e, "address");
		if (!cJSON_IsString(a) || bp_addr_parse(a->valuestring, strlen(a->valuestring), 0,
		    raw) == -1 || count(cJSON_GetObjectItemCaseSensitive(e, "opsSeen"), &seen) == -1 ||
		    count(cJSON_GetObjectItemCaseSensitive(e, "opsIncluded"), &included) == -1)
			return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "params[0][%d] must be "
			    "{address, opsSeen, opsIncluded} with counts as numbers or hex", i);
		i++;
	}
	bp_bundler_chain_key(c->net, chain, sizeof(chain));
	cJSON_ArrayForEach(e, list) {
		a = cJSON_GetObjectItemCaseSensitive(e, "address");
		bp_addr_parse(a->valuestring, strlen(a->valuestring), 0, raw);
		bp_addr_format_lower(raw, addr, sizeof(addr));
		count(cJSON_GetObjectItemCaseSensitive(e, "opsSeen"), &seen);
		count(cJSON_GetObjectItemCaseSensitive(e, "opsIncluded"), &included);
		if (bp_bundler_reputation_set(c->r->db, chain, addr, seen, included,
		    (int64_t)time(NULL)) == -1)
			return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
	}
	return ok(c);
}

static int
dump_entry(const struct bp_bundler_reputation_entry *e, void *arg)
{
	char cs[BP_ADDR_STRLEN], q[24];
	uint8_t raw[20];
	cJSON *o;

	if ((o = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(arg, o))
		return 1;
	if (bp_addr_parse(e->address, strlen(e->address), 0, raw) == 0)
		bp_addr_format_checksum(raw, cs, sizeof(cs));
	else
		bp_strlcpy(cs, e->address, sizeof(cs));
	cJSON_AddStringToObject(o, "address", cs);
	bp_hex_quantity_encode((uint64_t)e->ops_seen, q, sizeof(q));
	cJSON_AddStringToObject(o, "opsSeen", q);
	bp_hex_quantity_encode((uint64_t)e->ops_included, q, sizeof(q));
	cJSON_AddStringToObject(o, "opsIncluded", q);
	cJSON_AddStringToObject(o, "status", bp_bundler_reputation_status_name(e->status));
	return 0;
}

int
bp_bundler_debug_dump_reputation(struct bp_bundler_call *c)
{
	char chain[BP_BUNDLER_POOL_CHAIN_MAX];
	cJSON *a;

	if (off(c, "debug_bundler_dumpReputation") == -1)
		return -1;
	if ((a = cJSON_CreateArray()) == NULL)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
	bp_bundler_chain_key(c->net, chain, sizeof(chain));
	if (bp_bundler_reputation_each(c->r->db, chain, (int64_t)time(NULL), dump_entry, a) == -1) {
		cJSON_Delete(a);
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
	}
	return result(c, a);
}
