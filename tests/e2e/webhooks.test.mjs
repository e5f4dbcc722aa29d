// /v1/webhooks, the API (SPEC.md sections 2-4, docs/webhooks.md): create with the secret shown
// once, every bad field a 400 that names it, lists with page/limit/status, PATCH, DELETE, 404
// for another account's id, the per-plan cap and the webhooks:manage scope. Delivery is
// webhooks-delivery.test.mjs.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { admin, api, assertError, env, newKey, sleep } from './helpers.mjs';
import { randomBytes } from 'node:crypto';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const A1 = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const A2 = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
const H1 = `0x${'ab'.repeat(32)}`;
const URL_OK = 'https://127.0.0.1:9/hook';

let key;
let other;
before(() => {
  key = newKey({ plan: 'enterprise' });
  other = newKey({ plan: 'enterprise' });
});

const create = (body, k = key) => api('/v1/webhooks', { method: 'POST', key: k, body });
const base = (extra = {}) => ({ url: URL_OK, chain: 'ethereum', event_type: 'address_activity',
  config: { addresses: [A1] }, ...extra });

test('POST creates an active webhook; the secret is shown once', async () => {
  const res = await create(base({ config: { addresses: [A1, A2] } }));
  assert.equal(res.status, 201, res.text);
  const w = res.json;
  assert.match(w.id, /^wh_[0-9a-f]{24}$/);
  assert.equal(w.url, URL_OK);
  assert.equal(w.chain, 'ethereum');
  assert.equal(w.event_type, 'address_activity');
  assert.equal(w.status, 'active');
  assert.match(w.signing_secret, /^whsec_[A-Za-z0-9+/]{43}=$/);	// Standard Webhooks' form
  assert.deepEqual(w.config, { addresses: [A1.toLowerCase(), A2] });
  assert.match(w.created_at, ISO);
  const got = await api(`/v1/webhooks/${w.id}`, { key });
  assert.equal(got.status, 200);
  assert.equal(got.json.signing_secret, undefined);
  assert.ok(!got.text.includes(w.signing_secret));
  const list = await api('/v1/webhooks', { key });
  assert.ok(!list.text.includes('whsec_'));
});

test('every config shape of each event type is accepted', async () => {
  const ok = [
    ['token_transfer', { addresses: [A1] }],
    ['token_transfer', { contracts: [A2] }],
    ['nft_transfer', { addresses: [A1], contracts: [A2] }],
    ['mined_transaction', { tx_hashes: [H1] }],
    ['log', { address: A1 }],
    ['log', { address: [A1, A2], topics: [H1, null, [H1, H1]] }],
    ['log', { topics: [null, H1] }],
  ];
  for (const [event_type, config] of ok) {
    const res = await create(base({ event_type, config }));
    assert.equal(res.status, 201, `${event_type} ${JSON.stringify(config)}: ${res.text}`);
    assert.equal(res.json.event_type, event_type);
  }
});

