/*
 * The smart-wallet resource: its rules, its table and its chain reads (wallets.h,
 * docs/wallets.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/db.h"
#include "core/error.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/blocks.h"
#include "evm/chain.h"
#include "evm/entry_point.h"
#include "evm/simple_account.h"
#include "index/index_read.h"
#include "net/upstream.h"
#include "wallets.h"
#include "wallets_db.h"

/* How long a context trusts "no code at this address" before it asks the chain again. */
#define CODE_CACHE_US		(1000 * 1000)
#define CODE_CACHE_SLOTS	4096
/* Deployment logs are searched from this many blocks before the head seen at creation. */
#define LOG_SEARCH_MARGIN	128

/* "No code at address on network" seen, until a time; direct-mapped by address. */
struct code_slot {
	const struct bp_network	*net;
	uint8_t			 address[20];
	int64_t			 until;		/* monotonic microseconds */
};

struct bp_wallets {
	const struct bp_config	*cfg;
	struct bp_upstream	*up;
	struct bp_chain		*chain;
	/*
	 * Per network (index in cfg->nets) and EntryPoint version: 1 once the version's factory's
	 * getAddress agreed with ours.
	 */
	int			 factory_ok[BP_MAX_NETWORKS][BP_EP__MAX];
	/*
	 * The factory's and the EntryPoint's EIP-55 forms, the same on every wallet of a network
	 * and version: a Keccak-256 each otherwise.
	 */
	struct cs_cache {
		uint8_t		 a[20];
		char		 cs[BP_ADDR_STR_MAX];
	}			 last_factory, last_entry_point;
	struct code_slot	 code[CODE_CACHE_SLOTS];
};

struct bp_wallets *
bp_wallets_new(const struct bp_config *cfg)
{
	struct bp_wallets *ws;

	if ((ws = calloc(1, sizeof(*ws))) == NULL) {
		bp_err("%s: out of memory", __func__);
		return NULL;
	}
	ws->cfg = cfg;
	if (bp_entry_point_check(cfg) == -1) {
		bp_wallets_free(ws);
		return NULL;
	}
	if ((ws->up = bp_upstream_new(cfg)) == NULL ||
	    (ws->chain = bp_chain_new(cfg, ws->up)) == NULL) {
		bp_err("%s: cannot make the upstream pool", __func__);
		bp_wallets_free(ws);
		return NULL;
	}
	return ws;
}

void
bp_wallets_free(struct bp_wallets *ws)
{
	if (ws == NULL)
		return;
	bp_chain_free(ws->chain);
	bp_upstream_free(ws->up);
	free(ws);
}

/* ---- small helpers ---- */

static struct code_slot *
code_slot(struct bp_wallets *ws, const uint8_t address[20])
{
	/* The address is a hash output already: its low bytes spread well. */
	return &ws->code[((size_t)address[18] << 8 | address[19]) % CODE_CACHE_SLOTS];
}

static int
code_cache_fresh(struct bp_wallets *ws, const struct bp_network *net, const uint8_t address[20])
{
	const struct code_slot *s = code_slot(ws, address);

	return s->net == net && memcmp(s->address, address, 20) == 0 && s->until > bp_mono_us();
}

