// /v1/gas end to end (SPEC.md sections 2-5, docs/gas.md): price estimates against blocks of
// transactions with known tips, policies (validation, states, ownership, lists, spend), and
// sponsorship: every refusal, parallel requests against max_per_user_per_day, and a sponsored
// first UserOperation of a counterfactual wallet that lands through EntryPoint.handleOps (the
// bundler does not exist yet, so the test is its own bundler). Dev accounts 20-29 of the
// mnemonic are this file's (funded with anvil_setBalance), so no other test's nonces move.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  createPublicClient, createWalletClient, decodeEventLog, encodeFunctionData, formatUnits,
  getAddress, http, parseEther, parseGwei, toHex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { account as devAccount } from '../../devchain/dev.mjs';
import { api, assertError, env, newKey, newKeyPair, sleep, waitFor } from './helpers.mjs';

const artifact = (name) => JSON.parse(readFileSync(new URL(
  `./node_modules/@account-abstraction/contracts/artifacts/${name}.json`, import.meta.url), 'utf8')).abi;
const entryPointAbi = artifact('EntryPoint');
const accountAbi = artifact('SimpleAccount');
const erc20Abi = [
  { type: 'function', name: 'transfer', stateMutability: 'nonpayable', inputs: [{ type: 'address' }, { type: 'uint256' }], outputs: [{ type: 'bool' }] },
  { type: 'function', name: 'approve', stateMutability: 'nonpayable', inputs: [{ type: 'address' }, { type: 'uint256' }], outputs: [{ type: 'bool' }] },
];

const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const ENTRY_POINT = getAddress(dc.entry_point);
const PAYMASTER = getAddress(dc.paymaster);
const TOKEN = getAddress(dc.tokens.erc20_18);
const OTHER = getAddress(dc.tokens.erc20_6);
const chain = { ...foundry, rpcUrls: { default: { http: [env.chain] } } };
const pub = createPublicClient({ chain, transport: http(env.chain) });
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const GWEI = /^\d+(\.\d{1,9})?$/;
const USD = /^\d+(\.\d+)?$/;

let key;	// enterprise: the parallel run and the refusals need more than the free plan's 10/s
let other;	// another account
before(() => {
  key = newKey({ plan: 'enterprise' });
  other = newKey({ plan: 'enterprise' });
});

const rpc = (method, params = []) => pub.request({ method, params });
const setBalance = (address, eth) => rpc('anvil_setBalance', [address, toHex(parseEther(eth))]);
const createPolicy = (body, k = key) => api('/v1/gas/policies', { method: 'POST', key: k, body });
const sponsor = (body, k = key) => api('/v1/gas/sponsor', { method: 'POST', key: k, body });
const gwei = (s) => parseGwei(s);


async function policy(rules, k = key, chainName = 'ethereum') {
  const res = await createPolicy({ name: `p-${Math.random()}`, chain: chainName, rules }, k);
  assert.equal(res.status, 201, res.text);
  return res.json.id;
}

// A UserOperation as clients send it (hex quantities) from sender calling data.
function userOp(sender, callData, extra = {}) {
  return {
    sender,
    nonce: '0x0',
    initCode: '0x',
    callData,
    callGasLimit: toHex(100000),
    verificationGasLimit: toHex(1500000),
    preVerificationGas: toHex(60000),
    maxFeePerGas: toHex(gwei('2')),
    maxPriorityFeePerGas: toHex(gwei('1')),
    paymasterAndData: '0x',
    signature: '0x',
    ...extra,
  };
}
const transferCall = (to = TOKEN) => encodeFunctionData({ abi: accountAbi, functionName: 'execute',
  args: [to, 0n, encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [devAccount(21).address, 0n] })] });
const approveCall = () => encodeFunctionData({ abi: accountAbi, functionName: 'execute',
  args: [TOKEN, 0n, encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [devAccount(21).address, 1n] })] });
const randomSender = () => privateKeyToAccount(generatePrivateKey()).address;

