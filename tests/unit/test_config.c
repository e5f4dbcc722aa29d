/*
 * lib/core/config.c: real INI files written to a temporary directory. A good file and what it loads
 * to; each kind of mistake with the file:line: key the error must name; the default plans and
 * how a file redefines them; the REST network a key kind resolves to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/util.h"
#include "token/price.h"
#include "unit.h"

static char dir[] = "/tmp/bp-unit-config.XXXXXX";
static char path[sizeof(dir) + 32];

static int
setup(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof(path), "%s/blockport.ini", dir);
	return 0;
}

static int
teardown(void)
{
	unlink(path);
	rmdir(dir);
	return 0;
}

/* Writes text (len bytes, so it may hold NULs) as the config file and loads it. */
static struct bp_config *
load_n(const char *text, size_t len, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "w");

	CU_ASSERT_FATAL(fp != NULL);
	CU_ASSERT_FATAL(fwrite(text, 1, len, fp) == len);
	fclose(fp);
	err[0] = '\0';
	return bp_config_load(path, err, errlen);
}

static struct bp_config *
load(const char *text, char *err, size_t errlen)
{
	return load_n(text, strlen(text), err, errlen);
}

static const char good[] =
    "# A comment, then every section kind.\n"		/* 1 */
    "[server]\n"					/* 2 */
    "database = data/blockport.db\n"			/* 3: relative to the file */
    "max_body = 1024\n"
    "max_batch = 1000\n"
    "anon_rps = 0\n"
    "key_cache_seconds = 0\n"
    "allow_private_urls = yes\n"
    "\n"
    "[plan gold]\n"
    "rps = 50\n"
    "rpd = 1000000000000\n"
    "cups = 0\n"
    "debug = true\n"
    "\n"
    "[chain ethereum.mainnet]\n"
    "kind = evm\n"
    "chain_id = 1\n"
    "testnet = false\n"
    "upstream = https://a.example/rpc\n"
    "upstream = http://127.0.0.1:8545\n"
    "entry_point = 0x5FF137D4B0FDCD49DCA30C7CF57E578A026D2789\n"
    "\n"
    "[chain ethereum.sepolia]\n"
    "chain_id = 11155111\n"
    "testnet = 1\n"
    "upstream = https://s.example\n"
    "\n"
    "[chain ethereum.holesky]\n"
    "chain_id = 17000\n"
    "testnet = true\n"
    "default = true\n"
    "upstream = https://h.example\n"
    "\n"
    "[chain solana.mainnet]\n"
    "kind = solana\n"
    "upstream = https://sol.example\n";

