// The cluster's own cases (scripts/cluster.sh, docs/scale.md): two heads on one PostgreSQL and
// one Redis behind HAProxy. BLOCKPORT_URL is HAProxy, HEAD_URLS the heads, HEAD_PGIDS each
// head's process groups (heads separated by commas). Order matters: Redis is stopped and
// started again, then a head is killed for good, last.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonRpcProvider, Wallet } from 'ethers';
import { createSmartAccountClient } from 'permissionless';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPublicClient, getAddress, http, parseAbiItem, parseEther, parseGwei, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { account as devAccount } from '../../devchain/dev.mjs';
import { env, api, admin, newKey, newKeyWithId, assertError, sleep, waitFor } from '../e2e/helpers.mjs';

const heads = (process.env.HEAD_URLS ?? '').split(/\s+/).filter(Boolean);
const pgids = (process.env.HEAD_PGIDS ?? '').split(',').map((h) => h.trim().split(/\s+/).map(Number));
const top = new URL('../..', import.meta.url).pathname;
if (heads.length < 2) throw new Error('HEAD_URLS is not set: run these against scripts/cluster.sh');
// The worker failover cases need the workers on every head, under leases (CLUSTER_WORKERS=all).
const noWorkers = process.env.CLUSTER_WORKERS === 'all' ? false
  : 'the cluster runs no workers (CLUSTER_WORKERS=none: the workers do not run on PostgreSQL yet)';

// One request straight to a head (not through HAProxy): { status, headers, json }.
async function direct(head, path, key) {
  const res = await fetch(head + path, { headers: key ? { 'X-API-Key': key } : {} });
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, json };
}

// Keyed GETs of a path no program serves (404 once admitted), sent to the heads in turn, 10 at
// a time, until each head has refused one (its bucket is empty) or n were sent; returns the
// admitted and refused counts of each head and the seconds it took.
async function spread(key, n) {
  const admitted = heads.map(() => 0), refused = heads.map(() => 0), other = [];
  const t0 = Date.now();
  for (let i = 0; i < n && refused.some((r) => r === 0); i += 10) {
    const batch = Array.from({ length: Math.min(10, n - i) }, (_, j) => {
      const h = (i + j) % heads.length;
      return direct(heads[h], '/v1/cluster-spread', key).then((r) => ({ h, r }));
    });
    for (const { h, r } of await Promise.all(batch)) {
      if (r.status === 404) admitted[h]++;
      else if (r.status === 429) refused[h]++;
      else other.push(r.status);
    }
  }
  return { admitted, refused, other, seconds: (Date.now() - t0) / 1000 };
}

test('HAProxy spreads requests over both heads, round robin', async () => {
  const seen = new Set();
  for (let i = 0; i < 6; i++) {
    const r = await api('/v1/cluster-spread');
    assert.equal(r.status, 404);
    seen.add(r.headers.get('x-blockport-head'));
  }
  assert.deepEqual([...seen].sort(), ['head1', 'head2']);
});

test("a Free key's 10 rps (burst 30) holds across both heads together", async () => {
  const key = newKey();	// free: rps 10, burst 3 (docs/limits.md)
  const s = await spread(key, 400);
  assert.deepEqual(s.other, []);
  const total = s.admitted.reduce((a, b) => a + b, 0);
  // One shared bucket: 30 at once plus 10 a second; a bucket per head would admit 60 and more.
  assert.ok(total >= 30, `admitted ${total}`);
  assert.ok(total <= 30 + Math.ceil(10 * s.seconds) + 2,
    `admitted ${total} in ${s.seconds} s (per head: ${s.admitted})`);
  for (let h = 0; h < heads.length; h++) {
    assert.ok(s.admitted[h] > 0, `head${h + 1} admitted some (${s.admitted})`);
    assert.ok(s.refused[h] > 0, `head${h + 1} refused once the shared bucket was empty (${s.refused})`);
  }
  const r = await direct(heads[1], '/v1/cluster-spread', key);
  assert.equal(r.headers.get('x-ratelimit-limit'), '30');
});

