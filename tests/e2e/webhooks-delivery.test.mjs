// Webhook delivery end to end (SPEC.md section 6 format A, docs/webhooks.md): real devchain
// transactions sent with ethers, the stack's indexer matching them and cron/deliver POSTing to
// a real local HTTPS receiver (node:https, its certificate from a CA this file makes with the
// openssl CLI; the test config's [webhooks] ca_file is that CA). The receiver checks every
// signature itself (node:crypto HMAC, timingSafeEqual) and refuses timestamps 300 s off. Also:
// retries at the scheduled gaps (the test schedule is 1,1,1,1,1), the pause after the last retry
// with its e-mail at a local SMTP sink, the resume, and kill -9 of the worker while 100 events
// are delivered. Every delivery is also verified with the official `standardwebhooks` package
// (webhook-id, webhook-timestamp, webhook-signature), someone else's code reading our headers.
// Dev accounts 60-69 are this file's; the deployer (account 0) mints.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonRpcProvider, Transaction, Wallet, id as topicOf, zeroPadValue, getAddress } from 'ethers';
import { Webhook } from 'standardwebhooks';
import { wallet, account } from '../../devchain/dev.mjs';
import { makeCerts, tokens } from './webhook-kit.mjs';
import { admin, api, env, newKey, sleep, waitFor } from './helpers.mjs';

const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const provider = new JsonRpcProvider(env.chain, 31337, { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 1 });
const deployer = wallet(0, provider);
const A = getAddress(account(60).address);
const B = getAddress(account(61).address);
const C = getAddress(account(62).address);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const TRANSFER = topicOf('Transfer(address,address,uint256)');
const { erc20, erc721, erc1155 } = tokens(dc, deployer);

// ---- the receiver: HTTPS with a certificate of this file's CA ----

const secrets = new Map();	// webhook id -> signing secret
const got = new Map();		// path -> [{ at, ts, sig, body, json }]
const answer = new Map();	// path -> (n) => status, n the 1-based attempt at that path
const delayOf = new Map();	// path -> ms before answering
let rejected = [];		// requests that failed verification
let server;
let base;

// The receiver's check, as a user would write it (docs/webhooks.md): HMAC-SHA256 of
// "<timestamp>.<raw body>" keyed with the secret, compared in constant time; the timestamp
// within 300 s of now.
function verify(secret, ts, sig, raw) {
  if (!/^\d+$/.test(ts ?? '') || !/^[0-9a-f]{64}$/.test(sig ?? '')) return false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const want = createHmac('sha256', secret).update(`${ts}.`).update(raw).digest();
  return timingSafeEqual(want, Buffer.from(sig, 'hex'));
}

// Standard Webhooks, with the official library: the signature verifies, and webhook-id is the
// envelope's id (the same on every attempt of an event, so the library's users can dedupe).
function verifyStd(secret, headers, raw, json) {
  try {
    new Webhook(secret).verify(raw.toString('utf8'), headers);
  } catch {
    return false;
  }
  return headers['webhook-id'] === json?.id && headers['webhook-timestamp'] === headers['x-service-timestamp'];
}

function startReceiver(tls) {
  server = https.createServer(tls, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks);
      const ts = req.headers['x-service-timestamp'];
      const sig = req.headers['x-service-signature'];
      let json;
      try { json = JSON.parse(raw.toString('utf8')); } catch { json = undefined; }
      const secret = secrets.get(json?.webhook_id);
      if (req.method !== 'POST' || !secret || !verify(secret, ts, sig, raw) || !verifyStd(secret, req.headers, raw, json) ||
          req.headers['content-type'] !== 'application/json' || !/Blockport/.test(req.headers['user-agent'] ?? '')) {
        rejected.push({ path: req.url, ts, sig, ua: req.headers['user-agent'] });
        res.writeHead(401).end();
        return;
      }
      const list = got.get(req.url) ?? [];
      list.push({ at: Date.now(), ts: Number(ts), sig, body: raw.toString('utf8'), json, headers: req.headers });
      got.set(req.url, list);
      const d = delayOf.get(req.url);
      if (d) await sleep(d());
      const status = (answer.get(req.url) ?? (() => 200))(list.length);
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

// ---- the SMTP sink: just enough of RFC 5321 for libcurl ----

const mails = [];
let sink;
function startSink(port) {
  sink = net.createServer((sock) => {
    let buf = '';
    let data = false;
    let mail = { rcpt: [], text: '' };
    sock.write('220 sink ESMTP\r\n');
    sock.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      for (;;) {
        if (data) {
          const end = buf.indexOf('\r\n.\r\n');
          if (end < 0) return;
          mail.text = buf.slice(0, end);
          buf = buf.slice(end + 5);
          data = false;
          mails.push(mail);
          mail = { rcpt: [], text: '' };
          sock.write('250 OK queued\r\n');
          continue;
        }
        const nl = buf.indexOf('\r\n');
        if (nl < 0) return;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === 'EHLO' || cmd === 'HELO') sock.write('250 sink\r\n');
        else if (cmd === 'MAIL') { mail.from = line; sock.write('250 OK\r\n'); }
        else if (cmd === 'RCPT') { mail.rcpt.push(line); sock.write('250 OK\r\n'); }
        else if (cmd === 'DATA') { data = true; sock.write('354 go ahead\r\n'); }
        else if (cmd === 'QUIT') { sock.end('221 bye\r\n'); return; }
        else sock.write('250 OK\r\n');
      }
    });
    sock.on('error', () => {});
  });
  return new Promise((resolve) => sink.listen(port, '127.0.0.1', resolve));
}

