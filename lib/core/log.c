#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"

static const char *log_prog = "blockport";
static enum bp_log_level log_level = BP_LOG_INFO;
static _Thread_local char log_req[40];	/* each request thread logs its own id */
static FILE *log_out;		/* NULL: stderr */

static const char *const level_names[BP_LOG__MAX] = {
	"error",	/* BP_LOG_ERR */
	"warn",		/* BP_LOG_WARN */
	"info",		/* BP_LOG_INFO */
	"debug",	/* BP_LOG_DEBUG */
};

void
bp_log_init(const char *prog)
{
	log_prog = prog;
}

void
bp_log_set_level(enum bp_log_level l)
{
	log_level = l;
}

void
bp_log_set_output(FILE *fp)
{
	log_out = fp;
}

void
bp_log_set_request(const char *id)
{
	if (id == NULL)
		log_req[0] = '\0';
	else
		snprintf(log_req, sizeof(log_req), "%s", id);
}

void
bp_log(enum bp_log_level level, const char *fmt, ...)
{
	char line[1024], ts[32];
	struct tm tm;
	time_t now;
	va_list ap;
	int n;

	if (level > log_level || level >= BP_LOG__MAX)
		return;
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(line, sizeof(line), "%s %s[%s]%s%s: ", ts, log_prog,
	    level_names[level], log_req[0] ? " req=" : "", log_req);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(log_out != NULL ? log_out : stderr, "%s\n", line);
}
