// /v1/wallets end to end (SPEC.md sections 2-4, docs/wallets.md): counterfactual addresses
// against the devchain's SimpleAccountFactory v0.6, idempotent creation, validation, scopes,
// ownership, pagination, and the counterfactual -> deployed transition driven by a real
// UserOperation through EntryPoint.handleOps (the bundler does not exist yet, so the test is
// its own bundler). Dev accounts 10-19 of the mnemonic are this file's: owners, submitter and
// beneficiary, so no other test's nonces move.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  concat, createPublicClient, createWalletClient, encodeAbiParameters, encodeFunctionData,
  getAddress, http, keccak256, parseEther, parseGwei, toHex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { account as devAccount } from '../../devchain/dev.mjs';
import { admin, api, assertError, env, newKey, newKeyPair, onCluster, waitFor } from './helpers.mjs';

const artifact = (name) => JSON.parse(readFileSync(new URL(
  `./node_modules/@account-abstraction/contracts/artifacts/${name}.json`, import.meta.url), 'utf8')).abi;
const factoryAbi = artifact('SimpleAccountFactory');
const entryPointAbi = artifact('EntryPoint');

const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const FACTORY = getAddress(dc.account_factory);
const ENTRY_POINT = getAddress(dc.entry_point);
const chain = { ...foundry, rpcUrls: { default: { http: [env.chain] } } };
const pub = createPublicClient({ chain, transport: http(env.chain) });
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const U256_MAX = (1n << 256n) - 1n;

let key;	// enterprise: the 50-pair run and the list need more than the free plan's 10/s
before(() => { key = newKey({ plan: 'enterprise' }); });

const randomAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`);
// owner with one letter's case flipped so that it stays mixed case: a wrong EIP-55 checksum.
// (Flipping any letter breaks the checksum, but an all-upper or all-lower result would be a
// valid unchecksummed spelling, so such flips are passed over.)
function badChecksum(owner) {
  for (let addr = owner; ; addr = randomAddress()) {
    const body = addr.slice(2);
    for (let i = 0; i < body.length; i++) {
      const c = body[i];
      if (!/[a-fA-F]/.test(c)) continue;
      const f = c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase();
      const s = body.slice(0, i) + f + body.slice(i + 1);
      if (/[a-f]/.test(s) && /[A-F]/.test(s)) return `0x${s}`;
    }
  }
}
const randomU256 = () => BigInt(`0x${randomBytes(32).toString('hex')}`);
const create = (body, k = key) => api('/v1/wallets/create', { method: 'POST', key: k, body });
const factoryAddress = (owner, salt) => pub.readContract({
  address: FACTORY, abi: factoryAbi, functionName: 'getAddress', args: [owner, salt] });

// curl, as a shell user would call the API; returns { status, json }.
function curl(args, k = key) {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-sS', '-w', '\n%{http_code}', '-H', `X-API-Key: ${k}`, ...args],
      (err, stdout) => {
        if (err) return reject(err);
        const nl = stdout.lastIndexOf('\n');
        const text = stdout.slice(0, nl);
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: Number(stdout.slice(nl + 1)), text, json });
      });
  });
}

function assertWallet(w, { owner, status = 'counterfactual' }) {
  assert.equal(w.owner, getAddress(owner));
  assert.equal(w.address, getAddress(w.address), 'address in EIP-55 form');
  assert.equal(w.chain, 'ethereum');
  assert.equal(w.network, 'devnet');
  assert.equal(w.status, status);
  assert.equal(w.factory, FACTORY);
  assert.match(w.created_at, ISO);
}

// Rows of a query on the stack's database (the sqlite3 shell, read only).
function sql(query) {
  const out = execFileSync('sqlite3', ['-json', '-readonly', '-cmd', '.timeout 5000',
    join(env.dir, 'blockport.db'), query], { encoding: 'utf8' });
  return out.trim() ? JSON.parse(out) : [];
}

async function setBalance(address, eth) {
  await pub.request({ method: 'anvil_setBalance', params: [address, toHex(parseEther(eth))] });
}

test('create: 201 with the counterfactual wallet, then the same wallet with 200 (curl)', async () => {
  const owner = randomAddress();
  const body = JSON.stringify({ owner: owner.toLowerCase(), chain: 'ethereum', salt: '7' });
  const url = `${env.base}/v1/wallets/create`;
  const first = await curl(['-H', 'Content-Type: application/json', '-d', body, url]);
  assert.equal(first.status, 201, first.text);
  assertWallet(first.json, { owner });
  assert.equal(first.json.address, await factoryAddress(owner, 7n));
  assert.equal(first.json.salt, '7');
  assert.equal(first.json.init_code, concat([FACTORY, encodeFunctionData({
    abi: factoryAbi, functionName: 'createAccount', args: [owner, 7n] })]).toLowerCase());

  const again = await curl(['-H', 'Content-Type: application/json', '-d', body, url]);
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(again.json, first.json);
  // The same salt in hex, and the owner in checksummed form, name the same wallet.
  const hex = await create({ owner, chain: 'ethereum', salt: '0x07' });
  assert.equal(hex.status, 200, hex.text);
  assert.deepEqual(hex.json, first.json);
  const list = await curl([`${env.base}/v1/wallets?limit=100`]);
  assert.equal(list.status, 200, list.text);
  assert.equal(list.json.wallets.filter((w) => w.address === first.json.address).length, 1);
});

test('50 random (owner, salt) pairs: the address equals the factory\'s getAddress', async () => {
  for (let i = 0; i < 50; i++) {
    const owner = randomAddress();
    let salt;
    const body = { owner, chain: 'ethereum' };
    switch (i % 6) {
      case 0: salt = 0n; break;					// absent
      case 1: salt = randomU256(); body.salt = salt.toString(); break;
      case 2: salt = randomU256(); body.salt = toHex(salt); break;
      case 3: salt = BigInt(i); body.salt = String(i); break;
      case 4: salt = U256_MAX - BigInt(i); body.salt = salt.toString(); break;
      default: salt = BigInt(i) << 200n; body.salt = `0x${salt.toString(16).padStart(64, '0')}`;
    }
    if (i % 7 === 0) body.owner = owner.toLowerCase();
    const res = await create(body);
    assert.equal(res.status, 201, `${JSON.stringify(body)}: ${res.text}`);
    assertWallet(res.json, { owner });
    assert.equal(res.json.salt, salt.toString());
    assert.equal(res.json.address, await factoryAddress(owner, salt),
      `owner ${owner} salt ${salt}`);
  }
});

test('get: a counterfactual wallet has nonce 0 and its init_code', async () => {
  const owner = randomAddress();
  const made = await create({ owner, chain: 'ethereum', salt: '42' });
  assert.equal(made.status, 201, made.text);
  for (const a of [made.json.address, made.json.address.toLowerCase()]) {
    const res = await api(`/v1/wallets/${a}`, { key });
    assert.equal(res.status, 200, res.text);
    assertWallet(res.json, { owner });
    assert.equal(res.json.address, made.json.address);
    assert.equal(res.json.nonce, 0);
    assert.equal(res.json.init_code, made.json.init_code);
    assert.equal(res.json.deploy_tx, undefined);
    assert.equal(res.json.created_at, made.json.created_at);
  }
  const viaCurl = await curl([`${env.base}/v1/wallets/${made.json.address}?chain=ethereum`]);
  assert.equal(viaCurl.status, 200, viaCurl.text);
  assert.equal(viaCurl.json.nonce, 0);
  // A checksum that does not match, a short address, not an address: 400. Unknown: 404.
  const bad = badChecksum(made.json.address);
  assertError(assert, await api(`/v1/wallets/${bad}`, { key }), 400, 'invalid_request');
  assertError(assert, await api(`/v1/wallets/${made.json.address.slice(0, 41)}`, { key }), 400, 'invalid_request');
  assertError(assert, await api('/v1/wallets/nope', { key }), 400, 'invalid_request');
  assertError(assert, await api(`/v1/wallets/${randomAddress()}`, { key }), 404, 'not_found');
  assertError(assert, await api(`/v1/wallets/${made.json.address}?chain=nochain`, { key }), 400, 'invalid_request');
});

test('create: validation errors are 400 and name the field', async () => {
  const owner = randomAddress();
  const rows = [
    [{ chain: 'ethereum' }, 'owner'],
    [{ owner: '0x1234', chain: 'ethereum' }, 'owner'],
    [{ owner: 1234, chain: 'ethereum' }, 'owner'],
    [{ owner: `${owner}00`, chain: 'ethereum' }, 'owner'],
    [{ owner: owner.slice(2), chain: 'ethereum' }, 'owner'],
    [{ owner: '', chain: 'ethereum' }, 'owner'],
    [{ owner: null, chain: 'ethereum' }, 'owner'],
    [{ owner }, 'chain'],
    [{ owner, chain: 'nochain' }, 'chain'],
    [{ owner, chain: 7 }, 'chain'],
    [{ owner, chain: '' }, 'chain'],
    [{ owner, chain: 'solana' }, 'chain'],	// not EVM (or not configured): 400 either way
    [{ owner, chain: 'ethereum', network: 'nonet' }, 'network'],
    [{ owner, chain: 'ethereum', salt: '0x' }, 'salt'],
    [{ owner, chain: 'ethereum', salt: '-1' }, 'salt'],
    [{ owner, chain: 'ethereum', salt: '' }, 'salt'],
    [{ owner, chain: 'ethereum', salt: ' 1' }, 'salt'],
    [{ owner, chain: 'ethereum', salt: '1.5' }, 'salt'],
    [{ owner, chain: 'ethereum', salt: '0x1g' }, 'salt'],
    [{ owner, chain: 'ethereum', salt: (U256_MAX + 1n).toString() }, 'salt'],
    [{ owner, chain: 'ethereum', salt: `0x1${'0'.repeat(64)}` }, 'salt'],
    [{ owner, chain: 'ethereum', salt: '9'.repeat(78) }, 'salt'],
    [{ owner, chain: 'ethereum', salt: `0${U256_MAX}` }, 'salt'],
    [{ owner, chain: 'ethereum', salt: 5 }, 'salt'],
    [{ owner, chain: 'ethereum', salt: null }, 'salt'],
    [{ owner, chain: 'ethereum', salt: ['1'] }, 'salt'],
  ];
  rows.push([{ owner: badChecksum(owner), chain: 'ethereum' }, 'owner']);
  for (const [body, field] of rows) {
    const res = await create(body);
    assertError(assert, res, 400, 'invalid_request');
    assert.match(res.json.error.message, new RegExp(field), `${JSON.stringify(body)}: ${res.text}`);
  }
  // NULs hidden from cJSON's strings, raw or escaped.
  for (const raw of [
    `{"owner":"${owner}","chain":"ethereum","salt":"1\\u00002"}`,
    `{"owner":"${owner}","chain":"ethereum","salt":"1\u00002"}`,
    `{"owner":"${owner}\\u0000","chain":"ethereum"}`,
    `{"owner":"${owner}","chain":"ethereum\\u0000x"}`,
  ]) {
    const res = await api('/v1/wallets/create', { method: 'POST', key, body: raw,
      headers: { 'Content-Type': 'application/json' } });
    assertError(assert, res, 400, 'invalid_request');
    assert.match(res.json.error.message, /NUL/, raw);
  }
  for (const raw of ['not json', '[]', '"owner"', '{"owner":', '']) {
    const res = await api('/v1/wallets/create', { method: 'POST', key, body: raw,
      headers: { 'Content-Type': 'application/json' } });
    assertError(assert, res, 400, 'invalid_request');
  }
  // Unknown members are ignored.
  const ok = await create({ owner, chain: 'ethereum', salt: '3', colour: 'blue', x: { y: [1, null] } });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json.colour, undefined);
});

test('create: test keys stay on test networks, live keys on live ones', async () => {
  const owner = randomAddress();
  assertError(assert, await create({ owner, chain: 'ethereum', network: 'mainnet' }), 403, 'forbidden');
  // The devnet, named explicitly, is the same wallet as the default.
  const a = await create({ owner, chain: 'ethereum' });
  const b = await create({ owner, chain: 'ethereum', network: 'devnet' });
  assert.equal(a.status, 201, a.text);
  assert.equal(b.status, 200, b.text);
  assert.equal(b.json.address, a.json.address);
  // A live key makes its wallets on the mainnet (the test config's twin of the devchain) and
  // not on a test network: it could not see them there.
  const live = newKey({ plan: 'enterprise', live: true });
  const res = await create({ owner, chain: 'ethereum' }, live);
  assert.equal(res.status, 201, res.text);
  const refused = await create({ owner, chain: 'ethereum', network: 'devnet' }, live);
  assertError(assert, refused, 403, 'forbidden');
  assert.match(refused.json.error.message, /devnet/);
});

test('get and list: a key sees only its own kind of wallet (test or live network)', async () => {
  const k = newKeyPair();
  const mainnet = await create({ owner: randomAddress(), chain: 'ethereum' }, k.live);
  const devnet = await create({ owner: randomAddress(), chain: 'ethereum' }, k.test);
  assert.equal(mainnet.status, 201, mainnet.text);
  assert.equal(devnet.status, 201, devnet.text);
  const a = mainnet.json.address, b = devnet.json.address;

  const leak = await api(`/v1/wallets/${a}`, { key: k.test });
  assertError(assert, leak, 403, 'forbidden');
  assert.match(leak.json.error.message, /mainnet/);
  assertError(assert, await api(`/v1/wallets/${b}`, { key: k.live }), 403, 'forbidden');
  assert.equal((await api(`/v1/wallets/${a}`, { key: k.live })).status, 200);
  assert.equal((await api(`/v1/wallets/${b}`, { key: k.test })).status, 200);

  const tl = await api('/v1/wallets?chain=ethereum', { key: k.test });
  assert.equal(tl.status, 200, tl.text);
  assert.deepEqual(tl.json.wallets.map((w) => w.address), [b]);
  assert.equal(tl.json.total, 1);
  const ll = await api('/v1/wallets', { key: k.live });
  assert.deepEqual(ll.json.wallets.map((w) => w.address), [a]);
  assert.equal(ll.json.total, 1);
});

// Chains of the stack's config whose networks are all mainnets (polygon.mainnet in the test config).
function mainnetOnlyChains() {
  const nets = {};
  let cur = null;
  for (const line of readFileSync(env.config, 'utf8').split('\n')) {
    const sec = line.match(/^\[chain ([^.\]]+)\.[^\]]+\]/);
    if (sec) { cur = sec[1]; nets[cur] ??= []; nets[cur].push(false); continue; }
    if (/^\[/.test(line)) { cur = null; continue; }
    const kv = line.match(/^\s*testnet\s*=\s*(\S+)/);
    if (cur && kv) nets[cur][nets[cur].length - 1] = ['true', 'yes', 'on', '1'].includes(kv[1].toLowerCase());
  }
  return Object.keys(nets).filter((c) => nets[c].every((t) => !t));
}

test('create: a test key on a chain that only has a mainnet is 403', async () => {
  const chains = mainnetOnlyChains();
  assert.ok(chains.length > 0, 'the test config has a mainnet-only chain (polygon.mainnet)');
  for (const c of chains) {
    assertError(assert, await create({ owner: randomAddress(), chain: c }), 403, 'forbidden');
  }
});

test('scope: a key without wallets:manage gets 403 on every wallet endpoint', async () => {
  const k = newKey({ plan: 'enterprise', scopes: 'rpc:read,data:read' });
  const owner = randomAddress();
  assertError(assert, await create({ owner, chain: 'ethereum' }, k), 403, 'forbidden');
  assertError(assert, await api('/v1/wallets', { key: k }), 403, 'forbidden');
  assertError(assert, await api(`/v1/wallets/${owner}`, { key: k }), 403, 'forbidden');
  const only = newKey({ plan: 'enterprise', scopes: 'wallets:manage' });
  const res = await create({ owner, chain: 'ethereum' }, only);
  assert.equal(res.status, 201, res.text);
  assert.equal((await api(`/v1/wallets/${res.json.address}`, { key: only })).status, 200);
});

test('ownership: another account\'s wallet is 404 and absent from its list', async () => {
  const [a, a2] = twoKeys();
  const b = newKey({ plan: 'enterprise' });
  const owner = randomAddress();
  const made = await create({ owner, chain: 'ethereum', salt: '9' }, a);
  assert.equal(made.status, 201, made.text);
  assertError(assert, await api(`/v1/wallets/${made.json.address}`, { key: b }), 404, 'not_found');
  const listB = await api('/v1/wallets', { key: b });
  assert.equal(listB.status, 200);
  assert.equal(listB.json.total, 0);
  assert.deepEqual(listB.json.wallets, []);
  // Another key of the same account sees it, and finds it in its list.
  assert.equal((await api(`/v1/wallets/${made.json.address}`, { key: a2 })).status, 200);
  assert.equal((await api('/v1/wallets', { key: a2 })).json.wallets[0].address, made.json.address);
  // b may create the same (public) address for itself: its own row.
  const mine = await create({ owner, chain: 'ethereum', salt: '9' }, b);
  assert.equal(mine.status, 201, mine.text);
  assert.equal(mine.json.address, made.json.address);
  assert.equal((await api('/v1/wallets', { key: a })).json.total, 1);
  assert.equal((await api('/v1/wallets', { key: b })).json.total, 1);
});

// Two keys of one new enterprise account.
function twoKeys() {
  const email = `w-${randomBytes(6).toString('hex')}@example.test`;
  admin('account', 'create', '--email', email, '--plan', 'enterprise');
  return [admin('key', 'create', email, '--test'), admin('key', 'create', email, '--test')];
}

test('list: newest first, pages, totals and limit bounds', async () => {
  const k = newKey({ plan: 'enterprise' });
  const made = [];
  for (let i = 0; i < 27; i++) {
    const res = await create({ owner: randomAddress(), chain: 'ethereum', salt: String(i) }, k);
    assert.equal(res.status, 201, res.text);
    made.push(res.json);
  }
  const newest = made.map((w) => w.address).reverse();
  const all = await api('/v1/wallets', { key: k });
  assert.equal(all.status, 200, all.text);
  assert.equal(all.json.page, 1);
  assert.equal(all.json.total, 27);
  assert.equal(all.json.wallets.length, 25, 'default limit 25');
  assert.deepEqual(all.json.wallets.map((w) => w.address), newest.slice(0, 25));
  for (const w of all.json.wallets) {
    for (const f of ['address', 'owner', 'chain', 'status', 'created_at']) assert.ok(f in w, f);
    assert.equal(w.status, 'counterfactual');
    assert.match(w.created_at, ISO);
  }
  const p2 = await api('/v1/wallets?page=2', { key: k });
  assert.deepEqual(p2.json.wallets.map((w) => w.address), newest.slice(25));
  const seen = [];
  for (let page = 1; page <= 10; page++) {
    const res = await api(`/v1/wallets?page=${page}&limit=10`, { key: k });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.page, page);
    assert.equal(res.json.total, 27);
    if (page > 3) assert.deepEqual(res.json.wallets, [], 'past the end: empty');
    seen.push(...res.json.wallets.map((w) => w.address));
  }
  assert.deepEqual(seen, newest);
  assert.equal((await api('/v1/wallets?limit=100', { key: k })).json.wallets.length, 27);
  assert.equal((await api('/v1/wallets?limit=1&page=27', { key: k })).json.wallets[0].address, newest[26]);
  const filtered = await curl([`${env.base}/v1/wallets?chain=ethereum&limit=5`], k);
  assert.equal(filtered.status, 200, filtered.text);
  assert.equal(filtered.json.total, 27);
  assert.equal(filtered.json.wallets.length, 5);
  for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=', 'limit=01',
    'page=0', 'page=-1', 'page=abc', 'page=99999999999999999999']) {
    const res = await api(`/v1/wallets?${q}`, { key: k });
    assertError(assert, res, 400, 'invalid_request');
    assert.match(res.json.error.message, new RegExp(q.split('=')[0]), q);
  }
  assertError(assert, await api('/v1/wallets?chain=nochain', { key: k }), 400, 'invalid_request');
});

// The v0.6 userOpHash (shared/notes/devchain.md), computed here to check the EntryPoint's.
function userOpHash(op) {
  const packed = encodeAbiParameters(
    ['address', 'uint256', 'bytes32', 'bytes32', 'uint256', 'uint256', 'uint256', 'uint256',
      'uint256', 'bytes32'].map((type) => ({ type })),
    [op.sender, op.nonce, keccak256(op.initCode), keccak256(op.callData), op.callGasLimit,
      op.verificationGasLimit, op.preVerificationGas, op.maxFeePerGas, op.maxPriorityFeePerGas,
      keccak256(op.paymasterAndData)]);
  return keccak256(encodeAbiParameters(
    [{ type: 'bytes32' }, { type: 'address' }, { type: 'uint256' }],
    [keccak256(packed), ENTRY_POINT, BigInt(dc.chain_id)]));
}

test('deployment: the first UserOperation with initCode turns the wallet deployed',
  { skip: onCluster('reads the SQLite file of one head') }, async () => {
  const owner = privateKeyToAccount(devAccount(11).privateKey);
  const submitter = privateKeyToAccount(devAccount(12).privateKey);
  const beneficiary = getAddress(devAccount(13).address);
  const salt = randomU256();
  const made = await create({ owner: owner.address, chain: 'ethereum', salt: salt.toString() });
  assert.equal(made.status, 201, made.text);
  const sender = made.json.address;
  assert.equal(sender, await factoryAddress(owner.address, salt));
  assert.equal((await api(`/v1/wallets/${sender}`, { key })).json.status, 'counterfactual');

  // Prefund the counterfactual address (the op pays for itself) and the submitter's gas.
  await setBalance(sender, '1');
  await setBalance(submitter.address, '10');
  const base = (await pub.getBlock()).baseFeePerGas ?? parseGwei('1');
  const op = {
    sender,
    nonce: 0n,
    initCode: made.json.init_code,
    callData: '0x',
    callGasLimit: 100000n,
    verificationGasLimit: 1500000n,
    preVerificationGas: 60000n,
    maxFeePerGas: base * 2n + parseGwei('1'),
    maxPriorityFeePerGas: parseGwei('1'),
    paymasterAndData: '0x',
    signature: '0x',
  };
  const hash = await pub.readContract({ address: ENTRY_POINT, abi: entryPointAbi,
    functionName: 'getUserOpHash', args: [op] });
  assert.equal(hash, userOpHash(op));
  op.signature = await owner.signMessage({ message: { raw: hash } });	// EIP-191 personal
  const wallet = createWalletClient({ account: submitter, chain, transport: http(env.chain) });
  const tx = await wallet.writeContract({ address: ENTRY_POINT, abi: entryPointAbi,
    functionName: 'handleOps', args: [[op], beneficiary], gas: 3000000n });
  const receipt = await pub.waitForTransactionReceipt({ hash: tx });
  assert.equal(receipt.status, 'success');
  assert.ok((await pub.getCode({ address: sender }))?.length > 2, 'code at the wallet');

  const got = await waitFor(async () => {
    const res = await api(`/v1/wallets/${sender}`, { key });
    assert.equal(res.status, 200, res.text);
    return res.json.status === 'deployed' ? res.json : null;
  }, 'the wallet to be deployed');
  assertWallet(got, { owner: owner.address, status: 'deployed' });
  assert.equal(got.deploy_tx, tx.toLowerCase());
  assert.match(got.deployed_at, ISO);
  const block = await pub.getBlock({ blockNumber: receipt.blockNumber });
  assert.equal(got.deployed_at, new Date(Number(block.timestamp) * 1000).toISOString().replace(/\.\d+Z$/, 'Z'));
  const nonce = await pub.readContract({ address: ENTRY_POINT, abi: entryPointAbi,
    functionName: 'getNonce', args: [sender, 0n] });
  assert.equal(nonce, 1n);
  assert.equal(got.nonce, 1);
  assert.equal(got.init_code, undefined);

  // The list and a repeated create agree; a second get answers from what was stored.
  const list = await api('/v1/wallets?limit=100', { key });
  assert.equal(list.json.wallets.find((w) => w.address === sender).status, 'deployed');
  const again = await create({ owner: owner.address, chain: 'ethereum', salt: `0x${salt.toString(16)}` });
  assert.equal(again.status, 200, again.text);
  assert.equal(again.json.status, 'deployed');
  assert.equal(again.json.created_at, made.json.created_at);
  const second = await api(`/v1/wallets/${sender}`, { key });
  assert.deepEqual(second.json, got);

  // The indexer (run in loop mode by the stack) records the same deployment from its logs.
  const row = await waitFor(() => sql(`SELECT tx_hash, factory FROM index_account_deployments
    WHERE sender = '${sender.toLowerCase()}'`)[0], 'the indexer\'s AccountDeployed row');
  assert.equal(row.tx_hash, got.deploy_tx);
  assert.equal(row.factory, FACTORY.toLowerCase());
});

test('deployment: a wallet already on chain is created deployed, with its deploy_tx', async () => {
  // Deployed straight through the factory (no UserOperation, so no AccountDeployed event).
  const deployer = privateKeyToAccount(devAccount(14).privateKey);
  await setBalance(deployer.address, '10');
  const owner = randomAddress();
  const salt = 77n;
  const wallet = createWalletClient({ account: deployer, chain, transport: http(env.chain) });
  const tx = await wallet.writeContract({ address: FACTORY, abi: factoryAbi,
    functionName: 'createAccount', args: [owner, salt], gas: 1000000n });
  assert.equal((await pub.waitForTransactionReceipt({ hash: tx })).status, 'success');

  const made = await create({ owner, chain: 'ethereum', salt: '77' });
  assert.equal(made.status, 201, made.text);
  assertWallet(made.json, { owner, status: 'deployed' });
  assert.equal(made.json.address, await factoryAddress(owner, salt));
  assert.equal(made.json.init_code, undefined);
  const got = await api(`/v1/wallets/${made.json.address}`, { key });
  assert.equal(got.status, 200, got.text);
  assert.equal(got.json.status, 'deployed');
  assert.equal(got.json.deploy_tx, tx.toLowerCase());
  assert.match(got.json.deployed_at, ISO);
  assert.equal(got.json.nonce, 0);
});
