#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "jsonrpc.h"
#include "log.h"
#include "upstream.h"
#include "util.h"

/*
 * The scanner. Strict RFC 8259: UTF-8 only (no overlong forms, no surrogates, nothing past
 * U+10FFFF), no control characters in strings, \u escapes well-formed with surrogates paired,
 * numbers in the JSON grammar, nothing after the top-level value but white space. Being stricter
 * than the nodes behind us means nothing we pass can be read two ways.
 */

enum {
	SCAN_OK = 0,
	SCAN_SYNTAX = -1,	/* not JSON: -32700 */
	SCAN_DEEP = -2,		/* JSON nested deeper than BP_JSONRPC_DEPTH: -32600 */
};

struct scan {
	const unsigned char	*s;
	size_t			 len;
	size_t			 pos;
};

static void
ws(struct scan *sc)
{
	while (sc->pos < sc->len) {
		unsigned char c = sc->s[sc->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		sc->pos++;
	}
}

/* The four hex digits at p (the caller checked they are there); -1 when one is not hex. */
static long
hex4(const unsigned char *p)
{
	long v = 0;
	int i, d;

	for (i = 0; i < 4; i++) {
		if ((d = bp_hex_digit(p[i])) < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/* The length of the well-formed UTF-8 sequence of a non-ASCII byte at p, or 0 (RFC 3629). */
static size_t
utf8_seq(const unsigned char *p, size_t n)
{
	unsigned c = p[0];

	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f))
			return 0;	/* overlong, or a UTF-16 surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
			return 0;	/* overlong, or past U+10FFFF */
		return 4;
	}
	return 0;
}

/* Skips the string at sc->pos (its opening quote), validating it. */
static int
skip_string(struct scan *sc)
{
	const unsigned char *s = sc->s;
	size_t i = sc->pos + 1, n = sc->len, k;
	long v, lo;

	while (i < n) {
		unsigned char c = s[i];

		if (c == '"') {
			sc->pos = i + 1;
			return SCAN_OK;
		}
		if (c == '\\') {
			if (i + 1 >= n)
				return SCAN_SYNTAX;
			c = s[i + 1];
			if (c != 'u') {
				if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' &&
				    c != 'n' && c != 'r' && c != 't')
					return SCAN_SYNTAX;
				i += 2;
				continue;
			}
			if (n - i < 6 || (v = hex4(s + i + 2)) < 0)
				return SCAN_SYNTAX;
			i += 6;
			if (v >= 0xdc00 && v <= 0xdfff)
				return SCAN_SYNTAX;	/* a low surrogate alone */
			if (v >= 0xd800 && v <= 0xdbff) {
				if (n - i < 6 || s[i] != '\\' || s[i + 1] != 'u' ||
				    (lo = hex4(s + i + 2)) < 0xdc00 || lo > 0xdfff)
					return SCAN_SYNTAX;
				i += 6;
			}
			continue;
		}
		if (c < 0x20)
			return SCAN_SYNTAX;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((k = utf8_seq(s + i, n - i)) == 0)
			return SCAN_SYNTAX;
		i += k;
	}
	return SCAN_SYNTAX;
}

static int
isdig(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int
skip_number(struct scan *sc)
{
	const unsigned char *s = sc->s;
	size_t i = sc->pos, n = sc->len;

	if (i < n && s[i] == '-')
		i++;
	if (i >= n || !isdig(s[i]))
		return SCAN_SYNTAX;
	if (s[i] == '0')
		i++;
	else
		while (i < n && isdig(s[i]))
			i++;
	if (i < n && s[i] == '.') {
		if (++i >= n || !isdig(s[i]))
			return SCAN_SYNTAX;
		while (i < n && isdig(s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || !isdig(s[i]))
			return SCAN_SYNTAX;
		while (i < n && isdig(s[i]))
			i++;
	}
	sc->pos = i;
	return SCAN_OK;
}

static int
skip_literal(struct scan *sc, const char *lit, size_t n)
{
	if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, lit, n) != 0)
		return SCAN_SYNTAX;
	sc->pos += n;
	return SCAN_OK;
}

/*
 * A member's key and its colon, at sc->pos (white space already skipped). Unless klen is NULL,
 * *klen gets the length of the key with its quotes, which starts where sc->pos was.
 */
static int
member_key(struct scan *sc, size_t *klen)
{
	size_t start = sc->pos;
	int rc;

	if (sc->pos >= sc->len || sc->s[sc->pos] != '"')
		return SCAN_SYNTAX;
	if ((rc = skip_string(sc)) != SCAN_OK)
		return rc;
	if (klen != NULL)
		*klen = sc->pos - start;
	ws(sc);
	if (sc->pos >= sc->len || sc->s[sc->pos] != ':')
		return SCAN_SYNTAX;
	sc->pos++;
	return SCAN_OK;
}

/*
 * After an array element or an object member: white space, then a comma or the closing bracket
 * close, which is consumed. Returns 1 after a comma (another element follows), 0 after close (the
 * container ends), SCAN_SYNTAX for anything else.
 */
static int
next_or_close(struct scan *sc, unsigned char close)
{
	ws(sc);
	if (sc->pos < sc->len && sc->s[sc->pos] == ',') {
		sc->pos++;
		return 1;
	}
	if (sc->pos < sc->len && sc->s[sc->pos] == close) {
		sc->pos++;
		return 0;
	}
	return SCAN_SYNTAX;
}

/*
 * Skips the value at sc->pos (after white space), validating it, without recursion. depth is
 * the number of arrays and objects around the value. Returns SCAN_OK with sc->pos just past
 * the value.
 */
