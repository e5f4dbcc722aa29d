/*
 * /v1/wallets: ERC-4337 smart wallets (SPEC.md sections 2, 3 and 4; docs/wallets.md).
 *
 * A wallet is created counterfactually: its address is computed here, exactly as the network's
 * SimpleAccountFactory v0.6 would deploy it (lib/wallet.c), and nothing is sent to the chain. It
 * becomes deployed when its first UserOperation (the one carrying initCode) lands; that is
 * learnt from the indexer's AccountDeployed rows (schema/002_indexer.sql) or, when the indexer
 * has not seen it yet, from the chain itself (eth_getCode, then eth_getLogs for the deployment
 * transaction), and what is found is kept in the wallets table (schema/003_wallets.sql).
 *
 * Chain reads, per request:
 *   create    eth_getCode + eth_blockNumber in one batch; once per process and network also the
 *             factory's getAddress, to check that the configured factory derives addresses as
 *             lib/wallet.c does.
 *   get       counterfactual: none when the indexer has the deployment or this process saw no
 *             code there less than CODE_CACHE_US ago (nonce 0 without a read); else eth_getCode.
 *             deployed: EntryPoint getNonce(sender, 0) with eth_call, every time (not cached:
 *             a client builds its next UserOperation from it); eth_getLogs once, until the
 *             deployment transaction is known.
 *   list      none: the stored status, or deployed when the indexer has the deployment.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "db.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/hex.h"
#include "fcgi.h"
#include "jsonrpc.h"
#include "log.h"
#include "upstream.h"
#include "util.h"
#include "evm/simple_account.h"

static int	wallet_create(struct bp_req *);
static int	wallet_get(struct bp_req *);
static int	wallet_list(struct bp_req *);
static int	app_init(const struct bp_config *, struct bp_db *);
static void	app_fini(void);

/* Compute units: create and get read the chain, list only the database (docs/wallets.md). */
static const struct bp_route routes[] = {
	{ "POST", "/v1/wallets/create", wallet_create, BP_SCOPE_WALLETS, 10, 0 },
	{ "GET", "/v1/wallets/:address", wallet_get, BP_SCOPE_WALLETS, 5, 0 },
	{ "GET", "/v1/wallets", wallet_list, BP_SCOPE_WALLETS, 5, 0 },
};

static const struct bp_app app = { "wallets", routes, BP_NITEMS(routes), app_init, app_fini };

int	main(void);

int
main(void)
{
	return bp_fcgi_main(&app);
}

/* How long this process trusts "no code at this address" before it asks the chain again. */
#define CODE_CACHE_US		(1000 * 1000)
#define CODE_CACHE_SLOTS	4096
/* Deployment logs are searched from this many blocks before the head seen at creation. */
#define LOG_SEARCH_MARGIN	128
#define LIST_LIMIT_DEFAULT	25
#define LIST_LIMIT_MAX		100
#define LIST_PAGE_MAX		1000000000
#define HASH_STR		67	/* "0x" + 64 + NUL */

enum wallet_status {
	WALLET_COUNTERFACTUAL,	/* 0 */
	WALLET_DEPLOYED,	/* 1 */
	WALLET__MAX
};

static const char *const status_names[WALLET__MAX] = {
	"counterfactual",	/* WALLET_COUNTERFACTUAL */
	"deployed",		/* WALLET_DEPLOYED */
};

/* One row of the wallets table. */
struct wallet {
	int64_t			id;
	char			chain[BP_NAME_MAX];
	char			network[BP_NAME_MAX];
	uint8_t			address[20];
	uint8_t			owner[20];
	char			address_cs[BP_ADDR_STR_MAX];	/* EIP-55 forms */
	char			owner_cs[BP_ADDR_STR_MAX];
	uint8_t			factory[20];
	uint8_t			salt[BP_SIMPLE_ACCOUNT_SALT_LEN];
	enum wallet_status	status;
	int64_t			created_at;
	int64_t			checked_block;	/* -1: NULL */
	char			deploy_tx[HASH_STR];	/* "": not known yet */
	int64_t			deploy_block;	/* -1: not known */
	int64_t			deployed_at;	/* -1: not known */
	/* The indexer's AccountDeployed record, read with the row while deploy_tx is unknown. */
	char			idx_tx[HASH_STR];	/* "": none */
	int64_t			idx_block;
};

/* Per-process state: the upstream pool and two small caches (no request state). */
static const struct bp_config *config;
static struct bp_upstream *upstream;

/* "No code at address on network" seen at time, per process; direct-mapped by address. */
static struct {
	const struct bp_network	*net;
	uint8_t			 address[20];
	int64_t			 until;		/* monotonic microseconds */
} code_cache[CODE_CACHE_SLOTS];

/* Per network (index in config->nets): 1 once the factory's getAddress agreed with ours. */
static int factory_ok[BP_MAX_NETWORKS];

static int
app_init(const struct bp_config *cfg, struct bp_db *db)
{
	(void)db;
	config = cfg;
	if ((upstream = bp_upstream_new(cfg)) == NULL)
		return -1;
	return 0;
}

static void
app_fini(void)
{
	bp_upstream_free(upstream);
	upstream = NULL;
}

/* ---- small helpers ---- */

static size_t
code_slot(const uint8_t address[20])
{
	/* The address is a hash output already: its low bytes spread well. */
	return ((size_t)address[18] << 8 | address[19]) % CODE_CACHE_SLOTS;
}

static int
code_cache_fresh(const struct bp_network *net, const uint8_t address[20])
{
	size_t i = code_slot(address);

	return code_cache[i].net == net && memcmp(code_cache[i].address, address, 20) == 0 &&
	    code_cache[i].until > bp_mono_us();
}

static void
code_cache_put(const struct bp_network *net, const uint8_t address[20])
{
	size_t i = code_slot(address);

	code_cache[i].net = net;
	memcpy(code_cache[i].address, address, 20);
	code_cache[i].until = bp_mono_us() + CODE_CACHE_US;
}