static void
test_good_file(void)
{
	struct bp_config *c;
	const struct bp_network *n;
	const struct bp_plan *p;
	char err[512], want[512];

	c = load(good, err, sizeof(err));
	CU_ASSERT_FATAL(c != NULL);
	snprintf(want, sizeof(want), "%s/data/blockport.db", dir);
	CU_ASSERT_STRING_EQUAL(c->database, want);
	snprintf(want, sizeof(want), "%s/data/blockport.db.limits", dir);
	CU_ASSERT_STRING_EQUAL(c->limits_file, want);		/* next to the database */
	CU_ASSERT_STRING_EQUAL(c->path, path);
	CU_ASSERT_EQUAL(c->max_body, 1024);
	CU_ASSERT_EQUAL(c->max_batch, 1000);
	CU_ASSERT_EQUAL(c->anon_rps, 0);
	CU_ASSERT_EQUAL(c->key_cache_seconds, 0);
	CU_ASSERT_EQUAL(c->allow_private_urls, 1);
	CU_ASSERT_EQUAL(c->max_response, 32 * 1024 * 1024);	/* defaults for what is not set */
	CU_ASSERT_EQUAL(c->upstream_timeout_ms, 10000);

	p = bp_config_plan(c, "gold");
	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_EQUAL(p->rps, 50);
	CU_ASSERT_EQUAL(p->rpd, INT64_C(1000000000000));
	CU_ASSERT_EQUAL(p->cups, 0);
	CU_ASSERT_EQUAL(p->debug, 1);
	CU_ASSERT_PTR_NULL(bp_config_plan(c, "silver"));

	n = bp_config_network(c, "ethereum", "mainnet");
	CU_ASSERT_FATAL(n != NULL);
	CU_ASSERT_EQUAL(n->kind, BP_CHAIN_EVM);
	CU_ASSERT_EQUAL(n->chain_id, 1);
	CU_ASSERT_EQUAL(n->testnet, 0);
	CU_ASSERT_EQUAL(n->nupstream, 2);
	CU_ASSERT_STRING_EQUAL(n->upstream[0], "https://a.example/rpc");
	CU_ASSERT_STRING_EQUAL(n->upstream[1], "http://127.0.0.1:8545");
	CU_ASSERT_STRING_EQUAL(n->entry_point, "0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789");
	CU_ASSERT_EQUAL(n->archive_depth, 128);
	CU_ASSERT_STRING_EQUAL(n->paymaster, "");
	n = bp_config_network(c, "solana", "mainnet");
	CU_ASSERT_FATAL(n != NULL);
	CU_ASSERT_EQUAL(n->kind, BP_CHAIN_SOLANA);
	CU_ASSERT_PTR_NULL(bp_config_network(c, "ethereum", "goerli"));
	CU_ASSERT_PTR_NULL(bp_config_network(c, "bitcoin", "mainnet"));

	/* REST paths: a live key gets the mainnet, a test key the default testnet. */
	n = bp_config_rest_network(c, "ethereum", 0, NULL);
	CU_ASSERT(n != NULL && strcmp(n->network, "mainnet") == 0);
	n = bp_config_rest_network(c, "ethereum", 1, NULL);
	CU_ASSERT(n != NULL && strcmp(n->network, "holesky") == 0);
	n = bp_config_rest_network(c, "ethereum", 1, "sepolia");
	CU_ASSERT(n != NULL && strcmp(n->network, "sepolia") == 0);
	CU_ASSERT_PTR_NULL(bp_config_rest_network(c, "ethereum", 1, "nope"));
	CU_ASSERT_PTR_NULL(bp_config_rest_network(c, "solana", 1, NULL));	/* no testnet */
	n = bp_config_rest_network(c, "solana", 0, NULL);
	CU_ASSERT(n != NULL && n->kind == BP_CHAIN_SOLANA);
	bp_config_free(c);
	bp_config_free(NULL);
}

static void
test_default_plans(void)
{
	struct bp_config *c;
	const struct bp_plan *p;
	char err[512];

	c = load("[server]\ndatabase = /tmp/x.db\n", err, sizeof(err));
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL(c->nplans, 3);
	/* SPEC.md section 8. */
	p = bp_config_plan(c, "free");
	CU_ASSERT(p != NULL && p->rps == 10 && p->rpd == 100000 && p->cups == 200 && !p->debug);
	p = bp_config_plan(c, "growth");
	CU_ASSERT(p != NULL && p->rps == 100 && p->rpd == 5000000 && p->cups == 2000);
	p = bp_config_plan(c, "enterprise");
	CU_ASSERT(p != NULL && p->rps == 0 && p->rpd == 0 && p->cups == 0);	/* unlimited */
	/* Each holds 3 seconds' worth of its per-second limits (docs/limits.md). */
	for (p = c->plans; p < c->plans + c->nplans; p++)
		CU_ASSERT_EQUAL(p->burst, 3);
	CU_ASSERT_EQUAL(c->max_body, 1024 * 1024);
	CU_ASSERT_EQUAL(c->anon_rps, 20);
	CU_ASSERT_EQUAL(c->key_cache_seconds, 30);
	CU_ASSERT_EQUAL(c->allow_private_urls, 0);
	CU_ASSERT_EQUAL(c->nnets, 0);
	bp_config_free(c);

	/* A file may change one number of a default plan; the others stay. */
	c = load("[server]\ndatabase = /tmp/x.db\n[plan free]\nrps = 3\n", err, sizeof(err));
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL(c->nplans, 3);
	p = bp_config_plan(c, "free");
	CU_ASSERT(p != NULL && p->rps == 3 && p->rpd == 100000 && p->cups == 200);
	bp_config_free(c);

	/* A new plan starts from zero (unlimited) in what it does not say, but for its burst. */
	c = load("[server]\ndatabase = /tmp/x.db\n[plan tiny]\nrps = 1\n[plan exact]\nburst = 0\n",
	    err, sizeof(err));
	CU_ASSERT_FATAL(c != NULL);
	p = bp_config_plan(c, "tiny");
	CU_ASSERT(p != NULL && p->rps == 1 && p->rpd == 0 && p->cups == 0 && p->burst == 3);
	p = bp_config_plan(c, "exact");
	CU_ASSERT(p != NULL && p->burst == 0);
	bp_config_free(c);
}

