/*
 * Operator metrics (docs/metrics.md): counters every process and thread of a web head adds to
 * in a small mapped file next to the limits file (LIMITS_FILE-metrics), and the Prometheus text
 * exposition of them and of what the database knows, served at /metrics to loopback and the
 * addresses of [server] metrics_allow only.
 *
 * A series is named by its whole text, "family{label=\"value\",...}", from values the program
 * bounds (a route table's pattern, never a raw path; a configured network; a status code), so
 * the table cannot fill with what clients send. Adding is one atomic add on the request path,
 * without a lock; the first add of a series claims its slot with one compare-and-swap.
 */
#ifndef BP_METRICS_H
#define BP_METRICS_H

#include <stdint.h>

struct bp_buf;
struct bp_config;
struct bp_db;
struct bp_req;

struct bp_metrics;

/*
 * Maps cfg's counter file (creating it). NULL, after logging why, when there is none (no
 * limits file, as in unit tests) or it cannot be mapped: every call below takes NULL and does
 * nothing, so metrics never stop a request.
 */
struct bp_metrics *bp_metrics_open(const struct bp_config *cfg);
/* The same for a file named path (the unit tests). */
struct bp_metrics *bp_metrics_open_path(const char *path);
void		 bp_metrics_close(struct bp_metrics *);
/* Creates the file when missing (the admin CLI, so that it gets the limits file's owner). */
int		 bp_metrics_init(const struct bp_config *cfg);

/* Adds n (negative for a gauge going down) to the counter or gauge series. */
void		 bp_metrics_add(struct bp_metrics *, const char *series, int64_t n);
/* The same for a series formatted from fmt. */
void		 bp_metrics_addf(struct bp_metrics *, int64_t n, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
/* Records one observation of us microseconds in the histogram series (seconds buckets). */
void		 bp_metrics_observe(struct bp_metrics *, const char *series, int64_t us);
/* The value of a counter or gauge series (0 when it has none): tests and the renderer. */
int64_t		 bp_metrics_value(struct bp_metrics *, const char *series);

/* One answered request of program (app name), counted by route pattern, method and status. */
void		 bp_metrics_request(struct bp_metrics *, const char *program,
		    const char *route, const char *method, int status);

/* Appends the exposition of every series in the file to out; 0, or -1 when out of memory. */
int		 bp_metrics_render(struct bp_metrics *, struct bp_buf *out);

/*
 * What the database knows, written at a scrape by the module that owns the table: a source
 * appends whole families (bp_metrics_family, then bp_metrics_sample) to out; 0, or -1 on a
 * database error (the scrape then says so in blockport_scrape_errors and goes on).
 */
typedef int (*bp_metrics_source)(struct bp_db *, const struct bp_config *, struct bp_buf *out);
/* "# HELP" and "# TYPE" lines of a family. */
int		 bp_metrics_family(struct bp_buf *, const char *name, const char *type,
		    const char *help);
/* One sample: labels is the text between the braces ("" for none). */
int		 bp_metrics_sample(struct bp_buf *, const char *name, const char *labels,
		    double value);

/*
 * A family read by one statement of a source: sql gives rows of (label value, number), or one
 * row of (number) when label is NULL; each becomes a sample. 0, or -1 on a database error.
 */
int		 bp_metrics_query(struct bp_db *, struct bp_buf *out, const char *name,
		    const char *type, const char *help, const char *label, const char *sql);

/*
 * Whether a client at addr (REMOTE_ADDR: the peer the web server saw; a forwarded header is
 * never read) may read /metrics: loopback (127.0.0.0/8, ::1) and the addresses and CIDR blocks
 * of allow, a comma- or space-separated list ("10.0.0.0/8, 192.0.2.7, fd00::/8").
 */
int		 bp_metrics_allowed(const char *allow, const char *addr);
/* 0 when allow parses; else -1 with why in err (the config check). */
int		 bp_metrics_allow_check(const char *allow, char *err, size_t errlen);

/*
 * The handler of GET /metrics: the file's series and those of the sources, as text/plain;
 * version=0.0.4. The pipeline has checked the address (BP_ROUTE_OPERATOR).
 */
int		 bp_metrics_serve(struct bp_req *, const bp_metrics_source *, size_t n);

#endif
