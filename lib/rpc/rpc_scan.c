/*
 * Strict JSON scanning for the JSON-RPC modules (lib/rpc/rpc_scan.h): the primitives the envelope
 * scanner (lib/rpc/rpc_envelope.c) and the method table's block arguments (lib/rpc/rpc_methods.c) are
 * built on, and the small scanners of node answers (bp_rpc_scan_member, bp_rpc_scan_iter_*).
 * Nothing here allocates or recurses.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/hex.h"
#include "rpc_scan.h"

/*
 * Strict RFC 8259: UTF-8 only (no overlong forms, no surrogates, nothing past
 * U+10FFFF), no control characters in strings, \u escapes well-formed with surrogates paired,
 * numbers in the JSON grammar, nothing after the top-level value but white space. Being stricter
 * than the nodes behind us means nothing we pass can be read two ways.
 */

void
bp_rpc_scan_ws(struct bp_rpc_scan *sc)
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
int
bp_rpc_scan_string(struct bp_rpc_scan *sc)
{
	const unsigned char *s = sc->s;
	size_t i = sc->pos + 1, n = sc->len, k;
	long v, lo;

	while (i < n) {
		unsigned char c = s[i];

		if (c == '"') {
			sc->pos = i + 1;
			return BP_RPC_SCAN_OK;
		}
		if (c == '\\') {
			if (i + 1 >= n)
				return BP_RPC_SCAN_SYNTAX;
			c = s[i + 1];
			if (c != 'u') {
				if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' &&
				    c != 'n' && c != 'r' && c != 't')
					return BP_RPC_SCAN_SYNTAX;
				i += 2;
				continue;
			}
			if (n - i < 6 || (v = hex4(s + i + 2)) < 0)
				return BP_RPC_SCAN_SYNTAX;
			i += 6;
			if (v >= 0xdc00 && v <= 0xdfff)
				return BP_RPC_SCAN_SYNTAX;	/* a low surrogate alone */
			if (v >= 0xd800 && v <= 0xdbff) {
				if (n - i < 6 || s[i] != '\\' || s[i + 1] != 'u' ||
				    (lo = hex4(s + i + 2)) < 0xdc00 || lo > 0xdfff)
					return BP_RPC_SCAN_SYNTAX;
				i += 6;
			}
			continue;
		}
		if (c < 0x20)
			return BP_RPC_SCAN_SYNTAX;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((k = utf8_seq(s + i, n - i)) == 0)
			return BP_RPC_SCAN_SYNTAX;
		i += k;
	}
	return BP_RPC_SCAN_SYNTAX;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int
skip_number(struct bp_rpc_scan *sc)
{
	const unsigned char *s = sc->s;
	size_t i = sc->pos, n = sc->len;

	if (i < n && s[i] == '-')
		i++;
	if (i >= n || !bp_rpc_scan_isdigit(s[i]))
		return BP_RPC_SCAN_SYNTAX;
	if (s[i] == '0')
		i++;
	else
		while (i < n && bp_rpc_scan_isdigit(s[i]))
			i++;
	if (i < n && s[i] == '.') {
		if (++i >= n || !bp_rpc_scan_isdigit(s[i]))
			return BP_RPC_SCAN_SYNTAX;
		while (i < n && bp_rpc_scan_isdigit(s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || !bp_rpc_scan_isdigit(s[i]))
			return BP_RPC_SCAN_SYNTAX;
		while (i < n && bp_rpc_scan_isdigit(s[i]))
			i++;
	}
	sc->pos = i;
	return BP_RPC_SCAN_OK;
}

static int
skip_literal(struct bp_rpc_scan *sc, const char *lit, size_t n)
{
	if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, lit, n) != 0)
		return BP_RPC_SCAN_SYNTAX;
	sc->pos += n;
	return BP_RPC_SCAN_OK;
}

/*
 * A member's key and its colon, at sc->pos (white space already skipped). Unless klen is NULL,
 * *klen gets the length of the key with its quotes, which starts where sc->pos was.
 */