test('prices: estimates from blocks of transactions with varied tips, ordered and in range', async () => {
  const senders = [20, 21, 22, 23, 24].map((i) => privateKeyToAccount(devAccount(i).privateKey));
  for (const s of senders) await setBalance(s.address, '10');
  const tips = [];
  const nonces = await Promise.all(senders.map((s) => pub.getTransactionCount({ address: s.address, blockTag: 'pending' })));
  await rpc('evm_setAutomine', [false]);
  let last;
  try {
    for (let b = 0; b < 5; b++) {
      for (let i = 0; i < senders.length; i++) {
        const tip = gwei(String(1 + ((b * 7 + i * 3) % 9)));	// 1..9 gwei, varied per block
        tips.push(tip);
        const w = createWalletClient({ account: senders[i], chain, transport: http(env.chain) });
        await w.sendTransaction({ to: senders[i].address, value: 0n, gas: 21000n, nonce: nonces[i]++,
          maxPriorityFeePerGas: tip, maxFeePerGas: gwei('100') });
      }
      await rpc('evm_mine');
    }
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  last = await pub.getBlockNumber();
  const minTip = tips.reduce((a, b) => (a < b ? a : b));
  const maxTip = tips.reduce((a, b) => (a > b ? a : b));

  const got = await waitFor(async () => {
    const res = await api('/v1/gas/ethereum/prices', { key });
    assert.equal(res.status, 200, res.text);
    return BigInt(res.json.block_number) === last ? res.json : null;
  }, 'a sample of the last block', 20000);
  assert.deepEqual(Object.keys(got), ['chain', 'block_number', 'base_fee_gwei', 'estimates', 'updated_at']);
  assert.equal(got.chain, 'ethereum');
  assert.match(got.updated_at, ISO);
  assert.match(got.base_fee_gwei, GWEI);
  const hist = await rpc('eth_feeHistory', ['0x1', toHex(last), []]);
  assert.equal(gwei(got.base_fee_gwei), BigInt(hist.baseFeePerGas[1]), 'the next block\'s base fee');
  const levels = ['slow', 'standard', 'fast'];
  assert.deepEqual(Object.keys(got.estimates), levels);
  let prev;
  for (const l of levels) {
    const e = got.estimates[l];
    assert.match(e.max_fee_gwei, GWEI);
    assert.match(e.max_priority_fee_gwei, GWEI);
    assert.ok(Number.isInteger(e.estimated_seconds) && e.estimated_seconds > 0);
    const prio = gwei(e.max_priority_fee_gwei), max = gwei(e.max_fee_gwei);
    assert.ok(prio >= minTip && prio <= maxTip, `${l} tip ${e.max_priority_fee_gwei} in the observed range`);
    assert.ok(max >= gwei(got.base_fee_gwei) + prio, `${l} max fee covers base fee and tip`);
    if (prev) {
      assert.ok(prio >= gwei(prev.max_priority_fee_gwei), `${l} tip >= the level below`);
      assert.ok(max >= gwei(prev.max_fee_gwei), `${l} max fee >= the level below`);
      assert.ok(e.estimated_seconds <= prev.estimated_seconds);
    }
    prev = e;
  }
  assert.ok(gwei(got.estimates.fast.max_priority_fee_gwei) > gwei(got.estimates.slow.max_priority_fee_gwei),
    'varied tips give different levels');
});

test('prices: scopes, unknown chains, stale samples sampled on demand', async () => {
  const dataOnly = newKey({ scopes: 'data:read' });
  const gasOnly = newKey({ scopes: 'gas:manage' });
  assert.equal((await api('/v1/gas/ethereum/prices', { key: dataOnly })).status, 200);
  assertError(assert, await api('/v1/gas/ethereum/prices', { key: gasOnly }), 403, 'forbidden');
  assertError(assert, await api('/v1/gas/ethereum/prices', { key: null }), 401, 'unauthorized');
  assertError(assert, await api('/v1/gas/nochain/prices', { key }), 404, 'not_found');
  assertError(assert, await api('/v1/gas/solana/prices', { key }), 404, 'not_found');
  // gas_sample_max_age is 1 s in the test config: a new block shows within it.
  await rpc('evm_mine');
  const head = await pub.getBlockNumber();
  await sleep(1100);
  const res = await api('/v1/gas/ethereum/prices', { key });
  assert.ok(BigInt(res.json.block_number) >= head, res.text);
});

test('policies: create, validation naming the key, get with spend, list, patch, delete', async () => {
  const rules = { max_gas_usd: '5.00', max_per_user_per_day: 3,
    allowed_contracts: [TOKEN.toLowerCase()], allowed_methods: ['transfer(address,uint256)', '0x095ea7b3'],
    rate_limit: { count: 10, period_seconds: 60 } };
  const res = await createPolicy({ name: 'Onboarding', chain: 'ethereum', rules });
  assert.equal(res.status, 201, res.text);
  const p = res.json;
  assert.match(p.id, /^gp_[0-9a-f]{24}$/);
  assert.equal(p.name, 'Onboarding');
  assert.equal(p.chain, 'ethereum');
  assert.equal(p.status, 'active');
  assert.match(p.created_at, ISO);
  assert.deepEqual(p.rules, { ...rules, allowed_contracts: [TOKEN] });

  const bad = [
    [{}, /rules/],
    [{ max_gas_usd: '0' }, /max_gas_usd/], [{ max_gas_usd: 5 }, /max_gas_usd/],
    [{ max_gas_usd: '-1' }, /max_gas_usd/], [{ max_gas_usd: '1e3' }, /max_gas_usd/],
    [{ max_per_user_per_day: 0 }, /max_per_user_per_day/], [{ max_per_user_per_day: 1.5 }, /max_per_user_per_day/],
    [{ max_per_user_per_day: '3' }, /max_per_user_per_day/],
    [{ allowed_contracts: [] }, /allowed_contracts/], [{ allowed_contracts: ['0x1234'] }, /allowed_contracts/],
    [{ allowed_contracts: [TOKEN.slice(0, 2) + TOKEN.slice(2).replace(/[a-f]/, (c) => c.toUpperCase())] }, /allowed_contracts/],
    [{ allowed_methods: ['transfer(address, uint256)'] }, /allowed_methods/],
    [{ allowed_methods: ['0xa9059c'] }, /allowed_methods/], [{ allowed_methods: [7] }, /allowed_methods/],
    [{ rate_limit: { count: 0, period_seconds: 60 } }, /rate_limit/], [{ rate_limit: { count: 1 } }, /rate_limit/],
    [{ rate_limit: 5 }, /rate_limit/],
    [{ max_gas_usd: '1', colour: 'red' }, /colour/],
  ];
  for (const [r, re] of bad) {
    const b = await createPolicy({ name: 'x', chain: 'ethereum', rules: r });
    assertError(assert, b, 400, 'invalid_request');
    assert.match(b.json.error.message, re, JSON.stringify(r));
  }
  for (const [body, re] of [[{ chain: 'ethereum', rules }, /name/], [{ name: 'x'.repeat(101), chain: 'ethereum', rules }, /name/],
    [{ name: 'x', rules }, /chain/], [{ name: 'x', chain: 'nochain', rules }, /chain/], [{ name: 'x', chain: 'solana', rules }, /chain/],
    [{ name: 'x', chain: 'ethereum' }, /rules/]]) {
    const b = await createPolicy(body);
    assertError(assert, b, 400, 'invalid_request');
    assert.match(b.json.error.message, re);
  }
  assert.equal((await createPolicy({ name: 'é'.repeat(100), chain: 'ethereum', rules })).status, 201);

  const got = await api(`/v1/gas/policies/${p.id}`, { key });
  assert.equal(got.status, 200);
  assert.deepEqual(got.json.spend, { today: { count: 0, usd: '0' }, total: { count: 0, usd: '0' } });
  assertError(assert, await api(`/v1/gas/policies/${p.id}`, { key: other }), 404, 'not_found');

  const paused = await api(`/v1/gas/policies/${p.id}`, { method: 'PATCH', key, body: { status: 'paused', name: 'Renamed' } });
  assert.equal(paused.status, 200, paused.text);
  assert.equal(paused.json.status, 'paused');
  assert.equal(paused.json.name, 'Renamed');
  assert.deepEqual(paused.json.rules, p.rules);
  const b = await api(`/v1/gas/policies/${p.id}`, { method: 'PATCH', key, body: { status: 'deleted' } });
  assertError(assert, b, 400, 'invalid_request');
  assertError(assert, await api(`/v1/gas/policies/${p.id}`, { method: 'PATCH', key, body: { rules: { bogus: 1 } } }), 400, 'invalid_request');
  assertError(assert, await api(`/v1/gas/policies/${p.id}`, { method: 'PATCH', key: other, body: { status: 'active' } }), 404, 'not_found');
  const patched = await api(`/v1/gas/policies/${p.id}`, { method: 'PATCH', key, body: { rules: { max_gas_usd: '1' } } });
  assert.deepEqual(patched.json.rules, { max_gas_usd: '1' });

  const list = await api('/v1/gas/policies?limit=100', { key });
  assert.equal(list.status, 200);
  assert.ok(list.json.policies.some((x) => x.id === p.id));
  assert.equal(list.json.page, 1);
  assert.equal(list.json.total, list.json.policies.length);
  const onlyPaused = await api('/v1/gas/policies?status=paused', { key });
  assert.ok(onlyPaused.json.policies.every((x) => x.status === 'paused'));
  assert.ok(onlyPaused.json.policies.some((x) => x.id === p.id));
  assertError(assert, await api('/v1/gas/policies?status=deleted', { key }), 400, 'invalid_request');
  assertError(assert, await api('/v1/gas/policies?limit=101', { key }), 400, 'invalid_request');
  assert.equal((await api('/v1/gas/policies', { key: other })).json.policies.some((x) => x.id === p.id), false);
  const page2 = await api('/v1/gas/policies?limit=1&page=2', { key });
  assert.equal(page2.json.policies.length, 1);

  assertError(assert, await api(`/v1/gas/policies/${p.id}`, { method: 'DELETE', key: other }), 404, 'not_found');
  const del = await api(`/v1/gas/policies/${p.id}`, { method: 'DELETE', key });
  assert.deepEqual(del.json, { id: p.id, deleted: true });
  assertError(assert, await api(`/v1/gas/policies/${p.id}`, { key }), 404, 'not_found');
  assertError(assert, await api(`/v1/gas/policies/${p.id}`, { method: 'DELETE', key }), 404, 'not_found');
});

test('policies: a key sees and changes only its own kind (test or live network)', async () => {
  const k = newKeyPair();
  const rules = { max_gas_usd: '5' };
  const live = await createPolicy({ name: 'live', chain: 'ethereum', rules }, k.live);
  assert.equal(live.status, 201, live.text);
  assert.equal(live.json.network, 'mainnet');
  const test = await createPolicy({ name: 'test', chain: 'ethereum', rules }, k.test);
  assert.equal(test.json.network, 'devnet');
  const L = live.json.id, T = test.json.id;
  // A leaked test key can neither read nor loosen nor remove the live policy.
  for (const [method, body] of [['GET'], ['PATCH', { rules: { max_per_user_per_day: 1000 } }], ['DELETE']]) {
    const res = await api(`/v1/gas/policies/${L}`, { method, key: k.test, body });
    assertError(assert, res, 403, 'forbidden');
    assert.match(res.json.error.message, /mainnet/);
    assertError(assert, await api(`/v1/gas/policies/${T}`, { method: method === 'DELETE' ? 'GET' : method, key: k.live, body }), 403, 'forbidden');
  }
  const still = await api(`/v1/gas/policies/${L}`, { key: k.live });
  assert.deepEqual(still.json.rules, rules, 'unchanged by the test key');
  const refused = await sponsor({ chain: 'ethereum', network: 'mainnet', policy_id: L,
    user_operation: userOp(randomSender(), '0x') }, k.test);
  assertError(assert, refused, 403, 'forbidden');
  assert.deepEqual((await api('/v1/gas/policies', { key: k.test })).json.policies.map((p) => p.id), [T]);
  assert.deepEqual((await api('/v1/gas/policies', { key: k.live })).json.policies.map((p) => p.id), [L]);
  assertError(assert, await createPolicy({ name: 'x', chain: 'ethereum', network: 'mainnet', rules }, k.test), 403, 'forbidden');
  assertError(assert, await createPolicy({ name: 'x', chain: 'ethereum', network: 'devnet', rules }, k.live), 403, 'forbidden');
  assertError(assert, await api(`/v1/gas/policies/${T}`, { method: 'PATCH', key: k.test, body: { network: 'failover' } }), 400, 'invalid_request');
});

test('policies and sponsorship: scopes', async () => {
  const dataOnly = newKey({ scopes: 'data:read' });
  assertError(assert, await createPolicy({ name: 'x', chain: 'ethereum', rules: { max_gas_usd: '1' } }, dataOnly), 403, 'forbidden');
  assertError(assert, await api('/v1/gas/policies', { key: dataOnly }), 403, 'forbidden');
  assertError(assert, await sponsor({}, dataOnly), 403, 'forbidden');
  const gasOnly = newKey({ scopes: 'gas:manage' });
  assert.equal((await createPolicy({ name: 'x', chain: 'ethereum', rules: { max_gas_usd: '1' } }, gasOnly)).status, 201);
});

// A counterfactual wallet of the configured factory: { sender, initCode } of its first op.
async function wallet() {
  const made = await api('/v1/wallets/create', { method: 'POST', key, body: { owner: randomSender(), chain: 'ethereum' } });
  assert.equal(made.status, 201, made.text);
  return { sender: made.json.address, initCode: made.json.init_code };
}

test('sponsorship: contract and method rules decode only accounts Blockport knows', async () => {
  const { sender, initCode } = await wallet();
  const contracts = await policy({ allowed_contracts: [TOKEN] });
  const methods = await policy({ allowed_methods: ['transfer(address,uint256)'] });
  const go = (id, op) => sponsor({ chain: 'ethereum', policy_id: id, user_operation: op });
  assert.equal((await go(contracts, userOp(sender, transferCall(), { initCode }))).status, 200);
  // A sender with code that is not the SimpleAccount proxy (the token itself), a factory that is
  // not the configured one, and a sender with neither code nor initCode: execute's target
  // proves nothing there, so the rule refuses them, naming itself.
  const other = `${TOKEN}${initCode.slice(42)}`;
  for (const [id, op, re] of [
    [contracts, userOp(TOKEN, transferCall()), /^allowed_contracts: the sender is not an account/],
    [methods, userOp(sender, transferCall(), { initCode: other }), /^allowed_methods: the sender is not an account/],
    [contracts, userOp(randomSender(), transferCall()), /^allowed_contracts: the sender is not an account/],
  ]) {
    const res = await go(id, op);
    assertError(assert, res, 403, 'forbidden');
    assert.match(res.json.error.message, re);
  }
  // Without such rules any sender may be sponsored: nothing is decoded.
  assert.equal((await go(await policy({ max_gas_usd: '100' }), userOp(TOKEN, '0x'))).status, 200);
});

test('sponsorship: every refusal names its rule; bad operations name the field', async () => {
  const { sender, initCode } = await wallet();
  const contracts = await policy({ allowed_contracts: [TOKEN] });
  const methods = await policy({ allowed_methods: ['transfer(address,uint256)'] });
  const cheap = await policy({ max_gas_usd: '0.01' });
  const perUser = await policy({ max_per_user_per_day: 2 });
  const rate = await policy({ rate_limit: { count: 2, period_seconds: 3600 } });
  const failover = (await createPolicy({ name: 'f', chain: 'ethereum', network: 'failover', rules: { max_gas_usd: '100' } })).json.id;
  const theirs = await policy({ max_gas_usd: '100' }, other);
  const ok = (id, op = userOp(sender, transferCall(), { initCode })) => sponsor({ chain: 'ethereum', policy_id: id, user_operation: op });
  const refused = async (res, re) => {
    assertError(assert, res, 403, 'forbidden');
    assert.match(res.json.error.message, re);
  };

  assert.equal((await ok(contracts)).status, 200);
  await refused(await ok(contracts, userOp(sender, transferCall(OTHER), { initCode })), /^allowed_contracts/);
  await refused(await ok(contracts, userOp(sender, '0xdeadbeef', { initCode })), /^allowed_contracts/);
  assert.equal((await ok(methods)).status, 200);
  await refused(await ok(methods, userOp(sender, approveCall(), { initCode })), /^allowed_methods/);
  const batch = encodeFunctionData({ abi: accountAbi, functionName: 'executeBatch',
    args: [[TOKEN, TOKEN], [encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [sender, 0n] }),
      encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [sender, 0n] })]] });
  await refused(await ok(methods, userOp(sender, batch, { initCode })), /^allowed_methods/);
  await refused(await ok(cheap), /^max_gas_usd/);
  const small = await ok(cheap, userOp(sender, transferCall(), { initCode, callGasLimit: '0x1', verificationGasLimit: '0x1',
    preVerificationGas: '0x1', maxFeePerGas: '0x1' }));
  assert.equal(small.status, 200, small.text);
  assert.equal(small.json.sponsored_gas_usd, '0.000000000000015');	// 5 gas x 1 wei x 3000 USD
  assert.equal((await ok(perUser)).status, 200);
  assert.equal((await ok(perUser)).status, 200);
  await refused(await ok(perUser), /^max_per_user_per_day/);
  assert.equal((await ok(perUser, userOp(randomSender(), transferCall()))).status, 200, 'another sender');
  assert.equal((await ok(rate, userOp(randomSender(), transferCall()))).status, 200);
  assert.equal((await ok(rate, userOp(randomSender(), transferCall()))).status, 200);
  await refused(await ok(rate, userOp(randomSender(), transferCall())), /^rate_limit/);

  await api(`/v1/gas/policies/${methods}`, { method: 'PATCH', key, body: { status: 'paused' } });
  const p = await ok(methods);
  assertError(assert, p, 403, 'forbidden');
  assert.match(p.json.error.message, /paused/);
  await api(`/v1/gas/policies/${methods}`, { method: 'PATCH', key, body: { status: 'active' } });
  assert.equal((await ok(methods)).status, 200, 'active again');
  assertError(assert, await ok(theirs), 404, 'not_found');
  const wrong = await ok(failover);
  assertError(assert, wrong, 400, 'invalid_request');
  assert.match(wrong.json.error.message, /^network/);
  assertError(assert, await ok('gp_000000000000000000000000'), 404, 'not_found');

  const op = userOp(sender, transferCall(), { initCode });
  for (const [field, value] of [['sender', '0x1234'], ['nonce', '0x'], ['nonce', 5], ['callData', '0x123'],
    ['maxFeePerGas', undefined], ['callGasLimit', `0x${'1'.repeat(65)}`], ['initCode', 'zz'], ['signature', '0xz1']]) {
    const bad = await ok(contracts, { ...op, [field]: value });
    assertError(assert, bad, 400, 'invalid_request');
    assert.match(bad.json.error.message, new RegExp(`user_operation\\.${field}`), `${field}: ${bad.text}`);
  }
  const missing = await sponsor({ chain: 'ethereum', user_operation: op });
  assertError(assert, missing, 400, 'invalid_request');
  assert.match(missing.json.error.message, /policy_id/);

  const spend = await api(`/v1/gas/policies/${perUser}`, { key });
  assert.equal(spend.json.spend.today.count, 3);
  assert.equal(spend.json.spend.total.count, 3);
  assert.match(spend.json.spend.total.usd, USD);
  assert.ok(Number(spend.json.spend.total.usd) > 0);
});