static void
code_cache_put(struct bp_wallets *ws, const struct bp_network *net, const uint8_t address[20])
{
	struct code_slot *s = code_slot(ws, address);

	s->net = net;
	memcpy(s->address, address, 20);
	s->until = bp_mono_us() + CODE_CACHE_US;
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

/* a's EIP-55 form into out, from c when a is the address c last saw. */
static void
checksum_cached(struct cs_cache *c, const uint8_t a[20], char out[BP_ADDR_STR_MAX])
{
	if (c->cs[0] == '\0' || memcmp(a, c->a, 20) != 0) {
		bp_addr_format_checksum(a, c->cs, BP_ADDR_STR_MAX);
		memcpy(c->a, a, 20);
	}
	memcpy(out, c->cs, BP_ADDR_STR_MAX);
}

/*
 * The EIP-55 form of the EntryPoint of version on net (NULL: the wallet's network has left
 * the config) into out; "" when it has none.
 */
static void
entry_point_checksum(struct bp_wallets *ws, const struct bp_network *net,
    enum bp_ep_version version, char out[BP_ADDR_STR_MAX])
{
	struct bp_entry_point ep;
	uint8_t a[20];

	out[0] = '\0';
	if (net == NULL)
		return;
	bp_entry_point_of(net, version, &ep);
	if (bp_addr_parse(ep.entry_point, strlen(ep.entry_point), 0, a) == 0)
		checksum_cached(&ws->last_entry_point, a, out);
}

/* w's factory_cs and entry_point_cs (net as for entry_point_checksum). */
static void
wallet_checksums(struct bp_wallets *ws, const struct bp_network *net, struct bp_wallet *w)
{
	checksum_cached(&ws->last_factory, w->factory, w->factory_cs);
	entry_point_checksum(ws, net, w->version, w->entry_point_cs);
}

/* ---- chain reads (lib/evm/chain.h) ---- */

static void
log_chain(const struct bp_network *net, const char *what, const struct bp_chain_error *err)
{
	bp_warn("%s.%s: %s: %s (%lld)", net->chain, net->network, what, err->message,
	    (long long)err->code);
}

/*
 * Whether address has code on net, and the head block seen with it, in one batch:
 * eth_blockNumber first, so a wallet without code at "latest" is deployed after *head.
 * With owner (create), also checks once per context and network that the factory's own
 * getAddress(owner, salt) is address, and sets *factory_bad when it is not (or reverts).
 * Returns 1 code, 0 none, -1 when the chain did not answer.
 */
static int
chain_has_code(struct bp_wallets *ws, const struct bp_network *net, const uint8_t address[20],
    int64_t *head, const struct bp_entry_point *ep, const uint8_t owner[20],
    const uint8_t salt[32], int *factory_bad)
{
	struct bp_chain_read r[3];
	uint8_t data[BP_SIMPLE_ACCOUNT_CALL2_LEN], got[20];
	size_t n = 2, netidx = (size_t)(net - ws->cfg->nets);
	int rc = -1;

	memset(r, 0, sizeof(r));
	*head = -1;
	r[0].op = BP_CHAIN_BLOCK_NUMBER;
	r[1].op = BP_CHAIN_CODE;
	r[1].block = BP_CHAIN_LATEST;
	memcpy(r[1].address, address, 20);
	if (owner != NULL && netidx < BP_MAX_NETWORKS && !ws->factory_ok[netidx][ep->version] &&
	    bp_addr_parse(ep->factory, strlen(ep->factory), 0, r[2].address) == 0) {
		bp_simple_account_get_address_call(owner, salt, data);
		r[2].op = BP_CHAIN_CALL;
		r[2].data = data;
		r[2].len = sizeof(data);
		r[2].block = BP_CHAIN_LATEST;
		n = 3;
	}
	bp_chain_batch(ws->chain, net, r, n);
	if (r[0].err.kind == BP_CHAIN_OK && r[0].u64 <= INT64_MAX)
		*head = (int64_t)r[0].u64;
	if (r[1].err.kind != BP_CHAIN_OK) {
		log_chain(net, "eth_getCode", &r[1].err);
		goto out;
	}
	rc = r[1].nbytes > 0;
	if (n < 3)
		goto out;
	if (r[2].err.kind == BP_CHAIN_ERR_TRANSPORT || r[2].err.kind == BP_CHAIN_ERR_PROTOCOL) {
		log_chain(net, "factory getAddress", &r[2].err);	/* try again later */
	} else if (r[2].err.kind == BP_CHAIN_OK &&
	    bp_abi_read_address(r[2].bytes, r[2].nbytes, 0, got) == 0 &&
	    memcmp(got, address, 20) == 0) {
		ws->factory_ok[netidx][ep->version] = 1;
	} else {
		/* The configured factory is not that version's SimpleAccountFactory (or no code). */
		bp_err("%s.%s: account factory %s does not derive wallet addresses as "
		    "SimpleAccountFactory v%s with implementation %s: getAddress answered %s",
		    net->chain, net->network, ep->factory, bp_ep_version_name(ep->version),
		    ep->implementation,
		    r[2].err.kind == BP_CHAIN_OK ? "another address" : r[2].err.message);
		*factory_bad = 1;
	}
out:
	bp_chain_reads_free(r, n);
	return rc;
}

/*
 * getNonce(address, 0) of version's EntryPoint on net into *nonce (the call is the same in
 * every version); 0, or -1 when the chain did not answer.
 */
static int
chain_nonce(struct bp_wallets *ws, const struct bp_network *net, enum bp_ep_version version,
    const uint8_t address[20], uint64_t *nonce)
{
	struct bp_entry_point epc;
	struct bp_chain_error err;
	struct bp_u256 v;
	uint8_t ep[20], data[BP_SIMPLE_ACCOUNT_CALL2_LEN];

	bp_entry_point_of(net, version, &epc);
	if (bp_addr_parse(epc.entry_point, strlen(epc.entry_point), 0, ep) == -1)
		return -1;
	bp_simple_account_get_nonce_call(address, 0, data);
	if (bp_chain_call_u256(ws->chain, net, ep, data, sizeof(data), BP_CHAIN_LATEST, &v,
	    &err) == -1) {
		log_chain(net, "EntryPoint getNonce", &err);
		return -1;
	}
	if (bp_u256_to_u64(&v, nonce) == -1) {
		bp_warn("%s.%s: EntryPoint getNonce: unexpected answer", net->chain, net->network);
		return -1;
	}
	return 0;
}

/* A source of block and log reads on net for this request (lib/evm/blocks.h). */
static void
blocks_src(struct bp_wallets *ws, const struct bp_network *net, struct bp_blocks_src *src)
{
	memset(src, 0, sizeof(*src));
	src->up = ws->up;
	src->net = net;
	src->name = net->chain;
	src->logs_range = net->index_logs_range > 0 ? net->index_logs_range : 100;
}

/* The timestamp of block number on net: the indexer's copy, else the node's block. -1 unknown. */
static int64_t
block_time(struct bp_wallets *ws, struct bp_db *db, const struct bp_network *net,
    int64_t number)
{
	struct bp_blocks_src src;
	char key[2 * BP_NAME_MAX + 2], err[256];
	cJSON *blk;
	uint64_t t;
	int64_t ts = -1;

	chain_key(net->chain, net->network, key, sizeof(key));
	if (bp_index_block_time(db, key, number, &ts) == 1 && ts >= 0)
		return ts;
	blocks_src(ws, net, &src);
	if ((blk = bp_blocks_by_number(&src, number, 0, err, sizeof(err))) == NULL) {
		bp_warn("%s.%s: block %lld: %s", net->chain, net->network, (long long)number, err);
		return -1;
	}
	ts = bp_blocks_jquantity(blk, "timestamp", &t) == 0 && t <= INT64_MAX ? (int64_t)t : -1;
	cJSON_Delete(blk);
	return ts;
}

/*
 * The logs of emitter with topic0 (and, when t2 is not NULL, topic 2 = t2) from block `from` to
 * the head. The first log not removed gives *tx, *block and, when the node sends it, *ts.
 * Returns 1 found, 0 none, -1 the chain did not answer.
 */
static int
find_log(struct bp_wallets *ws, const struct bp_network *net, const uint8_t emitter[20],
    const uint8_t topic0[32], const uint8_t *t2, int64_t from, char tx[BP_WALLETS_HASH_STR],
    int64_t *block, int64_t *ts)
{
	struct bp_blocks_filter flt = { emitter, { topic0, NULL, t2, NULL } };
	struct bp_blocks_range r;
	struct bp_blocks_src src;
	char err[256];
	int64_t head;
	uint64_t v;
	size_t i;
	int rc = -1;

	memset(&r, 0, sizeof(r));
	blocks_src(ws, net, &src);
	if (from < 0)
		from = 0;
	if (bp_blocks_head(&src, &head, err, sizeof(err)) == -1 ||
	    (head >= from && bp_blocks_logs(&src, &flt, from, head, &r, err, sizeof(err)) == -1)) {
		bp_warn("%s.%s: deployment logs: %s", net->chain, net->network, err);
		goto out;
	}
	rc = 0;
	for (i = 0; i < r.nlogs && rc == 0; i++) {
		const cJSON *log;

		cJSON_ArrayForEach(log, r.logs[i]) {
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(log, "removed")) ||
			    bp_blocks_jhash(log, "transactionHash", tx) == -1 ||
			    bp_blocks_jquantity(log, "blockNumber", &v) == -1 || v > INT64_MAX)
				continue;
			*block = (int64_t)v;
			*ts = bp_blocks_jquantity(log, "blockTimestamp", &v) == 0 && v <= INT64_MAX ?
			    (int64_t)v : -1;
			rc = 1;
			break;
		}
	}
