/*
 * The head follower of the WebSocket program (ws_follow.h): index_blocks read in number order,
 * each new row checked to continue what was delivered (its parentHash is the delivered hash of
 * the number before), a reorg walked back through the delivered hashes to the common ancestor.
 * A poll first asks SQLite whether any connection has written since the last one (PRAGMA
 * data_version, answered from the shared memory of the WAL without reading a page), so a
 * thousand idle followers cost a thousand cheap checks per poll interval. The heads feed
 * (lib/index/index_feed.h) is continued with the same checks, without SQLite.
 */
#include <string.h>

#include "core/db.h"
#include "core/util.h"
#include "index/index_feed.h"
#include "index/index_read.h"
#include "ws_follow.h"

/* The hash delivered for number, or NULL when the ring no longer holds it. */
static const char *
sent_hash(const struct bp_ws_follow *f, int64_t number)
{
	size_t i;

	if (number < 0)
		return NULL;
	i = (size_t)(number % BP_WS_FOLLOW_RING);
	return f->sent[i].number == number ? f->sent[i].hash : NULL;
}

static void
remember(struct bp_ws_follow *f, int64_t number, const char *hash)
{
	size_t i = (size_t)(number % BP_WS_FOLLOW_RING);

	f->sent[i].number = number;
	bp_strlcpy(f->sent[i].hash, hash, sizeof(f->sent[i].hash));
}

int
bp_ws_follow_start(struct bp_ws_follow *f, struct bp_db *db, const char *chain)
{
	struct bp_index_head h;
	size_t i;
	int rc;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < BP_WS_FOLLOW_RING; i++)
		f->sent[i].number = -1;
	f->version = -1;
	f->last = -1;
	if (bp_strlcpy(f->chain, chain, sizeof(f->chain)) == -1)
		return -1;
	if ((rc = bp_index_get_head(db, chain, &h)) == -1)
		return -1;
	if (rc == 1 && h.head >= 0) {
		f->last = h.head;
		remember(f, h.head, h.head_hash);
	}
	return 0;
}

/*
 * The delivered heads above the common ancestor with the stored chain are reported removed,
 * newest first; f->last becomes the ancestor. 0, or -1.
 */
static int
walk_back(struct bp_ws_follow *f, struct bp_db *db, const struct bp_ws_follow_fns *fns,
    void *arg)
{
	char hash[BP_INDEX_HASH_STR];
	const char *mine;
	int64_t n;
	int rc;

	for (n = f->last; n >= 0 && (mine = sent_hash(f, n)) != NULL; n--) {
		if ((rc = bp_index_block_hash(db, f->chain, n, hash, sizeof(hash))) == -1)
			return -1;
		if (rc == 1 && strcmp(hash, mine) == 0)
			break;
		if (fns->removed != NULL && fns->removed(n, mine, arg) == -1)
			return -1;
	}
	f->last = n;
	return 0;
}

/* A batch or a feed being reported: what the rows' function needs and what it found. */
struct report {
	struct bp_ws_follow		*f;
	const struct bp_ws_follow_fns	*fns;
	void				*arg;
	int				 n;	/* heads delivered */
	int				 rc;	/* 0; -2: a gap or a reorg; -1: fns->head stopped */
};

/*
 * Delivers h (a struct report at arg) when it continues what was delivered; else notes why not
 * (rc) and stops.
 */
static int
deliver(const struct bp_index_block_head *h, void *arg)
{
	struct report *r = arg;
	struct bp_ws_follow *f = r->f;
	const char *prev = sent_hash(f, h->number - 1);

	if (h->number != f->last + 1 || (prev != NULL && strcmp(prev, h->parent_hash) != 0)) {
		r->rc = -2;
		return 1;
	}
	if (r->fns->head != NULL && r->fns->head(h, r->arg) == -1) {
		r->rc = -1;
		return 1;
	}
	remember(f, h->number, h->hash);
	f->last = h->number;
	r->n++;
	return 0;
}

/* One batch of rows after f->last. Returns rows delivered, -2 on a reorg (walk back), -1. */
static int
read_batch(struct bp_ws_follow *f, struct bp_db *db, const struct bp_ws_follow_fns *fns,
    void *arg)
{
	struct report r = { f, fns, arg, 0, 0 };

	if (bp_index_heads_after(db, f->chain, f->last, deliver, &r) == -1)
		return -1;
	return r.rc < 0 ? r.rc : r.n;
}

int
bp_ws_follow_poll(struct bp_ws_follow *f, struct bp_db *db, const struct bp_ws_follow_fns *fns,
    void *arg)
{
	char hash[BP_INDEX_HASH_STR];
	const char *mine;
	int64_t v;
	int total = 0, n, rc, reorgs = 0;

	if ((v = bp_db_data_version(db)) == -1)
		return -1;
	if (v == f->version)
		return 0;
	f->version = v;
	/* The last delivered head replaced in place (a reorg to a chain no longer than ours). */
	if ((mine = sent_hash(f, f->last)) != NULL) {
		if ((rc = bp_index_block_hash(db, f->chain, f->last, hash, sizeof(hash))) == -1)
			return -1;
		if (rc == 1 && strcmp(hash, mine) != 0 && walk_back(f, db, fns, arg) == -1)
			return -1;
	}
	for (;;) {
		if ((n = read_batch(f, db, fns, arg)) == -1)
			return -1;
		if (n == -2) {
			/* Bounded: each walk back ends at an ancestor or below the ring. */
			if (++reorgs > BP_WS_FOLLOW_RING || walk_back(f, db, fns, arg) == -1)
				return -1;
			continue;
		}
		total += n;
		if (n < BP_INDEX_HEADS_BATCH)
			break;
	}
	return total;
}

/* A feed line: the heads delivered must still be the feed's (else a reorg), the rest follow. */
static int
feed_row(const struct bp_index_block_head *h, void *arg)
{
	struct report *r = arg;
	const char *mine;

	if (h->number > r->f->last)
		return deliver(h, r);	/* a gap (this reader is behind the feed) or a reorg: -2 */
	if ((mine = sent_hash(r->f, h->number)) != NULL && strcmp(mine, h->hash) != 0) {
		r->rc = -2;
		return 1;
	}
	return 0;
}

int
bp_ws_follow_feed(struct bp_ws_follow *f, const char *path, struct bp_buf *buf,
    const struct bp_ws_follow_fns *fns, void *arg)
{
	struct report r = { f, fns, arg, 0, 0 };

	if (bp_index_feed_read(path, &f->feed, buf, feed_row, &r) == -1)
		return -2;
	return r.rc < 0 ? r.rc : r.n;
}
