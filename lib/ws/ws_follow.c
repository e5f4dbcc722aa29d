/*
 * The head follower of the WebSocket program (ws_follow.h): index_blocks read in number order,
 * each new row checked to continue what was delivered (its parentHash is the delivered hash of
 * the number before), a reorg walked back through the delivered hashes to the common ancestor.
 * A poll first asks SQLite whether any connection has written since the last one (PRAGMA
 * data_version, answered from the shared memory of the WAL without reading a page), so a
 * thousand idle followers cost a thousand cheap checks per poll interval.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/db.h"
#include "core/hex.h"
#include "core/util.h"
#include "evm/u256.h"
#include "index/index_read.h"
#include "ws_follow.h"

/* The node's header (index_headers, lib/index/index_headers.c) when the store kept it for that hash. */
static const char sql_rows[] = "SELECT b.number, b.hash, b.parent_hash, b.timestamp, b.gas_used,"
    " b.gas_limit, b.base_fee, h.header FROM index_blocks b LEFT JOIN index_headers h"
    " ON h.chain = b.chain AND h.number = b.number AND h.hash = b.hash"
    " WHERE b.chain = ? AND b.number > ? ORDER BY b.number LIMIT 64";

/* The hash delivered for number, or NULL when the ring no longer holds it. */
static const char *
sent_hash(const struct bp_ws_follow *f, int64_t number)
{
	size_t i;

	if (number < 0)
		return NULL;
	i = (size_t)(number % BP_WS_FOLLOW_RING);
	return f->sent[i].number == number ? f->sent[i].hash : NULL;
}

static void
remember(struct bp_ws_follow *f, int64_t number, const char *hash)
{
	size_t i = (size_t)(number % BP_WS_FOLLOW_RING);

	f->sent[i].number = number;
	bp_strlcpy(f->sent[i].hash, hash, sizeof(f->sent[i].hash));
}

int
bp_ws_follow_start(struct bp_ws_follow *f, struct bp_db *db, const char *chain)
{
	struct bp_index_head h;
	size_t i;
	int rc;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < BP_WS_FOLLOW_RING; i++)
		f->sent[i].number = -1;
	f->version = -1;
	f->last = -1;
	if (bp_strlcpy(f->chain, chain, sizeof(f->chain)) == -1)
		return -1;
	if ((rc = bp_index_get_head(db, chain, &h)) == -1)
		return -1;
	if (rc == 1 && h.head >= 0) {
		f->last = h.head;
		remember(f, h.head, h.head_hash);
	}
	return 0;
}

/*
 * The delivered heads above the common ancestor with the stored chain are reported removed,
 * newest first; f->last becomes the ancestor. 0, or -1.
 */
static int
walk_back(struct bp_ws_follow *f, struct bp_db *db, const struct bp_ws_follow_fns *fns,
    void *arg)
{
	char hash[BP_INDEX_HASH_STR];
	const char *mine;
	int64_t n;
	int rc;

	for (n = f->last; n >= 0 && (mine = sent_hash(f, n)) != NULL; n--) {
		if ((rc = bp_index_block_hash(db, f->chain, n, hash, sizeof(hash))) == -1)
			return -1;
		if (rc == 1 && strcmp(hash, mine) == 0)
			break;
		if (fns->removed != NULL && fns->removed(n, mine, arg) == -1)
			return -1;
	}
	f->last = n;
	return 0;
}

static void
fill_head(struct bp_stmt *st, struct bp_ws_head *h)
{
	h->number = bp_col_int(st, 0);
	bp_strlcpy(h->hash, bp_col_text(st, 1), sizeof(h->hash));
	bp_strlcpy(h->parent_hash, bp_col_text(st, 2), sizeof(h->parent_hash));
	h->timestamp = bp_col_int(st, 3);
	h->gas_used = bp_col_int(st, 4);
	h->gas_limit = bp_col_int(st, 5);
	bp_strlcpy(h->base_fee, bp_col_text(st, 6), sizeof(h->base_fee));
	h->header = bp_col_is_null(st, 7) ? NULL : bp_col_text(st, 7);
}