out:
	bp_blocks_range_free(&r);
	return rc;
}

/* 1 when the indexer holds the AccountDeployed record of w (into *d), 0 when not, -1 error. */
static int
indexed_deployment(struct bp_db *db, const struct bp_wallet *w, struct bp_index_deployment *d)
{
	char key[2 * BP_NAME_MAX + 2], a[BP_ADDR_STR_MAX];

	chain_key(w->chain, w->network, key, sizeof(key));
	addr_lower(w->address, a);
	return bp_index_account_deployed(db, key, a, d);
}

/*
 * Learns what it can of w's deployment into w: the indexer's AccountDeployed record, else
 * (with chain_ok) logs of the chain: AccountDeployed of the entry point with topic sender, else
 * the wallet's own SimpleAccountInitialized, which it emits however it was deployed (a direct
 * createAccount emits no AccountDeployed). Sets w deployed when a record is found. Returns 1
 * when the deployment transaction is known now, 0 when not, -1 when the chain did not answer.
 */
static int
learn_deployment(struct bp_wallets *ws, struct bp_db *db, const struct bp_network *net,
    struct bp_wallet *w, int chain_ok)
{
	struct bp_index_deployment d;
	struct bp_entry_point epc;
	uint8_t ep[20], topic[32], t2[32];
	int64_t ts = -1, from;
	int rc;