// ---- helpers ----

let key;
let n = 0;
before(async () => {
  const port = await startReceiver(makeCerts());
  base = `https://127.0.0.1:${port}`;
  await startSink(Number(process.env.SMTP_PORT));
  key = newKey({ plan: 'enterprise' });
  for (let i = 60; i < 70; i++)
    await provider.send('anvil_setBalance', [account(i).address, '0x56BC75E2D63100000']);
});
let lastWorker;	// the worker the kill test leaves running; stopped here, so none outlives the file
after(async () => {
  if (lastWorker && lastWorker.exitCode === null) {
    lastWorker.kill('SIGTERM');
    await exited(lastWorker);
  }
  if (lastWorker) {
    // The stack gets a worker back, as scripts/stack.sh starts it (its pid in deliver.pid, which
    // `stack.sh stop` ends): the files after this one deliver too (webhooks-format-b.test.mjs).
    const w = spawn(`${env.build}/cron/deliver`, ['--loop', '--interval', '200'], {
      env: { ...process.env, BLOCKPORT_CONFIG: env.config, BLOCKPORT_STACK: env.dir },
      stdio: 'ignore', detached: true,
    });
    w.unref();
    writeFileSync(`${env.dir}/deliver.pid`, `${w.pid}\n`);
  }
  server?.close();
  server?.closeAllConnections?.();
  sink?.close();
});

// A webhook posting to a path of its own; returns { id, path }.
async function hook(event_type, config, k = key) {
  const path = `/h/${++n}`;
  const res = await api('/v1/webhooks', { method: 'POST', key: k,
    body: { url: base + path, chain: 'ethereum', event_type, config } });
  assert.equal(res.status, 201, res.text);
  secrets.set(res.json.id, res.json.signing_secret);
  return { id: res.json.id, path };
}
const arrived = (path, count, what = path, ms = 20000) =>
  waitFor(() => ((got.get(path)?.length ?? 0) >= count ? got.get(path) : null), `${count} deliveries at ${what}`, ms);
const mined = async (p) => (await p).wait();
// Writes the stack's database as time or an older release would have (SQLite's file, or the
// cluster's PostgreSQL).
function sql(q) {
  if (process.env.PG_URL) execFileSync('psql', [process.env.PG_URL, '-Atc', q]);
  else execFileSync('sqlite3', ['-cmd', '.timeout 5000', join(env.dir, 'blockport.db'), q]);
}
const lc = (a) => a.toLowerCase();

function assertEnvelope(d, w, type) {
  assert.deepEqual(Object.keys(d.json), ['id', 'event_type', 'webhook_id', 'created_at', 'data']);
  assert.match(d.json.id, /^evt_[0-9a-f]{24}$/);
  assert.equal(d.json.event_type, type);
  assert.equal(d.json.webhook_id, w.id);
  assert.match(d.json.created_at, ISO);
  assert.ok(Math.abs(d.ts - Date.now() / 1000) < 30, 'the timestamp is the attempt\'s');
}

// ---- the five event types ----

