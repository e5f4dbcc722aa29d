/*
 * The head follower of the WebSocket program (lib/ws/ws_follow.c; docs/websocket.md): new blocks of
 * one network read from the chain index (index_blocks, written by cron/indexer), never from the
 * node, so every connection shares one upstream follower (the indexer) whatever their number.
 * Heads are delivered in order without gaps; when the index's chain no longer holds a head that
 * was delivered (a reorg), the orphaned heads are reported, newest first, and the new branch's
 * heads follow from the common ancestor on. A connection woken by the indexer reads the heads
 * feed first (lib/index/index_feed.h), SQLite only for what the feed cannot continue.
 */
#ifndef BP_WS_FOLLOW_H
#define BP_WS_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "index/index_feed.h"
#include "index/index_read.h"

struct bp_buf;
struct bp_db;

#define BP_WS_FOLLOW_RING	128	/* delivered hashes kept: the deepest reorg followed */

/* What a poll reports, through the caller's functions (each returns 0, or -1 to stop). */
struct bp_ws_follow_fns {
	int	(*removed)(int64_t number, const char *hash, void *arg);
	int	(*head)(const struct bp_index_block_head *, void *arg);
};

/* A follower: a plain struct, one per connection. */
struct bp_ws_follow {
	char		chain[BP_INDEX_CHAIN_MAX];	/* "CHAIN.NETWORK" */
	int64_t		last;		/* last number delivered (-1: none yet) */
	int64_t		version;	/* PRAGMA data_version at the last read; -1: none */
	struct bp_index_feed_seen feed;	/* the heads feed as last read (bp_ws_follow_feed) */
	struct {
		int64_t	number;
		char	hash[BP_INDEX_HASH_STR];
	} sent[BP_WS_FOLLOW_RING];
};

/*
 * Starts f at the index's head of chain: the next poll reports blocks after it. Returns 0, or -1
 * on a database error. A chain not indexed yet starts from its first stored block.
 */
int		 bp_ws_follow_start(struct bp_ws_follow *f, struct bp_db *, const char *chain);

/*
 * Reports what the index gained since the last poll (nothing, cheaply, when the database has not
 * changed). Returns the number of heads reported, or -1 on a database error or when a function
 * asked to stop.
 */
int		 bp_ws_follow_poll(struct bp_ws_follow *f, struct bp_db *,
		    const struct bp_ws_follow_fns *fns, void *arg);

/*
 * Reports the heads feed's heads (lib/index/index_feed.h) after f->last through fns->head, as
 * bp_ws_follow_poll would, reading the file at path into buf (the caller's, reused; room for
 * BP_INDEX_FEED_MAX + 1 bytes) when it changed since the last read. Returns the number
 * reported; -2 when the feed cannot continue what f delivered (missing or malformed file, a
 * gap, a delivered head no longer in it): poll SQLite with bp_ws_follow_poll then; -1 when
 * fns->head asked to stop.
 */
int		 bp_ws_follow_feed(struct bp_ws_follow *f, const char *path, struct bp_buf *buf,
		    const struct bp_ws_follow_fns *fns, void *arg);

#endif
