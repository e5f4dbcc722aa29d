/*
 * A fast fixed JSON-RPC upstream for bench/rpc.sh and bench/remote.sh: one thread, epoll,
 * HTTP/1.1 keep-alive. Every POST gets the same answer, an eth_blockNumber result, whatever it
 * asked; only as much HTTP is parsed as keep-alive needs (the end of the head and
 * Content-Length). It must never be the bottleneck of what it is measured with.
 *
 * For the realistic mix of bench/remote.sh, eth_getTransactionReceipt, eth_getBlockByNumber and
 * eth_getLogs get answers of their real shape and size (a receipt, a block of ten transactions,
 * three logs; all of block 0x1000), and "GET /count" answers at once with the number of POSTs
 * answered so far (how many calls a proxy let through).
 *
 * With DELAY_MS it stands for a node that far away (another rack, a provider): a complete
 * request is queued with its due time and answered when the time comes, so thousands of
 * requests wait at once. The delay is the same for every request, so the queue is in due order
 * and a ring buffer is the timer wheel.
 *
 *   make build/bench/fixed-upstream.fcgi    (the Makefile builds each C file of bench/ so; it is
 *   build/bench/fixed-upstream.fcgi PORT [DELAY_MS]    a FastCGI program despite the suffix)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memmem, accept4 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BODY	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"0x10d4f\"}"
#define BUFSZ	65536
#define MAXFD	65536
#define QSZ	(1 << 18)	/* pending answers: far above any bench's connections */

struct conn {
	char		*buf;
	size_t		 len;
	unsigned	 gen;	/* bumped when the fd is closed: queued answers to it are dropped */
};

struct pending {
	int		 fd;
	unsigned	 gen;
	int		 kind;	/* which answer: enum kind */
	int64_t		 due;	/* monotonic, microseconds */
};

static struct conn conns[MAXFD];
static struct pending queue[QSZ];
static size_t qhead, qlen;
/* The answers, by what was asked. */
enum kind { K_DEFAULT, K_RECEIPT, K_BLOCK, K_LOGS, K__MAX };
static const char *const methods[K__MAX] = { NULL, "\"eth_getTransactionReceipt\"",
    "\"eth_getBlockByNumber\"", "\"eth_getLogs\"" };
static char answer[K__MAX][8192];
static size_t answer_len[K__MAX];
static unsigned long long answered;

#define H32	"0x5f1e2c3d4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
#define A20	"0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"
#define BLOOM	"0x0000000000000000000000000000000000000000000000000000000000000000" \
		"0000000000000000000000000000000000000000000000000000000000000000" \
		"0000000000000000000000000000000000000000000000000000000000000000" \
		"0000000000000000000000000000000000000000000000000000000000000000" \
		"0000000000000000000000000000000000000000000000000000000000000000" \
		"0000000000000000000000000000000000000000000000000000000000000000" \
		"0000000000000000000000000000000000000000000000000000000000000000" \
		"0000000000000000000000000000000000000000000000000000000000000000"
#define LOG	"{\"address\":\"" A20 "\",\"topics\":[\"" H32 "\",\"" H32 "\",\"" H32 "\"]," \
		"\"data\":\"0x00000000000000000000000000000000000000000000000000000000000f4240\"," \
		"\"blockNumber\":\"0x1000\",\"blockHash\":\"" H32 "\",\"transactionHash\":\"" H32 \
		"\",\"transactionIndex\":\"0x1\",\"logIndex\":\"0x2\",\"removed\":false}"
