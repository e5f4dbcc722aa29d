/*
 * A fresh database for a suite: a new directory under /tmp holding one file migrated to the
 * current schema, removed again with everything SQLite put next to it.
 */
#ifndef BP_UNIT_DB_H
#define BP_UNIT_DB_H

struct bp_db;

struct bp_unit_db {
	char		 dir[64];
	char		 path[128];
	struct bp_db	*db;
};

/* Creates /tmp/bp-unit-TAG.XXXXXX/t.db, migrated, into *u. 0, or -1 (then nothing to close). */
int	bp_unit_db_open(struct bp_unit_db *u, const char *tag);

/* Closes u's database and removes its files and directory. */
void	bp_unit_db_close(struct bp_unit_db *u);

#endif
