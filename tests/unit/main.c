/*
 * The CUnit runner: every suite that registered itself (see unit.h), in name order so the output
 * is stable. Exits non-zero when any assertion failed. An optional argument runs one suite.
 * The log shows warnings and errors only (no "applied migration" lines); a test that expects an
 * error captures it with bp_unit_log_begin/end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "log.h"
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

	bp_log_set_level(BP_LOG_WARN);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	qsort(suites, nsuites, sizeof(suites[0]), cmp_suite);
	for (i = 0; i < nsuites; i++) {
		CU_pSuite cs;

		if (argc > 1 && strcmp(argv[1], suites[i]->name) != 0)
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
