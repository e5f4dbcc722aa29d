// The platform as a client meets it, on every path: API keys (401, 403), unknown paths (404,
// 405), request targets the service refuses (400, 414), the body cap (413) and the rate limits
// (429 with Retry-After, X-RateLimit-* on every answer; a Free key's bucket). Each test makes its own account with
// newKey, so no two tests share a counter; requests without a valid key all count against one
// client address (anon_rps = 5 in the test config), so those are sent a few at a time, each group
// at the start of a fresh second.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

import { env, api, newKey, newKeyWithId, admin, assertError, nextSecond, onCluster } from './helpers.mjs';

const FREE_RPS = 10;	// SPEC.md section 8
const FREE_BUCKET = 3 * FREE_RPS;	// 3 seconds' worth at once (docs/limits.md)
const ANON_RPS = 5;	// scripts/stack.sh --test
const MAX_BODY = 65536;	// scripts/stack.sh --test
const DAILY_RPD = 15;	// [plan daily] of scripts/stack.sh --test

// A key of the right shape that no account holds.
const unknownKey = () => `blockport_test_${randomBytes(20).toString('hex')}`;

// A request with the target sent exactly as written: fetch() would resolve dot segments and
// re-encode, node:http does not.
function raw(target, { method = 'GET', key, headers = {} } = {}) {
  const u = new URL(env.base);
  const h = { ...headers };
  if (key) h['X-API-Key'] = key;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: target, method, headers: h },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => { text += c; });
        res.on('end', () => {
          let json;
          try { json = JSON.parse(text); } catch { json = undefined; }
          resolve({ status: res.statusCode, headers: new Headers(res.headers), text, json });
        });
      });
    req.on('error', reject);
    req.end();
  });
}

// Asserts the three X-RateLimit-* headers are there and whole numbers; returns them.
function rateHeaders(res) {
  const out = {};
  for (const name of ['limit', 'remaining', 'reset']) {
    const v = res.headers.get(`x-ratelimit-${name}`);
    assert.match(v ?? '', /^\d+$/, `X-RateLimit-${name} on a ${res.status}: ${v}`);
    out[name] = Number(v);
  }
  return out;
}

test('401 for a missing, malformed or unknown key, with the rate headers', async () => {
  await nextSecond();
  const cases = [
    ['missing', null],
    ['malformed', 'not-a-key'],
    ['wrong kind', `blockport_beta_${randomBytes(20).toString('hex')}`],
    ['unknown', unknownKey()],
  ];
  for (const [what, key] of cases) {
    const res = await api('/v1/nope', { key });
    assertError(assert, res, 401, 'unauthorized');
    assert.equal(rateHeaders(res).limit, ANON_RPS, what);
    if (what === 'missing') assert.match(res.json.error.message, /missing API key.*X-API-Key.*Bearer/);
  }
  await nextSecond();
  // Hostile shapes: upper-case hex, one digit short, one digit long, a NUL-free junk tail.
  const good = unknownKey();
  for (const key of [good.toUpperCase(), good.slice(0, -1), `${good}0`, `${good.slice(0, -1)}g`]) {
    assertError(assert, await api('/v1/nope', { key }), 401, 'unauthorized');
  }
});

test('Authorization: Bearer carries a key; any other scheme is 401', async () => {
  const key = newKey();
  let res = await api('/v1/nope', { key: null, headers: { Authorization: `Bearer ${key}` } });
  assertError(assert, res, 404, 'not_found');
  assert.equal(rateHeaders(res).limit, FREE_BUCKET);
  res = await api('/v1/nope', { key: null, headers: { Authorization: `bearer ${key}` } });
  assertError(assert, res, 404, 'not_found');

  await nextSecond();
  const basic = Buffer.from(`${key}:`).toString('base64');
  for (const auth of [`Basic ${basic}`, `Token ${key}`, 'Bearer', `Bearer ${unknownKey()}`]) {
    res = await api('/v1/nope', { key: null, headers: { Authorization: auth } });
    assertError(assert, res, 401, 'unauthorized');
    const scheme = auth.split(' ')[0];
    if (scheme !== 'Bearer') {
      // Not "missing API key": the scheme is named, with what to send instead.
      assert.match(res.json.error.message,
        new RegExp(`scheme ${scheme} is not supported.*Bearer.*X-API-Key`), auth);
    }
  }
});

