// EIP-7702 with Blockport's C signer on the devchain (anvil, --hardfork prague; docs/evm.md,
// "EIP-7702"): build/tools/chaintool's send7702 signs an authorization for a fresh EOA and a
// type 4 transaction carrying it (lib/evm/tx.c) and sends it; anvil takes it, the EOA's code
// becomes 0xef0100 || Simple7702Account, viem recovers the EOA from the transaction's
// authorization, and viem's toSimple7702SmartAccount on the EOA works against EntryPoint v0.8.
// Then lib/evm/userop.c's userOpHash of a 7702 op (build/tools/evmtool userop-hash) equals the
// EntryPoint's getUserOpHash, which reads the delegate from the EOA's code, and viem's; and
// POST /v1/gas/sponsor takes such an op as viem sends it (factory 0x7702, eip7702Auth), answers
// the EntryPoint's userOpHash, and the sponsored op lands through handleOps.
// The keys are new ones (the sender funded with anvil_setBalance): no dev account is taken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  concat, createPublicClient, createWalletClient, getAddress, http, parseAbi, parseEther, parseEventLogs, toHex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createBundlerClient, createPaymasterClient, entryPoint08Abi, formatUserOperationRequest, getUserOperationHash, toPackedUserOperation,
  toSimple7702SmartAccount,
} from 'viem/account-abstraction';
import { foundry } from 'viem/chains';
import { recoverAuthorizationAddress } from 'viem/utils';
import { api, env, newKey, waitFor } from './helpers.mjs';

const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const DELEGATE = getAddress(dc.simple_7702_account);
const EP08 = getAddress(dc.entry_point_v08);
const chain = { ...foundry, rpcUrls: { default: { http: [env.chain] } } };
const pub = createPublicClient({ chain, transport: http(env.chain) });
const tool = (name, ...args) => execFileSync(`${env.build}/tools/${name}`, args.map(String),
  { encoding: 'utf8', env: { ...process.env, BLOCKPORT_CONFIG: env.config } }).trim();

const ownerKey = generatePrivateKey();
const owner = privateKeyToAccount(ownerKey);		// the EOA that delegates
let authorization;						// its authorization, as the chain has it

test('the C signer: a type 4 transaction delegates a fresh EOA to Simple7702Account', async () => {
  const senderKey = generatePrivateKey();
  const sender = privateKeyToAccount(senderKey);
  await pub.request({ method: 'anvil_setBalance', params: [sender.address, toHex(parseEther('1'))] });
  assert.equal(await pub.getCode({ address: owner.address }), undefined);

  const [hash, eoa] = tool('chaintool', 'ethereum', 'devnet', 'send7702', senderKey,
    ownerKey, DELEGATE).split(' ');
  assert.equal(eoa, owner.address);
  const rcpt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 100, timeout: 60000 });
  assert.equal(rcpt.status, 'success');

  const tx = await pub.getTransaction({ hash });
  assert.equal(tx.type, 'eip7702');
  assert.equal(tx.from, sender.address.toLowerCase());
  assert.equal(getAddress(tx.to), owner.address);
  assert.equal(tx.authorizationList.length, 1);
  [authorization] = tx.authorizationList;
  assert.equal(getAddress(authorization.address), DELEGATE);
  assert.equal(authorization.chainId, chain.id);
  assert.equal(authorization.nonce, 0);
  assert.equal(await recoverAuthorizationAddress({ authorization }), owner.address);

  assert.equal(await pub.getCode({ address: owner.address }), concat(['0xef0100', DELEGATE]).toLowerCase());
});

