// Format-B webhooks end to end (SPEC.md section 6 format B, docs/webhooks.md "Format B"): real
// devchain transactions sent with ethers, matched by the stack's indexer and POSTed by
// cron/deliver to a real local HTTPS receiver. The receiver verifies X-Service-Signature
// (sha256= HMAC of the raw body) itself and every delivery with the official `standardwebhooks`
// package; the types fire from real transactions, filters narrow them, bad filters are 400s
// naming the field, and the format-B schedule (1 s apart in the test config) ends in failed
// with the webhook still active. Dev accounts 80-84 are this file's; the deployer mints.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ContractFactory, JsonRpcProvider, getAddress } from 'ethers';
import { Webhook } from 'standardwebhooks';
import { wallet, account } from '../../devchain/dev.mjs';
import { api, assertError, env, newKey, openapi, sleep, waitFor } from './helpers.mjs';
import { makeCerts, tokens } from './webhook-kit.mjs';

const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const provider = new JsonRpcProvider(env.chain, 31337, { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 1 });
const deployer = wallet(0, provider);
const A = getAddress(account(80).address);
const B = getAddress(account(81).address);
const C = getAddress(account(82).address);
const ZERO = '0x0000000000000000000000000000000000000000';
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const { erc20, erc721 } = tokens(dc, deployer);

const secrets = new Map();	// path -> signing secret
const got = new Map();		// path -> [{ at, headers, body, json }]
const answer = new Map();	// path -> status
let rejected = [];
let server;
let base;
let key;
let n = 0;

// format B's own check, as a receiver would write it: sha256= HMAC-SHA256 of the raw body.
function verifyB(secret, sig, raw) {
  const m = /^sha256=([0-9a-f]{64})$/.exec(sig ?? '');
  if (!m) return false;
  return timingSafeEqual(createHmac('sha256', secret).update(raw).digest(), Buffer.from(m[1], 'hex'));
}

