// The bundler with EntryPoint v0.7 and v0.8 (docs/bundler.md): viem's bundler client and
// paymaster client, both pointed at Blockport, drive permissionless.js SimpleAccounts of each
// version unchanged: ERC-7677 sponsorship, eth_estimateUserOperationGas, eth_sendUserOperation,
// the submitter's handleOps on that version's EntryPoint, receipts and lookups in the version's
// form. No dev account of its own: the paymaster pays and the bundler (dev account 7) submits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createPublicClient, createWalletClient, getAddress, http, parseEther, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createBundlerClient, createPaymasterClient, entryPoint07Abi, entryPoint08Abi, getUserOperationHash, toPackedUserOperation,
} from 'viem/account-abstraction';
import { foundry } from 'viem/chains';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { api, env, newKey, onCluster, sleep, waitFor } from './helpers.mjs';
import { startSubmitter, startSubmitterLeased, stopSubmitters } from './submitter.mjs';

const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const chain = { ...foundry, rpcUrls: { default: { http: [env.chain] } } };
const pub = createPublicClient({ chain, transport: http(env.chain) });
const URL = `${env.base}/v1/bundler/ethereum/devnet`;

const VERSIONS = {
  '0.7': { ep: dc.entry_point_v07, paymaster: dc.paymaster_v07, abi: entryPoint07Abi },
  '0.8': { ep: dc.entry_point_v08, paymaster: dc.paymaster_v08, abi: entryPoint08Abi },
};

async function policy(key) {
  const res = await api('/v1/gas/policies', { method: 'POST', key,
    body: { name: `b07-${Math.random()}`, chain: 'ethereum', rules: { max_gas_usd: '100' } } });
  assert.equal(res.status, 201, res.text);
  return res.json.id;
}

// viem's bundler client with Blockport's paymaster client, both on the bundler's URL. The fees
// are the node's own: without the hook viem doubles the suggested tip, which the policy's
// max_gas_usd counts (the submitter's own tip is capped at the suggestion: eip7702.test.mjs).
function bundlerClient(key, policyId) {
  const transport = http(URL, { fetchOptions: { headers: { 'X-API-Key': key } } });
  return createBundlerClient({ client: pub, chain, transport, pollingInterval: 200,
    paymaster: createPaymasterClient({ transport }), paymasterContext: { policyId },
    userOperation: { estimateFeesPerGas: () => pub.estimateFeesPerGas() } });
}

const rpc = async (key, method, params) => {
  const res = await api('/v1/bundler/ethereum/devnet', { method: 'POST', key,
    body: { jsonrpc: '2.0', id: 1, method, params } });
  assert.equal(res.status, 200, res.text);
  return res.json;
};
const rpcForm = (op) => Object.fromEntries(Object.entries(op)
  .filter(([k, x]) => x !== undefined && k !== 'account' && k !== 'authorization')
  .map(([k, x]) => [k, typeof x === 'bigint' ? toHex(x) : x]));

test('eth_supportedEntryPoints: v0.6, then v0.7 and v0.8', async () => {
  const key = newKey({ plan: 'enterprise' });
  const eps = await rpc(key, 'eth_supportedEntryPoints', []);
  assert.deepEqual(eps.result, [getAddress(dc.entry_point), getAddress(dc.entry_point_v07),
    getAddress(dc.entry_point_v08)]);
});

