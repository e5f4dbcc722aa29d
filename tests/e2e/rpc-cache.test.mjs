// The JSON-RPC response cache and the head's high-water mark (docs/rpc.md, "The response
// cache"), through the real stack: every cached method answers what the node answers, with the
// caller's id byte for byte, from the cache the second time (X-Cache-Hits) and for fewer compute
// units; a block reorganised below the head is not served by number after the TTL; errors and
// nulls for heights past the head are never kept; eth_blockNumber does not go back when the
// primary fails and the fallback lags. Networks of scripts/stack.sh --test: ethereum.cached (the
// devchain, finality_depth 4, cache_ttl_ms 1000) and ethereum.lagging (two upstreams this file
// scripts on LAG_PORT).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';

import { env, api, newKey, sleep, onCluster } from './helpers.mjs';

const TTL_MS = 1000;		// cache_ttl_ms of ethereum.cached
const FINALITY = 4;		// finality_depth of ethereum.cached
const devchain = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
let key;

before(() => { key = newKey({ plan: 'enterprise' }); });

// A POST of text (sent byte for byte) to the proxy's network.
function rpc(text, network = 'cached') {
  return api(`/v1/rpc/ethereum/${network}`, { method: 'POST', key,
    body: typeof text === 'string' ? text : JSON.stringify(text),
    headers: { 'Content-Type': 'application/json' } });
}