test('viem\'s Simple7702Account on the delegated EOA reads EntryPoint v0.8', async () => {
  assert.ok(authorization, 'the delegation of the test before');
  const account = await toSimple7702SmartAccount({ client: pub, owner });
  assert.equal(account.address, owner.address);
  assert.equal(await account.isDeployed(), true);
  // The EntryPoint's nonce: key 0, and viem's own key (high 192 bits), sequence 0 for both.
  assert.equal(await account.getNonce({ key: 0n }), 0n);
  const nonce = await account.getNonce();
  assert.ok(nonce >> 64n > 0n && (nonce & 0xffffffffffffffffn) === 0n, `nonce ${nonce}`);
  // The EOA runs Simple7702Account's code: its entryPoint() is v0.8's.
  const ep = await pub.readContract({ address: owner.address,
    abi: parseAbi(['function entryPoint() view returns (address)']), functionName: 'entryPoint' });
  assert.equal(ep, EP08);
});

test('the userOpHash of a 7702 op (factory 0x7702, eip7702Auth) is the EntryPoint\'s and viem\'s', async () => {
  assert.ok(authorization, 'the delegation of the first test');
  const account = await toSimple7702SmartAccount({ client: pub, owner });
  const op = {
    sender: owner.address, nonce: 0n, factory: '0x7702', factoryData: '0x',
    callData: await account.encodeCalls([{ to: DELEGATE, value: 0n, data: '0x' }]),
    callGasLimit: 100000n, verificationGasLimit: 200000n, preVerificationGas: 50000n,
    maxFeePerGas: 2000000000n, maxPriorityFeePerGas: 1000000000n, signature: '0x',
    authorization: { ...authorization, address: getAddress(authorization.address) },
  };
  const cHash = (o) => tool('evmtool', 'userop-hash', '0.8', EP08, chain.id,
    JSON.stringify(formatUserOperationRequest(o)));
  const onChain = (o) => pub.readContract({ address: EP08, abi: entryPoint08Abi,
    functionName: 'getUserOpHash', args: [toPackedUserOperation(o)] });
  const viemHash = getUserOperationHash({ chainId: chain.id, entryPointAddress: EP08,
    entryPointVersion: '0.8', userOperation: op });

  assert.equal(cHash(op), await onChain(op));
  assert.equal(cHash(op), viemHash);
  // With factoryData the delegate is hashed with it (initCode past the marker's 20 bytes).
  const withData = { ...op, factory: '0x7702000000000000000000000000000000000000', factoryData: '0x1234' };
  assert.equal(cHash(withData), await onChain(withData));
  // viem packs factory 0x7702 with factoryData as 0x7702 ++ factoryData: no marker for the
  // EntryPoint, nor for Blockport (viem's own hash differs there).
  const short = { ...op, factoryData: '0x1234' };
  assert.equal(cHash(short), await onChain(short));
  // Without the marker the plain v0.8 hash, equal to the EntryPoint's too.
  const plain = { ...op, factory: undefined, factoryData: undefined };
  assert.equal(cHash(plain), await onChain(plain));
  assert.notEqual(cHash(plain), cHash(op));
});

