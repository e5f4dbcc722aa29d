/*
 * Token logos from a Uniswap-format token list (token_list.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/log.h"
#include "evm/address.h"
#include "token_list.h"

struct entry {
	int64_t		 chain_id;
	char		 address[BP_ADDR_STR_MAX];	/* lower case */
	char		*logo;
};

struct bp_token_list {
	struct entry	*e;
	size_t		 n;
};

static int
cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->chain_id != y->chain_id)
		return x->chain_id < y->chain_id ? -1 : 1;
	return strcmp(x->address, y->address);
}

/* Whether uri is a logo URI kept: http(s):// or ipfs://, printable, not too long. */
static int
good_uri(const char *uri)
{
	size_t i, n = strlen(uri);

	if (n >= BP_TOKEN_LIST_URI_MAX || (strncmp(uri, "https://", 8) != 0 &&
	    strncmp(uri, "http://", 7) != 0 && strncmp(uri, "ipfs://", 7) != 0))
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)uri[i] <= 0x20 || uri[i] == 0x7f)
			return 0;
	return 1;
}

/* Entry j of the array into *e (logo malloc'd); 0, or -1 when it is skipped. */
static int
read_entry(const cJSON *j, struct entry *e)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "chainId");
	const cJSON *addr = cJSON_GetObjectItemCaseSensitive(j, "address");
	const cJSON *logo = cJSON_GetObjectItemCaseSensitive(j, "logoURI");
	uint8_t a[BP_ADDR_LEN];

	if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble > 9e15 ||
	    id->valuedouble != (double)(int64_t)id->valuedouble || !cJSON_IsString(addr) ||
	    !cJSON_IsString(logo) || bp_addr_parse(addr->valuestring, strlen(addr->valuestring),
	    0, a) == -1 || !good_uri(logo->valuestring))
		return -1;
	e->chain_id = (int64_t)id->valuedouble;
	bp_addr_format_lower(a, e->address, sizeof(e->address));
	return (e->logo = strdup(logo->valuestring)) == NULL ? -1 : 0;
}

struct bp_token_list *
bp_token_list_parse(const char *text, size_t len)
{
	struct bp_token_list *l = NULL, *ret = NULL;
	const cJSON *tokens, *j;
	cJSON *doc;
	size_t cap;

	if ((doc = cJSON_ParseWithLength(text, len)) == NULL) {
		bp_err("%s: the token list is not JSON", __func__);
		return NULL;
	}
	tokens = cJSON_GetObjectItemCaseSensitive(doc, "tokens");
	if (!cJSON_IsObject(doc) || !cJSON_IsArray(tokens)) {
		bp_err("%s: the token list has no \"tokens\" array", __func__);
		goto out;
	}
	cap = (size_t)cJSON_GetArraySize(tokens);
	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (cap > 0 && (l->e = calloc(cap, sizeof(*l->e))) == NULL))
		goto out;
	cJSON_ArrayForEach(j, tokens)
		if (l->n < cap && read_entry(j, &l->e[l->n]) == 0)
			l->n++;
	if (l->n > 0)
		qsort(l->e, l->n, sizeof(*l->e), cmp_entry);
	ret = l;
	l = NULL;
out:
	bp_token_list_free(l);
	cJSON_Delete(doc);
	return ret;
}

struct bp_token_list *
bp_token_list_load(const char *path)
{
	struct bp_token_list *l = NULL;
	char *text = NULL;
	size_t n;
	FILE *fp;

	if ((fp = fopen(path, "rb")) == NULL) {
		bp_err("%s: %s: cannot open", __func__, path);
		return NULL;
	}
	if ((text = malloc(BP_TOKEN_LIST_MAX_BYTES + 1)) != NULL) {
		n = fread(text, 1, BP_TOKEN_LIST_MAX_BYTES + 1, fp);
		if (n > BP_TOKEN_LIST_MAX_BYTES)
			bp_err("%s: %s: larger than %d bytes", __func__, path,
			    BP_TOKEN_LIST_MAX_BYTES);
		else
			l = bp_token_list_parse(text, n);
	}
	free(text);
	fclose(fp);
	return l;
}

void
bp_token_list_free(struct bp_token_list *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->e[i].logo);
	free(l->e);
	free(l);
}

const char *
bp_token_list_logo(const struct bp_token_list *l, int64_t chain_id, const char *contract)
{
	struct entry key, *e;
	uint8_t a[BP_ADDR_LEN];

	if (l == NULL || l->n == 0 || bp_addr_parse(contract, strlen(contract), 0, a) == -1)
		return NULL;
	key.chain_id = chain_id;
	bp_addr_format_lower(a, key.address, sizeof(key.address));
	e = bsearch(&key, l->e, l->n, sizeof(*l->e), cmp_entry);
	return e != NULL ? e->logo : NULL;
}

size_t
bp_token_list_size(const struct bp_token_list *l)
{
	return l != NULL ? l->n : 0;
}