test('a bad field is a 400 that names it', async () => {
  const bad = [
    [{ url: undefined }, 'url'],
    [{ url: 'http://example.com/hook' }, 'url'],
    [{ url: `https://example.com/${'a'.repeat(2048)}` }, 'url'],
    [{ url: 'ftp://example.com/' }, 'url'],
    [{ url: 17 }, 'url'],
    [{ chain: 'nochain' }, 'chain'],
    [{ chain: undefined }, 'chain'],
    [{ event_type: 'everything' }, 'event_type'],
    [{ event_type: undefined }, 'event_type'],
    [{ config: undefined }, 'config'],
    [{ config: [] }, 'config'],
    [{ config: {} }, 'config.addresses'],
    [{ config: { addresses: [] } }, 'config.addresses'],
    [{ config: { addresses: ['0x12'] } }, 'config.addresses[0]'],
    [{ config: { addresses: [A1, 'nope'] } }, 'config.addresses[1]'],
    [{ config: { addresses: Array(1001).fill(A1) } }, 'config.addresses'],
    [{ config: { addresses: [A1], extra: 1 } }, 'config.extra'],
    [{ event_type: 'token_transfer', config: {} }, 'config.addresses'],
    [{ event_type: 'token_transfer', config: { contracts: 'x' } }, 'config.contracts'],
    [{ event_type: 'nft_transfer', config: { tokens: [A1] } }, 'config.tokens'],
    [{ event_type: 'mined_transaction', config: { tx_hashes: [A1] } }, 'config.tx_hashes[0]'],
    [{ event_type: 'mined_transaction', config: {} }, 'config.tx_hashes'],
    [{ event_type: 'log', config: {} }, 'config.address'],
    [{ event_type: 'log', config: { address: 5 } }, 'config.address'],
    [{ event_type: 'log', config: { topics: [H1, H1, H1, H1, H1] } }, 'config.topics'],
    [{ event_type: 'log', config: { topics: [A1] } }, 'config.topics[0]'],
    [{ event_type: 'log', config: { topics: [null, [H1, 7]] } }, 'config.topics[1]'],
    // A log filter that names nothing would match every log of the chain.
    [{ event_type: 'log', config: { topics: [] } }, 'config.topics'],
    [{ event_type: 'log', config: { topics: [null] } }, 'config.topics'],
    [{ event_type: 'log', config: { topics: [null, null, null, null] } }, 'config.topics'],
  ];
  for (const [patch, field] of bad) {
    const res = await create(base(patch));
    assertError(assert, res, 400, 'invalid_request');
    assert.ok(res.json.error.message.startsWith(field),
      `${JSON.stringify(patch).slice(0, 80)}: "${res.json.error.message}" should name ${field}`);
  }
  const notJson = await api('/v1/webhooks', { method: 'POST', key, body: '{"url":',
    headers: { 'Content-Type': 'application/json' } });
  assertError(assert, notJson, 400, 'invalid_request');
});

test('GET lists with page, limit and status; anything else is 400', async () => {
  const k = newKey({ plan: 'enterprise' });
  const ids = [];
  for (let i = 0; i < 3; i++)
    ids.push((await create(base(), k)).json.id);
  await api(`/v1/webhooks/${ids[0]}`, { method: 'PATCH', key: k, body: { status: 'paused' } });
  const all = await api('/v1/webhooks', { key: k });
  assert.equal(all.status, 200);
  assert.equal(all.json.total, 3);
  assert.equal(all.json.page, 1);
  assert.deepEqual(all.json.webhooks.map((w) => w.id).sort(), [...ids].sort());
  for (const w of all.json.webhooks)
    assert.deepEqual(Object.keys(w), ['id', 'url', 'chain', 'event_type', 'status', 'created_at']);
  const page2 = await api('/v1/webhooks?limit=2&page=2', { key: k });
  assert.equal(page2.json.webhooks.length, 1);
  assert.equal(page2.json.total, 3);
  const paused = await api('/v1/webhooks?status=paused', { key: k });
  assert.deepEqual(paused.json.webhooks.map((w) => w.id), [ids[0]]);
  assert.equal((await api('/v1/webhooks?status=disabled', { key: k })).json.total, 0);
  for (const q of ['status=deleted', 'limit=101', 'limit=0', 'page=0', 'page=x'])
    assertError(assert, await api(`/v1/webhooks?${q}`, { key: k }), 400, 'invalid_request');
});

