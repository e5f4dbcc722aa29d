/*
 * Wake files (docs/websocket.md, "One follower for all connections"): a writer that has
 * committed something readers wait for (the indexer a new block, the pending follower new
 * transaction hashes) opens and closes a file named for it; each reader watches that file with
 * inotify (IN_CLOSE_WRITE), so only those commits wake the readers, not every commit of the
 * database (the gas sampler's, the cursor's).
 */
#ifndef BP_WAKE_H
#define BP_WAKE_H

#include <stddef.h>

#define BP_WAKE_HEADS	".heads"	/* DATABASE.heads: the indexer stored a block */
#define BP_WAKE_PENDING	".pending"	/* DATABASE.pending: new pending transactions */

/* The wake file of database with suffix (BP_WAKE_*) into out. 0, or -1 when it does not fit. */
int	bp_wake_path(const char *database, const char *suffix, char *out, size_t cap);

/* Wakes the watchers of path (creating it, mode 0664, if needed). 0, or -1 (errno set). */
int	bp_wake_touch(const char *path);

/*
 * Adds a watch of path to the inotify descriptor *fd (made non-blocking on the first call when
 * *fd is -1), creating the file if needed. 0, or -1 when path cannot be watched (*fd unchanged
 * or still valid for earlier watches).
 */
int	bp_wake_watch(int *fd, const char *path);

/* Reads the pending events of fd away. */
void	bp_wake_drain(int fd);

#endif
