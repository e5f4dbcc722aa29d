// THIS IS A STUB, NOT SOLANA. The Solana devnet of make run and the tests is devchain/solana.mjs
// (LiteSVM, real transactions); this scripted server stays only for what that devnet cannot
// play: the misbehaving upstreams of the failover tests (below), a 40 MiB answer for the
// response-size cap, and the last body forwarded (GET /last) for the batch-renumbering test. It
// is the upstream of solana.stub, solana.flaky and solana.down (scripts/stack.sh --test) and
// answers a handful of methods with fixed, plausible shapes (getSlot, getBalance,
// getLatestBlockhash, getAccountInfo, getProgramAccounts, sendTransaction, requestAirdrop):
// nothing it says is real chain state.
//
// It also plays the misbehaving upstreams of the failover tests, by path:
//   POST /                 JSON-RPC (single or batch), as above
//   POST /status/503       HTTP 503 with a plain-text body (must fail over)
//   POST /status/429       HTTP 429 with a plain-text body (must fail over)
//   POST /rpc-error-500    HTTP 500 with a JSON-RPC error body (must be passed through)
//   GET  /last             the last body POSTed to /, for tests that check what was forwarded
//   GET  /count            how many POSTs / has had
// getProgramAccounts of the program BigProgram11111111111111111111111111111111 answers a
// chunked 40 MiB result, for the response-size cap.
//
//   node tests/e2e/solana-stub.mjs PORT
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

const port = Number(process.argv[2] || process.env.PORT || 0);
const BIG_PROGRAM = 'BigProgram11111111111111111111111111111111';
const SYSTEM = '11111111111111111111111111111111';
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

let slot = 1000;
let last = '';
let count = 0;

function base58(buf) {
  let n = BigInt('0x' + (buf.toString('hex') || '0'));
  let s = '';
  while (n > 0n) { s = B58[Number(n % 58n)] + s; n /= 58n; }
  for (const b of buf) { if (b !== 0) break; s = '1' + s; }
  return s;
}

// n bytes (at most 64) derived from s: signatures are 64 bytes, hashes and keys 32.
const sha = (s, n = 32) => createHash('sha512').update(String(s)).digest().subarray(0, n);
const ctx = () => ({ context: { apiVersion: '2.0.0-stub', slot } });
const isPubkey = (p) => typeof p === 'string' && /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(p);

// One request object -> one answer object (no batches here).
function answer(req) {
  const id = req?.id ?? null;
  const ok = (result) => ({ jsonrpc: '2.0', result, id });
  const fail = (code, message) => ({ jsonrpc: '2.0', error: { code, message }, id });
  if (req === null || typeof req !== 'object' || Array.isArray(req) || req.jsonrpc !== '2.0' ||
      typeof req.method !== 'string')
    return fail(-32600, 'Invalid request');
  const p = Array.isArray(req.params) ? req.params : [];
  switch (req.method) {
    case 'getSlot':
      return ok(++slot);
    case 'getBalance':
      if (!isPubkey(p[0])) return fail(-32602, 'Invalid param: Invalid');
      return ok({ ...ctx(), value: 1_000_000_000 + sha(p[0], 2).readUInt16BE(0) });
    case 'getLatestBlockhash':
      return ok({ ...ctx(), value: { blockhash: base58(sha(`blockhash ${slot}`)),
        lastValidBlockHeight: slot + 150 } });
    case 'getAccountInfo':
      if (!isPubkey(p[0])) return fail(-32602, 'Invalid param: Invalid');
      return ok({ ...ctx(), value: { data: ['', 'base64'], executable: false,
        lamports: 1_000_000_000, owner: SYSTEM, rentEpoch: 0, space: 0 } });
    case 'getProgramAccounts':
      return ok([]);
    case 'sendTransaction':
      if (typeof p[0] !== 'string' || p[0].length === 0)
        return fail(-32602, 'invalid transaction: Transaction failed to sanitize');
      return ok(base58(sha(`tx ${p[0]}`, 64)));
    case 'requestAirdrop':
      if (!isPubkey(p[0]) || typeof p[1] !== 'number') return fail(-32602, 'Invalid params');
      return ok(base58(sha(`airdrop ${p[0]} ${p[1]} ${slot}`, 64)));
    default:
      return fail(-32601, 'Method not found');
  }
}

function send(res, status, body, type = 'application/json') {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

// 40 MiB, chunked (no Content-Length), so the proxy has to count the bytes as they come.
async function sendBig(res, id) {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  const chunk = 'A'.repeat(1 << 20);
  const write = (s) => new Promise((resolve) => {
    if (res.destroyed) return resolve(false);
    if (res.write(s)) return resolve(true);
    res.once('drain', () => resolve(true));
    res.once('close', () => resolve(false));
  });
  if (!(await write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":"`))) return;
  for (let i = 0; i < 40; i++) if (!(await write(chunk))) return;
  res.end('"}');
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const path = req.url.split('?')[0];
    if (req.method === 'GET' && path === '/last') return send(res, 200, last, 'text/plain');
    if (req.method === 'GET' && path === '/count') return send(res, 200, String(count), 'text/plain');
    if (req.method !== 'POST') return send(res, 405, 'POST only\n', 'text/plain');
    if (path === '/status/503') return send(res, 503, 'Service Unavailable\n', 'text/plain');
    if (path === '/status/429') return send(res, 429, 'Too Many Requests\n', 'text/plain');
    let parsed;
    try { parsed = JSON.parse(body); } catch {
      return send(res, 200, JSON.stringify({ jsonrpc: '2.0', error: { code: -32700,
        message: 'Parse error' }, id: null }));
    }
    if (path === '/rpc-error-500') {
      const one = (q) => ({ jsonrpc: '2.0', error: { code: -32002,
        message: 'Transaction simulation failed: stub error' }, id: q?.id ?? null });
      return send(res, 500, JSON.stringify(Array.isArray(parsed) ? parsed.map(one) : one(parsed)));
    }
    if (path !== '/') return send(res, 404, 'not found\n', 'text/plain');
    last = body;
    count++;
    if (!Array.isArray(parsed) && parsed?.method === 'getProgramAccounts' &&
        parsed?.params?.[0] === BIG_PROGRAM)
      return void sendBig(res, parsed.id ?? null);
    if (Array.isArray(parsed)) {
      if (parsed.length === 0)
        return send(res, 200, JSON.stringify({ jsonrpc: '2.0', error: { code: -32600,
          message: 'Invalid request' }, id: null }));
      return send(res, 200, JSON.stringify(parsed.map(answer)));
    }
    return send(res, 200, JSON.stringify(answer(parsed)));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => {
  console.log(`solana-stub (a stub, not Solana) listening on 127.0.0.1:${server.address().port}`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