test('address_activity: a transfer between two watched addresses gives one event per direction', async () => {
  const w = await hook('address_activity', { addresses: [A, B] });
  const r = await mined(wallet(60, provider).sendTransaction({ to: B, value: 123456789n }));
  const list = await arrived(w.path, 2);
  await sleep(500);
  assert.equal(got.get(w.path).length, 2);
  const byDir = Object.fromEntries(list.map((d) => [d.json.data.direction, d]));
  for (const dir of ['outgoing', 'incoming']) {
    const d = byDir[dir];
    assertEnvelope(d, w, 'address_activity');
    assert.deepEqual(d.json.data, { chain: 'ethereum', block_number: r.blockNumber, tx_hash: r.hash,
      from: A, to: B, value: '123456789', asset: 'ETH', contract: null, direction: dir });
  }
  assert.notEqual(byDir.outgoing.json.id, byDir.incoming.json.id);
});

test('token_transfer: an ERC-20 mint, with symbol and decimals', async () => {
  const w = await hook('token_transfer', { addresses: [C] });
  const r = await mined(erc20.mint(C, 5n * 10n ** 18n));
  const [d] = await arrived(w.path, 1);
  assertEnvelope(d, w, 'token_transfer');
  assert.deepEqual(d.json.data, { chain: 'ethereum', block_number: r.blockNumber, tx_hash: r.hash,
    contract: getAddress(dc.tokens.erc20_18), from: '0x0000000000000000000000000000000000000000', to: C,
    value: '5000000000000000000', symbol: 'BPT', decimals: 18 });
});

test('nft_transfer: ERC-721, and one event per id of an ERC-1155 TransferBatch', async () => {
  const w = await hook('nft_transfer', { addresses: [B] });
  const r1 = await mined(erc721.mint(B));
  const tokenId = erc721.interface.parseLog(r1.logs[0]).args.tokenId;
  const r2 = await mined(erc1155.mintBatch(B, [901n, 902n], [7n, 9n], '0x'));
  const list = await arrived(w.path, 3);
  const data = list.map((d) => d.json.data).sort((x, y) => x.block_number - y.block_number || x.token_id.localeCompare(y.token_id));
  const zero = '0x0000000000000000000000000000000000000000';
  assert.deepEqual(data, [
    { chain: 'ethereum', block_number: r1.blockNumber, tx_hash: r1.hash, contract: getAddress(dc.tokens.erc721),
      from: zero, to: B, token_id: tokenId.toString(), standard: 'ERC721', quantity: 1 },
    { chain: 'ethereum', block_number: r2.blockNumber, tx_hash: r2.hash, contract: getAddress(dc.tokens.erc1155),
      from: zero, to: B, token_id: '901', standard: 'ERC1155', quantity: 7 },
    { chain: 'ethereum', block_number: r2.blockNumber, tx_hash: r2.hash, contract: getAddress(dc.tokens.erc1155),
      from: zero, to: B, token_id: '902', standard: 'ERC1155', quantity: 9 },
  ]);
  for (const d of list) assertEnvelope(d, w, 'nft_transfer');
});

test('mined_transaction: a hash watched before it was sent', async () => {
  const wl = wallet(62, provider);
  const req = await wl.populateTransaction({ to: A, value: 1n });
  const signed = await wl.signTransaction(req);
  const hash = Transaction.from(signed).hash;
  const w = await hook('mined_transaction', { tx_hashes: [hash] });
  await provider.send('eth_sendRawTransaction', [signed]);
  // Polled with a bound (ethers' waitForTransaction was seen to hang on a loaded machine).
  const r = await waitFor(() => provider.getTransactionReceipt(hash), `the receipt of ${hash}`, 30000);
  const [d] = await arrived(w.path, 1);
  assertEnvelope(d, w, 'mined_transaction');
  assert.deepEqual(d.json.data, { chain: 'ethereum', block_number: r.blockNumber, tx_hash: hash,
    block_hash: r.blockHash, transaction_index: r.index, from: getAddress(wl.address), to: A, value: '1',
    status: 'success', gas_used: Number(r.gasUsed), effective_gas_price: r.gasPrice.toString() });
});