static int
skip_value(struct scan *sc, int depth)
{
	unsigned char stack[BP_JSONRPC_DEPTH];
	int top = 0, rc;
	unsigned char c;

	for (;;) {
		/* A value starts here. */
		ws(sc);
		if (sc->pos >= sc->len)
			return SCAN_SYNTAX;
		c = sc->s[sc->pos];
		if (c == '{' || c == '[') {
			if (depth + top + 1 > BP_JSONRPC_DEPTH)
				return SCAN_DEEP;
			stack[top++] = c;
			sc->pos++;
			ws(sc);
			if (sc->pos < sc->len && sc->s[sc->pos] == (c == '{' ? '}' : ']')) {
				sc->pos++;
				top--;
			} else if (c == '{') {
				if ((rc = member_key(sc, NULL)) != SCAN_OK)
					return rc;
				continue;
			} else
				continue;
		} else if (c == '"') {
			if ((rc = skip_string(sc)) != SCAN_OK)
				return rc;
		} else if (c == '-' || isdig(c)) {
			if ((rc = skip_number(sc)) != SCAN_OK)
				return rc;
		} else if (c == 't') {
			if ((rc = skip_literal(sc, "true", 4)) != SCAN_OK)
				return rc;
		} else if (c == 'f') {
			if ((rc = skip_literal(sc, "false", 5)) != SCAN_OK)
				return rc;
		} else if (c == 'n') {
			if ((rc = skip_literal(sc, "null", 4)) != SCAN_OK)
				return rc;
		} else
			return SCAN_SYNTAX;

		/* After a value: close containers, or go on to the next member or element. */
		for (;;) {
			if (top == 0)
				return SCAN_OK;
			rc = next_or_close(sc, stack[top - 1] == '{' ? '}' : ']');
			if (rc == SCAN_SYNTAX)
				return rc;
			if (rc == 1) {
				if (stack[top - 1] == '{') {
					ws(sc);
					if ((rc = member_key(sc, NULL)) != SCAN_OK)
						return rc;
				}
				break;
			}
			top--;
		}
	}
}