struct erow {
	const char	*text;
	const char	*want;		/* what the error must contain, after "<path>:" */
};

#define DB	"[server]\ndatabase = /tmp/x.db\n"
#define CHAIN	"[chain eth.main]\nchain_id = 1\nupstream = http://a\n"

static const struct erow erows[] = {
	/* Unknown names, with the line they are on. */
	{ DB "bogus = 1\n", ":3: bogus: unknown key in a [server] section" },
	{ DB "Database = /x\n", ":3: Database: unknown key" },		/* keys are exact */
	{ DB "[plan x]\nrps = 1\nrpm = 5\n", ":5: rpm: unknown key in a [plan] section" },
	{ DB CHAIN "chainid = 1\n", ":6: chainid: unknown key in a [chain] section" },
	{ DB "[servers]\nx = 1\n", ":3: unknown section [servers]" },
	{ DB "[plan]\nrps = 1\n", ":3: unknown section [plan]" },
	{ "database = /x\n", ":1: database: key outside any section" },
	/* Numbers: not numbers, out of range, overflow. */
	{ DB "max_body = abc\n", ":3: max_body: not a whole number in range: 'abc'" },
	{ DB "max_body = 1023\n", ":3: max_body: not a whole number in range: '1023'" },
	{ DB "max_body = 67108865\n", ":3: max_body: not a whole number" },
	{ DB "max_body = 9223372036854775808\n", ":3: max_body: not a whole number" },
	{ DB "max_body = -1\n", ":3: max_body: not a whole number" },
	{ DB "max_body = 1e6\n", ":3: max_body: not a whole number" },
	{ DB "max_body = 0x400\n", ":3: max_body: not a whole number" },
	{ DB "max_body = 01024\n", ":3: max_body: not a whole number" },
	{ DB "max_body =\n", ":3: max_body: not a whole number" },
	{ DB "[plan x]\nrps = -5\n", ":4: rps: not a whole number" },
	{ DB CHAIN "chain_id = 18446744073709551616\n", ":6: chain_id: not a whole number" },
	/* Booleans. */
	{ DB "allow_private_urls = maybe\n", ":3: allow_private_urls: expected true or false" },
	{ DB "allow_private_urls = TRUE\n", ":3: allow_private_urls: expected true or false" },
	{ DB "allow_private_urls = \n", ":3: allow_private_urls: expected true or false" },
	{ DB "[plan x]\ndebug = 2\n", ":4: debug: expected true or false" },
	/* A section given again is taken up again: its errors name the later line. */
	{ DB CHAIN "[server]\nanon_rps = 1\n[chain eth.main]\nchain_id = x\n",
	    ":9: chain_id: not a whole number" },
	{ DB CHAIN "[server]\n[chain eth.main]\nupstream = ftp://a\n", ":8: upstream: not an http" },
	/* Names. */
	{ DB "[plan Gold]\nrps = 1\n", "bad plan name in [plan Gold]" },
	{ DB "[plan a b]\nrps = 1\n", "bad plan name" },
	{ DB "[plan \xc3\xa9]\nrps = 1\n", "bad plan name" },
	{ DB "[plan abcdefghijklmnopqrstuvwxyz123456]\nrps = 1\n", "bad plan name" },
	{ DB "[chain ethereum]\nchain_id = 1\n", "expected [chain NAME.NETWORK]" },
	{ DB "[chain Eth.main]\nchain_id = 1\n", "bad chain or network name" },
	{ DB "[chain eth.]\nchain_id = 1\n", "bad chain or network name" },
	{ DB "[chain eth.main.x]\nchain_id = 1\n", "bad chain or network name" },
	/* Required keys, and relations between them. */
	{ "[server]\nanon_rps = 1\n", ":0: database: required in [server]" },
	{ "", ":0: database: required in [server]" },
	{ "# only a comment\n", "database: required" },
	{ DB "database =\n", ":3: database: empty path" },
	{ DB "[chain eth.main]\nchain_id = 1\n", "upstream: at least one upstream is required in"
	    " [chain eth.main]" },
	{ DB "[chain eth.main]\nupstream = http://a\n", "chain_id: required for an evm chain" },
	/* Upstream URLs. */
	{ DB CHAIN "upstream = ftp://a\n", ":6: upstream: not an http:// or https:// URL" },
	{ DB CHAIN "upstream = HTTP://a\n", ":6: upstream: not an http:// or https:// URL" },
	{ DB CHAIN "upstream = a.example\n", "not an http:// or https:// URL" },
	{ DB CHAIN "upstream = file:///etc/passwd\n", "not an http:// or https:// URL" },
	{ DB "[chain eth.main]\nchain_id = 1\n"
	    "upstream = http://1\nupstream = http://2\nupstream = http://3\nupstream = http://4\n"
	    "upstream = http://5\nupstream = http://6\nupstream = http://7\nupstream = http://8\n"
	    "upstream = http://9\n", ":13: upstream: more than 8 upstreams" },
	/* Addresses: 0x and exactly 40 hex digits. */
	{ DB CHAIN "entry_point = 0x5ff137d4b0fdcd49dca30c7cf57e578a026d278\n",
	    ":6: entry_point: not a 0x address of 40 hex digits" },
	{ DB CHAIN "entry_point = 0x5ff137d4b0fdcd49dca30c7cf57e578a026d27890\n",
	    "entry_point: not a 0x address" },
	{ DB CHAIN "paymaster = 5ff137d4b0fdcd49dca30c7cf57e578a026d2789aa\n",
	    "paymaster: not a 0x address" },
	{ DB CHAIN "paymaster = 0xgff137d4b0fdcd49dca30c7cf57e578a026d2789\n",
	    "paymaster: not a 0x address" },
	{ DB CHAIN "paymaster = 0x\n", "paymaster: not a 0x address" },
	/* The chain kind. */
	{ DB CHAIN "kind = bitcoin\n", ":6: kind: expected evm or solana" },
	/* Syntax. */
	{ DB "just words\n", ":3: syntax error" },
	{ DB "[server\n", ":3: syntax error" },
};

