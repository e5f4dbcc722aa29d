/*
 * A process's copies of the active policies its sponsorships use, shared by its threads. The
 * policy's read was an eighth of a sponsorship's CPU: one SELECT, but after every commit of
 * another connection SQLite reads its pages again. A copy may be behind the table (paused,
 * deleted or changed in another process): bp_policy_record checks, in the transaction that
 * records the sponsorship, that the policy is still active with the same rules, and answers
 * BP_POLICY_CHANGED otherwise; bp_policy_cache_reread then reads it again (lib/gas/sponsor.c).
 * That check cannot see a copy stricter than the table (a rule loosened since refuses under
 * the old one before any record), so each copy also holds the key generation it was read
 * under (bp_limits_generation, which a policy's change bumps for every process and head) and
 * is used only while the generation is the same.
 */
#ifndef BP_POLICY_CACHE_H
#define BP_POLICY_CACHE_H

#include <stdint.h>

#include "policy.h"

struct bp_policy_cache;

/* Made by the program's init, freed at its end; NULL when out of memory. */
struct bp_policy_cache	*bp_policy_cache_new(void);
void			 bp_policy_cache_free(struct bp_policy_cache *);

/*
 * bp_policy_find, answered from the copy when there is an active one of the key's account and
 * kind read under generation gen (a NULL cache always reads). Returns as bp_policy_find.
 */
int	bp_policy_cache_find(struct bp_policy_cache *, struct bp_db *, const struct bp_key *key,
	    const char *id, uint64_t gen, struct bp_policy *out, char *why, size_t cap);

/* bp_policy_get, dropping the copy (the next find reads it again). Returns as bp_policy_get. */
int	bp_policy_cache_reread(struct bp_policy_cache *, struct bp_db *, int64_t account_id,
	    const char *id, struct bp_policy *out);

#endif
