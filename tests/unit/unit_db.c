/*
 * A fresh database for a suite (unit_db.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/db.h"
#include "unit_db.h"

int
bp_unit_db_open(struct bp_unit_db *u, const char *tag)
{
	memset(u, 0, sizeof(*u));
	snprintf(u->dir, sizeof(u->dir), "/tmp/bp-unit-%s.XXXXXX", tag);
	if (mkdtemp(u->dir) == NULL)
		return -1;
	snprintf(u->path, sizeof(u->path), "%s/t.db", u->dir);
	if ((u->db = bp_db_open(u->path, 1)) == NULL) {
		rmdir(u->dir);
		return -1;
	}
	return 0;
}

void
bp_unit_db_close(struct bp_unit_db *u)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	char p[160];
	size_t i;

	bp_db_close(u->db);
	u->db = NULL;
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", u->path, suffixes[i]);
		unlink(p);
	}
	rmdir(u->dir);
}