test('POST /v1/gas/sponsor: a 7702 op as viem sends it gets the EntryPoint\'s userOpHash, and lands', async () => {
  assert.ok(authorization, 'the delegation of the first test');
  const key = newKey({ plan: 'enterprise' });
  const pol = await api('/v1/gas/policies', { method: 'POST', key,
    body: { name: `7702-${Date.now()}`, chain: 'ethereum', rules: { max_gas_usd: '100' } } });
  assert.equal(pol.status, 201, pol.text);
  const account = await toSimple7702SmartAccount({ client: pub, owner });
  const fees = await pub.estimateFeesPerGas();
  const op = {
    sender: owner.address, nonce: await account.getNonce({ key: 0n }), factory: '0x7702', factoryData: '0x',
    callData: await account.encodeCalls([{ to: DELEGATE, value: 0n, data: '0x' }]),
    callGasLimit: 100000n, verificationGasLimit: 300000n, preVerificationGas: 60000n,
    maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, signature: '0x',
    authorization: { ...authorization, address: getAddress(authorization.address) },
  };
  const res = await api('/v1/gas/sponsor', { method: 'POST', key, body: { chain: 'ethereum',
    policy_id: pol.json.id, entry_point: EP08, user_operation: formatUserOperationRequest(op) } });
  assert.equal(res.status, 200, res.text);
  const s = res.json;
  const signed = { ...op, paymaster: s.paymaster, paymasterData: s.paymasterData,
    paymasterVerificationGasLimit: BigInt(s.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: BigInt(s.paymasterPostOpGasLimit) };
  const hash = await pub.readContract({ address: EP08, abi: entryPoint08Abi, functionName: 'getUserOpHash',
    args: [toPackedUserOperation(signed)] });
  assert.equal(s.user_op_hash, hash, 'the EntryPoint\'s own userOpHash');

  // The EOA signs it as Simple7702Account checks; a fresh funded key sends handleOps.
  signed.signature = await account.signUserOperation({ ...signed, chainId: chain.id });
  const beneficiary = privateKeyToAccount(generatePrivateKey());
  await pub.request({ method: 'anvil_setBalance', params: [beneficiary.address, toHex(parseEther('1'))] });
  const wallet = createWalletClient({ chain, account: beneficiary, transport: http(env.chain) });
  // A type 4 transaction that carries the op's authorization (its nonce is past: the node skips it).
  const tx = await wallet.writeContract({ address: EP08, abi: entryPoint08Abi, functionName: 'handleOps',
    args: [[toPackedUserOperation(signed)], beneficiary.address], authorizationList: [authorization] });
  const rcpt = await pub.waitForTransactionReceipt({ hash: tx, pollingInterval: 100, timeout: 60000 });
  assert.equal(rcpt.status, 'success');
  const [ev] = parseEventLogs({ abi: entryPoint08Abi, logs: rcpt.logs, eventName: 'UserOperationEvent' });
  assert.equal(ev.args.userOpHash, hash);
  assert.equal(ev.args.success, true);
  assert.equal(ev.args.paymaster, getAddress(s.paymaster));

  // Blockport's bundler never saw it: the indexer did, and the lookup reads it back from the
  // handleOps calldata, with the sender's authorization from the transaction.
  const byHash = async () => (await api('/v1/bundler/ethereum/devnet', { method: 'POST', key,
    body: { jsonrpc: '2.0', id: 1, method: 'eth_getUserOperationByHash', params: [hash] } })).json.result;
  const got = await waitFor(byHash, 'the indexed 7702 op', 60000);
  assert.equal(got.transactionHash, tx);
  assert.equal(getAddress(got.entryPoint), EP08);
  const u = got.userOperation;
  assert.equal(getAddress(u.sender), owner.address);
  assert.equal(u.factory, '0x7702');
  assert.equal(u.signature, signed.signature);
  assert.equal(getAddress(u.eip7702Auth.address), DELEGATE);
  assert.equal(BigInt(u.eip7702Auth.nonce), BigInt(authorization.nonce));
  assert.equal(BigInt(u.eip7702Auth.r), BigInt(authorization.r));
});

// The bundler takes EIP-7702 ops (docs/bundler.md, "EIP-7702"): viem's bundler client on
// Blockport's /v1/bundler sends a fresh EOA's first op with its authorization (factory 0x7702,
// eip7702Auth); the submitter's bundle is a type 4 transaction that carries it, and the EOA's
// code becomes the delegation. The EOA pays its own gas (anvil_setBalance).
const BUNDLER = `${env.base}/v1/bundler/ethereum/devnet`;
const bundlerRpc = async (key, method, params) => {
  const res = await api('/v1/bundler/ethereum/devnet', { method: 'POST', key,
    body: { jsonrpc: '2.0', id: 1, method, params } });
  assert.equal(res.status, 200, res.text);
  return res.json;
};
const freshAccount = async () => {
  const eoa = privateKeyToAccount(generatePrivateKey());
  await pub.request({ method: 'anvil_setBalance', params: [eoa.address, toHex(parseEther('1'))] });
  return { eoa, account: await toSimple7702SmartAccount({ client: pub, owner: eoa, implementation: DELEGATE }) };
};
const bundlerTransport = (key) => http(BUNDLER, { fetchOptions: { headers: { 'X-API-Key': key } } });
const bundlerClient = (key) => createBundlerClient({ client: pub, chain, pollingInterval: 200,
  transport: bundlerTransport(key), userOperation: { estimateFeesPerGas: () => pub.estimateFeesPerGas() } });

test('allowed_contracts applies to 7702 ops as to SimpleAccount ops: Simple7702Account\'s calls are read', async () => {
  assert.ok(authorization, 'the delegation of the first test');
  const key = newKey({ plan: 'enterprise' });
  const ALLOWED = getAddress(dc.entry_point_v07), OTHER = getAddress(dc.paymaster_v08);
  const pol = await api('/v1/gas/policies', { method: 'POST', key,
    body: { name: `7702c-${Date.now()}`, chain: 'ethereum', rules: { allowed_contracts: [ALLOWED] } } });
  assert.equal(pol.status, 201, pol.text);
  const fees = await pub.estimateFeesPerGas();
  const sponsor = async (account, sender, extra, to) => api('/v1/gas/sponsor', { method: 'POST', key,
    body: { chain: 'ethereum', policy_id: pol.json.id, entry_point: EP08, user_operation: formatUserOperationRequest({
      sender, nonce: await account.getNonce({ key: 0n }), ...extra,
      callData: await account.encodeCalls([{ to, value: 0n, data: '0x' }]),
      callGasLimit: 100000n, verificationGasLimit: 300000n, preVerificationGas: 60000n,
      maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, signature: '0x' }) } });

  // The EOA delegated by the first test (its code is the delegation): no factory, no authorization.
  const delegated = await toSimple7702SmartAccount({ client: pub, owner });
  let res = await sponsor(delegated, owner.address, {}, ALLOWED);
  assert.equal(res.status, 200, res.text);
  res = await sponsor(delegated, owner.address, {}, OTHER);
  assert.equal(res.status, 403, res.text);
  assert.match(res.json.error.message, /^allowed_contracts: 0x[0-9a-fA-F]{40} is not an allowed contract/);
  // A fresh EOA whose first op carries its authorization (factory 0x7702, eip7702Auth).
  const { eoa, account } = await freshAccount();
  const auth = await eoa.signAuthorization({ chainId: chain.id, address: DELEGATE, nonce: 0 });
  const first = { factory: '0x7702', factoryData: '0x', authorization: { ...auth, address: getAddress(auth.address) } };
  res = await sponsor(account, eoa.address, first, ALLOWED);
  assert.equal(res.status, 200, res.text);
  res = await sponsor(account, eoa.address, first, OTHER);
  assert.equal(res.status, 403, res.text);
  assert.match(res.json.error.message, /is not an allowed contract/);
  // An authorization to another delegate: its calls prove nothing.
  const elsewhere = await eoa.signAuthorization({ chainId: chain.id, address: OTHER, nonce: 0 });
  res = await sponsor(account, eoa.address, { ...first, authorization: { ...elsewhere, address: OTHER } }, ALLOWED);
  assert.equal(res.status, 403, res.text);
  assert.match(res.json.error.message, /not an account Blockport knows/);
});

test('the bundler: a fresh EOA\'s first op with its authorization lands in a type 4 bundle and delegates it; later ops need none', async () => {
  const key = newKey({ plan: 'enterprise' });
  const { eoa, account } = await freshAccount();
  const client = bundlerClient(key);
  const wallet = createWalletClient({ chain, account: eoa, transport: http(env.chain) });
  const authorization = await wallet.signAuthorization({ account: eoa, contractAddress: DELEGATE });
  assert.equal(await pub.getCode({ address: eoa.address }), undefined);

  const hash = await client.sendUserOperation({ account, authorization,
    calls: [{ to: DELEGATE, value: 0n, data: '0x' }] });
  const rcpt = await client.waitForUserOperationReceipt({ hash, timeout: 60000, pollingInterval: 200 });
  assert.equal(rcpt.success, true);
  assert.equal(getAddress(rcpt.sender), eoa.address);
  assert.equal(getAddress(rcpt.entryPoint), EP08);
  const tx = await pub.getTransaction({ hash: rcpt.receipt.transactionHash });
  assert.equal(tx.type, 'eip7702', 'the bundle carries the authorization');
  assert.equal(tx.authorizationList.length, 1);
  assert.equal(await recoverAuthorizationAddress({ authorization: tx.authorizationList[0] }), eoa.address);
  assert.equal(await pub.getCode({ address: eoa.address }), concat(['0xef0100', DELEGATE]).toLowerCase());
  // The op as stored keeps its authorization.
  const got = await bundlerRpc(key, 'eth_getUserOperationByHash', [hash]);
  assert.equal(getAddress(got.result.userOperation.eip7702Auth.address), DELEGATE);
  assert.equal(got.result.userOperation.factory, '0x7702');

  // Delegated now: viem sends no factory nor authorization; the bundle is type 2 again.
  const hash2 = await client.sendUserOperation({ account, calls: [{ to: DELEGATE, value: 0n, data: '0x' }] });
  const rcpt2 = await client.waitForUserOperationReceipt({ hash: hash2, timeout: 60000, pollingInterval: 200 });
  assert.equal(rcpt2.success, true);
  assert.equal((await pub.getTransaction({ hash: rcpt2.receipt.transactionHash })).type, 'eip1559');

  // factory 0x7702 without eip7702Auth: the delegate is read from the EOA's code and hashed as
  // the EntryPoint does (viem would hash the marker itself: the op is signed over the EntryPoint's).
  const op = await client.prepareUserOperation({ account, factory: '0x7702', factoryData: '0x',
    calls: [{ to: DELEGATE, value: 0n, data: '0x' }] });
  op.factory = '0x7702';
  op.factoryData = '0x';
  delete op.authorization;
  const onChain = await pub.readContract({ address: EP08, abi: entryPoint08Abi, functionName: 'getUserOpHash',
    args: [toPackedUserOperation(op)] });
  op.signature = await eoa.sign({ hash: onChain });
  const sent = await bundlerRpc(key, 'eth_sendUserOperation', [formatUserOperationRequest(op), EP08]);
  assert.equal(sent.result, onChain, JSON.stringify(sent));
  const rcpt3 = await client.waitForUserOperationReceipt({ hash: sent.result, timeout: 60000, pollingInterval: 200 });
  assert.equal(rcpt3.success, true);
});

test('the bundler refuses an eip7702Auth not signed by the sender, of another chain or nonce (-32602), and factory 0x7702 from an EOA not delegated', async () => {
  const key = newKey({ plan: 'enterprise' });
  const { eoa, account } = await freshAccount();
  const other = privateKeyToAccount(generatePrivateKey());
  const fees = await pub.estimateFeesPerGas();
  const op = {
    sender: eoa.address, nonce: 0n, factory: '0x7702', factoryData: '0x',
    callData: await account.encodeCalls([{ to: DELEGATE, value: 0n, data: '0x' }]),
    callGasLimit: 100000n, verificationGasLimit: 300000n, preVerificationGas: 80000n,
    maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    signature: await account.getStubSignature(),
  };
  const send = (authorization) => bundlerRpc(key, 'eth_sendUserOperation',
    [formatUserOperationRequest({ ...op, authorization }), EP08]);
  const cases = [
    ['another key', await other.signAuthorization({ chainId: chain.id, address: DELEGATE, nonce: 0 }), /not signed by the sender/],
    ['another chain', await eoa.signAuthorization({ chainId: chain.id + 1, address: DELEGATE, nonce: 0 }), /eip7702Auth\.chainId/],
    ['a used nonce', await eoa.signAuthorization({ chainId: chain.id, address: DELEGATE, nonce: 5 }), /eip7702Auth\.nonce/],
    ['none', undefined, /eip7702Auth is required/],
  ];
  for (const [what, authorization, message] of cases) {
    const res = await send(authorization);
    assert.equal(res.error?.code, -32602, `${what}: ${JSON.stringify(res)}`);
    assert.match(res.error.message, message, what);
  }
  assert.equal(await pub.getCode({ address: eoa.address }), undefined, 'nothing was sent');
});

test('the submitter tips no more than the node suggests: ops that offer twice the suggestion do not make it grow', async () => {
  const key = newKey({ plan: 'enterprise' });
  const { eoa, account } = await freshAccount();
  const client = bundlerClient(key);
  const wallet = createWalletClient({ chain, account: eoa, transport: http(env.chain) });
  const authorization = await wallet.signAuthorization({ account: eoa, contractAddress: DELEGATE });
  const tips = [];
  for (let i = 0; i < 3; i++) {
    // What viem's default fees do on a quiet chain: twice the node's suggested tip.
    const suggested = BigInt(await pub.request({ method: 'eth_maxPriorityFeePerGas' }));
    const { baseFeePerGas } = await pub.getBlock();
    const hash = await client.sendUserOperation({ account, authorization: i === 0 ? authorization : undefined,
      maxPriorityFeePerGas: 2n * suggested, maxFeePerGas: 2n * baseFeePerGas + 2n * suggested,
      calls: [{ to: DELEGATE, value: 0n, data: '0x' }] });
    const rcpt = await client.waitForUserOperationReceipt({ hash, timeout: 60000, pollingInterval: 200 });
    assert.equal(rcpt.success, true);
    const tx = await pub.getTransaction({ hash: rcpt.receipt.transactionHash });
    assert.ok(tx.maxPriorityFeePerGas <= suggested, `bundle ${i}: tip ${tx.maxPriorityFeePerGas} > suggested ${suggested}`);
    tips.push(tx.maxPriorityFeePerGas);
  }
  assert.ok(tips.every((t) => t <= tips[0]), `the tips grew: ${tips}`);
});

test('the bundler: a fresh EOA without ETH delegates with its first op, sponsored by Blockport\'s ERC-7677 paymaster', async () => {
  const key = newKey({ plan: 'enterprise' });
  const pol = await api('/v1/gas/policies', { method: 'POST', key,
    body: { name: `7702b-${Date.now()}`, chain: 'ethereum', rules: { max_gas_usd: '100' } } });
  assert.equal(pol.status, 201, pol.text);
  const eoa = privateKeyToAccount(generatePrivateKey());
  const account = await toSimple7702SmartAccount({ client: pub, owner: eoa, implementation: DELEGATE });
  const client = createBundlerClient({ client: pub, chain, pollingInterval: 200, transport: bundlerTransport(key),
    paymaster: createPaymasterClient({ transport: bundlerTransport(key) }), paymasterContext: { policyId: pol.json.id } });
  const authorization = await eoa.signAuthorization({ chainId: chain.id, address: DELEGATE,
    nonce: await pub.getTransactionCount({ address: eoa.address }) });
  const hash = await client.sendUserOperation({ account, authorization, calls: [{ to: DELEGATE, value: 0n, data: '0x' }] });
  const rcpt = await client.waitForUserOperationReceipt({ hash, timeout: 60000, pollingInterval: 200 });
  assert.equal(rcpt.success, true);
  assert.equal(getAddress(rcpt.paymaster), getAddress(dc.paymaster_v08), 'sponsored');
  assert.equal(await pub.getBalance({ address: eoa.address }), 0n, 'the EOA paid nothing');
  assert.equal(await pub.getCode({ address: eoa.address }), concat(['0xef0100', DELEGATE]).toLowerCase());
});