test('a revoked key is refused at once', async () => {
  const { key, id } = newKeyWithId();
  assertError(assert, await api('/v1/nope', { key }), 404, 'not_found');
  // Cached as valid now; revocation bumps the key generation, so no process may keep using it.
  admin('key', 'revoke', id);
  await nextSecond();
  for (let i = 0; i < 4; i++) {
    assertError(assert, await api('/v1/nope', { key }), 401, 'unauthorized');
  }
});

test('403 when the key lacks the scope of the endpoint', async () => {
  const key = newKey({ scopes: 'data:read' });
  const res = await api('/v1/rpc/ethereum/devnet', {
    method: 'POST', key, body: { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
  });
  assertError(assert, res, 403, 'forbidden');
  assert.match(res.json.error.message, /rpc:read/);
  rateHeaders(res);
  // A route-level scope (wallets:manage) is refused by the pipeline before the handler.
  assertError(assert, await api('/v1/wallets', { key }), 403, 'forbidden');
});

test('404 in the uniform body for paths that do not exist, after authentication', async () => {
  const key = newKey({ plan: 'growth' });
  for (const path of ['/v1/nope', '/v1/nope/deeper/still', '/v2/x', '/', '/v1', '/v1/',
    '/index.html', '/v1/ws/x']) {
    const res = await api(path, { key });
    assertError(assert, res, 404, 'not_found');
    assert.equal(rateHeaders(res).limit, 300, path);	// Growth: 100 a second, 3 s' worth
  }
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    assertError(assert, await api('/v1/nope', { method, key }), 404, 'not_found');
  }
  // The message names the path, outside /v1 too.
  assert.equal((await api('/', { key })).json.error.message, 'no such endpoint: GET / (only /v1 exists)');
  assert.equal((await api('/v2/x?a=1', { key })).json.error.message,
    'no such endpoint: GET /v2/x?a=1 (only /v1 exists)');
  assert.equal((await api('/v1/nope', { key })).json.error.message, 'no such endpoint: GET /v1/nope');
  // Without a key the answer is 401, so paths cannot be probed anonymously.
  await nextSecond();
  for (const path of ['/v1/nope', '/v2/x', '/']) {
    assertError(assert, await api(path, { key: null }), 401, 'unauthorized');
  }
});

test('405 for a method a route does not take', async () => {
  const key = newKey({ plan: 'growth' });
  assertError(assert, await api('/v1/rpc/ethereum/devnet', { method: 'DELETE', key }), 405,
    'method_not_allowed');
  assertError(assert, await api('/v1/wallets', { method: 'PUT', key }), 405, 'method_not_allowed');
});

test('request targets the service refuses: 400 and 414 in the uniform body', async () => {
  const key = newKey({ plan: 'enterprise' });
  const rows = [
    ['/v1/%00', 400],			// an encoded NUL (Apache refuses it first: ErrorDocument)
    ['/v1/a%00b/c', 400],
    ['/v1/x?q=%00', 400],
    ['/v1/x?%00=1', 400],
    ['/v1/%zz', 400],			// a bad escape
    ['/v1/%4', 400],
    ['/v1/a/../b', 400],			// dot segments are refused, not resolved
    ['/v1/../../etc/passwd', 400],
    ['/v1/./b', 400],
    ['/v1/%2e%2e/b', 400],
    ['/v1//b', 400],			// an empty segment
    ['/v1/a%2Fb', 404],			// %2F stays inside its segment
    ['/v1/%6eope', 404],
    [`/v1/${'a'.repeat(300)}`, 404],	// longer than a file name (Apache: ErrorDocument 403)
    [`/v1/${'a'.repeat(5000)}`, 414],
    [`/v1/x?q=${'a'.repeat(5000)}`, 414],
  ];
  for (const [target, status] of rows) {
    const res = await raw(target, { key });
    assert.equal(res.status, status, `${target.slice(0, 40)}: ${res.text.slice(0, 200)}`);
    assertError(assert, res, status, status === 404 ? 'not_found' : 'invalid_request');
  }
  // Refused targets still need a key.
  await nextSecond();
  assertError(assert, await raw('/v1/%00'), 401, 'unauthorized');
  assertError(assert, await raw('/v1/a/../b'), 401, 'unauthorized');
});

