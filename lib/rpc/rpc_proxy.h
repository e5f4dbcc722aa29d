/*
 * The JSON-RPC proxy pipeline (lib/rpc/rpc_proxy.c; docs/rpc.md): validate, judge, price and
 * forward a JSON-RPC request to a network's upstreams, answering the client in the proxy's
 * rules. A program makes one proxy with its own method table and hands it each request.
 */
#ifndef BP_RPC_PROXY_H
#define BP_RPC_PROXY_H

#include "core/config.h"
#include "core/fcgi.h"
#include "rpc_methods.h"

struct bp_rpc_proxy;

/*
 * A proxy for cfg's networks that offers the methods of table (not copied: it must outlive the
 * proxy). Returns it, owned by the caller (bp_rpc_proxy_free), or NULL when out of memory or
 * the upstream client cannot be made (logged).
 */
struct bp_rpc_proxy *bp_rpc_proxy_new(const struct bp_config *cfg,
		    const struct bp_rpc_table *table);
/*
 * Lets p answer from and fill the response cache (lib/rpc/rpc_cache.h) through db, the calling
 * thread's connection, which must outlive p; with rpc_cache_file, through a connection of p's
 * own to that file instead; nothing when the config's rpc_cache is off.
 */
struct bp_db;
void		 bp_rpc_proxy_use_cache(struct bp_rpc_proxy *p, struct bp_db *db);
/* Frees p; NULL is a no-op. */
void		 bp_rpc_proxy_free(struct bp_rpc_proxy *p);

/*
 * Answers r, a JSON-RPC request (body and key already read by the pipeline) for network net,
 * into r: the HTTP status set in r (200 for every JSON-RPC answer) is returned. Sets
 * X-Compute-Units to what was charged.
 */
int		 bp_rpc_proxy_serve(struct bp_rpc_proxy *p, struct bp_req *r,
		    const struct bp_network *net);

#endif
