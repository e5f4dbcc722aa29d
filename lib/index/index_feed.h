/*
 * The heads feed (docs/websocket.md, "One follower for all connections"): after each pass that
 * stored blocks the indexer (cron/indexer.c) writes the newest BP_INDEX_FEED_HEADS heads of a
 * network to DATABASE.heads.CHAIN.NETWORK (replaced whole, by a rename), one line a head:
 * "NUMBER HASH PARENTHASH RESULT", RESULT the newHeads result (bp_index_feed_result) on one
 * line. The WebSocket connections that are woken read the file instead of SQLite
 * (lib/ws/ws_follow.c); whatever the feed cannot continue goes back to the index's tables.
 */
#ifndef BP_INDEX_FEED_H
#define BP_INDEX_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "index_read.h"

struct bp_buf;
struct bp_config;
struct bp_db;

#define BP_INDEX_FEED_HEADS	8
#define BP_INDEX_FEED_MAX	(1024 * 1024)	/* the feed's size cap, bytes */

/* The feed as a reader last read it (a stat's inode, time and size): unchanged, not read again. */
struct bp_index_feed_seen {
	uint64_t	ino;
	int64_t		mtime_ns;
	int64_t		size;
};

/*
 * The feed's path for chain into out, a head's own file (bp_config_state_path: beside a SQLite
 * database unless state_dir says otherwise); 0, or -1 when it does not fit.
 */
int		 bp_index_feed_path(const struct bp_config *, const char *chain, char *out,
		    size_t cap);

/* Writes chain's feed at path from the index (the indexer, after its commit). 0, or -1. */
int		 bp_index_feed_write(struct bp_db *, const char *chain, const char *path);

/*
 * Reads the feed at path into buf (the caller's, reused; room for BP_INDEX_FEED_MAX + 1 bytes)
 * when it changed since *seen, and calls fn for each of its heads, oldest first, h->header the
 * newHeads result and only number, hash and parent_hash set besides; fn returns 0 to go on,
 * non-zero to stop. Returns 0 when the feed has not changed (nothing called), 1 when it was
 * read (to its end or until fn stopped), -1 when it is missing or malformed (after the heads
 * before the bad line).
 */
int		 bp_index_feed_read(const char *path, struct bp_index_feed_seen *seen,
		    struct bp_buf *buf, int (*fn)(const struct bp_index_block_head *, void *),
		    void *arg);

/*
 * Writes head h as a newHeads result object, every figure a hex quantity:
 * {"number":..,"hash":..,"parentHash":..,"timestamp":..,"gasUsed":..,"gasLimit":..,
 * "baseFeePerGas":..} (baseFeePerGas left out before London). 0, or -1 when out isn't big enough.
 */
int		 bp_index_feed_head_json(const struct bp_index_block_head *h, char *out,
		    size_t cap);

/*
 * The newHeads result of h: the node's header as stored (every field the node gives but the
 * transactions), or, when the store kept none (a block outside the window, a header over
 * BP_INDEX_HEADERS_MAX, rows older than migration 011), bp_index_feed_head_json written into out.
 * NULL when that does not fit.
 */
const char	*bp_index_feed_result(const struct bp_index_block_head *h, char *out, size_t cap);

#endif