// Each process keeps copies of the policies it sponsors under: a rule loosened (or tightened)
// through any of them holds at once in all, parallel requests spreading over every process.
test('sponsorship: a changed rule holds at once in every process', async () => {
  const id = await policy({ max_gas_usd: '0.01' });
  const send = (n) => Promise.all(Array.from({ length: n }, () =>
    sponsor({ chain: 'ethereum', policy_id: id, user_operation: userOp(randomSender(), transferCall()) })));
  for (const r of await send(12)) {
    assertError(assert, r, 403, 'forbidden');
    assert.match(r.json.error.message, /^max_gas_usd/);
  }
  const up = await api(`/v1/gas/policies/${id}`, { method: 'PATCH', key, body: { rules: { max_gas_usd: '1000' } } });
  assert.equal(up.status, 200, up.text);
  const loose = await send(12);
  assert.deepEqual(loose.map((r) => r.status), Array(12).fill(200), loose.map((r) => r.text).join('\n'));
  const down = await api(`/v1/gas/policies/${id}`, { method: 'PATCH', key, body: { rules: { max_gas_usd: '0.01' } } });
  assert.equal(down.status, 200, down.text);
  const strict = await send(12);
  assert.deepEqual(strict.map((r) => r.status), Array(12).fill(403), strict.map((r) => r.text).join('\n'));
});

