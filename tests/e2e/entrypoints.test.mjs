// EntryPoint v0.7 and v0.8 on the devchain (docs/devchain.md, issue 23): the canonical
// contracts are there and work. For each version a SimpleAccount as permissionless.js builds
// it: the factory's getAddress is the client's address, the EntryPoint's getNonce answers, and
// an op sponsored by that version's VerifyingPaymaster (signed here by the devchain's paymaster
// signer) deploys the account through handleOps sent by a test EOA. Dev accounts 80-89 are
// this file's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  concat, createPublicClient, createWalletClient, encodeAbiParameters, encodeFunctionData, getAddress, http,
  parseEther, parseEventLogs, toHex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createBundlerClient, createPaymasterClient, entryPoint07Abi, entryPoint08Abi, toPackedUserOperation,
} from 'viem/account-abstraction';
import { foundry } from 'viem/chains';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { account as devAccount } from '../../devchain/dev.mjs';
import { api, assertError, env, newKey, waitFor } from './helpers.mjs';

const abiOf = (pkg, name) => JSON.parse(readFileSync(new URL(
  `./node_modules/${pkg}/artifacts/${name}.json`, import.meta.url), 'utf8')).abi;
const paymasterAbi = abiOf('aa07', 'VerifyingPaymaster');
const factoryAbi = abiOf('aa07', 'SimpleAccountFactory');
const accountAbi07 = abiOf('aa07', 'SimpleAccount');

const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const chain = { ...foundry, rpcUrls: { default: { http: [env.chain] } } };
const pub = createPublicClient({ chain, transport: http(env.chain) });
const signer = privateKeyToAccount(dc.paymaster_signer_key);

const VERSIONS = {
  '0.7': { ep: dc.entry_point_v07, factory: dc.account_factory_v07, paymaster: dc.paymaster_v07, abi: entryPoint07Abi, eoa: 80 },
  '0.8': { ep: dc.entry_point_v08, factory: dc.account_factory_v08, paymaster: dc.paymaster_v08, abi: entryPoint08Abi, eoa: 81 },
};

test('the canonical v0.7 and v0.8 addresses hold code; v0.6 is where it was', async () => {
  assert.equal(dc.entry_point_v07, '0x0000000071727de22e5e9d8baf0edac6f37da032');
  assert.equal(dc.account_factory_v07, '0x91e60e0613810449d098b0b5ec8b51a0fe8c8985');
  assert.equal(dc.entry_point_v08, '0x4337084d9e255ff0702461cf8895ce9e3b5ff108');
  assert.equal(dc.account_factory_v08, '0x13e9ed32155810fdbd067d4522c492d6f68e5944');
  assert.equal(dc.simple_7702_account, '0xe6cae83bde06e4c305530e199d7217f42808555b');
  assert.equal(dc.entry_point, '0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789');
  for (const a of [dc.entry_point_v07, dc.account_factory_v07, dc.paymaster_v07, dc.entry_point_v08,
    dc.account_factory_v08, dc.paymaster_v08, dc.simple_7702_account, dc.entry_point])
    assert.ok((await pub.getCode({ address: a }))?.length > 2, `code at ${a}`);
  // Each paymaster is bound to its own EntryPoint and funded there like v0.6's.
  for (const v of Object.values(VERSIONS)) {
    assert.equal((await pub.readContract({ address: v.paymaster, abi: paymasterAbi, functionName: 'entryPoint' })).toLowerCase(), v.ep);
    const info = await pub.readContract({ address: v.ep, abi: v.abi, functionName: 'getDepositInfo', args: [v.paymaster] });
    assert.ok(info.deposit >= parseEther('1') && info.staked, `paymaster ${v.paymaster} funded and staked`);
  }
});

// Sends op with handleOps from dev account eoaIndex (funded here) to v's EntryPoint; checks the
// receipt and the op's success, and returns its UserOperationEvent.
async function handleOps(v, op, eoaIndex) {
  const eoa = privateKeyToAccount(devAccount(eoaIndex).privateKey);
  await pub.request({ method: 'anvil_setBalance', params: [eoa.address, toHex(parseEther('10'))] });
  const wallet = createWalletClient({ chain, account: eoa, transport: http(env.chain) });
  const tx = await wallet.writeContract({ address: v.ep, abi: v.abi, functionName: 'handleOps',
    args: [[toPackedUserOperation(op)], eoa.address] });
  const rcpt = await pub.waitForTransactionReceipt({ hash: tx, pollingInterval: 100, timeout: 60000 });
  assert.equal(rcpt.status, 'success');
  const [ev] = parseEventLogs({ abi: v.abi, logs: rcpt.logs, eventName: 'UserOperationEvent' });
  assert.equal(ev.args.success, true);
  return ev;
}

