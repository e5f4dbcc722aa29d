/*
 * JSON-RPC 2.0 as Blockport speaks it (SPEC.md sections 2 and 4, DESIGN.md; docs/rpc.md):
 *
 *  - the envelope scanner: one strict pass over an untrusted body that validates the JSON and
 *    each request object (jsonrpc "2.0", method a string, params an array or object or absent,
 *    id a string, number or null) and records where each item, id and params lie in the body,
 *    so the proxy forwards and echoes the client's own bytes (an id of 1.0 stays 1.0);
 *  - the method table: per chain kind, each method's class (read, write, debug, WebSocket only,
 *    never offered) and its compute-unit cost, plain and at an archive block;
 *  - small scanners for upstream answers (a member of an object, the elements of an array);
 *  - a JSON-RPC client for workers and programs: one call or a batch over bp_upstream (the same
 *    failover as the proxy), returning parsed cJSON results; its reading of an answer is
 *    bp_jsonrpc_client_parse, which takes bytes, so tests and the fuzz harness reach it.
 *
 * The scanners never allocate and never recurse; nesting is capped at BP_JSONRPC_DEPTH.
 */
#ifndef BP_JSONRPC_H
#define BP_JSONRPC_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "config.h"

struct bp_upstream;

#define BP_JSONRPC_DEPTH	64	/* the most nested arrays and objects in a body */
#define BP_JSONRPC_METHOD_MAX	64	/* longer method names are unknown methods */

/* The error codes the proxy answers itself (docs/rpc.md lists when). */
#define BP_JSONRPC_PARSE_ERROR		(-32700)
#define BP_JSONRPC_INVALID_REQUEST	(-32600)
#define BP_JSONRPC_METHOD_NOT_FOUND	(-32601)
#define BP_JSONRPC_INVALID_PARAMS	(-32602)
#define BP_JSONRPC_INTERNAL_ERROR	(-32603)
#define BP_JSONRPC_FORBIDDEN		(-32003)	/* batch item the key lacks the scope for */
#define BP_JSONRPC_LIMITED		(-32005)	/* batch item over the plan's limits */

/* A stretch of the scanned text: [off, off + len). */
struct bp_jsonrpc_span {
	size_t	off;
	size_t	len;
};

/* One request of a body: the body itself, or one element of a batch. */
struct bp_jsonrpc_item {
	struct bp_jsonrpc_span	raw;	/* the whole element */
	struct bp_jsonrpc_span	id;	/* the id's bytes; len 0 when absent or not valid */
	struct bp_jsonrpc_span	params;	/* the params' bytes; len 0 when absent */
	struct bp_jsonrpc_span	method_raw;	/* the method string's bytes, quotes included */
	int			extra;	/* members other than the four: not forwarded */
	int			code;	/* 0 when the envelope is valid, else -32600 */
	const char		*why;	/* static text for code */
	size_t			method_len;	/* decoded length; > BP_JSONRPC_METHOD_MAX: too long */
	char			method[BP_JSONRPC_METHOD_MAX + 1];	/* decoded, NUL-terminated */
};

/* What the scanner found in a body. */
struct bp_jsonrpc_body {
	int		batch;	/* the body was a JSON array */
	size_t		n;	/* items seen; only the first min(n, cap) were stored */
	int		code;	/* 0, or the one error that answers the whole body */
	const char	*why;	/* static text for code */
};

/*
 * Scans body (len bytes, may hold NULs) as a JSON-RPC request or batch. Items go to items[0..cap).
 * Returns 0 when the items are to be answered one by one (each with its own code), or -1 when
 * the whole body gets one error object with id null, in out->code: -32700 for anything that is
 * not JSON (RFC 8259, UTF-8, no trailing bytes), -32600 for an empty batch, a batch of more than
 * max_batch items, nesting deeper than BP_JSONRPC_DEPTH, or a body that is neither an object
 * nor an array.
 */
int		 bp_jsonrpc_parse(const char *body, size_t len, size_t max_batch,
		    struct bp_jsonrpc_item *items, size_t cap, struct bp_jsonrpc_body *out);

