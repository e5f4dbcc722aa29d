// /v1/nfts (docs/nfts.md) on the devchain: OpenZeppelin 4.9.6 ERC721PresetMinterPauserAutoId and
// ERC1155PresetMinterPauser deployed and driven with ethers, metadata served by this file's own
// node:http server on NFT_PORT (scripts/stack.sh points the test config's ipfs_gateway and
// arweave_gateway at it), data: URIs, ERC-1155 {id} substitution, owned NFTs across both
// standards after transfers and burns, pagination, 400/404s, scopes, the retry backoff of a
// failed fetch, and the SSRF guard: the test config's network ethereum.ssrf has
// allow_private_urls = false, and tokenURIs at loopback in every spelling are not fetched.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { ContractFactory, Contract, JsonRpcProvider, Wallet, getAddress } from 'ethers';
import { account } from '../../devchain/dev.mjs';
import { env, api as apiAs, assertError, newKey, sleep, waitFor } from './helpers.mjs';

const PORT = Number(process.env.NFT_PORT);
const HERE = `http://127.0.0.1:${PORT}`;
const CID = 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG';
const oz = new URL('../../devchain/node_modules/@openzeppelin/contracts/build/contracts/', import.meta.url);
const artifact = (name) => JSON.parse(readFileSync(new URL(`${name}.json`, oz), 'utf8'));
const ERC20 = artifact('ERC20PresetMinterPauser');
const ERC721 = artifact('ERC721PresetMinterPauserAutoId');
const ERC1155 = artifact('ERC1155PresetMinterPauser');
const DEPLOYER = account(2).address;
// Holders of this file only: fresh addresses the devchain lets us send from (impersonated).
const H = Wallet.createRandom().address;
const X = Wallet.createRandom().address;
const N = Wallet.createRandom().address;	// ids 10, 2, 9 of one contract: numeric order

let provider;
let server;
let key;		// an enterprise key: these tests send more than 10 requests a second
const api = (path, opts = {}) => apiAs(path, { key, ...opts });
const hits = [];		// every path the metadata server was asked for
let flaky = 500;		// what /fail/ answers

const rpc = (method, params = []) => provider.send(method, params);
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64');
const hex64 = (n) => BigInt(n).toString(16).padStart(64, '0');

function serve(req, res) {
  const path = req.url;
  hits.push(path);
  const json = (code, o) => {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(o));
  };
  let m;
  if ((m = path.match(/^\/meta\/(\d+)$/)))
    return json(200, {
      name: `Token ${m[1]}`, description: 'served over http', image: `ipfs://${CID}/${m[1]}.png`,
      attributes: [{ trait_type: 'Level', value: Number(m[1]) }, { value: 'untyped' },
        { trait_type: 'Rare', value: true }, { trait_type: 'Nested', value: { a: 1 } }, 'junk'],
    });
  if ((m = path.match(new RegExp(`^/ipfs/${CID}/(\\d+)$`))))
    return json(200, { name: `IPFS ${m[1]}`, image: `ar://bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U` });
  if ((m = path.match(/^\/1155\/([0-9a-f]{64})\.json$/)))
    return json(200, { name: `Multi ${BigInt('0x' + m[1])}`, image: `${HERE}/img/${m[1]}.png` });
  if (path.startsWith('/fail/'))
    return flaky === 200 ? json(200, { name: 'Recovered' }) : json(flaky, { error: 'nope' });
  if (path.startsWith('/redirect/')) {
    res.writeHead(302, { Location: `${HERE}/ssrf/redirected` });
    return res.end();
  }
  return json(404, { error: 'no such document' });
}

async function send(from, to, data = '0x') {
  const hash = await rpc('eth_sendTransaction', [{ from, to, data }]);
  for (let i = 0; i < 400; i++) {
    const r = await rpc('eth_getTransactionReceipt', [hash]);
    if (r) {
      assert.equal(r.status, '0x1', `transaction ${hash} reverted`);
      return r;
    }
    await sleep(10);
  }
  throw new Error(`no receipt for ${hash}`);
}

async function deploy(art, args) {
  const f = new ContractFactory(art.abi, art.bytecode);
  const tx = await f.getDeployTransaction(...args);
  const r = await send(DEPLOYER, null, tx.data);
  return new Contract(r.contractAddress, art.abi, provider);
}

