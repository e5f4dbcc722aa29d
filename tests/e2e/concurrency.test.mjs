// Many requests at once to the programs that serve several requests per process
// (BLOCKPORT_THREADS, lib/core/fcgi.h): every answer is the right one for its request, with the
// caller's id, whatever the thread and connection that served it. make test also runs this
// file against the ThreadSanitizer build, where a data race fails the run.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { getAddress } from 'viem';
import { readFileSync, readdirSync } from 'node:fs';
import { api, env, newKey, waitFor } from './helpers.mjs';

let key;
before(() => { key = newKey({ plan: 'enterprise' }); });

const rpc = (body) => api('/v1/rpc/ethereum/devnet', { method: 'POST', key, body });

// Plays ethereum.lagging's node (LAG_PORT): answers every call with 0x1 after ms.
async function lagNode(ms) {
  const node = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => setTimeout(() => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(body).id, result: '0x1' }));
    }, ms));
  });
  await new Promise((r) => node.listen(Number(process.env.LAG_PORT), '127.0.0.1', r));
  return node;
}

const lagCall = (c) => api('/v1/rpc/ethereum/lagging', { method: 'POST', key,
  body: { jsonrpc: '2.0', id: c, method: 'eth_getBalance',
    params: [`0x${(c + 1).toString(16).padStart(40, '0')}`, 'latest'] } });

// First in the file, so the programs have only the processes they start with. Each program
// serves BLOCKPORT_PROCS x BLOCKPORT_THREADS (4 x 16) requests at once behind either server,
// all started up front. Behind Apache, mod_fcgid (before its pools) gave a process one request
// at a time, and a request that found none idle slept a whole second before a process was
// started for it: the slowest of these 32 took 2.3 s. The ThreadSanitizer build is too slow to time.
test('32 requests at once, node 100 ms away: none waits for a process (each within 1 s)',
  async () => {
    const node = await lagNode(100);
    try {
      const took = await Promise.all(Array.from({ length: 32 }, async (_, c) => {
        const t0 = Date.now();
        const res = await lagCall(c);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual([res.json.id, res.json.result], [c, '0x1']);
        return Date.now() - t0;
      }));
      const worst = Math.max(...took);
      if (!process.env.TSAN_OPTIONS) assert.ok(worst < 1000, `the slowest took ${worst} ms`);
    } finally {
      node.close();
    }
  });

test('200 JSON-RPC calls at once: each answered, with its own id', async () => {
  const calls = Array.from({ length: 200 }, (_, i) => i % 2
    ? { jsonrpc: '2.0', id: `c-${i}`, method: 'eth_chainId', params: [] }
    : { jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [`0x${(i + 1).toString(16).padStart(40, '0')}`, 'latest'] });
  const answers = await Promise.all(calls.map((c) => rpc(c)));
  const ids = new Set();
  answers.forEach((res, i) => {
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.id, calls[i].id);
    if (i % 2) assert.equal(res.json.result, '0x7a69');
    else assert.match(res.json.result, /^0x[0-9a-f]+$/);
    ids.add(res.headers.get('x-request-id'));
  });
  assert.equal(ids.size, calls.length, 'every request has its own X-Request-Id');
});

test('40 wallets created at once, then read at once: each its own', async () => {
  const owners = Array.from({ length: 40 }, () => getAddress(`0x${randomBytes(20).toString('hex')}`));
  const made = await Promise.all(owners.map((owner) => api('/v1/wallets/create', {
    method: 'POST', key, body: { owner, chain: 'ethereum' } })));
  made.forEach((res, i) => {
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.owner, owners[i]);
  });
  assert.equal(new Set(made.map((r) => r.json.address)).size, owners.length);
  const got = await Promise.all(made.map((m) => api(`/v1/wallets/${m.json.address}`, { key })));
  got.forEach((res, i) => {
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.address, made[i].json.address);
    assert.equal(res.json.owner, owners[i]);
  });
});

test('key checks, counting and errors from many threads: 60 bad keys at once get 401', async () => {
  const bad = await Promise.all(Array.from({ length: 60 }, (_, i) => api('/v1/rpc/ethereum/devnet', {
    method: 'POST', key: i % 2 ? 'nope' : `blockport_test_${'0'.repeat(40)}`,
    body: { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] } })));
  const statuses = new Set(bad.map((r) => r.status));
  // Each is refused: 401 for the key, or 429 once the anonymous per-address limit is reached.
  for (const s of statuses) assert.ok(s === 401 || s === 429, `status ${s}`);
  assert.ok(bad.some((r) => r.status === 401));
});