test('a key revoked on one head is refused by the other within 2 s', async () => {
  const { key, id } = newKeyWithId({ plan: 'enterprise' });
  // The second head has the key in its cache (key_cache_seconds = 2 in the test config).
  assert.equal((await direct(heads[1], '/v1/cluster-revoke', key)).status, 404);
  assert.equal((await direct(heads[0], '/v1/cluster-revoke', key)).status, 404);
  admin('key', 'revoke', id);	// the CLI on the first head's config
  const t0 = Date.now();
  const r = await waitFor(async () => {
    const x = await direct(heads[1], '/v1/cluster-revoke', key);
    return x.status === 401 ? x : null;
  }, 'the other head to refuse the revoked key', 2000);
  const ms = Date.now() - t0;
  assert.equal(r.json.error.code, 'unauthorized');
  // The shared generation (Redis), not the cache's expiry, ends it: well under the cache's 2 s.
  assert.ok(ms < 1500, `refused after ${ms} ms`);
  assert.equal((await direct(heads[0], '/v1/cluster-revoke', key)).status, 401);
});

test('an unlimited key runs no admission script, and its revocation still crosses heads within 2 s', async () => {
  const { key, id } = newKeyWithId({ plan: 'enterprise' });
  const before = redisCalls('evalsha');
  for (const h of [1, 0, 1, 0]) assert.equal((await direct(heads[h], '/v1/cluster-unlimited', key)).status, 404);
  // Nothing here (nor HAProxy's checks, on an unlimited key) ran the script.
  assert.equal(redisCalls('evalsha') - before, 0);
  admin('key', 'revoke', id);
  // The generation comes from each head's own read of bp:gen, once every 100 ms (the 401s
  // below run the script: a request without a valid key is counted per client address).
  const t0 = Date.now();
  await waitFor(async () => (await direct(heads[1], '/v1/cluster-unlimited', key)).status === 401,
    'the other head to refuse the revoked key', 2000);
  const ms = Date.now() - t0;
  assert.ok(ms < 1500, `refused after ${ms} ms`);
});

test('a node one head found frozen is skipped by the other at once (upstream health in Redis)', async () => {
  const relay = Number(process.env.FROZEN_PID);
  assert.ok(relay > 0, 'FROZEN_PID is set by scripts/stack.sh');
  const key = newKey({ plan: 'enterprise' });
  // eth_blockNumber: never cached on this network, so each call goes to an upstream.
  const call = async (head) => {
    const t0 = Date.now();
    const res = await fetch(`${head}/v1/rpc/ethereum/frozen`, { method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) });
    return { ms: Date.now() - t0, json: await res.json() };
  };
  for (const h of heads) assert.match((await call(h)).json.result ?? '', /^0x/, 'both heads answer');
  process.kill(relay, 'SIGSTOP');
  try {
    // The first head waits out the frozen node's first byte (upstream_first_byte_ms 500),
    // answers from the devchain behind it, and marks the node down.
    const first = await call(heads[0]);
    assert.match(first.json.result ?? '', /^0x/, JSON.stringify(first.json));
    assert.ok(first.ms >= 400, `the first head waited ${first.ms} ms for the frozen node`);
    await sleep(150);	// past the 100 ms a head keeps its last read of Redis
    // The second head has never waited on it: it skips it at once, from the shared mark.
    const second = await call(heads[1]);
    assert.match(second.json.result ?? '', /^0x/, JSON.stringify(second.json));
    assert.ok(second.ms < 400, `the second head took ${second.ms} ms: it waited on the frozen node`);
  } finally {
    process.kill(relay, 'SIGCONT');
  }
});

// The calls of a Redis command so far (INFO commandstats): 'evalsha' is the admission script.
const redisCalls = (cmd) => execFileSync('redis-cli', ['-u', process.env.REDIS_URL, 'INFO', 'commandstats'])
  .toString().split('\n').filter((l) => l.startsWith(`cmdstat_${cmd}:`))
  .reduce((n, l) => n + Number(/calls=(\d+)/.exec(l)[1]), 0);

