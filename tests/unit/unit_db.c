/*
 * A fresh database for a suite (unit_db.h): a SQLite file, or with BLOCKPORT_TEST_PG=<url> a
 * schema of its own in that PostgreSQL database, the connection's search_path set to it.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "core/db.h"
#include "unit_db.h"

static void
quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* Runs one statement on url's database; 0 or -1 (printed). */
static int
pg_admin(const char *url, const char *sql)
{
	PGconn *c = PQconnectdb(url);
	PGresult *r = NULL;
	int rc = -1;

	if (PQstatus(c) == CONNECTION_OK) {
		PQsetNoticeProcessor(c, quiet, NULL);	/* DROP ... CASCADE lists every table */
		r = PQexec(c, sql);
		rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : -1;
	}
	if (rc == -1)
		fprintf(stderr, "unit_db: %s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return rc;
}

static int
pg_open(struct bp_unit_db *u, const char *url, const char *tag)
{
	static unsigned int seq;
	char sql[160];

	snprintf(u->schema, sizeof(u->schema), "t_%s_%ld_%u", tag, (long)getpid(), seq++);
	for (char *p = u->schema; *p != '\0'; p++)
		if (*p == '-' || *p == '.')
			*p = '_';
	snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", u->schema);
	if (pg_admin(url, sql) == -1)
		return -1;
	/* The files a database keeps next to itself (the heads feeds) go to a directory. */
	snprintf(u->dir, sizeof(u->dir), "/tmp/bp-unit-%s.XXXXXX", tag);
	if (mkdtemp(u->dir) == NULL)
		return -1;
	snprintf(u->files, sizeof(u->files), "%s/t.db", u->dir);
	snprintf(u->path, sizeof(u->path), "%s%coptions=-csearch_path%%3D%s", url,
	    strchr(url, '?') ? '&' : '?', u->schema);
	if ((u->db = bp_db_open(u->path, 1)) == NULL) {
		snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", u->schema);
		pg_admin(url, sql);
		rmdir(u->dir);
		return -1;
	}
	return 0;
}

int
bp_unit_db_open(struct bp_unit_db *u, const char *tag)
{
	const char *url = getenv("BLOCKPORT_TEST_PG");

	memset(u, 0, sizeof(*u));
	if (url != NULL && *url != '\0')
		return pg_open(u, url, tag);
	snprintf(u->dir, sizeof(u->dir), "/tmp/bp-unit-%s.XXXXXX", tag);
	if (mkdtemp(u->dir) == NULL)
		return -1;
	snprintf(u->path, sizeof(u->path), "%s/t.db", u->dir);
	memcpy(u->files, u->path, sizeof(u->files));
	if ((u->db = bp_db_open(u->path, 1)) == NULL) {
		rmdir(u->dir);
		return -1;
	}
	return 0;
}

void
bp_unit_db_close(struct bp_unit_db *u)
{
	char p[sizeof(u->path) + 16];
	glob_t g;
	size_t i;

	bp_db_close(u->db);
	u->db = NULL;
	if (u->schema[0] != '\0') {
		snprintf(p, sizeof(p), "DROP SCHEMA %s CASCADE", u->schema);
		pg_admin(getenv("BLOCKPORT_TEST_PG"), p);
	}
	/* The file, SQLite's -wal and -shm, and whatever a test left next to them. */
	snprintf(p, sizeof(p), "%s/*", u->dir);
	if (glob(p, 0, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
		globfree(&g);
	}
	rmdir(u->dir);
}

int
bp_unit_db_drop(struct bp_unit_db *u, const char *table)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "DROP TABLE %s%s", table, u->schema[0] ? " CASCADE" : "");
	return bp_db_exec(u->db, sql);
}

int
bp_unit_db_missing(const struct bp_unit_db *u, const char *log, const char *table)
{
	char want[128];

	if (u->schema[0] != '\0')
		snprintf(want, sizeof(want), "relation \"%s\" does not exist", table);
	else
		snprintf(want, sizeof(want), "no such table: %s", table);
	return log != NULL && strstr(log, want) != NULL;
}