/* Appends code point v as UTF-8 to out (cap bytes); -1 when it does not fit. */
static int
put_utf8(char *out, size_t cap, size_t *n, unsigned long v)
{
	unsigned char b[4];
	size_t k;

	if (v < 0x80) {
		b[0] = (unsigned char)v;
		k = 1;
	} else if (v < 0x800) {
		b[0] = (unsigned char)(0xc0 | v >> 6);
		b[1] = (unsigned char)(0x80 | (v & 0x3f));
		k = 2;
	} else if (v < 0x10000) {
		b[0] = (unsigned char)(0xe0 | v >> 12);
		b[1] = (unsigned char)(0x80 | ((v >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (v & 0x3f));
		k = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | v >> 18);
		b[1] = (unsigned char)(0x80 | ((v >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((v >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (v & 0x3f));
		k = 4;
	}
	if (cap - *n < k)
		return -1;
	memcpy(out + *n, b, k);
	*n += k;
	return 0;
}

/*
 * Decodes a string that skip_string accepted (s at its opening quote, len its whole length with
 * quotes) into out (cap bytes, not NUL-terminated; may hold NULs from \u0000). Sets *outlen to
 * the decoded length. Returns 0, or -1 when the decoded string is longer than cap (*outlen then
 * says cap + 1).
 */
static int
decode_string(const unsigned char *s, size_t len, char *out, size_t cap, size_t *outlen)
{
	size_t i, n = 0;

	*outlen = 0;
	for (i = 1; i + 1 < len;) {
		unsigned long v;

		if (s[i] != '\\') {
			if (n == cap)
				goto toolong;
			out[n++] = (char)s[i++];
			continue;
		}
		switch (s[i + 1]) {
		case 'b': v = '\b'; break;
		case 'f': v = '\f'; break;
		case 'n': v = '\n'; break;
		case 'r': v = '\r'; break;
		case 't': v = '\t'; break;
		case 'u':
			v = (unsigned long)hex4(s + i + 2);
			if (v >= 0xd800 && v <= 0xdbff) {
				v = 0x10000 + ((v - 0xd800) << 10) +
				    ((unsigned long)hex4(s + i + 8) - 0xdc00);
				i += 6;
			}
			i += 4;
			break;
		default: v = s[i + 1]; break;	/* " \ / */
		}
		i += 2;
		if (put_utf8(out, cap, &n, v) == -1)
			goto toolong;
	}
	*outlen = n;
	return 0;
toolong:
	*outlen = cap + 1;
	return -1;
}

/* 1 when the string value at span of s decodes to exactly lit. */
static int
string_is(const unsigned char *s, struct bp_jsonrpc_span v, const char *lit)
{
	char buf[16];
	size_t n;

	if (v.len < 2 || s[v.off] != '"' ||
	    decode_string(s + v.off, v.len, buf, sizeof(buf), &n) == -1)
		return 0;
	return n == strlen(lit) && memcmp(buf, lit, n) == 0;
}

enum envelope_key {
	K_JSONRPC,	/* 0 */
	K_METHOD,	/* 1 */
	K_PARAMS,	/* 2 */
	K_ID,		/* 3 */
	K__MAX
};

static const char *const key_names[K__MAX] = { "jsonrpc", "method", "params", "id" };

#define KEY_OTHER	(-1)	/* a member the envelope does not use: dropped when forwarded */
#define KEY_CONFUSABLE	(-2)	/* a spelling some node reads as one of the four: refused */

/*
 * Folds the decoded key k (n bytes of UTF-8) the way the laxest node decoders match member
 * names, into out (cap bytes): ASCII letters to lower case, and the four non-ASCII letters
 * whose case mappings reach ASCII to that letter: U+017F LONG S and U+212A KELVIN SIGN (Go's
 * encoding/json folds them with s and k), U+0130 and U+0131, the dotted and dotless I (.NET's
 * and Java's upper and lower casing make them i). Returns the folded length, or 0 when k holds
 * any other non-ASCII character or does not fit: such a key cannot fold to an ASCII name.
 */
static size_t
fold_key(const char *k, size_t n, char *out, size_t cap)
{
	const unsigned char *s = (const unsigned char *)k;
	size_t i = 0, m = 0;

	while (i < n) {
		char c;

		if (s[i] < 0x80) {
			c = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
			i += 1;
		} else if (n - i >= 2 && s[i] == 0xc5 && s[i + 1] == 0xbf) {
			c = 's';
			i += 2;
		} else if (n - i >= 2 && s[i] == 0xc4 && (s[i + 1] == 0xb0 || s[i + 1] == 0xb1)) {
			c = 'i';
			i += 2;
		} else if (n - i >= 3 && s[i] == 0xe2 && s[i + 1] == 0x84 && s[i + 2] == 0xaa) {
			c = 'k';
			i += 3;
		} else
			return 0;
		if (m == cap)
			return 0;
		out[m++] = c;
	}
	return m;
}

/*
 * Which envelope member a key (s at its quote, len with quotes) names, decoding escapes: K_*
 * for an exact name, KEY_CONFUSABLE for a name that folds to one of them without being it
 * ("METHOD", "\u004dethod", "param\u017f"), KEY_OTHER for anything else.
 */
static int
which_key(const unsigned char *s, size_t len)
{
	const char *key = (const char *)s + 1;
	char buf[32], folded[8];
	size_t n = len - 2, f;
	int k;

	/* Keys with escapes are decoded first, so "m\u0065thod" is method too. */
	if (memchr(key, '\\', n) != NULL) {
		if (decode_string(s, len, buf, sizeof(buf), &n) == -1)
			return KEY_OTHER;	/* longer than any folded spelling */
		key = buf;
	}
	for (k = 0; k < K__MAX; k++)
		if (n == strlen(key_names[k]) && memcmp(key, key_names[k], n) == 0)
			return k;
	/* Each of the four is at most 7 characters, and each character at most 3 bytes. */
	if (n > 21 || (f = fold_key(key, n, folded, sizeof(folded))) == 0)
		return KEY_OTHER;
	for (k = 0; k < K__MAX; k++)
		if (f == strlen(key_names[k]) && memcmp(folded, key_names[k], f) == 0)
			return KEY_CONFUSABLE;
	return KEY_OTHER;
}

static void
invalid(struct bp_jsonrpc_item *it, const char *why)
{
	it->code = BP_JSONRPC_INVALID_REQUEST;
	it->why = why;
}

/*
 * Scans one request object at sc->pos (its '{'), depth the containers around it, into it.
 * Returns SCAN_OK (the item's own verdict is in it->code), or the scan error of the body.
 */
static int
scan_request(struct scan *sc, int depth, struct bp_jsonrpc_item *it)
{
	struct bp_jsonrpc_span v[K__MAX];
	int seen[K__MAX] = { 0 }, dup = 0, confusable = 0, k, rc;
	size_t start = sc->pos;
	unsigned char c;

	memset(it, 0, sizeof(*it));
	memset(v, 0, sizeof(v));
	if (depth + 1 > BP_JSONRPC_DEPTH)
		return SCAN_DEEP;
	sc->pos++;
	ws(sc);
	if (sc->pos < sc->len && sc->s[sc->pos] == '}')
		sc->pos++;
	else for (;;) {
		size_t kstart, klen, vstart;

		ws(sc);
		kstart = sc->pos;
		if ((rc = member_key(sc, &klen)) != SCAN_OK)
			return rc;
		k = which_key(sc->s + kstart, klen);
		ws(sc);
		vstart = sc->pos;
		if ((rc = skip_value(sc, depth + 1)) != SCAN_OK)
			return rc;
		if (k == KEY_CONFUSABLE)
			confusable = 1;
		else if (k == KEY_OTHER)
			it->extra = 1;
		else {
			if (seen[k]++)
				dup = 1;
			else {
				v[k].off = vstart;
				v[k].len = sc->pos - vstart;
			}
		}
		if ((rc = next_or_close(sc, '}')) == SCAN_SYNTAX)
			return rc;
		if (rc == 0)
			break;
	}
	it->raw.off = start;
	it->raw.len = sc->pos - start;

	/* The id first: the errors below echo it whenever it is one to echo. */
	if (seen[K_ID] == 1) {
		c = sc->s[v[K_ID].off];
		if (c == '"' || c == '-' || isdig(c) || c == 'n')
			it->id = v[K_ID];
	}
	if (confusable)
		invalid(it, "invalid request: a member name differs from jsonrpc, method, params or "
		    "id only in case or in a letter that folds to theirs");
	else if (dup)
		invalid(it, "invalid request: a member appears twice");
	else if (seen[K_ID] == 0)
		invalid(it, "invalid request: id is required (notifications are not supported)");
	else if (it->id.len == 0)
		invalid(it, "invalid request: id must be a string, a number or null");
	else if (!seen[K_JSONRPC] || !string_is(sc->s, v[K_JSONRPC], "2.0"))
		invalid(it, "invalid request: jsonrpc must be \"2.0\"");
	else if (!seen[K_METHOD] || sc->s[v[K_METHOD].off] != '"')
		invalid(it, "invalid request: method must be a string");
	else if (seen[K_PARAMS] && sc->s[v[K_PARAMS].off] != '[' &&
	    sc->s[v[K_PARAMS].off] != '{')
		invalid(it, "invalid request: params must be an array or an object");
	else {
		it->method_raw = v[K_METHOD];
		decode_string(sc->s + v[K_METHOD].off, v[K_METHOD].len, it->method,
		    BP_JSONRPC_METHOD_MAX, &it->method_len);
		it->method[it->method_len <= BP_JSONRPC_METHOD_MAX ? it->method_len :
		    BP_JSONRPC_METHOD_MAX] = '\0';
		if (it->method_len == 0)
			invalid(it, "invalid request: method must not be empty");
		if (seen[K_PARAMS])
			it->params = v[K_PARAMS];
	}
	return SCAN_OK;
}

int
bp_jsonrpc_parse(const char *body, size_t len, size_t max_batch, struct bp_jsonrpc_item *items,
    size_t cap, struct bp_jsonrpc_body *out)
{
	struct scan sc = { (const unsigned char *)body, len, 0 };
	struct bp_jsonrpc_item scratch, *it;
	int rc = SCAN_OK;

	memset(out, 0, sizeof(*out));
	ws(&sc);
	if (sc.pos >= sc.len) {
		rc = SCAN_SYNTAX;
	} else if (sc.s[sc.pos] == '{') {
		out->n = 1;
		rc = scan_request(&sc, 0, cap > 0 ? &items[0] : &scratch);
	} else if (sc.s[sc.pos] == '[') {
		out->batch = 1;
		sc.pos++;
		ws(&sc);
		if (sc.pos < sc.len && sc.s[sc.pos] == ']')
			sc.pos++;
		else for (;;) {
			it = out->n < cap ? &items[out->n] : &scratch;
			ws(&sc);
			if (sc.pos < sc.len && sc.s[sc.pos] == '{') {
				if ((rc = scan_request(&sc, 1, it)) != SCAN_OK)
					break;
			} else {
				memset(it, 0, sizeof(*it));
				it->raw.off = sc.pos;
				if ((rc = skip_value(&sc, 1)) != SCAN_OK)
					break;
				it->raw.len = sc.pos - it->raw.off;
				invalid(it, "invalid request: a request must be a JSON object");
			}
			out->n++;
			/* After a comma, go on; after ']', rc is SCAN_OK (0). */
			if ((rc = next_or_close(&sc, ']')) != 1)
				break;
		}
	} else {
		rc = skip_value(&sc, 0);
		if (rc == SCAN_OK) {
			ws(&sc);
			if (sc.pos != sc.len)
				rc = SCAN_SYNTAX;
			else {
				out->code = BP_JSONRPC_INVALID_REQUEST;
				out->why = "invalid request: the body must be a JSON object or an array of them";
				return -1;
			}
		}
	}
	if (rc == SCAN_OK) {
		ws(&sc);
		if (sc.pos != sc.len)
			rc = SCAN_SYNTAX;
	}
	if (rc == SCAN_SYNTAX) {
		out->code = BP_JSONRPC_PARSE_ERROR;
		out->why = "parse error: the body is not valid JSON";
	} else if (rc == SCAN_DEEP) {
		out->code = BP_JSONRPC_INVALID_REQUEST;
		out->why = "invalid request: JSON nested deeper than 64 levels";
	} else if (out->batch && out->n == 0) {
		out->code = BP_JSONRPC_INVALID_REQUEST;
		out->why = "invalid request: empty batch";
	} else if (out->batch && out->n > max_batch) {
		out->code = BP_JSONRPC_INVALID_REQUEST;
		out->why = "invalid request: batch larger than this service's max_batch";
	} else if (out->n > cap) {
		out->code = BP_JSONRPC_INTERNAL_ERROR;
		out->why = "internal error: no room for the batch";
	}
	return out->code != 0 ? -1 : 0;
}

int
bp_jsonrpc_id_simple(const char *id, size_t len)
{
	size_t i;

	if (len == 0)
		return 0;
	if (id[0] == '"') {
		if (len < 3 || len > 130 || id[len - 1] != '"')
			return 0;
		for (i = 1; i + 1 < len; i++) {
			unsigned char c = (unsigned char)id[i];

			if (c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' ||
			    c == '&')
				return 0;
		}
		return 1;
	}
	if (len > 15 || id[0] < '0' || id[0] > '9' || (id[0] == '0' && len > 1))
		return 0;
	for (i = 1; i < len; i++)
		if (!isdig((unsigned char)id[i]))
			return 0;
	return 1;
}

int
bp_jsonrpc_envelope(struct bp_buf *b, const char *body, const struct bp_jsonrpc_item *it,
    const char *id, size_t idlen)
{
	if (bp_buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":") == -1 || bp_buf_add(b, id, idlen) == -1 ||
	    bp_buf_adds(b, ",\"method\":") == -1 ||
	    bp_buf_add(b, body + it->method_raw.off, it->method_raw.len) == -1)
		return -1;
	if (it->params.len > 0 && (bp_buf_adds(b, ",\"params\":") == -1 ||
	    bp_buf_add(b, body + it->params.off, it->params.len) == -1))
		return -1;
	return bp_buf_adds(b, "}");
}

/*
 * The method table: one row per method, sorted by name in byte order (bsearch; the unit tests
 * check the order). Costs are compute units per call: SPEC.md's anchors (eth_blockNumber 1,
 * eth_getStorageAt at an archive block 20) and Alchemy's published costs divided by 10 and
 * rounded, at least 1, for the rest (docs/rpc.md). archive_cu applies when block_arg names a
 * block more than archive_depth below the head: the methods that read historical state.
 */
#define E	BP_CHAIN_EVM
#define S	BP_CHAIN_SOLANA
#define R	BP_RPC_READ
#define W	BP_RPC_WRITE
#define D	BP_RPC_DEBUG
#define SUB	BP_RPC_SUBSCRIBE
#define NO	BP_RPC_DENIED
#define ARCHIVE_CU	20

static const struct bp_jsonrpc_method methods[] = {
	{ "accountSubscribe", S, SUB, 1, 0, -1 },
	{ "accountUnsubscribe", S, SUB, 1, 0, -1 },
	{ "blockSubscribe", S, SUB, 1, 0, -1 },
	{ "blockUnsubscribe", S, SUB, 1, 0, -1 },
	{ "debug_getBadBlocks", E, D, 4, 0, -1 },
	{ "debug_getRawBlock", E, D, 4, 0, -1 },
	{ "debug_getRawHeader", E, D, 4, 0, -1 },
	{ "debug_getRawReceipts", E, D, 4, 0, -1 },
	{ "debug_getRawTransaction", E, D, 4, 0, -1 },
	{ "debug_setHead", E, NO, 0, 0, -1 },
	{ "debug_traceBlockByHash", E, D, 4, 0, -1 },
	{ "debug_traceBlockByNumber", E, D, 4, 0, -1 },
	{ "debug_traceCall", E, D, 4, ARCHIVE_CU, 1 },
	{ "debug_traceTransaction", E, D, 4, 0, -1 },
	{ "eth_accounts", E, R, 1, 0, -1 },
	{ "eth_blobBaseFee", E, R, 1, 0, -1 },
	{ "eth_blockNumber", E, R, 1, 0, -1 },
	{ "eth_call", E, R, 3, ARCHIVE_CU, 1 },
	{ "eth_chainId", E, R, 1, 0, -1 },
	{ "eth_coinbase", E, NO, 0, 0, -1 },
	{ "eth_createAccessList", E, R, 1, ARCHIVE_CU, 1 },
	{ "eth_estimateGas", E, R, 2, ARCHIVE_CU, 1 },
	{ "eth_feeHistory", E, R, 1, 0, -1 },
	{ "eth_gasPrice", E, R, 2, 0, -1 },
	{ "eth_getAccount", E, R, 2, ARCHIVE_CU, 1 },
	{ "eth_getBalance", E, R, 2, ARCHIVE_CU, 1 },
	{ "eth_getBlockByHash", E, R, 2, 0, -1 },
	{ "eth_getBlockByNumber", E, R, 2, 0, -1 },
	{ "eth_getBlockReceipts", E, R, 2, 0, -1 },
	{ "eth_getBlockTransactionCountByHash", E, R, 2, 0, -1 },
	{ "eth_getBlockTransactionCountByNumber", E, R, 2, 0, -1 },
	{ "eth_getCode", E, R, 2, ARCHIVE_CU, 1 },
	{ "eth_getFilterChanges", E, R, 2, 0, -1 },
	{ "eth_getFilterLogs", E, R, 6, 0, -1 },
	{ "eth_getLogs", E, R, 6, 0, -1 },
	{ "eth_getProof", E, R, 2, ARCHIVE_CU, 2 },
	{ "eth_getStorageAt", E, R, 2, ARCHIVE_CU, 2 },
	{ "eth_getTransactionByBlockHashAndIndex", E, R, 2, 0, -1 },
	{ "eth_getTransactionByBlockNumberAndIndex", E, R, 2, 0, -1 },
	{ "eth_getTransactionByHash", E, R, 2, 0, -1 },
	{ "eth_getTransactionCount", E, R, 2, ARCHIVE_CU, 1 },
	{ "eth_getTransactionReceipt", E, R, 2, 0, -1 },
	{ "eth_getUncleByBlockHashAndIndex", E, R, 2, 0, -1 },
	{ "eth_getUncleByBlockNumberAndIndex", E, R, 2, 0, -1 },
	{ "eth_getUncleCountByBlockHash", E, R, 2, 0, -1 },
	{ "eth_getUncleCountByBlockNumber", E, R, 2, 0, -1 },
	{ "eth_maxPriorityFeePerGas", E, R, 1, 0, -1 },
	{ "eth_newBlockFilter", E, R, 2, 0, -1 },
	{ "eth_newFilter", E, R, 2, 0, -1 },
	{ "eth_newPendingTransactionFilter", E, R, 2, 0, -1 },
	{ "eth_protocolVersion", E, R, 1, 0, -1 },
	{ "eth_sendRawTransaction", E, W, 4, 0, -1 },
	{ "eth_sendTransaction", E, NO, 0, 0, -1 },
	{ "eth_sign", E, NO, 0, 0, -1 },
	{ "eth_signTransaction", E, NO, 0, 0, -1 },
	{ "eth_signTypedData", E, NO, 0, 0, -1 },
	{ "eth_signTypedData_v3", E, NO, 0, 0, -1 },
	{ "eth_signTypedData_v4", E, NO, 0, 0, -1 },
	{ "eth_simulateV1", E, R, 4, ARCHIVE_CU, 1 },
	{ "eth_submitHashrate", E, NO, 0, 0, -1 },
	{ "eth_submitWork", E, NO, 0, 0, -1 },
	{ "eth_subscribe", E, SUB, 1, 0, -1 },
	{ "eth_syncing", E, R, 1, 0, -1 },
	{ "eth_uninstallFilter", E, R, 1, 0, -1 },
	{ "eth_unsubscribe", E, SUB, 1, 0, -1 },
	{ "getAccountInfo", S, R, 1, 0, -1 },
	{ "getBalance", S, R, 1, 0, -1 },
	{ "getBlock", S, R, 4, 0, -1 },
	{ "getBlockCommitment", S, R, 1, 0, -1 },
	{ "getBlockHeight", S, R, 1, 0, -1 },
	{ "getBlockProduction", S, R, 1, 0, -1 },
	{ "getBlockTime", S, R, 1, 0, -1 },
	{ "getBlocks", S, R, 4, 0, -1 },
	{ "getBlocksWithLimit", S, R, 4, 0, -1 },
	{ "getClusterNodes", S, R, 1, 0, -1 },
	{ "getEpochInfo", S, R, 1, 0, -1 },
	{ "getEpochSchedule", S, R, 1, 0, -1 },
	{ "getFeeForMessage", S, R, 1, 0, -1 },
	{ "getFirstAvailableBlock", S, R, 1, 0, -1 },
	{ "getGenesisHash", S, R, 1, 0, -1 },
	{ "getHealth", S, R, 1, 0, -1 },
	{ "getHighestSnapshotSlot", S, R, 1, 0, -1 },
	{ "getIdentity", S, R, 1, 0, -1 },
	{ "getInflationGovernor", S, R, 1, 0, -1 },
	{ "getInflationRate", S, R, 1, 0, -1 },
	{ "getInflationReward", S, R, 1, 0, -1 },
	{ "getLargestAccounts", S, R, 4, 0, -1 },
	{ "getLatestBlockhash", S, R, 1, 0, -1 },
	{ "getLeaderSchedule", S, R, 1, 0, -1 },
	{ "getMaxRetransmitSlot", S, R, 1, 0, -1 },
	{ "getMaxShredInsertSlot", S, R, 1, 0, -1 },
	{ "getMinimumBalanceForRentExemption", S, R, 1, 0, -1 },
	{ "getMultipleAccounts", S, R, 4, 0, -1 },
	{ "getProgramAccounts", S, R, 4, 0, -1 },
	{ "getRecentPerformanceSamples", S, R, 1, 0, -1 },
	{ "getRecentPrioritizationFees", S, R, 1, 0, -1 },
	{ "getSignatureStatuses", S, R, 1, 0, -1 },
	{ "getSignaturesForAddress", S, R, 4, 0, -1 },
	{ "getSlot", S, R, 1, 0, -1 },
	{ "getSlotLeader", S, R, 1, 0, -1 },
	{ "getSlotLeaders", S, R, 1, 0, -1 },
	{ "getStakeMinimumDelegation", S, R, 1, 0, -1 },
	{ "getSupply", S, R, 1, 0, -1 },
	{ "getTokenAccountBalance", S, R, 1, 0, -1 },
	{ "getTokenAccountsByDelegate", S, R, 4, 0, -1 },
	{ "getTokenAccountsByOwner", S, R, 4, 0, -1 },
	{ "getTokenLargestAccounts", S, R, 4, 0, -1 },
	{ "getTokenSupply", S, R, 1, 0, -1 },
	{ "getTransaction", S, R, 4, 0, -1 },
	{ "getTransactionCount", S, R, 1, 0, -1 },
	{ "getVersion", S, R, 1, 0, -1 },
	{ "getVoteAccounts", S, R, 1, 0, -1 },
	{ "isBlockhashValid", S, R, 1, 0, -1 },
	{ "logsSubscribe", S, SUB, 1, 0, -1 },
	{ "logsUnsubscribe", S, SUB, 1, 0, -1 },
	{ "minimumLedgerSlot", S, R, 1, 0, -1 },
	{ "net_listening", E, R, 1, 0, -1 },
	{ "net_peerCount", E, R, 1, 0, -1 },
	{ "net_version", E, R, 1, 0, -1 },
	{ "programSubscribe", S, SUB, 1, 0, -1 },
	{ "programUnsubscribe", S, SUB, 1, 0, -1 },
	{ "requestAirdrop", S, W, 4, 0, -1 },
	{ "rootSubscribe", S, SUB, 1, 0, -1 },
	{ "rootUnsubscribe", S, SUB, 1, 0, -1 },
	{ "sendTransaction", S, W, 4, 0, -1 },
	{ "signatureSubscribe", S, SUB, 1, 0, -1 },
	{ "signatureUnsubscribe", S, SUB, 1, 0, -1 },
	{ "simulateTransaction", S, R, 4, 0, -1 },
	{ "slotSubscribe", S, SUB, 1, 0, -1 },
	{ "slotUnsubscribe", S, SUB, 1, 0, -1 },
	{ "slotsUpdatesSubscribe", S, SUB, 1, 0, -1 },
	{ "slotsUpdatesUnsubscribe", S, SUB, 1, 0, -1 },
	{ "trace_block", E, D, 2, 0, -1 },
	{ "trace_call", E, D, 8, ARCHIVE_CU, 2 },
	{ "trace_callMany", E, D, 8, 0, -1 },
	{ "trace_filter", E, D, 8, 0, -1 },
	{ "trace_get", E, D, 2, 0, -1 },
	{ "trace_rawTransaction", E, D, 8, 0, -1 },
	{ "trace_replayBlockTransactions", E, D, 8, 0, -1 },
	{ "trace_replayTransaction", E, D, 8, 0, -1 },
	{ "trace_transaction", E, D, 3, 0, -1 },
	{ "voteSubscribe", S, SUB, 1, 0, -1 },
	{ "voteUnsubscribe", S, SUB, 1, 0, -1 },
	{ "web3_clientVersion", E, R, 2, 0, -1 },
	{ "web3_sha3", E, R, 2, 0, -1 },
};

/*
 * Whole namespaces that are never offered: the node's own accounts and keys, node
 * administration, mining, and the controls of development chains (anvil, hardhat, ganache).
 */
static const struct bp_jsonrpc_method denied_prefixes[] = {
	{ "admin_", E, NO, 0, 0, -1 },
	{ "anvil_", E, NO, 0, 0, -1 },
	{ "clique_", E, NO, 0, 0, -1 },
	{ "engine_", E, NO, 0, 0, -1 },
	{ "evm_", E, NO, 0, 0, -1 },
	{ "ganache_", E, NO, 0, 0, -1 },
	{ "hardhat_", E, NO, 0, 0, -1 },
	{ "miner_", E, NO, 0, 0, -1 },
	{ "personal_", E, NO, 0, 0, -1 },
	{ "wallet_", E, NO, 0, 0, -1 },
};

#undef E
#undef S
#undef R
#undef W
#undef D
#undef SUB
#undef NO

const struct bp_jsonrpc_method *
bp_jsonrpc_methods(size_t *n)
{
	*n = BP_NITEMS(methods);
	return methods;
}

const char *
bp_jsonrpc_class_name(enum bp_rpc_class c)
{
	static const char *const names[BP_RPC_CLASS__MAX] = {
		"read",		/* BP_RPC_READ */
		"write",	/* BP_RPC_WRITE */
		"debug",	/* BP_RPC_DEBUG */
		"subscribe",	/* BP_RPC_SUBSCRIBE */
		"denied",	/* BP_RPC_DENIED */
	};

	return (unsigned)c < BP_RPC_CLASS__MAX ? names[c] : "?";
}

/* Byte order of a row name and (name, len), as memcmp sees it. */
static int
cmp_name(const char *row, const char *name, size_t len)
{
	size_t rl = strlen(row);
	int c = memcmp(row, name, rl < len ? rl : len);

	if (c != 0)
		return c;
	return rl < len ? -1 : rl > len;
}

const struct bp_jsonrpc_method *
bp_jsonrpc_method(enum bp_chain_kind kind, const char *name, size_t len)
{
	size_t lo = 0, hi = BP_NITEMS(methods), i;

	if (len == 0 || len > BP_JSONRPC_METHOD_MAX)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_name(methods[mid].name, name, len);

		if (c == 0)
			return methods[mid].kind == kind ? &methods[mid] : NULL;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = 0; i < BP_NITEMS(denied_prefixes); i++) {
		size_t pl = strlen(denied_prefixes[i].name);

		if (denied_prefixes[i].kind == kind && len >= pl &&
		    memcmp(name, denied_prefixes[i].name, pl) == 0)
			return &denied_prefixes[i];
	}
	return NULL;
}

/* A block argument given as a string: a quantity or a tag. */
static enum bp_block_ref
block_string(const unsigned char *s, struct bp_jsonrpc_span v, int64_t *number)
{
	char buf[32];
	uint64_t q;
	size_t n;

	if (v.len < 2 || s[v.off] != '"' ||
	    decode_string(s + v.off, v.len, buf, sizeof(buf), &n) == -1)
		return BP_BLOCK_NONE;
	if (n == 8 && memcmp(buf, "earliest", 8) == 0) {
		*number = 0;
		return BP_BLOCK_NUMBER;
	}
	if (bp_hex_quantity_lenient(buf, n, &q) == -1 || q > (uint64_t)INT64_MAX)
		return BP_BLOCK_NONE;
	*number = (int64_t)q;
	return BP_BLOCK_NUMBER;
}

enum bp_block_ref
bp_jsonrpc_block_arg(const char *params, size_t len, int index, int64_t *number)
{
	struct bp_jsonrpc_iter it;
	struct bp_jsonrpc_span e, v;
	int i = 0;

	if (index < 0)
		return BP_BLOCK_NONE;
	bp_jsonrpc_iter_init(&it, params, len);
	while (bp_jsonrpc_iter_next(&it, &e) == 1) {
		if (i++ != index)
			continue;
		if (params[e.off] == '"')
			return block_string((const unsigned char *)params, e, number);
		/* EIP-1898: {"blockNumber": "0x.."} or {"blockHash": "0x.."} (a hash: not known). */
		if (params[e.off] == '{' &&
		    bp_jsonrpc_member(params + e.off, e.len, "blockNumber", &v) == 1) {
			v.off += e.off;
			return block_string((const unsigned char *)params, v, number);
		}
		return BP_BLOCK_NONE;
	}
	return BP_BLOCK_NONE;
}

unsigned
bp_jsonrpc_cost(const struct bp_jsonrpc_method *m, enum bp_block_ref ref, int64_t number,
    int64_t head, int64_t archive_depth)
{
	if (m->archive_cu == 0 || ref != BP_BLOCK_NUMBER || head < 0 || number > head ||
	    head - number <= archive_depth)
		return m->cu;
	return m->archive_cu > m->cu ? m->archive_cu : m->cu;
}

int
bp_jsonrpc_member(const char *text, size_t len, const char *name, struct bp_jsonrpc_span *val)
{
	struct scan sc = { (const unsigned char *)text, len, 0 };
	size_t nlen = strlen(name);
	char buf[64];
	int rc;

	ws(&sc);
	if (sc.pos >= sc.len || sc.s[sc.pos] != '{')
		return -1;
	sc.pos++;
	ws(&sc);
	if (sc.pos < sc.len && sc.s[sc.pos] == '}')
		return 0;
	for (;;) {
		size_t kstart, klen, n;

		ws(&sc);
		kstart = sc.pos;
		if (member_key(&sc, &klen) != SCAN_OK)
			return -1;
		ws(&sc);
		if (decode_string(sc.s + kstart, klen, buf, sizeof(buf), &n) == 0 && n == nlen &&
		    memcmp(buf, name, n) == 0) {
			/* The first one wins; what follows it is not examined. */
			val->off = sc.pos;
			if (skip_value(&sc, 1) != SCAN_OK)
				return -1;
			val->len = sc.pos - val->off;
			return 1;
		}
		if (skip_value(&sc, 1) != SCAN_OK)
			return -1;
		if ((rc = next_or_close(&sc, '}')) != 1)
			return rc == 0 ? 0 : -1;
	}
}

void
bp_jsonrpc_iter_init(struct bp_jsonrpc_iter *it, const char *s, size_t len)
{
	it->s = s;
	it->len = len;
	it->pos = 0;
	it->state = 0;
}

int
bp_jsonrpc_iter_next(struct bp_jsonrpc_iter *it, struct bp_jsonrpc_span *elem)
{
	struct scan sc = { (const unsigned char *)it->s, it->len, it->pos };

	if (it->state == 2)
		return 0;
	if (it->state < 0)
		return -1;
	ws(&sc);
	if (it->state == 0) {
		if (sc.pos >= sc.len || sc.s[sc.pos] != '[')
			goto bad;
		sc.pos++;
		ws(&sc);
		if (sc.pos < sc.len && sc.s[sc.pos] == ']') {
			it->state = 2;
			return 0;
		}
	} else {
		switch (next_or_close(&sc, ']')) {
		case 0:
			it->state = 2;
			return 0;
		case 1:
			ws(&sc);
			break;
		default:
			goto bad;
		}
	}
	elem->off = sc.pos;
	if (skip_value(&sc, 1) != SCAN_OK)
		goto bad;
	elem->len = sc.pos - elem->off;
	it->pos = sc.pos;
	it->state = 1;
	return 1;
bad:
	it->state = -1;
	return -1;
}

int
bp_jsonrpc_error_obj(struct bp_buf *b, const char *id, size_t idlen, int code, const char *msg)
{
	if (bp_buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":") == -1 ||
	    (idlen > 0 ? bp_buf_add(b, id, idlen) : bp_buf_adds(b, "null")) == -1 ||
	    bp_buf_printf(b, ",\"error\":{\"code\":%d,\"message\":\"", code) == -1 ||
	    bp_buf_json_str(b, msg) == -1 || bp_buf_adds(b, "\"}}") == -1)
		return -1;
	return 0;
}

/*
 * The client. Requests carry the ids 0..n-1 (a single call: 0) and answers are matched by id,
 * so a node that reorders a batch is still understood.
 */

static void
set_err(struct bp_jsonrpc_error *e, enum bp_jsonrpc_err_kind kind, int64_t code,
    const char *msg)
{
	e->kind = kind;
	e->code = code;
	bp_strlcpy(e->message, msg, sizeof(e->message));
}

/* Appends one request object with id to b; 0 or -1. */
static int
client_request(struct bp_buf *b, size_t id, const char *method, const cJSON *params)
{
	char *p = NULL;
	int rc = -1;

	if (params != NULL && !cJSON_IsArray(params) && !cJSON_IsObject(params))
		return -1;
	if (params != NULL && (p = cJSON_PrintUnformatted(params)) == NULL)
		return -1;
	if (bp_buf_printf(b, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"", id) == 0 &&
	    bp_buf_json_str(b, method) == 0 && bp_buf_adds(b, "\",\"params\":") == 0 &&
	    bp_buf_adds(b, p ? p : "[]") == 0 && bp_buf_adds(b, "}") == 0)
		rc = 0;
	free(p);
	return rc;
}

/* Every call unanswered, before a request is sent or an answer read. */
static void
client_reset(struct bp_jsonrpc_call *calls, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		calls[i].result = NULL;
		set_err(&calls[i].err, BP_JSONRPC_ERR_PROTOCOL, 0, "no answer for this call");
	}
}

/*
 * The code member of an error object as an int64: a number is truncated toward zero; one
 * outside the int64 range (a node may send 1e300, and converting it would be undefined
 * behaviour) or anything that is not a number gives 0.
 */
static int64_t
client_code(const cJSON *code)
{
	if (!cJSON_IsNumber(code) || !(code->valuedouble >= -9223372036854775808.0 &&
	    code->valuedouble < 9223372036854775808.0))
		return 0;
	return (int64_t)code->valuedouble;
}

/* Takes the answer for one call out of the response object o into c; 1 for a result. */
static int
client_take(cJSON *o, struct bp_jsonrpc_call *c)
{
	cJSON *res = cJSON_GetObjectItemCaseSensitive(o, "result");
	cJSON *err = cJSON_GetObjectItemCaseSensitive(o, "error");

	if (err != NULL && cJSON_IsObject(err)) {
		cJSON *msg = cJSON_GetObjectItemCaseSensitive(err, "message");

		set_err(&c->err, BP_JSONRPC_ERR_RPC,
		    client_code(cJSON_GetObjectItemCaseSensitive(err, "code")),
		    cJSON_IsString(msg) ? msg->valuestring : "error without a message");
		return 0;
	}
	if (res == NULL) {
		set_err(&c->err, BP_JSONRPC_ERR_PROTOCOL, 0, "answer has neither result nor error");
		return 0;
	}
	c->result = cJSON_DetachItemViaPointer(o, res);
	memset(&c->err, 0, sizeof(c->err));
	return 1;
}

/* The id of an answer object as an index below n, or -1. */
static long
client_id(const cJSON *o, size_t n)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");

	if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= (double)n ||
	    id->valuedouble != (double)(long)id->valuedouble)
		return -1;
	return (long)id->valuedouble;
}

