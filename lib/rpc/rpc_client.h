/*
 * A JSON-RPC client for workers and programs (lib/rpc/rpc_client.c; docs/rpc.md, "The client for
 * workers"): one call or a batch over bp_upstream (the same failover as the proxy), returning
 * parsed cJSON results. Its reading of an answer is bp_rpc_client_parse, which takes bytes,
 * so tests and the fuzz harness reach it.
 */
#ifndef BP_RPC_CLIENT_H
#define BP_RPC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/config.h"

struct bp_upstream;

/* Why a client call failed. */
enum bp_rpc_client_err_kind {
	BP_RPC_CLIENT_ERR_NONE,		/* 0 */
	BP_RPC_CLIENT_ERR_TRANSPORT,	/* 1: no upstream answered (or the answer was too large) */
	BP_RPC_CLIENT_ERR_RPC,		/* 2: the node answered with a JSON-RPC error object */
	BP_RPC_CLIENT_ERR_PROTOCOL,	/* 3: the answer was not JSON-RPC, or lacked this call */
	BP_RPC_CLIENT_ERR__MAX
};

struct bp_rpc_client_error {
	enum bp_rpc_client_err_kind kind;
	int64_t		 code;		/* the node's code, for BP_RPC_CLIENT_ERR_RPC */
	char		 message[256];
};

/*
 * Calls method with params (a JSON array or object, not consumed; NULL sends []) on net's
 * upstreams, with failover. Returns the result, owned by the caller (cJSON_Delete), or NULL
 * with err filled (a JSON null result is a cJSON null item, not NULL).
 */
cJSON		*bp_rpc_client_call(struct bp_upstream *, const struct bp_network *,
		    const char *method, const cJSON *params, struct bp_rpc_client_error *err);

/* One call of a client batch: the caller fills method and params, the batch fills the rest. */
struct bp_rpc_client_call {
	const char		*method;
	const cJSON		*params;	/* not consumed; NULL sends [] */
	cJSON			*result;	/* owned by the caller once set */
	struct bp_rpc_client_error	 err;
};

/* Frees the params and results of calls[0..n) (params the caller's cJSON) and calls itself. */
void		 bp_rpc_client_calls_free(struct bp_rpc_client_call *calls, size_t n);

/*
 * Reads ans (len bytes; NULL when len is 0), an upstream's answer to the client's request for
 * calls[0..n), whose ids are 0..n-1 (a single call: 0), into the calls. The answer is not
 * trusted. Every call first gets result NULL and a BP_RPC_CLIENT_ERR_PROTOCOL error ("no answer for
 * this call"), whatever it held before; then:
 *
 *  - text that is not JSON: every call gets BP_RPC_CLIENT_ERR_PROTOCOL ("answer is not JSON");
 *  - an array: each element whose id is a whole number k from 0 to n - 1 answers call k,
 *    unless an element before it already gave call k a result or an RPC error (an element with
 *    neither does not count); other elements are ignored;
 *  - an object: with such an id it answers that call; without one it answers call 0 when n is
 *    1, and when n is more, every call if it has an "error" object (a node's one error for a
 *    whole batch), else none (a result cannot say which call it is for);
 *  - any other JSON value answers nothing.
 *
 * An element that answers a call gives it: with an "error" member that is an object,
 * BP_RPC_CLIENT_ERR_RPC with its code (a number truncated toward zero; 0 when absent, not a number
 * or out of the int64 range) and message (cut to fit err.message; a fixed text when not a
 * string); else with a "result" member, that result (any JSON, a JSON null included), detached
 * from the answer and owned by the caller (cJSON_Delete), with err zeroed; else
 * BP_RPC_CLIENT_ERR_PROTOCOL ("answer has neither result nor error").
 *
 * Returns the number of calls that got a result. There is no other failure: out of memory
 * while parsing reads as "answer is not JSON".
 */
size_t		 bp_rpc_client_parse(const char *ans, size_t len,
		    struct bp_rpc_client_call *calls, size_t n);

/*
 * Sends the n calls as one JSON-RPC batch and matches the answers by id. Returns the number of
 * calls that got a result; each other call has err set (every call, when no upstream answered).
 */
size_t		 bp_rpc_client_batch(struct bp_upstream *, const struct bp_network *,
		    struct bp_rpc_client_call *, size_t n);

#endif
