/*
 * Wake-up listeners (db_wake.h). The PostgreSQL listener is a connection of its own rather than
 * the caller's: the caller's connection is released when idle and runs queries, and a LISTEN
 * must outlive both.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "db.h"
#include "db_wake.h"
#include "log.h"
#include "util.h"
#include "wake.h"

#define CHANNELS_MAX	4

struct bp_db_wake {
	char		 target[4096];
	PGconn		*pg;		/* PostgreSQL: the listening connection */
	int		 fd;		/* SQLite: the inotify descriptor; -1 */
	char		 channels[CHANNELS_MAX][32];
	int		 nchannels;
};

static int
pg_listen(struct bp_db_wake *w, const char *channel)
{
	char sql[96];
	PGresult *r;
	int ok;

	snprintf(sql, sizeof(sql), "LISTEN bp_%s", channel);
	r = PQexec(w->pg, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		bp_warn("postgresql: %s: %s", sql, PQerrorMessage(w->pg));
	PQclear(r);
	return ok ? 0 : -1;
}

/* The listening connection, opened again with its channels after it was lost. 0 or -1. */
static int
pg_again(struct bp_db_wake *w)
{
	int i;

	PQreset(w->pg);
	if (PQstatus(w->pg) != CONNECTION_OK)
		return -1;
	for (i = 0; i < w->nchannels; i++)
		if (pg_listen(w, w->channels[i]) == -1)
			return -1;
	return 0;
}

struct bp_db_wake *
bp_db_wake_open(const char *target)
{
	struct bp_db_wake *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->fd = -1;
	if (bp_strlcpy(w->target, target, sizeof(w->target)) == -1)
		goto fail;
	if (bp_db_is_url(target)) {
		w->pg = PQconnectdb(target);
		if (PQstatus(w->pg) != CONNECTION_OK) {
			bp_err("postgresql: listener: %s", PQerrorMessage(w->pg));
			goto fail;
		}
	}
	return w;
fail:
	bp_db_wake_close(w);
	return NULL;
}

int
bp_db_wake_listen(struct bp_db_wake *w, const char *channel)
{
	char path[4200];
	int i;

	for (i = 0; i < w->nchannels; i++)
		if (strcmp(w->channels[i], channel) == 0)
			return 0;
	if (w->nchannels == CHANNELS_MAX ||
	    bp_strlcpy(w->channels[w->nchannels], channel, sizeof(w->channels[0])) == -1)
		return -1;
	if (w->pg != NULL) {
		if (pg_listen(w, channel) == -1)
			return -1;
	} else if (snprintf(path, sizeof(path), "%s.%s", w->target, channel) >=
	    (int)sizeof(path) || bp_wake_watch(&w->fd, path) == -1)
		return -1;
	w->nchannels++;
	return 0;
}

int
bp_db_wake_fd(const struct bp_db_wake *w)
{
	if (w == NULL)
		return -1;
	return w->pg != NULL ? PQsocket(w->pg) : w->fd;
}

int
bp_db_wake_drain(struct bp_db_wake *w)
{
	PGnotify *n;
	char buf[4096];
	ssize_t r;
	int count = 0;

	if (w->pg == NULL) {
		while ((r = read(w->fd, buf, sizeof(buf))) > 0)
			count++;
		return count;
	}
	if (PQstatus(w->pg) != CONNECTION_OK || !PQconsumeInput(w->pg)) {
		/* The socket stays readable (EOF): try again, and say it once a loss. */
		if (PQstatus(w->pg) == CONNECTION_OK)
			bp_warn("postgresql: listener: %s", PQerrorMessage(w->pg));
		return pg_again(w) == 0 ? 1 : -1;
	}
	while ((n = PQnotifies(w->pg)) != NULL) {
		PQfreemem(n);
		count++;
	}
	return count;
}

int
bp_db_wake_wait(struct bp_db_wake *w, int timeout_ms)
{
	struct pollfd p;
	int n;

	if ((n = bp_db_wake_drain(w)) != 0)
		return n > 0 ? 1 : -1;
	p.fd = bp_db_wake_fd(w);
	p.events = POLLIN;
	if (poll(&p, 1, timeout_ms) == -1)
		return errno == EINTR ? 0 : -1;
	if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	n = bp_db_wake_drain(w);
	return n > 0 ? 1 : n;
}

void
bp_db_wake_close(struct bp_db_wake *w)
{
	if (w == NULL)
		return;
	if (w->pg != NULL)
		PQfinish(w->pg);
	if (w->fd != -1)
		close(w->fd);
	free(w);
}
