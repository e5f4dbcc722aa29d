/*
 * The fallback program: every path that no resource program owns (an unknown /v1 resource, or
 * anything outside /v1) is authenticated and counted like any request, then answered 404
 * not_found in the uniform body (SPEC.md sections 7 and 9).
 */
#include "core/fcgi.h"

/* No routes: every request that passes authentication and the limits is a 404. */
static const struct bp_app app = { "v1", NULL, 0, NULL, NULL };

int
main(void)
{
	return bp_fcgi_main_threads(&app, NULL);	/* stateless: thread-safe as it is */
}
