// /v1/bundler end to end (ERC-7769, ERC-7677; docs/bundler.md): the journey of a counterfactual
// wallet (/v1/wallets/create -> sponsorship by REST and by ERC-7677 -> eth_sendUserOperation ->
// receipt -> deployed), every ERC-7769 refusal with its code, replacement and duplicates, 20
// senders at once, a kill -9 of the submitter, and permissionless.js with viem's
// account-abstraction actions. Owners are fresh random keys; the bundler sends with dev
// account 7 (scripts/stack.sh), which no test sends from.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createSmartAccountClient } from 'permissionless';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPaymasterClient } from 'viem/account-abstraction';
import {
  createPublicClient, createWalletClient, encodeFunctionData, getAddress, http, parseEther, parseGwei, toHex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { api, env, newKey, sleep, waitFor } from './helpers.mjs';
import { paused, startSubmitter, stopSubmitters } from './submitter.mjs';

const artifact = (name) => JSON.parse(readFileSync(new URL(
  `./node_modules/@account-abstraction/contracts/artifacts/${name}.json`, import.meta.url), 'utf8')).abi;
const entryPointAbi = artifact('EntryPoint');
const accountAbi = artifact('SimpleAccount');
const erc20Abi = [{ type: 'function', name: 'approve', stateMutability: 'nonpayable',
  inputs: [{ type: 'address' }, { type: 'uint256' }], outputs: [{ type: 'bool' }] }];

const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const ENTRY_POINT = getAddress(dc.entry_point);
// What eth_supportedEntryPoints lists: v0.6 first, then v0.7 and v0.8 (tests/e2e/bundler-v07.test.mjs).
const ENTRY_POINTS = [ENTRY_POINT, getAddress(dc.entry_point_v07), getAddress(dc.entry_point_v08)];
const PAYMASTER = getAddress(dc.paymaster);
const TOKEN = getAddress(dc.tokens.erc20_18);
const chain = { ...foundry, rpcUrls: { default: { http: [env.chain] } } };
const pub = createPublicClient({ chain, transport: http(env.chain) });
const URL_ = `${env.base}/v1/bundler/ethereum/devnet`;
const DUMMY_SIG = `0x${'f'.repeat(31)}${'0'.repeat(33)}7${'a'.repeat(63)}1c`;
const HASH = /^0x[0-9a-f]{64}$/;

let key;
before(() => { key = newKey({ plan: 'enterprise' }); });

let nextId = 1;
async function call(method, params = [], k = key) {
  const res = await api('/v1/bundler/ethereum/devnet', { method: 'POST', key: k,
    body: { jsonrpc: '2.0', id: nextId++, method, params } });
  return res;
}
async function ok(method, params, k) {
  const res = await call(method, params, k);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.error, undefined, `${method}: ${res.text}`);
  return res.json.result;
}
async function refused(method, params, code, re) {
  const res = await call(method, params);
  assert.equal(res.status, 200, res.text);
  assert.ok(res.json.error, `${method} must be refused: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
  if (re) assert.match(res.json.error.message, re);
  return res.json.error;
}

const rpc = (method, params = []) => pub.request({ method, params });
const execute = (to, value = 0n, data = '0x') => encodeFunctionData({ abi: accountAbi, functionName: 'execute',
  args: [to, value, data] });

async function fees() {
  const block = await pub.getBlock();
  const tip = parseGwei('1');
  return { maxFeePerGas: toHex(block.baseFeePerGas * 2n + tip), maxPriorityFeePerGas: toHex(tip) };
}

// A fresh owner and its counterfactual wallet from /v1/wallets/create.
async function wallet() {
  const owner = privateKeyToAccount(generatePrivateKey());
  const res = await api('/v1/wallets/create', { method: 'POST', key, body: { owner: owner.address, chain: 'ethereum' } });
  assert.equal(res.status, 201, res.text);
  return { owner, address: getAddress(res.json.address), initCode: res.json.init_code };
}

function baseOp(w, extra = {}) {
  return {
    sender: w.address, nonce: '0x0', initCode: w.initCode, callData: execute(w.owner.address),
    callGasLimit: '0x0', verificationGasLimit: '0x0', preVerificationGas: '0x0',
    maxFeePerGas: '0x0', maxPriorityFeePerGas: '0x0', paymasterAndData: '0x', signature: DUMMY_SIG, ...extra,
  };
}

const opHash = (op) => pub.readContract({ address: ENTRY_POINT, abi: entryPointAbi, functionName: 'getUserOpHash',
  args: [{ ...op, nonce: BigInt(op.nonce), callGasLimit: BigInt(op.callGasLimit),
    verificationGasLimit: BigInt(op.verificationGasLimit), preVerificationGas: BigInt(op.preVerificationGas),
    maxFeePerGas: BigInt(op.maxFeePerGas), maxPriorityFeePerGas: BigInt(op.maxPriorityFeePerGas) }] });
async function signed(w, op) {
  const hash = await opHash(op);
  return { ...op, signature: await w.owner.signMessage({ message: { raw: hash } }) };
}

// Estimates op's gas through the bundler and fills in its fees; a self-funded op unless pnd.
async function estimated(w, op) {
  const est = await ok('eth_estimateUserOperationGas', [op, ENTRY_POINT]);
  return { ...op, ...est, ...(await fees()) };
}

// A signed op of a new wallet that pays for itself (funded with anvil_setBalance).
async function selfFunded(extra = {}) {
  const w = await wallet();
  await rpc('anvil_setBalance', [w.address, toHex(parseEther('1'))]);
  const op = await estimated(w, baseOp(w, extra));
  return { w, op: await signed(w, op) };
}

const receiptOf = (hash, ms = 20000) => waitFor(async () => ok('eth_getUserOperationReceipt', [hash]),
  `the receipt of ${hash}`, ms);

async function policy(rules = { max_gas_usd: '100' }) {
  const res = await api('/v1/gas/policies', { method: 'POST', key, body: { name: `b-${Math.random()}`, chain: 'ethereum', rules } });
  assert.equal(res.status, 201, res.text);
  return res.json.id;
}

test('config methods: chain id, entry points; unknown methods are -32601', async () => {
  assert.equal(await ok('eth_chainId', []), '0x7a69');
  assert.deepEqual(await ok('eth_supportedEntryPoints', []), ENTRY_POINTS);
  await refused('eth_sendTransaction', [], -32601);
  await refused('debug_bundler_noSuchMethod', [], -32601);
  assert.equal(await ok('eth_getUserOperationByHash', [`0x${'ab'.repeat(32)}`]), null);
  assert.equal(await ok('eth_getUserOperationReceipt', [`0x${'ab'.repeat(32)}`]), null);
});

test('journey: wallets/create -> ERC-7677 sponsorship -> send -> receipt -> deployed', async () => {
  const w = await wallet();
  const id = await policy();
  const cid = toHex(31337);
  let op = baseOp(w, await fees());
  const stub = await ok('pm_getPaymasterStubData', [op, ENTRY_POINT, cid, { policyId: id }]);
  assert.equal(stub.paymasterAndData.length, 2 + 2 * 149, 'the stub is as long as the final data');
  assert.equal(getAddress(stub.paymasterAndData.slice(0, 42)), PAYMASTER);
  op = { ...op, paymasterAndData: stub.paymasterAndData };
  op = await estimated(w, op);
  const data = await ok('pm_getPaymasterData', [op, ENTRY_POINT, cid, { policyId: id }]);
  assert.equal(data.paymasterAndData.length, stub.paymasterAndData.length);
  op = await signed(w, { ...op, paymasterAndData: data.paymasterAndData });
  const hash = await ok('eth_sendUserOperation', [op, ENTRY_POINT]);
  assert.match(hash, HASH);
  assert.equal(hash, await opHash(op), 'the result is EntryPoint.getUserOpHash');
  const byHash = await ok('eth_getUserOperationByHash', [hash]);
  assert.equal(getAddress(byHash.entryPoint), ENTRY_POINT);
  assert.equal(byHash.userOperation.sender, w.address);
  const r = await receiptOf(hash);
  assert.equal(r.success, true, JSON.stringify(r));
  assert.equal(r.userOpHash, hash);
  assert.equal(getAddress(r.sender), w.address);
  assert.equal(getAddress(r.paymaster), PAYMASTER);
  assert.match(r.receipt.transactionHash, HASH);
  const mined = await ok('eth_getUserOperationByHash', [hash]);
  assert.equal(mined.transactionHash, r.receipt.transactionHash);
  assert.ok(await pub.getCode({ address: w.address }), 'the wallet has code');
  const got = await waitFor(async () => {
    const res = await api(`/v1/wallets/${w.address}`, { key });
    return res.json?.status === 'deployed' ? res.json : null;
  }, 'the wallet deployed');
  assert.equal(got.status, 'deployed');
});

test('journey: REST /v1/gas/sponsor -> send -> receipt, with the op\'s own logs only', async () => {
  const w = await wallet();
  const id = await policy();
  const approve = encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [w.owner.address, 7n] });
  let op = baseOp(w, { callData: execute(TOKEN, 0n, approve),
    paymasterAndData: `${PAYMASTER}${'00'.repeat(64)}${DUMMY_SIG.slice(2)}` });
  op = await estimated(w, op);
  const s = await api('/v1/gas/sponsor', { method: 'POST', key, body: { chain: 'ethereum', policy_id: id, user_operation: op } });
  assert.equal(s.status, 200, s.text);
  op = { ...op, paymasterAndData: s.json.paymasterAndData };
  op = await signed(w, op);
  const hash = await ok('eth_sendUserOperation', [op, ENTRY_POINT]);
  assert.equal(hash, s.json.user_op_hash);
  const r = await receiptOf(hash);
  assert.equal(r.success, true);
  assert.equal(r.logs.length, 1, `only the op's own call's logs: ${JSON.stringify(r.logs)}`);
  assert.equal(getAddress(r.logs[0].address), TOKEN, 'the Approval of the call');
  assert.equal(BigInt(r.logs[0].data), 7n);
});

// ---- the submitter, paused and resumed (SIGSTOP/SIGCONT), killed and restarted ----


// A deployed wallet (its first op landed), to send ops of several nonce keys from.
async function deployedWallet() {
  const { w, op } = await selfFunded();
  const hash = await ok('eth_sendUserOperation', [op, ENTRY_POINT]);
  assert.equal((await receiptOf(hash)).success, true);
  return w;
}
async function nextOp(w, nonce, extra = {}) {
  const op = await estimated(w, baseOp(w, { initCode: '0x', nonce, ...extra }));
  return signed(w, { ...op, ...extra });
}
const bump = (hex, pct) => toHex(BigInt(hex) * BigInt(100 + pct) / 100n);

test('ERC-7769 -32602: fields, hex, entry point, gas and fees', async () => {
  const { w, op } = await selfFunded();
  await refused('eth_sendUserOperation', [{ ...op, nonce: 'zz' }, ENTRY_POINT], -32602, /nonce/);
  await refused('eth_sendUserOperation', [{ ...op, sender: undefined }, ENTRY_POINT], -32602, /sender/);
  await refused('eth_sendUserOperation', [{ ...op, callData: '0x123' }, ENTRY_POINT], -32602, /callData/);
  await refused('eth_sendUserOperation', [op], -32602);
  await refused('eth_sendUserOperation', [op, PAYMASTER], -32602, /unsupported entry point/);
  await refused('eth_sendUserOperation', [op, 'nope'], -32602, /entryPoint/);
  await refused('eth_sendUserOperation', [{ ...op, maxFeePerGas: '0x1', maxPriorityFeePerGas: '0x1' }, ENTRY_POINT], -32602, /base fee/);
  await refused('eth_sendUserOperation', [{ ...op, maxPriorityFeePerGas: bump(op.maxFeePerGas, 1) }, ENTRY_POINT], -32602, /maxPriorityFeePerGas/);
  await refused('eth_sendUserOperation', [{ ...op, preVerificationGas: '0x10' }, ENTRY_POINT], -32602, /preVerificationGas/);
  await refused('eth_sendUserOperation', [{ ...op, verificationGasLimit: toHex(30000000) }, ENTRY_POINT], -32602, /verificationGasLimit/);
  await refused('eth_sendUserOperation', [{ ...op, callGasLimit: '0x10' }, ENTRY_POINT], -32602, /callGasLimit/);
  assert.ok(w);
});

test('ERC-7769 -32500 account, -32501 paymaster, -32507 signature, -32503 deadline, -32521 revert', async () => {
  // An unfunded wallet without a paymaster cannot pay its prefund (AA21).
  const w = await wallet();
  const op = await signed(w, await estimated(w, baseOp(w)));
  const e21 = await refused('eth_sendUserOperation', [op, ENTRY_POINT], -32500, /^AA21/);
  assert.match(e21.data, /^0x/, 'the FailedOp revert data');
  // A paymaster that is not a contract (AA30).
  const pm = `0x${'12'.repeat(20)}`;
  await refused('eth_sendUserOperation', [await signed(w, { ...op, paymasterAndData: pm }), ENTRY_POINT], -32501, /^AA3/);
  // Signed by another key: SimpleAccount answers SIG_VALIDATION_FAILED.
  const { w: funded, op: good } = await selfFunded();
  const stranger = privateKeyToAccount(generatePrivateKey());
  const bad = { ...good, signature: await stranger.signMessage({ message: { raw: await opHash(good) } }) };
  await refused('eth_sendUserOperation', [bad, ENTRY_POINT], -32507, /signature/);
  // A paymaster signature that expires within the bundler's margin.
  const id = await policy();
  const stub = `${PAYMASTER}${'00'.repeat(64)}${DUMMY_SIG.slice(2)}`;
  let sop = await estimated(w, baseOp(w, { paymasterAndData: stub }));
  const pmKey = readFileSync(`${env.dir}/paymaster.key`, 'utf8').trim();
  const signer = privateKeyToAccount(pmKey);
  const now = Math.floor(Date.now() / 1000);
  const until = now + 5, after = now - 60;
  const vpAbi = artifact('VerifyingPaymaster');
  const asArgs = (o) => ({ ...o, nonce: BigInt(o.nonce), callGasLimit: BigInt(o.callGasLimit),
    verificationGasLimit: BigInt(o.verificationGasLimit), preVerificationGas: BigInt(o.preVerificationGas),
    maxFeePerGas: BigInt(o.maxFeePerGas), maxPriorityFeePerGas: BigInt(o.maxPriorityFeePerGas) });
  const h = await pub.readContract({ address: PAYMASTER, abi: vpAbi, functionName: 'getHash',
    args: [asArgs(sop), until, after] });
  const psig = await signer.signMessage({ message: { raw: h } });
  const window = (u, a) => `${toHex(u, { size: 32 }).slice(2)}${toHex(a, { size: 32 }).slice(2)}`;
  sop = await signed(w, { ...sop, paymasterAndData: `${PAYMASTER}${window(until, after)}${psig.slice(2)}` });
  await refused('eth_sendUserOperation', [sop, ENTRY_POINT], -32503, /expires/);
  assert.ok(id);
  // Estimation of a call that reverts: -32521 with the revert data.
  const transfer = encodeFunctionData({ abi: [{ type: 'function', name: 'transfer', stateMutability: 'nonpayable',
    inputs: [{ type: 'address' }, { type: 'uint256' }], outputs: [{ type: 'bool' }] }], functionName: 'transfer',
  args: [stranger.address, 10n ** 30n] });
  const rev = await refused('eth_estimateUserOperationGas', [baseOp(funded, { callData: execute(TOKEN, 0n, transfer) }), ENTRY_POINT], -32521);
  assert.match(rev.data, /^0x08c379a0/, 'Error(string) of the token');
});

test('pool: duplicates refused, a replacement needs 10% on both fees, unstaked senders capped (-32505)', async () => {
  const w = await deployedWallet();
  const key1 = (k) => toHex(BigInt(k) << 64n);
  await paused(async () => {
    const a = await nextOp(w, key1(1));
    const ha = await ok('eth_sendUserOperation', [a, ENTRY_POINT]);
    await refused('eth_sendUserOperation', [a, ENTRY_POINT], -32602, /already known/);
    const low = await signed(w, { ...a, maxFeePerGas: bump(a.maxFeePerGas, 5), maxPriorityFeePerGas: bump(a.maxPriorityFeePerGas, 5) });
    await refused('eth_sendUserOperation', [low, ENTRY_POINT], -32602, /underpriced/);
    const half = await signed(w, { ...a, maxFeePerGas: bump(a.maxFeePerGas, 20), maxPriorityFeePerGas: a.maxPriorityFeePerGas });
    await refused('eth_sendUserOperation', [half, ENTRY_POINT], -32602, /underpriced/);
    const hi = await signed(w, { ...a, maxFeePerGas: bump(a.maxFeePerGas, 10), maxPriorityFeePerGas: bump(a.maxPriorityFeePerGas, 10) });
    const hh = await ok('eth_sendUserOperation', [hi, ENTRY_POINT]);
    assert.notEqual(hh, ha);
    assert.equal(await ok('eth_getUserOperationByHash', [ha]), null, 'the replaced op is gone');
    for (const k of [2, 3, 4]) await ok('eth_sendUserOperation', [await nextOp(w, key1(k)), ENTRY_POINT]);
    await refused('eth_sendUserOperation', [await nextOp(w, key1(5)), ENTRY_POINT], -32505, /unstaked/);
  });
  // Resumed: the four land.
  await waitFor(async () => (await pub.readContract({ address: ENTRY_POINT, abi: entryPointAbi, functionName: 'getNonce',
    args: [w.address, 4n] })) === (4n << 64n) + 1n, 'the ops of four nonce keys', 30000);
});

test('20 ops from 20 senders sent at once all land, in a few bundles', async () => {
  const ops = await Promise.all(Array.from({ length: 20 }, () => selfFunded()));
  // Accepted at once while the submitter sleeps (on a loaded machine the 20 answers take longer
  // than its 200 ms pass), so what is measured is how many bundles the 20 pending ops need.
  const hashes = await paused(() => Promise.all(ops.map(({ op }) => ok('eth_sendUserOperation', [op, ENTRY_POINT]))));
  const receipts = await Promise.all(hashes.map((h) => receiptOf(h, 60000)));
  for (const r of receipts) assert.equal(r.success, true);
  const txs = new Set(receipts.map((r) => r.receipt.transactionHash));
  assert.ok(txs.size <= 5, `20 ops in ${txs.size} bundles`);
});

test('kill -9 of the submitter with a bundle in flight, and a bundle that vanished: no op lost', async () => {
  const ops = await Promise.all(Array.from({ length: 4 }, () => selfFunded()));
  await rpc('evm_setAutomine', [false]);
  let hashes;
  try {
    hashes = await Promise.all(ops.slice(0, 2).map(({ op }) => ok('eth_sendUserOperation', [op, ENTRY_POINT])));
    // The submitter sends a bundle that stays in the node's pool (no mining), then dies.
    await waitFor(async () => (await rpc('txpool_content')).pending && Object.keys((await rpc('txpool_content')).pending).length > 0,
      'the bundle in the node\'s pool');
    await stopSubmitters('SIGKILL');
    // Two more ops wait in the pool meanwhile; then the bundle in flight vanishes.
    hashes.push(...await Promise.all(ops.slice(2).map(({ op }) => ok('eth_sendUserOperation', [op, ENTRY_POINT]))));
    await rpc('anvil_dropAllTransactions');
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  startSubmitter();
  const receipts = await Promise.all(hashes.map((h) => receiptOf(h, 60000)));
  for (const r of receipts) assert.equal(r.success, true);
});

test('permissionless.js: a SimpleAccount v0.6 sends through Blockport as bundler and ERC-7677 paymaster', async () => {
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await toSimpleSmartAccount({ client: pub, owner,
    entryPoint: { address: ENTRY_POINT, version: '0.6' }, factoryAddress: getAddress(dc.account_factory) });
  const transport = http(URL_, { fetchOptions: { headers: { 'X-API-Key': key } } });
  const id = await policy();
  const client = createSmartAccountClient({
    account, chain, client: pub, bundlerTransport: transport,
    paymaster: createPaymasterClient({ transport }), paymasterContext: { policyId: id },
    userOperation: { estimateFeesPerGas: async () => {
      const f = await fees();
      return { maxFeePerGas: BigInt(f.maxFeePerGas), maxPriorityFeePerGas: BigInt(f.maxPriorityFeePerGas) };
    } },
  });
  assert.equal(await pub.getCode({ address: account.address }), undefined, 'counterfactual before');
  const tx = await client.sendTransaction({ to: owner.address, value: 0n, data: '0x1234' });
  assert.match(tx, HASH);
  const rcpt = await pub.getTransactionReceipt({ hash: tx });
  assert.equal(rcpt.status, 'success');
  assert.ok(await pub.getCode({ address: account.address }), 'deployed by its first op');
  const spend = await api(`/v1/gas/policies/${id}`, { key });
  assert.equal(spend.json.spend.total.count, 1, 'sponsored once through ERC-7677');
});

test('a reorg (evm_revert) takes a bundle\'s block away: its op goes back to the pool and lands again', async () => {
  const { op } = await selfFunded();
  const snap = await rpc('evm_snapshot');
  const hash = await ok('eth_sendUserOperation', [op, ENTRY_POINT]);
  const first = await receiptOf(hash);
  await rpc('evm_revert', [snap]);
  assert.equal(await pub.getTransactionReceipt({ hash: first.receipt.transactionHash }).catch(() => null), null,
    'the bundle is gone from the chain');
  // Bundled again (the same ops, nonce and fees sign to the same transaction, so it may carry
  // the same hash): the receipt answers once the transaction is on the chain again.
  const again = await waitFor(async () => {
    const r = await ok('eth_getUserOperationReceipt', [hash]);
    if (!r) return null;
    return (await pub.getTransactionReceipt({ hash: r.receipt.transactionHash }).catch(() => null)) ? r : null;
  }, 'the op bundled again', 30000);
  assert.equal(again.success, true);
  assert.ok(await pub.getTransactionReceipt({ hash: again.receipt.transactionHash }));
});

test('scopes: reads take rpc:read or bundler:send, sending bundler:send, ERC-7677 gas:manage', async () => {
  const reader = newKey({ plan: 'enterprise', scopes: 'rpc:read' });
  const sender = newKey({ plan: 'enterprise', scopes: 'bundler:send' });
  assert.equal(await ok('eth_chainId', [], reader), '0x7a69');
  assert.equal(await ok('eth_chainId', [], sender), '0x7a69');
  const { op } = await selfFunded();
  const res = await call('eth_sendUserOperation', [op, ENTRY_POINT], reader);
  assert.equal(res.status, 403, res.text);
  assert.equal(res.json.error.code, 'forbidden');
  const pm = await call('pm_getPaymasterStubData', [op, ENTRY_POINT, '0x7a69', { policyId: 'gp_x' }], sender);
  assert.equal(pm.status, 403, pm.text);
  const batch = await api('/v1/bundler/ethereum/devnet', { method: 'POST', key: reader, body: [
    { jsonrpc: '2.0', id: 1, method: 'eth_supportedEntryPoints', params: [] },
    { jsonrpc: '2.0', id: 2, method: 'eth_sendUserOperation', params: [op, ENTRY_POINT] }] });
  assert.equal(batch.status, 200, batch.text);
  assert.deepEqual(batch.json[0].result, ENTRY_POINTS);
  assert.equal(batch.json[1].error.code, -32003);
  const none = await api('/v1/bundler/ethereum/nonet', { method: 'POST', key, body: { jsonrpc: '2.0', id: 1, method: 'eth_chainId' } });
  assert.equal(none.status, 404);
  const noKey = await api('/v1/bundler/ethereum/devnet', { method: 'POST', key: null, body: { jsonrpc: '2.0', id: 1, method: 'eth_chainId' } });
  assert.equal(noKey.status, 401);
});

test('a bundle stuck unmined is re-sent with the same nonce and higher fees', { timeout: 90000 }, async () => {
  const { op } = await selfFunded();
  await rpc('evm_setAutomine', [false]);
  let first, hash;
  try {
    hash = await ok('eth_sendUserOperation', [op, ENTRY_POINT]);
    const pending = async () => Object.values((await rpc('txpool_content')).pending ?? {})
      .flatMap((byNonce) => Object.values(byNonce));
    [first] = await waitFor(async () => { const p = await pending(); return p.length ? p : null; }, 'the bundle pending');
    // The submitter re-signs it after BP_BUNDLER_SUBMIT_STUCK_SECONDS (20 s).
    await waitFor(async () => (await pending()).some((t) => t.hash !== first.hash), 'the fee bump', 40000);
    const [bumped] = await pending();
    assert.equal(bumped.nonce, first.nonce, 'the same nonce');
    assert.ok(BigInt(bumped.maxFeePerGas) > BigInt(first.maxFeePerGas) * 11n / 10n, 'fees up by more than 10%');
    await rpc('evm_mine');
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  const r = await receiptOf(hash);
  assert.equal(r.success, true);
  assert.notEqual(r.receipt.transactionHash, first.hash, 'the re-sent version landed');
});

test('ERC-7769 -32506: an account that names a signature aggregator is refused', async () => {
  // An account whose every call returns validationData = an aggregator's address (anvil_setCode:
  // PUSH20 aggregator, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN); the paymaster pays its gas.
  const sender = privateKeyToAccount(generatePrivateKey()).address;
  await rpc('anvil_setCode', [sender, `0x73${'aa'.repeat(20)}60005260206000f3`]);
  const id = await policy();
  let op = { sender, nonce: '0x0', initCode: '0x', callData: '0x', callGasLimit: toHex(50000),
    verificationGasLimit: toHex(300000), preVerificationGas: toHex(100000), ...(await fees()),
    paymasterAndData: '0x', signature: DUMMY_SIG };
  const data = await ok('pm_getPaymasterData', [op, ENTRY_POINT, toHex(31337), { policyId: id }]);
  op = { ...op, paymasterAndData: data.paymasterAndData };
  await refused('eth_sendUserOperation', [op, ENTRY_POINT], -32506, /aggregator/);
});

test('ERC-7769 -32504: an unstaked paymaster is throttled at 10 ops in the pool', async () => {
  // A paymaster that accepts everything (validatePaymasterUserOp answers an empty context and
  // validationData 0), with a deposit and no stake; accounts that accept everything too.
  const pm = privateKeyToAccount(generatePrivateKey()).address;
  await rpc('anvil_setCode', [pm, '0x604060005260606000f3']);
  const funder = privateKeyToAccount(generatePrivateKey());
  await rpc('anvil_setBalance', [funder.address, toHex(parseEther('10'))]);
  const wallet = createWalletClient({ account: funder, chain, transport: http(env.chain) });
  await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: ENTRY_POINT, abi: entryPointAbi,
    functionName: 'depositTo', args: [pm], value: parseEther('1') }) });
  const f = await fees();
  const ops = [];
  for (let i = 0; i < 11; i++) {
    const sender = privateKeyToAccount(generatePrivateKey()).address;
    await rpc('anvil_setCode', [sender, '0x600060005260206000f3']);
    ops.push({ sender, nonce: '0x0', initCode: '0x', callData: '0x', callGasLimit: toHex(50000),
      verificationGasLimit: toHex(200000), preVerificationGas: toHex(100000), ...f,
      paymasterAndData: pm, signature: '0x' });
  }
  const hashes = await paused(async () => {
    const hs = [];
    for (const op of ops.slice(0, 10)) hs.push(await ok('eth_sendUserOperation', [op, ENTRY_POINT]));
    await refused('eth_sendUserOperation', [ops[10], ENTRY_POINT], -32504, /unstaked/);
    return hs;
  });
  for (const r of await Promise.all(hashes.map((h) => receiptOf(h, 30000)))) assert.equal(r.success, true);
});