test('PATCH changes url, status and config (re-validated); answers the update', async () => {
  const w = (await create(base())).json;
  const res = await api(`/v1/webhooks/${w.id}`, { method: 'PATCH', key,
    body: { url: 'https://127.0.0.1:10/other', status: 'paused', config: { addresses: [A2] } } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.json), ['id', 'url', 'chain', 'event_type', 'status', 'updated_at']);
  assert.equal(res.json.url, 'https://127.0.0.1:10/other');
  assert.equal(res.json.status, 'paused');
  assert.match(res.json.updated_at, ISO);
  const bad = [
    [{ status: 'disabled' }, 'status'],
    [{ status: 'on' }, 'status'],
    [{ url: 'http://example.com/' }, 'url'],
    [{ config: { tx_hashes: [H1] } }, 'config.tx_hashes'],
    [{ config: { addresses: ['0x1'] } }, 'config.addresses[0]'],
    [{ event_type: 'log' }, 'event_type'],
    [{ chain: 'ethereum' }, 'chain'],
    [{}, 'url'],
  ];
  for (const [body, field] of bad) {
    const r = await api(`/v1/webhooks/${w.id}`, { method: 'PATCH', key, body });
    assertError(assert, r, 400, 'invalid_request');
    assert.ok(r.json.error.message.startsWith(field), `${JSON.stringify(body)}: ${r.json.error.message}`);
  }
  const back = await api(`/v1/webhooks/${w.id}`, { method: 'PATCH', key, body: { status: 'active' } });
  assert.equal(back.json.status, 'active');
});

test("another account's id, or one that never existed, is 404; DELETE is final", async () => {
  const w = (await create(base())).json;
  for (const [method, body] of [['GET'], ['PATCH', { status: 'paused' }], ['DELETE']])
    assertError(assert, await api(`/v1/webhooks/${w.id}`, { method, key: other, body }), 404, 'not_found');
  assertError(assert, await api('/v1/webhooks/wh_000000000000000000000000', { key }), 404, 'not_found');
  const del = await api(`/v1/webhooks/${w.id}`, { method: 'DELETE', key });
  assert.equal(del.status, 200);
  assert.deepEqual(del.json, { id: w.id, deleted: true });
  assertError(assert, await api(`/v1/webhooks/${w.id}`, { key }), 404, 'not_found');
  assertError(assert, await api(`/v1/webhooks/${w.id}`, { method: 'DELETE', key }), 404, 'not_found');
});

// Item 3 of the tenant fences: a leaked test key must not read or redirect a mainnet webhook.
test('a test key sees and changes only test-network webhooks, a live key only live ones', async () => {
  const email = `t-${randomBytes(6).toString('hex')}@example.test`;
  admin('account', 'create', '--email', email, '--plan', 'enterprise');
  const test = admin('key', 'create', email, '--test');
  const live = admin('key', 'create', email, '--live');
  const t = await create(base(), test);
  const l = await create(base(), live);
  assert.equal(t.status, 201, t.text);
  assert.equal(l.status, 201, l.text);
  assert.equal(t.json.network, 'devnet');
  assert.equal(l.json.network, 'mainnet');
  for (const [k, mine, theirs] of [[test, t.json.id, l.json.id], [live, l.json.id, t.json.id]]) {
    for (const [method, body] of [['GET'], ['PATCH', { url: 'https://127.0.0.1:11/stolen' }], ['DELETE']])
      assertError(assert, await api(`/v1/webhooks/${theirs}`, { method, key: k, body }), 403, 'forbidden');
    const list = await api('/v1/webhooks', { key: k });
    assert.deepEqual(list.json.webhooks.map((w) => w.id), [mine]);
    assert.equal(list.json.total, 1);
    assert.equal((await api(`/v1/webhooks/${mine}`, { key: k })).status, 200);
  }
  const still = await api(`/v1/webhooks/${l.json.id}`, { key: live });
  assert.equal(still.json.url, URL_OK, 'the 403 PATCH wrote nothing');
  // Nor can a live key make a test-network webhook it could not manage after.
  assertError(assert, await create(base({ network: 'devnet' }), live), 403, 'forbidden');
});

