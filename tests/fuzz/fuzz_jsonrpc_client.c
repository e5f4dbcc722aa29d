/*
 * libFuzzer harness for the JSON-RPC client's reading of an upstream's answer
 * (bp_rpc_client_parse, lib/rpc/rpc_client.c): what the workers (cron/indexer.c) and the programs
 * (fcgi/wallets.c) make of the bytes a node sends back to one call or a batch. The node is not
 * trusted: a buggy or hostile one may answer anything, reorder a batch, repeat or leave out
 * ids, or send one object for a whole batch.
 *
 * Input: byte 0 is the number of calls, n = byte 0 % 17 (0 to 16, as if the request had ids
 * 0..n-1); the rest is the answer, handed over in an exact-size copy so a read past it shows.
 * Beyond memory safety and leaks (every result the calls get is the harness's to free), it
 * checks, aborting on a violation:
 *
 *  - every call is answered as a reference written from the header comment says, from its own
 *    parse of the same bytes: not JSON, no answer, neither result nor error, the node's error
 *    (its code truncated toward zero, 0 when absent or out of the int64 range, and its message
 *    cut to fit), or a result equal (same_tree) to the "result" member of the element that
 *    answers it: in an array the first element with the call's id that has a result or an
 *    error, in an object the object itself (call 0 for a single call without an id; every call
 *    of a batch for one without an id only when it is an error);
 *  - the return value is the number of calls with a result; a call with a result has err
 *    zeroed, one without has a protocol or RPC error and a NUL-terminated message;
 *  - what the calls held before is overwritten, and nothing past calls[n - 1] is written.
 *
 * Seeds: the corpus starts empty, as for the other harnesses; tests/fuzz/jsonrpc_client.dict
 * holds the members of an answer and whole answers.
 *
 *   bash tests/fuzz/run.sh 60      (builds every tests/fuzz/fuzz_*.c and runs each 60 s)
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rpc/jsonrpc.h"

#define MAX_CALLS	16

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* What a call must end up with, by the header comment's rules. */
enum want {
	W_NOT_JSON,		/* 0: protocol error, "answer is not JSON" */
	W_NO_ANSWER,		/* 1: protocol error, "no answer for this call" */
	W_NEITHER,		/* 2: protocol error, "answer has neither result nor error" */
	W_RPC,			/* 3: the node's error */
	W_RESULT,		/* 4: a result */
	W__MAX
};

static const char *const want_msg[W__MAX] = {
	"answer is not JSON",			/* W_NOT_JSON */
	"no answer for this call",		/* W_NO_ANSWER */
	"answer has neither result nor error",	/* W_NEITHER */
	NULL,					/* W_RPC: the node's */
	"",					/* W_RESULT: err zeroed */
};

/* The id of an answer element: a whole number from 0 to n - 1, else -1. */
static long
ref_id(const cJSON *o, size_t n)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
	double v;

	if (!cJSON_IsNumber(id))
		return -1;
	v = id->valuedouble;
	if (!(v >= 0 && v < (double)n) || floor(v) != v)
		return -1;
	return (long)v;
}

/* What element o gives the call it answers. */
static enum want
ref_answer(const cJSON *o)
{
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "error")))
		return W_RPC;
	if (cJSON_GetObjectItemCaseSensitive(o, "result") != NULL)
		return W_RESULT;
	return W_NEITHER;
}

/* The code of an error: truncated toward zero, 0 when not a number or out of range. */
static int64_t
ref_code(const cJSON *err)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(err, "code");

	if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble) ||
	    c->valuedouble < -ldexp(1, 63) || c->valuedouble >= ldexp(1, 63))
		return 0;
	return (int64_t)trunc(c->valuedouble);
}

/*
 * The reference: for each call, what it must get and from which element (src). root is the
 * harness's own parse of the answer, NULL when it is not JSON.
 */
static void
reference(const cJSON *root, size_t n, enum want *want, const cJSON **src)
{
	const cJSON *o;
	size_t i;
	long k;

	for (i = 0; i < n; i++) {
		want[i] = root == NULL ? W_NOT_JSON : W_NO_ANSWER;
		src[i] = NULL;
	}
	if (cJSON_IsArray(root)) {
		cJSON_ArrayForEach(o, root) {
			if ((k = ref_id(o, n)) < 0 || want[k] == W_RPC || want[k] == W_RESULT)
				continue;
			want[k] = ref_answer(o);
			src[k] = o;
		}
	} else if (cJSON_IsObject(root)) {
		if ((k = ref_id(root, n)) >= 0 || n == 1) {
			k = k >= 0 ? k : 0;
			want[k] = ref_answer(root);
			src[k] = root;
		} else if (ref_answer(root) == W_RPC)
			for (i = 0; i < n; i++) {
				want[i] = W_RPC;
				src[i] = root;
			}
	}
}

