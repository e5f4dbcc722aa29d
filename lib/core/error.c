/*
 * The shared error type of lib/ modules (lib/core/error.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "config.h"
#include "error.h"

int
bp_error_set(struct bp_error *err, int status, const char *code, const char *fmt, ...)
{
	va_list ap;

	err->status = status;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -1;
}

int
bp_error_db(struct bp_error *err)
{
	return bp_error_set(err, 500, "internal_error", "database error");
}

int
bp_error_node(struct bp_error *err, const struct bp_network *net)
{
	return bp_error_set(err, 500, "internal_error",
	    "the %s %s node did not answer; retry with exponential backoff", net->chain,
	    net->network);
}