static void
test_errors(void)
{
	size_t i;

	for (i = 0; i < BP_NITEMS(erows); i++) {
		char err[512];
		struct bp_config *c = load(erows[i].text, err, sizeof(err));
		int ok = c == NULL && strncmp(err, path, strlen(path)) == 0 &&
		    strstr(err + strlen(path), erows[i].want) != NULL;

		CU_ASSERT(ok);
		if (!ok)
			fprintf(stderr, "config error row %zu: got '%s', want '%s'\n", i,
			    c ? "(loaded)" : err, erows[i].want);
		bp_config_free(c);
	}
}

static void
test_hostile(void)
{
	static char text[8192];
	struct bp_config *c;
	char err[512];
	size_t n;

	/* A line longer than the reader takes is an error, not a silent cut. */
	n = (size_t)snprintf(text, sizeof(text), DB "[plan x]\nrps = 1");
	memset(text + n, '0', 2000);
	text[n + 2000] = '\n';
	text[n + 2001] = '\0';
	c = load(text, err, sizeof(err));
	CU_ASSERT(c == NULL && strstr(err, ":4: line longer than") != NULL);
	bp_config_free(c);

	/*
	 * inih's line buffer (INI_MAX_LINE, 200 in Debian's libinih) is the real bound: 198
	 * characters and the newline load, 199 are refused with that number in the message.
	 */
	n = (size_t)snprintf(text, sizeof(text), "[server]\ndatabase = /");
	memset(text + n, 'd', 198 - 12);
	text[n + 198 - 12] = '\n';
	text[n + 198 - 11] = '\0';
	c = load(text, err, sizeof(err));
	CU_ASSERT(c != NULL && strlen(c->database) == 198 - 11);
	bp_config_free(c);
	text[n + 198 - 12] = 'd';
	text[n + 198 - 11] = '\n';
	text[n + 198 - 10] = '\0';
	c = load(text, err, sizeof(err));
	CU_ASSERT(c == NULL && strstr(err, ":2: line longer than 198 characters") != NULL);
	bp_config_free(c);

	/* Bytes that are not UTF-8 in a value that takes any bytes (a path) load as they are. */
	c = load("[server]\ndatabase = /tmp/\xff\xfe.db\n", err, sizeof(err));
	CU_ASSERT(c != NULL && strcmp(c->database, "/tmp/\xff\xfe.db") == 0);
	bp_config_free(c);

	/* A NUL byte inside the file: whatever the loader makes of it, it does not crash. */
	c = load_n(DB "anon_rps = 1\0garbage\n", sizeof(DB "anon_rps = 1\0garbage\n") - 1, err,
	    sizeof(err));
	bp_config_free(c);

	/* The file is missing, or the variable that names it. */
	unlink(path);
	c = bp_config_load(path, err, sizeof(err));
	CU_ASSERT(c == NULL && strstr(err, "No such file") != NULL);
	{
		char *old = getenv("BLOCKPORT_CONFIG") ? strdup(getenv("BLOCKPORT_CONFIG")) : NULL;

		unsetenv("BLOCKPORT_CONFIG");
		c = bp_config_load(NULL, err, sizeof(err));
		CU_ASSERT(c == NULL && strstr(err, "BLOCKPORT_CONFIG is not set") != NULL);
		if (old != NULL) {
			setenv("BLOCKPORT_CONFIG", old, 1);
			free(old);
		}
	}
	/* An error message longer than the caller's buffer is cut, still terminated. */
	{
		char small[16];

		c = load(DB "bogus = 1\n", small, sizeof(small));
		CU_ASSERT(c == NULL && strlen(small) == sizeof(small) - 1);
	}
}

