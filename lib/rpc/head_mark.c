/*
 * The shared high-water mark of network heads (lib/rpc/head_mark.h). Each slot holds a hash of
 * "chain.network" and one 64-bit word: the head in the high 56 bits, the upstream that set it in
 * the low 8, so both change together with one compare-and-swap.
 */
#include <sys/mman.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/util.h"
#include "head_mark.h"

#define NSLOTS		128	/* networks of the config, with room to spare */
#define PROBES		16
#define HEAD_MAX	((INT64_C(1) << 55) - 1)

struct slot {
	uint64_t	key;		/* a hash of chain.network, never 0; 0 = free */
	uint64_t	word;		/* (head + 1) << 8 | upstream; 0 = no head yet */
};
_Static_assert(offsetof(struct slot, key) == 0, "bp_slot_claim needs the key first");

struct bp_head_mark {
	struct slot	*slots;
	size_t		 maplen;
};

static int
mark_path(const struct bp_config *cfg, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s-heads", cfg->limits_file);

	return cfg->limits_file[0] == '\0' || n < 0 || (size_t)n >= len ? -1 : 0;
}

struct bp_head_mark *
bp_head_mark_open(const struct bp_config *cfg)
{
	char path[sizeof(cfg->limits_file) + 8];
	size_t len = NSLOTS * sizeof(struct slot);
	struct bp_head_mark *m;
	void *p;

	if (mark_path(cfg, path, sizeof(path)) == -1 || (p = bp_map_file(path, len)) == NULL)
		return NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		munmap(p, len);
		return NULL;
	}
	m->slots = p;
	m->maplen = len;
	return m;
}

void
bp_head_mark_close(struct bp_head_mark *m)
{
	if (m == NULL)
		return;
	munmap(m->slots, m->maplen);
	free(m);
}

int
bp_head_mark_init(const struct bp_config *cfg)
{
	struct bp_head_mark *m;

	if (cfg->limits_file[0] == '\0')
		return 0;
	if ((m = bp_head_mark_open(cfg)) == NULL)
		return -1;
	bp_head_mark_close(m);
	return 0;
}

/* net's slot (keyed by FNV-1a of chain "." network, never 0), claimed when it has none. */
static struct slot *
slot_for(struct bp_head_mark *m, const struct bp_network *net)
{
	uint64_t k = bp_fnv1a_str(bp_fnv1a_str(bp_fnv1a_str(BP_FNV1A_BASIS, net->chain), "."),
	    net->network);

	return bp_slot_claim(m->slots, sizeof(struct slot), NSLOTS, PROBES, k != 0 ? k : 1);
}

int64_t
bp_head_mark_see(struct bp_head_mark *m, const struct bp_network *net, int64_t head,
    unsigned upstream)
{
	struct slot *s;
	uint64_t cur, want;
	int64_t mark;

	if (m == NULL || head < 0 || head > HEAD_MAX || (s = slot_for(m, net)) == NULL)
		return head;
	if (upstream > 0xff)
		upstream = 0xff;
	want = ((uint64_t)head + 1) << 8 | upstream;
	cur = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
	for (;;) {
		mark = cur == 0 ? -1 : (int64_t)(cur >> 8) - 1;
		if (head < mark && (cur & 0xff) != upstream)
			return mark;
		if (head == mark)
			return head;
		if (__atomic_compare_exchange_n(&s->word, &cur, want, 0, __ATOMIC_ACQ_REL,
		    __ATOMIC_ACQUIRE))
			return head;
	}
}

int
bp_head_mark_owner(struct bp_head_mark *m, const struct bp_network *net)
{
	struct slot *s;
	uint64_t cur;

	if (m == NULL || (s = slot_for(m, net)) == NULL)
		return -1;
	cur = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
	return cur == 0 ? -1 : (int)(cur & 0xff);
}

int64_t
bp_head_mark_get(struct bp_head_mark *m, const struct bp_network *net)
{
	struct slot *s;
	uint64_t cur;

	if (m == NULL || (s = slot_for(m, net)) == NULL)
		return -1;
	cur = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
	return cur == 0 ? -1 : (int64_t)(cur >> 8) - 1;
}
