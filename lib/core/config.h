/*
 * The configuration: one INI file (libinih) named by BLOCKPORT_CONFIG. Every key is checked
 * against the table in config.c when the file is read; an unknown section or key, or a value out
 * of its bounds, is an error that names the file, the line and the key. A section or key given
 * again later adds to or replaces what came before (later wins; upstream lines add fallbacks).
 * The keys are listed in README.md.
 */
#ifndef BP_CONFIG_H
#define BP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define BP_MAX_UPSTREAMS	8
#define BP_MAX_NETWORKS		32
#define BP_MAX_PLANS		16
#define BP_NAME_MAX		32
#define BP_URL_MAX		512
#define BP_ADDR_STRLEN		43	/* "0x" + 40 hex digits + NUL */
#define BP_MAX_PRICES		32
#define BP_DECIMAL_MAX		48	/* a decimal config value: digits, '.', digits + NUL */
#define BP_MAX_TOKEN_PRICES	256	/* token keys of all [prices CHAIN] sections */

enum bp_chain_kind {
	BP_CHAIN_EVM,		/* 0 */
	BP_CHAIN_SOLANA,	/* 1 */
	BP_CHAIN__MAX
};

/* A [plan NAME] section; 0 means unlimited. */
struct bp_plan {
	char		name[BP_NAME_MAX];
	int64_t		rps;		/* requests per second */
	int64_t		rpd;		/* requests per UTC day */
	int64_t		cups;		/* compute units per second */
	int		debug;		/* debug_* and trace_* methods allowed */
	int64_t		ws_connections;	/* open WebSocket connections per key; 0 = no cap */
	/* ---- Webhooks (docs/webhooks.md) ---- */
	int64_t		webhooks;		/* webhooks per account; 0 = no cap */
	int64_t		webhook_deliveries;	/* delivery attempts per UTC day; 0 = no cap */
	int64_t		webhook_events_day;	/* events recorded per account and UTC day; 0 = no cap */
	int64_t		webhook_backlog;	/* undelivered events a webhook holds; 0 = no cap */
	/* ---- Rate limits (docs/limits.md) ---- */
	int64_t		burst;		/* seconds' worth of rps and cups a key may spend at once;
					   0: counted per calendar second */
	/* ---- Gas (docs/gas.md) ---- */
	char		sponsor_usd_per_day[BP_DECIMAL_MAX];	/* USD sponsored; "0" = no cap */
};

/* The burst of a plan that does not set one: a dApp's page load or a sent transaction. */
#define BP_PLAN_BURST	3