/* "ethereum.devnet", the indexer's chain key. */
static void
chain_key(const char *chain, const char *network, char *out, size_t len)
{
	snprintf(out, len, "%s.%s", chain, network);
}

static void
addr_lower(const uint8_t a[20], char out[BP_ADDR_STR_MAX])
{
	bp_addr_format_lower(a, out, BP_ADDR_STR_MAX);
}

/* A cJSON string of the lower-case address, or NULL when out of memory. */
static cJSON *
json_addr(const uint8_t a[20])
{
	char s[BP_ADDR_STR_MAX];

	addr_lower(a, s);
	return cJSON_CreateString(s);
}

static cJSON *
json_hex(const void *p, size_t n)
{
	char s[2 * 256 + 3];

	if (bp_hex_encode(p, n, s, sizeof(s)) == -1)
		return NULL;
	return cJSON_CreateString(s);
}

/* ---- chain reads (lib/jsonrpc over lib/upstream, with its failover) ---- */

/* Logs a failed call once, with what it was for. */
static void
log_rpc(const struct bp_network *net, const char *what, const struct bp_jsonrpc_error *err)
{
	bp_warn("%s.%s: %s: %s (%lld)", net->chain, net->network, what, err->message,
	    (long long)err->code);
}

/* Reads a QUANTITY result as an int64; 0 or -1. */
static int
quantity(const cJSON *j, int64_t *out)
{
	uint64_t v;

	if (!cJSON_IsString(j) || bp_hex_quantity_lenient(j->valuestring,
	    strlen(j->valuestring), &v) == -1 || v > INT64_MAX)
		return -1;
	*out = (int64_t)v;
	return 0;
}

/* params for eth_call of data to `to` at "latest"; NULL when out of memory. */
static cJSON *
call_params(const uint8_t to[20], const uint8_t *data, size_t len)
{
	cJSON *p = cJSON_CreateArray(), *tx = cJSON_CreateObject();

	if (p == NULL || tx == NULL || !cJSON_AddItemToArray(p, tx)) {
		cJSON_Delete(p);
		cJSON_Delete(tx);
		return NULL;
	}
	if (!cJSON_AddItemToObject(tx, "to", json_addr(to)) ||
	    !cJSON_AddItemToObject(tx, "data", json_hex(data, len)) ||
	    !cJSON_AddItemToArray(p, cJSON_CreateString("latest"))) {
		cJSON_Delete(p);
		return NULL;
	}
	return p;
}

/* Decodes an eth_call result that must be one 32-byte word; 0 or -1. */
static int
call_word(const cJSON *res, uint8_t word[32])
{
	if (!cJSON_IsString(res))
		return -1;
	return bp_hex_decode_fixed(res->valuestring, strlen(res->valuestring), word, 32);
}

/*
 * Whether address has code on net, and the head block seen with it, in one batch:
 * eth_blockNumber first, so a wallet without code at "latest" is deployed after *head.
 * With owner (create), also checks once per process and network that the factory's own
 * getAddress(owner, salt) is address, and sets *factory_bad when it is not (or reverts).
 * Returns 1 code, 0 none, -1 when the chain did not answer.
 */
static int
chain_has_code(const struct bp_network *net, const uint8_t address[20], int64_t *head,
    const uint8_t owner[20], const uint8_t salt[32], int *factory_bad)
{
	struct bp_jsonrpc_call calls[3];
	cJSON *pcode = cJSON_CreateArray(), *pcall = NULL;
	uint8_t fac[20], data[BP_SIMPLE_ACCOUNT_CALL2_LEN], word[32];
	size_t n = 2, netidx = (size_t)(net - config->nets);
	int rc = -1;

	memset(calls, 0, sizeof(calls));
	*head = -1;
	if (pcode == NULL || !cJSON_AddItemToArray(pcode, json_addr(address)) ||
	    !cJSON_AddItemToArray(pcode, cJSON_CreateString("latest")))
		goto out;
	calls[0].method = "eth_blockNumber";
	calls[1].method = "eth_getCode";
	calls[1].params = pcode;
	if (owner != NULL && netidx < BP_MAX_NETWORKS && !factory_ok[netidx] &&
	    bp_addr_parse(net->account_factory, strlen(net->account_factory), 0, fac) == 0) {
		bp_simple_account_get_address_call(owner, salt, data);
		if ((pcall = call_params(fac, data, sizeof(data))) == NULL)
			goto out;
		calls[2].method = "eth_call";
		calls[2].params = pcall;
		n = 3;
	}
	bp_jsonrpc_batch(upstream, net, calls, n);
	if (calls[0].result == NULL || quantity(calls[0].result, head) == -1)
		*head = -1;
	if (calls[1].result == NULL || !cJSON_IsString(calls[1].result)) {
		log_rpc(net, "eth_getCode", &calls[1].err);
		goto out;
	}
	rc = strlen(calls[1].result->valuestring) > 2;
	if (n == 3) {
		if (calls[2].result == NULL && calls[2].err.kind != BP_JSONRPC_ERR_RPC) {
			log_rpc(net, "factory getAddress", &calls[2].err);	/* try again later */
		} else if (calls[2].result != NULL && call_word(calls[2].result, word) == 0 &&
		    memcmp(word, "\0\0\0\0\0\0\0\0\0\0\0\0", 12) == 0 &&
		    memcmp(word + 12, address, 20) == 0) {
			factory_ok[netidx] = 1;
		} else {
			/* The configured factory is not SimpleAccountFactory v0.6 (or has no code). */
			bp_err("%s.%s: account_factory %s does not derive wallet addresses as "
			    "SimpleAccountFactory v0.6 with implementation %s: getAddress answered %s",
			    net->chain, net->network, net->account_factory,
			    net->account_implementation, cJSON_IsString(calls[2].result) ?
			    calls[2].result->valuestring : calls[2].err.message);
			*factory_bad = 1;
		}
	}
out:
	for (n = 0; n < BP_NITEMS(calls); n++)
		cJSON_Delete(calls[n].result);
	cJSON_Delete(pcode);
	cJSON_Delete(pcall);
	return rc;
}

