/*
 * Why a domain call failed, for the uniform error body (lib/core/fcgi.h): the HTTP status, the error
 * code and a message. The one error type of lib/ modules that answer a REST resource (lib/nft/nft.h,
 * lib/wallet/wallets.h), with the setters they share.
 */
#ifndef BP_ERROR_H
#define BP_ERROR_H

struct bp_network;

#define BP_ERROR_MSG	320

struct bp_error {
	int		 status;
	const char	*code;		/* static: "invalid_request", "not_found", ... */
	char		 message[BP_ERROR_MSG];
};

/* Sets *err and returns -1, for "return bp_error_set(err, 404, "not_found", ...)". */
int	bp_error_set(struct bp_error *err, int status, const char *code, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

/* 500 internal_error "database error"; returns -1. */
int	bp_error_db(struct bp_error *err);

/* 500 internal_error: net's node did not answer, retry with exponential backoff; returns -1. */
int	bp_error_node(struct bp_error *err, const struct bp_network *net);

#endif
