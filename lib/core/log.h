/*
 * Logging to stderr, which is the web server's error log for FastCGI programs and the cron log
 * for workers. Each line carries the program name and, during a request, its request id.
 */
#ifndef BP_LOG_H
#define BP_LOG_H

#include <stdio.h>

enum bp_log_level {
	BP_LOG_ERR,	/* 0 */
	BP_LOG_WARN,	/* 1 */
	BP_LOG_INFO,	/* 2 */
	BP_LOG_DEBUG,	/* 3 */
	BP_LOG__MAX
};

/* Names the program in every line; call once at start. */
void	bp_log_init(const char *prog);
/* Sets the lowest level written (default BP_LOG_INFO). */
void	bp_log_set_level(enum bp_log_level);
/* Sends the lines to fp instead of stderr (NULL: back to stderr); the tests capture with it. */
void	bp_log_set_output(FILE *fp);
/* Sets (or clears with NULL) the request id added to each line. The string is copied. */
void	bp_log_set_request(const char *id);
void	bp_log(enum bp_log_level, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#define bp_err(...)	bp_log(BP_LOG_ERR, __VA_ARGS__)
#define bp_warn(...)	bp_log(BP_LOG_WARN, __VA_ARGS__)
#define bp_info(...)	bp_log(BP_LOG_INFO, __VA_ARGS__)

#endif