test('90 bundler calls at once (/v1/bundler): each answered, with its own id and result', async () => {
  const hash = (i) => `0x${i.toString(16).padStart(64, '0')}`;
  const calls = Array.from({ length: 90 }, (_, i) => [
    { jsonrpc: '2.0', id: `b-${i}`, method: 'eth_supportedEntryPoints', params: [] },
    { jsonrpc: '2.0', id: i, method: 'eth_getUserOperationByHash', params: [hash(i)] },
    { jsonrpc: '2.0', id: i, method: 'eth_sendUserOperation', params: [{ sender: `0x${'1'.repeat(39)}${i % 10}` }, '0x0'] },
  ][i % 3]);
  const answers = await Promise.all(calls.map((body) => api('/v1/bundler/ethereum/devnet', { method: 'POST', key, body })));
  answers.forEach((res, i) => {
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.id, calls[i].id);
    if (i % 3 === 0) assert.equal(res.json.result.length, 3, 'v0.6, v0.7, v0.8');
    else if (i % 3 === 1) assert.equal(res.json.result, null);
    else assert.equal(res.json.error.code, -32602, res.text);
  });
});

// More clients than a program has processes, each sending its next request as soon as the last
// is answered, to a node 400 ms away (ethereum.lagging's upstreams, LAG_PORT, which this test
// plays): no request may wait two seconds (wrk's and many clients' timeout, after which a client
// cannot tell whether its transaction was sent). Behind Apache, mod_fcgid gives a process one
// request at a time, and a request that finds none idle sleeps a second; while the program could
// not grow past BLOCKPORT_PROCS (4 here), such a request slept again and again.
test('16 clients in a loop for 3 s, node 400 ms away: every request answered within 2 s',
  async () => {
    const node = await lagNode(400);
    try {
      const until = Date.now() + 3000;
      let worst = 0;
      let answered = 0;
      const client = async (c) => {
        while (Date.now() < until) {
          const t0 = Date.now();
          const res = await lagCall(c);
          worst = Math.max(worst, Date.now() - t0);
          assert.equal(res.status, 200, res.text);
          assert.deepEqual([res.json.id, res.json.result], [c, '0x1']);
          answered++;
        }
      };
      await Promise.all(Array.from({ length: 16 }, (_, c) => client(c)));
      assert.ok(worst < 2000, `the slowest of ${answered} requests took ${worst} ms`);
    } finally {
      node.close();
    }
  });

// Behind Apache the programs run in pools kept by multiwatch (apache/fcgi-pool.sh), all of a
// program's processes on one socket: a process that dies, or is stopped alone, is started again,
// and the pool's other processes answer meanwhile (a process stopping must not shut the shared
// socket down). The process id is the first part of X-Request-Id; its parent is multiwatch.
for (const sig of ['SIGKILL', 'SIGTERM']) {
  test(`behind Apache, a program process sent ${sig}: the next requests answer, and it is back`,
    { skip: env.server !== 'apache' && 'the pools are Apache\'s' }, async () => {
      const ppid = (pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return Number(stat.replace(/^.*\) /s, '').split(' ')[1]);
        } catch {
          return 0;	// gone
        }
      };
      const pool = (parent) => readdirSync('/proc').filter((p) => /^\d+$/.test(p) &&
        ppid(p) === parent).map(Number);
      const pidOf = (res) => parseInt(res.headers.get('x-request-id').split('-')[0], 16);
      const victim = pidOf(await api('/v1/nope', { key }));
      const parent = ppid(victim);
      const before = pool(parent);
      assert.ok(before.length >= 2 && before.includes(victim), `pool ${before} of ${parent}`);
      process.kill(victim, sig);
      await waitFor(() => ppid(victim) !== parent, `process ${victim} gone`, 5000);
      const res = await Promise.all(Array.from({ length: 20 }, () => api('/v1/nope', { key })));
      for (const r of res) {
        assert.equal(r.status, 404, r.text);
        assert.equal(r.json.error.code, 'not_found');
        assert.notEqual(pidOf(r), victim);
      }
      const after = await waitFor(() => {
        const now = pool(parent);
        return now.length === before.length && now;
      }, `the pool of ${parent} back to ${before.length} processes`, 10000);
      assert.ok(!after.includes(victim));
      const again = await api('/v1/nope', { key });
      assert.equal(again.status, 404, again.text);
    });
}