/* EntryPoint.getNonce(address, 0) on net into *nonce; 0, or -1 when the chain did not answer. */
static int
chain_nonce(const struct bp_network *net, const uint8_t address[20], uint64_t *nonce)
{
	struct bp_jsonrpc_error err;
	uint8_t ep[20], data[BP_SIMPLE_ACCOUNT_CALL2_LEN], word[32];
	cJSON *params, *res = NULL;
	int rc = -1;

	if (bp_addr_parse(net->entry_point, strlen(net->entry_point), 0, ep) == -1)
		return -1;
	bp_simple_account_get_nonce_call(address, 0, data);
	if ((params = call_params(ep, data, sizeof(data))) == NULL)
		return -1;
	if ((res = bp_jsonrpc_call(upstream, net, "eth_call", params, &err)) == NULL)
		log_rpc(net, "EntryPoint getNonce", &err);
	else if (call_word(res, word) == 0 && bp_abi_read_u64(word, 32, 0, nonce) == 0)
		rc = 0;
	else
		bp_warn("%s.%s: EntryPoint getNonce: unexpected answer", net->chain, net->network);
	cJSON_Delete(params);
	cJSON_Delete(res);
	return rc;
}

/* The timestamp of block number on net: the indexer's copy, else eth_getBlockByNumber. */
static int64_t
block_time(struct bp_db *db, const struct bp_network *net, int64_t number)
{
	static const char sql[] = "SELECT timestamp FROM index_blocks WHERE chain = ? AND number = ?";
	struct bp_jsonrpc_error err;
	struct bp_stmt *st;
	char key[2 * BP_NAME_MAX + 2], q[BP_HEX_QUANTITY64_MAX];
	cJSON *params = NULL, *res = NULL;
	int64_t ts = -1;

	chain_key(net->chain, net->network, key, sizeof(key));
	if ((st = bp_db_stmt(db, sql)) != NULL) {
		bp_stmt_text(st, 1, key);
		bp_stmt_int(st, 2, number);
		if (bp_stmt_step(st) == BP_DB_ROW)
			ts = bp_col_int(st, 0);
		bp_stmt_reset(st);
	}
	if (ts >= 0)
		return ts;
	bp_hex_quantity_encode((uint64_t)number, q, sizeof(q));
	if ((params = cJSON_CreateArray()) == NULL ||
	    !cJSON_AddItemToArray(params, cJSON_CreateString(q)) ||
	    !cJSON_AddItemToArray(params, cJSON_CreateFalse()))
		goto out;
	if ((res = bp_jsonrpc_call(upstream, net, "eth_getBlockByNumber", params, &err)) == NULL)
		log_rpc(net, "eth_getBlockByNumber", &err);
	else if (quantity(cJSON_GetObjectItemCaseSensitive(res, "timestamp"), &ts) == -1)
		ts = -1;
out:
	cJSON_Delete(params);
	cJSON_Delete(res);
	return ts;
}

/*
 * eth_getLogs from `from` to latest: emitter (a 20-byte address) with topic0 and, when t2 is not
 * NULL, topic 2 = t2. The first log not removed gives *tx, *block and, when the node sends it,
 * *ts. Returns 1 found, 0 none, -1 the chain did not answer.
 */
static int
find_log(const struct bp_network *net, const uint8_t emitter[20], const uint8_t topic0[32],
    const uint8_t *t2, int64_t from, char tx[HASH_STR], int64_t *block, int64_t *ts)
{
	struct bp_jsonrpc_error err;
	char q[BP_HEX_QUANTITY64_MAX];
	cJSON *params = cJSON_CreateArray(), *filter = cJSON_CreateObject(), *topics, *res = NULL;
	const cJSON *log;
	int rc = -1;

	if (params == NULL || filter == NULL || !cJSON_AddItemToArray(params, filter)) {
		cJSON_Delete(filter);
		goto out;
	}
	bp_hex_quantity_encode((uint64_t)(from < 0 ? 0 : from), q, sizeof(q));
	if (!cJSON_AddItemToObject(filter, "address", json_addr(emitter)) ||
	    cJSON_AddStringToObject(filter, "fromBlock", q) == NULL ||
	    cJSON_AddStringToObject(filter, "toBlock", "latest") == NULL ||
	    (topics = cJSON_AddArrayToObject(filter, "topics")) == NULL ||
	    !cJSON_AddItemToArray(topics, json_hex(topic0, 32)))
		goto out;
	if (t2 != NULL && (!cJSON_AddItemToArray(topics, cJSON_CreateNull()) ||
	    !cJSON_AddItemToArray(topics, json_hex(t2, 32))))
		goto out;
	if ((res = bp_jsonrpc_call(upstream, net, "eth_getLogs", params, &err)) == NULL) {
		log_rpc(net, "eth_getLogs", &err);
		goto out;
	}
	rc = 0;
	cJSON_ArrayForEach(log, res) {
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(log, "transactionHash");
		uint8_t hb[32];

		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(log, "removed")) ||
		    !cJSON_IsString(h) ||
		    bp_hex_decode_fixed(h->valuestring, strlen(h->valuestring), hb, 32) == -1 ||
		    quantity(cJSON_GetObjectItemCaseSensitive(log, "blockNumber"), block) == -1)
			continue;
		bp_hex_encode(hb, 32, tx, HASH_STR);
		if (quantity(cJSON_GetObjectItemCaseSensitive(log, "blockTimestamp"), ts) == -1)
			*ts = -1;
		rc = 1;
		break;
	}
out:
	cJSON_Delete(params);
	cJSON_Delete(res);
	return rc;
}

/* ---- the wallets table ---- */

