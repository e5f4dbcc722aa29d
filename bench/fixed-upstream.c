/*
 * A fast fixed JSON-RPC upstream for bench/rpc.sh: one thread, epoll, HTTP/1.1 keep-alive. Every
 * POST gets the same answer, an eth_blockNumber result, whatever it asked; only as much HTTP is
 * parsed as keep-alive needs (the end of the head and Content-Length). It must never be the
 * bottleneck of what it is measured with.
 *
 *   make build/bench/fixed-upstream.fcgi    (the Makefile builds each C file of bench/ so; it is
 *   build/bench/fixed-upstream.fcgi PORT    a FastCGI program despite the suffix)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memmem, accept4 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BODY	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"0x10d4f\"}"
#define BUFSZ	65536
#define MAXFD	65536

struct conn {
	char	*buf;
	size_t	 len;
};

static struct conn conns[MAXFD];
static char answer[256];
static size_t answer_len;

/* The value of Content-Length in the head [p, p+n), or 0. */
static size_t
content_length(const char *p, size_t n)
{
	const char *end = p + n;
	size_t v = 0;

	for (; p + 16 < end; p++) {
		if ((p[0] == '\n') && strncasecmp(p + 1, "content-length:", 15) == 0) {
			for (p += 16; p < end && *p == ' '; p++)
				;
			for (; p < end && *p >= '0' && *p <= '9'; p++)
				v = v * 10 + (size_t)(*p - '0');
			return v;
		}
	}
	return 0;
}

static void
drop(int ep, int fd)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	free(conns[fd].buf);
	conns[fd].buf = NULL;
	conns[fd].len = 0;
}

/* Answers every complete request in fd's buffer; -1 when the connection is to go. */
static int
serve(int fd)
{
	struct conn *c = &conns[fd];

	for (;;) {
		char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
		size_t head, total;

		if (end == NULL)
			return c->len == BUFSZ ? -1 : 0;
		head = (size_t)(end + 4 - c->buf);
		total = head + content_length(c->buf, head);
		if (total > BUFSZ)
			return -1;
		if (c->len < total)
			return 0;
		if (write(fd, answer, answer_len) != (ssize_t)answer_len)
			return -1;
		memmove(c->buf, c->buf + total, c->len - total);
		c->len -= total;
	}
}

int
main(int argc, char *argv[])
{
	struct sockaddr_in sa;
	struct epoll_event ev, evs[256];
	int lfd, ep, one = 1, i, n;

	if (argc != 2) {
		fprintf(stderr, "usage: fixed-upstream PORT\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	answer_len = (size_t)snprintf(answer, sizeof(answer), "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", strlen(BODY), BODY);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((unsigned short)strtoul(argv[1], NULL, 10));
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 1024) != 0 ||
	    (ep = epoll_create1(0)) < 0) {
		perror("fixed-upstream");
		return 1;
	}
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;) {
		if ((n = epoll_wait(ep, evs, 256, -1)) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			ssize_t r;

			if (fd == lfd) {
				int c;

				while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					if (c >= MAXFD || (conns[c].buf = malloc(BUFSZ)) == NULL) {
						close(c);
						continue;
					}
					setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
					ev.events = EPOLLIN;
					ev.data.fd = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				}
				continue;
			}
			r = read(fd, conns[fd].buf + conns[fd].len, BUFSZ - conns[fd].len);
			if (r <= 0) {
				if (r < 0 && errno == EAGAIN)
					continue;
				drop(ep, fd);
				continue;
			}
			conns[fd].len += (size_t)r;
			if (serve(fd) == -1)
				drop(ep, fd);
		}
	}
}
