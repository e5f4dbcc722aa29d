// bench/webhooks.sh's driver: an HTTPS receiver (node:https, a certificate of a CA made with the
// openssl CLI, written to the stack's [webhooks] ca_file) that verifies every signature, then
//   1. throughput: N events queued straight into webhook_events, drained by `deliver --once`;
//      baseline: the same receiver, the same bodies, POSTed by node's own keep-alive client
//      with as many requests in flight as deliver's [webhooks] parallel;
//   2. latency: with the stack's indexer and a deliver loop (both at 200 ms), M transfers sent
//      one at a time; from the moment the node answers the receipt (automine: the block is
//      mined) to the receiver's arrival. Baseline: the same wait for the receipt alone.
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
let secret = '';
let count = 0;
let bad = 0;
const waiters = new Map();	// tx hash -> resolve
const server = https.createServer({ key: tls.key, cert: tls.cert, keepAliveTimeout: 60000 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const ts = req.headers['x-service-timestamp'];
    const sig = req.headers['x-service-signature'];
    if (sig !== undefined) {
      const want = createHmac('sha256', secret).update(`${ts}.`).update(raw).digest();
      if (!/^[0-9a-f]{64}$/.test(sig) || !timingSafeEqual(want, Buffer.from(sig, 'hex'))) bad++;
      const h = /"tx_hash":"(0x[0-9a-f]{64})"/.exec(raw.toString())?.[1];
      if (h && waiters.has(h)) waiters.get(h)(Date.now());
    }
    count++;
    res.writeHead(200).end();
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `https://127.0.0.1:${server.address().port}/hook`;

async function api(path, body) {
  const r = await fetch(env.BASE_URL + path, { method: 'POST', headers: { 'X-API-Key': env.BENCH_KEY, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const j = await r.json();
  if (r.status !== 201) throw new Error(JSON.stringify(j));
  return j;
}

// ---- 1. throughput ----
const target = account(70).address;
const w = await api('/v1/webhooks', { url, chain: 'ethereum', event_type: 'address_activity', config: { addresses: [target] } });
secret = w.signing_secret;
const body = (i) => JSON.stringify({ id: `evt_bench${String(i).padStart(15, '0')}`, event_type: 'address_activity', webhook_id: w.id,
  created_at: '2026-01-01T00:00:00Z', data: { chain: 'ethereum', block_number: 0, tx_hash: `0x${'00'.repeat(32)}`, from: target, to: target, value: '1', asset: 'ETH', contract: null, direction: 'incoming' } });
const sample = body(0).replace(/'/g, "''");
execFileSync('sqlite3', [db, `PRAGMA busy_timeout=10000; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${Number(N)})
  INSERT INTO webhook_events (id, webhook_id, network, block_number, block_hash, source, body, state, next_at, created_at)
  SELECT printf('evt_bench%015d', i), '${w.id}', 'ethereum.devnet', 0, '0x', 'bench:' || i, replace('${sample}', 'evt_bench000000000000000', printf('evt_bench%015d', i)), 'pending', 0, 0 FROM c;`]);
count = 0;
let t0 = process.hrtime.bigint();
// Not execFileSync: the receiver runs in this process's event loop.
// /usr/bin/time gives the worker's own CPU time: its cost per delivery whatever the load.
let cpu = '';
await new Promise((resolve, reject) => {
  const p = spawn('/usr/bin/time', ['-f', '%U %S', `${build}/cron/deliver`, '--once', '--wait', '60'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  p.stderr.on('data', (d) => { cpu += d; });
  p.on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`deliver --once exited ${c}: ${cpu}`))));
});
const [ucpu, scpu] = cpu.trim().split('\n').pop().split(' ').map(Number);
const usPer = Math.round(((ucpu + scpu) * 1e6) / Number(N));
let secs = Number(process.hrtime.bigint() - t0) / 1e9;
const rate = Math.round(Number(N) / secs);
if (count < Number(N) || bad > 0) throw new Error(`receiver got ${count} of ${N}, ${bad} bad signatures`);

const agent = new https.Agent({ keepAlive: true, maxSockets: Number(PARALLEL), ca: tls.ca });
const post = (b) => new Promise((resolve, reject) => {
  const r = https.request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => { res.resume(); res.on('end', resolve); });
  r.on('error', reject);
  r.end(b);
});
t0 = process.hrtime.bigint();
let next = 0;
await Promise.all(Array.from({ length: Number(PARALLEL) }, async () => { while (next < Number(N)) await post(body(next++)); }));
const base = Math.round(Number(N) / (Number(process.hrtime.bigint() - t0) / 1e9));
console.log(`throughput: deliver ${rate} signed deliveries/s (${N} in ${secs.toFixed(2)} s), node keep-alive client ${base}/s: ${(100 * rate / base).toFixed(1)}% (goal >= 2000/s)`);
console.log(`deliver's own CPU: ${usPer} us a delivery (user+sys), ${Math.round(1e6 / usPer)} deliveries/s per core`);

// ---- 2. latency: mined block -> receiver, confirmations 0 ----
const loop = spawn(`${build}/cron/deliver`, ['--loop', '--interval', '200'], { env, stdio: 'ignore', detached: true });
const provider = new JsonRpcProvider(env.CHAIN_URL, 31337, { staticNetwork: true, cacheTimeout: -1 });
const from = wallet(71, provider);
await provider.send('anvil_setBalance', [from.address, '0x56BC75E2D63100000']);
const lat = [];
const rcpt = [];
for (let i = 0; i < Number(M); i++) {
  const s0 = Date.now();
  const tx = await from.sendTransaction({ to: target, value: 1n });
  const arrived = new Promise((r) => waiters.set(tx.hash, r));
  await tx.wait();
  const mined = Date.now();
  rcpt.push(mined - s0);
  lat.push((await arrived) - mined);
  await sleep(50 + Math.random() * 250);
}
loop.kill('SIGTERM');
const p = (a, q) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(q * a.length))];
console.log(`latency: mined -> receiver p50 ${p(lat, 0.5)} ms, p90 ${p(lat, 0.9)} ms, max ${Math.max(...lat)} ms over ${M} blocks (goal p50 <= 1000 ms: ${(100 * p(lat, 0.5) / 1000).toFixed(1)}% of it); baseline send -> receipt p50 ${p(rcpt, 0.5)} ms`);
if (bad > 0) throw new Error(`${bad} bad signatures`);
server.close();
server.closeAllConnections();
agent.destroy();