test('sponsorship: parallel requests never pass max_per_user_per_day', async () => {
  const id = await policy({ max_per_user_per_day: 3 });
  const sender = randomSender();
  const results = await Promise.all(Array.from({ length: 12 }, () =>
    sponsor({ chain: 'ethereum', policy_id: id, user_operation: userOp(sender, transferCall()) })));
  const statuses = results.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 200, 200, ...Array(9).fill(403)], results.map((r) => r.text).join('\n'));
  const got = await api(`/v1/gas/policies/${id}`, { key });
  assert.equal(got.json.spend.total.count, 3);
});

test('sponsorship: the plan\'s sponsor_usd_per_day bounds an account, parallel requests included', async () => {
  const small = newKey({ plan: 'sponsor' });	// 50 USD a day; each op below is 27.96 USD worst case
  const res = await createPolicy({ name: 'b', chain: 'ethereum', rules: { max_gas_usd: '100' } }, small);
  assert.equal(res.status, 201, res.text);
  const results = await Promise.all(Array.from({ length: 6 }, () =>
    sponsor({ chain: 'ethereum', policy_id: res.json.id, user_operation: userOp(randomSender(), '0x') }, small)));
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 403, 403, 403, 403, 403], results.map((r) => r.text).join('\n'));
  const refused = results.find((r) => r.status === 403);
  assertError(assert, refused, 403, 'forbidden');
  assert.match(refused.json.error.message, /^sponsor_usd_per_day/);
  const got = await api(`/v1/gas/policies/${res.json.id}`, { key: small });
  assert.equal(got.json.spend.total.count, 1);
});