/*
 * The row, and while its deployment transaction is unknown the indexer's AccountDeployed record
 * of the address (schema/002_indexer.sql, read-only here), in the same statement: a get of a
 * counterfactual wallet is one SQLite step. No ORDER BY: it would make SQLite walk the account's
 * index in id order (or sort in a temporary b-tree, 87 KiB of page cache a request) instead of
 * going straight to the address; callers pick among the (rare) several rows themselves.
 */
#define WALLET_COLS "w.id, w.chain, w.network, w.address, w.owner, w.salt, w.factory," \
	" w.status, w.created_at, w.checked_block, w.deploy_tx, w.deploy_block, w.deployed_at," \
	" d.tx_hash, d.block_number, w.address_eip55, w.owner_eip55"
#define WALLET_FROM " FROM wallets w LEFT JOIN index_account_deployments d" \
	" ON w.deploy_tx IS NULL AND d.chain = w.chain || '.' || w.network" \
	" AND d.sender = w.address"

/* Fills w from a row of WALLET_COLS; 0, or -1 for a row that does not parse (logged). */
static int
wallet_row(struct bp_stmt *st, struct wallet *w)
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
	w->status = strcmp(bp_col_text(st, 7), "deployed") == 0 ? WALLET_DEPLOYED :
	    WALLET_COUNTERFACTUAL;
	w->created_at = bp_col_int(st, 8);
	w->checked_block = bp_col_is_null(st, 9) ? -1 : bp_col_int(st, 9);
	bp_strlcpy(w->deploy_tx, bp_col_text(st, 10), sizeof(w->deploy_tx));
	w->deploy_block = bp_col_is_null(st, 11) ? -1 : bp_col_int(st, 11);
	w->deployed_at = bp_col_is_null(st, 12) ? -1 : bp_col_int(st, 12);
	if (!bp_col_is_null(st, 13) && !bp_col_is_null(st, 14) &&
	    bp_strlcpy(w->idx_tx, bp_col_text(st, 13), sizeof(w->idx_tx)) == 0)
		w->idx_block = bp_col_int(st, 14);
	else
		w->idx_tx[0] = '\0';
	if (bp_strlcpy(w->address_cs, bp_col_text(st, 15), sizeof(w->address_cs)) == -1 ||
	    bp_strlcpy(w->owner_cs, bp_col_text(st, 16), sizeof(w->owner_cs)) == -1)
		goto bad;
	return 0;
bad:
	bp_err("%s: wallet %lld does not parse", __func__, (long long)w->id);
	return -1;
}

/*
 * Reads the rows of st into w: the one with the lowest id (the wallet created first; a wallet
 * repeats only when the indexer holds two records of its address). Returns 1 found, 0 none,
 * -1 database error. Resets st.
 */
static int
wallet_first(struct bp_stmt *st, struct wallet *w)
{
	struct wallet cur;
	enum bp_db_step step;
	int found = 0;

	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		if (wallet_row(st, &cur) == -1) {
			step = BP_DB_ERROR;
			break;
		}
		if (!found || cur.id < w->id)
			*w = cur;
		found = 1;
	}
	bp_stmt_reset(st);
	return step == BP_DB_ERROR ? -1 : found;
}

/*
 * The account's wallet at address (lower-case text), on chain when chain is not NULL; the one
 * created first when several chains have it. Returns 1 found, 0 none, -1 database error.
 */
static int
wallet_find(struct bp_db *db, int64_t account, const char *address, const char *chain,
    struct wallet *w)
{
	static const char sql_any[] = "SELECT " WALLET_COLS WALLET_FROM
	    " WHERE w.account_id = ? AND w.address = ?";
	static const char sql_chain[] = "SELECT " WALLET_COLS WALLET_FROM
	    " WHERE w.account_id = ? AND w.address = ? AND w.chain = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, chain ? sql_chain : sql_any)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account);
	bp_stmt_text(st, 2, address);
	if (chain != NULL)
		bp_stmt_text(st, 3, chain);
	return wallet_first(st, w);
}

/* The account's wallet at address on chain.network; as wallet_find. */
static int
wallet_find_net(struct bp_db *db, int64_t account, const char *address, const char *chain,
    const char *network, struct wallet *w)
{
	static const char sql[] = "SELECT " WALLET_COLS WALLET_FROM
	    " WHERE w.account_id = ? AND w.address = ? AND w.chain = ? AND w.network = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account);
	bp_stmt_text(st, 2, address);
	bp_stmt_text(st, 3, chain);
	bp_stmt_text(st, 4, network);
	return wallet_first(st, w);
}

/*
 * Records what is known of w's deployment in every row of that address on that network (the
 * deployment is a fact of the chain, whichever account asked). Unknown values are kept as they
 * were. 0 or -1.
 */
static int
wallet_save_deployed(struct bp_db *db, const struct wallet *w)
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

/*
 * Learns what it can of w's deployment into w: the indexer's AccountDeployed record read with
 * the row, else (with chain_ok) logs of the chain: AccountDeployed of the entry point with topic
 * sender, else the wallet's own SimpleAccountInitialized, which it emits however it was
 * deployed (a direct createAccount emits no AccountDeployed). Sets w deployed when a record is
 * found. Returns 1 when the deployment transaction is known now, 0 when not, -1 when the chain
 * did not answer.
 */
