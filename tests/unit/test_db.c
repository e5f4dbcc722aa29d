/*
 * lib/core/db.c: the database file's mode. It holds webhook signing secrets and key hashes, so
 * it is made 0600 whatever the umask, its -wal and -shm files alike, and `migrate` takes the
 * bits of others off an existing file.
 */
#include <sys/stat.h>

#include <stdint.h>
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

/* A u32 of the wal-index (the -shm file, native byte order) at off; -1 when unreadable. */
static int64_t
shm_u32(const char *shm, long off)
{
	uint32_t v;
	FILE *f;
	int ok;

	if ((f = fopen(shm, "rb")) == NULL)
		return -1;
	ok = fseek(f, off, SEEK_SET) == 0 && fread(&v, sizeof(v), 1, f) == 1;
	fclose(f);
	return ok ? (int64_t)v : -1;
}

#define CONNS	8

/*
 * The WAL is checkpointed once per 1,000 frames all connections wrote together, not once per
 * 1,000 frames of each: with 8 connections committing in turn, and a reader always in the WAL
 * (as under load: it is never reset), the checkpoints (each moves nBackfill, at byte 96 of the
 * wal-index; mxFrame, the WAL's frames, is at byte 16) number the frames / 1,000.
 */
static void
test_db_checkpoint_pace(void)
{
	static const char sql_add[] = "INSERT INTO ckpt_rows (v) WITH RECURSIVE c(x) AS"
	    " (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 12)"
	    " SELECT printf('%.900c', 'x') FROM c";
	static const char sql_read[] = "SELECT count(*) FROM ckpt_rows";
	char dir[64] = "/tmp/bp-unit-dbckpt.XXXXXX", path[96], shm[104], rm[128];
	struct bp_db *db[CONNS], *reader;
	struct bp_stmt *st;
	int64_t backfill = 0, now, frames;
	int i, round, ckpts = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.db", dir);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	for (i = 0; i < CONNS; i++)
		CU_ASSERT_PTR_NOT_NULL_FATAL(db[i] = bp_db_open(path, i == 0));
	CU_ASSERT_PTR_NOT_NULL_FATAL(reader = bp_db_open(path, 0));
	CU_ASSERT_FATAL(bp_db_exec(db[0], "CREATE TABLE ckpt_rows (v TEXT)") == 0);
	for (round = 0; round < 80; round++)
		for (i = 0; i < CONNS; i++) {
			/* The reader moves to the newest snapshot: it stays in the WAL. */
			CU_ASSERT_FATAL(bp_db_begin_read(reader) == 0);
			CU_ASSERT_FATAL((st = bp_db_stmt(reader, sql_read)) != NULL);
			CU_ASSERT(bp_stmt_step(st) == BP_DB_ROW);
			bp_stmt_reset(st);
			CU_ASSERT_FATAL(bp_db_exec(db[i], sql_add) == 0);
			if ((now = shm_u32(shm, 96)) != backfill)
				ckpts++;
			backfill = now;
			CU_ASSERT(bp_db_commit(reader) == 0);
		}
	frames = shm_u32(shm, 16);
	CU_ASSERT(frames > 3000);	/* never reset */
	CU_ASSERT(ckpts >= frames / 1000 - 1 && ckpts <= frames / 1000 + 1);
	for (i = 0; i < CONNS; i++)
		bp_db_close(db[i]);
	bp_db_close(reader);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	CU_ASSERT(system(rm) == 0);
}

BP_UNIT_SUITE(db, NULL, NULL,
	{ "database file mode", test_db_file_mode },
	{ "a URL's password is never shown", test_db_display },
	{ "one checkpoint per 1,000 frames of all connections", test_db_checkpoint_pace },
)
