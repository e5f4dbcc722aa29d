/*
 * The JSON-RPC side of /v1/bundler/{chain}/{network} (docs/bundler.md): the envelope (the same
 * strict scanner as the proxy, lib/rpc/rpc_envelope.h), a method table given by the program
 * (fcgi/bundler.c: name, handler, scopes, compute units), scopes and compute units per call,
 * and the answers: results, JSON-RPC errors with ERC-7769 codes and revert data.
 *
 * A single call that lacks a scope is 403 and one over a limit 429, in the uniform body; a batch
 * item gets -32003 or -32005 instead, as on /v1/rpc. Unknown methods are -32601.
 */
#ifndef BP_BUNDLER_RPC_H
#define BP_BUNDLER_RPC_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/http.h"
#include "userop_validate.h"

struct bp_upstream;

/* What a method handler gets and fills. */
struct bp_bundler_call {
	struct bp_req			*r;
	const struct bp_network		*net;
	struct bp_upstream		*up;
	const uint8_t			*pm_key;	/* the network's paymaster key, or NULL */
	const cJSON			*params;	/* an array (an absent params is []) */
	struct bp_buf			*result;	/* the result's JSON text, on success */
	struct bp_userop_validate_error		 err;		/* the error, when the handler fails */
};

/* A handler returns 0 with the result written, or -1 with c->err set. */
typedef int (*bp_bundler_fn)(struct bp_bundler_call *c);

struct bp_bundler_method {
	const char	*name;
	bp_bundler_fn	 fn;
	unsigned	 scopes;	/* BP_SCOPE_BIT()s, any one of which suffices */
	unsigned	 cu;
};

/*
 * Serves the request r for net with the method table tab[0..n): answers every item and sets
 * r's answer. pm_keys[i] is the paymaster key of r->cfg->nets[i] or NULL. Returns the status.
 */
int		bp_bundler_serve(struct bp_req *r, const struct bp_network *net,
		    struct bp_upstream *up, const uint8_t *pm_key,
		    const struct bp_bundler_method *tab, size_t n);

/* Sets c->err (code, printf message) and returns -1: for handlers. */
int		bp_bundler_fail(struct bp_bundler_call *c, int code, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));

/* The params item i as a string, or NULL (with -32602 set in c->err naming what is missing). */
const char	*bp_bundler_param_str(struct bp_bundler_call *c, int i, const char *what);

#endif