/* One batch of rows after f->last. Returns rows delivered, -2 on a reorg (walk back), -1. */
static int
read_batch(struct bp_ws_follow *f, struct bp_db *db, const struct bp_ws_follow_fns *fns,
    void *arg)
{
	struct bp_ws_head h;
	struct bp_stmt *st;
	enum bp_db_step step;
	const char *prev;
	int n = 0, rc = 0;

	if ((st = bp_db_stmt(db, sql_rows)) == NULL)
		return -1;
	bp_stmt_text(st, 1, f->chain);
	bp_stmt_int(st, 2, f->last);
	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		fill_head(st, &h);
		prev = sent_hash(f, h.number - 1);
		if (h.number != f->last + 1 || (prev != NULL && strcmp(prev, h.parent_hash) != 0)) {
			rc = -2;
			break;
		}
		if (fns->head != NULL && fns->head(&h, arg) == -1) {
			rc = -1;
			break;
		}
		remember(f, h.number, h.hash);
		f->last = h.number;
		n++;
	}
	if (step == BP_DB_ERROR)
		rc = -1;
	bp_stmt_reset(st);
	return rc < 0 ? rc : n;
}

int
bp_ws_follow_poll(struct bp_ws_follow *f, struct bp_db *db, const struct bp_ws_follow_fns *fns,
    void *arg)
{
	char hash[BP_INDEX_HASH_STR];
	const char *mine;
	int64_t v;
	int total = 0, n, rc, reorgs = 0;

	if ((v = bp_db_data_version(db)) == -1)
		return -1;
	if (v == f->version)
		return 0;
	f->version = v;
	/* The last delivered head replaced in place (a reorg to a chain no longer than ours). */
	if ((mine = sent_hash(f, f->last)) != NULL) {
		if ((rc = bp_index_block_hash(db, f->chain, f->last, hash, sizeof(hash))) == -1)
			return -1;
		if (rc == 1 && strcmp(hash, mine) != 0 && walk_back(f, db, fns, arg) == -1)
			return -1;
	}
	for (;;) {
		if ((n = read_batch(f, db, fns, arg)) == -1)
			return -1;
		if (n == -2) {
			/* Bounded: each walk back ends at an ancestor or below the ring. */
			if (++reorgs > BP_WS_FOLLOW_RING || walk_back(f, db, fns, arg) == -1)
				return -1;
			continue;
		}
		total += n;
		if (n < BP_WS_FOLLOW_BATCH)
			break;
	}
	return total;
}

/* Appends ,"name":"0x.." for v to out at *at; 0 or -1. */
static int
put_qty(char *out, size_t cap, size_t *at, const char *name, uint64_t v)
{
	char q[24];
	int w;

	if (bp_hex_quantity_encode(v, q, sizeof(q)) == -1)
		return -1;
	w = snprintf(out + *at, cap - *at, ",\"%s\":\"%s\"", name, q);
	if (w < 0 || (size_t)w >= cap - *at)
		return -1;
	*at += (size_t)w;
	return 0;
}

int
bp_ws_head_json(const struct bp_ws_head *h, char *out, size_t cap)
{
	struct bp_u256 fee;
	char q[80];
	size_t at;
	int w;

	if (h->number < 0 || h->timestamp < 0 || h->gas_used < 0 || h->gas_limit < 0)
		return -1;
	w = snprintf(out, cap, "{\"hash\":\"%s\",\"parentHash\":\"%s\"", h->hash, h->parent_hash);
	if (w < 0 || (size_t)w >= cap)
		return -1;
	at = (size_t)w;
	if (put_qty(out, cap, &at, "number", (uint64_t)h->number) == -1 ||
	    put_qty(out, cap, &at, "timestamp", (uint64_t)h->timestamp) == -1 ||
	    put_qty(out, cap, &at, "gasUsed", (uint64_t)h->gas_used) == -1 ||
	    put_qty(out, cap, &at, "gasLimit", (uint64_t)h->gas_limit) == -1)
		return -1;
	if (h->base_fee[0] != '\0') {
		if (bp_u256_from_dec(&fee, h->base_fee, strlen(h->base_fee)) == -1 ||
		    bp_u256_to_quantity(&fee, q, sizeof(q)) == -1)
			return -1;
		w = snprintf(out + at, cap - at, ",\"baseFeePerGas\":\"%s\"", q);
		if (w < 0 || (size_t)w >= cap - at)
			return -1;
		at += (size_t)w;
	}
	if (at + 2 > cap)
		return -1;
	out[at++] = '}';
	out[at] = '\0';
	return 0;
}