async function call(contract, from, fn, ...args) {
  return send(from, await contract.getAddress(), contract.interface.encodeFunctionData(fn, args));
}

const c = {};	// the contracts, by role
const addr = (k) => c[k].target;
const meta = (k, id, q = '') => api(`/v1/nfts/ethereum/metadata/${addr(k)}/${id}${q}`);
const owned = (who, q = '') => api(`/v1/nfts/ethereum/owned/${who}${q}`);

before(async () => {
  assert.ok(PORT > 0, 'NFT_PORT is set by scripts/stack.sh --test');
  key = newKey({ plan: 'enterprise' });
  server = createServer(serve);
  await new Promise((ok) => server.listen(PORT, '127.0.0.1', ok));
  provider = new JsonRpcProvider(env.chain, 31337, { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 1 });
  for (const who of [H, X]) {
    await rpc('anvil_impersonateAccount', [who]);
    await rpc('anvil_setBalance', [who, '0x56bc75e2d63100000']);
  }
  c.http = await deploy(ERC721, ['Test Apes', 'TAPE', `${HERE}/meta/`]);
  c.ipfs = await deploy(ERC721, ['Ipfs Things', 'IPT', `ipfs://${CID}/`]);
  c.quiet = await deploy(ERC721, ['Quiet', 'QT', `${HERE}/meta/`]);
  c.multi = await deploy(ERC1155, [`${HERE}/1155/{id}.json`]);
  c.data64 = await deploy(ERC1155, ['data:application/json;base64,' + b64({
    name: 'On-chain', description: 'base64', image: 'data:image/svg+xml;base64,PHN2Zy8+',
    attributes: [{ trait_type: 'n', value: 1.5 }, { trait_type: 'big', value: 12345678901 }] })]);
  c.dataPct = await deploy(ERC1155, ['data:application/json,' + encodeURIComponent(JSON.stringify({ name: 'café ☕' }))]);
  c.erc20 = await deploy(ERC20, ['Plain Token', 'PLT']);
  c.lure = await deploy(ERC721, ['Visit claim-now.io', 'CLAIM', `${HERE}/meta/`]);
  // SSRF: loopback in four spellings and a redirect, asked on the guarded network (not
  // indexed: an ERC-1155 id needs no mint there, so cron/nftmeta never sees these), and a
  // control minted on the indexed one.
  c.s1 = await deploy(ERC1155, [`${HERE}/ssrf/a/{id}.json`]);
  c.s2 = await deploy(ERC1155, [`http://[::ffff:7f00:1]:${PORT}/ssrf/b/{id}.json`]);
  c.s3 = await deploy(ERC1155, [`http://localhost:${PORT}/ssrf/c/{id}.json`]);
  c.s4 = await deploy(ERC1155, [`http://2130706433:${PORT}/ssrf/d/{id}.json`]);
  c.s5 = await deploy(ERC1155, [`${HERE}/redirect/{id}.json`]);
  c.ctl = await deploy(ERC1155, [`${HERE}/ssrf/ctl/{id}.json`]);

  // ERC-721: ids 0, 1, 2 to H; 1 moves to X; 2 is burnt.
  for (let i = 0; i < 3; i++) await call(c.http, DEPLOYER, 'mint', H);
  await call(c.http, H, 'transferFrom', H, X, 1);
  await call(c.http, H, 'burn', 2);
  await call(c.ipfs, DEPLOYER, 'mint', H);
  await call(c.quiet, DEPLOYER, 'mint', X);
  // ERC-1155: 5 of id 1 to H, 2 of them on to X; 4 of id 26 to H, all burnt.
  await call(c.multi, DEPLOYER, 'mint', H, 1, 5, '0x');
  await call(c.multi, H, 'safeTransferFrom', H, X, 1, 2, '0x');
  await call(c.multi, DEPLOYER, 'mint', H, 26, 4, '0x');
  await call(c.multi, H, 'burn', H, 26, 4);
  await call(c.data64, DEPLOYER, 'mint', H, 7, 1, '0x');
  await call(c.dataPct, DEPLOYER, 'mint', X, 3, 1, '0x');
  await call(c.lure, DEPLOYER, 'mint', H);
  await call(c.ctl, DEPLOYER, 'mint', H, 0, 1, '0x');
  for (const id of [10, 2, 9]) await call(c.data64, DEPLOYER, 'mint', N, id, 1, '0x');
  // The index has caught up when X holds its four.
  await waitFor(async () => (await owned(X)).json?.total === 4, 'the indexer to see the transfers');
});

