/*
 * lib/nft/nft_doc.c: metadata documents (name, description, image, traits) with hostile rows:
 * wrong types, NULs, deep nesting, not an object, huge attributes.
 */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "nft/nft_doc.h"
#include "unit.h"

static void
test_fields(void)
{
	static const char doc[] = "{\"name\":\"Ape #1\",\"description\":\"d\\u00e9\","
	    "\"image\":\"ipfs://QmX/1.png\",\"attributes\":["
	    "{\"trait_type\":\"Level\",\"value\":7},{\"trait_type\":\"Speed\",\"value\":1.5},"
	    "{\"trait_type\":\"Big\",\"value\":12345678901234},{\"value\":\"no type\"},"
	    "{\"trait_type\":\"Rare\",\"value\":false},{\"trait_type\":3,\"value\":\"num type\"},"
	    "{\"trait_type\":\"Obj\",\"value\":{\"a\":1}},{\"trait_type\":\"Null\",\"value\":null},"
	    "{\"trait_type\":\"Arr\",\"value\":[1]},\"junk\",7,"
	    "{\"trait_type\":\"Q\\\"\",\"value\":\"a\\\\b\"}]}";
	struct bp_nft_doc d;

	CU_ASSERT_EQUAL_FATAL(bp_nft_doc_parse(doc, strlen(doc), &d), 0);
	CU_ASSERT_STRING_EQUAL(d.name, "Ape #1");
	CU_ASSERT_STRING_EQUAL(d.description, "d\xc3\xa9");
	CU_ASSERT_STRING_EQUAL(d.image, "ipfs://QmX/1.png");
	CU_ASSERT_PTR_NULL(d.banner);
	CU_ASSERT_STRING_EQUAL(d.traits, "[{\"trait_type\":\"Level\",\"value\":\"7\"},"
	    "{\"trait_type\":\"Speed\",\"value\":\"1.5\"},"
	    "{\"trait_type\":\"Big\",\"value\":\"12345678901234\"},"
	    "{\"trait_type\":\"\",\"value\":\"no type\"},"
	    "{\"trait_type\":\"Rare\",\"value\":\"false\"},"
	    "{\"trait_type\":\"3\",\"value\":\"num type\"},"
	    "{\"trait_type\":\"Q\\\"\",\"value\":\"a\\\\b\"}]");
	bp_nft_doc_free(&d);
	bp_nft_doc_free(&d);	/* twice is harmless */
}

static void
test_alternatives(void)
{
	struct bp_nft_doc d;
	static const char a[] = "{\"name\":12,\"image_url\":\"https://x/i.png\",\"banner_image\":"
	    "\"ar://b\",\"attributes\":\"not an array\",\"description\":[]}";
	static const char b[] = "{\"image\":5,\"image_url\":\"https://x/j.png\"}";

	CU_ASSERT_EQUAL_FATAL(bp_nft_doc_parse(a, strlen(a), &d), 0);
	CU_ASSERT_STRING_EQUAL(d.name, "12");
	CU_ASSERT_STRING_EQUAL(d.image, "https://x/i.png");
	CU_ASSERT_STRING_EQUAL(d.banner, "ar://b");
	CU_ASSERT_PTR_NULL(d.description);
	CU_ASSERT_STRING_EQUAL(d.traits, "[]");
	bp_nft_doc_free(&d);
	CU_ASSERT_EQUAL_FATAL(bp_nft_doc_parse(b, strlen(b), &d), 0);
	CU_ASSERT_STRING_EQUAL(d.image, "https://x/j.png");
	CU_ASSERT_PTR_NULL(d.name);
	bp_nft_doc_free(&d);
}

static void
test_refused(void)
{
	static const char *const bad[] = { "", "[]", "\"x\"", "12", "null", "{", "{\"a\":}",
		"{\"name\":\"a\"} trailing", "\xff\xfe{}" };
	struct bp_nft_doc d;
	char deep[200], nul[] = "{\"name\":\"a\0b\"}";
	size_t i;

	for (i = 0; i < BP_NITEMS(bad); i++) {
		if (bp_nft_doc_parse(bad[i], strlen(bad[i]), &d) != -1)
			CU_FAIL(bad[i]);
		CU_ASSERT_PTR_NULL(d.traits);
	}
	CU_ASSERT_EQUAL(bp_nft_doc_parse(nul, sizeof(nul) - 1, &d), -1);
	CU_ASSERT_EQUAL(bp_nft_doc_parse(NULL, 0, &d), -1);
	memset(deep, '[', sizeof(deep));
	deep[0] = '{';
	memcpy(deep + 1, "\"a\":", 4);
	CU_ASSERT_EQUAL(bp_nft_doc_parse(deep, sizeof(deep), &d), -1);
}

static void
test_json_helpers(void)
{
	struct bp_buf b;

	bp_buf_init(&b, 64);
	CU_ASSERT_EQUAL(bp_nft_json_str_or_null(&b, NULL), 0);
	CU_ASSERT_EQUAL(bp_nft_json_member(&b, "n", "a\"\x01"), 0);
	CU_ASSERT_STRING_EQUAL(b.data, "null,\"n\":\"a\\\"\\u0001\"");
	bp_buf_free(&b);
}

BP_UNIT_SUITE(nft_doc, NULL, NULL,
	{ "fields and traits (numbers, booleans, missing trait_type)", test_fields },
	{ "image_url, banner_image, numbers as names, wrong types", test_alternatives },
	{ "not an object, NULs, depth, trailing bytes", test_refused },
	{ "JSON string helpers", test_json_helpers })
