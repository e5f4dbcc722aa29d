// bench/webhooks.sh's driver: an HTTPS receiver (node:https, a certificate of a CA made with the
// openssl CLI, written to the stack's [webhooks] ca_file) that verifies every signature, then
//   1. throughput: N events queued straight into webhook_events, drained by `deliver --once`;
//      baseline: the same receiver, the same bodies, POSTed by node's own keep-alive client
//      with as many requests in flight as deliver's [webhooks] parallel, its sockets closed
//      after (left open, the 256 idle connections slowed the receiver for the next format's
//      run: whichever format ran second cost 20% more deliver CPU a delivery, B as A);
//   2. latency: with the stack's indexer and a deliver loop (both at 200 ms), M transfers sent
//      one at a time; from the moment the node answers the receipt (automine: the block is
//      mined) to the receiver's arrival. Baseline: the same wait for the receipt alone.
// Both formats (B: its sha256= signature, its envelope): the throughput of each on its own rows,
// A then B; the latency of both on the same blocks, a webhook of each watching the same address
// (run one after the other, the two formats' blocks fell at other phases of the indexer's and
// the worker's 200 ms loops, which set the latency, and their p50s differed by that alone).
// The rows queued are stamped now, as the matcher stamps them (stamped 0, they were 56 years
// old: the worker expires undelivered events past [webhooks] event_ttl_seconds).
// Prints one line per figure.
import https from 'node:https';
import { execFileSync, spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonRpcProvider } from 'ethers';
import { wallet, account } from '../devchain/dev.mjs';