// Deploys account (permissionless.js SimpleAccount of version v) with one op sponsored by that
// version's VerifyingPaymaster, sent with handleOps by a test EOA; checks the receipt.
async function sponsoredDeploy(v, account, owner) {
    const { factory, factoryData } = await account.getFactoryArgs();
    const fees = await pub.estimateFeesPerGas();
    const validity = encodeAbiParameters([{ type: 'uint48' }, { type: 'uint48' }], [0, 0]);
    const op = {
      sender: account.address, nonce: 0n, factory, factoryData,
      callData: await account.encodeCalls([{ to: owner.address, value: 0n, data: '0x1234' }]),
      callGasLimit: 100000n, verificationGasLimit: 600000n, preVerificationGas: 60000n,
      maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      paymaster: getAddress(v.paymaster), paymasterVerificationGasLimit: 100000n, paymasterPostOpGasLimit: 0n,
      paymasterData: concat([validity, toHex(new Uint8Array(65))]), signature: '0x',
    };
    // The paymaster's own hash (it covers the paymaster gas limits, not its data), signed by
    // the verifying signer as an EIP-191 message.
    const hash = await pub.readContract({ address: v.paymaster, abi: paymasterAbi, functionName: 'getHash',
      args: [toPackedUserOperation(op), 0, 0] });
    op.paymasterData = concat([validity, await signer.signMessage({ message: { raw: hash } })]);
    op.signature = await account.signUserOperation({ ...op, chainId: chain.id });

    const ev = await handleOps(v, op, v.eoa);
    assert.equal(ev.args.paymaster.toLowerCase(), v.paymaster);
}

for (const [version, v] of Object.entries(VERSIONS)) {
  test(`EntryPoint v${version}: getAddress, getNonce and a sponsored handleOps that deploys the account`, async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await toSimpleSmartAccount({ client: pub, owner,
      entryPoint: { address: getAddress(v.ep), version } });
    const onChain = await pub.readContract({ address: v.factory, abi: factoryAbi, functionName: 'getAddress', args: [owner.address, 0n] });
    assert.equal(onChain, account.address, 'the factory answers the address the client derives');
    const nonce = () => pub.readContract({ address: v.ep, abi: v.abi, functionName: 'getNonce', args: [account.address, 0n] });
    assert.equal(await nonce(), 0n);
    assert.equal(await pub.getCode({ address: account.address }), undefined, 'counterfactual');
    await sponsoredDeploy(v, account, owner);
    assert.ok((await pub.getCode({ address: account.address }))?.length > 2, 'deployed');
    assert.equal(await nonce(), 1n);
  });
}

// ---- /v1/gas/sponsor and ERC-7677 for v0.7 and v0.8 (docs/gas.md) ----

const BUNDLER = `${env.base}/v1/bundler/ethereum/devnet`;
async function policy(key, rules = { max_gas_usd: '100' }) {
  const res = await api('/v1/gas/policies', { method: 'POST', key,
    body: { name: `ep-${Math.random()}`, chain: 'ethereum', rules } });
  assert.equal(res.status, 201, res.text);
  return res.json.id;
}
// A first op of a fresh permissionless.js SimpleAccount of version v, unsigned and unsponsored,
// in the JSON-RPC form (quantities as hex), with its account.
async function firstOp(version, v) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await toSimpleSmartAccount({ client: pub, owner, entryPoint: { address: getAddress(v.ep), version } });
  const { factory, factoryData } = await account.getFactoryArgs();
  const fees = await pub.estimateFeesPerGas();
  const op = {
    sender: account.address, nonce: 0n, factory, factoryData,
    callData: await account.encodeCalls([{ to: owner.address, value: 0n, data: '0x1234' }]),
    callGasLimit: 100000n, verificationGasLimit: 600000n, preVerificationGas: 60000n,
    maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, signature: '0x',
  };
  return { account, owner, op };
}
const rpcForm = (op) => Object.fromEntries(Object.entries(op).map(([k, x]) => [k, typeof x === 'bigint' ? toHex(x) : x]));