/* ---- the gas keys (docs/gas.md): [prices CHAIN], the paymaster key file, the sampler ---- */

#define GAS_CHAIN	"[chain ethereum.devnet]\nchain_id = 1\nupstream = http://127.0.0.1:1\n"

static void
test_gas_keys(void)
{
	struct bp_config *c;
	struct bp_price p;
	char err[512];

	c = load(DB GAS_CHAIN, err, sizeof(err));
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT(c->gas_sample_max_age == 30 && c->paymaster_validity == 600);
	CU_ASSERT(c->nets[0].block_seconds == 12);
	CU_ASSERT_STRING_EQUAL(c->nets[0].gas_priority_floor, "0.001");
	CU_ASSERT(c->nets[0].paymaster_key_file[0] == '\0');
	CU_ASSERT(bp_price_native(c, "ethereum", &p) == -1);	/* unknown: never made up */
	bp_config_free(c);

	c = load(DB "gas_sample_max_age = 5\npaymaster_validity = 60\n" GAS_CHAIN
	    "paymaster_key_file = pm.key\nblock_seconds = 2\ngas_priority_floor = 1.5\n"
	    "[prices ethereum]\nnative = 3000.25\n", err, sizeof(err));
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT(c->gas_sample_max_age == 5 && c->paymaster_validity == 60);
	CU_ASSERT(strstr(c->nets[0].paymaster_key_file, "/pm.key") != NULL);
	CU_ASSERT(c->nets[0].block_seconds == 2);
	CU_ASSERT(bp_price_native(c, "ethereum", &p) == 0 && p.whole == 3000 &&
	    p.frac == UINT64_C(250000000000000000));
	CU_ASSERT(bp_price_native(c, "polygon", &p) == -1);
	bp_config_free(c);
}

