#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "util.h"

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
	size_t room = b->data != NULL ? b->size - b->len : 0;	/* with the NUL's byte */
	int n;

	/* Straight into the room there is: formatted once unless it does not fit. */
	va_copy(ap2, ap);
	n = vsnprintf(room > 0 ? b->data + b->len : NULL, room, fmt, ap2);
	va_end(ap2);
	if (n >= 0 && (size_t)n < room) {
		b->len += (size_t)n;
		return 0;
	}
	if (b->data != NULL)
		b->data[b->len] = '\0';	/* a partial text there is not the buffer's */
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

/*
 * The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF), or 0 when the bytes there are not one. p is NUL-terminated, and a NUL
 * never passes as a continuation byte, so nothing past it is read.
 */
static size_t
utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (p[0] == 0xe0)
			lo = 0xa0;		/* overlong below U+0800 */
		else if (p[0] == 0xed)
			hi = 0x9f;		/* surrogates */
		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if (p[0] == 0xf0)
			lo = 0x90;		/* overlong below U+10000 */
		else if (p[0] == 0xf4)
			hi = 0x8f;		/* past U+10FFFF */
		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 &&
		    (p[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

int
bp_buf_json_str(struct bp_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run = p;
	size_t start = b->len;
	char esc[8];

	while (*p != '\0') {
		const char *rep = NULL;
		size_t n = 1;

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
			} else if (*p >= 0x80 && (n = utf8_len(p)) == 0) {
				/* JSON text is UTF-8 (RFC 8259): a stray byte becomes U+FFFD. */
				rep = "\\ufffd";
				n = 1;
			}
		}
		if (rep != NULL) {
			if (bp_buf_add(b, run, (size_t)(p - run)) == -1 || bp_buf_adds(b, rep) == -1)
				goto fail;
			run = p + n;
		}
		p += n;
	}
	if (bp_buf_add(b, run, (size_t)(p - run)) == 0)
		return 0;
fail:
	b->len = start;
	if (b->data != NULL)
		b->data[start] = '\0';
	return -1;
}

int
bp_buf_json_time(struct bp_buf *b, const char *name, int64_t t)
{
	char iso[32];

	if (t < 0)
		return bp_buf_printf(b, ",\"%s\":null", name);
	bp_time_iso((time_t)t, iso, sizeof(iso));
	return bp_buf_printf(b, ",\"%s\":\"%s\"", name, iso);
}
