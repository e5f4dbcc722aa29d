/*
 * The JSON-RPC 2.0 envelope as Blockport accepts it (SPEC.md sections 2 and 4; docs/rpc.md):
 * one strict pass over an untrusted request body (lib/rpc/rpc_scan.h) that validates each request
 * object (jsonrpc "2.0", method a string, params an array or object or absent, id a string,
 * number or null), refuses members a node could read as another envelope member, and records
 * where each item, id, method and params lie, so the proxy forwards and echoes the client's
 * own bytes (an id of 1.0 stays 1.0). Also what the proxy writes back: its own error objects.
 */
#ifndef BP_RPC_ENVELOPE_H
#define BP_RPC_ENVELOPE_H

#include <stddef.h>

#include "core/buf.h"
#include "rpc_scan.h"

#define BP_JSONRPC_METHOD_MAX	64	/* longer method names are unknown methods */

/* The error codes the proxy answers itself (docs/rpc.md lists when). */
#define BP_JSONRPC_PARSE_ERROR		(-32700)
#define BP_JSONRPC_INVALID_REQUEST	(-32600)
#define BP_JSONRPC_METHOD_NOT_FOUND	(-32601)
#define BP_JSONRPC_INVALID_PARAMS	(-32602)
#define BP_JSONRPC_INTERNAL_ERROR	(-32603)
#define BP_JSONRPC_FORBIDDEN		(-32003)	/* batch item the key lacks the scope for */
#define BP_JSONRPC_LIMITED		(-32005)	/* batch item over the plan's limits */

/* One request of a body: the body itself, or one element of a batch. */
struct bp_rpc_envelope_item {
	struct bp_rpc_scan_span	raw;	/* the whole element */
	struct bp_rpc_scan_span	id;	/* the id's bytes; len 0 when absent or not valid */
	struct bp_rpc_scan_span	params;	/* the params' bytes; len 0 when absent */
	struct bp_rpc_scan_span	method_raw;	/* the method string's bytes, quotes included */
	int			extra;	/* members other than the four: not forwarded */
	int			code;	/* 0 when the envelope is valid, else -32600 */
	const char		*why;	/* static text for code */
	size_t			method_len;	/* decoded length; > BP_JSONRPC_METHOD_MAX: too long */
	char			method[BP_JSONRPC_METHOD_MAX + 1];	/* decoded, NUL-terminated */
};

/* What the scanner found in a body. */
struct bp_rpc_envelope_body {
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
 * max_batch items, nesting deeper than BP_RPC_SCAN_DEPTH, or a body that is neither an object
 * nor an array.
 */
int		 bp_rpc_envelope_parse(const char *body, size_t len, size_t max_batch,
		    struct bp_rpc_envelope_item *items, size_t cap, struct bp_rpc_envelope_body *out);

/*
 * 1 when an id's raw bytes survive a round trip through any node unchanged (a plain integer of
 * at most 15 digits, or a string of printable ASCII without escapes and without <, >, &), so a
 * single call can be forwarded and answered byte for byte. 0 otherwise: the proxy then sends
 * its own id and puts the client's bytes back into the answer.
 */
int		 bp_rpc_envelope_id_simple(const char *id, size_t len);

/*
 * Appends the request it (a valid item of body) to b as the proxy forwards it: only the four
 * envelope members, {"jsonrpc":"2.0","id":ID,"method":M,"params":P}, with the method's and the
 * params' bytes as the client sent them (params left out when absent) and id (idlen bytes of
 * raw JSON) for the id. Members the proxy does not read are not forwarded, so no node can act
 * on one. 0, or -1 when b is full.
 */
int		 bp_rpc_envelope_write(struct bp_buf *b, const char *body,
		    const struct bp_rpc_envelope_item *it, const char *id, size_t idlen);

/*
 * Appends {"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":"MSG"}} to b; id is raw JSON
 * (idlen 0 writes null); msg is escaped. 0, or -1 when b is full.
 */
int		 bp_rpc_envelope_error_obj(struct bp_buf *b, const char *id, size_t idlen, int code,
		    const char *msg);

#endif