static void
test_gas_refusals(void)
{
	static const struct {
		const char *text, *want;
	} rows[] = {
		{ DB "[prices ethereum]\nnative = 1e3\n", ":4: native" },
		{ DB "[prices ethereum]\nnative = -1\n", "native" },
		{ DB "[prices ethereum]\nnative = 1.0000000000000000001\n", "native" },
		{ DB "[prices ethereum]\nusd = 1\n", "usd: unknown key in a [prices] section" },
		{ DB "[prices ethereum]\nnative = 1\n[prices ethereum]\nnative = x\n", ":6: native" },
		{ DB "[prices Bad]\nnative = 1\n", "bad chain name" },
		{ DB GAS_CHAIN "gas_priority_floor = abc\n", "gas_priority_floor" },
		{ DB GAS_CHAIN "block_seconds = 0\n", "block_seconds" },
		{ DB "paymaster_validity = 5\n", "paymaster_validity" },
		{ DB "gas_sample_max_age = 0\n", "gas_sample_max_age" },
	};
	struct bp_config *c;
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		c = load(rows[i].text, err, sizeof(err));
		CU_ASSERT(c == NULL);
		if (strstr(err, rows[i].want) == NULL)
			fprintf(stderr, "row %zu: %s\n", i, err);
		CU_ASSERT(strstr(err, rows[i].want) != NULL);
		bp_config_free(c);
	}
}

/*
 * Lines appended to a file (make run EXTRA_CONFIG=FILE) override it: a section given again is
 * taken up again, a key given again wins, an upstream given again adds a fallback.
 */
static void
test_later_wins(void)
{
	static const char text[] =
	    "[server]\ndatabase = /tmp/x.db\nanon_rps = 5\nallow_private_urls = true\n"
	    "[plan free]\nrps = 3\n[plan tiny]\nrps = 1\n"
	    "[chain eth.main]\nchain_id = 1\nupstream = http://a\nconfirmations = 2\n"
	    "[prices ethereum]\nnative = 3000\n"
	    "# appended\n"
	    "[server]\nanon_rps = 7\nallow_private_urls = false\nanon_rps = 9\n"
	    "[plan free]\nrpd = 4\n[plan tiny]\nrps = 2\n"
	    "[chain eth.main]\nupstream = http://b\nconfirmations = 5\n"
	    "[chain eth.test]\nchain_id = 5\nupstream = http://c\n"
	    "[prices ethereum]\nnative = 3150.25\n";
	struct bp_config *c;
	const struct bp_network *n;
	const struct bp_plan *p;
	struct bp_price pr;
	char err[512];

	c = load(text, err, sizeof(err));
	if (c == NULL)
		fprintf(stderr, "\n  %s\n", err);
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL(c->anon_rps, 9);
	CU_ASSERT_EQUAL(c->allow_private_urls, 0);
	CU_ASSERT_EQUAL(c->nplans, 4);
	p = bp_config_plan(c, "free");
	CU_ASSERT(p != NULL && p->rps == 3 && p->rpd == 4 && p->cups == 200);
	p = bp_config_plan(c, "tiny");
	CU_ASSERT(p != NULL && p->rps == 2);
	CU_ASSERT_EQUAL(c->nnets, 2);
	n = bp_config_network(c, "eth", "main");
	CU_ASSERT_FATAL(n != NULL);
	CU_ASSERT_EQUAL(n->chain_id, 1);
	CU_ASSERT_EQUAL(n->confirmations, 5);
	CU_ASSERT_EQUAL(n->nupstream, 2);
	CU_ASSERT_STRING_EQUAL(n->upstream[0], "http://a");
	CU_ASSERT_STRING_EQUAL(n->upstream[1], "http://b");
	CU_ASSERT_EQUAL(c->nprices, 1);
	CU_ASSERT(bp_price_native(c, "ethereum", &pr) == 0 && pr.whole == 3150);
	bp_config_free(c);
}

