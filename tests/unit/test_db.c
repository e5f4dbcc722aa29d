/*
 * lib/core/db.c: the database file's mode. It holds webhook signing secrets and key hashes, so
 * it is made 0600 whatever the umask, its -wal and -shm files alike, and `migrate` takes the
 * bits of others off an existing file.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/db.h"
#include "unit.h"

/* The permission bits of path, or -1. */
static int
mode_of(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (int)(sb.st_mode & 0777) : -1;
}

static void
test_db_file_mode(void)
{
	char dir[64] = "/tmp/bp-unit-dbmode.XXXXXX", path[96], wal[104], shm[104];
	struct bp_db *db;
	mode_t old;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.db", dir);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	old = umask(022);
	db = bp_db_open(path, 1);
	CU_ASSERT_PTR_NOT_NULL(db);
	CU_ASSERT_EQUAL(mode_of(path), 0600);
	CU_ASSERT_EQUAL(mode_of(wal), 0600);
	CU_ASSERT_EQUAL(mode_of(shm), 0600);
	bp_db_close(db);
	unlink(path);
	unlink(wal);
	unlink(shm);

	/* A file made world-readable before this version: migrate takes others' bits off. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(path, "w"));
	fclose(f);
	CU_ASSERT_EQUAL(chmod(path, 0644), 0);
	db = bp_db_open(path, 1);
	CU_ASSERT_PTR_NOT_NULL(db);
	CU_ASSERT_EQUAL(mode_of(path), 0640);
	bp_db_close(db);
	umask(old);
	unlink(path);
	unlink(wal);
	unlink(shm);
	rmdir(dir);
}

/* What blockport status and migrate print: never a URL's password. */
static void
test_db_display(void)
{
	char out[128];

	CU_ASSERT_STRING_EQUAL(bp_db_display("/var/lib/blockport/blockport.db", out, sizeof(out)),
	    "/var/lib/blockport/blockport.db");
	CU_ASSERT_STRING_EQUAL(bp_db_display("postgresql://bp:s3cret@db.example:5432/bp", out,
	    sizeof(out)), "postgresql://bp:***@db.example:5432/bp");
	CU_ASSERT_STRING_EQUAL(bp_db_display("postgres://bp@127.0.0.1/bp", out, sizeof(out)),
	    "postgres://bp@127.0.0.1/bp");
	CU_ASSERT_STRING_EQUAL(bp_db_display("postgresql://127.0.0.1:5/bp", out, sizeof(out)),
	    "postgresql://127.0.0.1:5/bp");
	CU_ASSERT(strstr(bp_db_display("postgresql://a:b:c@h/d", out, sizeof(out)), "b") == NULL);
}

BP_UNIT_SUITE(db, NULL, NULL,
	{ "database file mode", test_db_file_mode },
	{ "a URL's password is never shown", test_db_display },
)