test('a body over max_body is 413 on any path, after authentication', async () => {
  const key = newKey({ plan: 'growth' });
  let res = await api('/v1/nope', { method: 'POST', key, body: 'a'.repeat(MAX_BODY + 4464) });
  assertError(assert, res, 413, 'payload_too_large');
  rateHeaders(res);
  res = await api('/v1/nope', { method: 'PUT', key, body: new Uint8Array(MAX_BODY + 1) });
  assertError(assert, res, 413, 'payload_too_large');
  // At the cap the body is accepted, and the path is what fails.
  res = await api('/v1/nope', { method: 'POST', key, body: 'a'.repeat(MAX_BODY) });
  assertError(assert, res, 404, 'not_found');
  // A chunked body has no Content-Length; the server buffers it and tells the program its size.
  const chunks = [new Uint8Array(40000), new Uint8Array(40000)];
  const stream = new ReadableStream({
    pull(c) { if (chunks.length) c.enqueue(chunks.shift()); else c.close(); },
  });
  const r = await fetch(`${env.base}/v1/nope`, {
    method: 'POST', headers: { 'X-API-Key': key }, body: stream, duplex: 'half',
  });
  assertError(assert, { status: r.status, headers: r.headers, json: await r.json() }, 413,
    'payload_too_large');
  await nextSecond();
  res = await api('/v1/nope', { method: 'POST', key: null, body: 'a'.repeat(70000) });
  assertError(assert, res, 401, 'unauthorized');
});

test('X-RateLimit-* on every answer: Remaining counts down the bucket, Reset is when it is full',
  async () => {
    const key = newKey();
    const before = Math.floor(Date.now() / 1000);
    const got = [];
    for (let i = 0; i < 4; i++) got.push(rateHeaders(await api('/v1/nope', { key })));
    const after = Math.floor(Date.now() / 1000);
    assert.equal(got[0].remaining, FREE_BUCKET - 1);
    for (let i = 0; i < got.length; i++) {
      assert.equal(got[i].limit, FREE_BUCKET);
      // 4 requests spent, refilled at 10 a second: full again within 0.4 s of the last.
      assert.ok(got[i].reset >= before + 1 && got[i].reset <= after + 1,
        `reset ${got[i].reset} vs ${before}`);
      if (i > 0) assert.ok(got[i].remaining <= got[i - 1].remaining, JSON.stringify(got));
    }
  });

test('an unlimited plan never sends X-RateLimit-Remaining: 0', async () => {
  const key = newKey({ plan: 'enterprise' });
  const got = await Promise.all(Array.from({ length: 30 }, () => api('/v1/nope', { key })));
  for (const res of got) {
    assertError(assert, res, 404, 'not_found');
    const h = rateHeaders(res);
    assert.equal(h.limit, 2147483647);	// docs/limits.md: a figure a client can act on
    assert.ok(h.remaining > 0 && h.remaining < h.limit, `remaining ${h.remaining}`);
  }
});

// On the cluster (scripts/cluster.sh) the keys are in PostgreSQL, whose prepared statements
// follow a renamed table: there is no file to break there.
test('a failed key lookup is a 500 that still carries the rate headers', {
  skip: onCluster('the key table is in PostgreSQL, not a SQLite file this test can rename it in') }, async () => {
  // The key table out of the way for a moment: the lookup of a key no process has cached fails.
  const db = `${env.dir}/blockport.db`;
  const sql = (q) => execFileSync('sqlite3', ['-cmd', '.timeout 5000', db, q]);
  await nextSecond();
  sql('ALTER TABLE api_keys RENAME TO api_keys_away');
  let res;
  try {
    res = await api('/v1/nope', { key: unknownKey() });
  } finally {
    sql('ALTER TABLE api_keys_away RENAME TO api_keys');
  }
  assertError(assert, res, 500, 'internal_error');
  assert.equal(rateHeaders(res).limit, ANON_RPS);
  // And the service is back.
  assertError(assert, await api('/v1/nope', { key: newKey() }), 404, 'not_found');
});

