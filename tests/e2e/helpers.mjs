// Shared helpers of the end-to-end tests. scripts/test.sh starts the real stack (devchain, web
// server, every FastCGI program) and passes its coordinates in the environment.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterEach, after } from 'node:test';
import { OpenApiChecker } from './openapi.mjs';

export const env = {
  base: process.env.BASE_URL,
  chain: process.env.CHAIN_URL,
  key: process.env.API_KEY,
  dir: process.env.STACK_DIR,
  config: process.env.BLOCKPORT_CONFIG,
  build: process.env.BLOCKPORT_BUILD,
  server: process.env.WEB_SERVER,
};
if (!env.base) throw new Error('BASE_URL is not set: run the e2e tests through make test');

// Every answer from the service that goes through fetch (the tests' own calls, api() below and
// viem's http transport; ethers talks only to the devchain here, with node:http) is checked
// against docs/openapi.yaml. Mismatches fail the test that made the request (the afterEach hook
// below; a hook, not a throw from fetch, so that a client that catches errors or retries, or a
// test that expects a rejection, cannot hide one) and, for requests made outside any test, the
// file (after). Only the service's origin is checked, not the devchain's or the stubs'.
export const openapi = new OpenApiChecker();
export const openapiProblems = [];
const serviceOrigin = new URL(env.base).origin;
const unchecked = globalThis.fetch;

// Checks one answer of the service; records and returns its problems. Exported for answers
// that do not come through fetch.
export function checkAnswer({ method, url, status, headers, body }) {
  const problems = openapi.check({ method, url, status, headers, body });
  openapiProblems.push(...problems);
  return problems;
}

globalThis.fetch = async function fetchChecked(input, init) {
  const res = await unchecked(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.origin !== serviceOrigin)
    return res;
  const method = (input instanceof Request ? input.method : init?.method ?? 'GET').toUpperCase();
  let body;
  try {
    body = await res.clone().text();
  } catch (e) {
    openapiProblems.push(`${method} ${url.pathname} -> ${res.status}: the body could not be read (${e.message})`);
    return res;
  }
  checkAnswer({ method, url: url.href, status: res.status, headers: res.headers, body });
  return res;
};

function failOnProblems(when) {
  if (openapiProblems.length === 0) return;
  const all = openapiProblems.splice(0);
  // One line, so that make test's summary of the TAP output shows it whole.
  throw new Error(`${all.length} answer(s) ${when} differ from docs/openapi.yaml: ${all.join(' | ')}`);
}
afterEach(() => failOnProblems('of this test'));
after(() => failOnProblems('outside the tests'));

// Runs the admin CLI against the stack's config; returns stdout.
export function admin(...args) {
  return execFileSync(`${env.build}/blockport`, args, {
    env: { ...process.env, BLOCKPORT_CONFIG: env.config },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

// A fresh account on plan with one key; opts: { plan, scopes, live }. Returns the key text.
export function newKey(opts = {}) {
  const email = `t-${randomBytes(6).toString('hex')}@example.test`;
  admin('account', 'create', '--email', email, '--plan', opts.plan ?? 'free');
  const args = ['key', 'create', email, opts.live ? '--live' : '--test'];
  if (opts.scopes) args.push('--scopes', opts.scopes);
  return admin(...args);
}

// A fresh account with one test key (opts: { plan }); returns { email, key, id } (the email for
// `blockport account plan`, the id for `blockport key revoke`).
export function newKeyWithId(opts = {}) {
  const email = `t-${randomBytes(6).toString('hex')}@example.test`;
  admin('account', 'create', '--email', email, '--plan', opts.plan ?? 'free');
  const key = admin('key', 'create', email, '--test');
  const row = admin('key', 'list', email).split('\n')[1];
  return { email, key, id: row.trim().split(/\s+/)[0] };
}

// A fresh account on plan with a test key and a live key: { test, live }.
export function newKeyPair(plan = 'enterprise') {
  const email = `t-${randomBytes(6).toString('hex')}@example.test`;
  admin('account', 'create', '--email', email, '--plan', plan);
  return { test: admin('key', 'create', email, '--test'), live: admin('key', 'create', email, '--live') };
}

// One HTTP request to the service. Returns { status, headers, text, json }.
export async function api(path, { method = 'GET', key = env.key, body, headers = {} } = {}) {
  const h = { ...headers };
  if (key !== null && key !== undefined) h['X-API-Key'] = key;
  let payload = body;
  if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
    payload = JSON.stringify(body);
    h['Content-Type'] = 'application/json';
  }
  const res = await fetch(env.base + path, { method, headers: h, body: payload });
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, text, json };
}

// Asserts the uniform error body of SPEC.md section 7.
export function assertError(assert, res, status, code) {
  assert.equal(res.status, status, `status of ${res.text}`);
  assert.equal(res.headers.get('content-type'), 'application/json');
  assert.deepEqual(Object.keys(res.json), ['error']);
  assert.equal(res.json.error.code, code);
  assert.equal(res.json.error.status, status);
  assert.equal(typeof res.json.error.message, 'string');
  assert.ok(res.json.error.message.length > 0);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Waits until the start of the next wall-clock second, so a burst falls in one rate window.
export async function nextSecond() {
  await sleep(1000 - (Date.now() % 1000) + 20);
}

// A test's skip option on the cluster (scripts/cluster.sh: HEAD_URLS is set), with the reason
// printed: for what assumes one head (its SQLite file, its local processes, its own files).
export const onCluster = (why) => (process.env.HEAD_URLS ? `the cluster: ${why}` : false);

// Calls fn every 200 ms until it returns something truthy, which it returns; throws after ms.
export async function waitFor(fn, what, ms = 15000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}
