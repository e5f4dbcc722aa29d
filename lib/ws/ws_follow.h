/*
 * The head follower of the WebSocket program (lib/ws/ws_follow.c; docs/websocket.md): new blocks of
 * one network read from the chain index (index_blocks, written by cron/indexer), never from the
 * node, so every connection shares one upstream follower (the indexer) whatever their number.
 * Heads are delivered in order without gaps; when the index's chain no longer holds a head that
 * was delivered (a reorg), the orphaned heads are reported, newest first, and the new branch's
 * heads follow from the common ancestor on.
 */
#ifndef BP_WS_FOLLOW_H
#define BP_WS_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "index/index_read.h"

struct bp_buf;
struct bp_db;

#define BP_WS_FOLLOW_RING	128	/* delivered hashes kept: the deepest reorg followed */
#define BP_WS_FOLLOW_BATCH	64	/* heads read per query */

/* One head as the index holds it. */
struct bp_ws_head {
	int64_t		number;
	char		hash[BP_INDEX_HASH_STR];
	char		parent_hash[BP_INDEX_HASH_STR];
	int64_t		timestamp;
	int64_t		gas_used;
	int64_t		gas_limit;
	char		base_fee[80];		/* wei, decimal; "" before London */
	const char	*header;	/* the node's header JSON (index_headers.h), valid during the
					   callback; NULL when the store did not keep it */
};

/* What a poll reports, through the caller's functions (each returns 0, or -1 to stop). */
struct bp_ws_follow_fns {
	int	(*removed)(int64_t number, const char *hash, void *arg);
	int	(*head)(const struct bp_ws_head *, void *arg);
};

/* A follower: a plain struct, one per connection. */
struct bp_ws_follow {
	char		chain[BP_INDEX_CHAIN_MAX];	/* "CHAIN.NETWORK" */
	int64_t		last;		/* last number delivered (-1: none yet) */
	int64_t		version;	/* PRAGMA data_version at the last read; -1: none */
	/* The heads feed as last read (bp_ws_feed_poll): unchanged, it is not read again. */
	uint64_t	feed_ino;
	int64_t		feed_mtime_ns;
	int64_t		feed_size;
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
 * Writes head h as a newHeads result object, every figure a hex quantity:
 * {"number":..,"hash":..,"parentHash":..,"timestamp":..,"gasUsed":..,"gasLimit":..,
 * "baseFeePerGas":..} (baseFeePerGas left out before London). 0, or -1 when out isn't big enough.
 */
int		 bp_ws_head_json(const struct bp_ws_head *h, char *out, size_t cap);

/*
 * The newHeads result of h: the node's header as stored (every field the node gives but the
 * transactions), or, when the store kept none (a block outside the window, a header over
 * BP_HEADERS_MAX, rows older than migration 011), bp_ws_head_json written into out. NULL when
 * that does not fit.
 */
const char	*bp_ws_head_result(const struct bp_ws_head *h, char *out, size_t cap);

/*
 * The heads feed: after each pass that stored blocks the indexer writes the newest
 * BP_WS_FEED_HEADS heads of a network to DATABASE.heads.CHAIN.NETWORK (replaced whole, by a
 * rename), one line a head: "NUMBER HASH PARENTHASH RESULT", RESULT the newHeads result
 * (bp_ws_head_result) on one line. A connection that is woken reads the file instead of SQLite;
 * whatever the feed cannot continue (a gap, a reorg) goes back to bp_ws_follow_poll.
 */
#define BP_WS_FEED_HEADS	8
#define BP_WS_FEED_MAX		(1024 * 1024)	/* the feed's size cap, bytes */

/* The feed's path for database and chain into out; 0, or -1 when it does not fit. */
int		 bp_ws_feed_path(const char *database, const char *chain, char *out, size_t cap);

/* Writes chain's feed at path from the index (the indexer, after its commit). 0, or -1. */
int		 bp_ws_feed_write(struct bp_db *, const char *chain, const char *path);

/*
 * Reports the feed's heads after f->last through fns->head, as bp_ws_follow_poll would, reading
 * the file at path into buf (the caller's, reused) when it changed since the last read (a stat:
 * inode, time and size; the indexer replaces it whole). Returns the number reported; -2 when the feed
 * cannot continue what f delivered (missing or malformed file, a gap, a delivered head no
 * longer in it): poll SQLite with bp_ws_follow_poll then; -1 when fns->head asked to stop.
 */
int		 bp_ws_feed_poll(struct bp_ws_follow *f, const char *path, struct bp_buf *buf,
		    const struct bp_ws_follow_fns *fns, void *arg);

#endif