static int
learn_deployment(struct bp_db *db, const struct bp_network *net, struct wallet *w,
    int chain_ok)
{
	uint8_t ep[20], topic[32], t2[32];
	int64_t ts = -1, from;
	int rc;

	if (w->idx_tx[0] != '\0') {
		memcpy(w->deploy_tx, w->idx_tx, sizeof(w->deploy_tx));
		w->status = WALLET_DEPLOYED;
		w->deploy_block = w->idx_block;
		w->deployed_at = net ? block_time(db, net, w->idx_block) : -1;
		return 1;
	}
	if (!chain_ok || net == NULL)
		return 0;
	from = w->checked_block >= 0 ? w->checked_block - LOG_SEARCH_MARGIN : net->start_block;
	memset(t2, 0, 12);
	memcpy(t2 + 12, w->address, 20);
	bp_simple_account_account_deployed_topic(topic);
	rc = -1;
	if (bp_addr_parse(net->entry_point, strlen(net->entry_point), 0, ep) == 0)
		rc = find_log(net, ep, topic, t2, from, w->deploy_tx, &w->deploy_block, &ts);
	if (rc == 0) {
		bp_simple_account_initialized_topic(topic);
		rc = find_log(net, w->address, topic, NULL, from, w->deploy_tx, &w->deploy_block,
		    &ts);
	}
	if (rc != 1) {
		w->deploy_tx[0] = '\0';
		w->deploy_block = -1;
		return rc;
	}
	w->status = WALLET_DEPLOYED;
	w->deployed_at = ts >= 0 ? ts : block_time(db, net, w->deploy_block);
	return 1;
}

/* ---- answers ---- */

enum wallet_view {
	VIEW_CREATE,	/* 0: create's answer */
	VIEW_GET,	/* 1: get's answer, with nonce and deployment */
	VIEW__MAX
};

/*
 * The EIP-55 form of an address, for answers. The factory's is kept per process (it is the same
 * on every wallet of a network): each form costs a Keccak-256.
 */
static void
checksum(const uint8_t a[20], char out[BP_ADDR_STR_MAX])
{
	static uint8_t last[20];
	static char last_s[BP_ADDR_STR_MAX];

	if (last_s[0] != '\0' && memcmp(a, last, 20) == 0) {
		memcpy(out, last_s, BP_ADDR_STR_MAX);
		return;
	}
	bp_addr_format_checksum(a, out, BP_ADDR_STR_MAX);
	memcpy(last, a, 20);
	memcpy(last_s, out, BP_ADDR_STR_MAX);
}

/* Appends ,"name":"value" (value escaped) to b; 0 or -1. */
static int
put_str(struct bp_buf *b, const char *name, const char *value)
{
	return bp_buf_adds(b, ",\"") == -1 || bp_buf_adds(b, name) == -1 ||
	    bp_buf_adds(b, "\":\"") == -1 || bp_buf_json_str(b, value) == -1 ||
	    bp_buf_adds(b, "\"") == -1 ? -1 : 0;
}

/* Appends ,"name":"ISO 8601 time" or ,"name":null when t < 0; 0 or -1. */
static int
put_time(struct bp_buf *b, const char *name, int64_t t)
{
	char iso[32];

	if (t < 0)
		return bp_buf_printf(b, ",\"%s\":null", name);
	bp_time_iso((time_t)t, iso, sizeof(iso));
	return put_str(b, name, iso);
}

/*
 * Answers status with w as JSON (written straight into the response: this is the hot path of
 * get). nonce is used by VIEW_GET (-1: unknown, null).
 */
static int
reply_wallet(struct bp_req *r, int status, const struct wallet *w, enum wallet_view view,
    int64_t nonce)
{
	struct bp_buf *b = &r->out;
	uint8_t ic[BP_SIMPLE_ACCOUNT_INIT_CODE_LEN];
	char s[2 * BP_SIMPLE_ACCOUNT_INIT_CODE_LEN + 3];
	int fail;

	bp_buf_reset(b);
	fail = bp_buf_adds(b, "{\"address\":\"") == -1 || bp_buf_adds(b, w->address_cs) == -1 ||
	    bp_buf_adds(b, "\"") == -1;
	fail = fail || put_str(b, "owner", w->owner_cs) == -1;
	fail = fail || put_str(b, "chain", w->chain) == -1;
	fail = fail || put_str(b, "network", w->network) == -1;
	fail = fail || put_str(b, "status", status_names[w->status]) == -1;
	checksum(w->factory, s);
	fail = fail || put_str(b, "factory", s) == -1;
	bp_simple_account_format_salt(w->salt, s, sizeof(s));
	fail = fail || put_str(b, "salt", s) == -1;
	if (view == VIEW_GET)
		fail = fail || (nonce >= 0 ? bp_buf_printf(b, ",\"nonce\":%lld", (long long)nonce) :
		    bp_buf_adds(b, ",\"nonce\":null")) == -1;
	fail = fail || put_time(b, "created_at", w->created_at) == -1;
	if (w->status == WALLET_COUNTERFACTUAL) {
		/* What the first UserOperation carries to deploy the wallet. */
		bp_simple_account_init_code(w->factory, w->owner, w->salt, ic);
		bp_hex_encode(ic, sizeof(ic), s, sizeof(s));
		fail = fail || put_str(b, "init_code", s) == -1;
	} else if (view == VIEW_GET) {
		fail = fail || put_time(b, "deployed_at", w->deployed_at) == -1;
		fail = fail || (w->deploy_tx[0] != '\0' ? put_str(b, "deploy_tx", w->deploy_tx) :
		    bp_buf_adds(b, ",\"deploy_tx\":null")) == -1;
	}
	fail = fail || bp_buf_adds(b, "}") == -1;
	if (fail)
		return bp_error(r, 500, "internal_error", "response too large");
	r->status = status;
	r->content_type = "application/json";
	return status;
}

static int
upstream_down(struct bp_req *r, const struct bp_network *net)
{
	return bp_error(r, 500, "internal_error",
	    "the %s %s node did not answer; retry with exponential backoff", net->chain,
	    net->network);
}

/* ---- request validation ---- */

/*
 * The string member name of body: *out is NULL when absent (and not required). Returns 0, or the
 * 400 answered in r (wrong type, empty, too long). NULs were refused before (bp_json_find_nul).
 */