// Checks a burst of answers on one Free key against its bucket: never more passed than the
// bucket holds plus its refill (10 a second) over the elapsed time, each refusal a 429 with
// Retry-After 1 and Remaining 0. Returns how many passed.
function checkBucket(res, ms) {
  let passed = 0;
  for (const r of res) {
    assert.ok(r.status === 404 || r.status === 429, `status ${r.status}: ${r.text}`);
    const h = rateHeaders(r);
    assert.equal(h.limit, FREE_BUCKET);
    if (r.status === 429) {
      assertError(assert, r, 429, 'rate_limited');
      assert.equal(r.headers.get('retry-after'), '1', 'Retry-After in seconds on a 429');
      assert.equal(h.remaining, 0);
    } else {
      assert.equal(r.headers.get('retry-after'), null, 'Retry-After only on 429');
      passed++;
    }
  }
  assert.ok(passed <= FREE_BUCKET + Math.ceil(ms / 100), `${passed} passed in ${ms} ms`);
  return passed;
}

// Brings up to n processes of v1.fcgi and returns how many answer (both servers start them all
// at once; a process may still be opening its resources). The process id is the first part of
// X-Request-Id.
async function warmUp(n) {
  const key = newKey({ plan: 'enterprise' });
  const pids = new Set();
  for (const until = Date.now() + 10000; pids.size < n && Date.now() < until;) {
    const res = await Promise.all(Array.from({ length: n + 1 }, () => api('/v1/nope', { key })));
    for (const r of res) pids.add(r.headers.get('x-request-id')?.split('-')[0]);
  }
  return pids.size;
}

test('over the Free plan: the bucket passes, then 429 with Retry-After; the average holds',
  async () => {
    // Requests in concurrent lanes, one per running process (two at most), so several
    // processes count one key at once yet none waits for a process (see warmUp).
    const lanes = Math.min(2, await warmUp(2));
    const key = newKey();
    const burst = async (n) => {
      const res = [];
      const t0 = Date.now();
      await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
        for (let i = lane; i < n; i += lanes) res.push(await api('/v1/nope', { key }));
      }));
      return { res, ms: Date.now() - t0 };
    };
    let { res, ms } = await burst(FREE_BUCKET + 10);
    let passed = checkBucket(res, ms);
    assert.ok(passed >= FREE_BUCKET, `the whole bucket passes: ${passed}`);
    assert.ok(res.some((r) => r.status === 429), 'past the bucket: 429');
    // A second later only a second's refill is there, not a new bucket.
    await new Promise((r) => setTimeout(r, 1000));
    ({ res, ms } = await burst(FREE_BUCKET));
    passed = res.filter((r) => r.status === 404).length;
    assert.ok(passed >= FREE_RPS - 1 && passed <= FREE_RPS + 1 + Math.ceil(ms / 100),
      `${passed} passed a second later`);
  });

test('40 concurrent requests on a Free key: never more than the bucket', async () => {
  const key = newKey();
  const t0 = Date.now();
  const res = await Promise.all(Array.from({ length: FREE_BUCKET + 10 }, () =>
    api('/v1/nope', { key })));
  checkBucket(res, Date.now() - t0);
  assert.ok(res.some((r) => r.status === 429), 'some of 40 concurrent requests were limited');
});

test('the per-day limit: 429 with Retry-After until UTC midnight', async () => {
  const key = newKey({ plan: 'daily' });
  for (let i = 0; i < DAILY_RPD; i++) {
    const res = await api('/v1/nope', { key });
    assertError(assert, res, 404, 'not_found');
  }
  for (let i = 0; i < 2; i++) {
    const res = await api('/v1/nope', { key });
    assertError(assert, res, 429, 'rate_limited');
    const midnight = 86400 - (Math.floor(Date.now() / 1000) % 86400);
    const retry = Number(res.headers.get('retry-after'));
    assert.ok(Math.abs(retry - midnight) <= 3, `Retry-After ${retry}, midnight in ${midnight}`);
    assert.match(res.json.error.message, /per day/);
  }
});

test('requests without a valid key are limited per client address', async () => {
  await nextSecond();
  const res = [];
  for (let i = 0; i < ANON_RPS + 3; i++) res.push(await api('/v1/nope', { key: unknownKey() }));
  const statuses = res.map((r) => r.status);
  assert.deepEqual(statuses, [...Array(ANON_RPS).fill(401), 429, 429, 429]);
  for (const r of res.slice(ANON_RPS)) {
    assertError(assert, r, 429, 'rate_limited');
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    assert.equal(rateHeaders(r).limit, ANON_RPS);
  }
  // A valid key is not held back by its address's anonymous count.
  assertError(assert, await api('/v1/nope', { key: newKey() }), 404, 'not_found');
});