for (const [version, v] of Object.entries(VERSIONS)) {
  test(`POST /v1/gas/sponsor with the v${version} EntryPoint: the v${version} members, its userOpHash, and the op lands`, async () => {
    const key = newKey({ plan: 'enterprise' });
    const id = await policy(key);
    const { account, op } = await firstOp(version, v);
    const res = await api('/v1/gas/sponsor', { method: 'POST', key, body: {
      chain: 'ethereum', policy_id: id, entry_point: getAddress(v.ep), user_operation: rpcForm(op) } });
    assert.equal(res.status, 200, res.text);
    const s = res.json;
    assert.equal(s.paymaster, getAddress(v.paymaster));
    assert.equal(s.paymasterVerificationGasLimit, '0x186a0');
    assert.equal(s.paymasterPostOpGasLimit, '0x0');
    assert.match(s.paymasterData, /^0x[0-9a-f]{258}$/, 'abi.encode(validUntil, validAfter) ++ 65-byte signature');
    assert.equal(s.paymasterAndData, undefined, 'v0.6 only');
    assert.equal(s.entry_point_version, version);
    const signed = { ...op, paymaster: s.paymaster, paymasterData: s.paymasterData,
      paymasterVerificationGasLimit: BigInt(s.paymasterVerificationGasLimit),
      paymasterPostOpGasLimit: BigInt(s.paymasterPostOpGasLimit) };
    const hash = await pub.readContract({ address: v.ep, abi: v.abi, functionName: 'getUserOpHash',
      args: [toPackedUserOperation(signed)] });
    assert.equal(s.user_op_hash, hash, 'the EntryPoint\'s own userOpHash');
    signed.signature = await account.signUserOperation({ ...signed, chainId: chain.id });
    const ev = await handleOps(v, signed, v.eoa + 2);
    assert.equal(ev.args.userOpHash, hash);
    assert.equal(ev.args.paymaster.toLowerCase(), v.paymaster);
  });
}

test('POST /v1/gas/sponsor: without entry_point the network\'s default (v0.6); an unknown entry point or a v0.7 op in v0.6 form is 400', async () => {
  const key = newKey({ plan: 'enterprise' });
  const id = await policy(key);
  const { op } = await firstOp('0.7', VERSIONS['0.7']);
  const body = (extra) => ({ chain: 'ethereum', policy_id: id, user_operation: rpcForm(op), ...extra });
  // v0.6 form needs initCode, not factory: the v0.7 op lacks nothing v0.6 requires but is
  // read as v0.6 (its factory members ignored) and answered in v0.6's form.
  const d = await api('/v1/gas/sponsor', { method: 'POST', key, body: body({}) });
  assert.equal(d.status, 200, d.text);
  assert.match(d.json.paymasterAndData, /^0x[0-9a-f]{298}$/);
  assert.equal(d.json.paymaster, getAddress(dc.paymaster));
  const other = await api('/v1/gas/sponsor', { method: 'POST', key, body: body({ entry_point: getAddress(dc.paymaster) }) });
  assertError(assert, other, 400, 'invalid_request');
  assert.match(other.json.error.message, /^entry_point: .* is not an EntryPoint of ethereum devnet/);
  const bad = await api('/v1/gas/sponsor', { method: 'POST', key, body: body({ entry_point: 'x' }) });
  assertError(assert, bad, 400, 'invalid_request');
  const big = await api('/v1/gas/sponsor', { method: 'POST', key, body: body({ entry_point: dc.entry_point_v07,
    user_operation: { ...rpcForm(op), callGasLimit: `0x1${'0'.repeat(32)}` } }) });
  assertError(assert, big, 400, 'invalid_request');
  assert.match(big.json.error.message, /callGasLimit must be below 2\^128/);
});