static int
body_string(struct bp_req *r, const cJSON *body, const char *name, int required, size_t max,
    const char **out)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(body, name);

	*out = NULL;
	if (j == NULL) {
		if (required)
			return bp_error(r, 400, "invalid_request", "%s is required", name);
		return 0;
	}
	if (!cJSON_IsString(j) || j->valuestring == NULL)
		return bp_error(r, 400, "invalid_request", "%s must be a string", name);
	if (j->valuestring[0] == '\0')
		return bp_error(r, 400, "invalid_request", "%s must not be empty", name);
	if (strlen(j->valuestring) > max)
		return bp_error(r, 400, "invalid_request", "%s is longer than %zu characters",
		    name, max);
	*out = j->valuestring;
	return 0;
}

/* An address from the client (any case; a mixed-case one must carry a valid EIP-55 checksum). */
static int
parse_address(struct bp_req *r, const char *what, const char *s, uint8_t out[20])
{
	if (bp_addr_parse(s, strlen(s), BP_ADDR_CHECKSUM, out) == -1)
		return bp_error(r, 400, "invalid_request",
		    "%s must be an address: 0x and 40 hex digits (mixed case must be a valid "
		    "EIP-55 checksum)", what);
	return 0;
}

/* 1 when the config has any network of chain. */
static int
chain_known(const char *chain)
{
	size_t i;

	for (i = 0; i < config->nnets; i++)
		if (strcmp(config->nets[i].chain, chain) == 0)
			return 1;
	return 0;
}

/*
 * The network a request names with chain (and optionally network) for this key, checked for
 * wallets: an EVM network with an entry point, account factory and implementation. NULL with
 * the answer set in r: 400 for an unknown chain or network or one without wallets, 403 for a
 * test key on a chain that only has a mainnet (or a mainnet named).
 */
static const struct bp_network *
resolve_network(struct bp_req *r, const char *chain, const char *network)
{
	const struct bp_network *net;

	net = bp_config_rest_network(config, chain, r->key.test, network);
	if (net == NULL) {
		if (!chain_known(chain))
			bp_error(r, 400, "invalid_request", "chain: unknown chain \"%s\"", chain);
		else if (network != NULL)
			bp_error(r, 400, "invalid_request",
			    "network: chain %s has no network \"%s\"", chain, network);
		else if (r->key.test)
			bp_error(r, 403, "forbidden",
			    "test keys may only use test networks, and chain %s has none", chain);
		else
			bp_error(r, 400, "invalid_request",
			    "chain: %s has no mainnet; name a test network in network", chain);
		return NULL;
	}
	if (r->key.test && !net->testnet) {
		bp_error(r, 403, "forbidden", "test keys may not use %s %s (a mainnet)",
		    net->chain, net->network);
		return NULL;
	}
	if (net->kind != BP_CHAIN_EVM) {
		bp_error(r, 400, "invalid_request",
		    "chain: %s is not an EVM chain; smart wallets are ERC-4337 accounts", chain);
		return NULL;
	}
	if (net->entry_point[0] == '\0' ||
	    net->account_factory[0] == '\0' || net->account_implementation[0] == '\0') {
		bp_error(r, 400, "invalid_request",
		    "chain: smart wallets are not available on %s %s (no ERC-4337 entry point and "
		    "account factory configured)", net->chain, net->network);
		return NULL;
	}
	return net;
}

/* ---- handlers ---- */