// count JSON-RPC requests sent one after the other with key to the first head: the admission
// scripts Redis ran meanwhile (HAProxy's health checks use an unlimited key: none).
async function scriptsFor(key, count) {
  const call = (id) => fetch(`${heads[0]}/v1/rpc/ethereum/devnet`, { method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] }) }).then((r) => r.json());
  assert.equal((await call(0)).result, '0x7a69');
  const before = redisCalls('evalsha');
  for (let i = 1; i <= count; i++) assert.equal((await call(i)).result, '0x7a69');
  return redisCalls('evalsha') - before;
}

test('a JSON-RPC request costs one admission script in Redis, not two', async () => {
  // Free (10 a second): counted alone, the admission and the method's compute units in one
  // script a request (25); two a request (the admission, then the charge) would be 50.
  const n = await scriptsFor(newKey(), 25);
  assert.ok(n >= 25 && n < 45, `${n} admission scripts for 25 requests`);
});

test('a busy key of 32 requests a second and more is counted a grant at a time', async () => {
  // Growth (100 a second): requests within 1/16 s of each other double the grant, up to 6.
  const n = await scriptsFor(newKey({ plan: 'growth' }), 40);
  assert.ok(n < 40, `${n} admission scripts for 40 requests`);
});

function redis(cmd) {
  execFileSync('bash', [`${top}scripts/redis.sh`, ...cmd], { stdio: ['ignore', 'pipe', 'pipe'] });
}

test('Redis stopped: keys counted per head, anonymous clients 429; back when Redis is', async () => {
  const dir = process.env.REDIS_DIR, url = new URL(process.env.REDIS_URL);
  const key = newKey();	// free
  redis(['stop', dir]);
  try {
    // The API stays up for keys, through HAProxy too (its keyed health checks still pass).
    const ok = await api('/v1/cluster-redis', { key: env.key });
    assert.equal(ok.status, 404);
    // Without a valid key: refused, whatever head (fail closed).
    for (const h of heads) {
      const r = await direct(h, '/v1/cluster-redis');
      assertError(assert, { ...r, text: JSON.stringify(r.json) }, 429, 'rate_limited');
      assert.match(r.json.error.message, /shared counters are unavailable/);
    }
    // Each head counts the key in its own file: each gives it its own bucket of 30.
    const s = await spread(key, 400);
    assert.deepEqual(s.other, []);
    for (let h = 0; h < heads.length; h++)
      assert.ok(s.admitted[h] >= 30, `head${h + 1} admitted ${s.admitted[h]} on its own count`);
  } finally {
    redis(['start', dir, url.port]);
  }
  // Redis back: the heads try it again after a second; anonymous clients get their 401 again.
  await waitFor(async () => (await direct(heads[0], '/v1/cluster-redis')).status === 401 &&
    (await direct(heads[1], '/v1/cluster-redis')).status === 401, 'Redis to be used again', 5000);
});