after(async () => {
  provider?.destroy();
  await new Promise((ok) => (server ? server.close(ok) : ok()));
});

test('ERC-721 over http: fields, owner, traits as strings, image through the IPFS gateway', async () => {
  const r = await meta('http', 0);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, {
    contract: getAddress(addr('http')), chain: 'ethereum', network: 'devnet', token_id: '0',
    standard: 'ERC721', owner: getAddress(H), token_uri: `${HERE}/meta/0`, name: 'Token 0',
    description: 'served over http', image_url: `ipfs://${CID}/0.png`,
    image_gateway_url: `${HERE}/ipfs/${CID}/0.png`,
    traits: [{ trait_type: 'Level', value: '0' }, { trait_type: '', value: 'untyped' },
      { trait_type: 'Rare', value: 'true' }],
  });
  // X's token after the transfer; a leading zero is still decimal.
  const t1 = await meta('http', '001');
  assert.equal(t1.status, 200);
  assert.equal(t1.json.token_id, '1');
  assert.equal(t1.json.owner, getAddress(X));
  assert.equal(t1.json.name, 'Token 1');
});

test('cached: a second request does not fetch again', async () => {
  await meta('http', 0);
  await sleep(1000);	// a fetch of cron/nftmeta's that raced the first request has landed
  const before = hits.filter((p) => p === '/meta/0').length;
  for (let i = 0; i < 3; i++) {
    const r = await meta('http', 0);
    assert.equal(r.json.name, 'Token 0');
  }
  assert.equal(hits.filter((p) => p === '/meta/0').length, before);
});

test('ipfs:// through the configured gateway; ar:// image mapped', async () => {
  const r = await meta('ipfs', 0);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.token_uri, `ipfs://${CID}/0`);
  assert.equal(r.json.name, 'IPFS 0');
  assert.ok(hits.includes(`/ipfs/${CID}/0`));
  assert.equal(r.json.image_gateway_url, `${HERE}/ar/bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U`);
});

test('ERC-1155: {id} as 64 hex digits, owner null with two holders, one holder named', async () => {
  const r = await meta('multi', 1);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.standard, 'ERC1155');
  assert.equal(r.json.token_uri, `${HERE}/1155/{id}.json`);
  assert.equal(r.json.name, 'Multi 1');
  assert.equal(r.json.owner, null);
  assert.ok(hits.includes(`/1155/${hex64(1)}.json`));
  const d = await meta('dataPct', 3);
  assert.equal(d.json.owner, getAddress(X));
});

test('data: URIs, base64 and percent-encoded UTF-8, decoded in place', async () => {
  const n = hits.length;
  const r = await meta('data64', 7);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.name, 'On-chain');
  assert.equal(r.json.image_url, 'data:image/svg+xml;base64,PHN2Zy8+');
  assert.equal(r.json.image_gateway_url, null);
  assert.deepEqual(r.json.traits, [{ trait_type: 'n', value: '1.5' }, { trait_type: 'big', value: '12345678901' }]);
  const p = await meta('dataPct', 3);
  assert.equal(p.json.name, 'café ☕');
  assert.equal(hits.length, n, 'a data: URI is never fetched');
});

test('404: burnt and never-minted tokens, ERC-20s, addresses without code', async () => {
  assertError(assert, await meta('http', 2), 404, 'not_found');
  assertError(assert, await meta('http', 99), 404, 'not_found');
  assertError(assert, await meta('multi', 26), 404, 'not_found');
  assertError(assert, await meta('erc20', 0), 404, 'not_found');
  assertError(assert, await api(`/v1/nfts/ethereum/metadata/${X}/0`), 404, 'not_found');
  assertError(assert, await api(`/v1/nfts/ethereum/collection/${addr('erc20')}`), 404, 'not_found');
  assertError(assert, await api(`/v1/nfts/ethereum/collection/${X}`), 404, 'not_found');
  assertError(assert, await api(`/v1/nfts/nochain/owned/${X}`), 404, 'not_found');
  const max = (2n ** 256n - 1n).toString();
  assertError(assert, await meta('http', max), 404, 'not_found');
});

