/*
 * Upstream health shared by every thread and process of the host: a small memory-mapped file
 * (next to the limits file) with one slot per upstream URL. A URL that failed is marked down
 * until a time; every process then skips it at once instead of each learning of the failure by
 * waiting out its own timeout. When the mark expires, one request (the one that wins a lease)
 * probes the URL while the others keep using the next upstream. Times are CLOCK_MONOTONIC
 * microseconds (bp_mono_us), which all processes of a boot share. See docs/rpc.md.
 */
#ifndef BP_HEALTH_H
#define BP_HEALTH_H

#include <stdint.h>

struct bp_health;

enum bp_health_state {
	BP_HEALTH_UP,		/* 0: use it */
	BP_HEALTH_DOWN,		/* 1: skip it */
	BP_HEALTH_PROBE,	/* 2: the mark expired and this caller probes it: use it */
	BP_HEALTH__MAX
};

/* Maps (creating if needed) the file at path; NULL after logging why. */
struct bp_health	*bp_health_open(const char *path);
void			 bp_health_close(struct bp_health *);
/*
 * Shares the marks with the other heads through Redis at url (redis://; the limits' server): a
 * mark one head sets reaches the others within 100 ms, and lasts as long there. 0, or -1 when
 * url is not valid. Redis down: each head keeps its own marks, as without it.
 */
int			 bp_health_share(struct bp_health *, const char *url);

/*
 * The state of url at now. A URL whose mark has expired is BP_HEALTH_PROBE for one caller per
 * lease_us (it then reports back with bp_health_ok or bp_health_fail) and DOWN for the others.
 * A URL the table has no room for is UP.
 */
enum bp_health_state bp_health_check(struct bp_health *, const char *url, int64_t now,
		    int64_t lease_us);
/* 1 when url is marked down at now (no lease taken). */
int		 bp_health_down(struct bp_health *, const char *url, int64_t now);
/* url answered: it is up for everyone. */
void		 bp_health_ok(struct bp_health *, const char *url);
/* url failed: it is down for everyone until until (monotonic microseconds). */
void		 bp_health_fail(struct bp_health *, const char *url, int64_t until);

#endif