/* A [chain NAME.NETWORK] section. */
struct bp_network {
	char		chain[BP_NAME_MAX];
	char		network[BP_NAME_MAX];
	enum bp_chain_kind kind;
	int64_t		chain_id;
	int		testnet;
	int		rest_default;	/* the network REST paths use for this chain and key kind */
	char		upstream[BP_MAX_UPSTREAMS][BP_URL_MAX];
	size_t		nupstream;
	int64_t		confirmations;
	int64_t		archive_depth;	/* blocks behind the head that count as archive reads */
	int64_t		start_block;
	char		entry_point[BP_ADDR_STRLEN];
	char		account_factory[BP_ADDR_STRLEN];
	char		account_implementation[BP_ADDR_STRLEN];
	char		paymaster[BP_ADDR_STRLEN];
	char		paymaster_signer[BP_ADDR_STRLEN];
	/* The chain indexer (cron/indexer.c, docs/indexer.md). */
	int		index;			/* index this network (evm only; default true) */
	int64_t		index_batch;		/* blocks per batch and transaction (100) */
	int64_t		index_logs_range;	/* blocks per eth_getLogs call (100) */
	int64_t		index_retention_blocks;	/* raw blocks/transactions kept; 0 = all */
	int		index_receipts;		/* fetch receipts: status, contract created */
	/* ---- Gas (lib/gas/gas.c, lib/gas/paymaster.c; docs/gas.md) ---- */
	char		paymaster_key_file[4096];	/* the verifying signer's private key */
	int64_t		block_seconds;		/* block interval, for estimated_seconds (12) */
	int		gas_sample;		/* cron/gas samples this network (evm; default true) */
	char		gas_priority_floor[BP_DECIMAL_MAX];	/* gwei; the least tip estimated */
	/* ---- The JSON-RPC response cache (lib/rpc/rpc_cache.c; docs/rpc.md) ---- */
	int64_t		finality_depth;		/* blocks below the head that no reorg reaches (1024) */
	int64_t		cache_ttl_ms;		/* near-head answers kept this long; 0 = never (0) */
	int		cache;			/* answers of this network may be cached (true) */
	/* ---- NFTs (lib/nft/nft.c; docs/nfts.md) ---- */
	int		allow_private_urls;	/* metadata fetches: -1 [server]'s, else 0/1 */
	/* ---- Bundler (cron/bundle.c; docs/bundler.md) ---- */
	char		bundler_key[4096];	/* the file of the key that sends bundles */
	char		bundler_beneficiary[BP_ADDR_STRLEN];	/* "" = the bundler's address */
	/* ERC-7562 (lib/bundler/bundler_rules.c): "" or "auto" traces when the node can, "true"
	 * must, "false" validates by eth_call only; debug_bundler_* methods on (false). */
	char		trace_validation[8];
	int		debug_bundler;
	/* ---- ERC-4337 v0.7 and v0.8 beside v0.6 (docs/wallets.md, docs/gas.md) ---- */
	char		entry_point_version[8];	/* new wallets' and sponsor's default: "" = "0.6" */
	char		entry_point_v07[BP_ADDR_STRLEN];
	char		account_factory_v07[BP_ADDR_STRLEN];
	char		account_implementation_v07[BP_ADDR_STRLEN];
	char		paymaster_v07[BP_ADDR_STRLEN];
	char		entry_point_v08[BP_ADDR_STRLEN];
	char		account_factory_v08[BP_ADDR_STRLEN];
	char		account_implementation_v08[BP_ADDR_STRLEN];
	char		paymaster_v08[BP_ADDR_STRLEN];
};

/* ---- Gas: a [prices CHAIN] section, USD prices of the chain's coins (lib/token/price.c) ---- */
struct bp_prices {
	char		chain[BP_NAME_MAX];
	char		native[BP_DECIMAL_MAX];	/* USD per native coin; "" when not given */
};

/* ---- Tokens: a `0xCONTRACT = PRICE` or `= chainlink:0xAGGREGATOR` line (docs/tokens.md) ---- */
struct bp_token_price {
	char		chain[BP_NAME_MAX];		/* of its [prices CHAIN] section */
	char		contract[BP_ADDR_STRLEN];	/* lower case */
	char		price[BP_DECIMAL_MAX];		/* a fixed USD price, or "" */
	char		aggregator[BP_ADDR_STRLEN];	/* lower case, or "": cron/prices reads it */
};

/* ---- Webhooks: the [webhooks] and [smtp] sections (docs/webhooks.md) ---- */
#define BP_WEBHOOK_RETRIES_MAX	16
struct bp_webhooks_config {
	int64_t		timeout_ms;		/* one delivery attempt (15000) */
	char		retry_schedule[256];	/* "10,60,600,3600,21600", as written */
	int64_t		retry[BP_WEBHOOK_RETRIES_MAX];	/* parsed: seconds before retry i + 1 */
	size_t		nretry;
	char		retry_schedule_b[256];	/* format B's: "1,5,30,300,1800,7200,28800" */
	int64_t		retry_b[BP_WEBHOOK_RETRIES_MAX];
	size_t		nretry_b;
	char		ca_file[4096];		/* extra trusted CAs (PEM); "" for none */
	int64_t		parallel;		/* deliveries in flight at once (256) */
	int64_t		retention_seconds;	/* delivered events and attempts kept (7 days) */
	int64_t		event_ttl_seconds;	/* undelivered events expire after this (3 days) */
	char		smtp_url[BP_URL_MAX];	/* smtp:// or smtps://; "" for no e-mail */
	char		smtp_from[256];
};

