/*
 * Wake files (wake.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "wake.h"

int
bp_wake_touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0664);

	if (fd == -1)
		return -1;
	return close(fd);
}

int
bp_wake_watch(int *fd, const char *path)
{
	int made = 0, f;

	if ((f = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0664)) == -1 &&
	    (f = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	close(f);
	if (*fd == -1) {
		if ((*fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1)
			return -1;
		made = 1;
	}
	if (inotify_add_watch(*fd, path, IN_CLOSE_WRITE) == -1) {
		if (made) {
			close(*fd);
			*fd = -1;
		}
		return -1;
	}
	return 0;
}