// Load through HAProxy: `loops` clients each sending the next request as soon as the last is
// answered, alternating a GET and a JSON-RPC POST. Counts what failed and what is in flight.
function load(key, loops) {
  const st = { inflight: 0, ok: 0, failed: [], stop: false, byHead: {} };
  const one = async (i) => {
    st.inflight++;
    try {
      const res = i % 2
        ? await fetch(`${env.base}/v1/cluster-load`, { headers: { 'X-API-Key': key } })
        : await fetch(`${env.base}/v1/rpc/ethereum/devnet`, {
          method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
          body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
      await res.arrayBuffer();
      const want = i % 2 ? 404 : 200;
      if (res.status === want) {
        st.ok++;
        const h = res.headers.get('x-blockport-head');
        st.byHead[h] = (st.byHead[h] ?? 0) + 1;
      } else {
        st.failed.push(res.status);
      }
    } catch (e) {
      st.failed.push(e.cause?.code ?? e.message);
    } finally {
      st.inflight--;
    }
  };
  st.done = Promise.all(Array.from({ length: loops }, async (_, l) => {
    for (let i = l; !st.stop; i++) await one(i);
  }));
  return st;
}

function killHead(h) {
  for (const g of pgids[h]) {
    try { process.kill(-g, 'SIGKILL'); } catch (e) { if (e.code !== 'ESRCH') throw e; }
  }
}

// ---- what the workers do across the kill (set up before it, checked after) ----

// The database's rows, read for what no API answers (block numbers, every evt_ id recorded):
// PostgreSQL on the cluster, the SQLite file of a single stack.
const psql = (sql) => execFileSync(...(process.env.PG_URL ? ['psql', [process.env.PG_URL, '-Atc', sql]]
  : ['sqlite3', [`${env.dir}/blockport.db`, sql]]), { encoding: 'utf8' }).trim();
const chainRpc = async (method, params = []) => {
  const res = await fetch(env.chain, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await res.json()).result;
};

// A webhook receiver over HTTPS: a self-signed certificate that is also the stack's ca_file.
const got = new Set();
let receiver;
function startReceiver() {
  const dir = mkdtempSync(join(tmpdir(), 'bp-cluster-wh-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
    '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '2', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-addext', 'basicConstraints=critical,CA:TRUE'],
  { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ca = `${env.dir}/webhook-ca.pem`;	// both heads' config names the first head's
  writeFileSync(`${ca}.tmp`, readFileSync(join(dir, 'c.pem')));
  renameSync(`${ca}.tmp`, ca);
  receiver = https.createServer({ key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')) },
    (req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        try { got.add(JSON.parse(Buffer.concat(chunks).toString()).id); } catch { /* counted as lost */ }
        res.writeHead(200).end('ok');
      });
    });
  return new Promise((r) => receiver.listen(0, '127.0.0.1', () => r(receiver.address().port)));
}

const provider = new JsonRpcProvider(env.chain, 31337, { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 1 });
const sender = Wallet.createRandom().connect(provider);
const watched = Wallet.createRandom().address;
async function transfers(n) {
  for (let i = 0; i < n; i++) await (await sender.sendTransaction({ to: watched, value: 1000n + BigInt(i) })).wait();
}

// UserOperations of fresh self-funded SimpleAccounts, sent through HAProxy with permissionless.
const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const ENTRY_POINT = getAddress(dc.entry_point);
const chain = { ...foundry, rpcUrls: { default: { http: [env.chain] } } };
const pub = createPublicClient({ chain, transport: http(env.chain) });
async function sendOp(key) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await toSimpleSmartAccount({ client: pub, owner,
    entryPoint: { address: ENTRY_POINT, version: '0.6' }, factoryAddress: getAddress(dc.account_factory) });
  await chainRpc('anvil_setBalance', [account.address, toHex(parseEther('1'))]);
  const client = createSmartAccountClient({ account, chain, client: pub,
    bundlerTransport: http(`${env.base}/v1/bundler/ethereum/devnet`, { fetchOptions: { headers: { 'X-API-Key': key } } }),
    userOperation: { estimateFeesPerGas: async () => {
      const b = await pub.getBlock();
      return { maxFeePerGas: b.baseFeePerGas * 2n + parseGwei('1'), maxPriorityFeePerGas: parseGwei('1') };
    } } });
  return { client, hash: await client.sendUserOperation({ calls: [{ to: owner.address, value: 0n }] }) };
}

const across = { ops: [] };	// what the kill test set up for the worker cases

test('kill -9 of a whole head under load: the other keeps answering, failures at most those in flight',
  async (t) => {
    const key = newKey({ plan: 'enterprise' });
    if (!noWorkers) {
      const port = await startReceiver();
      const w = await api('/v1/webhooks', { method: 'POST', key,
        body: { url: `https://127.0.0.1:${port}/hook`, chain: 'ethereum', event_type: 'address_activity',
          config: { addresses: [watched] } } });
      assert.equal(w.status, 201, w.text);
      across.webhook = w.json.id;
      await chainRpc('anvil_setBalance', [sender.address, toHex(parseEther('10'))]);
      across.firstBlock = Number(await chainRpc('eth_blockNumber'));
      await transfers(3);
      for (let i = 0; i < 3; i++) across.ops.push(await sendOp(key));
    }
    const st = load(key, 8);
    await sleep(1500);
    assert.equal(st.failed.length, 0, `before the kill: ${st.failed}`);
    assert.ok(Object.keys(st.byHead).length === 2, `both heads served: ${JSON.stringify(st.byHead)}`);
    const inflight = st.inflight;
    killHead(0);	// the first head: started first, it holds the workers' leases
    across.killedAt = Date.now();
    const okAtKill = st.ok;
    if (!noWorkers) {
      across.chainAtKill = Number(await chainRpc('eth_blockNumber'));
      await transfers(3);
      for (let i = 0; i < 3; i++) across.ops.push(await sendOp(key));
    }
    await sleep(3000);
    st.stop = true;
    await st.done;
    t.diagnostic(`kill -9 under load: ${inflight} in flight at the kill, ${st.failed.length} failed` +
      ` (${st.failed}), ${st.ok - okAtKill} answered after it`);
    assert.ok(st.failed.length <= inflight, `failed ${st.failed.length} > in flight ${inflight}: ${st.failed}`);
    assert.ok(st.ok - okAtKill > 10, `the other head kept answering (${st.ok - okAtKill})`);
    // Only the other head answers now.
    const r = await api('/v1/cluster-load', { key });
    assert.equal(r.status, 404);
    assert.equal(r.headers.get('x-blockport-head'), 'head2');
  });

test("the killed head's indexer resumes on the other within 10 s, the index contiguous", { skip: noWorkers },
  async () => {
    await chainRpc('anvil_mine', ['0x1']);
    const want = Number(await chainRpc('eth_blockNumber'));
    const max = () => Number(psql("SELECT max(number) FROM index_blocks WHERE chain LIKE '%devnet%'") || 0);
    await waitFor(() => max() >= want, `block ${want} indexed`, Math.max(1000, across.killedAt + 10000 - Date.now()));
    for (const row of psql('SELECT chain, min(number), max(number), count(*) FROM index_blocks GROUP BY chain').split('\n')) {
      const [c, lo, hi, n] = row.split('|');
      assert.equal(Number(n), Number(hi) - Number(lo) + 1, `${c}: ${n} blocks from ${lo} to ${hi}, a gap`);
    }
  });

test('no webhook event is lost across the kill: every evt_ id recorded arrives', { skip: noWorkers }, async () => {
  const ids = () => psql(`SELECT id FROM webhook_events WHERE webhook_id = '${across.webhook}'`).split('\n').filter(Boolean);
  // Six transfers to the watched address, three before the kill and three after: six events.
  await waitFor(() => ids().length >= 6, 'six events recorded', 20000);
  await waitFor(() => ids().every((id) => got.has(id)), 'every recorded event delivered', 30000);
  assert.equal(ids().length, 6);
  for (const id of ids()) assert.match(id, /^evt_[0-9a-f]{24}$/);
  receiver.close();
});

test('no UserOperation is bundled twice across the kill: each lands once', { skip: noWorkers }, async () => {
  const event = parseAbiItem('event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, ' +
    'address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)');
  for (const { client, hash } of across.ops) {
    const r = await client.waitForUserOperationReceipt({ hash, timeout: 30000 });
    assert.equal(r.success, true);
    const logs = await pub.getLogs({ address: ENTRY_POINT, event, args: { userOpHash: hash }, fromBlock: 0n });
    assert.equal(logs.length, 1, `${hash} landed ${logs.length} times`);
  }
  // And no bundle failed on the chain (a second submitter's copy would revert on the nonce).
  const bundler = getAddress(devAccount(7).address);
  const last = await pub.getBlockNumber();
  for (let n = BigInt(across.firstBlock); n <= last; n++) {
    const b = await pub.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of b.transactions.filter((t) => getAddress(t.from) === bundler))
      assert.equal((await pub.getTransactionReceipt({ hash: tx.hash })).status, 'success', `bundle ${tx.hash}`);
  }
});
