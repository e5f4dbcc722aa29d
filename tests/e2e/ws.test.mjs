// WebSocket subscriptions at /v1/ws/{chain}/{network} (ws/subscribe.c, docs/websocket.md):
// websocketd behind the stack's web server, with real clients (the ws package and viem's
// webSocket transport) against the devchain, which the tests mine themselves.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createPublicClient, webSocket } from 'viem';
import { JsonRpcProvider, Wallet } from 'ethers';
import { account } from '../../devchain/dev.mjs';
import { admin, env, newKey, newKeyWithId, onCluster, sleep, waitFor } from './helpers.mjs';

const wsBase = env.base.replace(/^http/, 'ws');
// Connecting counts as a request, as each message does: a key whose plan the tests cannot exhaust.
const KEY = newKey({ plan: 'enterprise' });
const url = (key, path = '/v1/ws/ethereum/devnet') =>
  `${wsBase}${path}${key === null ? '' : `?apiKey=${encodeURIComponent(key)}`}`;

async function chainRpc(method, params = []) {
  const res = await fetch(env.chain, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const j = await res.json();
  if (j.error) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
}

// A connection with a queue of the messages received, parsed.
class Conn {
  constructor(target, opts) {
    this.ws = new WebSocket(target, opts);
    this.queue = [];
    this.waiters = [];
    this.closed = new Promise((resolve) => this.ws.on('close', (code) => resolve(code)));
    this.ws.on('message', (data) => {
      this.queue.push(JSON.parse(data.toString()));
      for (const w of this.waiters.splice(0)) w();
    });
    this.ws.on('close', () => { for (const w of this.waiters.splice(0)) w(); });
    this.ws.on('error', () => {});
    this.opened = new Promise((resolve, reject) => {
      this.ws.on('open', resolve);
      this.ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    this.nextId = 1;
  }

  // The next message that matches pred, waiting up to ms.
  async next(pred = () => true, ms = 15000) {
    const end = Date.now() + ms;
    for (;;) {
      const i = this.queue.findIndex(pred);
      if (i >= 0) return this.queue.splice(i, 1)[0];
      if (this.ws.readyState > WebSocket.OPEN) throw new Error('closed while waiting');
      const left = end - Date.now();
      if (left <= 0) throw new Error('no such message in time');
      await new Promise((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  async call(method, params = []) {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return this.next((m) => m.id === id);
  }

  close() { this.ws.close(); return this.closed; }
}

async function open(key = KEY, opts) {
  const c = new Conn(url(key), opts);
  await c.opened;
  return c;
}

// The devchain's sample tokens (devchain/deploy.mjs), held by the deployer, account 0.
const dev = JSON.parse(readFileSync(join(env.dir, 'devchain.json'), 'utf8'));
const [TOKEN, OTHER] = [dev.tokens.erc20_18, dev.tokens.erc20_6];
const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const pad = (hex) => hex.replace(/^0x/, '').padStart(64, '0');
async function transfer(token, to, amount) {
  const data = `0xa9059cbb${pad(to)}${pad(amount.toString(16))}`;
  return chainRpc('eth_sendTransaction', [{ from: dev.deployer, to: token, data }]);
}
const RCPT = '0x00000000000000000000000000000000000000b1';

const heads = (sub) => (m) => m.method === 'eth_subscription' && m.params?.subscription === sub;

test('newHeads: 20 consecutive heads linked by parentHash while the devchain mines', async () => {
  const c = await open();
  const sub = await c.call('eth_subscribe', ['newHeads']);
  assert.match(sub.result, /^0x[0-9a-f]{32}$/);
  const got = [];
  const miner = (async () => {
    for (let i = 0; i < 20; i++) { await chainRpc('evm_mine'); await sleep(100); }
  })();
  for (let i = 0; i < 20; i++) got.push((await c.next(heads(sub.result), 30000)).params.result);
  await miner;
  for (const h of got) {
    for (const f of ['number', 'hash', 'parentHash', 'timestamp', 'gasUsed', 'gasLimit', 'baseFeePerGas'])
      assert.match(h[f], /^0x[0-9a-f]+$/, f);
  }
  for (let i = 1; i < got.length; i++) {
    assert.equal(BigInt(got[i].number), BigInt(got[i - 1].number) + 1n);
    assert.equal(got[i].parentHash, got[i - 1].hash);
  }
  // The heads are the chain's.
  const last = got[got.length - 1];
  const blk = await chainRpc('eth_getBlockByNumber', [last.number, false]);
  assert.equal(blk.hash, last.hash);
  assert.equal(blk.timestamp, last.timestamp);
  assert.equal(blk.gasLimit, last.gasLimit);
  await c.close();
});

test('newHeads: the node\'s header, field for field as anvil\'s own newHeads sends it (but its transactions)', async () => {
  const c = await open();
  const sub = (await c.call('eth_subscribe', ['newHeads'])).result;
  // anvil's own WebSocket endpoint (the devchain's URL), subscribed at the same time.
  const anvil = new Conn(env.chain.replace(/^http/, 'ws'));
  await anvil.opened;
  const asub = (await anvil.call('eth_subscribe', ['newHeads'])).result;
  assert.match(asub, /^0x[0-9a-f]+$/);
  // A block with a transaction (a non-empty logsBloom, roots and gasUsed), then an empty one.
  await transfer(TOKEN, RCPT, 5n);
  await chainRpc('evm_mine');
  for (let i = 0; i < 2; i++) {
    const ours = (await c.next(heads(sub), 30000)).params.result;
    const theirs = (await anvil.next((m) => m.params?.subscription === asub &&
      m.params.result.number === ours.number, 30000)).params.result;
    assert.equal(ours.hash, theirs.hash);
    assert.equal('transactions' in ours, false, 'a header: no transactions');
    const { transactions, ...header } = theirs;
    assert.deepEqual(ours, header);
    assert.deepEqual(Object.keys(ours), Object.keys(header), 'the node\'s order');
    if (i === 0) {
      assert.equal(transactions.length, 1);
      assert.notEqual(BigInt(ours.gasUsed), 0n);
      assert.match(ours.logsBloom, /[1-9a-f]/);
    }
    for (const f of ['miner', 'stateRoot', 'transactionsRoot', 'receiptsRoot', 'logsBloom',
      'difficulty', 'extraData', 'mixHash', 'nonce', 'sha3Uncles', 'baseFeePerGas',
      'withdrawalsRoot', 'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot'])
      assert.match(ours[f], /^0x[0-9a-f]*$/, f);
    // And eth_getBlockByNumber's block, but its transactions.
    const { transactions: _t, ...blk } = await chainRpc('eth_getBlockByNumber', [ours.number, false]);
    assert.deepEqual(ours, blk);
  }
  await anvil.close();
  await c.close();
});

test('a reorg sends the new branch\'s heads, still linked', async () => {
  const c = await open();
  const sub = (await c.call('eth_subscribe', ['newHeads'])).result;
  await chainRpc('evm_mine');
  const base = (await c.next(heads(sub))).params.result;
  const snap = await chainRpc('evm_snapshot');
  await chainRpc('evm_mine');
  const orphan = (await c.next(heads(sub))).params.result;
  assert.equal(await chainRpc('evm_revert', [snap]), true);
  // A different block at the orphan's height (a new timestamp), then one more.
  await chainRpc('evm_mine', [Number(BigInt(orphan.timestamp)) + 7]);
  await chainRpc('evm_mine');
  const a = (await c.next(heads(sub), 30000)).params.result;
  const b = (await c.next(heads(sub), 30000)).params.result;
  assert.equal(a.number, orphan.number);
  assert.notEqual(a.hash, orphan.hash);
  assert.equal(a.parentHash, base.hash);
  assert.equal(b.parentHash, a.hash);
  await c.close();
});

test('eth_unsubscribe answers true and stops the messages', async () => {
  const c = await open();
  const sub = (await c.call('eth_subscribe', ['newHeads'])).result;
  await chainRpc('evm_mine');
  await c.next(heads(sub));
  assert.deepEqual((await c.call('eth_unsubscribe', [sub])).result, true);
  assert.deepEqual((await c.call('eth_unsubscribe', [sub])).result, false);
  await chainRpc('evm_mine');
  await chainRpc('evm_mine');
  await sleep(1500);
  assert.equal(c.queue.filter(heads(sub)).length, 0);
  await c.close();
});

test('logs filtered by address: exactly that contract\'s transfers, removed: true on a reorg', async () => {
  const c = await open();
  const sub = (await c.call('eth_subscribe', ['logs', { address: TOKEN, topics: [TRANSFER] }])).result;
  assert.match(sub, /^0x[0-9a-f]{32}$/);
  const sent = [];
  for (let i = 1; i <= 3; i++) {
    sent.push(await transfer(TOKEN, RCPT, BigInt(i)));
    await transfer(OTHER, RCPT, BigInt(i));	// never to be seen
  }
  const got = [];
  for (let i = 0; i < 3; i++) got.push((await c.next(heads(sub), 30000)).params.result);
  assert.deepEqual(got.map((l) => l.transactionHash), sent);
  for (const [i, l] of got.entries()) {
    assert.equal(l.address, TOKEN);
    assert.equal(l.removed, false);
    assert.equal(BigInt(l.data), BigInt(i + 1));
  }
  // Orphan a block holding one transfer: its log comes again with removed: true.
  const snap = await chainRpc('evm_snapshot');
  const orphanTx = await transfer(TOKEN, RCPT, 99n);
  const orphan = (await c.next(heads(sub), 30000)).params.result;
  assert.equal(orphan.transactionHash, orphanTx);
  const { timestamp } = await chainRpc('eth_getBlockByNumber', [orphan.blockNumber, false]);
  assert.equal(await chainRpc('evm_revert', [snap]), true);
  await chainRpc('evm_mine', [Number(BigInt(timestamp)) + 5]);	// another block at that height
  await chainRpc('evm_mine');
  const removed = (await c.next(heads(sub), 30000)).params.result;
  assert.equal(removed.removed, true);
  assert.equal(removed.transactionHash, orphanTx);
  assert.equal(removed.blockHash, orphan.blockHash);
  await sleep(1000);
  assert.equal(c.queue.filter(heads(sub)).length, 0, 'nothing else: the reverted branch has no transfer');
  await c.close();
});

// A contract the index does not otherwise keep anything of: its fallback emits LOG1 with the
// first word of the calldata as the topic (runtime 0x600035 6000 6000 a1 00).
const EMITTER_INIT = '0x68600035600060' + '00a100' + '600052' + '6009' + '6017' + 'f3';

test('logs of any contract, from the index: the ws package on a contract the indexer does not track', async () => {
  const hash = await chainRpc('eth_sendTransaction', [{ from: dev.deployer, data: EMITTER_INIT }]);
  // Polled: the node may be mining on an interval when this runs, not on every transaction.
  const { contractAddress: emitter } = await waitFor(() => chainRpc('eth_getTransactionReceipt', [hash]),
    `the emitter's deployment ${hash}`, 30000);
  assert.match(emitter, /^0x[0-9a-f]{40}$/);
  const c = await open();
  const topic = `0x${pad('beef')}`;
  const sub = (await c.call('eth_subscribe', ['logs', { address: emitter, topics: [[topic, `0x${pad('cafe')}`]] }])).result;
  const sent = [];
  for (const word of ['beef', 'dead', 'beef']) {
    sent.push(await chainRpc('eth_sendTransaction', [{ from: dev.deployer, to: emitter, data: `0x${pad(word)}` }]));
    await transfer(TOKEN, RCPT, 1n);	// another contract's log in between: never to be seen
  }
  const got = [];
  for (let i = 0; i < 2; i++) got.push((await c.next(heads(sub), 30000)).params.result);
  assert.deepEqual(got.map((l) => l.transactionHash), [sent[0], sent[2]]);
  for (const l of got) {
    assert.equal(l.address, emitter);
    assert.deepEqual(l.topics, [topic]);
    assert.equal(l.data, '0x');
    const r = await chainRpc('eth_getTransactionReceipt', [l.transactionHash]);
    assert.equal(l.blockHash, r.blockHash);
    assert.equal(l.blockNumber, r.blockNumber);
    assert.equal(l.transactionIndex, r.transactionIndex);
    assert.equal(l.logIndex, r.logs[0].logIndex);
  }
  await sleep(1000);
  assert.equal(c.queue.filter(heads(sub)).length, 0, 'the dead topic and the token are filtered out');
  await c.close();
});

test('newPendingTransactions: a transaction sent with ethers shows up, from the one shared follower', async () => {
  const c = await open();
  const other = await open();
  const sub = (await c.call('eth_subscribe', ['newPendingTransactions'])).result;
  const sub2 = (await other.call('eth_subscribe', ['newPendingTransactions'])).result;
  assert.match(sub, /^0x[0-9a-f]{32}$/);
  const wallet = new Wallet(account(17).privateKey, new JsonRpcProvider(env.chain));
  await chainRpc('anvil_setBalance', [wallet.address, '0x56bc75e2d63100000']);	// 100 ETH
  const nonce = await wallet.getNonce('pending');
  const tx = await wallet.sendTransaction({ to: RCPT, value: 12345n, nonce });
  const isTx = (m) => heads(sub)(m) && m.params.result === tx.hash;
  assert.equal((await c.next(isTx, 30000)).params.result, tx.hash);
  assert.equal((await other.next((m) => heads(sub2)(m) && m.params.result === tx.hash, 30000)).params.result, tx.hash);
  // Unsubscribed: no more hashes.
  assert.equal((await c.call('eth_unsubscribe', [sub])).result, true);
  c.queue.length = 0;
  await wallet.sendTransaction({ to: RCPT, value: 1n, nonce: nonce + 1 });
  await sleep(1500);
  assert.equal(c.queue.filter(heads(sub)).length, 0);
  // One upstream poll for all connections: the node has one pending filter of ours per network.
  const log = readFileSync(join(env.dir, 'pending.log'), 'utf8');
  assert.doesNotMatch(log, /ERROR|error/);
  await Promise.all([c.close(), other.close()]);
});

test('syncing: the node\'s eth_syncing once', async () => {
  const c = await open();
  const sub = (await c.call('eth_subscribe', ['syncing'])).result;
  assert.equal((await c.next(heads(sub))).params.result, false);
  const bad = await c.call('eth_subscribe', ['logs', { address: '0x12' }]);
  assert.equal(bad.error.code, -32602);
  await c.close();
});

test('other methods go through the JSON-RPC proxy: eth_blockNumber equals HTTP\'s', async () => {
  const c = await open();
  const ws = await c.call('eth_blockNumber');
  const res = await fetch(`${env.base}/v1/rpc/ethereum/devnet`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  });
  assert.equal(ws.result, (await res.json()).result);
  // The proxy's rules: a denied method, the envelope check (a folded duplicate member).
  const denied = await c.call('anvil_mine');
  assert.equal(denied.error.code, -32601);
  c.ws.send('{"jsonrpc":"2.0","id":9,"method":"eth_chainId","Method":"eth_accounts","params":[]}');
  const smuggled = await c.next((m) => m.id === 9);
  assert.equal(smuggled.error.code, -32600);
  // A batch is answered as over HTTP.
  c.ws.send(JSON.stringify([{ jsonrpc: '2.0', id: 'a', method: 'eth_chainId', params: [] },
    { jsonrpc: '2.0', id: 'b', method: 'eth_blockNumber', params: [] }]));
  const batch = await c.next(Array.isArray);
  assert.deepEqual(batch.map((m) => m.id), ['a', 'b']);
  assert.equal(batch[0].result, '0x7a69');
  await c.close();
});

test('the key: X-API-Key and Bearer on the upgrade work too', async () => {
  for (const headers of [{ 'X-API-Key': KEY }, { Authorization: `Bearer ${KEY}` }]) {
    const c = new Conn(url(null), { headers });
    await c.opened;
    assert.match((await c.call('eth_chainId')).result, /^0x/);
    await c.close();
  }
});

async function refused(key, opts, path) {
  const c = new Conn(url(key, path), opts);
  await c.opened;
  const m = await c.next();
  assert.equal(await c.closed > 0, true);
  return m;
}

test('a bad or missing key, a missing scope and a test key on a mainnet are refused', async () => {
  let m = await refused('blockport_test_nope');
  assert.equal(m.error.data.status, 401);
  assert.equal(m.error.data.code, 'unauthorized');
  assert.match(m.error.message, /^401 unauthorized/);
  m = await refused(null);
  assert.equal(m.error.data.status, 401);
  m = await refused(newKey({ scopes: 'data:read' }));
  assert.equal(m.error.data.status, 403);
  assert.match(m.error.message, /rpc:read/);
  m = await refused(KEY, undefined, '/v1/ws/ethereum/mainnet');
  assert.equal(m.error.data.status, 403);
  assert.match(m.error.message, /test keys/);
  m = await refused(KEY, undefined, '/v1/ws/ethereum/nowhere');
  assert.equal(m.error.data.status, 404);
});

test('messages count against the plan: CUs per message', async () => {
  const key = newKey({ plan: 'cu' });	// 60 CUs a second
  const c = await open(key);
  let limited = null;
  for (let i = 0; i < 200 && !limited; i++) {
    const m = await c.call('eth_blockNumber');
    if (m.error) limited = m;
  }
  assert.ok(limited, 'the plan\'s CUs per second were reached');
  assert.equal(limited.error.data.status, 429);
  await c.close();
});

test('notifications count CUs too: 25 newHeads subscriptions spend most of a second\'s 60', async () => {
  const key = newKey({ plan: 'cu' });	// 60 CUs a second; a head costs eth_getBlockByNumber's 2
  const c = await open(key);
  const subs = [];
  for (let i = 0; i < 25; i++) subs.push((await c.call('eth_subscribe', ['newHeads'])).result);
  let limited = null;
  for (let attempt = 0; attempt < 5 && !limited; attempt++) {
    await sleep(1100);	// a fresh second for the subscriptions' own CUs
    await chainRpc('evm_mine');
    for (const sub of subs) await c.next(heads(sub), 30000);
    // 50 CUs charged for the heads: 15 more calls of 1 CU pass the 60 within this second.
    for (let i = 0; i < 15 && !limited; i++) {
      const m = await c.call('eth_blockNumber');
      if (m.error) limited = m;
    }
  }
  assert.ok(limited, 'the heads\' CUs counted against the plan');
  assert.equal(limited.error.data.status, 429);
  await c.close();
});

test('a per-key cap on open connections (the plan\'s ws_connections)', { skip: onCluster('WebSocket slots are counted per head (docs/scale.md)') }, async () => {
  const key = newKey({ plan: 'ws' });	// 3 (scripts/stack.sh)
  const conns = [];
  for (let i = 0; i < 3; i++) conns.push(await open(key));
  for (const c of conns) assert.match((await c.call('eth_chainId')).result, /^0x/);
  const m = await refused(key);
  assert.equal(m.error.data.status, 429);
  assert.match(m.error.message, /WebSocket connections/);
  await conns[0].close();
  await waitFor(async () => {
    const c = new Conn(url(key));
    await c.opened;
    const r = await c.call('eth_chainId').catch(() => null);
    await c.close();
    return r?.result !== undefined;
  }, 'a slot freed by a closed connection');
  await Promise.all(conns.slice(1).map((c) => c.close()));
});

// Resolves with the close code, or 'open' when the connection is still open after ms.
const closedWithin = (c, ms) => Promise.race([c.closed, sleep(ms).then(() => 'open')]);

test('a revoked key: a connection that only listens gets a 401 naming the revocation and is closed within 15 s', async () => {
  const { key, id } = newKeyWithId({ plan: 'enterprise' });
  const c = await open(key);
  const sub = await c.call('eth_subscribe', ['newHeads']);
  assert.match(sub.result, /^0x[0-9a-f]{32}$/);
  admin('key', 'revoke', id);
  const t0 = Date.now();
  // No message from the client, no block: the connection's own timer looks at the key.
  const m = await c.next((x) => x.error !== undefined, 15000);
  assert.equal(m.id, null);
  assert.equal(m.error.code, -32001);
  assert.equal(m.error.data.status, 401);
  assert.equal(m.error.data.code, 'unauthorized');
  assert.match(m.error.message, /^401 unauthorized: .*revoked/);
  assert.notEqual(await closedWithin(c, 15000 - (Date.now() - t0)), 'open');
});

test('a plan changed applies on an open connection, its proxy helper included: debug_* refused after a downgrade', async () => {
  const { email, key } = newKeyWithId({ plan: 'growth' });
  const block = await chainRpc('eth_getBlockByNumber', [`0x${dev.deploy_block.toString(16)}`, false]);
  const trace = ['debug_traceTransaction', [block.transactions[0], { tracer: 'callTracer' }]];
  const c = await open(key);
  const sub = await c.call('eth_subscribe', ['newHeads']);
  let r = await c.call(...trace);	// starts the helper, on the growth plan
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.equal(typeof r.result, 'object');
  admin('account', 'plan', email, 'free');
  r = await waitFor(async () => {
    const a = await c.call(...trace);
    return a.error ? a : null;
  }, 'debug_traceTransaction refused on the free plan', 15000);
  assert.equal(r.error.code, -32601);
  assert.match(r.error.message, /free plan/);
  // The connection itself goes on: heads still come.
  await chainRpc('evm_mine');
  await c.next(heads(sub.result), 15000);
  await c.close();
});

test('a plan downgraded below the open connections: those past the new cap get a 429 and are closed within 15 s', { skip: onCluster('WebSocket slots are counted per head (docs/scale.md)') }, async () => {
  const { email, key } = newKeyWithId({ plan: 'enterprise' });	// no cap on connections
  const conns = [];
  for (let i = 0; i < 4; i++) {
    const c = await open(key);
    assert.match((await c.call('eth_subscribe', ['newHeads'])).result, /^0x/);
    conns.push(c);
  }
  admin('account', 'plan', email, 'ws');	// 3 connections (scripts/stack.sh)
  const gone = await waitFor(() => {
    const closed = conns.filter((c) => c.ws.readyState > WebSocket.OPEN);
    return closed.length > 0 ? closed : null;
  }, 'a connection past the new cap to close', 15000);
  await sleep(300);
  assert.equal(conns.filter((c) => c.ws.readyState > WebSocket.OPEN).length, 1);
  const m = gone[0].queue.find((x) => x.error !== undefined);
  assert.equal(m.error.data.status, 429);
  assert.match(m.error.message, /^429 rate_limited: the key's plan changed.*the ws plan allows 3/);
  const kept = conns.filter((c) => c !== gone[0]);
  for (const c of kept) assert.match((await c.call('eth_chainId')).result, /^0x/);
  assert.equal((await refused(key)).error.data.status, 429);
  await Promise.all(kept.map((c) => c.close()));
});

test('a message over max_body is refused and the connection closed', async () => {
  const c = await open();
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: ['x'.repeat(70000)] }));
  const m = await c.next();
  assert.equal(m.error.data.status, 413);
  await c.closed;
});

function children() {
  const pid = readFileSync(join(env.dir, 'ws.pid'), 'utf8').trim();
  try {
    return execFileSync('pgrep', ['-P', pid], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

test('100 connects and disconnects leave no process behind', async () => {
  const before = children().length;
  for (let i = 0; i < 100; i += 10) {
    const batch = [];
    for (let j = 0; j < 10; j++) batch.push(open());
    const conns = await Promise.all(batch);
    if (i === 0) assert.match((await conns[0].call('eth_chainId')).result, /^0x/);
    await Promise.all(conns.map((c) => c.close()));
  }
  await waitFor(() => children().length <= before, 'the per-connection processes to exit');
});

// Whether process pid has the stack's database (or its WAL or shared memory) open.
function holdsDatabase(pid) {
  const db = join(env.dir, 'blockport.db');
  return readdirSync(`/proc/${pid}/fd`).some((fd) => {
    try { return [db, `${db}-wal`, `${db}-shm`].includes(readlinkSync(`/proc/${pid}/fd/${fd}`)); } catch { return false; }
  });
}

// On PostgreSQL a heads follower reads the index at every block and keeps its connection
// (docs/scale.md): what this checks is SQLite's (the file's shared-memory locks).
const onPostgres = /^database *= *postgres(ql)?:\/\//m.test(readFileSync(env.config, 'utf8'));
test('an idle heads subscriber lets go of the database; heads still come; a message takes it again', {
  skip: onCluster('looks at the connection process of one head') ||
    (onPostgres && 'SQLite only: the handle kept on PostgreSQL') }, async () => {
  const before = new Set(children());
  const c = await open();
  const sub = await c.call('eth_subscribe', ['newHeads']);
  const [pid] = await waitFor(() => {
    const mine = children().filter((p) => !before.has(p));
    return mine.length === 1 ? mine : null;
  }, 'the connection\'s process');
  // Used at the subscription: held. Unused for 5 s with heads only: released.
  await waitFor(() => !holdsDatabase(pid), 'the database handle to be released', 12000);
  // Heads come from the indexer's feed meanwhile, still linked, without the handle.
  await chainRpc('evm_mine');
  const h1 = (await c.next(heads(sub.result), 15000)).params.result;
  await chainRpc('evm_mine');
  const h2 = (await c.next(heads(sub.result), 15000)).params.result;
  assert.equal(BigInt(h2.number), BigInt(h1.number) + 1n);
  assert.equal(h2.parentHash, h1.hash);
  assert.equal(holdsDatabase(pid), false);
  // A message admits the key again, from the database opened again.
  const bn = await c.call('eth_blockNumber');
  assert.equal(BigInt(bn.result), BigInt(await chainRpc('eth_blockNumber')));
  // A logs subscription reads the index at every block: the handle stays.
  const logs = await c.call('eth_subscribe', ['logs', { address: TOKEN }]);
  assert.match(logs.result, /^0x[0-9a-f]{32}$/);
  await sleep(6000);
  assert.equal(holdsDatabase(pid), true);
  await c.close();
});

test('a slow reader is disconnected rather than buffered without bound', { skip: onCluster('looks at the connection process of one head') }, async () => {
  const before = new Set(children());
  const c = await open();
  const mine = children().filter((p) => !before.has(p));
  assert.equal(mine.length, 1, 'the connection\'s process');
  const subs = [];
  for (let i = 0; i < 32; i++) subs.push((await c.call('eth_subscribe', ['newHeads'])).result);
  c.ws._socket.pause();	// the client reads nothing more
  // 1,500 blocks x 32 subscriptions: about 30 MB of notifications, far past the 4 MiB cap.
  await chainRpc('anvil_mine', ['0x5dc']);
  // Exited (websocketd reaps it only once it has written what it holds: a zombie until then).
  const gone = () => {
    try { return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${mine[0]}/stat`, 'utf8')); } catch { return true; }
  };
  await waitFor(gone, 'the slow reader\'s process to give up', 60000);
  // (Its "a slow reader" line on stderr is in websocketd.log only when websocketd read it before
  // the exit: websocketd closes the pipe on exit, so it is not asserted.)
  c.ws._socket.resume();
  assert.ok(await c.closed > 0, 'the connection is closed');
  const got = c.queue.filter((m) => m.method === 'eth_subscription').length;
  assert.ok(got < 1500 * 32, `${got} notifications: not all of them`);
});

test('a subscriber that never sends stays connected past the web server\'s idle timeouts', async () => {
  const c = await open();
  const sub = (await c.call('eth_subscribe', ['newHeads'])).result;
  const t0 = Date.now();
  let n = 0;
  while (Date.now() - t0 < 80000) {	// lighttpd's default read-idle is 60 s, Apache's Timeout 75 s
    await sleep(10000);
    await chainRpc('evm_mine');
    await c.next(heads(sub), 30000);
    n++;
  }
  assert.equal(c.ws.readyState, WebSocket.OPEN);
  assert.ok(n >= 7);
  await c.close();
});

test('viem webSocket transport: watchBlocks', async () => {
  const client = createPublicClient({ transport: webSocket(url(KEY)) });
  const seen = [];
  const unwatch = client.watchBlocks({ onBlock: (b) => seen.push(b), onError: () => {} });
  try {
    for (let i = 0; i < 3; i++) { await sleep(300); await chainRpc('evm_mine'); }
    await waitFor(() => seen.length >= 3, 'three blocks through viem', 30000);
    for (let i = 1; i < seen.length; i++) {
      assert.equal(seen[i].number, seen[i - 1].number + 1n);
      assert.equal(seen[i].parentHash, seen[i - 1].hash);
    }
    assert.equal(await client.getBlockNumber({ cacheTime: 0 }) >= seen[seen.length - 1].number, true);
  } finally {
    unwatch();
    (await client.transport.getRpcClient()).close();
  }
});

test('viem webSocket transport: watchEvent on an ERC-20 Transfer', async () => {
  const client = createPublicClient({ transport: webSocket(url(KEY)) });
  const seen = [];
  const unwatch = client.watchEvent({
    address: TOKEN,
    event: { type: 'event', name: 'Transfer', inputs: [
      { type: 'address', name: 'from', indexed: true },
      { type: 'address', name: 'to', indexed: true },
      { type: 'uint256', name: 'value', indexed: false }] },
    onLogs: (logs) => seen.push(...logs),
    onError: () => {},
  });
  try {
    await sleep(500);
    const tx = await transfer(TOKEN, RCPT, 4242n);
    await transfer(OTHER, RCPT, 4242n);
    await waitFor(() => seen.length >= 1, 'the transfer through viem', 30000);
    await sleep(500);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].transactionHash, tx);
    assert.equal(seen[0].args.value, 4242n);
    assert.equal(seen[0].args.to.toLowerCase(), RCPT);
  } finally {
    unwatch();
    (await client.transport.getRpcClient()).close();
  }
});

after(() => sleep(10));
