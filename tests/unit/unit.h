/*
 * Unit test registration. Each tests/unit/test_*.c file registers its suite with
 * BP_UNIT_SUITE(name, setup, teardown, { "case", fn }, ...); main.c runs them all with CUnit.
 * No list to edit: a new test file is picked up by the Makefile's wildcard and registers itself.
 */
#ifndef BP_UNIT_H
#define BP_UNIT_H

#include <pthread.h>

#include <CUnit/CUnit.h>

struct bp_unit_case {
	const char	*name;
	CU_TestFunc	 fn;
};

struct bp_unit_suite {
	const char			*name;
	CU_InitializeFunc		 init;
	CU_CleanupFunc			 cleanup;
	const struct bp_unit_case	*cases;
	size_t				 ncases;
};

/*
 * Negative tests log errors on purpose: bp_unit_log_begin() captures the log instead of printing
 * it, bp_unit_log_end() stops and returns what was logged meanwhile (valid until the next
 * begin), so a test both keeps a passing run's output clean and asserts the error was logged.
 */
void		 bp_unit_log_begin(void);
const char	*bp_unit_log_end(void);

/* Adds a suite to the run; called from the constructor that BP_UNIT_SUITE defines. */
void	bp_unit_register(const struct bp_unit_suite *);

/*
 * Waits, when less than 200 ms of the current second are left, for the next one: a few calls
 * that must fall in one second (rate limits) then do.
 */
void	bp_unit_fresh_second(void);

/*
 * Runs fn in n threads at once (at most BP_UNIT_THREADS_MAX), each given its index as the
 * argument; returns how many returned non-NULL or could not start.
 */
#define BP_UNIT_THREADS_MAX	64
int	bp_unit_threads(size_t n, void *(*fn)(void *));

/* Sends all n bytes on fd (no SIGPIPE when the peer hung up); 0, or -1 when it could not. */
int	bp_unit_send_all(int fd, const void *p, size_t n);

/*
 * Reads the next HTTP request of a keep-alive connection fd into buf (room for cap; *have
 * bytes already there): 0 with the header's length in *hlen and the body's (Content-Length)
 * in *blen, or -1 when the peer closed or the request does not fit. Once served, the caller
 * drops it with bp_unit_request_done(buf, have, *hlen + *blen).
 */
int	bp_unit_read_request(int fd, char *buf, size_t cap, size_t *have, size_t *hlen,
	    size_t *blen);
void	bp_unit_request_done(char *buf, size_t *have, size_t n);

/*
 * Serves the keep-alive connection fd, then closes it: every request gets 200 and the JSON body
 * (len bytes), after seen (when not NULL) was shown the request's body. A node that answers
 * every call alike.
 */
void	bp_unit_serve_json(int fd, const char *body, size_t len,
	    void (*seen)(const char *, size_t));

/*
 * A TCP socket bound to 127.0.0.1 on a free port (not listening yet), with *port set; -1 on
 * failure. For the test servers the HTTP clients are pointed at.
 */
int	bp_unit_bind_loopback(int *port);

/*
 * A test server on 127.0.0.1 (bp_unit_bind_loopback, *port set): a thread of its own
 * (*acceptor) accepts connections and serves each in a detached thread, serve(fd cast to a
 * pointer), which closes it. Returns the listening socket, or -1. bp_unit_server_stop shuts it
 * down (which wakes accept), closes it and joins the acceptor.
 */
int	bp_unit_server_start(int *port, void *(*serve)(void *), pthread_t *acceptor);
void	bp_unit_server_stop(int lfd, pthread_t acceptor);

/*
 * A config for bp_upstream_new and a network "t.NAME" (zero elsewhere) whose one upstream is
 * the test server on port.
 */
struct bp_config;
struct bp_network;
void	bp_unit_node_config(struct bp_config *cfg, struct bp_network *net, const char *network,
	    int port);

#define BP_UNIT_SUITE(sname, sinit, scleanup, ...)				\
	static const struct bp_unit_case sname##_cases[] = { __VA_ARGS__ };	\
	static const struct bp_unit_suite sname##_suite = { #sname, sinit,	\
	    scleanup, sname##_cases,						\
	    sizeof(sname##_cases) / sizeof(sname##_cases[0]) };		\
	__attribute__((constructor)) static void sname##_register(void)	\
	{ bp_unit_register(&sname##_suite); }

#endif
