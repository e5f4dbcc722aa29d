/*
 * The `wallets` table (schema/003_wallets.sql): rows in and out for lib/wallet/wallets.c, which owns
 * the table and its rules. Addresses are stored lower case (the keys) with their EIP-55 forms
 * (the answers), salts as 0x and 64 hex digits.
 */
#ifndef BP_WALLETS_DB_H
#define BP_WALLETS_DB_H

#include <stdint.h>

#include "core/auth.h"
#include "wallets.h"

struct bp_db;

/*
 * The account's wallet at address (lower-case text), on chain when not NULL and on network
 * when not NULL; the one created first when several chains have it. Returns 1 with *w filled
 * (nonce -1), 0 when none, -1 on a database error or a row that does not parse (logged).
 */
int	bp_wallets_db_find(struct bp_db *, int64_t account, const char *address,
	    const char *chain, const char *network, struct bp_wallet *w);

/*
 * Inserts w (address, owner and factory, salt, chain and network, EIP-55 forms) for key with
 * status, unless the account has it already; checked_block < 0 is NULL. Returns 1 inserted,
 * 0 there already, -1 on a database error.
 */
int	bp_wallets_db_insert(struct bp_db *, const struct bp_key *key, const struct bp_wallet *w,
	    enum bp_wallet_status status, int64_t checked_block);

/*
 * Records w's deployment (deploy_tx, deploy_block, deployed_at; unknown values keep what was
 * there) in every row of that address on that network, whichever account it belongs to: the
 * deployment is a fact of the chain. 0, or -1 on a database error.
 */
int	bp_wallets_db_save_deployed(struct bp_db *, const struct bp_wallet *w);

/* The number of the account's wallets (on chain when not NULL) into *total; 0 or -1. */
int	bp_wallets_db_count(struct bp_db *, int64_t account, const char *chain, int64_t *total);

/*
 * Calls fn for each of the account's wallets (on chain when not NULL) of page (from 1) of
 * limit, newest first, with the stored status and address_lower set; fn returns 0 to go on.
 * Returns 0, 1 when fn stopped, -1 on a database error.
 */
int	bp_wallets_db_page(struct bp_db *, int64_t account, const char *chain, int64_t page,
	    int64_t limit, int (*fn)(const struct bp_wallets_item *, void *), void *arg);

#endif
