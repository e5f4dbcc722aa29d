/*
 * Listening to the database's wake-ups (bp_db_notify, db.h), the same on both engines: on
 * SQLite an inotify descriptor watching DATABASE.CHANNEL files (wake.h); on PostgreSQL a
 * connection of its own that LISTENs, so a WebSocket program on one head wakes when the
 * indexer of another head stored a block. The caller polls bp_db_wake_fd with whatever else it
 * waits on, or calls bp_db_wake_wait.
 */
#ifndef BP_DB_WAKE_H
#define BP_DB_WAKE_H

struct bp_db_wake;

/* A listener for the database at target; NULL after logging why. */
struct bp_db_wake	*bp_db_wake_open(const char *target);
/* Listens to channel too; 0, or -1 (the listener keeps its other channels). */
int			 bp_db_wake_listen(struct bp_db_wake *, const char *channel);
/* The descriptor that becomes readable on a wake-up: poll it for POLLIN. */
int			 bp_db_wake_fd(const struct bp_db_wake *);
/*
 * Reads the wake-ups that came away: how many (0 for none), or -1 when the listener lost its
 * server (tried again at the next call; meanwhile the caller's timeout polls).
 */
int			 bp_db_wake_drain(struct bp_db_wake *);
/* Waits at most timeout_ms for a wake-up: 1 woken, 0 timed out, -1 on an error. */
int			 bp_db_wake_wait(struct bp_db_wake *, int timeout_ms);
void			 bp_db_wake_close(struct bp_db_wake *);

#endif
