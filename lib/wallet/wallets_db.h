/*
 * The `wallets` table (schema/003_wallets.sql): rows in and out for lib/wallet/wallets.c, which owns
 * the table and its rules. Addresses are stored lower case (the keys) with their EIP-55 forms
 * (the answers), salts as 0x and 64 hex digits. The row types live here, so this header needs
 * nothing of wallets.h and wallets.h includes it (one way).
 */
#ifndef BP_WALLETS_DB_H
#define BP_WALLETS_DB_H

#include <stdint.h>

#include "core/auth.h"
#include "core/config.h"
#include "evm/address.h"
#include "evm/simple_account.h"

struct bp_db;

#define BP_WALLETS_HASH_STR	67	/* "0x" + 64 + NUL */

enum bp_wallet_status {
	BP_WALLET_COUNTERFACTUAL,	/* 0 */
	BP_WALLET_DEPLOYED,		/* 1 */
	BP_WALLET__MAX
};

/* "counterfactual", "deployed": the table's and the answers' names. */
const char	*bp_wallets_status_name(enum bp_wallet_status);

/* One wallet: a row of the table, as get and create answer it. */
struct bp_wallet {
	int64_t			id;
	char			chain[BP_NAME_MAX];
	char			network[BP_NAME_MAX];
	uint8_t			address[20];
	uint8_t			owner[20];
	uint8_t			factory[20];
	char			address_cs[BP_ADDR_STR_MAX];	/* EIP-55 forms */
	char			owner_cs[BP_ADDR_STR_MAX];
	char			factory_cs[BP_ADDR_STR_MAX];
	uint8_t			salt[BP_SIMPLE_ACCOUNT_SALT_LEN];
	enum bp_wallet_status	status;
	int64_t			created_at;
	int64_t			checked_block;	/* -1: NULL */
	char			deploy_tx[BP_WALLETS_HASH_STR];	/* "": not known yet */
	int64_t			deploy_block;	/* -1: not known */
	int64_t			deployed_at;	/* -1: not known */
	int64_t			nonce;		/* get only: -1 unknown */
	int			testnet;	/* its network's kind when it was created */
	enum bp_ep_version	version;	/* the EntryPoint it was made for */
	char			entry_point_cs[BP_ADDR_STR_MAX];	/* that one, EIP-55; "" unknown */
};

/* One wallet of a list; strings valid during the callback only. */
struct bp_wallets_item {
	const char		*address;	/* EIP-55 */
	const char		*owner;		/* EIP-55 */
	const char		*chain;
	const char		*network;
	enum bp_wallet_status	 status;
	int64_t			 created_at;
	const char		*address_lower;	/* the table's form */
	enum bp_ep_version	 version;
	const char		*entry_point;	/* EIP-55; "" when the config has none now */
};

/*
 * The account's wallet at address (lower-case text), on chain when not NULL and on network
 * when not NULL; the one created first when several chains have it, among those of the kind
 * testnet (1 test, 0 live) when there are such (so a key gets its own kind's row when the
 * account has the address on both). Returns 1 with *w filled (nonce -1), 0 when none, -1 on a
 * database error or a row that does not parse (logged).
 */
int	bp_wallets_db_find(struct bp_db *, int64_t account, const char *address,
	    const char *chain, const char *network, int testnet, struct bp_wallet *w);

/*
 * Inserts w (address, owner and factory, salt, chain, network and its kind, its EntryPoint
 * version, EIP-55 forms) for key with
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

/*
 * The number of the account's wallets of the kind testnet (1 test, 0 live; on chain when not
 * NULL) into *total; 0 or -1.
 */
int	bp_wallets_db_count(struct bp_db *, int64_t account, int testnet, const char *chain,
	    int64_t *total);

/*
 * Calls fn for each of the account's wallets of the kind testnet (on chain when not NULL) of
 * page (from 1) of
 * limit, newest first, with the stored status and address_lower set; fn returns 0 to go on.
 * Returns 0, 1 when fn stopped, -1 on a database error.
 */
int	bp_wallets_db_page(struct bp_db *, int64_t account, int testnet, const char *chain,
	    int64_t page, int64_t limit, int (*fn)(const struct bp_wallets_item *, void *), void *arg);

#endif
