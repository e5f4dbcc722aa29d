/*
 * Wake files, SQLite's wake-ups (bp_db_notify, db_wake.h; docs/websocket.md, "One follower for
 * all connections"): a writer that has
 * committed something readers wait for (the indexer a new block, the pending follower new
 * transaction hashes) opens and closes a file named for it; each reader watches that file with
 * inotify (IN_CLOSE_WRITE), so only those commits wake the readers, not every commit of the
 * database (the gas sampler's, the cursor's).
 */
#ifndef BP_WAKE_H
#define BP_WAKE_H

#include <stddef.h>

/* Wakes the watchers of path (creating it, mode 0664, if needed). 0, or -1 (errno set). */
int	bp_wake_touch(const char *path);

/*
 * Adds a watch of path to the inotify descriptor *fd (made non-blocking on the first call when
 * *fd is -1), creating the file if needed. 0, or -1 when path cannot be watched (*fd unchanged
 * or still valid for earlier watches).
 */
int	bp_wake_watch(int *fd, const char *path);

#endif