/* A postgresql:// database is a URL, not a path; the counters file must then be named. */
static void
test_database_url(void)
{
	static const char url[] = "postgresql://bp@127.0.0.1:5432/blockport?sslmode=disable";
	char sp[4200];
	struct bp_config *c;
	char err[512];

	c = load("[server]\ndatabase = postgresql://bp@127.0.0.1:5432/blockport?sslmode=disable\n"
	    "limits_file = run/limits\n", err, sizeof(err));
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_STRING_EQUAL(c->database, url);
	CU_ASSERT_PTR_NOT_NULL(strstr(c->limits_file, "/run/limits"));
	CU_ASSERT_EQUAL(c->limits_file[0], '/');	/* a path: made absolute */
	/* A head's own files: beside the counters, since a URL has no "beside". */
	CU_ASSERT_EQUAL_FATAL(bp_config_state_path(c, ".indexer.lock", sp, sizeof(sp)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sp, "/run/blockport.indexer.lock"));
	CU_ASSERT_EQUAL(sp[0], '/');
	bp_config_free(c);
	c = load("[server]\ndatabase = postgresql://bp@127.0.0.1/blockport\nlimits_file = /a/l\n"
	    "state_dir = /var/lib/head\n", err, sizeof(err));
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL_FATAL(bp_config_state_path(c, ".ws", sp, sizeof(sp)), 0);
	CU_ASSERT_STRING_EQUAL(sp, "/var/lib/head/blockport.ws");
	bp_config_free(c);
	/* SQLite without state_dir: beside the file, as always. */
	c = load("[server]\ndatabase = /d/b.db\n", err, sizeof(err));
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL_FATAL(bp_config_state_path(c, ".heads", sp, sizeof(sp)), 0);
	CU_ASSERT_STRING_EQUAL(sp, "/d/b.db.heads");
	bp_config_free(c);
	c = load("[server]\ndatabase = postgresql://bp@127.0.0.1/blockport\n", err, sizeof(err));
	CU_ASSERT(c == NULL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "limits_file"));
	bp_config_free(c);
}

/* [server] metrics_allow: a list of addresses and CIDR blocks, refused at load when not. */
static void
test_metrics_allow(void)
{
	struct bp_config *c;
	char err[512];

	c = load("[server]\ndatabase = x.db\nmetrics_allow = 192.0.2.0/24, fd00::/8 10.1.2.3\n",
	    err, sizeof(err));
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_STRING_EQUAL(c->metrics_allow, "192.0.2.0/24, fd00::/8 10.1.2.3");
	bp_config_free(c);
	c = load("[server]\ndatabase = x.db\nmetrics_allow = 192.0.2.0/33\n", err, sizeof(err));
	CU_ASSERT(c == NULL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "metrics_allow"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "192.0.2.0/33"));
	bp_config_free(c);
	c = load("[server]\ndatabase = x.db\nmetrics_allow = prometheus.local\n", err,
	    sizeof(err));
	CU_ASSERT(c == NULL);
	bp_config_free(c);
}

BP_UNIT_SUITE(config, setup, teardown,
	{ "metrics_allow: addresses and CIDR blocks", test_metrics_allow },
	{ "a good file", test_good_file },
	{ "default plans, redefined and new plans", test_default_plans },
	{ "errors name file:line: key", test_errors },
	{ "long lines, bytes, missing files", test_hostile },
	{ "gas keys and [prices CHAIN] load with their defaults", test_gas_keys },
	{ "bad gas keys name file, line and key", test_gas_refusals },
	{ "a section or key given again: later wins", test_later_wins },
	{ "a postgresql:// database: kept as written, limits_file named", test_database_url })
