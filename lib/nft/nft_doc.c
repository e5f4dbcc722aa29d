/*
 * NFT metadata documents: parsing and re-rendering (nft_doc.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/http.h"
#include "nft_doc.h"

/*
 * A number as text: integers without a fraction or exponent ("7", "-3"), others as the
 * shortest %g form that reads back to the same double.
 */
static void
number_text(double v, char *out, size_t cap)
{
	if (!isfinite(v)) {
		snprintf(out, cap, "0");
		return;
	}
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		snprintf(out, cap, "%.0f", v);
		return;
	}
	snprintf(out, cap, "%.15g", v);
	if (strtod(out, NULL) != v)
		snprintf(out, cap, "%.17g", v);
}

/* The text of a string or number member (a copy owned by the caller), else NULL. */
static char *
text_of(const cJSON *j)
{
	char num[40];

	if (cJSON_IsString(j) && j->valuestring != NULL) {
		if (strlen(j->valuestring) > BP_NFT_FIELD_MAX)
			return NULL;
		return strdup(j->valuestring);
	}
	if (cJSON_IsNumber(j)) {
		number_text(j->valuedouble, num, sizeof(num));
		return strdup(num);
	}
	return NULL;
}

/* A trait's value as text: strings, numbers, booleans. 0, or -1 when of another type. */
static int
trait_value(const cJSON *v, char *num, size_t cap, const char **out)
{
	if (cJSON_IsString(v) && v->valuestring != NULL)
		*out = v->valuestring;
	else if (cJSON_IsNumber(v)) {
		number_text(v->valuedouble, num, cap);
		*out = num;
	} else if (cJSON_IsBool(v))
		*out = cJSON_IsTrue(v) ? "true" : "false";
	else
		return -1;
	return 0;
}

int
bp_nft_json_str_or_null(struct bp_buf *b, const char *s)
{
	if (s == NULL)
		return bp_buf_adds(b, "null");
	if (bp_buf_adds(b, "\"") == -1 || bp_buf_json_str(b, s) == -1 || bp_buf_adds(b, "\"") == -1)
		return -1;
	return 0;
}

int
bp_nft_json_member(struct bp_buf *b, const char *name, const char *s)
{
	/* Plain appends: a page of the owned list calls this 150 times (printf was a fifth of it). */
	if (bp_buf_adds(b, ",\"") == -1 || bp_buf_adds(b, name) == -1 || bp_buf_adds(b, "\":") == -1)
		return -1;
	return bp_nft_json_str_or_null(b, s);
}

/* Renders attributes (any JSON value) as our traits array into b. 0 or -1 (too large). */
static int
render_traits(const cJSON *attrs, struct bp_buf *b)
{
	const cJSON *a, *tt, *v;
	const char *type, *value;
	char num[40], tnum[40];
	int first = 1;

	if (bp_buf_adds(b, "[") == -1)
		return -1;
	if (!cJSON_IsArray(attrs))
		attrs = NULL;
	cJSON_ArrayForEach(a, attrs) {
		if (!cJSON_IsObject(a))
			continue;
		v = cJSON_GetObjectItemCaseSensitive(a, "value");
		if (trait_value(v, num, sizeof(num), &value) == -1)
			continue;
		tt = cJSON_GetObjectItemCaseSensitive(a, "trait_type");
		if (trait_value(tt, tnum, sizeof(tnum), &type) == -1)
			type = "";
		if ((!first && bp_buf_adds(b, ",") == -1) ||
		    bp_buf_adds(b, "{\"trait_type\":") == -1 ||
		    bp_nft_json_str_or_null(b, type) == -1 || bp_buf_adds(b, ",\"value\":") == -1 ||
		    bp_nft_json_str_or_null(b, value) == -1 || bp_buf_adds(b, "}") == -1)
			return -1;
		first = 0;
	}
	return bp_buf_adds(b, "]");
}

int
bp_nft_doc_parse(const char *json, size_t len, struct bp_nft_doc *doc)
{
	struct bp_buf traits;
	const cJSON *img;
	const char *end = NULL;
	cJSON *root = NULL;
	int rc = -1;

	memset(doc, 0, sizeof(*doc));
	bp_buf_init(&traits, BP_NFT_TRAITS_MAX);
	if (json == NULL || len == 0 || memchr(json, '\0', len) != NULL ||
	    !bp_json_depth_ok(json, len, BP_NFT_DOC_DEPTH))
		goto out;
	if ((root = cJSON_ParseWithLengthOpts(json, len, &end, 0)) == NULL || !cJSON_IsObject(root))
		goto out;
	/* Strict: nothing but white space may follow the object. */
	for (; end < json + len; end++)
		if (*end != ' ' && *end != '\t' && *end != '\r' && *end != '\n')
			goto out;
	doc->name = text_of(cJSON_GetObjectItemCaseSensitive(root, "name"));
	doc->description = text_of(cJSON_GetObjectItemCaseSensitive(root, "description"));
	img = cJSON_GetObjectItemCaseSensitive(root, "image");
	if (!cJSON_IsString(img))
		img = cJSON_GetObjectItemCaseSensitive(root, "image_url");
	if (cJSON_IsString(img))
		doc->image = text_of(img);
	img = cJSON_GetObjectItemCaseSensitive(root, "banner_image");
	if (cJSON_IsString(img))
		doc->banner = text_of(img);
	if (render_traits(cJSON_GetObjectItemCaseSensitive(root, "attributes"), &traits) == -1)
		goto out;
	doc->traits = traits.data;
	traits.data = NULL;
	rc = 0;
out:
	if (rc == -1)
		bp_nft_doc_free(doc);
	bp_buf_free(&traits);
	cJSON_Delete(root);
	return rc;
}

void
bp_nft_doc_free(struct bp_nft_doc *doc)
{
	if (doc == NULL)
		return;
	free(doc->name);
	free(doc->description);
	free(doc->image);
	free(doc->banner);
	free(doc->traits);
	memset(doc, 0, sizeof(*doc));
}