test('log: a Transfer log filtered by address and topics, as eth_getLogs returns it', async () => {
  const w = await hook('log', { address: dc.tokens.erc20_18, topics: [TRANSFER, null, zeroPadValue(A, 32)] });
  const r = await mined(erc20.mint(A, 77n));
  const [d] = await arrived(w.path, 1);
  assertEnvelope(d, w, 'log');
  const [log] = await provider.send('eth_getLogs', [{ blockHash: r.blockHash, address: dc.tokens.erc20_18 }]);
  assert.deepEqual(d.json.data, { chain: 'ethereum', block_number: r.blockNumber, tx_hash: r.hash,
    log_index: Number(log.logIndex), address: lc(dc.tokens.erc20_18), topics: log.topics, data: log.data,
    blockNumber: log.blockNumber, blockHash: log.blockHash, transactionHash: log.transactionHash,
    logIndex: log.logIndex, removed: false, transactionIndex: log.transactionIndex });
});

test('the receiver verifies every signature itself and refuses a timestamp 300 s off', async () => {
  assert.deepEqual(rejected, [], 'every delivery so far verified');
  const w = await hook('address_activity', { addresses: [account(63).address] });
  await mined(wallet(63, provider).sendTransaction({ to: A, value: 1n }));
  const [d] = await arrived(w.path, 1);
  const secret = secrets.get(w.id);
  assert.ok(verify(secret, String(d.ts), d.sig, Buffer.from(d.body)));
  assert.ok(!verify(secret, String(d.ts + 1), d.sig, Buffer.from(d.body)), 'the timestamp is signed');
  assert.ok(!verify(`${secret}x`, String(d.ts), d.sig, Buffer.from(d.body)));
  // A replay 301 s old, correctly signed, is refused by the receiver over the wire.
  const old = d.ts - 301;
  const sig = createHmac('sha256', secret).update(`${old}.${d.body}`).digest('hex');
  const status = await new Promise((resolve, reject) => {
    const req = https.request(`${base}${w.path}`, { method: 'POST', ca: readFileSync(`${env.dir}/webhook-ca.pem`),
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'Blockport replay', 'X-Service-Timestamp': String(old), 'X-Service-Signature': sig } },
    (res) => { res.resume(); resolve(res.statusCode); });
    req.on('error', reject);
    req.end(d.body);
  });
  assert.equal(status, 401);
  rejected = [];
});