struct bp_config {
	char		path[4096];
	char		database[4096];
	char		limits_file[4096];	/* shared-memory counters */
	char		limits_url[512];	/* redis:// for counters shared by heads; "" */
	char		metrics_allow[512];	/* who may read /metrics besides loopback; "" */
	/* A head's own files (locks, WebSocket slots, heads feeds); "": beside the database */
	char		state_dir[4096];
	int64_t		max_body;		/* request body cap, bytes */
	int64_t		max_response;		/* upstream response cap, bytes */
	int64_t		max_batch;		/* JSON-RPC batch items */
	int64_t		upstream_timeout_ms;
	int64_t		upstream_down_seconds;	/* how long a failed upstream is skipped */
	int64_t		upstream_first_byte_ms;	/* wait for a first byte when another can answer */
	int64_t		anon_rps;		/* per client address, requests without a valid key */
	int64_t		key_cache_seconds;
	int		allow_private_urls;	/* outbound fetches may reach loopback/private (tests) */
	struct bp_plan	plans[BP_MAX_PLANS];
	size_t		nplans;
	struct bp_network nets[BP_MAX_NETWORKS];
	size_t		nnets;
	/* ---- Gas (docs/gas.md) ---- */
	int64_t		gas_sample_max_age;	/* seconds before /prices samples again (30) */
	int64_t		paymaster_validity;	/* seconds a sponsorship signature is valid (600) */
	char		sponsor_usd_per_day[BP_DECIMAL_MAX];	/* the server's; "" or "0": no cap */
	struct bp_prices prices[BP_MAX_PRICES];
	size_t		nprices;
	/* ---- Tokens (docs/tokens.md) ---- */
	struct bp_token_price token_prices[BP_MAX_TOKEN_PRICES];
	size_t		ntoken_prices;
	char		token_list[4096];	/* a Uniswap token-list file for logos, or "" */
	int64_t		price_max_age;		/* seconds a Chainlink sample stays a price (3600) */
	int64_t		token_refresh_seconds;	/* total_supply and spam read again after (60) */
	int64_t		token_balances_max;	/* holdings read per balances request (1000) */
	/* ---- The JSON-RPC response cache (lib/rpc/rpc_cache.c; docs/rpc.md) ---- */
	int		rpc_cache;		/* on (true) */
	int64_t		rpc_cache_mb;		/* bound of the cached answers, MiB (256) */
	int64_t		rpc_cache_max_item;	/* larger answers are not cached, bytes (1 MiB) */
	char		rpc_cache_file[4096];	/* a database of its own; "": the database */
	/* ---- NFTs (docs/nfts.md) ---- */
	char		ipfs_gateway[BP_URL_MAX];	/* ipfs:// and bare CIDs go through it */
	char		arweave_gateway[BP_URL_MAX];	/* ar:// */
	int64_t		nft_retry_seconds;	/* first backoff after a failed metadata fetch */
	/* ---- Webhooks (docs/webhooks.md) ---- */
	struct bp_webhooks_config webhooks;
};

/*
 * Reads and validates the file at path (or at $BLOCKPORT_CONFIG when path is NULL). Returns a new
 * config owned by the caller (free with bp_config_free), or NULL after writing the reason, with
 * file, line and key, into err.
 */
struct bp_config *bp_config_load(const char *path, char *err, size_t errlen);
void		  bp_config_free(struct bp_config *);

/*
 * The path of a head's own file, suffix (".indexer.lock") appended to its prefix: the database's
 * path when state_dir is not set (SQLite: the files sit beside it, as they always did),
 * STATE_DIR/blockport otherwise (with a URL, state_dir defaults to the limits file's directory).
 * 0, or -1 when it does not fit cap.
 */
int		  bp_config_state_path(const struct bp_config *, const char *suffix, char *out,
		    size_t cap);

/* The plan called name, or NULL. */
const struct bp_plan *bp_config_plan(const struct bp_config *, const char *name);
/* The network chain.network, or NULL. */
const struct bp_network *bp_config_network(const struct bp_config *, const char *chain,
		    const char *network);
/*
 * The network a REST path's {chain} means for a key (DESIGN.md): with network NULL, the chain's
 * rest_default network of the key's kind (mainnet for live keys, a testnet for test keys);
 * otherwise that named network. NULL when there is none.
 */
const struct bp_network *bp_config_rest_network(const struct bp_config *, const char *chain,
		    int testkey, const char *network);

#endif