/*
 * 1 when a and b are the same JSON, member names and their order included. Not cJSON_Compare:
 * it looks members up by name, so an object with a repeated name differs from itself.
 */
static int
same_tree(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;

	if ((a->type & 0xff) != (b->type & 0xff))
		return 0;
	if (cJSON_IsNumber(a))
		return a->valuedouble == b->valuedouble;
	if (cJSON_IsString(a))
		return strcmp(a->valuestring, b->valuestring) == 0;
	if (!cJSON_IsArray(a) && !cJSON_IsObject(a))
		return 1;	/* null, true, false */
	for (x = a->child, y = b->child; x != NULL && y != NULL; x = x->next, y = y->next)
		if ((cJSON_IsObject(a) && strcmp(x->string, y->string) != 0) || !same_tree(x, y))
			return 0;
	return x == NULL && y == NULL;
}

/* Aborts unless message is text (NUL-terminated in its buffer) equal to s cut to fit. */
static void
check_message(const char *message, size_t size, const char *s)
{
	size_t want = strlen(s) < size - 1 ? strlen(s) : size - 1;

	if (memchr(message, '\0', size) == NULL || strlen(message) != want ||
	    memcmp(message, s, want) != 0)
		abort();
}

static void
check_call(const struct bp_rpc_client_call *c, enum want w, const cJSON *src)
{
	const cJSON *err, *msg;

	if (w == W_RESULT) {
		if (c->result == NULL || c->err.kind != BP_RPC_CLIENT_ERR_NONE || c->err.code != 0 ||
		    !same_tree(c->result, cJSON_GetObjectItemCaseSensitive(src, "result")))
			abort();
		check_message(c->err.message, sizeof(c->err.message), "");
		return;
	}
	if (c->result != NULL)
		abort();
	if (w != W_RPC) {
		if (c->err.kind != BP_RPC_CLIENT_ERR_PROTOCOL || c->err.code != 0)
			abort();
		check_message(c->err.message, sizeof(c->err.message), want_msg[w]);
		return;
	}
	err = cJSON_GetObjectItemCaseSensitive(src, "error");
	msg = cJSON_GetObjectItemCaseSensitive(err, "message");
	if (c->err.kind != BP_RPC_CLIENT_ERR_RPC || c->err.code != ref_code(err))
		abort();
	check_message(c->err.message, sizeof(c->err.message),
	    cJSON_IsString(msg) ? msg->valuestring : "error without a message");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static cJSON stale;	/* what a call held before: never freed, must be overwritten */
	struct bp_rpc_client_call calls[MAX_CALLS + 1], canary;
	enum want want[MAX_CALLS];
	const cJSON *src[MAX_CALLS];
	size_t n, len, i, j, got, results = 0;
	cJSON *root;
	char *ans;

	if (size == 0)
		return 0;
	n = data[0] % (MAX_CALLS + 1);
	len = size - 1;
	if ((ans = malloc(len > 0 ? len : 1)) == NULL)
		return 0;
	if (len > 0)
		memcpy(ans, data + 1, len);
	memset(calls, 0x5a, sizeof(calls));
	for (i = 0; i <= MAX_CALLS; i++) {
		calls[i].method = "m";
		calls[i].params = NULL;
		calls[i].result = &stale;
	}
	memcpy(&canary, &calls[n], sizeof(canary));

	got = bp_rpc_client_parse(len > 0 ? ans : NULL, len, calls, n);

	if (memcmp(&calls[n], &canary, sizeof(canary)) != 0)
		abort();	/* written past the last call */
	root = cJSON_ParseWithLength(ans, len);
	reference(root, n, want, src);
	for (i = 0; i < n; i++) {
		if (calls[i].result == &stale || strcmp(calls[i].method, "m") != 0)
			abort();
		check_call(&calls[i], want[i], src[i]);
		if (calls[i].result != NULL) {
			results++;
			for (j = 0; j < i; j++)
				if (calls[j].result == calls[i].result)
					abort();	/* one tree, two owners */
		}
	}
	if (got != results || got > n)
		abort();
	for (i = 0; i < n; i++)
		cJSON_Delete(calls[i].result);
	cJSON_Delete(root);
	free(ans);
	return 0;
}
