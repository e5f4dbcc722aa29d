// GET /metrics (docs/metrics.md): Prometheus text that promtool accepts, from a stack that
// served requests; the counters move (a request counts on its route's series, a 429 on the
// refusals); and the page is for loopback and [server] metrics_allow only: a client at another
// address of this machine gets what any path the API does not have gets, whatever
// X-Forwarded-For says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import WebSocket from 'ws';

import { env, api, assertError, newKey, nextSecond, waitFor } from './helpers.mjs';

// On a cluster each head serves its own counters (docs/metrics.md), and the load balancer none:
// read the heads directly, and sum a counter over them.
const heads = process.env.HEAD_URLS ? process.env.HEAD_URLS.split(/\s+/).filter(Boolean) : [env.base];

async function scrape(base = heads[0]) {
  const res = await fetch(`${base}/metrics`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return res.text();
}

// The value of the sample named exactly series ("name{labels}"), or 0 when absent.
function sample(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

// A counter summed over every head.
async function count(series) {
  let n = 0;
  for (const h of heads) n += sample(await scrape(h), series);
  return n;
}

test('promtool check metrics passes on the page of a stack that served requests', async () => {
  await api('/v1/webhooks');
  await api('/v1/nope');
  const text = await scrape();
  // promtool lints too (names, units, HELP): any problem is printed and exits non-zero.
  const out = execFileSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(out.trim(), '');
  for (const family of ['blockport_http_requests_total',
    'blockport_upstream_request_duration_seconds',
    'blockport_worker_last_run_timestamp_seconds', 'blockport_index_lag_blocks',
    'blockport_webhook_queue_depth', 'blockport_webhook_delivery_attempts_total',
    'blockport_bundler_mempool_user_operations', 'blockport_bundler_bundles_total',
    'blockport_scrape_errors'])
    assert.match(text, new RegExp(`^# TYPE ${family} `, 'm'), family);
  assert.equal(sample(text, 'blockport_scrape_errors'), 0);
  // The indexer has run on the devchain: its lag is a number of blocks, its pass recent.
  assert.ok(sample(text, 'blockport_index_lag_blocks{network="ethereum.devnet"}') >= 0);
  assert.ok(sample(text, 'blockport_worker_last_run_timestamp_seconds{worker="indexer"}') >
    Date.now() / 1000 - 600);
});

test('a request counts once on its route pattern and status, over every process', async () => {
  const series = 'blockport_http_requests_total{program="webhooks",route="/v1/webhooks/:id",' +
    'method="GET",status="404"}';
  const before = await count(series);
  // Different ids, one pattern: the raw path never becomes a label.
  for (let i = 0; i < 5; i++)
    assertError(assert, await api(`/v1/webhooks/wh_nope${i}`), 404, 'not_found');
  assert.equal(await count(series), before + 5);
  for (const h of heads) assert.doesNotMatch(await scrape(h), /wh_nope/);
});

test('a 429 counts on blockport_limit_refusals_total by the limit that refused it', async () => {
  const series = 'blockport_limit_refusals_total{limit="rps"}';
  const key = newKey();	// free: 10 a second, 3 seconds' worth at once
  const before = await count(series);
  let refused = 0;
  for (let round = 0; round < 5 && refused === 0; round++) {
    await nextSecond();
    const all = await Promise.all(Array.from({ length: 40 }, () => api('/v1/webhooks', { key })));
    refused += all.filter((r) => r.status === 429).length;
  }
  assert.ok(refused > 0, 'no 429 in 5 bursts of 40');
  assert.equal(await count(series), before + refused);
});

test('blockport_ws_connections counts a WebSocket connection while it is open', async () => {
  const gauge = async () => count('blockport_ws_connections');
  const before = await gauge();
  const wsBase = env.base.replace(/^http/, 'ws');
  const ws = new WebSocket(`${wsBase}/v1/ws/ethereum/devnet?apiKey=${encodeURIComponent(env.key)}`);
  ws.on('error', () => {});
  await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('close', reject); });
  try {
    // Admitted after the upgrade, in the program websocketd started: polled, not assumed.
    await waitFor(async () => await gauge() === before + 1, 'the connection counted', 10000);
  } finally {
    ws.close();
  }
  await waitFor(async () => await gauge() === before, 'the connection uncounted', 10000);
});

test('a WebSocket connection past its key\'s cap counts as a ws_connections refusal', async () => {
  const series = 'blockport_limit_refusals_total{limit="ws_connections"}';
  const key = newKey({ plan: 'ws' });	// 3 connections (scripts/stack.sh)
  const before = await count(series);
  const target = `${env.base.replace(/^http/, 'ws')}/v1/ws/ethereum/devnet?apiKey=${key}`;
  const conns = [];
  try {
    for (let i = 0; i < 4; i++) {
      const ws = new WebSocket(target);
      ws.on('error', () => {});
      conns.push(ws);
      // The refusal is a message then a close; an admitted one answers a call.
      const first = new Promise((resolve) => ws.once('message', (d) => resolve(JSON.parse(d))));
      await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('close', reject); });
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }));
      const m = await first;
      assert.equal(m.error?.data?.status, i < 3 ? undefined : 429, JSON.stringify(m));
    }
  } finally {
    for (const ws of conns) ws.close();
  }
  assert.equal(await count(series), before + 1);
});

// A non-loopback IPv4 address of this machine, to connect from: the stack listens on 127.0.0.1,
// and Linux lets a socket bound to any local address reach it.
function localAddress() {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? [])
      if (a.family === 'IPv4' && !a.internal) return a.address;
  return null;
}

function getFrom(address, path, headers, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = request(`${heads[0]}${path}`, { localAddress: address, headers, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => {
        const h = new Headers(res.headers);
        resolve({ status: res.statusCode, headers: h, text: body, json: JSON.parse(body) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const other = localAddress();
test('another address gets 401 without a key and 404 with one, X-Forwarded-For or not',
  { skip: other === null && 'this machine has no non-loopback IPv4 address' }, async () => {
    const spoof = { 'X-Forwarded-For': '127.0.0.1', 'X-Real-IP': '127.0.0.1' };
    assertError(assert, await getFrom(other, '/metrics', spoof), 401, 'unauthorized');
    const res = await getFrom(other, '/metrics', { ...spoof, 'X-API-Key': env.key });
    assertError(assert, res, 404, 'not_found');
    assert.doesNotMatch(res.text, /blockport_/);
    // Nor does another method: a 405 would say the path exists.
    assertError(assert, await getFrom(other, '/metrics', { 'X-API-Key': env.key }, 'POST'), 404,
      'not_found');
    // The same client at loopback reads it: the address is what decides.
    assert.equal((await fetch(`${heads[0]}/metrics`)).status, 200);
  });

test('the load balancer serves no /metrics: 404 in the uniform body, from loopback too',
  { skip: !process.env.HEAD_URLS && 'not a cluster' }, async () => {
    // HAProxy's own answer (no head saw it, so no rate headers): read with node:http, which
    // the suite's check of every API answer against docs/openapi.yaml does not see.
    for (const path of ['/metrics', '/metrics/x']) {
      const res = await new Promise((resolve, reject) => {
        request(`${env.base}${path}`, { headers: { 'X-API-Key': env.key } }, (r) => {
          let text = '';
          r.setEncoding('utf8');
          r.on('data', (c) => { text += c; });
          r.on('end', () => resolve({ status: r.statusCode, headers: new Headers(r.headers), text,
            json: JSON.parse(text) }));
        }).on('error', reject).end();
      });
      assertError(assert, res, 404, 'not_found');
      assert.doesNotMatch(res.text, /blockport_/);
    }
  });
