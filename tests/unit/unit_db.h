/*
 * A fresh database for a suite: a new directory under /tmp holding one file migrated to the
 * current schema, removed again with everything SQLite put next to it. With
 * BLOCKPORT_TEST_PG=<url> set, a PostgreSQL schema of its own instead, dropped again.
 */
#ifndef BP_UNIT_DB_H
#define BP_UNIT_DB_H

struct bp_db;

struct bp_unit_db {
	char		 dir[64];
	char		 path[512];	/* the file, or the PostgreSQL URL */
	char		 schema[64];	/* PostgreSQL: the suite's schema; "" on SQLite */
	char		 files[128];	/* the base of files kept next to the database (feeds) */
	struct bp_db	*db;
};

/* Creates /tmp/bp-unit-TAG.XXXXXX/t.db, migrated, into *u. 0, or -1 (then nothing to close). */
int	bp_unit_db_open(struct bp_unit_db *u, const char *tag);

/* Closes u's database and removes its files and directory. */
void	bp_unit_db_close(struct bp_unit_db *u);

/*
 * Drops table from u's database to make its callers fail: on PostgreSQL with CASCADE (the
 * foreign keys of other tables go too; SQLite does not check them at DROP). 0 or -1.
 */
int	bp_unit_db_drop(struct bp_unit_db *u, const char *table);

/* Whether log says that table does not exist, in the words of u's engine. */
int	bp_unit_db_missing(const struct bp_unit_db *u, const char *log, const char *table);

#endif
