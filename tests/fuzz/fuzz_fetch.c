/*
 * libFuzzer harness for the parts of lib/net/fetch.c that read a URL or a host without DNS or a
 * socket: bp_fetch_check_url_static (length, bytes, scheme, credentials, localhost, literal
 * hosts in every spelling) and bp_addr_parse_literal with bp_addr_classify. bp_fetch_check_url
 * is not called: it resolves names. The connect-time check has unit tests (tests/unit).
 *
 * Input: the bytes up to the first NUL are both a URL and a host. Beyond memory safety it
 * checks, aborting on a violation:
 *
 *  - each check returns 0, -1 or -2, with why empty on 0 and not empty otherwise, and
 *    NUL-terminated within its buffer, also when the buffer is tiny;
 *  - allow_private never turns an accepted URL into a refused one, and never answers -2;
 *  - https_only never accepts what the plain check refuses;
 *  - when the input parses as an IP literal, its class is one of the enum, and when that class
 *    is not public, neither "http://INPUT/" nor "https://INPUT:1/x" is accepted (-1 or -2);
 *  - a literal parse of a dotted IPv4 text printed back from the parsed address agrees.
 *
 *   bash tests/fuzz/run.sh 60      (builds every tests/fuzz/fuzz_*.c and runs each 60 s)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/fetch.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
check(const char *url, bool allow_private, bool https_only, size_t whylen)
{
	char why[200];
	int rc;

	memset(why, 'x', sizeof(why));
	rc = bp_fetch_check_url_static(url, allow_private, https_only, why, whylen);
	if (rc != 0 && rc != -1 && rc != -2)
		abort();
	if (whylen > 0) {
		if (memchr(why, '\0', whylen) == NULL)
			abort();
		if ((rc == 0) != (why[0] == '\0') && whylen > 1)
			abort();
	}
	if (why[whylen < sizeof(why) ? whylen : sizeof(why) - 1] != 'x' && whylen < sizeof(why))
		abort();	/* wrote past whylen */
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage ss, ss2;
	char *s, url[BP_FETCH_URL_MAX + 64], ip[INET6_ADDRSTRLEN];
	int plain, priv, https;
	enum bp_addr_class c;

	if (size > BP_FETCH_URL_MAX + 16)
		return 0;
	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	plain = check(s, false, false, 200);
	priv = check(s, true, false, 200);
	https = check(s, false, true, 200);
	(void)check(s, false, false, 1);
	(void)check(s, false, false, 7);
	if (priv == -2 || (plain == 0 && priv != 0) || (https == 0 && plain != 0))
		abort();

	if (bp_addr_parse_literal(s, &ss) == 0) {
		c = bp_addr_classify((struct sockaddr *)&ss);
		if ((int)c < BP_ADDR_PUBLIC || c > BP_ADDR_RESERVED)
			abort();
		if (c != BP_ADDR_PUBLIC) {
			snprintf(url, sizeof(url), "http://%s/", s);
			if (check(url, false, false, 200) == 0)
				abort();
			snprintf(url, sizeof(url), "https://%s:1/x", s);
			if (check(url, false, false, 200) == 0)
				abort();
		}
		if (ss.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip));
			if (bp_addr_parse_literal(ip, &ss2) != 0 || ss2.ss_family != AF_INET ||
			    ((struct sockaddr_in *)&ss2)->sin_addr.s_addr !=
			    ((struct sockaddr_in *)&ss)->sin_addr.s_addr ||
			    bp_addr_classify((struct sockaddr *)&ss2) != c)
				abort();
		}
	}
	free(s);
	return 0;
}