function startReceiver(tls) {
  server = https.createServer(tls, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const secret = secrets.get(req.url);
      let json;
      try { json = JSON.parse(raw.toString('utf8')); } catch { json = undefined; }
      let std = true;
      try { new Webhook(secret).verify(raw.toString('utf8'), req.headers); } catch { std = false; }
      if (!secret || !verifyB(secret, req.headers['x-service-signature'], raw) || !std ||
          req.headers['x-webhook-idempotency-key'] !== json?.id || req.headers['webhook-id'] !== json?.id ||
          req.headers['x-webhook-event'] !== json?.type || req.headers['content-type'] !== 'application/json') {
        rejected.push({ path: req.url, headers: req.headers });
        res.writeHead(401).end();
        return;
      }
      const list = got.get(req.url) ?? [];
      list.push({ at: Date.now(), headers: req.headers, body: raw.toString('utf8'), json });
      got.set(req.url, list);
      res.writeHead(answer.get(req.url) ?? 200).end('ok');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

before(async () => {
  base = `https://127.0.0.1:${await startReceiver(makeCerts())}`;
  key = newKey({ plan: 'enterprise' });
  for (let i = 80; i < 85; i++)
    await provider.send('anvil_setBalance', [account(i).address, '0x56BC75E2D63100000']);
});
after(() => {
  server?.close();
  server?.closeAllConnections?.();
});

// A format-B webhook posting to a path of its own; returns { id, path, json }.
async function hook(body) {
  const path = `/b/${++n}`;
  const res = await api('/v1/webhooks', { method: 'POST', key, body: { url: base + path, chain: 'ethereum', ...body } });
  assert.equal(res.status, 201, res.text);
  secrets.set(path, res.json.signing_secret);
  return { id: res.json.id, path, json: res.json };
}
const arrived = (path, count, ms = 30000) =>
  waitFor(() => ((got.get(path)?.length ?? 0) >= count ? got.get(path) : null), `${count} deliveries at ${path}`, ms);
const mined = async (p) => (await p).wait();
const of = (path, type) => (got.get(path) ?? []).filter((d) => d.json.type === type);

// The body against docs/openapi.yaml's `webhooks:` document of its type.
function assertDocumented(d) {
  const name = `formatB${d.json.type.toLowerCase().split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join('')}`;
  const validate = openapi.validator(`#/webhooks/${name}/post/requestBody/content/application~1json/schema`);
  assert.ok(validate(d.json), `${d.json.type}: ${JSON.stringify(validate.errors)}`);
}

function assertEnvelope(d, type, documented = true) {
  if (documented) assertDocumented(d);
  assert.deepEqual(Object.keys(d.json), ['id', 'type', 'createdAt', 'chain', 'chainId', 'data']);
  assert.match(d.json.id, /^evt_[0-9a-f]{24}$/);
  assert.equal(d.json.type, type);
  assert.match(d.json.createdAt, ISO_MS);
  assert.equal(d.json.chain, 'ethereum');
  assert.equal(d.json.chainId, 31337);
  assert.equal(d.headers['x-webhook-event'], type);
  assert.equal(d.headers['x-webhook-idempotency-key'], d.json.id);
  assert.equal(d.headers['x-service-timestamp'], undefined, 'format A\'s header is not sent');
}

test('create: event_types, filters canonical; GET and the list show them', async () => {
  const w = await hook({ event_types: ['TOKEN_TRANSFER', 'ADDRESS_ACTIVITY'], filters: { addresses: [C], min_value: 1000 } });
  assert.equal(w.json.event_type, 'ADDRESS_ACTIVITY');
  assert.deepEqual(w.json.event_types, ['ADDRESS_ACTIVITY', 'TOKEN_TRANSFER']);
  assert.deepEqual(w.json.filters, { addresses: [C.toLowerCase()], min_value: '1000' });
  assert.equal(w.json.config, undefined);
  assert.match(w.json.signing_secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const g = await api(`/v1/webhooks/${w.id}`, { key });
  assert.equal(g.status, 200);
  assert.deepEqual(g.json.event_types, ['ADDRESS_ACTIVITY', 'TOKEN_TRANSFER']);
  const p = await api(`/v1/webhooks/${w.id}`, { method: 'PATCH', key, body: { filters: { addresses: [B] } } });
  assert.equal(p.status, 200, p.text);
  assert.deepEqual(p.json.filters, { addresses: [B.toLowerCase()] });
  const l = await api('/v1/webhooks?limit=100', { key });
  assert.deepEqual(l.json.webhooks.find((x) => x.id === w.id).event_types, ['ADDRESS_ACTIVITY', 'TOKEN_TRANSFER']);
  assert.equal((await api(`/v1/webhooks/${w.id}`, { method: 'DELETE', key })).status, 200);
});

test('bad format-B bodies are 400s naming the field', async () => {
  const bad = [
    [{ event_type: 'TOKEN_TRANSFERS' }, /^event_type /],
    [{ event_types: ['NEW_BLOCK', 'NEW_BLOCK'] }, /^event_types\[1\]/],
    [{ event_types: [] }, /^event_types /],
    [{ event_type: 'NEW_BLOCK', event_types: ['NEW_BLOCK'] }, /^event_type: give/],
    [{ event_type: 'ADDRESS_ACTIVITY' }, /^filters\.addresses is required/],
    [{ event_type: 'TOKEN_TRANSFER', filters: { contracts: ['0x12'] } }, /^filters\.contracts\[0\]/],
    [{ event_type: 'TOKEN_TRANSFER', filters: { contracts: [A], min_value: '-5' } }, /^filters\.min_value/],
    [{ event_type: 'TOKEN_TRANSFER', filters: { contracts: [A], selectors: ['0x1234'] } }, /^filters\.selectors\[0\]/],
    [{ event_type: 'TOKEN_TRANSFER', filters: { contracts: [A], topic: [] } }, /^filters\.topic is not a filter/],
    [{ event_type: 'NEW_BLOCK', config: {} }, /^config: a format-B webhook/],
    [{ event_type: 'token_transfer', config: { contracts: [A] }, filters: {} }, /^filters: only format-B/],
    [{ event_type: 'INTERNAL_TRANSFER' }, /^filters\.addresses is required for INTERNAL_TRANSFER/],
  ];
  for (const [body, why] of bad) {
    const res = await api('/v1/webhooks', { method: 'POST', key, body: { url: `${base}/x`, chain: 'ethereum', ...body } });
    assertError(assert, res, 400, 'invalid_request');
    assert.match(res.json.error.message, why, JSON.stringify(body));
  }
});

test('TOKEN_TRANSFER: data as SPEC.md lists it; min_value and selectors narrow', async () => {
  // Only transfer(), not mint(), and at least 1000 units.
  const w = await hook({ event_type: 'TOKEN_TRANSFER', filters: { contracts: [dc.tokens.erc20_18], selectors: ['0xa9059cbb'], min_value: '1000' } });
  const watcher = await hook({ event_type: 'TOKEN_TRANSFER', filters: { addresses: [C] } });
  await mined(erc20.mint(deployer.address, 10n ** 21n));
  const r1 = await mined(erc20.mint(C, 5000n));			// mint: not the selector
  await mined(erc20.transfer(C, 999n));				// below min_value
  const r3 = await mined(erc20.transfer(C, 1500n * 10n ** 15n));	// passes
  const [d] = await arrived(w.path, 1);
  await arrived(watcher.path, 3);
  await sleep(1000);
  assert.equal(got.get(w.path).length, 1, 'the mint and the small transfer were filtered out');
  assertEnvelope(d, 'TOKEN_TRANSFER');
  const log = r3.logs.find((l) => l.address.toLowerCase() === dc.tokens.erc20_18.toLowerCase());
  assert.deepEqual(d.json.data, { blockNumber: r3.blockNumber, transactionHash: r3.hash, logIndex: log.index,
    from: getAddress(deployer.address), to: C, token: { address: getAddress(dc.tokens.erc20_18), symbol: 'BPT', decimals: 18 },
    value: '1500000000000000000', valueFormatted: '1.5' });
  // The address filter alone sees all three, the mint's from the zero address.
  const minted = got.get(watcher.path).find((x) => x.json.data.transactionHash === r1.hash);
  assert.equal(minted.json.data.from, ZERO);
  assert.equal(minted.json.data.valueFormatted, '0.000000000000005');
});

test('ADDRESS_ACTIVITY and MINED_TRANSACTION of one native send, in one webhook', async () => {
  const w = await hook({ event_types: ['ADDRESS_ACTIVITY', 'MINED_TRANSACTION'], filters: { addresses: [A] } });
  const r = await mined(wallet(80, provider).sendTransaction({ to: B, value: 12345n }));
  await arrived(w.path, 2);
  const [act] = of(w.path, 'ADDRESS_ACTIVITY');
  const [mt] = of(w.path, 'MINED_TRANSACTION');
  assertEnvelope(act, 'ADDRESS_ACTIVITY');
  assert.deepEqual(act.json.data, { blockNumber: r.blockNumber, transactionHash: r.hash, logIndex: null,
    from: A, to: B, value: '12345', asset: 'ETH', contract: null, direction: 'outgoing' });
  assertEnvelope(mt, 'MINED_TRANSACTION');
  assert.deepEqual(mt.json.data, { blockNumber: r.blockNumber, blockHash: r.blockHash, transactionHash: r.hash,
    transactionIndex: r.index, from: A, to: B, value: '12345', status: 'success', gasUsed: Number(r.gasUsed),
    effectiveGasPrice: r.gasPrice.toString() });
  assert.notEqual(act.json.id, mt.json.id);
});

test('INTERNAL_TRANSFER: a forwarder\'s inner call with value, from the call traces; addresses and min_value narrow', async () => {
  // A contract whose code sends what it gets on: CALL(gas, D, CALLVALUE, 0, 0, 0, 0).
  const D = getAddress(account(83).address);
  const runtime = `600060006000600034 73${D.slice(2).toLowerCase()} 5a f1 00`.replaceAll(' ', '');
  const made = await mined(deployer.sendTransaction({ data: `0x602180600b6000396000f3${runtime}` }));
  const F = getAddress(made.contractAddress);
  const w = await hook({ event_type: 'INTERNAL_TRANSFER', filters: { addresses: [D] } });
  const big = await hook({ event_type: 'INTERNAL_TRANSFER', filters: { addresses: [F], min_value: '5000' } });
  const sender = await hook({ event_type: 'INTERNAL_TRANSFER', filters: { addresses: [A] } });
  const r1 = await mined(wallet(80, provider).sendTransaction({ to: F, value: 4000n }));
  const r2 = await mined(wallet(80, provider).sendTransaction({ to: F, value: 7000n }));
  assert.equal(await provider.getBalance(F), 0n, 'the forwarder passed the value on');
  await arrived(w.path, 2);
  await arrived(big.path, 1);
  await sleep(1000);
  assert.deepEqual(got.get(w.path).map((d) => d.json.data.transactionHash).sort(), [r1.hash, r2.hash].sort());
  assert.equal(got.get(big.path).length, 1, 'min_value left the 4000 wei one out');
  assert.equal(got.get(sender.path), undefined, 'the transaction\'s own call is not internal');
  const [d] = got.get(big.path);
  assertEnvelope(d, 'INTERNAL_TRANSFER');
  assert.deepEqual(d.json.data, { blockNumber: r2.blockNumber, transactionHash: r2.hash, logIndex: null,
    from: F, to: D, value: '7000', asset: 'ETH', contract: null, traceAddress: [0], callType: 'CALL' });
});

test('NFT_ACTIVITY: a mint, with its activity; NEW_BLOCK: the block as the node has it', async () => {
  const w = await hook({ event_types: ['NFT_ACTIVITY', 'NEW_BLOCK'], filters: { addresses: [B] } });
  const r = await mined(erc721.mint(B));
  const tokenId = erc721.interface.parseLog(r.logs[0]).args.tokenId;
  await waitFor(() => of(w.path, 'NFT_ACTIVITY').length > 0 &&
    of(w.path, 'NEW_BLOCK').some((d) => d.json.data.blockNumber === r.blockNumber), 'the mint and its block', 30000);
  const [nft] = of(w.path, 'NFT_ACTIVITY');
  assertEnvelope(nft, 'NFT_ACTIVITY');
  assert.deepEqual(nft.json.data, { blockNumber: r.blockNumber, transactionHash: r.hash, logIndex: r.logs[0].index,
    from: ZERO, to: B, contract: getAddress(dc.tokens.erc721), tokenId: tokenId.toString(), standard: 'ERC721',
    quantity: 1, activity: 'mint', metadata: null });
  const nb = of(w.path, 'NEW_BLOCK').find((d) => d.json.data.blockNumber === r.blockNumber);
  const blk = await provider.getBlock(r.blockNumber);
  assertEnvelope(nb, 'NEW_BLOCK');
  assert.deepEqual(nb.json.data, { blockNumber: blk.number, hash: blk.hash, parentHash: blk.parentHash,
    timestamp: blk.timestamp, gasUsed: Number(blk.gasUsed), transactionCount: blk.transactions.length });
  assert.equal((await api(`/v1/webhooks/${w.id}`, { method: 'DELETE', key })).status, 200);	// every block fires it
});

test('NFT_ACTIVITY carries the token\'s metadata once Blockport has it cached', async () => {
  // A collection whose tokenURI is this test's own http server.
  const meta = http.createServer((req, res) => {
    const m = /^\/meta\/(\d+)$/.exec(req.url);
    res.writeHead(m ? 200 : 404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(m ? { name: `Hook ${m[1]}`, description: 'for webhooks',
      image: 'https://example.test/hook.png', attributes: [{ trait_type: 'Level', value: '3' }] } : {}));
  });
  await new Promise((resolve) => meta.listen(0, '127.0.0.1', resolve));
  try {
    const art = JSON.parse(readFileSync(new URL('../../devchain/node_modules/@openzeppelin/contracts/build/contracts/ERC721PresetMinterPauserAutoId.json', import.meta.url), 'utf8'));
    const nft = await (await new ContractFactory(art.abi, art.bytecode, deployer)
      .deploy('Hooked', 'HK', `http://127.0.0.1:${meta.address().port}/meta/`)).waitForDeployment();
    const addr = getAddress(await nft.getAddress());
    await mined(nft.mint(B));
    // Blockport fetches and caches it (the API's read does, as cron/nftmeta would).
    await waitFor(async () => (await api(`/v1/nfts/ethereum/metadata/${addr}/0`, { key })).json?.name === 'Hook 0',
      'the metadata cached', 30000);
    const w = await hook({ event_type: 'NFT_ACTIVITY', filters: { contracts: [addr] } });
    const r = await mined(nft.connect(wallet(81, provider)).transferFrom(B, C, 0n));
    // (The mint may come too: the webhook can be older than the indexing of its block.)
    const d = await waitFor(() => (got.get(w.path) ?? []).find((x) => x.json.data.transactionHash === r.hash),
      'the transfer', 30000);
    assertEnvelope(d, 'NFT_ACTIVITY');
    assert.equal(d.json.data.activity, 'transfer');
    assert.deepEqual(d.json.data.metadata, { name: 'Hook 0', description: 'for webhooks',
      image: 'https://example.test/hook.png', imageGatewayUrl: 'https://example.test/hook.png',
      traits: [{ trait_type: 'Level', value: '3' }] });
  } finally {
    meta.close();
    meta.closeAllConnections?.();
  }
});

test('retries at format B\'s gaps (1 s in the test config), 8 attempts, then failed; the webhook stays active', { timeout: 60000 }, async () => {
  const w = await hook({ event_type: 'ADDRESS_ACTIVITY', filters: { addresses: [account(83).address] } });
  answer.set(w.path, 500);
  await mined(wallet(83, provider).sendTransaction({ to: A, value: 1n }));
  const list = await arrived(w.path, 8, 45000);
  await sleep(3000);
  assert.equal(got.get(w.path).length, 8, 'the first try and 7 retries, no more');
  assert.equal(new Set(list.map((d) => d.json.id)).size, 1);
  assert.equal(new Set(list.map((d) => d.body)).size, 1, 'the same bytes each time');
  for (let i = 1; i < 8; i++) {
    const gap = list[i].at - list[i - 1].at;
    assert.ok(gap >= 900 && gap < 5000, `gap ${i}: ${gap} ms`);
  }
  const g = await api(`/v1/webhooks/${w.id}`, { key });
  assert.equal(g.json.status, 'active', 'format B does not pause');
  // Its next event is delivered as usual.
  answer.delete(w.path);
  await mined(wallet(83, provider).sendTransaction({ to: A, value: 2n }));
  await arrived(w.path, 9);
  assert.deepEqual(rejected, []);
});

// ---- the delivery log, replay and the test event as API ----

test('GET /deliveries: every attempt, newest first, paged; another account\'s webhook is 404', async () => {
  const w = await hook({ event_type: 'ADDRESS_ACTIVITY', filters: { addresses: [account(84).address] } });
  answer.set(w.path, 500);
  await mined(wallet(84, provider).sendTransaction({ to: A, value: 3n }));
  await arrived(w.path, 2);
  answer.delete(w.path);
  const [first] = await arrived(w.path, 3);
  const res = await waitFor(async () => {
    const r = await api(`/v1/webhooks/${w.id}/deliveries`, { key });
    return r.json?.total >= 3 ? r : null;
  }, 'three attempts in the log');
  assert.equal(res.status, 200);
  assert.deepEqual(res.json.deliveries.map((d) => [d.attempt, d.http_status, d.error]), [[3, 200, null], [2, 500, null], [1, 500, null]]);
  for (const d of res.json.deliveries) {
    assert.equal(d.event_id, first.json.id);
    assert.equal(d.type, 'ADDRESS_ACTIVITY');
    assert.ok(Number.isInteger(d.duration_ms) && d.duration_ms >= 0);
  }
  const p2 = await api(`/v1/webhooks/${w.id}/deliveries?limit=2&page=2`, { key });
  assert.deepEqual([p2.json.page, p2.json.limit, p2.json.total, p2.json.deliveries.length], [2, 2, 3, 1]);
  assert.equal(p2.json.deliveries[0].attempt, 1);
  const other = newKey({ plan: 'enterprise' });
  for (const [method, path, body] of [['GET', 'deliveries'], ['POST', 'replay', { since: 0 }], ['POST', 'test', {}]])
    assertError(assert, await api(`/v1/webhooks/${w.id}/${path}`, { method, key: other, body }), 404, 'not_found');
  const noScope = newKey({ plan: 'enterprise', scopes: 'rpc:read' });
  assertError(assert, await api(`/v1/webhooks/${w.id}/deliveries`, { key: noScope }), 403, 'forbidden');
});

test('POST /replay by ids and by time: the same evt_ ids and bytes again, new attempts', async () => {
  const w = await hook({ event_type: 'ADDRESS_ACTIVITY', filters: { addresses: [account(84).address] } });
  await mined(wallet(84, provider).sendTransaction({ to: A, value: 4n }));
  const [d] = await arrived(w.path, 1);
  // Delivered is settled a moment after the 200: poll until the replay finds it delivered.
  const byId = await waitFor(async () => {
    const r = await api(`/v1/webhooks/${w.id}/replay`, { method: 'POST', key, body: { event_ids: [d.json.id] } });
    return r.json?.replayed === 1 ? r : null;
  }, 'the event delivered, then replayed');
  assert.deepEqual(byId.json, { id: w.id, replayed: 1 });
  const again = await arrived(w.path, 2);
  assert.equal(again[1].json.id, d.json.id);
  assert.equal(again[1].body, d.body, 'the same bytes');
  await sleep(1000);
  const since = new Date(Date.now() - 120000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const bySince = await api(`/v1/webhooks/${w.id}/replay`, { method: 'POST', key, body: { since } });
  assert.equal(bySince.status, 200, bySince.text);
  assert.equal(bySince.json.replayed, 1);
  const third = await arrived(w.path, 3);
  assert.equal(third[2].json.id, d.json.id);
  const log = await waitFor(async () => {
    const r = await api(`/v1/webhooks/${w.id}/deliveries`, { key });
    return r.json?.total >= 3 ? r : null;
  }, 'three attempts logged');
  assert.ok(log.json.deliveries.every((x) => x.event_id === d.json.id));
  const bad = [
    [{}, /^since: give since/],
    [{ since: 'yesterday' }, /^since must be a time/],
    [{ since: '2020-01-01T00:00:00Z' }, /^since is older than the retention/],
    [{ event_ids: ['evt_1'] }, /^event_ids\[0\] must be an evt_ id/],
    [{ event_ids: ['evt_000000000000000000000000'] }, /^event_ids\[0\]: evt_0+ is not an event of webhook/],
  ];
  for (const [body, why] of bad) {
    const res = await api(`/v1/webhooks/${w.id}/replay`, { method: 'POST', key, body });
    assertError(assert, res, 400, 'invalid_request');
    assert.match(res.json.error.message, why);
  }
});

test('POST /test: a signed test event now, in the webhook\'s format; the receiver\'s answer', async () => {
  const w = await hook({ event_types: ['NFT_ACTIVITY', 'TOKEN_TRANSFER'], filters: { contracts: [dc.tokens.erc721] } });
  const res = await api(`/v1/webhooks/${w.id}/test`, { method: 'POST', key });
  assert.equal(res.status, 200, res.text);
  const [d] = await arrived(w.path, 1);
  assert.deepEqual(res.json, { event_id: d.json.id, delivered: true, http_status: 200, error: null, duration_ms: res.json.duration_ms });
  assertEnvelope(d, 'NFT_ACTIVITY', false);	// a test event's data is {test: true}
  assert.deepEqual(d.json.data, { test: true });
  answer.set(w.path, 503);
  const failed = await api(`/v1/webhooks/${w.id}/test`, { method: 'POST', key });
  assert.equal(failed.status, 200);
  assert.equal(failed.json.delivered, false);
  assert.equal(failed.json.http_status, 503);
  const log = await api(`/v1/webhooks/${w.id}/deliveries`, { key });
  assert.deepEqual(log.json.deliveries.map((x) => [x.event_id, x.http_status]), [[failed.json.event_id, 503], [d.json.id, 200]]);
});

test('PENDING_TRANSACTION: a watched address\'s transaction, from the pending follower', async () => {
  const from = getAddress(account(83).address);
  const w = await hook({ event_type: 'PENDING_TRANSACTION', filters: { addresses: [from], selectors: ['0x12345678'] } });
  const plain = await hook({ event_type: 'PENDING_TRANSACTION', filters: { addresses: [from] } });
  const tx = await wallet(83, provider).sendTransaction({ to: B, value: 6n, data: '0x12345678aa' });
  await tx.wait();
  const [d] = await arrived(w.path, 1);
  assertEnvelope(d, 'PENDING_TRANSACTION');
  assert.deepEqual(d.json.data, { transactionHash: tx.hash, from, to: B, value: '6', nonce: tx.nonce, selector: '0x12345678' });
  // A transfer without that selector reaches only the webhook without the filter.
  const t2 = await wallet(83, provider).sendTransaction({ to: B, value: 7n });
  await waitFor(() => (got.get(plain.path) ?? []).find((x) => x.json.data.transactionHash === t2.hash), 'the plain transfer');
  await sleep(1000);
  assert.equal(got.get(w.path).length, 1);
});