	if (indexed_deployment(db, w, &d) == 1 &&
	    bp_strlcpy(w->deploy_tx, d.tx_hash, sizeof(w->deploy_tx)) == 0) {
		w->status = BP_WALLET_DEPLOYED;
		w->deploy_block = d.block_number;
		w->deployed_at = net ? block_time(ws, db, net, d.block_number) : -1;
		return 1;
	}
	w->deploy_tx[0] = '\0';
	if (!chain_ok || net == NULL)
		return 0;
	from = w->checked_block >= 0 ? w->checked_block - LOG_SEARCH_MARGIN : net->start_block;
	memset(t2, 0, 12);
	memcpy(t2 + 12, w->address, 20);
	/* AccountDeployed has the same signature in every version. */
	bp_simple_account_account_deployed_topic(topic);
	bp_entry_point_of(net, w->version, &epc);
	rc = -1;
	if (bp_addr_parse(epc.entry_point, strlen(epc.entry_point), 0, ep) == 0)
		rc = find_log(ws, net, ep, topic, t2, from, w->deploy_tx, &w->deploy_block, &ts);
	if (rc == 0) {
		bp_simple_account_initialized_topic(topic);
		rc = find_log(ws, net, w->address, topic, NULL, from, w->deploy_tx,
		    &w->deploy_block, &ts);
	}
	if (rc != 1) {
		w->deploy_tx[0] = '\0';
		w->deploy_block = -1;
		return rc;
	}
	w->status = BP_WALLET_DEPLOYED;
	w->deployed_at = ts >= 0 ? ts : block_time(ws, db, net, w->deploy_block);
	return 1;
}

/* ---- the rules of a request ---- */

/* 1 when the config has any network of chain. */
static int
chain_known(const struct bp_config *cfg, const char *chain)
{
	size_t i;

	for (i = 0; i < cfg->nnets; i++)
		if (strcmp(cfg->nets[i].chain, chain) == 0)
			return 1;
	return 0;
}

/* The 400 for an address member that is not one; returns -1. */
static int
bad_address(struct bp_error *err, const char *what)
{
	return bp_error_set(err, 400, "invalid_request", "%s must be an address: 0x and 40 hex digits "
	    "(mixed case must be a valid EIP-55 checksum)", what);
}

/* An address from the client (any case; a mixed-case one must carry a valid EIP-55 checksum). */
static int
parse_address(struct bp_error *err, const char *what, const char *s, uint8_t out[20])
{
	if (bp_addr_parse(s, strlen(s), BP_ADDR_CHECKSUM, out) == -1)
		return bad_address(err, what);
	return 0;
}