test('sponsorship: a first UserOperation of a counterfactual wallet lands through handleOps', async () => {
  const owner = privateKeyToAccount(generatePrivateKey());
  const submitter = privateKeyToAccount(devAccount(25).privateKey);
  const beneficiary = getAddress(devAccount(26).address);
  await setBalance(submitter.address, '10');
  const made = await api('/v1/wallets/create', { method: 'POST', key, body: { owner: owner.address, chain: 'ethereum' } });
  assert.equal(made.status, 201, made.text);
  const sender = made.json.address;
  assert.equal(await pub.getBalance({ address: sender }), 0n, 'the wallet holds nothing: the paymaster pays');
  const id = await policy({ allowed_contracts: [TOKEN], allowed_methods: ['transfer(address,uint256)'],
    max_gas_usd: '100', max_per_user_per_day: 5 });

  const base = (await pub.getBlock()).baseFeePerGas;
  const op = userOp(sender, transferCall(), { initCode: made.json.init_code,
    maxFeePerGas: toHex(base * 2n + gwei('1')), maxPriorityFeePerGas: toHex(gwei('1')) });
  const res = await sponsor({ chain: 'ethereum', policy_id: id, user_operation: op });
  assert.equal(res.status, 200, res.text);
  const s = res.json;
  assert.equal(s.paymaster, PAYMASTER);
  assert.match(s.paymasterData, /^0x[0-9a-f]{258}$/);
  assert.equal(s.paymasterAndData, PAYMASTER.toLowerCase() + s.paymasterData.slice(2));
  assert.match(s.paymasterVerificationGasLimit, /^0x[0-9a-f]+$/);
  assert.match(s.paymasterPostOpGasLimit, /^0x[0-9a-f]+$/);
  const cost = (100000n + 3n * 1500000n + 60000n) * BigInt(op.maxFeePerGas) * 3000n;
  assert.equal(s.sponsored_gas_usd, formatUnits(cost, 18));

  const final = { ...op, paymasterAndData: s.paymasterAndData };
  const typed = Object.fromEntries(Object.entries(final).map(([k, v]) =>
    [k, ['sender', 'initCode', 'callData', 'paymasterAndData', 'signature'].includes(k) ? v : BigInt(v)]));
  const hash = await pub.readContract({ address: ENTRY_POINT, abi: entryPointAbi, functionName: 'getUserOpHash', args: [typed] });
  assert.equal(hash, s.user_op_hash);
  typed.signature = await owner.signMessage({ message: { raw: hash } });

  // simulateValidation always reverts: ValidationResult when valid, FailedOp when not.
  const sim = await pub.simulateContract({ address: ENTRY_POINT, abi: entryPointAbi,
    functionName: 'simulateValidation', args: [typed] }).catch((e) => e);
  const revert = sim?.walk?.((e) => e?.data?.errorName)?.data;
  assert.equal(revert?.errorName, 'ValidationResult', `simulateValidation: ${sim?.shortMessage ?? sim}`);
  assert.equal(revert.args[0].sigFailed, false, 'the paymaster and account signatures hold');

  const wallet = createWalletClient({ account: submitter, chain, transport: http(env.chain) });
  const tx = await wallet.writeContract({ address: ENTRY_POINT, abi: entryPointAbi,
    functionName: 'handleOps', args: [[typed], beneficiary], gas: 3000000n });
  const receipt = await pub.waitForTransactionReceipt({ hash: tx });
  assert.equal(receipt.status, 'success');
  const events = receipt.logs.filter((l) => l.address.toLowerCase() === ENTRY_POINT.toLowerCase())
    .map((l) => { try { return decodeEventLog({ abi: entryPointAbi, ...l }); } catch { return null; } })
    .filter((e) => e?.eventName === 'UserOperationEvent');
  assert.equal(events.length, 1);
  assert.equal(events[0].args.success, true);
  assert.equal(getAddress(events[0].args.paymaster), PAYMASTER);
  assert.equal(events[0].args.userOpHash, s.user_op_hash);

  const got = await waitFor(async () => {
    const w = await api(`/v1/wallets/${sender}`, { key });
    assert.equal(w.status, 200, w.text);
    return w.json.status === 'deployed' ? w.json : null;
  }, 'the wallet to be deployed');
  assert.equal(got.deploy_tx, tx.toLowerCase());
  const spend = await api(`/v1/gas/policies/${id}`, { key });
  assert.equal(spend.json.spend.total.count, 1);
  assert.equal(spend.json.spend.total.usd, s.sponsored_gas_usd);
  // Deployed, the wallet is known by its code and implementation: no initCode needed.
  const next = await sponsor({ chain: 'ethereum', policy_id: id, user_operation: userOp(sender, transferCall(), { nonce: '0x1' }) });
  assert.equal(next.status, 200, next.text);
});
