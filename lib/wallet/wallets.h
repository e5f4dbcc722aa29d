/*
 * The smart-wallet resource (SPEC.md section 4, docs/wallets.md): the rules of /v1/wallets and
 * the `wallets` table this module owns (schema/003_wallets.sql). fcgi/wallets.c parses a
 * request, calls one function here and renders what it gets.
 *
 * A wallet is created counterfactually: its address is SimpleAccountFactory v0.6's CREATE2
 * address (lib/evm/simple_account.h) and nothing is sent to the chain. It becomes deployed when
 * its first UserOperation lands; that is learnt from the indexer's AccountDeployed records
 * (lib/index/index_read.h's readers) or from the chain (lib/evm/chain.h), and kept in the table.
 *
 * Chain reads, per call:
 *   create    eth_blockNumber + eth_getCode in one batch; once per context and network also the
 *             factory's getAddress, to check that the configured factory derives addresses as
 *             lib/evm/simple_account.c does.
 *   get       counterfactual: none when the indexer has the deployment or this context saw no
 *             code there less than a second ago (nonce 0 without a read); else eth_getCode.
 *             deployed: EntryPoint getNonce(sender, 0) with eth_call, every time (a client
 *             builds its next UserOperation from it); eth_getLogs until the deployment
 *             transaction is known.
 *   list      none: the stored status, or deployed when the indexer has the deployment.
 */
#ifndef BP_WALLETS_H
#define BP_WALLETS_H

#include <stddef.h>
#include <stdint.h>

#include "core/auth.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/error.h"
#include "wallets_db.h"	/* struct bp_wallet, the row type */

struct bp_db;
struct bp_wallets;

#define BP_WALLETS_LIMIT_DEFAULT 25

/* A create request, as the client sent its members (already checked to be strings). */
struct bp_wallets_create_req {
	const char		*owner;		/* required */
	const char		*chain;		/* required */
	const char		*network;	/* NULL: the chain's REST network for the key */
	const char		*salt;		/* NULL: 0 */
	const char		*entry_point_version;	/* NULL: the network's default */
};

/*
 * A context for one process (or thread): its upstream pool, chain reads and small caches (no
 * request state), over cfg (borrowed; it must outlive the context). Returns it, owned by the
 * caller (bp_wallets_free), or NULL after logging why.
 */
struct bp_wallets	*bp_wallets_new(const struct bp_config *cfg);
void		 bp_wallets_free(struct bp_wallets *);

/*
 * Creates the wallet of req for key's account, idempotently: *created is 1 for a new row, 0
 * when the account had it. Returns 0 with *w filled, or -1 with *err set (400 for a bad member,
 * 403 for a test key on a mainnet or a live key on a test network, 500 for a factory that
 * disagrees or a database error).
 */
int		 bp_wallets_create(struct bp_wallets *, struct bp_db *, const struct bp_key *key,
		    const struct bp_wallets_create_req *req, struct bp_wallet *w, int *created,
		    struct bp_error *err);

/*
 * The key's account's wallet at address (as the client wrote it: any case, a mixed-case one
 * must be a valid EIP-55 checksum), on chain when not NULL, with its nonce and deployment.
 * Returns 0 with *w filled, or -1 with *err set (400, 404, 403 for a wallet of the other kind
 * than the key's: test or live network; 500 when a needed chain read failed).
 */
int		 bp_wallets_get(struct bp_wallets *, struct bp_db *, const struct bp_key *key,
		    const char *address, const char *chain, struct bp_wallet *w,
		    struct bp_error *err);

/*
 * Calls fn for each of the key's account's wallets of the key's kind (test networks for a test
 * key, live ones for a live key; on chain, when not NULL) of page (from 1)
 * of limit, newest first; fn returns 0 to go on. *total is the number of wallets. Returns 0, or
 * -1 with *err set (400 for an unknown chain, 500 for a database error or fn failing).
 */
int		 bp_wallets_list(struct bp_wallets *, struct bp_db *, const struct bp_key *key,
		    const char *chain, int64_t page, int64_t limit,
		    int (*fn)(const struct bp_wallets_item *, void *), void *arg, int64_t *total,
		    struct bp_error *err);

/* Which answer a wallet's JSON is. */
enum bp_wallets_view {
	BP_WALLETS_VIEW_CREATE,	/* 0: create's answer */
	BP_WALLETS_VIEW_GET,	/* 1: get's answer, with nonce and deployment */
	BP_WALLETS_VIEW__MAX
};

/*
 * Appends w's JSON as view answers it to b (addresses EIP-55, init_code while counterfactual).
 * Returns 0, or -1 when b is full.
 */
int		 bp_wallets_json(const struct bp_wallet *w, enum bp_wallets_view view,
		    struct bp_buf *b);

/*
 * bp_wallets_list written to b as {"wallets":[...],"page":P,"limit":L,"total":T}. Returns 0,
 * or -1 with *err set (as bp_wallets_list; 500 when b is full).
 */
int		 bp_wallets_list_json(struct bp_wallets *, struct bp_db *,
		    const struct bp_key *key, const char *chain, int64_t page, int64_t limit,
		    struct bp_buf *b, struct bp_error *err);

#endif
