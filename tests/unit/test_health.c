/*
 * lib/net/health.c: marks shared by two mappings of one file (two processes), a mark that expires
 * handing one caller the probe while the others stay away, a probe's answer read by all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "net/health.h"
#include "unit.h"

#define URL	"http://127.0.0.1:1/"
#define SEC	INT64_C(1000000)

static void
test_marks(void)
{
	char dir[] = "/tmp/bp-unit-health.XXXXXX", path[64];
	struct bp_health *a, *b;
	int64_t now = 1000 * SEC;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/h", dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a = bp_health_open(path));
	CU_ASSERT_PTR_NOT_NULL_FATAL(b = bp_health_open(path));
	CU_ASSERT_EQUAL(bp_health_check(b, URL, now, SEC), BP_HEALTH_UP);
	bp_health_fail(a, URL, now + 3 * SEC);
	CU_ASSERT_EQUAL(bp_health_check(b, URL, now, SEC), BP_HEALTH_DOWN);
	CU_ASSERT(bp_health_down(b, URL, now));
	CU_ASSERT_EQUAL(bp_health_check(b, "http://127.0.0.1:2/", now, SEC), BP_HEALTH_UP);
	/* Expired: one probe, the others keep away until its lease ends or it reports. */
	now += 4 * SEC;
	CU_ASSERT_FALSE(bp_health_down(b, URL, now));
	CU_ASSERT_EQUAL(bp_health_check(b, URL, now, SEC), BP_HEALTH_PROBE);
	CU_ASSERT_EQUAL(bp_health_check(a, URL, now, SEC), BP_HEALTH_DOWN);
	CU_ASSERT_EQUAL(bp_health_check(a, URL, now + SEC / 2, SEC), BP_HEALTH_DOWN);
	/* The prober vanished: after its lease another probes. */
	CU_ASSERT_EQUAL(bp_health_check(a, URL, now + 2 * SEC, SEC), BP_HEALTH_PROBE);
	/* The probe failed: down again for everyone; then it answers: up for everyone. */
	bp_health_fail(a, URL, now + 10 * SEC);
	CU_ASSERT_EQUAL(bp_health_check(b, URL, now + 3 * SEC, SEC), BP_HEALTH_DOWN);
	bp_health_ok(b, URL);
	CU_ASSERT_EQUAL(bp_health_check(a, URL, now + 3 * SEC, SEC), BP_HEALTH_UP);
	bp_health_close(a);
	bp_health_close(b);
	CU_ASSERT_EQUAL(unlink(path), 0);
	rmdir(dir);
}

BP_UNIT_SUITE(health,
	NULL, NULL,
	{ "marks shared by two mappings, one probe of an expired mark", test_marks },
)