test('ERC-7677 with viem\'s paymaster client: a SimpleAccount v0.7 (permissionless.js) sponsored by Blockport validates on the v0.7 EntryPoint', async () => {
  const key = newKey({ plan: 'enterprise' });
  const id = await policy(key);
  const v = VERSIONS['0.7'];
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await toSimpleSmartAccount({ client: pub, owner, entryPoint: { address: getAddress(v.ep), version: '0.7' } });
  const transport = http(BUNDLER, { fetchOptions: { headers: { 'X-API-Key': key } } });
  // The gas is given, so viem asks the bundler for no estimate; the
  // paymaster client's stub and final data come from Blockport's ERC-7677 methods.
  const client = createBundlerClient({ client: pub, chain, transport,
    paymaster: createPaymasterClient({ transport }), paymasterContext: { policyId: id } });
  const fees = await pub.estimateFeesPerGas();
  const op = await client.prepareUserOperation({ account,
    calls: [{ to: owner.address, value: 0n, data: '0x1234' }],
    callGasLimit: 100000n, verificationGasLimit: 600000n, preVerificationGas: 60000n,
    maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas });
  assert.equal(op.paymaster, getAddress(v.paymaster));
  assert.equal(op.paymasterVerificationGasLimit, 100000n);
  assert.equal(op.paymasterPostOpGasLimit, 0n);
  op.signature = await account.signUserOperation(op);
  // Simulated first (the EntryPoint's own validation through eth_call), then landed.
  await pub.simulateContract({ address: v.ep, abi: v.abi, functionName: 'handleOps',
    args: [[toPackedUserOperation(op)], owner.address] });
  await handleOps(v, op, 84);
  assert.ok((await pub.getCode({ address: account.address }))?.length > 2, 'deployed');
  const spend = await api(`/v1/gas/policies/${id}`, { key });
  assert.equal(spend.json.spend.total.count, 1, 'sponsored once (the stub is not counted)');

  // Deployed now: under a contract rule its calls are read, as a known SimpleAccount v0.7's
  // (its proxy code and implementation slot), and only the allowed target passes.
  const fees2 = await pub.estimateFeesPerGas();
  const next = (to) => rpcForm({ sender: account.address, nonce: 1n,
    callData: encodeFunctionData({ abi: accountAbi07, functionName: 'execute', args: [to, 0n, '0x1234'] }),
    callGasLimit: 100000n, verificationGasLimit: 100000n, preVerificationGas: 60000n,
    maxFeePerGas: fees2.maxFeePerGas, maxPriorityFeePerGas: fees2.maxPriorityFeePerGas, signature: '0x' });
  const ruled = await policy(key, { allowed_contracts: [owner.address] });
  const sponsor = (op) => api('/v1/gas/sponsor', { method: 'POST', key, body: {
    chain: 'ethereum', policy_id: ruled, entry_point: v.ep, user_operation: op } });
  const yes = await sponsor(next(owner.address));
  assert.equal(yes.status, 200, yes.text);
  const no = await sponsor(next(getAddress(dc.tokens.erc20_18)));
  assertError(assert, no, 403, 'forbidden');
  assert.match(no.json.error.message, /^allowed_contracts/);
  // v0.7's executeBatch(address[],uint256[],bytes[]), as the client encodes two calls.
  const batch = async (to) => ({ ...next(owner.address), callData: await account.encodeCalls(
    [{ to: owner.address, value: 0n, data: '0x12' }, { to, value: 0n, data: '0x' }]) });
  const both = await sponsor(await batch(owner.address));
  assert.equal(both.status, 200, both.text);
  const one = await sponsor(await batch(getAddress(dc.tokens.erc20_18)));
  assertError(assert, one, 403, 'forbidden');
});

test('the bundler takes v0.7 ops: eth_supportedEntryPoints lists all three, an op in its version\'s form is validated on its EntryPoint', async () => {
  const key = newKey({ plan: 'enterprise' });
  const call = async (method, params) => (await api('/v1/bundler/ethereum/devnet', { method: 'POST', key,
    body: { jsonrpc: '2.0', id: 1, method, params } }));
  const eps = await call('eth_supportedEntryPoints', []);
  assert.deepEqual(eps.json.result, [getAddress(dc.entry_point), getAddress(dc.entry_point_v07), getAddress(dc.entry_point_v08)]);
  const { op } = await firstOp('0.7', VERSIONS['0.7']);
  // Read and simulated on the v0.7 EntryPoint: unsigned and unfunded, the account refuses it.
  const sent = await call('eth_sendUserOperation', [rpcForm(op), getAddress(dc.entry_point_v07)]);
  assert.equal(sent.status, 200, sent.text);
  assert.ok([-32500, -32507].includes(sent.json.error?.code), sent.text);
  assert.doesNotMatch(sent.json.error.message, /unsupported entry point/);
  const est = await call('eth_estimateUserOperationGas', [rpcForm(op), getAddress(dc.entry_point_v07)]);
  assert.equal(est.status, 200, est.text);
  assert.match(est.json.result?.callGasLimit ?? '', /^0x[0-9a-f]+$/, est.text);
  // An address that is no EntryPoint of the network still is.
  const other = await call('eth_sendUserOperation', [rpcForm(op), getAddress(dc.paymaster_v07)]);
  assert.equal(other.json.error?.code, -32602, other.text);
  assert.match(other.json.error.message, /unsupported entry point/);
});

// ---- /v1/wallets for each version (docs/wallets.md) ----

const create = (body, key) => api('/v1/wallets/create', { method: 'POST', key, body });