/*
 * 1 when an id's raw bytes survive a round trip through any node unchanged (a plain integer of
 * at most 15 digits, or a string of printable ASCII without escapes and without <, >, &), so a
 * single call can be forwarded and answered byte for byte. 0 otherwise: the proxy then sends
 * its own id and puts the client's bytes back into the answer.
 */
int		 bp_jsonrpc_id_simple(const char *id, size_t len);

/*
 * Appends the request it (a valid item of body) to b as the proxy forwards it: only the four
 * envelope members, {"jsonrpc":"2.0","id":ID,"method":M,"params":P}, with the method's and the
 * params' bytes as the client sent them (params left out when absent) and id (idlen bytes of
 * raw JSON) for the id. Members the proxy does not read are not forwarded, so no node can act
 * on one. 0, or -1 when b is full.
 */
int		 bp_jsonrpc_envelope(struct bp_buf *b, const char *body,
		    const struct bp_jsonrpc_item *it, const char *id, size_t idlen);

/* Method classes: what a key needs to call a method over HTTP. */
enum bp_rpc_class {
	BP_RPC_READ,		/* 0: rpc:read */
	BP_RPC_WRITE,		/* 1: rpc:write */
	BP_RPC_DEBUG,		/* 2: rpc:read and a plan with debug */
	BP_RPC_SUBSCRIBE,	/* 3: only over the WebSocket endpoint */
	BP_RPC_DENIED,		/* 4: never offered: node accounts, node and dev-chain controls */
	BP_RPC_CLASS__MAX
};

/* One row of the method table. */
struct bp_jsonrpc_method {
	const char		*name;
	enum bp_chain_kind	 kind;
	enum bp_rpc_class	 cls;
	unsigned		 cu;		/* compute units of a call */
	unsigned		 archive_cu;	/* at a block older than archive_depth; 0 = never */
	int			 block_arg;	/* index in params of the block argument; -1 none */
};

/*
 * The row of method name (len bytes, may hold NULs) for chain kind: an exact row, or the row of
 * a never-offered prefix (wallet_, personal_, admin_, miner_, anvil_, hardhat_, evm_, ...).
 * NULL for a method this service does not know.
 */
const struct bp_jsonrpc_method *bp_jsonrpc_method(enum bp_chain_kind, const char *name,
		    size_t len);
/* The whole table, for tests and docs: its rows and their number. */
const struct bp_jsonrpc_method *bp_jsonrpc_methods(size_t *n);
/* The name of a class ("read"), or "?". */
const char	*bp_jsonrpc_class_name(enum bp_rpc_class);

/* What a block argument names. */
enum bp_block_ref {
	BP_BLOCK_NONE,		/* 0: absent, a tag near the head, a hash, or not understood */
	BP_BLOCK_NUMBER,	/* 1: a block number (earliest is 0) */
	BP_BLOCK__MAX
};

/*
 * Reads params[index] (params is the raw array text) as a block argument: a quantity "0x1f",
 * a tag, or an EIP-1898 object {"blockNumber": ...} / {"blockHash": ...}. Sets *number for
 * BP_BLOCK_NUMBER.
 */
enum bp_block_ref bp_jsonrpc_block_arg(const char *params, size_t len, int index,
		    int64_t *number);

/*
 * The compute units of one call of m: archive_cu when m reads state at a block whose number is
 * more than archive_depth below head (head < 0: unknown, never archive), else cu.
 */
unsigned	 bp_jsonrpc_cost(const struct bp_jsonrpc_method *m, enum bp_block_ref ref,
		    int64_t number, int64_t head, int64_t archive_depth);

/*
 * Finds the member name of the JSON object at the start of s (after optional white space).
 * Returns 1 with *val set to the member's value (the first, if it repeats), 0 when the object
 * has no such member, -1 when s does not start with a well-formed object.
 */
int		 bp_jsonrpc_member(const char *s, size_t len, const char *name,
		    struct bp_jsonrpc_span *val);