// A call straight to the devchain; its result (throws on an error).
async function node(method, params = []) {
  const res = await fetch(env.chain, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const j = await res.json();
  if (j.error) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
}

const call = (id, method, params) =>
  `{"jsonrpc":"2.0","id":${id},"method":"${method}"${params === undefined ? '' : `,"params":${JSON.stringify(params)}`}}`;
const hits = (res) => Number(res.headers.get('x-cache-hits') ?? 0);
const cu = (res) => Number(res.headers.get('x-compute-units'));

const heads = process.env.HEAD_URLS ? process.env.HEAD_URLS.split(/\s+/).filter(Boolean) : [env.base];
// A counter's series of ethereum.cached (any other labels), summed over them and the heads.
async function cachedCount(name) {
  const re = new RegExp(`^${name}\\{network="ethereum\\.cached"[^}]*\\} (\\d+)$`, 'gm');
  let n = 0;
  for (const h of heads)
    for (const m of (await (await fetch(`${h}/metrics`)).text()).matchAll(re)) n += Number(m[1]);
  return n;
}
// The answers the cache was to keep and gave up on (the database's write lock busy past its
// 2 ms), summed over the heads (each counts its own: docs/metrics.md). Only this file uses
// ethereum.cached, one call at a time: a change is this file's.
const storeFailures = () => cachedCount('blockport_rpc_cache_store_failures_total');
// The hits of a call right after one whose answer was to be kept: 1, or 0 when its store was
// given up (the counter moved since f0).
const hitUnlessGivenUp = async (f0) => ((await storeFailures()) > f0 ? 0 : 1);
const hex = (n) => `0x${n.toString(16)}`;

// Asserts a single answer: the id's bytes as sent, and the node's result.
function assertAnswer(res, idText, expected, what) {
  assert.equal(res.status, 200, `${what}: ${res.text}`);
  assert.ok(res.text.startsWith(`{"jsonrpc":"2.0","id":${idText},`) ||
    res.text.includes(`"id":${idText}`), `${what}: id ${idText} in ${res.text.slice(0, 120)}`);
  assert.equal(res.json.error, undefined, `${what}: ${res.text.slice(0, 200)}`);
  assert.deepEqual(res.json.result, expected, what);
}

// The ids a client may send, as text: numbers, strings, a big number, escapes, 1.0.
const IDS = ['1', '"abc"', '12345678901234567890123456789', '"a\\u0041"', '1.0', 'null', '-7'];

test('every cached method: the node\'s answer, the caller\'s id, a hit the second time, cheaper', async () => {
  // This file run before on this stack (a loop of it on one stack or cluster) kept the final
  // answers for good: the heads' lookups of the network say so (none on a fresh stack).
  const ranBefore = (await cachedCount('blockport_rpc_cache_requests_total')) > 0;
  await node('anvil_mine', [hex(FINALITY + 6)]);
  const head = Number(await node('eth_blockNumber'));
  const old = hex(1);				// the deployments: final
  const block1 = await node('eth_getBlockByNumber', [old, false]);
  assert.ok(block1.transactions.length > 0, 'block 1 has transactions');
  const tx = block1.transactions[0];
  const token = devchain.tokens.erc20_18;
  const who = devchain.deployer;
  const balanceOf = `0x70a08231${who.slice(2).padStart(64, '0')}`;
  const cases = [
    ['eth_chainId', undefined],
    ['net_version', []],
    ['eth_getBlockByHash', [block1.hash, false]],
    ['eth_getBlockByHash', [block1.hash, true]],
    ['eth_getBlockByNumber', [old, true]],
    ['eth_getBlockReceipts', [old]],
    ['eth_getBlockReceipts', [block1.hash]],
    ['eth_getBlockTransactionCountByHash', [block1.hash]],
    ['eth_getBlockTransactionCountByNumber', [old]],
    ['eth_getTransactionByBlockHashAndIndex', [block1.hash, '0x0']],
    ['eth_getTransactionByBlockNumberAndIndex', [old, '0x0']],
    ['eth_getTransactionByHash', [tx]],
    ['eth_getTransactionReceipt', [tx]],
    ['eth_getUncleCountByBlockHash', [block1.hash]],
    ['eth_getUncleCountByBlockNumber', [old]],
    ['eth_getBalance', [who, old]],
    ['eth_getCode', [token, hex(head - FINALITY)]],
    ['eth_getTransactionCount', [who, { blockNumber: old }]],
    ['eth_getStorageAt', [token, '0x0', hex(head - FINALITY)]],
    ['eth_getProof', [token, [], hex(head - FINALITY)]],
    ['eth_call', [{ to: token, data: balanceOf }, hex(head - FINALITY)]],
    ['eth_call', [{ to: token, data: balanceOf }, { blockHash: block1.hash }]],
    ['eth_estimateGas', [{ from: who, to: token, data: balanceOf }, hex(head - FINALITY)]],
    ['eth_createAccessList', [{ from: who, to: token, data: balanceOf }, hex(head - FINALITY)]],
    ['eth_getLogs', [{ fromBlock: '0x0', toBlock: hex(head - FINALITY) }]],
    ['eth_getLogs', [{ blockHash: block1.hash }]],
    ['eth_feeHistory', ['0x2', hex(head - FINALITY), [50]]],
    // Near the head: kept for the TTL (these two calls fall well inside it).
    ['eth_blockNumber', []],
    ['eth_gasPrice', []],
    ['eth_maxPriorityFeePerGas', []],
    ['eth_call', [{ to: token, data: balanceOf }, 'latest']],
    ['eth_getBalance', [who, 'latest']],
    ['eth_getBlockByNumber', [hex(head), false]],
  ];
  const nearHead = cases.findIndex(([m]) => m === 'eth_blockNumber');
  let n = 0, unseen = 0;
  for (const [i, [method, params]] of cases.entries()) {
    const what = `${method} ${JSON.stringify(params)}`;
    const expected = await node(method, params ?? []);
    const id1 = IDS[n++ % IDS.length], id2 = IDS[n++ % IDS.length];
    const f0 = await storeFailures();
    const t0 = Date.now();
    const first = await rpc(call(id1, method, params));
    const f1 = await storeFailures();
    assertAnswer(first, id1, expected, `${what} (first)`);
    // Kept for good by an earlier run of this file on this stack (its only user of the
    // network): then the first call is a hit already, and so is the second.
    const before = i < nearHead && ranBefore && hits(first) === 1;
    assert.equal(hits(first), before ? 1 : 0, `${what}: the first call goes to the node`);
    const second = await rpc(call(id2, method, params));
    const ms = Date.now() - t0;
    const f2 = await storeFailures();
    assertAnswer(second, id2, expected, `${what} (second)`);
    if (before) {
      assert.equal(hits(second), 1, `${what}: the second call is a hit (kept before)`);
      assert.equal(cu(second), cu(first), `${what}: a hit costs a quarter`);
      continue;
    }
    if (hits(second) === 1) {
      assert.equal(cu(second), Math.ceil(cu(first) / 4), `${what}: a hit costs a quarter`);
      continue;
    }
    // A miss has one of two causes: an answer kept for the TTL gone when the pair took longer
    // (a loaded sanitizer build), or the first answer not kept because another writer held
    // the database's write lock past the 2 ms the cache waits (docs/rpc.md; the counter says
    // so). Then the second answer is the node's, kept in turn
    // unless its store was given up too: a third call at once is the hit.
    assert.ok(ms >= TTL_MS || f1 > f0, `${what}: the second call is a hit (after ${ms} ms; ` +
      `stores given up: ${f1 - f0})`);
    const third = await rpc(call(id2, method, params));
    assertAnswer(third, id2, expected, `${what} (third, after ${ms} ms)`);
    if (f2 > f1) {
      if (i < 6 && hits(third) === 0) unseen++;
      continue;
    }
    assert.equal(hits(third), 1, `${what}: the call after the node's kept answer is a hit`);
  }
  // The same calls in a batch: all hits, in order, each with its own id.
  const batch = `[${cases.slice(0, 6).map(([m, p], i) => call(IDS[i], m, p)).join(',')}]`;
  const res = await rpc(batch);
  assert.equal(res.status, 200);
  assert.ok(hits(res) >= 6 - unseen, `${hits(res)} hits of 6 (${unseen} never seen kept)`);
  for (let i = 0; i < 6; i++) {
    assert.ok(res.text.includes(`"id":${IDS[i]},`), `batch id ${IDS[i]}`);
    assert.deepEqual(res.json[i].result, await node(cases[i][0], cases[i][1] ?? []));
  }
});

// The write lock of the stack's SQLite file held by another writer past the cache's 2 ms while
// a call's answer is to be kept: the cache gives up the store rather than the caller's time,
// and says so in its counter.
test('an answer not kept for a busy database is counted, and kept the next time', {
  skip: onCluster('the database is PostgreSQL, not a SQLite file this test can lock') }, async () => {
  const who = `0x${Date.now().toString(16).padStart(40, '0')}`;	// a key no run has kept
  const body = call(1, 'eth_getBalance', [who, hex(1)]);
  const expected = await node('eth_getBalance', [who, hex(1)]);
  const sqlite = spawn('sqlite3', ['-cmd', '.timeout 5000', `${env.dir}/blockport.db`],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  sqlite.stdout.on('data', (d) => { out += d; });
  const f0 = await storeFailures();
  let first;
  try {
    sqlite.stdin.write("BEGIN IMMEDIATE;\nSELECT 'locked';\n");
    for (let i = 0; i < 100 && !out.includes('locked'); i++) await sleep(50);
    assert.ok(out.includes('locked'), 'sqlite3 holds the write lock');
    first = await rpc(body);
  } finally {
    sqlite.stdin.end('ROLLBACK;\n');
    await new Promise((r) => (sqlite.exitCode !== null ? r() : sqlite.on('exit', r)));
  }
  assertAnswer(first, '1', expected, 'first');
  assert.equal(hits(first), 0);
  assert.equal(await storeFailures(), f0 + 1, 'the store given up is counted');
  const second = await rpc(body);
  assertAnswer(second, '1', expected, 'second');
  assert.equal(hits(second), 0, 'nothing was kept while the database was locked');
  const third = await rpc(body);
  assertAnswer(third, '1', expected, 'third');
  assert.equal(hits(third), 1, 'kept once the lock was free');
});

test('a batch mixes hits and calls to the node, in the client\'s order', async () => {
  const old = hex(1);
  const f0 = await storeFailures();
  await rpc(call(1, 'eth_getBlockByNumber', [old, false]));
  const expect = 2 * await hitUnlessGivenUp(f0);
  const res = await rpc(`[${call('"x"', 'eth_getBlockByNumber', [old, false])},` +
    `${call(2, 'eth_accounts', [])},${call(3, 'eth_getBlockByNumber', [old, false])}]`);
  assert.equal(res.status, 200);
  assert.equal(hits(res), expect);
  assert.deepEqual(res.json.map((o) => o.id), ['x', 2, 3]);
  const b = await node('eth_getBlockByNumber', [old, false]);
  assert.deepEqual(res.json[0].result, b);
  assert.deepEqual(res.json[2].result, b);
  assert.deepEqual(res.json[1].result, await node('eth_accounts'));
});

test('many clients at once: the same answers from the node and from the cache', async () => {
  // Every process and thread reads and fills the one cache at once (the ThreadSanitizer stage
  // of scripts/test.sh runs this file).
  const head = Number(await node('eth_blockNumber'));
  const calls = [];
  for (let i = 0; i < 96; i++) {
    const n = hex(1 + (i % 8));			// eight final blocks, twelve times each
    calls.push(['eth_getBlockByNumber', [n, false]]);
    calls.push(['eth_blockNumber', []]);
  }
  const expected = new Map();
  for (let i = 1; i <= 8; i++)
    expected.set(hex(i), await node('eth_getBlockByNumber', [hex(i), false]));
  const answers = await Promise.all(calls.map(([m, p], i) => rpc(call(i, m, p))));
  answers.forEach((res, i) => {
    assert.equal(res.status, 200);
    assert.equal(res.json.id, i);
    if (calls[i][0] === 'eth_blockNumber')
      assert.ok(Number(res.json.result) >= head, res.text);
    else
      assert.deepEqual(res.json.result, expected.get(calls[i][1][0]));
  });
  assert.ok(answers.some((res) => hits(res) === 1), 'some answers came from the cache');
});

test('an error is never kept, nor a null for a height past the head', async () => {
  const head = Number(await node('eth_blockNumber'));
  const future = hex(head + 2);
  const who = devchain.deployer;
  // Past the head: the node says null (a block) or an error (state); neither is kept.
  for (const [method, params] of [['eth_getBlockByNumber', [future, false]],
    ['eth_getBalance', [who, future]]]) {
    const a = await rpc(call(5, method, params));
    assert.equal(a.status, 200);
    assert.ok(a.json.result === null || a.json.error, `${method}: ${a.text}`);
    const b = await rpc(call(5, method, params));
    assert.equal(hits(b), 0, `${method}: ${a.text} was kept`);
  }
  // A reverting call (a transfer of more than the sender has): an error, every time from the node.
  const transfer = `0xa9059cbb${who.slice(2).padStart(64, '0')}${'f'.repeat(64)}`;
  const bad = call(6, 'eth_call', [{ from: '0x0000000000000000000000000000000000000001',
    to: devchain.tokens.erc20_18, data: transfer }, hex(head)]);
  for (let i = 0; i < 2; i++) {
    const r = await rpc(bad);
    assert.ok(r.json.error, r.text);
    assert.equal(hits(r), 0);
  }
  // Once the height exists, the answers are the node's.
  await node('anvil_mine', ['0x3']);
  const blk = await rpc(call(7, 'eth_getBlockByNumber', [future, false]));
  assert.deepEqual(blk.json.result, await node('eth_getBlockByNumber', [future, false]));
  assert.notEqual(blk.json.result, null);
  const bal = await rpc(call(8, 'eth_getBalance', [who, future]));
  assert.equal(bal.json.result, await node('eth_getBalance', [who, future]));
});

test('a block reorganised below the head is not served by number after the TTL', async () => {
  await node('anvil_mine', ['0x2']);
  const snap = await node('evm_snapshot');
  await node('anvil_mine', ['0x2']);
  const n = hex(Number(await node('eth_blockNumber')) - 1);	// below the head, not final
  const f0 = await storeFailures();
  const before = await rpc(call(1, 'eth_getBlockByNumber', [n, false]));
  assert.equal(before.json.result.number, n);
  const expect = await hitUnlessGivenUp(f0);
  const again = await rpc(call(2, 'eth_getBlockByNumber', [n, false]));
  assert.equal(hits(again), expect, 'kept for the TTL');
  assert.equal(again.json.result.hash, before.json.result.hash);
  // The reorg: the same heights again, with other timestamps, so other hashes.
  assert.equal(await node('evm_revert', [snap]), true);
  const t = Number((await node('eth_getBlockByNumber', ['latest', false])).timestamp);
  await node('evm_mine', [t + 30]);	// a small step: later tests sign paymaster windows by the clock
  await node('evm_mine', [t + 31]);
  const now = await node('eth_getBlockByNumber', [n, false]);
  assert.notEqual(now.hash, before.json.result.hash, 'the reorg changed the block');
  await sleep(TTL_MS + 200);
  const after = await rpc(call(3, 'eth_getBlockByNumber', [n, false]));
  assert.equal(after.json.result.hash, now.hash, 'the new block, not the orphaned one');
  // The orphan stays reachable by its hash (a hash names one block for good).
  const orphan = await rpc(call(4, 'eth_getBlockByHash', [before.json.result.hash, false]));
  assert.equal(orphan.status, 200);
});

// Two upstreams of ethereum.lagging: the primary, then a fallback that lags behind it.
const lag = { primaryUp: true, primaryHead: 100, fallbackHead: 90, fallbackCalls: 0 };
let server;
before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const primary = req.url === '/primary';
      if (primary && !lag.primaryUp) {
        res.writeHead(503, { 'Content-Type': 'text/html' });
        res.end('<html>down</html>');
        return;
      }
      if (!primary) lag.fallbackCalls++;
      const head = primary ? lag.primaryHead : lag.fallbackHead;
      // eth_getLogs: an empty list, as a node that has not reached the range answers.
      const answer = (o) => ({ jsonrpc: '2.0', id: o.id,
        result: o.method === 'eth_blockNumber' ? hex(head) : o.method === 'eth_getLogs' ? [] : null });
      const j = JSON.parse(body);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(Array.isArray(j) ? j.map(answer) : answer(j)));
    });
  });
  await new Promise((r) => server.listen(Number(process.env.LAG_PORT), '127.0.0.1', r));
});
after(() => server?.close());

