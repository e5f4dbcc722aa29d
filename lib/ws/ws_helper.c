/*
 * The proxy helper of a WebSocket connection (ws_helper.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "ws_helper.h"

/* The path of prog next to this program into out; 0 or -1. */
static int
sibling(const char *prog, char *out, size_t cap)
{
	char self[PATH_MAX];
	ssize_t n;
	char *slash;
	int w;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return -1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return -1;
	*slash = '\0';
	w = snprintf(out, cap, "%s/%s", self, prog);
	return w < 0 || (size_t)w >= cap ? -1 : 0;
}

int
bp_ws_helper_start(struct bp_ws_helper *h, const char *prog, const char *chain,
    const char *network, const char *addr, const char *key)
{
	char path[PATH_MAX + 64];
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	pid_t pid;

	if (h->pid > 0)
		return 0;
	if (sibling(prog, path, sizeof(path)) == -1 || pipe2(in, O_CLOEXEC) == -1 ||
	    pipe2(out, O_CLOEXEC) == -1) {
		bp_err("ws proxy: %s", strerror(errno));
		goto fail;
	}
	if ((pid = fork()) == -1) {
		bp_err("ws proxy: fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		/* The child: stdin from in, stdout to out; stderr stays websocketd's log. */
		if (dup2(in[0], STDIN_FILENO) == -1 || dup2(out[1], STDOUT_FILENO) == -1)
			_exit(127);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	h->pid = pid;
	if ((h->to = fdopen(in[1], "w")) == NULL || (h->from = fdopen(out[0], "r")) == NULL) {
		if (h->to == NULL)
			close(in[1]);
		if (h->from == NULL)
			close(out[0]);
		bp_ws_helper_stop(h);
		return -1;
	}
	if (fprintf(h->to, "%s\t%s\t%s\t%s\n", chain, network, addr != NULL ? addr : "",
	    key != NULL ? key : "") < 0 || fflush(h->to) == EOF) {
		bp_ws_helper_stop(h);
		return -1;
	}
	return 0;
fail:
	if (in[0] != -1) {
		close(in[0]);
		close(in[1]);
	}
	if (out[0] != -1) {
		close(out[0]);
		close(out[1]);
	}
	return -1;
}

int
bp_ws_helper_call(struct bp_ws_helper *h, const char *message, size_t len, int *status,
    const char **body, size_t *bodylen)
{
	ssize_t n;
	char *sp;
	long st;

	if (h->pid <= 0)
		return -1;
	if (fwrite(message, 1, len, h->to) != len || fputc('\n', h->to) == EOF ||
	    fflush(h->to) == EOF || (n = getline(&h->line, &h->cap, h->from)) <= 0)
		goto gone;
	if (h->line[n - 1] == '\n')
		h->line[--n] = '\0';
	st = strtol(h->line, &sp, 10);
	if (sp == h->line || *sp != ' ' || st < 100 || st > 599)
		goto gone;
	*status = (int)st;
	*body = sp + 1;
	*bodylen = (size_t)(h->line + n - (sp + 1));
	return 0;
gone:
	bp_err("ws proxy: the helper is gone");
	bp_ws_helper_stop(h);
	return -1;
}

void
bp_ws_helper_stop(struct bp_ws_helper *h)
{
	if (h->to != NULL)
		fclose(h->to);
	if (h->from != NULL)
		fclose(h->from);
	if (h->pid > 0)
		while (waitpid(h->pid, NULL, 0) == -1 && errno == EINTR)
			;
	free(h->line);
	memset(h, 0, sizeof(*h));
}
