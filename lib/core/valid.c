/*
 * JSON body members checked against a table (valid.h).
 */
#include <stdio.h>
#include <string.h>

#include "http.h"
#include "valid.h"

/* Checks one member j (NULL: absent) against row f; 0, or -1 with why. */
static int
check(const cJSON *j, const struct bp_valid_field *f, const char **val, char *why, size_t cap)
{
	*val = NULL;
	if (j == NULL) {
		if (!f->required)
			return 0;
		snprintf(why, cap, "%s is required", f->name);
		return -1;
	}
	switch (f->type) {
	case BP_VALID_STRING:
		if (!cJSON_IsString(j) || j->valuestring == NULL || j->valuestring[0] == '\0') {
			snprintf(why, cap, "%s must be a non-empty string%s%s", f->name,
			    f->hint != NULL ? ": " : "", f->hint != NULL ? f->hint : "");
			return -1;
		}
		if (f->max > 0 && strlen(j->valuestring) > f->max) {
			snprintf(why, cap, "%s is longer than %zu characters", f->name, f->max);
			return -1;
		}
		*val = j->valuestring;
		return 0;
	default:
		/* A row of a type this file does not know is a programming error: refuse. */
		snprintf(why, cap, "%s cannot be checked", f->name);
		return -1;
	}
}

int
bp_valid_body(const cJSON *body, const struct bp_valid_field *f, size_t n, const char **val,
    char *why, size_t cap)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (check(cJSON_GetObjectItemCaseSensitive(body, f[i].name), &f[i], &val[i], why,
		    cap) == -1)
			return -1;
	return 0;
}

int
bp_req_valid(struct bp_req *r, const cJSON *body, const struct bp_valid_field *f, size_t n,
    const char **val)
{
	char why[256];

	if (bp_valid_body(body, f, n, val, why, sizeof(why)) == -1)
		return bp_error(r, 400, "invalid_request", "%s", why);
	return 0;
}