test('Standard Webhooks: new secrets are whsec_ + base64; a secret made before (hex) verifies with both schemes', async () => {
  const w = await hook('address_activity', { addresses: [account(65).address] });
  assert.match(secrets.get(w.id), /^whsec_[A-Za-z0-9+/]{43}=$/);
  // A webhook created before this change: its secret is whsec_ + 64 hex digits, as then.
  const legacy = `whsec_${'0123456789abcdef'.repeat(4)}`;
  // Written in the database as then.
  sql(`UPDATE webhooks SET secret = '${legacy}' WHERE id = '${w.id}'`);
  secrets.set(w.id, legacy);
  await mined(wallet(65, provider).sendTransaction({ to: A, value: 1n }));
  const [d] = await arrived(w.path, 1);
  assert.deepEqual(rejected, []);
  // SPEC.md's scheme keyed with the text as given, and Standard Webhooks' with its base64 read
  // (64 hex digits are base64 too: 48 bytes), which the official library does the same way.
  assert.ok(verify(legacy, String(d.ts), d.sig, Buffer.from(d.body)));
  assert.doesNotThrow(() => new Webhook(legacy).verify(d.body, d.headers));
  assert.equal(d.headers['webhook-id'], d.json.id);
  assert.match(d.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
  assert.throws(() => new Webhook(`whsec_${Buffer.from('another key').toString('base64')}`).verify(d.body, d.headers));
});

// The CLI, without blocking this process (the receiver runs in it).
const adminAsync = async (...args) => (await promisify(execFile)(`${env.build}/blockport`, args, {
  env: { ...process.env, BLOCKPORT_CONFIG: env.config }, encoding: 'utf8' })).stdout.trim();

test('blockport webhook test ID sends a signed test event now and prints the answer', async () => {
  const w = await hook('token_transfer', { contracts: [dc.tokens.erc20_6] });
  const out = await adminAsync('webhook', 'test', w.id);
  const [d] = await arrived(w.path, 1);
  assertEnvelope(d, w, 'token_transfer');
  assert.deepEqual(d.json.data, { test: true, chain: 'ethereum' });
  assert.match(out, new RegExp(`^${d.json.id} ${base}${w.path} -> HTTP 200 in \\d+ ms$`));
  assert.match(admin('webhook', 'deliveries', w.id), new RegExp(`${d.json.id}\\s+1\\s+200`));
  answer.set(w.path, () => 418);
  await assert.rejects(adminAsync('webhook', 'test', w.id), (e) => e.code === 1 && /-> HTTP 418 /.test(e.stdout));
  await assert.rejects(adminAsync('webhook', 'test', 'wh_000000000000000000000000'),
    (e) => e.code === 1 && /no webhook/.test(e.stderr));
});

// ---- retries, pause, resume ----

test('3 failures then 200: exactly 4 attempts, one evt_ id, at the scheduled 1 s gaps', async () => {
  const w = await hook('address_activity', { addresses: [account(64).address] });
  answer.set(w.path, (k) => (k <= 3 ? 500 : 200));
  await mined(wallet(64, provider).sendTransaction({ to: A, value: 1n }));
  const list = await arrived(w.path, 4);
  await sleep(3000);
  assert.equal(got.get(w.path).length, 4, 'no attempt after the 200');
  assert.equal(new Set(list.map((d) => d.json.id)).size, 1);
  assert.equal(new Set(list.map((d) => d.body)).size, 1, 'the same bytes each time');
  for (let i = 1; i < 4; i++) {
    const gap = list[i].at - list[i - 1].at;
    assert.ok(gap >= 950 && gap < 3500, `gap ${i}: ${gap} ms`);
  }
  const log = admin('webhook', 'deliveries', w.id);
  assert.match(log, new RegExp(`${list[0].json.id}\\s+4\\s+200`));
  assert.match(log, new RegExp(`${list[0].json.id}\\s+1\\s+500`));
});

test('5 failed retries pause the webhook, the owner gets an e-mail, PATCH active resumes', async () => {
  const w = await hook('address_activity', { addresses: [account(65).address] });
  let up = false;
  answer.set(w.path, () => (up ? 200 : 503));
  await mined(wallet(65, provider).sendTransaction({ to: A, value: 1n }));
  const first = (await arrived(w.path, 6, 'six attempts', 30000))[0].json.id;
  const paused = await waitFor(async () => {
    const r = await api(`/v1/webhooks/${w.id}`, { key });
    return r.json.status === 'paused' ? r : null;
  }, 'the pause');
  assert.equal(paused.json.status, 'paused');
  const mail = await waitFor(() => mails.find((m) => m.text.includes(w.id)), 'the e-mail');
  assert.match(mail.text, new RegExp(`^Subject: .*${w.id}`, 'm'));
  assert.ok(mail.text.includes(`${base}${w.path}`), 'the body names the url');
  assert.match(mail.rcpt[0], /@example\.test>/);
  // Held while paused: a new event is recorded but not sent.
  await mined(wallet(65, provider).sendTransaction({ to: A, value: 2n }));
  await sleep(2500);
  assert.equal(got.get(w.path).length, 6);
  up = true;
  const res = await api(`/v1/webhooks/${w.id}`, { method: 'PATCH', key, body: { status: 'active' } });
  assert.equal(res.json.status, 'active');
  const list = await arrived(w.path, 8);
  const ids = new Set(list.slice(6).map((d) => d.json.id));
  assert.equal(ids.size, 2);
  assert.ok(ids.has(first), 'the event that paused it is delivered on resume');
});

test('a redirect is a failure, never followed; an untrusted certificate is a TLS failure', async () => {
  const w = await hook('address_activity', { addresses: [account(68).address] });
  const target = `/h/redirect-target-${n}`;
  answer.set(w.path, (k) => (k === 1 ? 302 : 200));
  await mined(wallet(68, provider).sendTransaction({ to: A, value: 1n }));
  const list = await arrived(w.path, 2);
  assert.equal(list[0].json.id, list[1].json.id);
  assert.equal(got.get(target), undefined);
  assert.match(admin('webhook', 'deliveries', w.id), /1\s+302/);
  // A receiver whose certificate no trusted CA signed: every attempt fails in TLS.
  const self = mkdtempSync(join(tmpdir(), 'bp-wh-self-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', join(self, 'k.pem'), '-out', join(self, 'c.pem'), '-days', '2', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  let hits = 0;
  const rogue = https.createServer({ key: readFileSync(join(self, 'k.pem')), cert: readFileSync(join(self, 'c.pem')) },
    (req, res) => { hits++; res.writeHead(200).end(); });
  await new Promise((r) => rogue.listen(0, '127.0.0.1', r));
  try {
    const res = await api('/v1/webhooks', { method: 'POST', key, body: { url: `https://127.0.0.1:${rogue.address().port}/x`,
      chain: 'ethereum', event_type: 'address_activity', config: { addresses: [account(69).address] } } });
    assert.equal(res.status, 201);
    await mined(wallet(69, provider).sendTransaction({ to: A, value: 1n }));
    const log = await waitFor(() => {
      const l = admin('webhook', 'deliveries', res.json.id);
      return /error: .*(SSL|certificate|TLS)/i.test(l) ? l : null;
    }, 'a TLS failure in the delivery log');
    assert.match(log, /evt_[0-9a-f]{24}\s+1\s+error:/);
    assert.equal(hits, 0, 'no request reached the untrusted receiver');
  } finally {
    rogue.close();
    rogue.closeAllConnections();
  }
});

test('a slow receiver holds only its own slot: other events go out meanwhile', async () => {
  const [xa, xb] = [Wallet.createRandom().address, Wallet.createRandom().address];
  const slow = await hook('address_activity', { addresses: [xa] });
  const fast = await hook('address_activity', { addresses: [xb] });
  delayOf.set(slow.path, () => 2500);
  await mined(wallet(60, provider).sendTransaction({ to: xa, value: 1n }));
  const [a] = await arrived(slow.path, 1);
  await mined(wallet(61, provider).sendTransaction({ to: xb, value: 1n }));
  const [b] = await arrived(fast.path, 1);
  assert.ok(b.at < a.at + 2500, `the fast receiver got its event ${b.at - a.at} ms after the slow one was asked`);
});

test('DELETE drops pending deliveries', async () => {
  const w = await hook('address_activity', { addresses: [account(66).address] });
  answer.set(w.path, () => 500);
  await mined(wallet(66, provider).sendTransaction({ to: A, value: 1n }));
  await arrived(w.path, 1);
  assert.equal((await api(`/v1/webhooks/${w.id}`, { method: 'DELETE', key })).status, 200);
  const before = got.get(w.path).length;
  await sleep(2500);
  assert.equal(got.get(w.path).length, before);
});

test('a replayed event recorded before event_ttl_seconds is sent, not expired by the next pass', async () => {
  const w = await hook('address_activity', { addresses: [account(66).address] });
  await mined(wallet(66, provider).sendTransaction({ to: A, value: 3n }));
  const [d] = await arrived(w.path, 1);
  // Recorded 4 days ago: past the 3 days of event_ttl_seconds, within the 7 of retention.
  sql(`UPDATE webhook_events SET created_at = created_at - 345600 WHERE id = '${d.json.id}'`);
  // Paused, the replayed event waits; a worker's first pass prunes and expires, as this one.
  assert.equal((await api(`/v1/webhooks/${w.id}`, { method: 'PATCH', key, body: { status: 'paused' } })).status, 200);
  const r = await waitFor(async () => {
    const x = await api(`/v1/webhooks/${w.id}/replay`, { method: 'POST', key, body: { event_ids: [d.json.id] } });
    return x.json?.replayed === 1 ? x : null;
  }, 'the event delivered, then replayed');
  assert.deepEqual(r.json, { id: w.id, replayed: 1 });
  await promisify(execFile)(`${env.build}/cron/deliver`, ['--once'], {
    env: { ...process.env, BLOCKPORT_CONFIG: env.config, BLOCKPORT_STACK: env.dir } });
  assert.equal((await api(`/v1/webhooks/${w.id}`, { method: 'PATCH', key, body: { status: 'active' } })).status, 200);
  const again = await arrived(w.path, 2, 'the replayed event');
  assert.equal(again[1].json.id, d.json.id);
  assert.equal(again[1].body, d.body, 'the same bytes');
});

// ---- the tenant fences ----

test('an account past its day with a backlog of 600 never delays another account\'s event', { timeout: 120000 }, async () => {
  const capped = newKey({ plan: 'whcap' });	// 5 deliveries a day
  const E = Wallet.createRandom().address;
  const c = await hook('nft_transfer', { addresses: [E] }, capped);
  for (const from of [7000n, 7300n]) {
    const ids = Array.from({ length: 300 }, (_, i) => from + BigInt(i));
    await mined(erc1155.mintBatch(E, ids, ids.map(() => 1n), '0x'));
  }
  await arrived(c.path, 5, 'the capped account\'s day of deliveries');
  // Another account's events, each on its own webhook: delivered within seconds, every time.
  for (let k = 0; k < 3; k++) {
    const X = Wallet.createRandom().address;
    const o = await hook('address_activity', { addresses: [X] });
    const r = await mined(wallet(60, provider).sendTransaction({ to: X, value: 1n }));
    const t0 = Date.now();
    await arrived(o.path, 1, `the other account's event ${k} (block ${r.blockNumber})`, 10000);
    assert.ok(Date.now() - t0 < 5000, `delivered ${Date.now() - t0} ms after it was mined`);
  }
  assert.equal(got.get(c.path).length, 5, 'the capped account still waits for its next day');
});

test('a plan bounds the events a day and a webhook\'s backlog; what is dropped is counted', async () => {
  const fenced = newKey({ plan: 'whfence' });	// 5 events a day, a backlog of 3
  const [F1, F2] = [Wallet.createRandom().address, Wallet.createRandom().address];
  const p = await hook('nft_transfer', { addresses: [F1] }, fenced);
  const q = await hook('nft_transfer', { addresses: [F2] }, fenced);
  const paused = await api(`/v1/webhooks/${p.id}`, { method: 'PATCH', key: fenced, body: { status: 'paused' } });
  assert.equal(paused.json.status, 'paused');
  const batch = (to, from) => mined(erc1155.mintBatch(to, [from, from + 1n, from + 2n, from + 3n], [1n, 1n, 1n, 1n], '0x'));
  await batch(F1, 8000n);	// the paused webhook holds 3, the 4th is dropped
  await waitFor(() => /recorded 3 .*dropped 1 \(backlog\)/.test(admin('webhook', 'deliveries', p.id)), 'the backlog drop counted');
  await batch(F2, 8100n);	// 3 of the day's 5 are spent: 2 recorded, 2 dropped
  await arrived(q.path, 2);
  await waitFor(() => /recorded 2 {2}dropped 2 \(day's events\)/.test(admin('webhook', 'deliveries', q.id)), 'the day drop counted');
  await sleep(1000);
  assert.equal(got.get(q.path).length, 2);
  const res = await api(`/v1/webhooks/${p.id}`, { method: 'PATCH', key: fenced, body: { status: 'active' } });
  assert.equal(res.json.status, 'active');
  const held = await arrived(p.path, 3);
  assert.deepEqual(held.map((d) => d.json.data.token_id).sort(), ['8000', '8001', '8002']);
});

// ---- crash safety ----

function startWorker() {
  return spawn(`${env.build}/cron/deliver`, ['--loop', '--interval', '50'], {
    env: { ...process.env, BLOCKPORT_CONFIG: env.config, BLOCKPORT_STACK: env.dir },
    stdio: 'ignore', detached: true,
  });
}
const exited = (p) => new Promise((resolve) => (p.exitCode !== null || p.signalCode !== null ? resolve() : p.once('exit', resolve)));

test('kill -9 of the worker at random points in 100 events x 10 kills loses none', { timeout: 120000 }, async () => {
  // The stack's own worker steps aside; this test runs and kills its own.
  const pid = Number(readFileSync(`${env.dir}/deliver.pid`, 'utf8'));
  try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
  const D = account(67).address;
  const w = await hook('nft_transfer', { addresses: [D] });
  delayOf.set(w.path, () => Math.floor(Math.random() * 300));
  const ids = Array.from({ length: 100 }, (_, i) => 5000n + BigInt(i));
  await mined(erc1155.mintBatch(D, ids, ids.map(() => 1n), '0x'));
  for (let k = 0; k < 10; k++) {
    const p = startWorker();
    await sleep(100 + Math.floor(Math.random() * 400));
    p.kill('SIGKILL');
    await exited(p);
  }
  const last = startWorker();
  lastWorker = last;
  writeFileSync(`${env.dir}/deliver.pid`, `${last.pid}\n`);
  const list = await waitFor(() => {
    const l = got.get(w.path) ?? [];
    return new Set(l.map((d) => d.json.id)).size >= 100 ? l : null;
  }, '100 distinct events', 60000);
  const byId = new Map();
  for (const d of list) {
    if (byId.has(d.json.id)) assert.equal(byId.get(d.json.id), d.body, 'a duplicate is the same event');
    byId.set(d.json.id, d.body);
  }
  assert.equal(byId.size, 100);
  const tokenIds = new Set([...byId.values()].map((b) => JSON.parse(b).data.token_id));
  assert.equal(tokenIds.size, 100, 'one event per id of the batch, none lost');
  assert.deepEqual(rejected, []);
});
