/*
 * lib/core/buf.c: the cap (appends past it fail and leave the buffer as it was), printf, reuse, and
 * JSON string escaping of quotes, control characters and bytes that are not UTF-8.
 */
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/util.h"
#include "unit.h"

static void
test_cap(void)
{
	struct bp_buf b;
	char big[300];

	bp_buf_init(&b, 8);
	CU_ASSERT_PTR_NULL(b.data);				/* nothing allocated yet */
	CU_ASSERT_EQUAL(bp_buf_add(&b, "abc", 3), 0);
	CU_ASSERT_EQUAL(bp_buf_add(&b, "defgh", 5), 0);		/* exactly the cap */
	CU_ASSERT_EQUAL(b.len, 8);
	CU_ASSERT_STRING_EQUAL(b.data, "abcdefgh");
	CU_ASSERT_EQUAL(bp_buf_add(&b, "i", 1), -1);		/* one past */
	CU_ASSERT_EQUAL(bp_buf_adds(&b, "i"), -1);
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%d", 1), -1);
	CU_ASSERT_EQUAL(b.len, 8);
	CU_ASSERT_STRING_EQUAL(b.data, "abcdefgh");		/* unchanged */
	CU_ASSERT_EQUAL(bp_buf_add(&b, "", 0), 0);		/* nothing is always room */
	CU_ASSERT_EQUAL(bp_buf_add(&b, "x", SIZE_MAX), -1);	/* lengths that would wrap */
	CU_ASSERT_EQUAL(bp_buf_add(&b, "x", SIZE_MAX - 4), -1);
	CU_ASSERT(b.size <= b.cap + 1);				/* never allocates past the cap */
	bp_buf_reset(&b);
	CU_ASSERT_EQUAL(b.len, 0);
	CU_ASSERT_STRING_EQUAL(b.data, "");
	CU_ASSERT_EQUAL(bp_buf_add(&b, "12345678", 8), 0);	/* memory kept and reused */
	bp_buf_free(&b);
	CU_ASSERT_PTR_NULL(b.data);
	bp_buf_free(&b);					/* twice is harmless */
	bp_buf_free(NULL);

	/* NUL bytes are data; the buffer stays NUL-terminated after them. */
	bp_buf_init(&b, 16);
	CU_ASSERT_EQUAL(bp_buf_add(&b, "a\0b", 3), 0);
	CU_ASSERT_EQUAL(b.len, 3);
	CU_ASSERT(memcmp(b.data, "a\0b\0", 4) == 0);
	bp_buf_free(&b);

	/* A cap of 0 holds only the empty string. */
	bp_buf_init(&b, 0);
	CU_ASSERT_EQUAL(bp_buf_add(&b, "", 0), 0);
	CU_ASSERT_STRING_EQUAL(b.data, "");
	CU_ASSERT_EQUAL(bp_buf_add(&b, "a", 1), -1);
	bp_buf_free(&b);

	/* Growing in many steps up to a cap that is not a power of two. */
	memset(big, 'z', sizeof(big));
	bp_buf_init(&b, 1000);
	CU_ASSERT_EQUAL(bp_buf_add(&b, big, 300), 0);
	CU_ASSERT_EQUAL(bp_buf_add(&b, big, 300), 0);
	CU_ASSERT_EQUAL(bp_buf_add(&b, big, 300), 0);
	CU_ASSERT_EQUAL(bp_buf_add(&b, big, 101), -1);
	CU_ASSERT_EQUAL(bp_buf_add(&b, big, 100), 0);
	CU_ASSERT_EQUAL(b.len, 1000);
	CU_ASSERT_EQUAL(b.data[1000], '\0');
	bp_buf_free(&b);
}

static void
test_printf(void)
{
	struct bp_buf b;

	bp_buf_init(&b, 10);
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%s-%d", "ab", 42), 0);
	CU_ASSERT_STRING_EQUAL(b.data, "ab-42");
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%05d", 7), 0);	/* exactly the cap */
	CU_ASSERT_STRING_EQUAL(b.data, "ab-4200007");
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%s", ""), 0);
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%c", 'x'), -1);
	CU_ASSERT_STRING_EQUAL(b.data, "ab-4200007");
	bp_buf_reset(&b);
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%lld", (long long)INT64_MIN), -1);	/* 20 chars */
	CU_ASSERT_EQUAL(b.len, 0);
	bp_buf_free(&b);
	/* Formatted into the room there is first: a text past the room is formatted again. */
	bp_buf_init(&b, 1000);
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%s", "0123456789"), 0);	/* 256 bytes held */
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%300s|", "x"), 0);
	CU_ASSERT_EQUAL(b.len, 311);
	CU_ASSERT(b.len == strlen(b.data) && strcmp(b.data + 305, "    x|") == 0);
	CU_ASSERT_EQUAL(strncmp(b.data, "0123456789   ", 13), 0);
	bp_buf_free(&b);
	/* Past the cap after a part was written into the room: the buffer is as it was. */
	bp_buf_init(&b, 20);
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%s", "0123456789"), 0);	/* 21 bytes held */
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%s", "abcdefghijklmnop"), -1);
	CU_ASSERT_EQUAL(b.len, 10);
	CU_ASSERT_STRING_EQUAL(b.data, "0123456789");
	CU_ASSERT_EQUAL(bp_buf_printf(&b, "%s", "abcdefghij"), 0);	/* exactly the room */
	CU_ASSERT_STRING_EQUAL(b.data, "0123456789abcdefghij");
	bp_buf_free(&b);
}

