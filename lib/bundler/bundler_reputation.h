/*
 * ERC-7562's reputation of the entities a bundler serves (factories, paymasters, aggregators)
 * per network, in the database (schema/021_bundler_reputation.sql; docs/bundler.md): opsSeen
 * counts their ops accepted into the pool, opsIncluded their ops mined; both lose 1/24 each
 * hour. An entity is ok, throttled or banned by how far its inclusions fall behind one in
 * MIN_INCLUSION_RATE_DENOMINATOR of what it was seen in; the pool takes a bounded number of its
 * ops by that status and its stake. Also the network's bundling mode (auto or manual), which the
 * debug_bundler_* methods set. This module owns bundler_reputation and bundler_modes.
 */
#ifndef BP_BUNDLER_REPUTATION_H
#define BP_BUNDLER_REPUTATION_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct bp_db;

/* ERC-7562's constants (a bundler's, not a client's). */
#define BP_BUNDLER_REPUTATION_MIN_INCLUSION_DENOMINATOR	10
#define BP_BUNDLER_REPUTATION_THROTTLING_SLACK		10
#define BP_BUNDLER_REPUTATION_BAN_SLACK			50
#define BP_BUNDLER_REPUTATION_SAME_UNSTAKED_ENTITY_MEMPOOL_COUNT	10
#define BP_BUNDLER_REPUTATION_THROTTLED_ENTITY_MEMPOOL_COUNT	4
#define BP_BUNDLER_REPUTATION_INCLUSION_RATE_FACTOR		10
#define BP_BUNDLER_REPUTATION_DECAY_DIVISOR		24	/* each hour, 1/24 of each count goes */
#define BP_BUNDLER_REPUTATION_CRASH_SEEN		10000	/* opsSeen of an entity whose op broke a bundle */

enum bp_bundler_reputation_status {
	BP_BUNDLER_REPUTATION_OK,		/* 0 */
	BP_BUNDLER_REPUTATION_THROTTLED,	/* 1 */
	BP_BUNDLER_REPUTATION_BANNED,		/* 2 */
	BP_BUNDLER_REPUTATION__MAX
};

struct bp_bundler_reputation_entry {
	char		address[43];		/* lower-case 0x hex */
	int64_t		ops_seen;
	int64_t		ops_included;
	enum bp_bundler_reputation_status status;
};

/* "ok", "throttled", "banned". */
const char	*bp_bundler_reputation_status_name(enum bp_bundler_reputation_status);

/* The status of counts (ERC-7562's formula). */
enum bp_bundler_reputation_status bp_bundler_reputation_status_of(int64_t seen, int64_t included);

/* The counts after hours of hourly decay. */
void		 bp_bundler_reputation_decay(int64_t *seen, int64_t *included, int64_t hours);

/*
 * The ops of an entity with entry e the pool may hold at once: 0 for no bound (a staked entity
 * in good standing), -1 for none (banned), else THROTTLED_ENTITY_MEMPOOL_COUNT (throttled) or
 * SAME_UNSTAKED_ENTITY_MEMPOOL_COUNT raised by its inclusions (unstaked).
 */
int		 bp_bundler_reputation_cap(const struct bp_bundler_reputation_entry *e, int staked);

/* Reads the entity's entry on chain at now (decayed; zero counts when none). 0 or -1. */
int		 bp_bundler_reputation_get(struct bp_db *, const char *chain, const char *address,
		    int64_t now, struct bp_bundler_reputation_entry *out);

/* Adds seen and included to the counts of address (after decay), in one transaction. 0 or -1. */
int		 bp_bundler_reputation_add(struct bp_db *, const char *chain, const char *address,
		    int64_t seen, int64_t included, int64_t now);

/* Sets the counts of address (debug_bundler_setReputation, or a ban). 0 or -1. */
int		 bp_bundler_reputation_set(struct bp_db *, const char *chain, const char *address,
		    int64_t seen, int64_t included, int64_t now);

/* Bans the entity whose op failed a bundle's re-check (ERC-7562: opsSeen 10000, none included). */
int		 bp_bundler_reputation_crashed(struct bp_db *, const char *chain, const char *address,
		    int64_t now);

/*
 * Counts the inclusions a bundle receipt's logs show (untrusted JSON): the paymaster of each
 * UserOperationEvent and the factory of each AccountDeployed of the entry point ep (lower-case
 * 0x hex). 0 or -1.
 */
int		 bp_bundler_reputation_included_logs(struct bp_db *, const char *chain, const char *ep,
		    const cJSON *logs, int64_t now);

/* Calls fn for each entry of chain (decayed to now), by address; the count or -1. */
int		 bp_bundler_reputation_each(struct bp_db *, const char *chain, int64_t now,
		    int (*fn)(const struct bp_bundler_reputation_entry *, void *), void *arg);

/* Forgets every entry of chain. 0 or -1. */
int		 bp_bundler_reputation_clear(struct bp_db *, const char *chain);

/* 1 when chain bundles only on debug_bundler_sendBundleNow, 0 automatically, -1 on error. */
int		 bp_bundler_reputation_manual(struct bp_db *, const char *chain);

/* Sets chain's bundling mode (manual or not). 0 or -1. */
int		 bp_bundler_reputation_set_manual(struct bp_db *, const char *chain, int manual);

#endif
