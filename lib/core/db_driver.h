/*
 * The database drivers behind lib/core/db.h: db.c keeps the interface every caller uses and
 * dispatches through a table; db_sqlite.c (a path, the embedded default) and db_pg.c (a
 * postgresql:// URL, libpq) implement it. Only db*.c include this header.
 */
#ifndef BP_DB_DRIVER_H
#define BP_DB_DRIVER_H

#include <stddef.h>
#include <stdint.h>

struct bp_db_driver;

/* The first member of each driver's handle and statement, so db.c reaches the table. */
struct bp_db {
	const struct bp_db_driver *drv;
	int		(*fence)(struct bp_db *, void *);	/* bp_db_set_fence; NULL */
	void		*fence_arg;
};

struct bp_stmt {
	const struct bp_db_driver *drv;
	const char	*sql;
	int		 conflict;	/* the last error was a UNIQUE or PRIMARY KEY conflict */
};

struct bp_db_driver {
	const char	*name;
	int		 one_writer;	/* one write lock for all: batches help (db_batch.c) */
	struct bp_db	*(*open)(const char *target, int migrate);
	void		 (*close)(struct bp_db *);
	int		 (*version)(struct bp_db *);
	/* Runs migration sql (in the dialect's text) and records version, inside a transaction. */
	int		 (*migrate_one)(struct bp_db *, const char *sql, int version);
	struct bp_stmt	*(*stmt)(struct bp_db *, const char *sql);
	int		 (*exec)(struct bp_db *, const char *sql);
	int		 (*begin)(struct bp_db *);
	int		 (*begin_read)(struct bp_db *);
	int		 (*try_begin)(struct bp_db *, int64_t max_wait_us);
	int		 (*commit)(struct bp_db *);
	void		 (*rollback)(struct bp_db *);
	int64_t		 (*last_id)(struct bp_db *);
	int64_t		 (*data_version)(struct bp_db *);
	int		 (*changes)(struct bp_db *);
	int		 (*notify)(struct bp_db *, const char *channel);
	int		 (*bind_int)(struct bp_stmt *, int, int64_t);
	int		 (*bind_text)(struct bp_stmt *, int, const char *);
	int		 (*bind_blob)(struct bp_stmt *, int, const void *, size_t);
	int		 (*bind_null)(struct bp_stmt *, int);
	enum bp_db_step	 (*step)(struct bp_stmt *);
	void		 (*reset)(struct bp_stmt *);
	int64_t		 (*col_int)(struct bp_stmt *, int);
	const char	*(*col_text)(struct bp_stmt *, int);
	int		 (*col_is_null)(struct bp_stmt *, int);
	const void	*(*col_blob)(struct bp_stmt *, int, size_t *);
};

extern const struct bp_db_driver bp_db_sqlite;
extern const struct bp_db_driver bp_db_pg;

/* The numbered migrations, compiled in (build/schema_sql.c). */
extern const char *const bp_schema_sql[];
extern const int bp_schema_count;

#endif