test('400: token ids that are not decimal up to 2^256 - 1, bad addresses', async () => {
  for (const id of ['abc', '-1', '0x1', '1e3', '1.0', '+1', (2n ** 256n).toString(), '9'.repeat(80)])
    assertError(assert, await meta('http', encodeURIComponent(id)), 400, 'invalid_request');
  const a = addr('http');
  const bad = a.slice(0, 2) + [...a.slice(2)].map((ch) => (/[a-f]/.test(ch) ? ch.toUpperCase() : /[A-F]/.test(ch) ? ch.toLowerCase() : ch)).join('');
  if (bad !== a.toLowerCase() && bad !== '0x' + a.slice(2).toUpperCase())
    assertError(assert, await api(`/v1/nfts/ethereum/metadata/${bad}/0`), 400, 'invalid_request');
  assertError(assert, await api('/v1/nfts/ethereum/metadata/0x1234/0'), 400, 'invalid_request');
  assertError(assert, await api('/v1/nfts/ethereum/owned/nothex'), 400, 'invalid_request');
});

test('collections: name, symbol, supply, owners; floor prices null; ERC-1155 counted from the index', async () => {
  const r = await api(`/v1/nfts/ethereum/collection/${addr('http')}`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.name, 'Test Apes');
  assert.equal(r.json.symbol, 'TAPE');
  assert.equal(r.json.standard, 'ERC721');
  assert.equal(r.json.total_supply, 2);
  assert.equal(r.json.num_owners, 2);
  assert.equal(r.json.floor_price_eth, null);
  assert.equal(r.json.floor_price_usd, null);
  assert.equal(r.json.description, null);
  assert.equal(r.json.spam, false);
  const m = await api(`/v1/nfts/ethereum/collection/${addr('multi')}`);
  assert.equal(m.status, 200, m.text);
  assert.equal(m.json.standard, 'ERC1155');
  assert.equal(m.json.name, null);
  assert.equal(m.json.total_supply, 1);
  assert.equal(m.json.num_owners, 2);
});

test('owned: both standards after transfers and burns, stable pages, the real total past the end', async () => {
  const r = await owned(H);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.address, getAddress(H));
  const got = r.json.nfts.map((n) => `${n.contract.toLowerCase()}/${n.token_id}/${n.standard}/${n.quantity}`).sort();
  const want = [
    `${addr('http').toLowerCase()}/0/ERC721/1`, `${addr('ipfs').toLowerCase()}/0/ERC721/1`,
    `${addr('multi').toLowerCase()}/1/ERC1155/3`, `${addr('data64').toLowerCase()}/7/ERC1155/1`,
    `${addr('ctl').toLowerCase()}/0/ERC1155/1`, `${addr('lure').toLowerCase()}/0/ERC721/1`,
  ].sort();
  assert.deepEqual(got, want);
  assert.equal(r.json.total, want.length);
  // The order is by contract: page by page with limit 3 gives the same list.
  const paged = [];
  for (let p = 1; p <= 2; p++) {
    const pg = await owned(H, `?limit=3&page=${p}`);
    assert.equal(pg.json.total, want.length);
    assert.equal(pg.json.page, p);
    paged.push(...pg.json.nfts);
  }
  assert.deepEqual(paged, r.json.nfts);
  const past = await owned(H, '?page=99&limit=100');
  assert.deepEqual(past.json.nfts, []);
  assert.equal(past.json.total, want.length);
  // Names from the cache: the metadata fetched above shows, with the collection's name.
  const t0 = r.json.nfts.find((n) => n.contract === getAddress(addr('http')));
  assert.equal(t0.name, 'Token 0');
  assert.equal(t0.collection_name, 'Test Apes');
  assert.equal(t0.image_url, `ipfs://${CID}/0.png`);
  const x = await owned(X);
  assert.equal(x.json.total, 4);
});

test('owned: token ids in numeric order (2, 9, 10), the total kept through the pages', async () => {
  await waitFor(async () => (await owned(N)).json?.total === 3, 'the indexer to see the mints to N');
  const r = await owned(N);
  assert.deepEqual(r.json.nfts.map((n) => n.token_id), ['2', '9', '10']);
  const p2 = await owned(N, '?limit=2&page=2');
  assert.deepEqual(p2.json.nfts.map((n) => n.token_id), ['10']);
  assert.equal(p2.json.total, 3);
});