for (const [version, v] of Object.entries(VERSIONS)) {
  test(`v${version}: a wallet of /v1/wallets/create, its first op sponsored and sent through Blockport's bundler, lands and deploys it`, async () => {
    const key = newKey({ plan: 'enterprise' });
    const id = await policy(key);
    const owner = privateKeyToAccount(generatePrivateKey());
    const created = await api('/v1/wallets/create', { method: 'POST', key,
      body: { owner: owner.address, chain: 'ethereum', entry_point_version: version } });
    assert.equal(created.status, 201, created.text);
    const account = await toSimpleSmartAccount({ client: pub, owner,
      entryPoint: { address: getAddress(v.ep), version } });
    assert.equal(account.address, created.json.address, 'permissionless.js derives the same address');
    assert.equal(await pub.getCode({ address: account.address }), undefined, 'counterfactual');

    // The paymaster's ERC-7562 reputation (the test stack has debug_bundler on).
    const included = async () => BigInt((await rpc(key, 'debug_bundler_dumpReputation', [getAddress(v.ep)])).result
      .find((e) => getAddress(e.address) === getAddress(v.paymaster))?.opsIncluded ?? 0);
    const before = await included();
    const client = bundlerClient(key, id);
    const hash = await client.sendUserOperation({ account,
      calls: [{ to: owner.address, value: 0n, data: '0x1234' }] });
    const rcpt = await client.waitForUserOperationReceipt({ hash, timeout: 60000, pollingInterval: 200 });
    assert.equal(rcpt.success, true);
    assert.equal(rcpt.userOpHash, hash);
    assert.equal(getAddress(rcpt.entryPoint), getAddress(v.ep));
    assert.equal(getAddress(rcpt.sender), account.address);
    assert.equal(getAddress(rcpt.paymaster), getAddress(v.paymaster), 'sponsored');
    assert.equal(getAddress(rcpt.receipt.to), getAddress(v.ep), 'handleOps went to its EntryPoint');
    assert.ok((await pub.getCode({ address: account.address }))?.length > 2, 'deployed');
    // The EntryPoint's own hash is the one the bundler answered.
    const got = await client.getUserOperation({ hash });
    assert.equal(getAddress(got.entryPoint), getAddress(v.ep));
    assert.equal(await pub.readContract({ address: v.ep, abi: v.abi, functionName: 'getUserOpHash',
      args: [toPackedUserOperation(got.userOperation)] }), hash);
    const w = await waitFor(async () => {
      const r = await api(`/v1/wallets/${account.address}`, { key });
      assert.equal(r.status, 200, r.text);
      return r.json.status === 'deployed' ? r.json : null;
    }, 'the wallet to read deployed', 15000);
    assert.equal(w.entry_point_version, version);
    // The submitter counts the inclusion from its own EntryPoint's events, not v0.6's.
    await waitFor(async () => await included() > before, `opsIncluded of the v${version} paymaster to grow`, 15000);
  });
}

