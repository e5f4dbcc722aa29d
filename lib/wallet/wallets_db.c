/*
 * The wallets table: rows in and out (wallets_db.h).
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/db.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/address.h"
#include "wallets_db.h"

static void
addr_lower(const uint8_t a[20], char out[BP_ADDR_STR_MAX])
{
	bp_addr_format_lower(a, out, BP_ADDR_STR_MAX);
}

/*
 * The columns of a wallet row. No ORDER BY where they are read: it would make SQLite walk the
 * account's index in id order (or sort in a temporary b-tree, 87 KiB of page cache a request)
 * instead of going straight to the address; callers pick among the (rare) several rows.
 */
static const char *const status_names[BP_WALLET__MAX] = {
	"counterfactual",	/* BP_WALLET_COUNTERFACTUAL */
	"deployed",		/* BP_WALLET_DEPLOYED */
};

const char *
bp_wallets_status_name(enum bp_wallet_status s)
{
	return (unsigned)s < BP_WALLET__MAX ? status_names[s] : "?";
}

#define WALLET_COLS "id, chain, network, address, owner, salt, factory, status, created_at," \
	" checked_block, deploy_tx, deploy_block, deployed_at, address_eip55, owner_eip55, testnet," \
	" entry_point_version"

/* Fills w from a row of WALLET_COLS; 0, or -1 for a row that does not parse (logged). */
static int
wallet_row(struct bp_stmt *st, struct bp_wallet *w)
{
	const char *s;

	memset(w, 0, sizeof(*w));
	w->id = bp_col_int(st, 0);
	if (bp_strlcpy(w->chain, bp_col_text(st, 1), sizeof(w->chain)) == -1 ||
	    bp_strlcpy(w->network, bp_col_text(st, 2), sizeof(w->network)) == -1)
		goto bad;
	s = bp_col_text(st, 3);
	if (bp_addr_parse(s, strlen(s), 0, w->address) == -1)
		goto bad;
	s = bp_col_text(st, 4);
	if (bp_addr_parse(s, strlen(s), 0, w->owner) == -1)
		goto bad;
	s = bp_col_text(st, 5);
	if (bp_hex_decode_fixed(s, strlen(s), w->salt, 32) == -1)
		goto bad;
	s = bp_col_text(st, 6);
	if (bp_addr_parse(s, strlen(s), 0, w->factory) == -1)
		goto bad;
	w->status = strcmp(bp_col_text(st, 7), "deployed") == 0 ? BP_WALLET_DEPLOYED :
	    BP_WALLET_COUNTERFACTUAL;
	w->created_at = bp_col_int(st, 8);
	w->checked_block = bp_col_is_null(st, 9) ? -1 : bp_col_int(st, 9);
	bp_strlcpy(w->deploy_tx, bp_col_text(st, 10), sizeof(w->deploy_tx));
	w->deploy_block = bp_col_is_null(st, 11) ? -1 : bp_col_int(st, 11);
	w->deployed_at = bp_col_is_null(st, 12) ? -1 : bp_col_int(st, 12);
	if (bp_strlcpy(w->address_cs, bp_col_text(st, 13), sizeof(w->address_cs)) == -1 ||
	    bp_strlcpy(w->owner_cs, bp_col_text(st, 14), sizeof(w->owner_cs)) == -1)
		goto bad;
	w->nonce = -1;
	w->testnet = bp_col_int(st, 15) != 0;
	if (bp_ep_version_parse(bp_col_text(st, 16), &w->version) == -1)
		goto bad;
	return 0;
bad:
	bp_err("%s: wallet %lld does not parse", __func__, (long long)w->id);
	return -1;
}

/*
 * Reads the rows of st into w: the one with the lowest id (the wallet created first, when the
 * account has the address on several chains) among those of the kind testnet when there are
 * such. Returns 1 found, 0 none, -1 database error. Resets st.
 */
