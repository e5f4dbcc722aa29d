/*
 * The shared high-water mark of network heads (lib/rpc/head_mark.h). Each slot holds a hash of
 * "chain.network" and one 64-bit word: the head in the high 56 bits, the upstream that set it in
 * the low 8, so both change together with one compare-and-swap.
 */
#include <sys/mman.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits_redis.h"
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

/*
 * With limits = redis://, the mark every head shares is the string "HEAD UPSTREAM" at
 * bp:hm:CHAIN.NETWORK, moved by one script with the file's rule; the file is this head's mark
 * while Redis does not answer (the same rule as the counters, docs/limits.md). A read of the
 * mark (the cache's finality, a cached eth_blockNumber) is kept RECENT_US per network, so a
 * batch of cached reads costs one round trip, not one an item; so is a report that leaves the
 * mark where it is (redis_mark).
 */
#define RECENT_US	INT64_C(100000)
#define NRECENT		16

static const char see_script[] =
"local head, up = tonumber(ARGV[1]), tonumber(ARGV[2])\n"
"local cur = redis.call('GET', KEYS[1])\n"
"if cur then\n"
"  local sp = string.find(cur, ' ')\n"
"  local mark, owner = tonumber(string.sub(cur, 1, sp - 1)), tonumber(string.sub(cur, sp + 1))\n"
"  if head < mark and owner ~= up then return { mark, owner } end\n"
"  if head == mark then return { mark, owner } end\n"
"end\n"
"redis.call('SET', KEYS[1], head .. ' ' .. up)\n"
"return { head, up }\n";

static const char get_script[] =
"local cur = redis.call('GET', KEYS[1])\n"
"if not cur then return { -1, -1 } end\n"
"local sp = string.find(cur, ' ')\n"
"return { tonumber(string.sub(cur, 1, sp - 1)), tonumber(string.sub(cur, sp + 1)) }\n";

struct bp_head_mark {
	struct slot	*slots;
	size_t		 maplen;
	struct bp_limits_redis *redis;	/* NULL: the file is the mark */
	struct {
		uint64_t	k;
		int64_t		mark;
		int		owner;
		int64_t		at;	/* bp_mono_us(); 0 = nothing */
	} recent[NRECENT];
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
	if (strncmp(cfg->limits_url, "redis://", 8) == 0) {
		if ((m->redis = bp_limits_redis_new(cfg->limits_url)) == NULL) {
			bp_head_mark_close(m);
			return NULL;
		}
		bp_limits_redis_fallback(m->redis, "eth_blockNumber keeps to this head's own mark");
	}
	return m;
}

void
bp_head_mark_close(struct bp_head_mark *m)
{
	if (m == NULL)
		return;
	munmap(m->slots, m->maplen);
	bp_limits_redis_free(m->redis);
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

/* net's key: FNV-1a of chain "." network, never 0. */
static uint64_t
net_key(const struct bp_network *net)
{
	uint64_t k = bp_fnv1a_str(bp_fnv1a_str(bp_fnv1a_str(BP_FNV1A_BASIS, net->chain), "."),
	    net->network);

	return k != 0 ? k : 1;
}

/* net's slot, claimed when it has none. */
static struct slot *
slot_for(struct bp_head_mark *m, const struct bp_network *net)
{
	return bp_slot_claim(m->slots, sizeof(struct slot), NSLOTS, PROBES, net_key(net));
}

/*
 * The mark in Redis: see_script with head and upstream, or get_script (head < 0), or a recent
 * read. 0 with the mark (-1: none) and its owner, or -1 when Redis did not answer.
 */
static int
redis_mark(struct bp_head_mark *m, const struct bp_network *net, int64_t head,
    unsigned upstream, int64_t *mark, int *owner)
{
	uint64_t k = net_key(net);
	size_t i = (size_t)(k % NRECENT);
	char key[2 * BP_NAME_MAX + 8], h[24], u[16];
	const char *argv[3] = { key, h, u };
	int64_t now = bp_mono_us(), out[2];

	/*
	 * A recent read answers a read, and a report that would not move the mark either: the
	 * head it already is, or one below it from another upstream (see_script's rule). So
	 * eth_blockNumber costs a round trip once a block and head, not once a request, on top
	 * of the admission's.
	 */
	if (m->recent[i].k == k && now - m->recent[i].at < RECENT_US && (head < 0 ||
	    head == m->recent[i].mark || (head < m->recent[i].mark &&
	    m->recent[i].owner != (int)upstream))) {
		*mark = m->recent[i].mark;
		*owner = m->recent[i].owner;
		return 0;
	}
	snprintf(key, sizeof(key), "bp:hm:%s.%s", net->chain, net->network);
	snprintf(h, sizeof(h), "%lld", (long long)head);
	snprintf(u, sizeof(u), "%u", upstream);
	if (bp_limits_redis_eval(m->redis, head < 0 ? get_script : see_script, 1, head < 0 ? 1 : 3,
	    argv, out, 2) != 2)
		return -1;
	*mark = out[0];
	*owner = (int)out[1];
	m->recent[i].k = k;
	m->recent[i].mark = *mark;
	m->recent[i].owner = *owner;
	m->recent[i].at = now;
	return 0;
}

/* The file's mark: bp_head_mark_see's rule on this head's slot (upstream at most 0xff). */
static int64_t
file_see(struct bp_head_mark *m, const struct bp_network *net, int64_t head, unsigned upstream)
{
	struct slot *s;
	uint64_t cur, want;
	int64_t mark;

	if ((s = slot_for(m, net)) == NULL)
		return head;
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

int64_t
bp_head_mark_see(struct bp_head_mark *m, const struct bp_network *net, int64_t head,
    unsigned upstream)
{
	int64_t h, mark;
	int owner;

	if (m == NULL || head < 0 || head > HEAD_MAX)
		return head;
	if (upstream > 0xff)
		upstream = 0xff;
	/* The file moves too, so that it is warm the moment Redis stops answering. */
	h = file_see(m, net, head, upstream);
	if (m->redis != NULL && redis_mark(m, net, head, upstream, &mark, &owner) == 0)
		return mark;
	return h;
}

int
bp_head_mark_owner(struct bp_head_mark *m, const struct bp_network *net)
{
	struct slot *s;
	uint64_t cur;
	int64_t mark;
	int owner;

	if (m != NULL && m->redis != NULL && redis_mark(m, net, -1, 0, &mark, &owner) == 0)
		return owner;
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
	int64_t mark;
	int owner;

	if (m != NULL && m->redis != NULL && redis_mark(m, net, -1, 0, &mark, &owner) == 0)
		return mark;
	if (m == NULL || (s = slot_for(m, net)) == NULL)
		return -1;
	cur = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
	return cur == 0 ? -1 : (int64_t)(cur >> 8) - 1;
}