size_t
bp_jsonrpc_client_parse(const char *ans, size_t len, struct bp_jsonrpc_call *calls, size_t n)
{
	cJSON *root, *o;
	size_t i, got = 0;

	client_reset(calls, n);
	/* cJSON caps nesting itself (CJSON_NESTING_LIMIT); answers are the operator's nodes'. */
	if (len == 0 || (root = cJSON_ParseWithLength(ans, len)) == NULL) {
		for (i = 0; i < n; i++)
			set_err(&calls[i].err, BP_JSONRPC_ERR_PROTOCOL, 0, "answer is not JSON");
		return 0;
	}
	if (cJSON_IsArray(root)) {
		cJSON_ArrayForEach(o, root) {
			long k = client_id(o, n);

			if (k >= 0 && calls[k].result == NULL &&
			    calls[k].err.kind == BP_JSONRPC_ERR_PROTOCOL)
				got += (size_t)client_take(o, &calls[k]);
		}
	} else if (cJSON_IsObject(root)) {
		long k = client_id(root, n);

		if (k >= 0 || n == 1)
			got += (size_t)client_take(root, &calls[k >= 0 ? k : 0]);
		else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "error")))
			/* One error for the whole batch (a node that refused it): each call gets it. */
			for (i = 0; i < n; i++)
				client_take(root, &calls[i]);
		/*
		 * Anything else without an id answers no call of a batch: a result cannot say
		 * which call it is for (and taking one per call would hand a repeated "result"
		 * member to the next call).
		 */
	}
	cJSON_Delete(root);
	return got;
}