static int
wallet_first(struct bp_stmt *st, int testnet, struct bp_wallet *w)
{
	struct bp_wallet cur;
	enum bp_db_step step;
	int found = 0;

	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		if (wallet_row(st, &cur) == -1) {
			step = BP_DB_ERROR;
			break;
		}
		if (!found || (cur.testnet == testnet && w->testnet != testnet) ||
		    (cur.testnet == w->testnet && cur.id < w->id))
			*w = cur;
		found = 1;
	}
	bp_stmt_reset(st);
	return step == BP_DB_ERROR ? -1 : found;
}

int
bp_wallets_db_find(struct bp_db *db, int64_t account, const char *address, const char *chain,
    const char *network, int testnet, struct bp_wallet *w)
{
	static const char sql_any[] = "SELECT " WALLET_COLS " FROM wallets"
	    " WHERE account_id = ? AND address = ?";
	static const char sql_chain[] = "SELECT " WALLET_COLS " FROM wallets"
	    " WHERE account_id = ? AND address = ? AND chain = ?";
	static const char sql_net[] = "SELECT " WALLET_COLS " FROM wallets"
	    " WHERE account_id = ? AND address = ? AND chain = ? AND network = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, network ? sql_net : chain ? sql_chain : sql_any)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account);
	bp_stmt_text(st, 2, address);
	if (chain != NULL)
		bp_stmt_text(st, 3, chain);
	if (network != NULL)
		bp_stmt_text(st, 4, network);
	return wallet_first(st, testnet, w);
}

int
bp_wallets_db_save_deployed(struct bp_db *db, const struct bp_wallet *w)
{
	static const char sql[] = "UPDATE wallets SET status = 'deployed',"
	    " deploy_tx = coalesce(?, deploy_tx), deploy_block = coalesce(?, deploy_block),"
	    " deployed_at = coalesce(?, deployed_at)"
	    " WHERE chain = ? AND network = ? AND address = ?";
	struct bp_stmt *st;
	char a[BP_ADDR_STR_MAX];
	int rc;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	addr_lower(w->address, a);
	if (w->deploy_tx[0] != '\0')
		bp_stmt_text(st, 1, w->deploy_tx);
	else
		bp_stmt_null(st, 1);
	if (w->deploy_block >= 0)
		bp_stmt_int(st, 2, w->deploy_block);
	else
		bp_stmt_null(st, 2);
	if (w->deployed_at >= 0)
		bp_stmt_int(st, 3, w->deployed_at);
	else
		bp_stmt_null(st, 3);
	bp_stmt_text(st, 4, w->chain);
	bp_stmt_text(st, 5, w->network);
	bp_stmt_text(st, 6, a);
	rc = bp_stmt_step(st) == BP_DB_DONE ? 0 : -1;
	bp_stmt_reset(st);
	return rc;
}

int
bp_wallets_db_insert(struct bp_db *db, const struct bp_key *key, const struct bp_wallet *w,
    enum bp_wallet_status status, int64_t checked_block)
{
	static const char sql[] = "INSERT INTO wallets (account_id, key_id, chain, network,"
	    " address, owner, salt, factory, status, created_at, checked_block, address_eip55,"
	    " owner_eip55, testnet, entry_point_version)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	    " ON CONFLICT DO NOTHING";
	struct bp_stmt *st;
	char a[BP_ADDR_STR_MAX], o[BP_ADDR_STR_MAX], f[BP_ADDR_STR_MAX];
	char salt_hex[BP_WALLETS_HASH_STR];
	int rc = -1;

