/*
 * The policy cache (policy_cache.h): SLOTS slots, one a policy id's hash; a new copy takes its
 * slot's place. Copies (bp_policy_copy: the lists' used entries) are made in and out under
 * the lock, so a thread never reads one another thread writes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "policy_cache.h"

#define SLOTS	64

struct slot {
	int		 used;
	int64_t		 account_id;
	uint64_t	 gen;		/* the generation it was read under */
	struct bp_policy p;
};

struct bp_policy_cache {
	pthread_mutex_t	 mu;
	struct slot	 slot[SLOTS];
};

struct bp_policy_cache *
bp_policy_cache_new(void)
{
	struct bp_policy_cache *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if (pthread_mutex_init(&c->mu, NULL) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

void
bp_policy_cache_free(struct bp_policy_cache *c)
{
	if (c == NULL)
		return;
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static struct slot *
slot_of(struct bp_policy_cache *c, const char *id)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *id != '\0'; id++)
		h = (h ^ (unsigned char)*id) * 16777619u;
	return &c->slot[h % SLOTS];
}

/* Keeps p, read under gen, as account's copy when it is active, else drops the copy of its id. */
static void
keep(struct bp_policy_cache *c, int64_t account_id, const char *id, uint64_t gen,
    const struct bp_policy *p)
{
	struct slot *s = slot_of(c, id);

	pthread_mutex_lock(&c->mu);
	if (p != NULL && p->status == BP_POLICY_ACTIVE) {
		s->used = 1;
		s->account_id = account_id;
		s->gen = gen;
		bp_policy_copy(&s->p, p);
	} else if (s->used && strcmp(s->p.id, id) == 0)
		s->used = 0;
	pthread_mutex_unlock(&c->mu);
}

int
bp_policy_cache_find(struct bp_policy_cache *c, struct bp_db *db, const struct bp_key *key,
    const char *id, uint64_t gen, struct bp_policy *out, char *why, size_t cap)
{
	struct slot *s;
	int found, hit;

	if (c == NULL)
		return bp_policy_find(db, key, id, out, why, cap);
	s = slot_of(c, id);
	pthread_mutex_lock(&c->mu);
	hit = s->used && s->gen == gen && s->account_id == key->account_id &&
	    strcmp(s->p.id, id) == 0 && s->p.testnet == key->test;
	if (hit)
		bp_policy_copy(out, &s->p);
	pthread_mutex_unlock(&c->mu);
	if (hit)
		return 1;
	/* Not here, or of the other kind: read, so the answer (and a refusal's words) is its. */
	if ((found = bp_policy_find(db, key, id, out, why, cap)) == 1)
		keep(c, key->account_id, id, gen, out);
	return found;
}

int
bp_policy_cache_reread(struct bp_policy_cache *c, struct bp_db *db, int64_t account_id,
    const char *id, struct bp_policy *out)
{
	int found = bp_policy_get(db, account_id, id, out);

	/* The generation it was read under is not known here: the next find reads it again. */
	if (c != NULL && found != -1)
		keep(c, account_id, id, 0, NULL);
	return found;
}
