/*
 * A growing byte buffer with a cap fixed at creation (curl's dynbuf). Appends past the cap fail
 * and leave the buffer as it was. The data is always NUL-terminated for convenience.
 */
#ifndef BP_BUF_H
#define BP_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct bp_buf {
	char	*data;
	size_t	 len;
	size_t	 size;
	size_t	 cap;
};

/* Starts an empty buffer that may hold at most cap bytes. Nothing is allocated yet. */
void	bp_buf_init(struct bp_buf *, size_t cap);
/* Frees the data; the buffer may be used again after bp_buf_init. bp_buf_free(NULL) is a no-op. */
void	bp_buf_free(struct bp_buf *);
/* Empties the buffer, keeping its memory. */
void	bp_buf_reset(struct bp_buf *);
/* Appends bytes; 0 on success, -1 when the cap would be passed or memory is short. */
int	bp_buf_add(struct bp_buf *, const void *, size_t);
/* Appends a NUL-terminated string; as bp_buf_add. */
int	bp_buf_adds(struct bp_buf *, const char *);
/* Appends printf-formatted text; as bp_buf_add. */
int	bp_buf_printf(struct bp_buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	bp_buf_vprintf(struct bp_buf *, const char *, va_list);
/*
 * Appends s as the body of a JSON string (escaped, without the quotes); as bp_buf_add. Bytes that
 * are not well-formed UTF-8 become U+FFFD, so the result is valid JSON whatever s holds.
 */
int	bp_buf_json_str(struct bp_buf *, const char *s);
/*
 * Appends the member ,"name":"2024-01-02T03:04:05Z" (UTC, ISO 8601) of the Unix time t, or
 * ,"name":null when t < 0 (not known); name is written as it is, so a literal. 0, or -1 when
 * full (then b is as it was).
 */
int	bp_buf_json_time(struct bp_buf *, const char *name, int64_t t);

#endif