	addr_lower(w->address, a);
	addr_lower(w->owner, o);
	addr_lower(w->factory, f);
	bp_hex_encode(w->salt, 32, salt_hex, sizeof(salt_hex));
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, key->account_id);
	bp_stmt_int(st, 2, key->id);
	bp_stmt_text(st, 3, w->chain);
	bp_stmt_text(st, 4, w->network);
	bp_stmt_text(st, 5, a);
	bp_stmt_text(st, 6, o);
	bp_stmt_text(st, 7, salt_hex);
	bp_stmt_text(st, 8, f);
	bp_stmt_text(st, 9, bp_wallets_status_name(status));
	bp_stmt_int(st, 10, (int64_t)time(NULL));
	if (checked_block >= 0)
		bp_stmt_int(st, 11, checked_block);
	else
		bp_stmt_null(st, 11);
	bp_stmt_text(st, 12, w->address_cs);
	bp_stmt_text(st, 13, w->owner_cs);
	bp_stmt_int(st, 14, w->testnet);
	bp_stmt_text(st, 15, bp_ep_version_name(w->version));
	if (bp_stmt_step(st) == BP_DB_DONE)
		rc = bp_db_changes(db) > 0;
	bp_stmt_reset(st);
	return rc;
}

int
bp_wallets_db_count(struct bp_db *db, int64_t account, int testnet, const char *chain,
    int64_t *total)
{
	static const char sql[] = "SELECT count(*) FROM wallets WHERE account_id = ?"
	    " AND testnet = ?";
	static const char sql_chain[] = "SELECT count(*) FROM wallets"
	    " WHERE account_id = ? AND testnet = ? AND chain = ?";
	struct bp_stmt *st;

	*total = -1;
	if ((st = bp_db_stmt(db, chain ? sql_chain : sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account);
	bp_stmt_int(st, 2, testnet != 0);
	if (chain != NULL)
		bp_stmt_text(st, 3, chain);
	if (bp_stmt_step(st) == BP_DB_ROW)
		*total = bp_col_int(st, 0);
	bp_stmt_reset(st);
	return *total < 0 ? -1 : 0;
}

int
bp_wallets_db_page(struct bp_db *db, int64_t account, int testnet, const char *chain,
    int64_t page, int64_t limit, int (*fn)(const struct bp_wallets_item *, void *), void *arg)
{
#define LIST_COLS "address_eip55, owner_eip55, chain, network, created_at, status, address," \
	" entry_point_version"
	static const char sql[] = "SELECT " LIST_COLS " FROM wallets"
	    " WHERE account_id = ? AND testnet = ? ORDER BY id DESC LIMIT ? OFFSET ?";
	static const char sql_chain[] = "SELECT " LIST_COLS " FROM wallets"
	    " WHERE account_id = ? AND testnet = ? AND chain = ? ORDER BY id DESC LIMIT ? OFFSET ?";
#undef LIST_COLS
	struct bp_wallets_item it;
	struct bp_stmt *st;
	enum bp_db_step step;
	int idx = 1;

	if ((st = bp_db_stmt(db, chain ? sql_chain : sql)) == NULL)
		return -1;
	bp_stmt_int(st, idx++, account);
	bp_stmt_int(st, idx++, testnet != 0);
	if (chain != NULL)
		bp_stmt_text(st, idx++, chain);
	bp_stmt_int(st, idx++, limit);
	bp_stmt_int(st, idx, (page - 1) * limit);
	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		it.address = bp_col_text(st, 0);
		it.owner = bp_col_text(st, 1);
		it.chain = bp_col_text(st, 2);
		it.network = bp_col_text(st, 3);
		it.created_at = bp_col_int(st, 4);
		it.status = strcmp(bp_col_text(st, 5), "deployed") == 0 ? BP_WALLET_DEPLOYED :
		    BP_WALLET_COUNTERFACTUAL;
		it.address_lower = bp_col_text(st, 6);
		if (bp_ep_version_parse(bp_col_text(st, 7), &it.version) == -1)
			it.version = BP_EP_V06;
		it.entry_point = "";
		if (fn(&it, arg) != 0) {
			bp_stmt_reset(st);
			return 1;
		}
	}
	bp_stmt_reset(st);
	return step == BP_DB_ERROR ? -1 : 0;
}