test('wallets/create takes entry_point_version: the address is that factory\'s getAddress; create, get and list carry the EntryPoint', async () => {
  const key = newKey({ plan: 'enterprise' });
  const owner = privateKeyToAccount(generatePrivateKey()).address;
  // Absent: the network's default, v0.6 (an owner and salt keep the address they had).
  const d = await create({ owner, chain: 'ethereum', salt: '7' }, key);
  assert.equal(d.status, 201, d.text);
  assert.equal(d.json.entry_point_version, '0.6');
  assert.equal(d.json.entry_point, getAddress(dc.entry_point));
  assert.equal(d.json.factory, getAddress(dc.account_factory));
  const again = await create({ owner, chain: 'ethereum', salt: '7', entry_point_version: '0.6' }, key);
  assert.equal(again.status, 200, again.text);
  assert.equal(again.json.address, d.json.address);
  const seen = new Set([d.json.address]);
  for (const [version, v] of Object.entries(VERSIONS)) {
    const res = await create({ owner, chain: 'ethereum', salt: '7', entry_point_version: version }, key);
    assert.equal(res.status, 201, res.text);
    const w = res.json;
    assert.equal(w.entry_point_version, version);
    assert.equal(w.entry_point, getAddress(v.ep));
    assert.equal(w.factory, getAddress(v.factory));
    assert.equal(w.status, 'counterfactual');
    const onChain = await pub.readContract({ address: v.factory, abi: factoryAbi, functionName: 'getAddress', args: [owner, 7n] });
    assert.equal(w.address, onChain, `v${version}: the address is the factory's getAddress`);
    assert.ok(!seen.has(w.address), 'each version its own address');
    seen.add(w.address);
    assert.equal(w.init_code.slice(0, 42), v.factory, 'init_code starts with that factory');
    const got = await api(`/v1/wallets/${w.address}`, { key });
    assert.equal(got.status, 200, got.text);
    assert.equal(got.json.entry_point_version, version);
    assert.equal(got.json.entry_point, getAddress(v.ep));
    assert.equal(got.json.nonce, 0);
  }
  const list = await api('/v1/wallets', { key });
  assert.equal(list.status, 200, list.text);
  assert.deepEqual(list.json.wallets.map((w) => w.entry_point_version), ['0.8', '0.7', '0.6']);
  assert.deepEqual(list.json.wallets.map((w) => w.entry_point),
    [getAddress(dc.entry_point_v08), getAddress(dc.entry_point_v07), getAddress(dc.entry_point)]);
});

test('wallets/create: a version that is not one, or one the network lacks, is 400 and writes nothing', async () => {
  const key = newKey({ plan: 'enterprise' });
  const owner = privateKeyToAccount(generatePrivateKey()).address;
  for (const bad of ['0.9', 'v0.7', '', 7]) {
    const res = await create({ owner, chain: 'ethereum', entry_point_version: bad }, key);
    assertError(assert, res, 400, 'invalid_request');
    assert.match(res.json.error.message, /entry_point_version/);
  }
  // The test stack's mainnet has v0.6's contracts only (a live key makes wallets there).
  const live = newKey({ plan: 'enterprise', live: true });
  const res = await create({ owner, chain: 'ethereum', entry_point_version: '0.7' }, live);
  assertError(assert, res, 400, 'invalid_request');
  assert.match(res.json.error.message, /v0\.7 are not available on ethereum mainnet/);
  assert.equal((await api('/v1/wallets', { key })).json.total, 0);
  assert.equal((await api('/v1/wallets', { key: live })).json.total, 0);
});

for (const [version, v] of Object.entries(VERSIONS)) {
  test(`wallets: a v${version} wallet reads deployed once its first op lands, with its nonce`, async () => {
    const key = newKey({ plan: 'enterprise' });
    const owner = privateKeyToAccount(generatePrivateKey());
    const res = await create({ owner: owner.address, chain: 'ethereum', salt: '3', entry_point_version: version }, key);
    assert.equal(res.status, 201, res.text);
    const account = await toSimpleSmartAccount({ client: pub, owner, index: 3n,
      entryPoint: { address: getAddress(v.ep), version } });
    assert.equal(account.address, res.json.address, 'permissionless.js derives the same address');
    await sponsoredDeploy(v, account, owner);
    // A process that saw no code there at create trusts that for a second (docs/wallets.md).
    const got = await waitFor(async () => {
      const r = await api(`/v1/wallets/${res.json.address}`, { key });
      assert.equal(r.status, 200, r.text);
      return r.json.status === 'deployed' ? r.json : null;
    }, 'the wallet to read deployed', 10000);
    assert.equal(got.nonce, 1, 'the nonce of its own EntryPoint');
    assert.match(got.deploy_tx ?? '', /^0x[0-9a-f]{64}$/);
  });
}
