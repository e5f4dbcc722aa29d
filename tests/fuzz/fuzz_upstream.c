/*
 * libFuzzer harness for the parts of lib/net/upstream.c that read bytes without a socket:
 * bp_upstream_definite, which reads an upstream node's answer (status and body, both the node's
 * or a proxy's in front of it, so untrusted) and decides between passing it through and failing
 * over, and bp_upstream_redact, which cuts an upstream URL down for the logs. The rest of
 * lib/net/upstream.c (bp_upstream_post and its curl write callback) needs a live transfer and is
 * not reached here; the JSON-RPC client's reading of the answers it returns
 * (bp_rpc_client_parse, lib/rpc/rpc_client.c) has its own harness, fuzz_jsonrpc_client.c.
 *
 * Input: byte 0 picks the HTTP status (from a table of the interesting ones, or with byte 1 a
 * raw one), byte 2 a buffer size for redact; the rest is the body, and, up to its first NUL, the
 * URL. Beyond memory safety it checks, aborting on a violation:
 *
 *  - bp_upstream_definite gives 0 or 1, and 1 exactly as docs/rpc.md and upstream.h say: the
 *    body starts (after JSON white space) with '{' or '[', the status is not 401, 403, 408 or
 *    429, and it is a 2xx, or a 4xx/5xx whose body names "jsonrpc"; it reads only len bytes;
 *  - bp_upstream_redact writes a NUL-terminated string within its buffer and nothing past it;
 *    the result is the scheme, "://" and the host and port alone (no user, password, path,
 *    query or fragment: for the authority, the text after its last '@' up to the first of
 *    "/?#"), cut to the buffer; "?" when there is no "://".
 *
 * Seeds: the corpus starts empty, as for the other harnesses; tests/fuzz/upstream.dict holds
 * the pieces of answers and URLs.
 *
 *   bash tests/fuzz/run.sh 60      (builds every tests/fuzz/fuzz_*.c and runs each 60 s)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/upstream.h"

#define REDACT_MAX	300	/* the largest buffer tried; run.sh's inputs can be longer */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const long statuses[] = {
	0, 100, 101, 199, 200, 201, 204, 206, 299, 300, 301, 302, 304, 399, 400, 401, 402, 403,
	404, 405, 407, 408, 409, 413, 429, 499, 500, 502, 503, 504, 599, 600, 999, -1, -200,
	2147483647L, -2147483647L - 1,
};

/* The rule, written from the header rather than from the code. */
static int
definite_reference(long status, const char *body, size_t len)
{
	size_t i;

	for (i = 0; i < len && strchr(" \t\r\n", body[i]) != NULL && body[i] != '\0'; i++)
		;
	if (i == len || (body[i] != '{' && body[i] != '['))
		return 0;
	if (status == 401 || status == 403 || status == 408 || status == 429)
		return 0;
	if (status >= 200 && status <= 299)
		return 1;
	if (status >= 400 && status <= 599) {
		for (i = 0; i + 9 <= len; i++)
			if (memcmp(body + i, "\"jsonrpc\"", 9) == 0)
				return 1;
	}
	return 0;
}

static void
check_definite(long status, const uint8_t *in, size_t len)
{
	/* An exact-size copy, so reading past len is caught. */
	char *body = malloc(len > 0 ? len : 1);
	int d;

	if (body == NULL)
		return;
	if (len > 0)
		memcpy(body, in, len);
	d = bp_upstream_definite(status, body, len);
	if ((d != 0 && d != 1) || d != definite_reference(status, body, len))
		abort();
	free(body);
}

static void
check_redact(const char *url, size_t cap)
{
	char buf[REDACT_MAX + 16], want[REDACT_MAX + 16];
	const char *sep = strstr(url, "://"), *host, *end, *p;
	size_t i, n, w;

	memset(buf, 'Z', sizeof(buf));
	bp_upstream_redact(url, buf, cap);
	if (cap == 0) {
		for (i = 0; i < sizeof(buf); i++)
			if (buf[i] != 'Z')
				abort();
		return;
	}
	if (memchr(buf, '\0', cap) == NULL)
		abort();
	for (i = cap; i < sizeof(buf); i++)
		if (buf[i] != 'Z')
			abort();

	/* What it should be, untruncated, then cut to cap - 1 bytes. */
	if (sep == NULL) {
		want[0] = '?';
		w = 1;
	} else {
		host = sep + 3;
		for (end = host; *end != '\0' && strchr("/?#", *end) == NULL; end++)
			;
		for (p = host; p < end; p++)
			if (*p == '@')
				host = p + 1;
		w = 0;
		n = (size_t)(sep + 3 - url);
		for (i = 0; i < n && w < sizeof(want); i++)
			want[w++] = url[i];
		for (p = host; p < end && w < sizeof(want); p++)
			want[w++] = *p;
		/* No credential, path, query or fragment survives in the authority. */
		for (p = host; p < end; p++)
			if (*p == '@' || *p == '/' || *p == '?' || *p == '#')
				abort();
	}
	if (w > cap - 1)
		w = cap - 1;
	if (strlen(buf) != w || memcmp(buf, want, w) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *rest;
	size_t len, ulen;
	long status;
	char *url;

	if (size < 3)
		return 0;
	if (data[0] < sizeof(statuses) / sizeof(statuses[0]))
		status = statuses[data[0]];
	else
		status = (long)((unsigned)data[0] << 8 | data[1]) - 1000;	/* -1000 .. 64535 */
	rest = data + 3;
	len = size - 3;
	check_definite(status, rest, len);

	/* The URL: the rest up to its first NUL, as a C string. */
	ulen = 0;
	while (ulen < len && rest[ulen] != '\0')
		ulen++;
	if ((url = malloc(ulen + 1)) == NULL)
		return 0;
	if (ulen > 0)
		memcpy(url, rest, ulen);
	url[ulen] = '\0';
	check_redact(url, data[2] % (REDACT_MAX + 1));
	check_redact(url, REDACT_MAX);
	free(url);
	return 0;
}