const char *
bp_ws_head_result(const struct bp_ws_head *h, char *out, size_t cap)
{
	if (h->header != NULL && h->header[0] == '{')
		return h->header;
	return bp_ws_head_json(h, out, cap) == 0 ? out : NULL;
}

/* ---- The heads feed (ws_follow.h): written by the indexer, read by every connection. */

/* The last BP_WS_FEED_HEADS rows, newest first (the feed reverses them). */
static const char sql_recent[] = "SELECT b.number, b.hash, b.parent_hash, b.timestamp,"
    " b.gas_used, b.gas_limit, b.base_fee, h.header FROM index_blocks b LEFT JOIN index_headers h"
    " ON h.chain = b.chain AND h.number = b.number AND h.hash = b.hash"
    " WHERE b.chain = ? ORDER BY b.number DESC LIMIT ?";

int
bp_ws_feed_path(const char *database, const char *chain, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s.heads.%s", database, chain);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* Writes all of b to fd; 0 or -1. */
static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Sets fd's modification time after the current feed's (at path), to the nanosecond: readers
 * tell a new feed by inode, time and size, and a freed inode number comes back at once, the
 * size is often the same, and the kernel's own clock for file times ticks in milliseconds.
 */
static int
stamp(int fd, const char *path)
{
	struct timespec ts[2];
	struct stat sb;

	if (clock_gettime(CLOCK_REALTIME, &ts[1]) == -1)
		return -1;
	if (stat(path, &sb) == 0 && (sb.st_mtim.tv_sec > ts[1].tv_sec ||
	    (sb.st_mtim.tv_sec == ts[1].tv_sec && sb.st_mtim.tv_nsec >= ts[1].tv_nsec))) {
		ts[1] = sb.st_mtim;
		if (++ts[1].tv_nsec == 1000000000) {
			ts[1].tv_sec++;
			ts[1].tv_nsec = 0;
		}
	}
	ts[0] = ts[1];
	return futimens(fd, ts);
}

int
bp_ws_feed_write(struct bp_db *db, const char *chain, const char *path)
{
	struct bp_ws_head h;
	struct bp_buf lines[BP_WS_FEED_HEADS], out;
	struct bp_stmt *st;
	enum bp_db_step step;
	char core[640], tmp[4200];
	const char *res;
	size_t n = 0, i, total;
	int fd, ok, rc = -1;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -1;
	bp_buf_init(&out, BP_WS_FEED_MAX);
	if ((st = bp_db_stmt(db, sql_recent)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_int(st, 2, BP_WS_FEED_HEADS);
	while (n < BP_WS_FEED_HEADS && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		fill_head(st, &h);
		bp_buf_init(&lines[n], BP_WS_FEED_MAX);
		/* A result with a newline (never the store's compact JSON) would break the line. */
		if ((res = bp_ws_head_result(&h, core, sizeof(core))) == NULL ||
		    strchr(res, '\n') != NULL ||
		    bp_buf_printf(&lines[n], "%lld %s %s ", (long long)h.number, h.hash,
		    h.parent_hash) == -1 || bp_buf_adds(&lines[n], res) == -1 ||
		    bp_buf_adds(&lines[n], "\n") == -1) {
			bp_buf_free(&lines[n]);
			break;	/* older heads left out: a reader behind them sees a gap */
		}
		n++;
	}
	if (n < BP_WS_FEED_HEADS && step == BP_DB_ERROR) {
		bp_stmt_reset(st);
		goto out;
	}
	bp_stmt_reset(st);
	/* The newest heads that fit the cap together (lines[0] is the newest), oldest first. */
	for (i = 0, total = 0; i < n && total + lines[i].len <= BP_WS_FEED_MAX; i++)
		total += lines[i].len;
	for (; i > 0; i--)
		(void)bp_buf_add(&out, lines[i - 1].data, lines[i - 1].len);
	/* Written whole, then renamed over the feed: a reader sees the old or the new file. */
	if (n == 0 || out.len == 0 ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0664)) == -1)
		goto out;
	ok = write_all(fd, out.data, out.len) == 0 && stamp(fd, path) == 0;
	if (close(fd) == -1)
		ok = 0;
	if (!ok || rename(tmp, path) == -1) {
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	/* No feed rather than a stale one: the readers go back to SQLite. */
	if (rc == -1)
		unlink(path);
	for (i = 0; i < n; i++)
		bp_buf_free(&lines[i]);
	bp_buf_free(&out);
	return rc;
}

/* Reads the file at path into buf (reset first), NUL-terminated. 0, or -1. */
static int
read_file(const char *path, struct bp_buf *buf)
{
	char chunk[16384];
	ssize_t n;
	int fd;

	bp_buf_reset(buf);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0 || bp_buf_add(buf, chunk, (size_t)n) == -1)
			break;
	}
	close(fd);
	return n == 0 && bp_buf_add(buf, "", 1) == 0 ? 0 : -1;
}

