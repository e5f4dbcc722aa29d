#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>

#include "limits.h"
#include "log.h"

#define LIMITS_MAGIC	UINT64_C(0x42504c494d495431)	/* "BPLIMIT1" */
#define NSLOTS		65536u				/* power of two */
#define PROBES		64
#define COUNT40		((UINT64_C(1) << 40) - 1)

/*
 * One slot: the owner and three packed counters. sec_req and sec_cu hold (second << 32 | count);
 * day_req holds (day << 40 | count). A counter whose second or day is not the current one reads
 * as zero, so nothing ever has to be reset.
 */
struct slot {
	uint64_t	who;
	uint64_t	sec_req;
	uint64_t	sec_cu;
	uint64_t	day_req;
};

struct header {
	uint64_t	magic;
	uint64_t	nslots;
	uint64_t	generation;
	uint64_t	pad[5];
};

struct bp_limits {
	struct header	*hdr;
	struct slot	*slots;
	size_t		 maplen;
};

struct bp_limits *
bp_limits_open(const char *path)
{
	size_t len = sizeof(struct header) + NSLOTS * sizeof(struct slot);
	struct bp_limits *l = NULL;
	struct stat sb;
	void *p;
	int fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0660)) == -1) {
		bp_err("%s: %s: %s", __func__, path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) == -1 || ((size_t)sb.st_size < len && ftruncate(fd, (off_t)len) == -1)) {
		bp_err("%s: %s: %s", __func__, path, strerror(errno));
		close(fd);
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		bp_err("%s: mmap %s: %s", __func__, path, strerror(errno));
		return NULL;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		munmap(p, len);
		return NULL;
	}
	l->hdr = p;
	l->slots = (struct slot *)((char *)p + sizeof(struct header));
	l->maplen = len;
	{
		uint64_t zero = 0;

		/* The first process to map a new file stamps it; a zero-filled file is valid. */
		__atomic_compare_exchange_n(&l->hdr->magic, &zero, LIMITS_MAGIC, 0,
		    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		__atomic_store_n(&l->hdr->nslots, NSLOTS, __ATOMIC_RELAXED);
	}
	if (__atomic_load_n(&l->hdr->magic, __ATOMIC_SEQ_CST) != LIMITS_MAGIC) {
		bp_err("%s: %s is not a Blockport limits file", __func__, path);
		bp_limits_close(l);
		return NULL;
	}
	return l;
}

void
bp_limits_close(struct bp_limits *l)
{
	if (l == NULL)
		return;
	munmap(l->hdr, l->maplen);
	free(l);
}

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

uint64_t
bp_limits_addr_id(const char *addr)
{
	uint64_t h = UINT64_C(1469598103934665603);

	for (; *addr != '\0'; addr++)
		h = (h ^ (unsigned char)*addr) * UINT64_C(1099511628211);
	return h | (UINT64_C(1) << 63);	/* key ids never have the top bit */
}

/*
 * Whether nothing has counted in s since before yesterday. All three counters are looked at: a
 * client address, for one, counts only requests per second, never a day, and its slot must not
 * look idle while it is in use.
 */
static int
slot_idle(struct slot *s, uint64_t day)
{
	uint64_t sec = __atomic_load_n(&s->sec_req, __ATOMIC_RELAXED) >> 32;
	uint64_t cu = __atomic_load_n(&s->sec_cu, __ATOMIC_RELAXED) >> 32;
	uint64_t d = __atomic_load_n(&s->day_req, __ATOMIC_RELAXED) >> 40;

	if (cu > sec)
		sec = cu;
	return d + 1 < day && sec / 86400 + 1 < day;
}

/*
 * Finds or claims the slot of who. A slot idle since before yesterday may be taken over; if two
 * processes race for it, both count in it for a moment, which only errs on the strict side.
 * NULL when the probe sequence is full (the caller fails open).
 */
static struct slot *
find_slot(struct bp_limits *l, uint64_t who, uint64_t day)
{
	size_t i, idx = (size_t)(mix64(who) & (NSLOTS - 1));

	for (i = 0; i < PROBES; i++) {
		struct slot *s = &l->slots[(idx + i) & (NSLOTS - 1)];
		uint64_t cur = __atomic_load_n(&s->who, __ATOMIC_ACQUIRE);

		if (cur == who)
			return s;
		if (cur == 0) {
			if (__atomic_compare_exchange_n(&s->who, &cur, who, 0,
			    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) || cur == who)
				return s;
			continue;
		}
		if (slot_idle(s, day) && __atomic_compare_exchange_n(&s->who, &cur, who, 0,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return s;
	}
	return NULL;
}

/* Adds n to a packed (period << shift | count) word if the result stays within max. */
static int
add_packed(uint64_t *w, uint64_t period, unsigned shift, uint64_t n, int64_t max,
    uint64_t *after)
{
	uint64_t mask = (UINT64_C(1) << shift) - 1;
	uint64_t cur = __atomic_load_n(w, __ATOMIC_RELAXED), next, count;

	do {
		count = (cur >> shift) == period ? (cur & mask) : 0;
		if (max > 0 && count + n > (uint64_t)max) {
			*after = count;
			return -1;
		}
		if (count + n > mask)
			count = mask - n;	/* unlimited plans saturate instead of wrapping */
		next = (period << shift) | (count + n);
	} while (!__atomic_compare_exchange_n(w, &cur, next, 1, __ATOMIC_ACQ_REL,
	    __ATOMIC_RELAXED));
	*after = count + n;
	return 0;
}

enum bp_limit_verdict
bp_limits_take(struct bp_limits *l, uint64_t who, const struct bp_limit_plan *plan,
    unsigned nreq, unsigned nday, unsigned cu, struct bp_limit_state *st)
{
	uint64_t now = (uint64_t)time(NULL), day = now / 86400, after = 0;
	struct slot *s;

	st->limit = plan->rps;
	st->reset = (int64_t)now + 1;
	st->remaining = plan->rps;
	st->retry_after = 0;
	if ((s = find_slot(l, who, day)) == NULL) {
		bp_warn("%s: counters file full around slot of %llx; not limiting", __func__,
		    (unsigned long long)who);
		return BP_LIMIT_OK;
	}
	if (nreq > 0 && add_packed(&s->sec_req, now, 32, nreq, plan->rps, &after) == -1) {
		st->remaining = 0;
		st->retry_after = 1;
		return BP_LIMIT_RPS;
	}
	if (plan->rps > 0)
		st->remaining = plan->rps > (int64_t)after ? plan->rps - (int64_t)after : 0;
	if (nday > 0 && add_packed(&s->day_req, day, 40, nday, plan->rpd, &after) == -1) {
		st->retry_after = (int64_t)((day + 1) * 86400 - now);
		return BP_LIMIT_RPD;
	}
	if (cu > 0 && add_packed(&s->sec_cu, now, 32, cu, plan->cups, &after) == -1) {
		st->retry_after = 1;
		return BP_LIMIT_CUPS;
	}
	return BP_LIMIT_OK;
}

uint64_t
bp_limits_generation(struct bp_limits *l)
{
	return __atomic_load_n(&l->hdr->generation, __ATOMIC_ACQUIRE);
}

void
bp_limits_bump_generation(struct bp_limits *l)
{
	__atomic_add_fetch(&l->hdr->generation, 1, __ATOMIC_ACQ_REL);
}