test('spam: a lure in the name marks the collection; exclude_spam=true leaves it out of owned', async () => {
  const lure = await api(`/v1/nfts/ethereum/collection/${addr('lure')}`);
  assert.equal(lure.status, 200, lure.text);
  assert.equal(lure.json.spam, true);
  assert.equal((await api(`/v1/nfts/ethereum/collection/${addr('http')}`)).json.spam, false);
  const all = await owned(H);
  const clean = await owned(H, '?exclude_spam=true');
  assert.equal(clean.json.total, all.json.total - 1);
  assert.deepEqual(clean.json.nfts, all.json.nfts.filter((n) => n.contract !== getAddress(addr('lure'))));
  const paged = [];
  for (let p = 1; p <= 3; p++) paged.push(...(await owned(H, `?exclude_spam=true&limit=3&page=${p}`)).json.nfts);
  assert.deepEqual(paged, clean.json.nfts);
  assert.equal((await owned(H, '?exclude_spam=false')).json.total, all.json.total);
});

test('owned: cron/nftmeta fills names the list has not fetched', async () => {
  // Nobody asks for the quiet token through the metadata route: the worker fetches it.
  const q = await waitFor(async () => (await owned(X)).json.nfts.find(
    (n) => n.contract === getAddress(addr('quiet')) && n.name !== null), 'cron/nftmeta', 20000);
  assert.equal(q.name, 'Token 0');
  assert.equal(q.collection_name, 'Quiet');
});

test('owned: bounds of page, limit and exclude_spam are 400 naming the parameter', async () => {
  for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'page=0', 'page=1.5', 'exclude_spam=yes']) {
    const r = await owned(H, `?${q}`);
    assertError(assert, r, 400, 'invalid_request');
    assert.match(r.json.error.message, new RegExp(q.split('=')[0]));
  }
});

test('a failed fetch answers 200 with null metadata and is retried after the backoff only', async () => {
  c.flaky = await deploy(ERC721, ['Flaky', 'FLK', `${HERE}/fail/`]);
  await call(c.flaky, DEPLOYER, 'mint', H);
  const fails = () => hits.filter((p) => p === '/fail/0').length;
  const r = await meta('flaky', 0);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.owner, getAddress(H));
  assert.equal(r.json.token_uri, `${HERE}/fail/0`);
  assert.equal(r.json.name, null);
  assert.deepEqual(r.json.traits, []);
  assert.equal(fails(), 1);
  // Five more at once: the backoff (nft_retry_seconds = 2 in the test config) allows one
  // retry at most in that time, not five.
  await Promise.all([1, 2, 3, 4, 5].map(() => meta('flaky', 0)));
  assert.ok(fails() <= 2, `${fails()} fetches`);
  flaky = 200;
  await waitFor(async () => (await meta('flaky', 0)).json.name === 'Recovered', 'the retry', 20000);
});

test('SSRF: with allow_private_urls = false no loopback spelling is fetched; 200 with null metadata', async () => {
  const before = hits.length;
  for (const k of ['s1', 's2', 's3', 's4', 's5']) {
    const r = await meta(k, 0, '?network=ssrf');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.network, 'ssrf');
    assert.equal(r.json.standard, 'ERC1155');
    assert.ok(r.json.token_uri.endsWith('/{id}.json'));
    assert.equal(r.json.name, null, `${k} was not fetched`);
  }
  await sleep(300);
  assert.deepEqual(hits.slice(before).filter((p) => /^\/(ssrf\/[abcd]|redirect)\//.test(p)), []);
  // The control: the same server, reachable where private URLs are allowed.
  const ok = await meta('ctl', 0);
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.json.owner, getAddress(H));
  assert.ok(hits.includes(`/ssrf/ctl/${hex64(0)}.json`));
});

test('scopes: data:read needed; a test key on a mainnet is 403', async () => {
  const rpcOnly = newKey({ scopes: 'rpc:read' });
  assertError(assert, await api(`/v1/nfts/ethereum/owned/${H}`, { key: rpcOnly }), 403, 'forbidden');
  const data = newKey({ scopes: 'data:read' });
  assert.equal((await api(`/v1/nfts/ethereum/owned/${H}`, { key: data })).status, 200);
  assertError(assert, await owned(H, '?network=mainnet'), 403, 'forbidden');
  assertError(assert, await api(`/v1/nfts/ethereum/owned/${H}`, { key: null }), 401, 'unauthorized');
});