/* Splits one feed line (NUL-terminated, without its newline) into h. 0, or -1 when malformed. */
static int
parse_line(char *line, struct bp_ws_head *h)
{
	char *hash, *parent, *res, *end;
	long long number;

	memset(h, 0, sizeof(*h));
	errno = 0;
	number = strtoll(line, &end, 10);
	if (errno != 0 || end == line || *end != ' ' || number < 0)
		return -1;
	hash = end + 1;
	if ((parent = strchr(hash, ' ')) == NULL)
		return -1;
	*parent++ = '\0';
	if ((res = strchr(parent, ' ')) == NULL)
		return -1;
	*res++ = '\0';
	if (*res != '{' || bp_strlcpy(h->hash, hash, sizeof(h->hash)) == -1 ||
	    bp_strlcpy(h->parent_hash, parent, sizeof(h->parent_hash)) == -1)
		return -1;
	h->number = number;
	h->header = res;
	return 0;
}

int
bp_ws_feed_poll(struct bp_ws_follow *f, const char *path, struct bp_buf *buf,
    const struct bp_ws_follow_fns *fns, void *arg)
{
	struct bp_ws_head h;
	struct stat sb;
	const char *mine, *prev;
	char *line, *nl;
	int64_t mtime;
	int n = 0;

	if (stat(path, &sb) == -1)
		return -2;
	mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
	if ((uint64_t)sb.st_ino == f->feed_ino && mtime == f->feed_mtime_ns &&
	    (int64_t)sb.st_size == f->feed_size)
		return 0;
	if (read_file(path, buf) == -1)
		return -2;
	/* What was read may be newer than the stat: read again next time, no harm. */
	f->feed_ino = (uint64_t)sb.st_ino;
	f->feed_mtime_ns = mtime;
	f->feed_size = (int64_t)sb.st_size;
	for (line = buf->data; line != NULL && *line != '\0'; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			return -2;	/* a cut line: not a feed this program wrote */
		*nl = '\0';
		if (parse_line(line, &h) == -1)
			return -2;
		if (h.number <= f->last) {
			/* What was delivered must still be what the feed holds; else a reorg. */
			if ((mine = sent_hash(f, h.number)) != NULL && strcmp(mine, h.hash) != 0)
				return -2;
			continue;
		}
		prev = sent_hash(f, h.number - 1);
		if (h.number != f->last + 1 || (prev != NULL && strcmp(prev, h.parent_hash) != 0))
			return -2;	/* a gap (this reader is behind the feed) or a reorg */
		if (fns->head != NULL && fns->head(&h, arg) == -1)
			return -1;
		remember(f, h.number, h.hash);
		f->last = h.number;
		n++;
	}
	return n;
}
