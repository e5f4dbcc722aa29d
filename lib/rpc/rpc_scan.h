/*
 * Strict JSON scanning for JSON-RPC (lib/rpc/rpc_scan.c; docs/rpc.md): one validating pass over
 * untrusted text that records where values lie instead of building a tree. RFC 8259 exactly:
 * UTF-8 only (no overlong forms, no surrogates, nothing past U+10FFFF), no control characters
 * in strings, \u escapes well-formed with surrogates paired, numbers in the JSON grammar. Being
 * stricter than the nodes behind the proxy means nothing it passes can be read two ways.
 *
 * The primitives (bp_rpc_scan_*) are for the JSON-RPC modules (lib/rpc/rpc_envelope.c,
 * lib/rpc/rpc_methods.c); the small scanners of node answers (bp_rpc_scan_member, bp_rpc_scan_iter_*)
 * are for anyone. None allocates; none recurses; nesting is capped at BP_RPC_SCAN_DEPTH.
 */
#ifndef BP_RPC_SCAN_H
#define BP_RPC_SCAN_H

#include <stddef.h>

#define BP_RPC_SCAN_DEPTH	64	/* the most nested arrays and objects in a body */

/* A stretch of the scanned text: [off, off + len). */
struct bp_rpc_scan_span {
	size_t	off;
	size_t	len;
};

/* What the primitives return. */
enum {
	BP_RPC_SCAN_OK = 0,
	BP_RPC_SCAN_SYNTAX = -1,	/* not JSON: -32700 */
	BP_RPC_SCAN_DEEP = -2,		/* nested deeper than BP_RPC_SCAN_DEPTH: -32600 */
};

/* A position in a text being scanned. */
struct bp_rpc_scan {
	const unsigned char	*s;
	size_t			 len;
	size_t			 pos;
};

static inline int
bp_rpc_scan_isdigit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Skips white space at sc->pos. */
void	bp_rpc_scan_ws(struct bp_rpc_scan *);
/* Skips the string at sc->pos (its opening quote), validating it. */
int	bp_rpc_scan_string(struct bp_rpc_scan *);
/*
 * Skips the value at sc->pos (after white space), validating it, without recursion; depth is
 * the number of arrays and objects around it. BP_RPC_SCAN_OK leaves sc->pos just past it.
 */
int	bp_rpc_scan_value(struct bp_rpc_scan *, int depth);
/*
 * A member's key and its colon, at sc->pos (white space skipped). Unless klen is NULL, *klen
 * gets the length of the key with its quotes, which starts where sc->pos was.
 */
int	bp_rpc_scan_key(struct bp_rpc_scan *, size_t *klen);
/*
 * After an element or member: white space, then a comma or the closing bracket close, which is
 * consumed. 1 after a comma, 0 after close, BP_RPC_SCAN_SYNTAX for anything else.
 */
int	bp_rpc_scan_next(struct bp_rpc_scan *, unsigned char close);
/*
 * Decodes a string bp_rpc_scan_string accepted (s at its opening quote, len its length with
 * quotes) into out (cap bytes, not NUL-terminated; may hold NULs from \u0000); *outlen gets the
 * decoded length. 0, or -1 when it is longer than cap (*outlen then says cap + 1).
 */
int	bp_rpc_scan_decode(const unsigned char *s, size_t len, char *out, size_t cap,
	    size_t *outlen);
/*
 * Folds a decoded member name k (n bytes of UTF-8) the way the laxest node decoders match
 * member names, into out (cap bytes): ASCII letters to lower case, and the four non-ASCII
 * letters whose case mappings reach ASCII to that letter: U+017F LONG S and U+212A KELVIN SIGN
 * (Go's encoding/json folds them with s and k), U+0130 and U+0131, the dotted and dotless I
 * (.NET's and Java's upper and lower casing make them i). Returns the folded length, or 0 when
 * k holds any other non-ASCII character or does not fit: such a name folds to no ASCII name.
 */
size_t	bp_rpc_scan_fold(const char *k, size_t n, char *out, size_t cap);

/*
 * Finds the member name of the JSON object at the start of s (after optional white space).
 * Returns 1 with *val set to the member's value (the first, if it repeats), 0 when the object
 * has no such member, -1 when s does not start with a well-formed object.
 */
int	bp_rpc_scan_member(const char *s, size_t len, const char *name,
	    struct bp_rpc_scan_span *val);
/*
 * As bp_rpc_scan_member, for client input that a node will read too: -2 when the member is
 * there twice, or another member's name folds to name (bp_rpc_scan_fold), so a node could
 * read another value than *val.
 */
int	bp_rpc_scan_member_strict(const char *s, size_t len, const char *name,
	    struct bp_rpc_scan_span *val);

/* Walks the elements of the JSON array at the start of a text. */
struct bp_rpc_scan_iter {
	const char	*s;
	size_t		 len;
	size_t		 pos;
	int		 state;
};
void	bp_rpc_scan_iter_init(struct bp_rpc_scan_iter *, const char *s, size_t len);
/* 1 with *elem set, 0 after the last element, -1 when the text is not a well-formed array. */
int	bp_rpc_scan_iter_next(struct bp_rpc_scan_iter *, struct bp_rpc_scan_span *elem);

#endif