int
bp_rpc_scan_key(struct bp_rpc_scan *sc, size_t *klen)
{
	size_t start = sc->pos;
	int rc;

	if (sc->pos >= sc->len || sc->s[sc->pos] != '"')
		return BP_RPC_SCAN_SYNTAX;
	if ((rc = bp_rpc_scan_string(sc)) != BP_RPC_SCAN_OK)
		return rc;
	if (klen != NULL)
		*klen = sc->pos - start;
	bp_rpc_scan_ws(sc);
	if (sc->pos >= sc->len || sc->s[sc->pos] != ':')
		return BP_RPC_SCAN_SYNTAX;
	sc->pos++;
	return BP_RPC_SCAN_OK;
}

/*
 * After an array element or an object member: white space, then a comma or the closing bracket
 * close, which is consumed. Returns 1 after a comma (another element follows), 0 after close (the
 * container ends), BP_RPC_SCAN_SYNTAX for anything else.
 */
int
bp_rpc_scan_next(struct bp_rpc_scan *sc, unsigned char close)
{
	bp_rpc_scan_ws(sc);
	if (sc->pos < sc->len && sc->s[sc->pos] == ',') {
		sc->pos++;
		return 1;
	}
	if (sc->pos < sc->len && sc->s[sc->pos] == close) {
		sc->pos++;
		return 0;
	}
	return BP_RPC_SCAN_SYNTAX;
}

/*
 * Skips the value at sc->pos (after white space), validating it, without recursion. depth is
 * the number of arrays and objects around the value. Returns BP_RPC_SCAN_OK with sc->pos just past
 * the value.
 */
