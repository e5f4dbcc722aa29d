/*
 * blockport: the operator's command-line tool. Reads the same config as the programs
 * (BLOCKPORT_CONFIG, or -c FILE). Output goes to stdout, errors to stderr with exit status 1,
 * usage errors with exit status 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "admin_webhook.h"
#include "core/account.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/db.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/util.h"
#include "core/worker.h"
#include "index/index_read.h"
#include "net/upstream.h"
#include "rpc/head_mark.h"

struct ctx {
	struct bp_config	*cfg;
	struct bp_db		*db;
	struct bp_limits	*lim;
};

static const char usage_text[] =
"usage: blockport [-c CONFIG] COMMAND [ARGS]\n"
"\n"
"commands:\n"
"  migrate                                apply pending database migrations\n"
"  status                                 config check, schema version, workers' last runs\n"
"  account create --email EMAIL [--plan PLAN]\n"
"  account list\n"
"  account plan ID|EMAIL PLAN             move an account to another plan\n"
"  key create ID|EMAIL [--test|--live] [--scopes a,b] [--name NAME]\n"
"                                         prints the new key once; it is never stored\n"
"  key list [ID|EMAIL]\n"
"  key revoke KEY_ID\n"
"  webhook test ID                        send a signed test event now; the receiver's answer\n"
"  webhook deliveries ID [--limit N]      the latest delivery attempts of a webhook\n"
"  webhook disable|enable ID              the operator's switch (docs/webhooks.md)\n"
"\n"
"scopes: rpc:read rpc:write data:read wallets:manage webhooks:manage gas:manage bundler:send\n"
"        (none given = all scopes)\n"
"the config file is $BLOCKPORT_CONFIG unless -c is given\n";

static int
usage(void)
{
	fputs(usage_text, stderr);
	return 2;
}

/*
 * A subcommand of cmd that did not run: named as unknown, or as missing its arguments when it is
 * one of known (NULL-terminated); then the usage.
 */
static int
bad_subcommand(const char *cmd, int argc, char **argv, const char *const *known)
{
	if (argc < 1)
		return usage();
	for (; *known != NULL; known++)
		if (strcmp(argv[0], *known) == 0) {
			fprintf(stderr, "blockport: %s %s: missing arguments\n", cmd, argv[0]);
			return usage();
		}
	fprintf(stderr, "blockport: unknown command '%s %s'\n", cmd, argv[0]);
	return usage();
}