// The head mark (lib/rpc/head_mark.c) is shared through Redis on a cluster (docs/rpc.md): a head
// that has not seen the primary's head itself answers the mark another head raised.
test('eth_blockNumber does not go back when the fallback lags', async () => {
  const first = await rpc(call(1, 'eth_blockNumber', []), 'lagging');
  assert.equal(first.json.result, hex(100));
  lag.primaryUp = false;
  const second = await rpc(call('"n"', 'eth_blockNumber', []), 'lagging');
  assert.equal(lag.fallbackCalls, 1, 'the fallback answered');
  assert.equal(second.text, `{"jsonrpc":"2.0","id":"n","result":"${hex(100)}"}`);
  const batch = await rpc(`[${call(1, 'eth_blockNumber', [])},${call(2, 'eth_chainId', [])}]`,
    'lagging');
  assert.equal(batch.json[0].result, hex(100), 'in a batch too');
  assert.equal(batch.json[0].id, 1);
  // Logs of a final range (finality_depth 4) from the fallback, which did not set the mark:
  // not kept (it may not have reached the range).
  const logs = call(9, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: '0xa' }]);
  const calls = lag.fallbackCalls;
  for (let i = 0; i < 2; i++) {
    const res = await rpc(logs, 'lagging');
    assert.deepEqual(res.json.result, []);
    assert.equal(hits(res), 0);
  }
  assert.equal(lag.fallbackCalls, calls + 2, 'both asked the fallback');
  // The fallback passes the mark: its head is answered, and becomes the mark.
  lag.fallbackHead = 120;
  const third = await rpc(call(3, 'eth_blockNumber', []), 'lagging');
  assert.equal(third.json.result, hex(120));
  // Now the fallback holds the mark: its logs of a final range are kept.
  await rpc(logs, 'lagging');
  assert.equal(hits(await rpc(logs, 'lagging')), 1, 'kept from the mark\'s upstream');
  lag.fallbackHead = 119;
  const fourth = await rpc(call(4, 'eth_blockNumber', []), 'lagging');
  assert.equal(fourth.json.result, hex(119), 'the upstream that set the mark is believed when it goes back');
});

test('blockport migrate makes the cache\'s own database file (rpc_cache_file)', () => {
  const file = `${env.dir}/rpc-cache-${process.pid}.db`;
  const cfg = `${env.dir}/rpc-cache-${process.pid}.ini`;
  writeFileSync(cfg, readFileSync(env.config, 'utf8')
    .replace('[server]\n', `[server]\nrpc_cache_file = ${file}\n`));
  try {
    const out = execFileSync(`${env.build}/blockport`, ['-c', cfg, 'migrate'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    assert.match(out, new RegExp(`^response cache ${file} at schema \\d+$`, 'm'));
    assert.ok(existsSync(file));
  } finally {
    rmSync(cfg, { force: true });
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  }
});
