/*
 * The bare relay of bench/rpc.sh: the ceiling of this architecture. A FastCGI program that reads
 * the request body and POSTs it to one upstream with a keep-alive curl handle, then writes the
 * answer back: no authentication, no limits, no envelope checks, no routing. It runs behind the
 * same lighttpd configuration as Blockport (installed as rpc.fcgi in a directory of its own), so
 * the difference between the two is what Blockport adds.
 *
 * The upstream is the first upstream of the first network in $BLOCKPORT_CONFIG (read once at
 * start with lib/config; nothing of lib/ runs per request). Benchmark code: it calls libcurl
 * directly, which fcgi/ programs must not do.
 *
 *   make build/bench/relay.fcgi   (bench/rpc.sh installs it as rpc.fcgi in a directory of its own)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <fcgiapp.h>

#include "core/config.h"

struct out {
	char	*p;
	size_t	 len, size;
};

static size_t
on_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct out *o = arg;
	size_t n = size * nmemb;

	if (o->len + n > o->size) {
		size_t ns = o->size ? o->size : 4096;
		char *p;

		while (ns < o->len + n)
			ns *= 2;
		if ((p = realloc(o->p, ns)) == NULL)
			return 0;
		o->p = p;
		o->size = ns;
	}
	memcpy(o->p + o->len, data, n);
	o->len += n;
	return n;
}

int
main(void)
{
	struct bp_config *cfg;
	struct curl_slist *hdr = NULL;
	struct out o = { NULL, 0, 0 };
	FCGX_Request fr;
	char err[512], *body = NULL;
	size_t bsize = 0;
	CURL *h;

	if ((cfg = bp_config_load(NULL, err, sizeof(err))) == NULL || cfg->nnets == 0) {
		fprintf(stderr, "relay: %s\n", cfg ? "no network in the config" : err);
		return 1;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = curl_easy_init();
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, cfg->nets[0].upstream[0]);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &o);
	if (FCGX_Init() != 0 || FCGX_InitRequest(&fr, 0, 0) != 0)
		return 1;
	while (FCGX_Accept_r(&fr) >= 0) {
		const char *cl = FCGX_GetParam("CONTENT_LENGTH", fr.envp);
		long len = cl ? strtol(cl, NULL, 10) : 0;
		char head[128];
		int n;

		if (len < 0 || len > 1 << 20)
			len = 0;
		if ((size_t)len + 1 > bsize) {
			bsize = (size_t)len + 1;
			body = realloc(body, bsize);
		}
		len = FCGX_GetStr(body, (int)len, fr.in);
		o.len = 0;
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, len);
		if (curl_easy_perform(h) != CURLE_OK) {
			FCGX_PutS("Status: 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n", fr.out);
		} else {
			n = snprintf(head, sizeof(head), "Status: 200 OK\r\nContent-Type: "
			    "application/json\r\nContent-Length: %zu\r\n\r\n", o.len);
			FCGX_PutStr(head, n, fr.out);
			FCGX_PutStr(o.p, (int)o.len, fr.out);
		}
		FCGX_Finish_r(&fr);
	}
	return 0;
}