test('v0.7: the estimate answers the paymaster\'s limits, the lookup the v0.7 form, a bad signature -32507, a 2D nonce is taken', async () => {
  const key = newKey({ plan: 'enterprise' });
  const id = await policy(key);
  const v = VERSIONS['0.7'];
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await toSimpleSmartAccount({ client: pub, owner, entryPoint: { address: getAddress(v.ep), version: '0.7' } });
  const client = bundlerClient(key, id);
  const prepared = await client.prepareUserOperation({ account, calls: [{ to: owner.address, value: 0n, data: '0x' }] });
  assert.ok(prepared.nonce >> 64n > 0n, 'permissionless.js puts a key in the nonce\'s upper bits');
  assert.equal(getAddress(prepared.paymaster), getAddress(v.paymaster));

  const est = await rpc(key, 'eth_estimateUserOperationGas', [rpcForm(prepared), getAddress(v.ep)]);
  assert.ok(est.result, JSON.stringify(est));
  for (const k of ['preVerificationGas', 'verificationGasLimit', 'callGasLimit', 'paymasterVerificationGasLimit', 'paymasterPostOpGasLimit'])
    assert.match(est.result[k] ?? '', /^0x[0-9a-f]+$/, k);
  assert.ok(BigInt(est.result.verificationGasLimit) > 100000n, 'the deployment is in the verification');
  // The paymaster's own validation, not the account's deployment; the op is sent with it below
  // (the paymaster's data signed over that limit), so it is enough.
  const pmv = BigInt(est.result.paymasterVerificationGasLimit);
  assert.ok(pmv < BigInt(est.result.verificationGasLimit) && pmv < 100000n, JSON.stringify(est));
  const op = { ...prepared, paymasterVerificationGasLimit: pmv };
  const pmd = await rpc(key, 'pm_getPaymasterData', [rpcForm(op), getAddress(v.ep), toHex(chain.id), { policyId: id }]);
  assert.equal(BigInt(pmd.result.paymasterVerificationGasLimit), pmv, JSON.stringify(pmd));
  op.paymasterData = pmd.result.paymasterData;
  const unsponsored = { ...rpcForm(op) };
  for (const k of ['paymaster', 'paymasterData', 'paymasterVerificationGasLimit', 'paymasterPostOpGasLimit'])
    delete unsponsored[k];
  const est2 = await rpc(key, 'eth_estimateUserOperationGas', [unsponsored, getAddress(v.ep)]);
  assert.ok(est2.result, JSON.stringify(est2));
  assert.equal(est2.result.paymasterVerificationGasLimit, undefined, 'no paymaster, no paymaster limits');

  // Signed by another key: the account answers SIG_VALIDATION_FAILED in its validationData.
  const other = privateKeyToAccount(generatePrivateKey());
  const wrong = await (await toSimpleSmartAccount({ client: pub, owner: other,
    entryPoint: { address: getAddress(v.ep), version: '0.7' } })).signUserOperation({ ...op, chainId: chain.id });
  const bad = await rpc(key, 'eth_sendUserOperation', [rpcForm({ ...op, signature: wrong }), getAddress(v.ep)]);
  assert.equal(bad.error?.code, -32507, JSON.stringify(bad));
  // A v0.7 op in v0.6's form (initCode, no factory) is -32602, naming the field.
  const v6form = await rpc(key, 'eth_sendUserOperation', [{ ...rpcForm(op), factory: 'x' }, getAddress(v.ep)]);
  assert.equal(v6form.error?.code, -32602, JSON.stringify(v6form));
  assert.match(v6form.error.message, /userOperation\.factory/);

  const signature = await account.signUserOperation({ ...op, chainId: chain.id });
  const sent = await rpc(key, 'eth_sendUserOperation', [rpcForm({ ...op, signature }), getAddress(v.ep)]);
  assert.match(sent.result ?? '', /^0x[0-9a-f]{64}$/, JSON.stringify(sent));
  const got = await rpc(key, 'eth_getUserOperationByHash', [sent.result]);
  const u = got.result.userOperation;
  assert.equal(getAddress(got.result.entryPoint), getAddress(v.ep));
  assert.equal(u.initCode, undefined, 'v0.7 form: no initCode');
  assert.equal(u.paymasterAndData, undefined, 'v0.7 form: no paymasterAndData');
  assert.equal(getAddress(u.factory), getAddress(op.factory));
  assert.equal(u.factoryData, op.factoryData);
  assert.equal(getAddress(u.paymaster), getAddress(v.paymaster));
  assert.equal(u.paymasterData, op.paymasterData);
  assert.equal(BigInt(u.paymasterVerificationGasLimit), op.paymasterVerificationGasLimit);
  assert.equal(BigInt(u.nonce), op.nonce);
  assert.equal(u.signature, signature);
  const rcpt = await client.waitForUserOperationReceipt({ hash: sent.result, timeout: 60000, pollingInterval: 200 });
  assert.equal(rcpt.success, true);
  assert.equal(rcpt.nonce, op.nonce, 'the 2D nonce, key and sequence');
});

test('ops of v0.6, v0.7 and v0.8 pending together: each lands by its own EntryPoint\'s handleOps, one EntryPoint a bundle', async () => {
  const key = newKey({ plan: 'enterprise' });
  const id = await policy(key);
  const client = bundlerClient(key, id);
  const eps = { '0.6': dc.entry_point, ...Object.fromEntries(Object.entries(VERSIONS).map(([k, v]) => [k, v.ep])) };
  // Prepared and signed first, then sent at once, so the pool holds the three together.
  const ops = await Promise.all(Object.entries(eps).map(async ([version, ep]) => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await toSimpleSmartAccount({ client: pub, owner, entryPoint: { address: getAddress(ep), version } });
    const op = await client.prepareUserOperation({ account, calls: [{ to: owner.address, value: 0n, data: '0x' }] });
    return { version, ep, op: { ...op, signature: await account.signUserOperation({ ...op, chainId: chain.id }) } };
  }));
  const hashes = await Promise.all(ops.map(async ({ ep, op }) => {
    const sent = await rpc(key, 'eth_sendUserOperation', [rpcForm(op), getAddress(ep)]);
    assert.match(sent.result ?? '', /^0x[0-9a-f]{64}$/, JSON.stringify(sent));
    return sent.result;
  }));
  const receipts = await Promise.all(hashes.map((hash) =>
    client.waitForUserOperationReceipt({ hash, timeout: 60000, pollingInterval: 200 })));
  receipts.forEach((r, i) => {
    assert.equal(r.success, true, ops[i].version);
    assert.equal(getAddress(r.entryPoint), getAddress(ops[i].ep));
    assert.equal(getAddress(r.receipt.to), getAddress(ops[i].ep), `v${ops[i].version}: handleOps of its EntryPoint`);
  });
  assert.equal(new Set(receipts.map((r) => r.receipt.transactionHash)).size, 3, 'three bundles');
});