static int
die(const char *msg, const char *arg)
{
	fprintf(stderr, "blockport: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	return 1;
}

/* Finds an option's value in argv ("--plan growth"); NULL when absent. */
static const char *
opt(int argc, char **argv, const char *name)
{
	int i;

	for (i = 0; i < argc - 1; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return NULL;
}

static int
flag(int argc, char **argv, const char *name)
{
	int i;

	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

static int
print_account(const struct bp_account_row *r, void *arg)
{
	char ts[32];

	(void)arg;
	bp_time_iso((time_t)r->created_at, ts, sizeof(ts));
	printf("%-6lld %-32s %-12s %-20s %lld\n", (long long)r->id, r->email, r->plan, ts,
	    (long long)r->active_keys);
	return 0;
}

static int
cmd_account(struct ctx *c, int argc, char **argv)
{
	if (argc >= 1 && strcmp(argv[0], "create") == 0) {
		const char *email = opt(argc, argv, "--email");
		const char *plan = opt(argc, argv, "--plan");
		int64_t id;

		if (plan == NULL)
			plan = "free";
		if (email == NULL || strchr(email, '@') == NULL ||
		    strlen(email) > BP_ACCOUNT_EMAIL_MAX)
			return die("account create needs --email ADDRESS", NULL);
		if (bp_config_plan(c->cfg, plan) == NULL)
			return die("no such plan in the config", plan);
		if ((id = bp_account_create(c->db, email, plan)) <= 0)
			return die(id == 0 ? "an account with that e-mail exists" :
			    "cannot create the account", email);
		printf("account %lld created: %s, plan %s\n", (long long)id, email, plan);
		return 0;
	}
	if (argc >= 1 && strcmp(argv[0], "list") == 0) {
		printf("%-6s %-32s %-12s %-20s %s\n", "ID", "EMAIL", "PLAN", "CREATED", "KEYS");
		return bp_account_each(c->db, print_account, NULL) == -1 ? 1 : 0;
	}
	if (argc >= 3 && strcmp(argv[0], "plan") == 0) {
		struct bp_account a;

		if (bp_account_find(c->db, argv[1], &a) != 1)
			return die("no such account", argv[1]);
		if (bp_config_plan(c->cfg, argv[2]) == NULL)
			return die("no such plan in the config", argv[2]);
		if (strcmp(a.plan, argv[2]) == 0) {
			printf("account %lld (%s) is already on plan %s\n", (long long)a.id, a.email,
			    a.plan);
			return 0;
		}
		if (bp_account_set_plan(c->db, a.id, argv[2]) == -1)
			return 1;
		bp_limits_bump_generation(c->lim);
		printf("account %lld (%s): plan %s -> %s\n", (long long)a.id, a.email, a.plan,
		    argv[2]);
		return 0;
	}
	static const char *const known[] = { "create", "list", "plan", NULL };

	return bad_subcommand("account", argc, argv, known);
}

static int
print_key(const struct bp_account_key_row *r, void *arg)
{
	char ts[32];

	(void)arg;
	bp_time_iso((time_t)r->created_at, ts, sizeof(ts));
	printf("%-6lld %-24s %-22s %-5s %-8s %-20s %s\n", (long long)r->id, r->email, r->prefix,
	    r->kind, r->revoked ? "revoked" : "active", ts, r->scopes[0] ? r->scopes : "all");
	return 0;
}

static int
cmd_key(struct ctx *c, int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[0], "create") == 0) {
		const char *scopes = opt(argc, argv, "--scopes");
		const char *name = opt(argc, argv, "--name");
		int test = !flag(argc, argv, "--live");
		char key[BP_KEY_LEN + 1], canon[256], bad[80];
		struct bp_account a;
		unsigned mask;
		int64_t kid;

		if (bp_account_find(c->db, argv[1], &a) != 1)
			return die("no such account", argv[1]);
		if (bp_scopes_parse(scopes ? scopes : "", &mask, bad, sizeof(bad)) == -1)
			return die("unknown scope", bad);
		bp_scopes_format(mask, canon, sizeof(canon));
		if (bp_key_generate(test, key, sizeof(key)) == -1)
			return die("no randomness for the key", NULL);
		if ((kid = bp_account_key_add(c->db, a.id, key, canon, name ? name : "")) == -1) {
			OPENSSL_cleanse(key, sizeof(key));
			return die("cannot store the key", NULL);
		}
		bp_limits_bump_generation(c->lim);
		fprintf(stderr, "key id %lld for account %lld (%s, scopes: %s); it is shown only"
		    " now:\n", (long long)kid, (long long)a.id, test ? "test" : "live",
		    canon[0] ? canon : "all");
		printf("%s\n", key);
		OPENSSL_cleanse(key, sizeof(key));
		return 0;
	}
	if (argc >= 1 && strcmp(argv[0], "list") == 0) {
		struct bp_account a;

		a.id = -1;	/* every account's keys */
		if (argc >= 2 && bp_account_find(c->db, argv[1], &a) != 1)
			return die("no such account", argv[1]);
		printf("%-6s %-24s %-22s %-5s %-8s %-20s %s\n", "ID", "ACCOUNT", "PREFIX", "KIND",
		    "STATE", "CREATED", "SCOPES");
		return bp_account_each_key(c->db, a.id, print_key, NULL) == -1 ? 1 : 0;
	}
	if (argc >= 2 && strcmp(argv[0], "revoke") == 0) {
		int64_t id;
		int r;

		if (bp_parse_int64(argv[1], 1, INT64_MAX, &id) == -1)
			return die("key revoke takes the key id (see key list)", argv[1]);
		if ((r = bp_account_key_revoke(c->db, id)) == -1)
			return 1;
		if (r == 0)
			return die("no active key with that id", argv[1]);
		bp_limits_bump_generation(c->lim);
		fprintf(stderr, "key %s revoked\n", argv[1]);
		return 0;
	}
	static const char *const known[] = { "create", "list", "revoke", NULL };

	return bad_subcommand("key", argc, argv, known);
}

static int
print_run(const struct bp_worker_run *r, void *arg)
{
	char ts[32];

	(void)arg;
	bp_time_iso((time_t)r->started_at, ts, sizeof(ts));
	printf("worker:   %-12s last run %s %s %s\n", r->name, ts,
	    r->running ? "(running)" : r->ok ? "ok" : "FAILED", r->message);
	return 0;
}

/* A job's lease: who works it across the heads, its fencing epoch, and until when. */
static int
print_lease(const struct bp_worker_lease *l, void *arg)
{
	struct timespec now;
	int64_t left;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &now);
	left = l->expires_at - ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
	if (left > 0)
		printf("lease:    %-12s %s held by %s, epoch %lld, expires in %lld.%03lld s\n",
		    l->job, l->network, l->holder, (long long)l->epoch, (long long)(left / 1000),
		    (long long)(left % 1000));
	else
		printf("lease:    %-12s %s free (last %s, epoch %lld)\n", l->job, l->network,
		    l->holder, (long long)l->epoch);
	return 0;
}