static const char *const bodies[K__MAX] = {
	BODY,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"blockHash\":\"" H32 "\","
	"\"blockNumber\":\"0x1000\",\"contractAddress\":null,\"cumulativeGasUsed\":\"0x1f6ea\","
	"\"effectiveGasPrice\":\"0x3b9aca00\",\"from\":\"" A20 "\",\"gasUsed\":\"0xb4c8\","
	"\"logs\":[" LOG "],\"logsBloom\":\"" BLOOM "\",\"status\":\"0x1\",\"to\":\"" A20 "\","
	"\"transactionHash\":\"" H32 "\",\"transactionIndex\":\"0x1\",\"type\":\"0x2\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"baseFeePerGas\":\"0x3b9aca00\","
	"\"difficulty\":\"0x0\",\"extraData\":\"0x\",\"gasLimit\":\"0x1c9c380\","
	"\"gasUsed\":\"0x5a3c1\",\"hash\":\"" H32 "\",\"logsBloom\":\"" BLOOM "\","
	"\"miner\":\"" A20 "\",\"mixHash\":\"" H32 "\",\"nonce\":\"0x0000000000000000\","
	"\"number\":\"0x1000\",\"parentHash\":\"" H32 "\",\"receiptsRoot\":\"" H32 "\","
	"\"sha3Uncles\":\"" H32 "\",\"size\":\"0x1a2b\",\"stateRoot\":\"" H32 "\","
	"\"timestamp\":\"0x6553f100\",\"transactions\":[\"" H32 "\",\"" H32 "\",\"" H32 "\",\"" H32
	"\",\"" H32 "\",\"" H32 "\",\"" H32 "\",\"" H32 "\",\"" H32 "\",\"" H32 "\"],"
	"\"transactionsRoot\":\"" H32 "\",\"uncles\":[],\"withdrawals\":[],"
	"\"withdrawalsRoot\":\"" H32 "\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[" LOG "," LOG "," LOG "]}",
};

/* Which answer the request body [p, p + n) gets. */
static int
kind_of(const char *p, size_t n)
{
	int k;

	for (k = 1; k < K__MAX; k++)
		if (memmem(p, n, methods[k], strlen(methods[k])) != NULL)
			return k;
	return K_DEFAULT;
}

static int64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

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
	conns[fd].gen++;
}

/* Queues an answer for every complete request in fd's buffer; -1 when the connection is to go. */
static int
take(int fd, int64_t due)
{
	struct conn *c = &conns[fd];

	for (;;) {
		char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
		size_t head, total;

		if (end == NULL)
			return c->len == BUFSZ ? -1 : 0;
		head = (size_t)(end + 4 - c->buf);
		total = head + content_length(c->buf, head);
		if (total > BUFSZ || qlen == QSZ)
			return -1;
		if (c->len < total)
			return 0;
		if (c->len >= 10 && memcmp(c->buf, "GET /count", 10) == 0) {
			char out[128];
			int n = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: "
			    "%d\r\n\r\n%llu", snprintf(NULL, 0, "%llu", answered), answered);

			if (write(fd, out, (size_t)n) != n)
				return -1;
		} else
			queue[(qhead + qlen++) % QSZ] = (struct pending){ fd, c->gen,
			    kind_of(c->buf + head, total - head), due };
		memmove(c->buf, c->buf + total, c->len - total);
		c->len -= total;
	}
}

/* Answers what is due; the epoll timeout in ms until the next, or -1 when none waits. */
static int
answer_due(int ep)
{
	int64_t now = now_us();

	while (qlen > 0) {
		struct pending *p = &queue[qhead];

		if (p->due > now)
			return (int)((p->due - now + 999) / 1000);
		answered++;
		if (conns[p->fd].gen == p->gen && conns[p->fd].buf != NULL &&
		    write(p->fd, answer[p->kind], answer_len[p->kind]) !=
		    (ssize_t)answer_len[p->kind])
			drop(ep, p->fd);
		qhead = (qhead + 1) % QSZ;
		qlen--;
	}
	return -1;
}

int
main(int argc, char *argv[])
{
	struct sockaddr_in sa;
	struct epoll_event ev, evs[256];
	int64_t delay;
	int lfd, ep, one = 1, i, n, timeout = -1;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: fixed-upstream PORT [DELAY_MS]\n");
		return 2;
	}
	delay = argc == 3 ? (int64_t)strtol(argv[2], NULL, 10) * 1000 : 0;
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < K__MAX; i++)
		answer_len[i] = (size_t)snprintf(answer[i], sizeof(answer[i]), "HTTP/1.1 200 OK\r\n"
		    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		    strlen(bodies[i]), bodies[i]);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((unsigned short)strtoul(argv[1], NULL, 10));
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 4096) != 0 ||
	    (ep = epoll_create1(0)) < 0) {
		perror("fixed-upstream");
		return 1;
	}
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;) {
		if ((n = epoll_wait(ep, evs, 256, timeout)) < 0) {
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
			if (take(fd, now_us() + delay) == -1)
				drop(ep, fd);
		}
		timeout = answer_due(ep);
	}
}