// Item 6: the operator's disable is all or nothing for a PATCH that tries to resume.
test('PATCH of a disabled webhook that sets status is 400 and writes nothing', async () => {
  const w = (await create(base())).json;
  admin('webhook', 'disable', w.id);
  const was = (await api(`/v1/webhooks/${w.id}`, { key })).json;
  await sleep(1100);	// a write would move updated_at
  const r = await api(`/v1/webhooks/${w.id}`, { method: 'PATCH', key,
    body: { url: 'https://127.0.0.1:12/new', status: 'active', config: { addresses: [A2] } } });
  assertError(assert, r, 400, 'invalid_request');
  assert.match(r.json.error.message, /^status: /);
  const got = await api(`/v1/webhooks/${w.id}`, { key });
  assert.equal(got.json.url, URL_OK);
  assert.equal(got.json.status, 'disabled');
  assert.equal(got.json.updated_at, was.updated_at);
});

test('the plan caps the number of webhooks; the scope is webhooks:manage', async () => {
  const free = newKey({ plan: 'free' });
  for (let i = 0; i < 5; i++)
    assert.equal((await create(base(), free)).status, 201);
  const over = await create(base(), free);
  assertError(assert, over, 400, 'invalid_request');
  assert.match(over.json.error.message, /free plan allows 5 webhooks/);
  const noScope = newKey({ plan: 'enterprise', scopes: 'rpc:read' });
  assertError(assert, await create(base(), noScope), 403, 'forbidden');
  assertError(assert, await api('/v1/webhooks', { key: noScope }), 403, 'forbidden');
  const scoped = newKey({ plan: 'enterprise', scopes: 'webhooks:manage' });
  assert.equal((await create(base(), scoped)).status, 201);
});

// The test stack allows private addresses (its receivers are on 127.0.0.1); a second lighttpd,
// serving only webhooks.fcgi with the same database and allow_private_urls = false, shows the
// refusal a production config gives.
test('with allow_private_urls off, private and loopback hosts are 400 naming url', async () => {
  const top = join(dirname(fileURLToPath(import.meta.url)), '../..');
  const run = mkdtempSync(join(tmpdir(), 'bp-wh-private-'));
  const bin = join(run, 'bin');
  mkdirSync(bin);
  symlinkSync(`${env.build}/fcgi/webhooks.fcgi`, join(bin, 'webhooks.fcgi'));
  const config = join(run, 'blockport.ini');
  writeFileSync(config, readFileSync(env.config, 'utf8').replace(/^allow_private_urls = true$/m, 'allow_private_urls = false'));
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
  const web = spawn('lighttpd', ['-D', '-f', join(top, 'lighttpd/blockport.conf')], {
    env: { ...process.env, BLOCKPORT_PORT: String(port), BLOCKPORT_BIN: bin, BLOCKPORT_RUN: run,
      BLOCKPORT_CONFIG: config, BLOCKPORT_PROCS: '1', BLOCKPORT_LIGHTTPD_DIR: join(top, 'lighttpd'),
      BLOCKPORT_STACK: env.dir },
    stdio: 'ignore',
  });
  try {
    const post = (url) => fetch(`http://127.0.0.1:${port}/v1/webhooks`, { method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify(base({ url })) }).then(async (r) => ({ status: r.status, json: await r.json() }));
    let res;
    for (let i = 0; i < 100; i++) {
      try { res = await post('https://127.0.0.1:9/hook'); break; } catch { await sleep(100); }
    }
    assert.ok(res, 'the second lighttpd answered');
    for (const url of ['https://127.0.0.1:9/hook', 'https://10.0.0.1/', 'https://192.168.1.1/x',
      'https://169.254.169.254/latest/meta-data/', 'https://[::1]/', 'https://localhost/hook', 'https://0x7f000001/']) {
      const r = await post(url);
      assert.equal(r.status, 400, url);
      assert.equal(r.json.error.code, 'invalid_request');
      assert.match(r.json.error.message, /^url: /, url);
    }
  } finally {
    web.kill('SIGTERM');
    await new Promise((r) => (web.exitCode !== null ? r() : web.once('exit', r)));
  }
});
