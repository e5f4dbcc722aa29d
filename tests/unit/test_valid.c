/*
 * lib/core/valid.c: the table of a JSON body's members. Table-driven with hostile rows (curl's
 * unit1302.c style): each body with the member the error must name first, or "" when it passes;
 * wrong types, empty and over-long strings, \xff, a NUL cJSON cuts short, a body that is not an
 * object. Then the uniform 400 body of bp_req_valid.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/http.h"
#include "core/util.h"
#include "core/valid.h"
#include "unit.h"

enum {
	F_OWNER,	/* 0 */
	F_CHAIN,	/* 1 */
	F_SALT,		/* 2 */
	F__MAX
};

static const struct bp_valid_field fields[F__MAX] = {
	{ "owner", BP_VALID_STRING, 1, 8, NULL },		/* F_OWNER */
	{ "chain", BP_VALID_STRING, 1, 0, NULL },		/* F_CHAIN */
	{ "salt", BP_VALID_STRING, 0, 4, "a number" },		/* F_SALT */
};

static void
test_rows(void)
{
	static const struct {
		const char	*json;
		const char	*why;	/* the start of the message; "" passes */
	} rows[] = {
		{ "{\"owner\":\"a\",\"chain\":\"c\"}", "" },
		{ "{\"owner\":\"12345678\",\"chain\":\"c\",\"salt\":\"1234\",\"x\":[1]}", "" },
		{ "{\"chain\":\"c\"}", "owner is required" },
		{ "{\"owner\":\"a\"}", "chain is required" },
		{ "{}", "owner is required" },
		{ "[]", "owner is required" },
		{ "\"owner\"", "owner is required" },
		{ "{\"owner\":1,\"chain\":\"c\"}", "owner must be a non-empty string" },
		{ "{\"owner\":null,\"chain\":\"c\"}", "owner must be a non-empty string" },
		{ "{\"owner\":[\"a\"],\"chain\":\"c\"}", "owner must be a non-empty string" },
		{ "{\"owner\":\"\",\"chain\":\"c\"}", "owner must be a non-empty string" },
		{ "{\"owner\":\"123456789\",\"chain\":\"c\"}", "owner is longer than 8" },
		{ "{\"owner\":\"\xff\xff\xff\xff\xff\xff\xff\xff\xff\",\"chain\":\"c\"}",
		    "owner is longer than 8" },
		/* The first row at fault is named, whatever the order of the members. */
		{ "{\"chain\":5,\"owner\":\"\"}", "owner must be" },
		{ "{\"owner\":\"a\",\"chain\":\"\"}", "chain must be a non-empty string" },
		{ "{\"owner\":\"a\",\"chain\":{}}", "chain must be a non-empty string" },
		{ "{\"owner\":\"a\",\"chain\":\"c\",\"salt\":7}",
		    "salt must be a non-empty string: a number" },
		{ "{\"owner\":\"a\",\"chain\":\"c\",\"salt\":\"12345\"}", "salt is longer than 4" },
		/* cJSON ends a string at a NUL (bp_json_find_nul refuses those before). */
		{ "{\"owner\":\"\\u0000123456789\",\"chain\":\"c\"}", "owner must be a non-empty" },
		/* A member name is matched exactly. */
		{ "{\"Owner\":\"a\",\"chain\":\"c\"}", "owner is required" },
	};
	const char *v[F__MAX];
	char why[128];
	size_t i;
	cJSON *j;
	int rc;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		CU_ASSERT_FATAL((j = cJSON_Parse(rows[i].json)) != NULL);
		why[0] = '\0';
		rc = bp_valid_body(j, fields, F__MAX, v, why, sizeof(why));
		if (rows[i].why[0] == '\0') {
			CU_ASSERT_EQUAL(rc, 0);
			CU_ASSERT(v[F_OWNER] != NULL && v[F_CHAIN] != NULL);
		} else {
			CU_ASSERT_EQUAL(rc, -1);
			if (strncmp(why, rows[i].why, strlen(rows[i].why)) != 0)
				CU_FAIL(rows[i].json);
		}
		cJSON_Delete(j);
	}
}

static void
test_values(void)
{
	const char *v[F__MAX];
	char why[16];	/* a short buffer: the message is cut, never overrun */
	cJSON *j = cJSON_Parse("{\"owner\":\"ab\",\"chain\":\"eth\"}");

	CU_ASSERT_FATAL(j != NULL);
	CU_ASSERT_EQUAL(bp_valid_body(j, fields, F__MAX, v, why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(v[F_OWNER], "ab");
	CU_ASSERT_STRING_EQUAL(v[F_CHAIN], "eth");
	CU_ASSERT_PTR_NULL(v[F_SALT]);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"owner\":\"ab\",\"chain\":\"eth\",\"salt\":[]}");
	CU_ASSERT_FATAL(j != NULL);
	CU_ASSERT_EQUAL(bp_valid_body(j, fields, F__MAX, v, why, sizeof(why)), -1);
	CU_ASSERT_EQUAL(strlen(why), sizeof(why) - 1);
	CU_ASSERT_EQUAL(strncmp(why, "salt must", 9), 0);
	cJSON_Delete(j);
}

static void
test_req(void)
{
	struct bp_req *r = malloc(sizeof(*r));
	const char *v[F__MAX];
	cJSON *j = cJSON_Parse("{\"owner\":\"a\"}"), *e, *m;

	CU_ASSERT_FATAL(r != NULL && j != NULL);
	bp_req_init(r);
	CU_ASSERT_EQUAL(bp_req_valid(r, j, fields, F__MAX, v), 400);
	CU_ASSERT_EQUAL(r->status, 400);
	cJSON_Delete(j);
	j = cJSON_ParseWithLength(r->out.data, r->out.len);
	CU_ASSERT_FATAL(j != NULL);
	e = cJSON_GetObjectItemCaseSensitive(j, "error");
	m = cJSON_GetObjectItemCaseSensitive(e, "message");
	CU_ASSERT(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "code")) &&
	    strcmp(cJSON_GetObjectItemCaseSensitive(e, "code")->valuestring,
	    "invalid_request") == 0);
	CU_ASSERT(cJSON_IsString(m) && strcmp(m->valuestring, "chain is required") == 0);
	cJSON_Delete(j);
	bp_req_reset(r);
	j = cJSON_Parse("{\"owner\":\"a\",\"chain\":\"c\"}");
	CU_ASSERT_EQUAL(bp_req_valid(r, j, fields, F__MAX, v), 0);
	cJSON_Delete(j);
	bp_req_free(r);
	free(r);
}

BP_UNIT_SUITE(valid, NULL, NULL,
	{ "body member table: hostile rows", test_rows },
	{ "values, and a message cut to its buffer", test_values },
	{ "bp_req_valid answers the uniform 400", test_req })