/*
 * 403 for a wallet (or a network to make one on) of the kind the key is not: a test key sees
 * and makes only test-network wallets of its account, a live key only live-network ones.
 */
static int
fence_refuse(struct bp_error *err, const struct bp_key *key, const char *chain,
    const char *network)
{
	return bp_error_set(err, 403, "forbidden", "%s keys may not use %s %s (a %s)",
	    key->test ? "test" : "live", chain, network, key->test ? "mainnet" : "test network");
}

/*
 * The network a request names with chain (and optionally network) for this key, checked for
 * wallets: an EVM network with an entry point, account factory and implementation. NULL with
 * *err set: 400 for an unknown chain or network or one without wallets, 403 for a test key on
 * a chain that only has a mainnet (or a mainnet named) and for a live key naming a testnet.
 */
static const struct bp_network *
resolve_network(const struct bp_config *cfg, const struct bp_key *key, const char *chain,
    const char *network, struct bp_error *err)
{
	const struct bp_network *net;

	if ((net = bp_config_rest_network(cfg, chain, key->test, network)) == NULL) {
		if (!chain_known(cfg, chain))
			bp_error_set(err, 400, "invalid_request", "chain: unknown chain \"%s\"", chain);
		else if (network != NULL)
			bp_error_set(err, 400, "invalid_request",
			    "network: chain %s has no network \"%s\"", chain, network);
		else if (key->test)
			bp_error_set(err, 403, "forbidden",
			    "test keys may only use test networks, and chain %s has none", chain);
		else
			bp_error_set(err, 400, "invalid_request",
			    "chain: %s has no mainnet; name a test network in network", chain);
		return NULL;
	}
	if (key->test != net->testnet) {
		fence_refuse(err, key, net->chain, net->network);
		return NULL;
	}
	if (net->kind != BP_CHAIN_EVM) {
		bp_error_set(err, 400, "invalid_request",
		    "chain: %s is not an EVM chain; smart wallets are ERC-4337 accounts", chain);
		return NULL;
	}
	return net;
}

int
bp_wallets_create(struct bp_wallets *ws, struct bp_db *db, const struct bp_key *key,
    const struct bp_wallets_create_req *req, struct bp_wallet *w, int *created,
    struct bp_error *err)
{
	const struct bp_network *net;
	struct bp_entry_point ep;
	enum bp_ep_version version;
	uint8_t impl[20];
	char a[BP_ADDR_STR_MAX];
	int64_t head = -1;
	int code, factory_bad = 0;

	memset(w, 0, sizeof(*w));
	if (parse_address(err, "owner", req->owner, w->owner) != 0)
		return -1;
	if (req->salt != NULL &&
	    bp_simple_account_parse_salt(req->salt, strlen(req->salt), w->salt) == -1)
		return bp_error_set(err, 400, "invalid_request",
		    "salt must be a uint256 in decimal (at most 78 digits) or 0x-prefixed hex (at "
		    "most 64 digits)");
	if (req->entry_point_version != NULL &&
	    bp_ep_version_parse(req->entry_point_version, &version) == -1)
		return bp_error_set(err, 400, "invalid_request",
		    "entry_point_version must be \"0.6\", \"0.7\" or \"0.8\"");
	if ((net = resolve_network(ws->cfg, key, req->chain, req->network, err)) == NULL)
		return -1;
	/* Absent: the network's default, so an owner and salt keep the address they were given. */
	if (req->entry_point_version == NULL && bp_entry_point_default(net, &version) == -1)
		return bp_error_set(err, 500, "internal_error", "bad entry_point_version in the configuration");
	bp_entry_point_of(net, version, &ep);
	if (ep.entry_point[0] == '\0' || ep.factory[0] == '\0' || ep.implementation[0] == '\0')
		return bp_error_set(err, 400, "invalid_request",
		    "%s: smart wallets of EntryPoint v%s are not available on %s %s (no entry "
		    "point and account factory configured)", req->entry_point_version ?
		    "entry_point_version" : "chain", bp_ep_version_name(version), net->chain,
		    net->network);
	if (bp_addr_parse(ep.factory, strlen(ep.factory), 0, w->factory) == -1 ||
	    bp_addr_parse(ep.implementation, strlen(ep.implementation), 0, impl) == -1)
		return bp_error_set(err, 500, "internal_error", "bad account factory in the configuration");
	w->version = version;
	bp_strlcpy(w->chain, net->chain, sizeof(w->chain));
	bp_strlcpy(w->network, net->network, sizeof(w->network));
	w->testnet = net->testnet;
	bp_simple_account_address_v(version, w->factory, impl, w->owner, w->salt, w->address);

