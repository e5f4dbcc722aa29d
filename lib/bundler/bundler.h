/*
 * The ERC-4337 bundler's methods (ERC-7769; EntryPoint v0.6, v0.7 and v0.8 side by side,
 * docs/bundler.md): each takes one struct bp_bundler_call (lib/bundler/bundler_rpc.h) and
 * writes its result or its error there. Validation is lib/bundler/userop_validate.c's (v0.7 and
 * v0.8: lib/bundler/bundler_v07.c's), the mempool lib/bundler/bundler_pool.c's, estimation
 * lib/bundler/bundler_estimate.c's, ERC-7677 lib/bundler/bundler_paymaster.c's; the submitter
 * is cron/bundle.c.
 */
#ifndef BP_BUNDLER_H
#define BP_BUNDLER_H

#include <stddef.h>
#include <stdint.h>

#include "bundler_rpc.h"
#include "core/buf.h"
#include "evm/userop.h"

/* Ops an unstaked sender may have pending or submitted at once. */
#define BP_BUNDLER_SENDER_CAP	4
/* A paymaster's ops in the pool at once: ERC-7562's reputation (lib/bundler/bundler_reputation.h). */

int	bp_bundler_chain_id(struct bp_bundler_call *);
int	bp_bundler_entry_points(struct bp_bundler_call *);
int	bp_bundler_send(struct bp_bundler_call *);
int	bp_bundler_get_op(struct bp_bundler_call *);
int	bp_bundler_receipt(struct bp_bundler_call *);

/*
 * Reads params[1], which must be one of the network's EntryPoints (written to ep), and
 * params[0], a UserOperation in that EntryPoint's form, into op (op->version its version).
 * 0, or -1 with -32602 in c->err. The caller frees op (bp_userop_free).
 */
int	bp_bundler_op_param(struct bp_bundler_call *c, struct bp_userop *op, uint8_t ep[20]);

/*
 * Appends op as the JSON object of ERC-7769 to b, in its version's form (v0.6's members, or
 * v0.7/v0.8's: bp_bundler_v07_op_members); 0 or -1.
 */
int	bp_bundler_op_json(const struct bp_userop *op, struct bp_buf *b);

/* Appends ,"NAME":"0x..." (the n bytes at p in hex) to b; 0 or -1. */
int	bp_bundler_json_bytes(struct bp_buf *b, const char *name, const uint8_t *p, size_t n);

/* "CHAIN.NETWORK" of net into out (room for len). */
void	bp_bundler_chain_key(const struct bp_network *net, char *out, size_t len);

#endif