const [, , N = '20000', M = '30', PARALLEL = '256'] = process.argv;
const env = process.env;
const build = env.BLOCKPORT_BUILD;
const db = `${env.STACK_DIR}/blockport.db`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function certs() {
  const dir = mkdtempSync(join(tmpdir(), 'bp-bench-wh-'));
  const o = (...a) => execFileSync('openssl', a, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  o('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=bench CA');
  o('req', ...ec, '-keyout', 'k.pem', '-out', 'r.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'x.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  o('x509', '-req', '-in', 'r.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'c.pem', '-days', '2', '-extfile', 'x.cnf');
  writeFileSync(`${env.STACK_DIR}/webhook-ca.pem.tmp`, readFileSync(join(dir, 'ca.pem')));
  renameSync(`${env.STACK_DIR}/webhook-ca.pem.tmp`, `${env.STACK_DIR}/webhook-ca.pem`);
  return { key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')), ca: readFileSync(join(dir, 'ca.pem')) };
}

const tls = certs();
const secrets = { A: '', B: '' };
let count = 0;
let bad = 0;
const waiters = new Map();	// format + tx hash ("A0x...") -> resolve
const server = https.createServer({ key: tls.key, cert: tls.cert, keepAliveTimeout: 60000 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const ts = req.headers['x-service-timestamp'];
    const sig = req.headers['x-service-signature'];
    if (sig !== undefined) {
      // Format B signs the body alone ("sha256=" + hex), format A "<timestamp>.<body>".
      const b = sig.startsWith('sha256=');
      const mac = createHmac('sha256', b ? secrets.B : secrets.A);
      const want = (b ? mac : mac.update(`${ts}.`)).update(raw).digest();
      const hex = b ? sig.slice(7) : sig;
      if (!/^[0-9a-f]{64}$/.test(hex) || !timingSafeEqual(want, Buffer.from(hex, 'hex'))) bad++;
      const h = /"(?:tx_hash|transactionHash)":"(0x[0-9a-f]{64})"/.exec(raw.toString())?.[1];
      const k = `${b ? 'B' : 'A'}${h}`;
      if (h && waiters.has(k)) waiters.get(k)(Date.now());
    }
    count++;
    res.writeHead(200).end();
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `https://127.0.0.1:${server.address().port}/hook`;

async function api(path, body, method = 'POST') {
  const r = await fetch(env.BASE_URL + path, { method, headers: { 'X-API-Key': env.BENCH_KEY, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
  const j = await r.json();
  if (r.status !== (method === 'POST' ? 201 : 200)) throw new Error(JSON.stringify(j));
  return j;
}

const target = account(70).address;
let agent;
const post = (b) => new Promise((resolve, reject) => {
  const r = https.request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => { res.resume(); res.on('end', resolve); });
  r.on('error', reject);
  r.end(b);
});
const provider = new JsonRpcProvider(env.CHAIN_URL, 31337, { staticNetwork: true, cacheTimeout: -1 });
const from = wallet(71, provider);
await provider.send('anvil_setBalance', [from.address, '0x56BC75E2D63100000']);
const p = (a, q) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(q * a.length))];

const hooks = {};
for (const fmt of ['A', 'B']) {
  hooks[fmt] = await api('/v1/webhooks', fmt === 'A' ?
    { url, chain: 'ethereum', event_type: 'address_activity', config: { addresses: [target] } } :
    { url, chain: 'ethereum', event_type: 'ADDRESS_ACTIVITY', filters: { addresses: [target] } });
  secrets[fmt] = hooks[fmt].signing_secret;
}

async function throughput(fmt) {
  const w = hooks[fmt];
  const now = Math.floor(Date.now() / 1000);
  const data = { chain: 'ethereum', block_number: 0, tx_hash: `0x${'00'.repeat(32)}`, from: target, to: target, value: '1', asset: 'ETH', contract: null, direction: 'incoming' };
  const body = (i) => JSON.stringify(fmt === 'A' ?
    { id: `evt_bench${fmt}${String(i).padStart(14, '0')}`, event_type: 'address_activity', webhook_id: w.id, created_at: '2026-01-01T00:00:00Z', data } :
    { id: `evt_bench${fmt}${String(i).padStart(14, '0')}`, type: 'ADDRESS_ACTIVITY', createdAt: '2026-01-01T00:00:00.000Z', chain: 'ethereum', chainId: 31337,
      data: { blockNumber: 0, transactionHash: data.tx_hash, logIndex: null, from: target, to: target, value: '1', asset: 'ETH', contract: null, direction: 'incoming' } });
  // ---- 1. throughput ----
  const sample = body(0).replace(/'/g, "''");
  const type = fmt === 'A' ? 'NULL' : "'ADDRESS_ACTIVITY'";
  if (env.PG_URL) {	// BENCH_ENGINE=pg (bench/lib.sh): the same rows in PostgreSQL
    execFileSync('psql', ['-qX', '-v', 'ON_ERROR_STOP=1', env.PG_URL, '-c', `INSERT INTO webhook_events (id, webhook_id, network, block_number, block_hash, source, body, state, next_at, created_at, event_type)
    SELECT 'evt_bench${fmt}' || lpad(i::text, 14, '0'), '${w.id}', 'ethereum.devnet', 0, '0x', 'bench:' || i, replace('${sample}', 'evt_bench${fmt}00000000000000', 'evt_bench${fmt}' || lpad(i::text, 14, '0')), 'pending', ${now}, ${now}, ${type} FROM generate_series(1, ${Number(N)}) AS i;`], { stdio: ['ignore', 'ignore', 'inherit'] });
  } else {
    execFileSync('sqlite3', [db, `PRAGMA busy_timeout=10000; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${Number(N)})
      INSERT INTO webhook_events (id, webhook_id, network, block_number, block_hash, source, body, state, next_at, created_at, event_type)
      SELECT printf('evt_bench${fmt}%014d', i), '${w.id}', 'ethereum.devnet', 0, '0x', 'bench:' || i, replace('${sample}', 'evt_bench${fmt}00000000000000', printf('evt_bench${fmt}%014d', i)), 'pending', ${now}, ${now}, ${type} FROM c;`]);
  }
  count = 0;
  let t0 = process.hrtime.bigint();
  // Not execFileSync: the receiver runs in this process's event loop.
  // /usr/bin/time gives the worker's own CPU time: its cost per delivery whatever the load.
  let cpu = '';
  await new Promise((resolve, reject) => {
    const c = spawn('/usr/bin/time', ['-f', '%U %S', `${build}/cron/deliver`, '--once', '--wait', '60'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    c.stderr.on('data', (d) => { cpu += d; });
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`deliver --once exited ${code}: ${cpu}`))));
  });
  const [ucpu, scpu] = cpu.trim().split('\n').pop().split(' ').map(Number);
  const usPer = Math.round(((ucpu + scpu) * 1e6) / Number(N));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const rate = Math.round(Number(N) / secs);
  if (count < Number(N) || bad > 0) throw new Error(`receiver got ${count} of ${N}, ${bad} bad signatures`);
  t0 = process.hrtime.bigint();
  agent = new https.Agent({ keepAlive: true, maxSockets: Number(PARALLEL), ca: tls.ca });
  let next = 0;
  await Promise.all(Array.from({ length: Number(PARALLEL) }, async () => { while (next < Number(N)) await post(body(next++)); }));
  const base = Math.round(Number(N) / (Number(process.hrtime.bigint() - t0) / 1e9));
  agent.destroy();
  console.log(`format ${fmt} throughput: deliver ${rate} signed deliveries/s (${N} in ${secs.toFixed(2)} s), node keep-alive client ${base}/s: ${(100 * rate / base).toFixed(1)}% (goal >= 2000/s)`);
  console.log(`format ${fmt} deliver's own CPU: ${usPer} us a delivery (user+sys), ${Math.round(1e6 / usPer)} deliveries/s per core`);

  return { rate, usPer };
}

// ---- 2. latency: mined block -> receiver, confirmations 0, both formats on the same blocks ----
async function latency() {
  const loop = spawn(`${build}/cron/deliver`, ['--loop', '--interval', '200'], { env, stdio: 'ignore', detached: true });
  const lat = { A: [], B: [] };
  const rcpt = [];
  for (let i = 0; i < Number(M); i++) {
    const s0 = Date.now();
    const tx = await from.sendTransaction({ to: target, value: 1n });
    const arrived = ['A', 'B'].map((f) => new Promise((r) => waiters.set(`${f}${tx.hash}`, r)));
    await tx.wait();
    const mined = Date.now();
    rcpt.push(mined - s0);
    const [ta, tb] = await Promise.all(arrived);
    lat.A.push(ta - mined);
    lat.B.push(tb - mined);
    await sleep(50 + Math.random() * 250);
  }
  loop.kill('SIGTERM');
  for (const f of ['A', 'B'])
    console.log(`format ${f} latency: mined -> receiver p50 ${p(lat[f], 0.5)} ms, p90 ${p(lat[f], 0.9)} ms, max ${Math.max(...lat[f])} ms over ${M} blocks, the same for both formats (goal p50 <= 1000 ms: ${(100 * p(lat[f], 0.5) / 1000).toFixed(1)}% of it); baseline send -> receipt p50 ${p(rcpt, 0.5)} ms`);
  const d = lat.B.map((x, i) => x - lat.A[i]);
  console.log(`format B - A on the same block: median ${p(d, 0.5)} ms, min ${Math.min(...d)} ms, max ${Math.max(...d)} ms`);
  return { A: p(lat.A, 0.5), B: p(lat.B, 0.5) };
}

const a = await throughput('A');
const b = await throughput('B');
const l = await latency();
for (const f of ['A', 'B']) await api(`/v1/webhooks/${hooks[f].id}`, undefined, 'DELETE');
console.log(`format B against A: ${(100 * b.rate / a.rate).toFixed(1)}% of A's deliveries/s, CPU ${b.usPer} us against ${a.usPer} us a delivery (${(100 * b.usPer / a.usPer).toFixed(1)}%), p50 ${l.B} ms against ${l.A} ms on the same blocks (${(100 * l.B / l.A).toFixed(1)}%; goal: within 10%)`);
if (bad > 0) throw new Error(`${bad} bad signatures`);
server.close();
server.closeAllConnections();