static size_t
client_send(struct bp_upstream *up, const struct bp_network *net, struct bp_jsonrpc_call *calls,
    size_t n, int batch)
{
	struct bp_upstream_info info;
	struct bp_buf req, ans;
	size_t i, got = 0;

	bp_buf_init(&req, SIZE_MAX / 4);
	bp_buf_init(&ans, SIZE_MAX / 4);
	client_reset(calls, n);
	if (batch && bp_buf_adds(&req, "[") == -1)
		goto fail;
	for (i = 0; i < n; i++)
		if ((i > 0 && bp_buf_adds(&req, ",") == -1) ||
		    client_request(&req, i, calls[i].method, calls[i].params) == -1)
			goto fail;
	if (batch && bp_buf_adds(&req, "]") == -1)
		goto fail;
	switch (bp_upstream_post(up, net, req.data, req.len, &ans, &info)) {
	case BP_UPSTREAM_OK:
		break;
	case BP_UPSTREAM_TOO_LARGE:
	case BP_UPSTREAM_FAILED:
	default:
		for (i = 0; i < n; i++)
			set_err(&calls[i].err, BP_JSONRPC_ERR_TRANSPORT, 0, info.error);
		goto out;
	}
	got = bp_jsonrpc_client_parse(ans.data, ans.len, calls, n);
	goto out;
fail:
	for (i = 0; i < n; i++)
		set_err(&calls[i].err, BP_JSONRPC_ERR_PROTOCOL, 0,
		    "could not build the request (params must be an array or an object)");
out:
	bp_buf_free(&req);
	bp_buf_free(&ans);
	return got;
}

cJSON *
bp_jsonrpc_call(struct bp_upstream *up, const struct bp_network *net, const char *method,
    const cJSON *params, struct bp_jsonrpc_error *err)
{
	struct bp_jsonrpc_call c = { method, params, NULL, { 0, 0, "" } };

	client_send(up, net, &c, 1, 0);
	if (err != NULL)
		*err = c.err;
	return c.result;
}

size_t
bp_jsonrpc_batch(struct bp_upstream *up, const struct bp_network *net,
    struct bp_jsonrpc_call *calls, size_t n)
{
	if (n == 0)
		return 0;
	return client_send(up, net, calls, n, 1);
}