// Ops another bundler sent (docs/bundler.md, "Ops of other bundlers"): a funded key calls the
// EntryPoint's handleOps itself with viem, so Blockport's pool never sees the op; the indexer
// records the EntryPoint's UserOperationEvent of every version, and the lookups answer from it
// in the op's own form, the op read back from the handleOps calldata.
for (const [version, v] of Object.entries(VERSIONS)) {
  test(`v${version}: an op bundled by another party straight through handleOps: receipt and lookup in the v${version} form`, async () => {
    const key = newKey({ plan: 'enterprise' });
    const id = await policy(key);
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await toSimpleSmartAccount({ client: pub, owner, entryPoint: { address: getAddress(v.ep), version } });
    const fees = await pub.estimateFeesPerGas();
    const op = {
      sender: account.address, nonce: await account.getNonce(), ...(await account.getFactoryArgs()),
      callData: await account.encodeCalls([{ to: owner.address, value: 0n, data: '0x1234' }]),
      callGasLimit: 100000n, verificationGasLimit: 600000n, preVerificationGas: 60000n,
      maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, signature: '0x',
    };
    const sp = await api('/v1/gas/sponsor', { method: 'POST', key, body: { chain: 'ethereum', policy_id: id,
      entry_point: getAddress(v.ep), user_operation: rpcForm(op) } });
    assert.equal(sp.status, 200, sp.text);
    Object.assign(op, { paymaster: sp.json.paymaster, paymasterData: sp.json.paymasterData,
      paymasterVerificationGasLimit: BigInt(sp.json.paymasterVerificationGasLimit),
      paymasterPostOpGasLimit: BigInt(sp.json.paymasterPostOpGasLimit) });
    op.signature = await account.signUserOperation({ ...op, chainId: chain.id });
    const hash = getUserOperationHash({ chainId: chain.id, entryPointAddress: getAddress(v.ep),
      entryPointVersion: version, userOperation: op });

    const other = privateKeyToAccount(generatePrivateKey());
    await pub.request({ method: 'anvil_setBalance', params: [other.address, toHex(parseEther('1'))] });
    const wallet = createWalletClient({ chain, account: other, transport: http(env.chain) });
    const tx = await wallet.writeContract({ address: getAddress(v.ep), abi: v.abi, functionName: 'handleOps',
      args: [[toPackedUserOperation(op)], other.address] });
    const mined = await pub.waitForTransactionReceipt({ hash: tx, pollingInterval: 100, timeout: 60000 });
    assert.equal(mined.status, 'success');

    const rcpt = await waitFor(async () => (await rpc(key, 'eth_getUserOperationReceipt', [hash])).result,
      'the indexer\'s UserOperationEvent', 60000);
    assert.equal(rcpt.userOpHash, hash);
    assert.equal(getAddress(rcpt.entryPoint), getAddress(v.ep));
    assert.equal(getAddress(rcpt.sender), account.address);
    assert.equal(getAddress(rcpt.paymaster), getAddress(v.paymaster));
    assert.equal(BigInt(rcpt.nonce), op.nonce);
    assert.equal(rcpt.success, true);
    assert.equal(rcpt.receipt.transactionHash, tx);

    const got = (await rpc(key, 'eth_getUserOperationByHash', [hash])).result;
    assert.ok(got, 'answered from the index');
    assert.equal(getAddress(got.entryPoint), getAddress(v.ep));
    assert.equal(got.transactionHash, tx);
    assert.equal(BigInt(got.blockNumber), mined.blockNumber);
    assert.equal(got.blockHash, mined.blockHash);
    const u = got.userOperation;
    assert.equal(u.initCode, undefined, `v${version} form: no initCode`);
    assert.equal(u.paymasterAndData, undefined, `v${version} form: no paymasterAndData`);
    assert.equal(getAddress(u.sender), account.address);
    assert.equal(getAddress(u.factory), getAddress(op.factory));
    assert.equal(getAddress(u.paymaster), getAddress(op.paymaster));
    for (const k of ['factoryData', 'callData', 'paymasterData', 'signature'])
      assert.equal(u[k], op[k].toLowerCase(), k);
    for (const k of ['nonce', 'callGasLimit', 'verificationGasLimit', 'preVerificationGas', 'maxFeePerGas',
      'maxPriorityFeePerGas', 'paymasterVerificationGasLimit', 'paymasterPostOpGasLimit'])
      assert.equal(BigInt(u[k]), op[k], k);
  });
}