/* POST /v1/wallets/create {owner, chain, salt?, network?}: 201 new, 200 the existing one. */
static int
wallet_create(struct bp_req *r)
{
	static const char sql_insert[] = "INSERT INTO wallets (account_id, key_id, chain, network,"
	    " address, owner, salt, factory, status, created_at, checked_block, address_eip55,"
	    " owner_eip55) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING";
	cJSON *body = NULL;
	const char *owner_s, *chain_s, *salt_s, *network_s;
	const struct bp_network *net;
	struct wallet w;
	struct bp_stmt *st;
	uint8_t impl[20];
	char a[BP_ADDR_STR_MAX], o[BP_ADDR_STR_MAX], f[BP_ADDR_STR_MAX], salt_hex[HASH_STR];
	char nulname[BP_NAME_MAX];
	int64_t head = -1;
	int code, factory_bad = 0, created, rc;

	if ((body = bp_req_json(r)) == NULL)
		return r->status;
	if (!cJSON_IsObject(body)) {
		rc = bp_error(r, 400, "invalid_request", "request body must be a JSON object");
		goto out;
	}
	if (bp_json_find_nul(r->body, r->body_len, nulname, sizeof(nulname))) {
		rc = bp_error(r, 400, "invalid_request", "%s must not contain NUL characters",
		    nulname[0] != '\0' ? nulname : "the request body");
		goto out;
	}
	/* Unknown members are ignored (docs/decisions.md). */
	if ((rc = body_string(r, body, "owner", 1, 64, &owner_s)) != 0 ||
	    (rc = body_string(r, body, "chain", 1, BP_NAME_MAX - 1, &chain_s)) != 0 ||
	    (rc = body_string(r, body, "network", 0, BP_NAME_MAX - 1, &network_s)) != 0)
		goto out;
	if (cJSON_GetObjectItemCaseSensitive(body, "salt") != NULL &&
	    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(body, "salt"))) {
		rc = bp_error(r, 400, "invalid_request",
		    "salt must be a string: a uint256 in decimal or 0x-prefixed hex");
		goto out;
	}
	if ((rc = body_string(r, body, "salt", 0, 128, &salt_s)) != 0)
		goto out;
	memset(&w, 0, sizeof(w));
	if ((rc = parse_address(r, "owner", owner_s, w.owner)) != 0)
		goto out;
	if (salt_s != NULL && bp_simple_account_parse_salt(salt_s, strlen(salt_s), w.salt) == -1) {
		rc = bp_error(r, 400, "invalid_request",
		    "salt must be a uint256 in decimal (at most 78 digits) or 0x-prefixed hex (at "
		    "most 64 digits)");
		goto out;
	}
	if ((net = resolve_network(r, chain_s, network_s)) == NULL) {
		rc = r->status;
		goto out;
	}
	if (bp_addr_parse(net->account_factory, strlen(net->account_factory), 0, w.factory) == -1 ||
	    bp_addr_parse(net->account_implementation, strlen(net->account_implementation), 0,
	    impl) == -1) {
		rc = bp_error(r, 500, "internal_error", "bad account factory in the configuration");
		goto out;
	}
	bp_strlcpy(w.chain, net->chain, sizeof(w.chain));
	bp_strlcpy(w.network, net->network, sizeof(w.network));
	bp_simple_account_address(w.factory, impl, w.owner, w.salt, w.address);

	/*
	 * Best effort: when the node does not answer, the wallet is still created (its address
	 * needs no chain) as counterfactual, and the next get looks again.
	 */
	code = chain_has_code(net, w.address, &head, w.owner, w.salt, &factory_bad);
	if (factory_bad) {
		rc = bp_error(r, 500, "internal_error",
		    "the configured account factory of %s %s does not match SimpleAccountFactory "
		    "v0.6", net->chain, net->network);
		goto out;
	}
	addr_lower(w.address, a);
	addr_lower(w.owner, o);
	addr_lower(w.factory, f);
	bp_hex_encode(w.salt, 32, salt_hex, sizeof(salt_hex));
	if ((st = bp_db_stmt(r->db, sql_insert)) == NULL) {
		rc = bp_error(r, 500, "internal_error", "database error");
		goto out;
	}
	bp_stmt_int(st, 1, r->key.account_id);
	bp_stmt_int(st, 2, r->key.id);
	bp_stmt_text(st, 3, w.chain);
	bp_stmt_text(st, 4, w.network);
	bp_stmt_text(st, 5, a);
	bp_stmt_text(st, 6, o);
	bp_stmt_text(st, 7, salt_hex);
	bp_stmt_text(st, 8, f);
	bp_stmt_text(st, 9, status_names[code == 1 ? WALLET_DEPLOYED : WALLET_COUNTERFACTUAL]);
	bp_stmt_int(st, 10, (int64_t)time(NULL));
	if (code == 0 && head >= 0)
		bp_stmt_int(st, 11, head);
	else
		bp_stmt_null(st, 11);
	bp_addr_format_checksum(w.address, w.address_cs, sizeof(w.address_cs));
	bp_addr_format_checksum(w.owner, w.owner_cs, sizeof(w.owner_cs));
	bp_stmt_text(st, 12, w.address_cs);
	bp_stmt_text(st, 13, w.owner_cs);
	if (bp_stmt_step(st) != BP_DB_DONE) {
		bp_stmt_reset(st);
		rc = bp_error(r, 500, "internal_error", "database error");
		goto out;
	}
	created = bp_db_changes(r->db) > 0;
	bp_stmt_reset(st);
	if (wallet_find_net(r->db, r->key.account_id, a, w.chain, w.network, &w) != 1) {
		rc = bp_error(r, 500, "internal_error", "database error");
		goto out;
	}
	if (code == 1 && w.status != WALLET_DEPLOYED) {
		/* Created earlier, deployed since: say so now, the rest is for get. */
		w.status = WALLET_DEPLOYED;
		if (wallet_save_deployed(r->db, &w) == -1) {
			rc = bp_error(r, 500, "internal_error", "database error");
			goto out;
		}
	}
	if (code == 0)
		code_cache_put(net, w.address);
	rc = reply_wallet(r, created ? 201 : 200, &w, VIEW_CREATE, -1);
out:
	cJSON_Delete(body);
	return rc;
}

/* 1 when the 40 digits of s mix upper- and lower-case letters (an EIP-55 checksum). */
static int
mixed_case(const char *s)
{
	int upper = 0, lower = 0;

	for (s += 2; *s != '\0'; s++) {
		upper |= *s >= 'A' && *s <= 'F';
		lower |= *s >= 'a' && *s <= 'f';
	}
	return upper && lower;
}

/* GET /v1/wallets/{address}[?chain=]: the wallet with its nonce and deployment. */
static int
wallet_get(struct bp_req *r)
{
	const char *chain = bp_req_query(r, "chain"), *param = bp_req_param(r, "address");
	const struct bp_network *net;
	struct wallet w;
	uint8_t address[20];
	uint64_t nonce = 0;
	char a[BP_ADDR_STR_MAX];
	int found, code;

	/*
	 * The checksum of a mixed-case address is checked against the stored EIP-55 form, so a
	 * get of a wallet that exists hashes nothing.
	 */
	if (bp_addr_parse(param, strlen(param), 0, address) == -1)
		return parse_address(r, "address", param, address);
	if (chain != NULL && (chain[0] == '\0' || !chain_known(chain)))
		return bp_error(r, 400, "invalid_request", "chain: unknown chain \"%s\"", chain);
	addr_lower(address, a);
	found = wallet_find(r->db, r->key.account_id, a, chain, &w);
	if (found == -1)
		return bp_error(r, 500, "internal_error", "database error");
	if (found == 0) {
		if (mixed_case(param) && parse_address(r, "address", param, address) != 0)
			return r->status;
		/* Another account's wallet too: ids leak nothing (DESIGN.md). */
		return bp_error(r, 404, "not_found", "no wallet %s", a);
	}
	if (mixed_case(param) && strcmp(param + 2, w.address_cs + 2) != 0)
		return parse_address(r, "address", param, address);
	net = bp_config_network(config, w.chain, w.network);

	if (w.status == WALLET_COUNTERFACTUAL) {
		/* The indexer may have seen the deployment: no chain read for that. */
		if (learn_deployment(r->db, net, &w, 0) == 1) {
			if (wallet_save_deployed(r->db, &w) == -1)
				return bp_error(r, 500, "internal_error", "database error");
		} else if (net == NULL || code_cache_fresh(net, w.address)) {
			return reply_wallet(r, 200, &w, VIEW_GET, 0);
		} else {
			int64_t head;
			int bad = 0;

			code = chain_has_code(net, w.address, &head, NULL, NULL, &bad);
			if (code == -1)
				return upstream_down(r, net);
			if (code == 0) {
				/*
				 * No code: the EntryPoint nonce of a sender that was never deployed
				 * is 0 (it only moves when an operation of the sender is validated,
				 * which needs the code), so it is not read.
				 */
				code_cache_put(net, w.address);
				return reply_wallet(r, 200, &w, VIEW_GET, 0);
			}
			/*
			 * Deployed. Its transaction is looked for now; when the logs cannot be
			 * had (a node that refuses the range) deploy_tx stays null and the next
			 * get looks again.
			 */
			w.status = WALLET_DEPLOYED;
			(void)learn_deployment(r->db, net, &w, 1);
			if (wallet_save_deployed(r->db, &w) == -1)
				return bp_error(r, 500, "internal_error", "database error");
		}
	} else if (w.deploy_tx[0] == '\0') {
		/* Deployed, transaction not found yet: look again (persisted once found). */
		if (learn_deployment(r->db, net, &w, net != NULL) == 1 &&
		    wallet_save_deployed(r->db, &w) == -1)
			return bp_error(r, 500, "internal_error", "database error");
	} else if (w.deployed_at < 0 && w.deploy_block >= 0 && net != NULL) {
		/* The block's time was not to be had when the transaction was found. */
		if ((w.deployed_at = block_time(r->db, net, w.deploy_block)) >= 0 &&
		    wallet_save_deployed(r->db, &w) == -1)
			return bp_error(r, 500, "internal_error", "database error");
	}
	if (net == NULL)	/* the network left the config: what is stored, nonce unknown */
		return reply_wallet(r, 200, &w, VIEW_GET, -1);
	if (chain_nonce(net, w.address, &nonce) == -1)
		return upstream_down(r, net);
	return reply_wallet(r, 200, &w, VIEW_GET, nonce > INT64_MAX ? -1 : (int64_t)nonce);
}