/* Walks the elements of the JSON array at the start of a text. */
struct bp_jsonrpc_iter {
	const char	*s;
	size_t		 len;
	size_t		 pos;
	int		 state;
};
void		 bp_jsonrpc_iter_init(struct bp_jsonrpc_iter *, const char *s, size_t len);
/* 1 with *elem set, 0 after the last element, -1 when the text is not a well-formed array. */
int		 bp_jsonrpc_iter_next(struct bp_jsonrpc_iter *, struct bp_jsonrpc_span *elem);

/*
 * Appends {"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":"MSG"}} to b; id is raw JSON
 * (idlen 0 writes null); msg is escaped. 0, or -1 when b is full.
 */
int		 bp_jsonrpc_error_obj(struct bp_buf *b, const char *id, size_t idlen, int code,
		    const char *msg);

/* Why a client call failed. */
enum bp_jsonrpc_err_kind {
	BP_JSONRPC_ERR_NONE,		/* 0 */
	BP_JSONRPC_ERR_TRANSPORT,	/* 1: no upstream answered (or the answer was too large) */
	BP_JSONRPC_ERR_RPC,		/* 2: the node answered with a JSON-RPC error object */
	BP_JSONRPC_ERR_PROTOCOL,	/* 3: the answer was not JSON-RPC, or lacked this call */
	BP_JSONRPC_ERR__MAX
};

struct bp_jsonrpc_error {
	enum bp_jsonrpc_err_kind kind;
	int64_t		 code;		/* the node's code, for BP_JSONRPC_ERR_RPC */
	char		 message[256];
};

/*
 * Calls method with params (a JSON array or object, not consumed; NULL sends []) on net's
 * upstreams, with failover. Returns the result, owned by the caller (cJSON_Delete), or NULL
 * with err filled (a JSON null result is a cJSON null item, not NULL).
 */
cJSON		*bp_jsonrpc_call(struct bp_upstream *, const struct bp_network *,
		    const char *method, const cJSON *params, struct bp_jsonrpc_error *err);

/* One call of a client batch: the caller fills method and params, the batch fills the rest. */
struct bp_jsonrpc_call {
	const char		*method;
	const cJSON		*params;	/* not consumed; NULL sends [] */
	cJSON			*result;	/* owned by the caller once set */
	struct bp_jsonrpc_error	 err;
};

/*
 * Reads ans (len bytes; NULL when len is 0), an upstream's answer to the client's request for
 * calls[0..n), whose ids are 0..n-1 (a single call: 0), into the calls. The answer is not
 * trusted. Every call first gets result NULL and a BP_JSONRPC_ERR_PROTOCOL error ("no answer for
 * this call"), whatever it held before; then:
 *
 *  - text that is not JSON: every call gets BP_JSONRPC_ERR_PROTOCOL ("answer is not JSON");
 *  - an array: each element whose id is a whole number k from 0 to n - 1 answers call k,
 *    unless an element before it already gave call k a result or an RPC error (an element with
 *    neither does not count); other elements are ignored;
 *  - an object: with such an id it answers that call; without one it answers call 0 when n is
 *    1, and when n is more, every call if it has an "error" object (a node's one error for a
 *    whole batch), else none (a result cannot say which call it is for);
 *  - any other JSON value answers nothing.
 *
 * An element that answers a call gives it: with an "error" member that is an object,
 * BP_JSONRPC_ERR_RPC with its code (a number truncated toward zero; 0 when absent, not a number
 * or out of the int64 range) and message (cut to fit err.message; a fixed text when not a
 * string); else with a "result" member, that result (any JSON, a JSON null included), detached
 * from the answer and owned by the caller (cJSON_Delete), with err zeroed; else
 * BP_JSONRPC_ERR_PROTOCOL ("answer has neither result nor error").
 *
 * Returns the number of calls that got a result. There is no other failure: out of memory
 * while parsing reads as "answer is not JSON".
 */
size_t		 bp_jsonrpc_client_parse(const char *ans, size_t len,
		    struct bp_jsonrpc_call *calls, size_t n);

/*
 * Sends the n calls as one JSON-RPC batch and matches the answers by id. Returns the number of
 * calls that got a result; each other call has err set (every call, when no upstream answered).
 */
size_t		 bp_jsonrpc_batch(struct bp_upstream *, const struct bp_network *,
		    struct bp_jsonrpc_call *, size_t n);

#endif