	/*
	 * Best effort: when the node does not answer, the wallet is still created (its address
	 * needs no chain) as counterfactual, and the next get looks again.
	 */
	code = chain_has_code(ws, net, w->address, &head, &ep, w->owner, w->salt, &factory_bad);
	if (factory_bad)
		return bp_error_set(err, 500, "internal_error",
		    "the configured account factory of %s %s does not match SimpleAccountFactory "
		    "v%s", net->chain, net->network, bp_ep_version_name(version));
	bp_addr_format_checksum(w->address, w->address_cs, sizeof(w->address_cs));
	bp_addr_format_checksum(w->owner, w->owner_cs, sizeof(w->owner_cs));
	addr_lower(w->address, a);
	if ((*created = bp_wallets_db_insert(db, key, w, code == 1 ? BP_WALLET_DEPLOYED :
	    BP_WALLET_COUNTERFACTUAL, code == 0 ? head : -1)) == -1 ||
	    bp_wallets_db_find(db, key->account_id, a, w->chain, w->network, key->test, w) != 1)
		return bp_error_db(err);
	if (code == 1 && w->status != BP_WALLET_DEPLOYED) {
		/* Created earlier, deployed since: say so now, the rest is for get. */
		w->status = BP_WALLET_DEPLOYED;
		if (bp_wallets_db_save_deployed(db, w) == -1)
			return bp_error_db(err);
	}
	if (code == 0)
		code_cache_put(ws, net, w->address);
	wallet_checksums(ws, net, w);
	return 0;
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

/*
 * Brings a counterfactual w up to date: the indexer's record, else (unless this context saw no
 * code there just now) the chain's code and then the deployment's logs. 0, or -1 with *err.
 */
static int
refresh_counterfactual(struct bp_wallets *ws, struct bp_db *db, const struct bp_network *net,
    struct bp_wallet *w, struct bp_error *err)
{
	int64_t head;
	int code, bad = 0;

