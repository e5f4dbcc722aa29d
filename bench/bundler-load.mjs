// The load of bench/bundler.sh, the same for every bundler: N UserOperations, each the first op
// of a fresh counterfactual SimpleAccount (of EntryPoint VERSION, 0.6 or 0.7) that pays for
// itself (funded with anvil_setBalance), all with the same fixed gas fields, signed in advance.
// v0.7 ops go over JSON-RPC in the unpacked form ERC-4337 gives the RPC (factory/factoryData,
// no paymaster fields: self-funded), hashed by viem as the v0.7 EntryPoint's getUserOpHash does.
//
//   node bench/bundler-load.mjs NAME BUNDLER_URL CHAIN_URL N CONCURRENCY LATENCY_OPS VERSION [API_KEY] [deployed]
//
// With "deployed", each account is deployed beforehand (factory.createAccount from dev account
// 9, not timed) and its op is its first from the deployed account: no initCode, no factory.
//
// Prints one line: NAME accepted_ops_per_s bundled_ops_per_s latency_p50_ms latency_p90_ms
//   accepted: N eth_sendUserOperation calls, CONCURRENCY at a time: N / time until all answered;
//   bundled:  N / time from the first send until every op has a receipt;
//   latency:  LATENCY_OPS ops sent one after another, each from send to its receipt (polled
//             every 20 ms with eth_getUserOperationReceipt).
import { createPublicClient, createWalletClient, encodeFunctionData, getAddress, http, parseEther, parseGwei, toHex } from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { getUserOperationHash } from 'viem/account-abstraction';
import { foundry } from 'viem/chains';

const [name, url, chainUrl, nArg, concArg, latArg, version, apiKey, mode] = process.argv.slice(2);
const DEPLOYED = mode === 'deployed';
const N = Number(nArg), CONC = Number(concArg), LAT = Number(latArg);
if (version !== '0.6' && version !== '0.7') throw new Error(`VERSION ${version}: 0.6 or 0.7`);
const V07 = version === '0.7';
const EP = V07 ? '0x0000000071727De22E5E9d8BAf0edAc6f37da032' : '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789';
const FACTORY = V07 ? '0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985' : '0x9406Cc6185a346906296840746125a0E44976454';
const pub = createPublicClient({ chain: { ...foundry, rpcUrls: { default: { http: [chainUrl] } } }, transport: http(chainUrl), pollingInterval: 50 });
const deployer = createWalletClient({ chain: { ...foundry, rpcUrls: { default: { http: [chainUrl] } } },
  account: mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 9 }),
  transport: http(chainUrl), pollingInterval: 50 });
const factoryAbi = [{ type: 'function', name: 'createAccount', stateMutability: 'nonpayable',
  inputs: [{ type: 'address' }, { type: 'uint256' }], outputs: [{ type: 'address' }] },
{ type: 'function', name: 'getAddress', stateMutability: 'view',
  inputs: [{ type: 'address' }, { type: 'uint256' }], outputs: [{ type: 'address' }] }];
const epAbi = [{ type: 'function', name: 'getUserOpHash', stateMutability: 'view', outputs: [{ type: 'bytes32' }],
  inputs: [{ type: 'tuple', components: ['sender:address', 'nonce:uint256', 'initCode:bytes', 'callData:bytes',
    'callGasLimit:uint256', 'verificationGasLimit:uint256', 'preVerificationGas:uint256', 'maxFeePerGas:uint256',
    'maxPriorityFeePerGas:uint256', 'paymasterAndData:bytes', 'signature:bytes'].map((c) => {
    const [n, t] = c.split(':'); return { name: n, type: t };
  }) }] }];
const executeAbi = [{ type: 'function', name: 'execute', stateMutability: 'nonpayable',
  inputs: [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }], outputs: [] }];

let id = 1;
async function rpc(method, params) {
  const headers = { 'Content-Type': 'application/json' };
  if (apiKey) headers['X-API-Key'] = apiKey;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }) });
  const j = await res.json();
  if (j.error) throw new Error(`${method}: ${JSON.stringify(j.error)}`);
  return j.result;
}

async function makeOp(fees, chainId) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const sender = await pub.readContract({ address: FACTORY, abi: factoryAbi, functionName: 'getAddress', args: [owner.address, 0n] });
  await pub.request({ method: 'anvil_setBalance', params: [sender, toHex(parseEther('1'))] });
  const factoryData = encodeFunctionData({ abi: factoryAbi, functionName: 'createAccount', args: [owner.address, 0n] });
  if (DEPLOYED)
    await pub.waitForTransactionReceipt({ hash: await deployer.sendTransaction({ to: FACTORY, data: factoryData }) });
  const op = {
    sender: getAddress(sender), nonce: 0n,
    ...(DEPLOYED ? (V07 ? {} : { initCode: '0x' }) :
      V07 ? { factory: FACTORY, factoryData } : { initCode: FACTORY + factoryData.slice(2) }),
    callData: encodeFunctionData({ abi: executeAbi, functionName: 'execute', args: [owner.address, 0n, '0x'] }),
    callGasLimit: 100000n, verificationGasLimit: 600000n, preVerificationGas: 100000n,
    maxFeePerGas: fees.max, maxPriorityFeePerGas: fees.tip,
    ...(V07 ? {} : { paymasterAndData: '0x' }), signature: '0x',
  };
  const hash = V07
    ? getUserOperationHash({ userOperation: op, entryPointAddress: EP, entryPointVersion: '0.7', chainId })
    : await pub.readContract({ address: EP, abi: epAbi, functionName: 'getUserOpHash', args: [op] });
  op.signature = await owner.signMessage({ message: { raw: hash } });
  const wire = Object.fromEntries(Object.entries(op).map(([k, v]) => [k, typeof v === 'bigint' ? toHex(v) : v]));
  return { wire, hash };
}

// The hash a bundler answers is the one signed (for v0.7: viem's and the bundler's agree).
async function send(o) {
  const h = await rpc('eth_sendUserOperation', [o.wire, EP]);
  if (h !== o.hash) throw new Error(`${name}: eth_sendUserOperation answered ${h}, signed ${o.hash}`);
}

async function receipt(hash, deadline) {
  for (;;) {
    const r = await rpc('eth_getUserOperationReceipt', [hash]);
    if (r) return r;
    if (Date.now() > deadline) throw new Error(`${name}: no receipt for ${hash}`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

const block = await pub.getBlock();
const chainId = await pub.getChainId();
const fees = { tip: parseGwei('1'), max: block.baseFeePerGas * 3n + parseGwei('1') };
const ops = [];
for (let i = 0; i < N + LAT; i++) ops.push(await makeOp(fees, chainId));
const load = ops.slice(0, N), single = ops.slice(N);

const t0 = performance.now();
let next = 0;
await Promise.all(Array.from({ length: CONC }, async () => {
  while (next < load.length) {
    const o = load[next++];
    await send(o);
  }
}));
const t1 = performance.now();
const deadline = Date.now() + 120000;
await Promise.all(load.map((o) => receipt(o.hash, deadline)));
const t2 = performance.now();

const lat = [];
for (const o of single) {
  const s = performance.now();
  await send(o);
  await receipt(o.hash, Date.now() + 60000);
  lat.push(performance.now() - s);
}
lat.sort((a, b) => a - b);
const pct = (p) => lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))].toFixed(0) : 'n/a';
console.log(`${name} ${(N / ((t1 - t0) / 1000)).toFixed(1)} ${(N / ((t2 - t0) / 1000)).toFixed(1)} ${pct(0.5)} ${pct(0.9)}`);
