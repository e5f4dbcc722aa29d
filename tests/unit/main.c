/*
 * The CUnit runner: every suite that registered itself (see unit.h), in name order so the output
 * is stable. Exits non-zero when any assertion failed. Arguments, when given, name the suites
 * to run (scripts/test.sh runs the store suites by name on PostgreSQL).
 * The log shows warnings and errors only (no "applied migration" lines); a test that expects an
 * error captures it with bp_unit_log_begin/end.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <CUnit/Basic.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "unit.h"

#define MAX_SUITES 128

static const struct bp_unit_suite *suites[MAX_SUITES];
static size_t nsuites;

static FILE *log_fp;
static char *log_text;
static size_t log_len;

void
bp_unit_log_begin(void)
{
	if (log_fp != NULL)
		fclose(log_fp);
	free(log_text);
	log_text = NULL;
	log_len = 0;
	log_fp = open_memstream(&log_text, &log_len);
	bp_log_set_output(log_fp);
}

const char *
bp_unit_log_end(void)
{
	bp_log_set_output(NULL);
	if (log_fp != NULL)
		fclose(log_fp);
	log_fp = NULL;
	return log_text != NULL ? log_text : "";
}

void
bp_unit_register(const struct bp_unit_suite *s)
{
	if (nsuites == MAX_SUITES) {
		fprintf(stderr, "unit: more than %d suites\n", MAX_SUITES);
		exit(2);
	}
	suites[nsuites++] = s;
}

void
bp_unit_fresh_second(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_nsec > 800000000L)
		usleep((useconds_t)((1000000000L - ts.tv_nsec) / 1000 + 5000));
}

int
bp_unit_send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int
bp_unit_bind_loopback(int *port)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

struct acceptor {
	int	  lfd;
	void	*(*serve)(void *);
};

static void *
accept_loop(void *arg)
{
	struct acceptor a = *(struct acceptor *)arg;

	free(arg);
	for (;;) {
		pthread_t t;
		int fd = accept(a.lfd, NULL, NULL);

		if (fd < 0)
			return NULL;
		if (pthread_create(&t, NULL, a.serve, (void *)(intptr_t)fd) != 0)
			close(fd);
		else
			pthread_detach(t);
	}
}

int
bp_unit_read_request(int fd, char *buf, size_t cap, size_t *have, size_t *hlen, size_t *blen)
{
	char *end, *cl;
	ssize_t r;

	while ((end = memmem(buf, *have, "\r\n\r\n", 4)) == NULL) {
		if (*have == cap || (r = read(fd, buf + *have, cap - *have)) <= 0)
			return -1;
		*have += (size_t)r;
	}
	*hlen = (size_t)(end + 4 - buf);
	*blen = (cl = memmem(buf, *hlen, "Content-Length: ", 16)) != NULL ?
	    (size_t)strtoul(cl + 16, NULL, 10) : 0;
	if (*blen > cap - *hlen)
		return -1;
	while (*have < *hlen + *blen) {
		if ((r = read(fd, buf + *have, cap - *have)) <= 0)
			return -1;
		*have += (size_t)r;
	}
	return 0;
}

void
bp_unit_request_done(char *buf, size_t *have, size_t n)
{
	memmove(buf, buf + n, *have - n);
	*have -= n;
}

void
bp_unit_serve_json(int fd, const char *body, size_t len, void (*seen)(const char *, size_t))
{
	char head[160], *buf = malloc(1 << 20);
	size_t have = 0, hlen, blen;
	int n;

	while (buf != NULL && bp_unit_read_request(fd, buf, 1 << 20, &have, &hlen, &blen) == 0) {
		if (seen != NULL)
			seen(buf + hlen, blen);
		n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\n\r\n", len);
		if (bp_unit_send_all(fd, head, (size_t)n) == -1 || bp_unit_send_all(fd, body, len) == -1)
			break;
		bp_unit_request_done(buf, &have, hlen + blen);
	}
	free(buf);
	close(fd);
}

void
bp_unit_node_config(struct bp_config *cfg, struct bp_network *net, const char *network, int port)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_response = 1 << 20;
	cfg->max_batch = 100;
	cfg->upstream_timeout_ms = 5000;
	memset(net, 0, sizeof(*net));
	bp_strlcpy(net->chain, "t", sizeof(net->chain));
	bp_strlcpy(net->network, network, sizeof(net->network));
	snprintf(net->upstream[0], BP_URL_MAX, "http://127.0.0.1:%d/", port);
	net->nupstream = 1;
}

int
bp_unit_server_start(int *port, void *(*serve)(void *), pthread_t *acceptor)
{
	struct acceptor *a = NULL;
	int lfd;

	if ((lfd = bp_unit_bind_loopback(port)) < 0)
		return -1;
	if (listen(lfd, 64) != 0 || (a = malloc(sizeof(*a))) == NULL)
		goto fail;
	a->lfd = lfd;
	a->serve = serve;
	if (pthread_create(acceptor, NULL, accept_loop, a) != 0)
		goto fail;
	return lfd;
fail:
	free(a);
	close(lfd);
	return -1;
}

void
bp_unit_server_stop(int lfd, pthread_t acceptor)
{
	/* The acceptor blocks in accept(); shutting the socket down wakes it. */
	shutdown(lfd, SHUT_RDWR);
	close(lfd);
	pthread_join(acceptor, NULL);
}

int
bp_unit_threads(size_t n, void *(*fn)(void *))
{
	pthread_t t[BP_UNIT_THREADS_MAX];
	size_t i, started;
	int bad = 0;

	for (started = 0; started < n && started < BP_UNIT_THREADS_MAX; started++)
		if (pthread_create(&t[started], NULL, fn, (void *)started) != 0)
			break;
	bad += (int)(n - started);
	for (i = 0; i < started; i++) {
		void *rv;

		pthread_join(t[i], &rv);
		bad += rv != NULL;
	}
	return bad;
}

static int
cmp_suite(const void *a, const void *b)
{
	const struct bp_unit_suite *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

int
main(int argc, char *argv[])
{
	unsigned int failed;
	size_t i, j;
	int k;

	bp_log_set_level(BP_LOG_WARN);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	qsort(suites, nsuites, sizeof(suites[0]), cmp_suite);
	for (i = 0; i < nsuites; i++) {
		CU_pSuite cs;

		for (k = 1; k < argc && strcmp(argv[k], suites[i]->name) != 0; k++)
			;
		if (argc > 1 && k == argc)
			continue;
		cs = CU_add_suite(suites[i]->name, suites[i]->init, suites[i]->cleanup);
		if (cs == NULL)
			return 2;
		for (j = 0; j < suites[i]->ncases; j++)
			if (CU_add_test(cs, suites[i]->cases[j].name,
			    suites[i]->cases[j].fn) == NULL)
				return 2;
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	bp_unit_log_end();
	free(log_text);
	return failed == 0 ? 0 : 1;
}