	/* The indexer may have seen the deployment: no chain read for that. */
	if (learn_deployment(ws, db, net, w, 0) == 1)
		return bp_wallets_db_save_deployed(db, w) == -1 ? bp_error_db(err) : 0;
	if (net == NULL || code_cache_fresh(ws, net, w->address))
		return 0;
	if ((code = chain_has_code(ws, net, w->address, &head, NULL, NULL, NULL, &bad)) == -1)
		return bp_error_node(err, net);
	if (code == 0) {
		/*
		 * No code: the EntryPoint nonce of a sender that was never deployed is 0 (it only
		 * moves when an operation of the sender is validated, which needs the code).
		 */
		code_cache_put(ws, net, w->address);
		return 0;
	}
	/*
	 * Deployed. Its transaction is looked for now; when the logs cannot be had (a node that
	 * refuses the range) deploy_tx stays null and the next get looks again.
	 */
	w->status = BP_WALLET_DEPLOYED;
	(void)learn_deployment(ws, db, net, w, 1);
	return bp_wallets_db_save_deployed(db, w) == -1 ? bp_error_db(err) : 0;
}

int
bp_wallets_get(struct bp_wallets *ws, struct bp_db *db, const struct bp_key *key,
    const char *param, const char *chain, struct bp_wallet *w, struct bp_error *err)
{
	const struct bp_network *net;
	uint8_t address[20];
	uint64_t nonce = 0;
	char a[BP_ADDR_STR_MAX];
	int found;

	/*
	 * The checksum of a mixed-case address is checked against the stored EIP-55 form, so a
	 * get of a wallet that exists hashes nothing.
	 */
	if (bp_addr_parse(param, strlen(param), 0, address) == -1)
		return bad_address(err, "address");
	if (chain != NULL && (chain[0] == '\0' || !chain_known(ws->cfg, chain)))
		return bp_error_set(err, 400, "invalid_request", "chain: unknown chain \"%s\"", chain);
	addr_lower(address, a);
	if ((found = bp_wallets_db_find(db, key->account_id, a, chain, NULL, key->test, w)) == -1)
		return bp_error_db(err);
	if (found == 0) {
		if (mixed_case(param) && parse_address(err, "address", param, address) != 0)
			return -1;
		/* Another account's wallet too: ids leak nothing (DESIGN.md). */
		return bp_error_set(err, 404, "not_found", "no wallet %s", a);
	}
	if (mixed_case(param) && strcmp(param + 2, w->address_cs + 2) != 0)
		return bad_address(err, "address");
	/* The account's wallet of the other kind only: no chain read for a key that may not see it. */
	if (w->testnet != key->test)
		return fence_refuse(err, key, w->chain, w->network);
	net = bp_config_network(ws->cfg, w->chain, w->network);
	wallet_checksums(ws, net, w);

	if (w->status == BP_WALLET_COUNTERFACTUAL) {
		if (refresh_counterfactual(ws, db, net, w, err) == -1)
			return -1;
		if (w->status == BP_WALLET_COUNTERFACTUAL) {
			w->nonce = 0;
			return 0;
		}
	} else if (w->deploy_tx[0] == '\0') {
		/* Deployed, transaction not found yet: look again (persisted once found). */
		if (learn_deployment(ws, db, net, w, net != NULL) == 1 &&
		    bp_wallets_db_save_deployed(db, w) == -1)
			return bp_error_db(err);
	} else if (w->deployed_at < 0 && w->deploy_block >= 0 && net != NULL) {
		/* The block's time was not to be had when the transaction was found. */
		if ((w->deployed_at = block_time(ws, db, net, w->deploy_block)) >= 0 &&
		    bp_wallets_db_save_deployed(db, w) == -1)
			return bp_error_db(err);
	}
	if (net == NULL)	/* the network left the config: what is stored, nonce unknown */
		return 0;
	if (chain_nonce(ws, net, w->version, w->address, &nonce) == -1)
		return bp_error_node(err, net);
	w->nonce = nonce > INT64_MAX ? -1 : (int64_t)nonce;
	return 0;
}

/* What bp_wallets_list hands each row to, with the caller's callback. */
struct list_ctx {
	struct bp_wallets *ws;
	struct bp_db	*db;
	int		(*fn)(const struct bp_wallets_item *, void *);
	void		*arg;
};

/* A row of the page: deployed when stored so, or when the indexer has the deployment. */
static int
list_row(const struct bp_wallets_item *row, void *arg)
{
	const struct list_ctx *lc = arg;
	struct bp_wallets_item it = *row;
	struct bp_index_deployment d;
	char key[2 * BP_NAME_MAX + 2], ep[BP_ADDR_STR_MAX];

	entry_point_checksum(lc->ws, bp_config_network(lc->ws->cfg, it.chain, it.network),
	    it.version, ep);
	it.entry_point = ep;
	if (it.status != BP_WALLET_DEPLOYED) {
		chain_key(it.chain, it.network, key, sizeof(key));
		if (bp_index_account_deployed(lc->db, key, it.address_lower, &d) == 1)
			it.status = BP_WALLET_DEPLOYED;
	}
	return lc->fn(&it, lc->arg);
}

int
bp_wallets_list(struct bp_wallets *ws, struct bp_db *db, const struct bp_key *key,
    const char *chain, int64_t page, int64_t limit,
    int (*fn)(const struct bp_wallets_item *, void *), void *arg, int64_t *total,
    struct bp_error *err)
{
	struct list_ctx lc = { ws, db, fn, arg };

	/* The stored status, or deployed when the indexer has it (the next get records it). */
	if (chain != NULL && (chain[0] == '\0' || !chain_known(ws->cfg, chain)))
		return bp_error_set(err, 400, "invalid_request", "chain: unknown chain \"%s\"", chain);
	/* Only the key's kind: a test key lists the test-network wallets of its account. */
	if (bp_wallets_db_count(db, key->account_id, key->test, chain, total) == -1)
		return bp_error_db(err);
	switch (bp_wallets_db_page(db, key->account_id, key->test, chain, page, limit, list_row,
	    &lc)) {
	case 0:
		return 0;
	case 1:
		return bp_error_set(err, 500, "internal_error", "response too large");
	default:
		return bp_error_db(err);
	}
}