/* GET /v1/wallets?page=&limit=&chain=: the account's wallets, newest first. */
static int
wallet_list(struct bp_req *r)
{
	/*
	 * The stored status, or deployed when the indexer has the deployment (the next get
	 * records it); no chain reads.
	 */
#define LIST_COLS "address_eip55, owner_eip55, chain, network, created_at, status = 'deployed'" \
	" OR EXISTS (SELECT 1 FROM index_account_deployments d" \
	" WHERE d.chain = w.chain || '.' || w.network AND d.sender = w.address)"
	static const char sql_count[] = "SELECT count(*) FROM wallets WHERE account_id = ?";
	static const char sql_count_chain[] = "SELECT count(*) FROM wallets"
	    " WHERE account_id = ? AND chain = ?";
	static const char sql_page[] = "SELECT " LIST_COLS " FROM wallets w"
	    " WHERE account_id = ? ORDER BY id DESC LIMIT ? OFFSET ?";
	static const char sql_page_chain[] = "SELECT " LIST_COLS " FROM wallets w"
	    " WHERE account_id = ? AND chain = ? ORDER BY id DESC LIMIT ? OFFSET ?";
#undef LIST_COLS
	const char *chain = bp_req_query(r, "chain");
	struct bp_buf *b = &r->out;
	struct bp_stmt *st;
	int64_t page, limit, total = -1;
	int idx, fail, n = 0;
	enum bp_db_step step = BP_DB_DONE;

	if (bp_req_query_int(r, "page", 1, 1, LIST_PAGE_MAX, &page) == -1 ||
	    bp_req_query_int(r, "limit", LIST_LIMIT_DEFAULT, 1, LIST_LIMIT_MAX, &limit) == -1)
		return r->status;
	if (chain != NULL && (chain[0] == '\0' || !chain_known(chain)))
		return bp_error(r, 400, "invalid_request", "chain: unknown chain \"%s\"", chain);

	if ((st = bp_db_stmt(r->db, chain ? sql_count_chain : sql_count)) == NULL)
		return bp_error(r, 500, "internal_error", "database error");
	bp_stmt_int(st, 1, r->key.account_id);
	if (chain != NULL)
		bp_stmt_text(st, 2, chain);
	if (bp_stmt_step(st) == BP_DB_ROW)
		total = bp_col_int(st, 0);
	bp_stmt_reset(st);
	if (total < 0 || (st = bp_db_stmt(r->db, chain ? sql_page_chain : sql_page)) == NULL)
		return bp_error(r, 500, "internal_error", "database error");
	idx = 1;
	bp_stmt_int(st, idx++, r->key.account_id);
	if (chain != NULL)
		bp_stmt_text(st, idx++, chain);
	bp_stmt_int(st, idx++, limit);
	bp_stmt_int(st, idx, (page - 1) * limit);

	bp_buf_reset(b);
	fail = bp_buf_adds(b, "{\"wallets\":[") == -1;
	while (!fail && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		fail = bp_buf_printf(b, "%s{\"address\":\"", n++ > 0 ? "," : "") == -1 ||
		    bp_buf_json_str(b, bp_col_text(st, 0)) == -1 || bp_buf_adds(b, "\"") == -1 ||
		    put_str(b, "owner", bp_col_text(st, 1)) == -1 ||
		    put_str(b, "chain", bp_col_text(st, 2)) == -1 ||
		    put_str(b, "network", bp_col_text(st, 3)) == -1 ||
		    put_str(b, "status", status_names[bp_col_int(st, 5) ? WALLET_DEPLOYED :
		    WALLET_COUNTERFACTUAL]) == -1 ||
		    put_time(b, "created_at", bp_col_int(st, 4)) == -1 || bp_buf_adds(b, "}") == -1;
	}
	bp_stmt_reset(st);
	if (!fail && step == BP_DB_ERROR)
		return bp_error(r, 500, "internal_error", "database error");
	if (fail || bp_buf_printf(b, "],\"page\":%lld,\"limit\":%lld,\"total\":%lld}",
	    (long long)page, (long long)limit, (long long)total) == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	r->status = 200;
	r->content_type = "application/json";
	return 200;
}
