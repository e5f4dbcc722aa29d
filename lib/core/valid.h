/*
 * The members of a JSON request body, checked at the edge against a table (kcgi's kvalid_*):
 * each row names a member, its type, whether it is required and its bounds, and one call checks
 * every row in order and stops at the first member at fault with a message that starts with its
 * name. Handlers and the lib/ functions that read a body (lib/gas/policy.c, lib/webhook/webhook.c)
 * then only see values that passed. The rules a domain adds (a known chain, an https url) stay
 * with the domain, after the table.
 *
 *	static const struct bp_valid_field f[] = {
 *		{ "owner", BP_VALID_STRING, 1, 64, NULL },
 *		{ "salt", BP_VALID_STRING, 0, 128, "a uint256 in decimal or 0x-prefixed hex" },
 *	};
 *	const char *v[BP_NITEMS(f)];
 *	if (bp_req_valid(r, body, f, BP_NITEMS(f), v) != 0)
 *		return r->status;
 */
#ifndef BP_VALID_H
#define BP_VALID_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct bp_req;

enum bp_valid_type {
	BP_VALID_STRING,	/* 0: a non-empty string, at most max bytes */
	BP_VALID__MAX
};

struct bp_valid_field {
	const char		*name;		/* the member */
	enum bp_valid_type	 type;
	int			 required;	/* 0: absent is fine (the value is NULL) */
	size_t			 max;		/* bytes; 0: no bound but the body's */
	const char		*hint;		/* NULL, or what a wrong type should have been */
};

/*
 * Checks the members of the JSON object body against the n rows of f, in order, and puts the
 * value of row i in val[i] (a string pointing into body; NULL when absent). Members not in the
 * table are not looked at. NULs inside strings must have been refused before (bp_json_find_nul),
 * as cJSON ends a string at its first NUL. Returns 0, or -1 with why (room for cap bytes)
 * starting with the name of the member at fault: "chain is required", "url must be a non-empty
 * string", "owner is longer than 64 characters".
 */
int	bp_valid_body(const cJSON *body, const struct bp_valid_field *f, size_t n,
	    const char **val, char *why, size_t cap);

/*
 * bp_valid_body for a handler: returns 0, or 400 with the uniform invalid_request error body
 * (SPEC.md section 7) naming the member set in r.
 */
int	bp_req_valid(struct bp_req *r, const cJSON *body, const struct bp_valid_field *f,
	    size_t n, const char **val);

#endif
