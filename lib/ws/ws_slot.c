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
bp_ws_slot_take(const char *database, const struct bp_key *k, int64_t *n)
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
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			*n = i;
			return fd;
		}
		close(fd);
	}
	return -2;
}


int
bp_ws_slot_keep(const char *database, const struct bp_key *k, int *fd, int64_t *n)
{
	int64_t i;
	int nfd;

	if (*fd >= 0 && *n < k->plan.ws_connections)
		return 0;
	if (k->plan.ws_connections <= 0) {
		if (*fd >= 0)
			close(*fd);
		*fd = -3;
		return 0;
	}
	/*
	 * Only numbers below the cap are tried, and the slot held is not one of them: flock
	 * would see the process's own lock on it through the new descriptor as another's.
	 */
	if ((nfd = bp_ws_slot_take(database, k, &i)) < 0)
		return nfd;
	if (*fd >= 0)
		close(*fd);
	*fd = nfd;
	*n = i;
	return 0;
}