static int
cmd_status(struct ctx *c)
{
	char ts[32], shown[1024];
	size_t i;

	printf("config:   %s (ok)\n", c->cfg->path);
	printf("database: %s (schema %d of %d)\n",
	    bp_db_display(c->cfg->database, shown, sizeof(shown)), bp_db_version(c->db),
	    bp_db_schema_latest());
	printf("counters: %s\n", c->cfg->limits_file);
	for (i = 0; i < c->cfg->nnets; i++) {
		const struct bp_network *n = &c->cfg->nets[i];

		printf("network:  %s.%s (%s%s, %zu upstream%s)\n", n->chain, n->network,
		    n->kind == BP_CHAIN_EVM ? "evm" : "solana", n->testnet ? ", testnet" : "",
		    n->nupstream, n->nupstream == 1 ? "" : "s");
	}
	/* The chain indexer's cursor per EVM network (cron/indexer.c, docs/indexer.md). */
	for (i = 0; i < c->cfg->nnets; i++) {
		const struct bp_network *n = &c->cfg->nets[i];
		struct bp_index_head h;
		char key[BP_INDEX_CHAIN_MAX];
		int r;

		if (n->kind != BP_CHAIN_EVM)
			continue;
		snprintf(key, sizeof(key), "%s.%s", n->chain, n->network);
		if ((r = bp_index_get_head(c->db, key, &h)) == -1)
			return 1;
		if (r == 0 || h.checked_at == 0) {
			printf("indexed:  %-24s %s\n", key, n->index ? "not yet" : "off (index = false)");
			continue;
		}
		bp_time_iso((time_t)h.checked_at, ts, sizeof(ts));
		printf("indexed:  %-24s head %lld (chain %lld, final %lld, %lld reorg%s),"
		    " last pass %s\n", key, (long long)h.head, (long long)h.chain_head,
		    (long long)h.confirmed, (long long)h.reorgs, h.reorgs == 1 ? "" : "s", ts);
	}
	if (bp_worker_each_run(c->db, print_run, NULL) == -1)
		return 1;
	return bp_worker_each_lease(c->db, print_lease, NULL) == -1 ? 1 : 0;
}

int
main(int argc, char *argv[])
{
	struct ctx c = { NULL, NULL, NULL };
	const char *cfgpath = NULL;
	static const char *const commands[] = { "migrate", "status", "account", "key",
	    "webhook" };
	char err[512], shown[1024];
	int rc = 1, ai = 1;
	size_t i;

	bp_log_init("blockport");
	if (argc > 2 && strcmp(argv[1], "-c") == 0) {
		cfgpath = argv[2];
		ai = 3;
	}
	if (ai >= argc || strcmp(argv[ai], "-h") == 0 || strcmp(argv[ai], "--help") == 0 ||
	    strcmp(argv[ai], "help") == 0) {
		if (ai < argc) {
			fputs(usage_text, stdout);
			return 0;
		}
		return usage();
	}
	/* Before the config: a typo needs no config to be told apart. */
	for (i = 0; i < BP_NITEMS(commands); i++)
		if (strcmp(argv[ai], commands[i]) == 0)
			break;
	if (i == BP_NITEMS(commands)) {
		fprintf(stderr, "blockport: unknown command '%s'\n", argv[ai]);
		return usage();
	}
	if ((c.cfg = bp_config_load(cfgpath, err, sizeof(err))) == NULL) {
		fprintf(stderr, "blockport: config: %s\n", err);
		return 1;
	}
	if ((c.db = bp_db_open(c.cfg->database, strcmp(argv[ai], "migrate") == 0)) == NULL)
		goto out;
	if ((c.lim = bp_limits_open_config(c.cfg)) == NULL ||
	    bp_upstream_health_init(c.cfg) == -1 || bp_head_mark_init(c.cfg) == -1 ||
	    bp_metrics_init(c.cfg) == -1)
		goto out;
	if (strcmp(argv[ai], "migrate") == 0 && c.cfg->rpc_cache_file[0] != '\0') {
		struct bp_db *cache = bp_db_open(c.cfg->rpc_cache_file, 1);	/* docs/rpc.md */

		if (cache == NULL)
			goto out;
		printf("response cache %s at schema %d\n", c.cfg->rpc_cache_file,
		    bp_db_version(cache));
		bp_db_close(cache);
	}
	if (strcmp(argv[ai], "migrate") == 0) {
		printf("database %s at schema %d\n",
		    bp_db_display(c.cfg->database, shown, sizeof(shown)), bp_db_version(c.db));
		rc = 0;
	} else if (strcmp(argv[ai], "status") == 0)
		rc = cmd_status(&c);
	else if (strcmp(argv[ai], "account") == 0)
		rc = cmd_account(&c, argc - ai - 1, argv + ai + 1);
	else if (strcmp(argv[ai], "key") == 0)
		rc = cmd_key(&c, argc - ai - 1, argv + ai + 1);
	else if (strcmp(argv[ai], "webhook") == 0)
		rc = admin_webhook(c.cfg, c.db, argc - ai - 1, argv + ai + 1);
	else
		rc = usage();
out:
	bp_limits_close(c.lim);
	bp_db_close(c.db);
	bp_config_free(c.cfg);
	return rc;
}
