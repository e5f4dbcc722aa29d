/*
 * The per-key cap on open WebSocket connections (ws_slot.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "ws_slot.h"

int
bp_ws_slot_take(const char *database, const struct bp_key *k)
{
	char dir[4200], path[4300];
	int64_t i;
	int fd;

	if (k->plan.ws_connections <= 0)
		return -3;	/* no cap */
	snprintf(dir, sizeof(dir), "%s.ws", database);
	if (mkdir(dir, 0770) == -1 && errno != EEXIST) {
		bp_err("%s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < k->plan.ws_connections; i++) {
		snprintf(path, sizeof(path), "%s/%lld.%lld", dir, (long long)k->id, (long long)i);
		if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0660)) == -1) {
			bp_err("%s: %s", path, strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		close(fd);
	}
	return -2;
}