struct jrow {
	const char	*in;
	const char	*out;
};

static const struct jrow jrows[] = {
	{ "", "" },
	{ "plain text", "plain text" },
	{ "\"quoted\"", "\\\"quoted\\\"" },
	{ "back\\slash", "back\\\\slash" },
	{ "/", "/" },
	{ "tab\there", "tab\\there" },
	{ "\r\n", "\\r\\n" },
	{ "\x01\x02\x1f", "\\u0001\\u0002\\u001f" },
	{ "\x08\x0c", "\\u0008\\u000c" },
	{ "\x7f", "\x7f" },					/* DEL needs no escape */
	{ " ", " " },
	/* Well-formed UTF-8 passes through: 2, 3 and 4 bytes, the highest code point. */
	{ "caf\xc3\xa9", "caf\xc3\xa9" },
	{ "\xe2\x82\xac", "\xe2\x82\xac" },
	{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },
	{ "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf" },
	{ "\xed\x9f\xbf", "\xed\x9f\xbf" },				/* U+D7FF */
	{ "\xee\x80\x80", "\xee\x80\x80" },				/* U+E000 */
	/* Anything else becomes U+FFFD, one per stray byte. */
	{ "\xff", "\\ufffd" },
	{ "a\xfe" "b", "a\\ufffdb" },
	{ "\x80", "\\ufffd" },					/* lone continuation */
	{ "\xc3", "\\ufffd" },					/* cut short at the end */
	{ "\xc3" "a", "\\ufffda" },
	{ "\xe2\x82", "\\ufffd\\ufffd" },
	{ "\xc0\xaf", "\\ufffd\\ufffd" },				/* overlong '/' */
	{ "\xc1\xbf", "\\ufffd\\ufffd" },
	{ "\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd" },			/* overlong */
	{ "\xf0\x80\x80\xaf", "\\ufffd\\ufffd\\ufffd\\ufffd" },	/* overlong */
	{ "\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd" },			/* surrogate U+D800 */
	{ "\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd" },	/* U+110000 */
	{ "\xf5\x80\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd" },
	{ "\"\xff\\\x01", "\\\"\\ufffd\\\\\\u0001" },
};

static void
test_json_str(void)
{
	size_t i;

	for (i = 0; i < BP_NITEMS(jrows); i++) {
		struct bp_buf b;
		cJSON *j;

		bp_buf_init(&b, 1024);
		CU_ASSERT_EQUAL(bp_buf_adds(&b, "\""), 0);
		CU_ASSERT_EQUAL(bp_buf_json_str(&b, jrows[i].in), 0);
		CU_ASSERT_EQUAL(b.len - 1, strlen(jrows[i].out));
		CU_ASSERT(strcmp(b.data + 1, jrows[i].out) == 0);
		if (strcmp(b.data + 1, jrows[i].out) != 0)
			fprintf(stderr, "json row %zu: got %s\n", i, b.data + 1);
		/* Whatever the input, the result is a JSON string a parser takes. */
		CU_ASSERT_EQUAL(bp_buf_adds(&b, "\""), 0);
		j = cJSON_Parse(b.data);
		CU_ASSERT(j != NULL && cJSON_IsString(j));
		cJSON_Delete(j);
		bp_buf_free(&b);
	}
}

static void
test_json_str_cap(void)
{
	struct bp_buf b;

	/* An escape that does not fit leaves the buffer as it was, like any append. */
	bp_buf_init(&b, 8);
	CU_ASSERT_EQUAL(bp_buf_adds(&b, "ab"), 0);
	CU_ASSERT_EQUAL(bp_buf_json_str(&b, "cd\x01"), -1);	/* cd\u0001 is 8 bytes */
	CU_ASSERT_EQUAL(b.len, 2);
	CU_ASSERT_STRING_EQUAL(b.data, "ab");
	CU_ASSERT_EQUAL(bp_buf_json_str(&b, "\"\"\""), 0);	/* exactly 6 */
	CU_ASSERT_STRING_EQUAL(b.data, "ab\\\"\\\"\\\"");
	CU_ASSERT_EQUAL(bp_buf_json_str(&b, "x"), -1);
	CU_ASSERT_EQUAL(b.len, 8);
	bp_buf_free(&b);
}

static void
test_json_time(void)
{
	struct bp_buf b;

	bp_buf_init(&b, 64);
	CU_ASSERT_EQUAL(bp_buf_json_time(&b, "at", 0), 0);
	CU_ASSERT_EQUAL(bp_buf_json_time(&b, "never", -1), 0);
	CU_ASSERT_STRING_EQUAL(b.data, ",\"at\":\"1970-01-01T00:00:00Z\",\"never\":null");
	/* Past the cap: nothing of it is left. */
	CU_ASSERT_EQUAL(bp_buf_json_time(&b, "created_at", 1700000000), -1);
	CU_ASSERT_EQUAL(b.len, strlen(",\"at\":\"1970-01-01T00:00:00Z\",\"never\":null"));
	bp_buf_free(&b);
}

BP_UNIT_SUITE(buf, NULL, NULL,
	{ "cap, reset, reuse, NUL bytes", test_cap },
	{ "printf within and past the cap", test_printf },
	{ "JSON string escaping table", test_json_str },
	{ "JSON escaping at the cap", test_json_str_cap },
	{ "JSON times, and null for an unknown one", test_json_time })
