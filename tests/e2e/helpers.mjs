// Shared helpers of the end-to-end tests. scripts/test.sh starts the real stack (devchain, web
// server, every FastCGI program) and passes its coordinates in the environment.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

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