// The submitter settles a bundle when it is mined, not at its next idle pass (docs/bundler.md,
// "The submitter"): this head's submitter is replaced by one with a long --interval, and a
// bundle is mined by hand a while after it was sent, as a chain with block times mines it.
// Settled, the op no longer counts against its sender's cap of 4 in the pool: a client that
// sends its next ops on the receipt is not refused.
const SLOW_MS = 6000;
test('v0.7: a bundle is settled as soon as it is mined, not a --interval later: the receipt of a lone op, and the sender\'s next op taken at once', { skip: onCluster('replaces this head\'s submitter') }, async () => {
  const key = newKey({ plan: 'enterprise' });
  const id = await policy(key);
  const ep = getAddress(VERSIONS['0.7'].ep);
  const client = bundlerClient(key, id);
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await toSimpleSmartAccount({ client: pub, owner, entryPoint: { address: ep, version: '0.7' } });
  const signed = async (nonce) => {
    const op = await client.prepareUserOperation({ account, calls: [{ to: owner.address, value: 0n, data: '0x' }],
      ...(nonce === undefined ? {} : { nonce }) });
    return rpcForm({ ...op, signature: await account.signUserOperation({ ...op, chainId: chain.id }) });
  };
  const send = (op) => rpc(key, 'eth_sendUserOperation', [op, ep]);
  const sent = async (op) => {
    const r = await send(op);
    assert.match(r.result ?? '', /^0x[0-9a-f]{64}$/, JSON.stringify(r));
    return r.result;
  };
  // Polled every 20 ms: the figure is the submitter's, not the poll's.
  const receipt = async (hash, ms) => {
    for (const end = Date.now() + ms; ; await sleep(20)) {
      const r = (await rpc(key, 'eth_getUserOperationReceipt', [hash])).result;
      if (r) return r;
      assert.ok(Date.now() < end, `no receipt of ${hash} within ${ms} ms`);
    }
  };

  await stopSubmitters('SIGTERM');
  await startSubmitterLeased(SLOW_MS);
  try {
    // A lone op (its account's deployment), mined at once by the devchain.
    const first = await signed();
    const t = Date.now();
    assert.equal((await receipt(await sent(first), SLOW_MS)).success, true);
    const lone = Date.now() - t;
    assert.ok(lone < SLOW_MS / 2, `send to receipt ${lone} ms with --interval ${SLOW_MS}`);

    // One op in a bundle the node holds unmined, three more of the sender pending: at the cap.
    const a = await signed();
    const more = [];
    for (let k = 1n; k <= 4n; k++) more.push(await signed((1000n + k) << 64n));
    await pub.request({ method: 'evm_setAutomine', params: [false] });
    let hashes;
    try {
      hashes = [await sent(a)];
      await waitFor(async () => Object.keys((await pub.request({ method: 'txpool_content' })).pending ?? {}).length > 0,
        'the bundle in the node\'s pool');
      for (const op of more.slice(0, 3)) hashes.push(await sent(op));
      const capped = await send(more[3]);
      assert.equal(capped.error?.code, -32505, `the sender's cap: ${JSON.stringify(capped)}`);
      await pub.request({ method: 'evm_mine', params: [] });
      const mined = Date.now();
      for (;;) {
        const r = await send(more[3]);
        if (r.result) {
          hashes.push(r.result);
          break;
        }
        assert.equal(r.error?.code, -32505, JSON.stringify(r));
        assert.ok(Date.now() - mined < SLOW_MS, 'the mined bundle never settled');
        await sleep(20);
      }
      const settled = Date.now() - mined;
      assert.ok(settled < SLOW_MS / 2, `settled ${settled} ms after its block, --interval ${SLOW_MS}`);
      assert.equal((await receipt(hashes[0], 1000)).success, true, 'the settled op\'s receipt');
    } finally {
      await pub.request({ method: 'evm_setAutomine', params: [true] });
    }
    // The next bundle was sent while nothing was mined: mined now; the last ones follow.
    await pub.request({ method: 'evm_mine', params: [] });
    for (const h of hashes) assert.equal((await receipt(h, 30000)).success, true);
  } finally {
    await stopSubmitters('SIGTERM');
    startSubmitter();
  }
});