int
bp_rpc_scan_value(struct bp_rpc_scan *sc, int depth)
{
	unsigned char stack[BP_RPC_SCAN_DEPTH];
	int top = 0, rc;
	unsigned char c;

	for (;;) {
		/* A value starts here. */
		bp_rpc_scan_ws(sc);
		if (sc->pos >= sc->len)
			return BP_RPC_SCAN_SYNTAX;
		c = sc->s[sc->pos];
		if (c == '{' || c == '[') {
			if (depth + top + 1 > BP_RPC_SCAN_DEPTH)
				return BP_RPC_SCAN_DEEP;
			stack[top++] = c;
			sc->pos++;
			bp_rpc_scan_ws(sc);
			if (sc->pos < sc->len && sc->s[sc->pos] == (c == '{' ? '}' : ']')) {
				sc->pos++;
				top--;
			} else if (c == '{') {
				if ((rc = bp_rpc_scan_key(sc, NULL)) != BP_RPC_SCAN_OK)
					return rc;
				continue;
			} else
				continue;
		} else if (c == '"') {
			if ((rc = bp_rpc_scan_string(sc)) != BP_RPC_SCAN_OK)
				return rc;
		} else if (c == '-' || bp_rpc_scan_isdigit(c)) {
			if ((rc = skip_number(sc)) != BP_RPC_SCAN_OK)
				return rc;
		} else if (c == 't') {
			if ((rc = skip_literal(sc, "true", 4)) != BP_RPC_SCAN_OK)
				return rc;
		} else if (c == 'f') {
			if ((rc = skip_literal(sc, "false", 5)) != BP_RPC_SCAN_OK)
				return rc;
		} else if (c == 'n') {
			if ((rc = skip_literal(sc, "null", 4)) != BP_RPC_SCAN_OK)
				return rc;
		} else
			return BP_RPC_SCAN_SYNTAX;

		/* After a value: close containers, or go on to the next member or element. */
		for (;;) {
			if (top == 0)
				return BP_RPC_SCAN_OK;
			rc = bp_rpc_scan_next(sc, stack[top - 1] == '{' ? '}' : ']');
			if (rc == BP_RPC_SCAN_SYNTAX)
				return rc;
			if (rc == 1) {
				if (stack[top - 1] == '{') {
					bp_rpc_scan_ws(sc);
					if ((rc = bp_rpc_scan_key(sc, NULL)) != BP_RPC_SCAN_OK)
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
int
bp_rpc_scan_decode(const unsigned char *s, size_t len, char *out, size_t cap, size_t *outlen)
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

size_t
bp_rpc_scan_fold(const char *k, size_t n, char *out, size_t cap)
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
 * Finds member name in the object at the start of text. Not strict: the first exact match wins
 * and what follows it is not examined. Strict: every member is read, and a second exact match,
 * or a name that folds to name without being it (bp_rpc_scan_fold), makes the answer -2.
 */
static int
member_find(const char *text, size_t len, const char *name, struct bp_rpc_scan_span *val,
    int strict)
{
	struct bp_rpc_scan sc = { (const unsigned char *)text, len, 0 };
	size_t nlen = strlen(name), flen = 0;
	char buf[64], folded[64], fname[64];
	int rc, found = 0;

	if (strict && (flen = bp_rpc_scan_fold(name, nlen, fname, sizeof(fname))) == 0)
		return -1;
	bp_rpc_scan_ws(&sc);
	if (sc.pos >= sc.len || sc.s[sc.pos] != '{')
		return -1;
	sc.pos++;
	bp_rpc_scan_ws(&sc);
	if (sc.pos < sc.len && sc.s[sc.pos] == '}')
		return 0;
	for (;;) {
		size_t kstart, klen, vstart, n;
		int exact;

		bp_rpc_scan_ws(&sc);
		kstart = sc.pos;
		if (bp_rpc_scan_key(&sc, &klen) != BP_RPC_SCAN_OK)
			return -1;
		bp_rpc_scan_ws(&sc);
		vstart = sc.pos;
		if (bp_rpc_scan_value(&sc, 1) != BP_RPC_SCAN_OK)
			return -1;
		if (bp_rpc_scan_decode(sc.s + kstart, klen, buf, sizeof(buf), &n) == 0) {
			exact = n == nlen && memcmp(buf, name, n) == 0;
			if (exact && !found) {
				val->off = vstart;
				val->len = sc.pos - vstart;
				found = 1;
				if (!strict)
					return 1;
			} else if (strict && (exact || (bp_rpc_scan_fold(buf, n, folded,
			    sizeof(folded)) == flen && memcmp(folded, fname, flen) == 0)))
				return -2;
		}
		if ((rc = bp_rpc_scan_next(&sc, '}')) != 1)
			return rc == 0 ? found : -1;
	}
}

int
bp_rpc_scan_member(const char *text, size_t len, const char *name, struct bp_rpc_scan_span *val)
{
	return member_find(text, len, name, val, 0);
}

int
bp_rpc_scan_member_strict(const char *text, size_t len, const char *name,
    struct bp_rpc_scan_span *val)
{
	return member_find(text, len, name, val, 1);
}

void
bp_rpc_scan_iter_init(struct bp_rpc_scan_iter *it, const char *s, size_t len)
{
	it->s = s;
	it->len = len;
	it->pos = 0;
	it->state = 0;
}

int
bp_rpc_scan_iter_next(struct bp_rpc_scan_iter *it, struct bp_rpc_scan_span *elem)
{
	struct bp_rpc_scan sc = { (const unsigned char *)it->s, it->len, it->pos };

	if (it->state == 2)
		return 0;
	if (it->state < 0)
		return -1;
	bp_rpc_scan_ws(&sc);
	if (it->state == 0) {
		if (sc.pos >= sc.len || sc.s[sc.pos] != '[')
			goto bad;
		sc.pos++;
		bp_rpc_scan_ws(&sc);
		if (sc.pos < sc.len && sc.s[sc.pos] == ']') {
			it->state = 2;
			return 0;
		}
	} else {
		switch (bp_rpc_scan_next(&sc, ']')) {
		case 0:
			it->state = 2;
			return 0;
		case 1:
			bp_rpc_scan_ws(&sc);
			break;
		default:
			goto bad;
		}
	}
	elem->off = sc.pos;
	if (bp_rpc_scan_value(&sc, 1) != BP_RPC_SCAN_OK)
		goto bad;
	elem->len = sc.pos - elem->off;
	it->pos = sc.pos;
	it->state = 1;
	return 1;
bad:
	it->state = -1;
	return -1;
}
