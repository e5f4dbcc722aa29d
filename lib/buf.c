#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void
bp_buf_init(struct bp_buf *b, size_t cap)
{
	b->data = NULL;
	b->len = b->size = 0;
	b->cap = cap;
}

void
bp_buf_free(struct bp_buf *b)
{
	if (b == NULL)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->size = 0;
}

void
bp_buf_reset(struct bp_buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

static int
grow(struct bp_buf *b, size_t need)
{
	size_t nsize;
	char *p;

	if (need > b->cap || need + 1 < need)
		return -1;
	if (need + 1 <= b->size)
		return 0;
	nsize = b->size ? b->size : 256;
	while (nsize < need + 1)
		nsize *= 2;
	if (nsize > b->cap + 1)
		nsize = b->cap + 1;
	if ((p = realloc(b->data, nsize)) == NULL)
		return -1;
	b->data = p;
	b->size = nsize;
	return 0;
}

int
bp_buf_add(struct bp_buf *b, const void *p, size_t n)
{
	if (n > b->cap - b->len || grow(b, b->len + n) == -1)
		return -1;
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int
bp_buf_adds(struct bp_buf *b, const char *s)
{
	return bp_buf_add(b, s, strlen(s));
}

int
bp_buf_vprintf(struct bp_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || (size_t)n > b->cap - b->len || grow(b, b->len + (size_t)n) == -1)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int
bp_buf_printf(struct bp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = bp_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

int
bp_buf_json_str(struct bp_buf *b, const char *s)
{
	const unsigned char *p;
	const unsigned char *run = (const unsigned char *)s;
	char esc[8];

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		const char *rep = NULL;

		switch (*p) {
		case '"': rep = "\\\""; break;
		case '\\': rep = "\\\\"; break;
		case '\n': rep = "\\n"; break;
		case '\r': rep = "\\r"; break;
		case '\t': rep = "\\t"; break;
		default:
			if (*p < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				rep = esc;
			}
		}
		if (rep == NULL)
			continue;
		if (bp_buf_add(b, run, (size_t)(p - run)) == -1 || bp_buf_adds(b, rep) == -1)
			return -1;
		run = p + 1;
	}
	return bp_buf_add(b, run, (size_t)(p - run));
}
