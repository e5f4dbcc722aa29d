// ERC-7562 on /v1/bundler end to end (docs/bundler.md, "ERC-7562"): accounts, paymasters and
// factories whose validation breaks a rule, installed with anvil_setCode from hand-assembled
// bytecode (each commented), are refused with -32502 naming the rule (-32505 where stake would
// allow it); reputation throttles and bans a paymaster (-32504), as debug_bundler_dumpReputation
// shows; and a normal op still lands. The test stack turns debug_bundler on for the devnet.
// EntryPoint v0.7 and v0.8 ops are traced with EntryPointSimulations put at the EntryPoint's
// address by debug_traceCall's stateOverrides (v0.8's EIP-7702 delegation by the same override)
// and judged by the same engine: the hand-assembled code answers whatever it is called with, so
// it serves v0.7's validateUserOp(PackedUserOperation,bytes32,uint256) and
// validatePaymasterUserOp (a uint256; a context and a uint256) and SenderCreator's call of the
// factory (an address) as it serves v0.6's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createPublicClient, createWalletClient, getAddress, getContractAddress, http, parseEther,
  parseGwei, toHex } from 'viem';
import { formatUserOperationRequest } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { api, env, newKey, waitFor } from './helpers.mjs';

const entryPointAbi = JSON.parse(readFileSync(new URL(
  './node_modules/@account-abstraction/contracts/artifacts/EntryPoint.json', import.meta.url), 'utf8')).abi;
const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const EP = getAddress(dc.entry_point);
const EP07 = getAddress(dc.entry_point_v07);
const EP08 = getAddress(dc.entry_point_v08);
const chain = { ...foundry, rpcUrls: { default: { http: [env.chain] } } };
const pub = createPublicClient({ chain, transport: http(env.chain) });
const rpc = (method, params = []) => pub.request({ method, params });
const hex = (a) => a.slice(2).toLowerCase();

// Runtime code, hand-assembled. RET0: return one zero word (validateUserOp's validationData 0).
const RET0 = '600060005260206000f3';		// PUSH1 0 PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN
// validatePaymasterUserOp's (bytes context, uint256 validationData) = (empty, 0).
const PM_RET = '604060005260606000f3';		// PUSH1 0x40 PUSH1 0 MSTORE PUSH1 96 PUSH1 0 RETURN
// CALL(GAS, to, 0, 0, 0, 0, 0) and POP its result.
const callTo = (to) => `60006000600060006000 73${hex(to)} 5af150`.replace(/ /g, '');

let key;
let funder;
before(async () => {
  key = newKey({ plan: 'enterprise' });
  funder = createWalletClient({ account: privateKeyToAccount(generatePrivateKey()), chain, transport: http(env.chain) });
  await rpc('anvil_setBalance', [funder.account.address, toHex(parseEther('100'))]);
  await debug('debug_bundler_setBundlingMode', ['auto']);
});
after(async () => { await debug('debug_bundler_setBundlingMode', ['auto']); });

let nextId = 1;
async function call(method, params) {
  const res = await api('/v1/bundler/ethereum/devnet', { method: 'POST', key,
    body: { jsonrpc: '2.0', id: nextId++, method, params } });
  assert.equal(res.status, 200, res.text);
  return res.json;
}
async function debug(method, params = []) {
  const j = await call(method, params);
  assert.equal(j.error, undefined, `${method}: ${JSON.stringify(j)}`);
  return j.result;
}
async function refused(op, code, re, ep = EP) {
  const j = await call('eth_sendUserOperation', [op, ep]);
  assert.ok(j.error, `must be refused: ${JSON.stringify(j)}`);
  assert.equal(j.error.code, code, JSON.stringify(j));
  assert.match(j.error.message, re);
}
const send = async (op, ep = EP) => debug('eth_sendUserOperation', [op, ep]);

// Installs code at a fresh address; returns it.
async function install(code) {
  const a = privateKeyToAccount(generatePrivateKey()).address;
  await rpc('anvil_setCode', [a, `0x${code}`]);
  return a;
}
// A deposit in the EntryPoint ep for a (the sender's prefund, or a paymaster's); depositTo is
// the same function in every version.
async function deposit(a, eth = '1', ep = EP) {
  await pub.waitForTransactionReceipt({ hash: await funder.writeContract({ address: ep, abi: entryPointAbi,
    functionName: 'depositTo', args: [a], value: parseEther(eth) }) });
}
async function fees() {
  const block = await pub.getBlock();
  const tip = parseGwei('1');
  return { maxFeePerGas: toHex(block.baseFeePerGas * 2n + tip), maxPriorityFeePerGas: toHex(tip) };
}
async function op(sender, extra = {}) {
  return { sender, nonce: '0x0', initCode: '0x', callData: '0x', callGasLimit: toHex(50000),
    verificationGasLimit: toHex(400000), preVerificationGas: toHex(100000), ...(await fees()),
    paymasterAndData: '0x', signature: '0x', ...extra };
}
// The same op in v0.7's and v0.8's form.
async function op07(sender, extra = {}) {
  const { initCode, paymasterAndData, ...rest } = await op(sender);
  return { ...rest, ...extra };
}
// An account that accepts everything, with its own deposit (it pays no prefund itself).
async function account(code = RET0, ep = EP) {
  const a = await install(code);
  await deposit(a, '1', ep);
  return a;
}
const landed = async (h) => assert.equal((await waitFor(async () => (await call('eth_getUserOperationReceipt',
  [h])).result, 'the receipt', 30000)).success, true);

test('OP-011: an account that reads TIMESTAMP in validation is refused; a normal op lands', async () => {
  const bad = await account(`4250${RET0}`);		// TIMESTAMP POP, then RET0
  await refused(await op(bad), -32502, /^\[OP-011\] account uses banned opcode TIMESTAMP/);
  await landed(await send(await op(await account())));
});

for (const [version, ep] of [['v0.7', EP07], ['v0.8', EP08]]) {
  test(`${version} OP-011: an account that reads TIMESTAMP in validation is refused; a normal op lands`, async () => {
    await refused(await op07(await account(`4250${RET0}`, ep)), -32502,
      /^\[OP-011\] account uses banned opcode TIMESTAMP/, ep);
    await landed(await send(await op07(await account(RET0, ep)), ep));
  });
}

test('v0.8 EIP-7702: an EOA delegating in its op to code that reads TIMESTAMP is refused (the trace runs the delegation)', async () => {
  const eoa = privateKeyToAccount(generatePrivateKey());
  await deposit(eoa.address, '1', EP08);
  const authorization = await eoa.signAuthorization({ chainId: chain.id, address: await install(`4250${RET0}`), nonce: 0 });
  const o = await op07(eoa.address);
  await refused(formatUserOperationRequest({ ...o, nonce: 0n, factory: '0x7702', factoryData: '0x', callGasLimit: 50000n,
    verificationGasLimit: 400000n, preVerificationGas: 130000n, maxFeePerGas: BigInt(o.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(o.maxPriorityFeePerGas), authorization }), -32502,
  /^\[OP-011\] account uses banned opcode TIMESTAMP/, EP08);
});

test('v0.8 EIP-7702: the initialisation call after the marker (made by the SenderCreator) is judged as the account\'s', async () => {
  // CALLDATASIZE PUSH1 4 EQ PUSH1 0x11 JUMPI; RET0; JUMPDEST TIMESTAMP POP RET0: TIMESTAMP only in
  // the 4-byte initialisation call, not in validateUserOp.
  const delegate = await install(`3660041460115 7${RET0}5b4250${RET0}`.replace(/ /g, ''));
  const eoa = privateKeyToAccount(generatePrivateKey());
  await deposit(eoa.address, '1', EP08);
  const authorization = await eoa.signAuthorization({ chainId: chain.id, address: delegate, nonce: 0 });
  const o = await op07(eoa.address);
  await refused(formatUserOperationRequest({ ...o, nonce: 0n, factory: `0x7702${'0'.repeat(36)}`,
    factoryData: '0x12345678', callGasLimit: 50000n, verificationGasLimit: 400000n, preVerificationGas: 130000n,
    maxFeePerGas: BigInt(o.maxFeePerGas), maxPriorityFeePerGas: BigInt(o.maxPriorityFeePerGas), authorization }),
  -32502, /^\[OP-011\] account uses banned opcode TIMESTAMP/, EP08);
});

test('OP-054: an account calling the EntryPoint\'s handleOps from validation is refused', async () => {
  // PUSH4 handleOps PUSH1 0xe0 SHL PUSH1 0 MSTORE; CALL(GAS, EP, 0, 0, 4, 0, 0) POP; RET0
  const code = `631fad948c60e01b600052 6000600060046000600073${hex(EP)}5af150 ${RET0}`.replace(/ /g, '');
  await refused(await op(await account(code)), -32502, /^\[OP-054\] account calls the EntryPoint's handleOps/);
});

// v0.6's fields, or v0.7's (the paymaster with its two gas limits; the factory and its data).
const V06 = { ep: EP, op, paymaster: (pm) => ({ paymasterAndData: pm }), factory: (f) => ({ initCode: f }) };
const V07 = { ep: EP07, op: op07, paymaster: (pm) => ({ paymaster: pm, paymasterVerificationGasLimit: toHex(100000),
  paymasterPostOpGasLimit: '0x0', paymasterData: '0x' }), factory: (f) => ({ factory: f, factoryData: '0x' }) };

for (const [version, v] of [['', V06], ['v0.7 ', V07]]) {
  test(`${version}STO: a paymaster writing another entity's storage is refused; its own storage needs stake`, async () => {
    const acc = await account(RET0, v.ep);
    // Another paymaster's code that writes its own slot 1: PUSH1 1 PUSH1 1 SSTORE STOP.
    const other = await install('600160015500');
    const pm = await install(`${callTo(other)}${PM_RET}`);
    await deposit(pm, '1', v.ep);
    await refused(await v.op(acc, v.paymaster(pm)), -32502,
      new RegExp(`^\\[STO-033\\] paymaster writes the storage of ${other.toLowerCase()}`), v.ep);
    // PUSH1 0 SLOAD POP: its own slot 0, unstaked.
    const own = await install(`60005450${PM_RET}`);
    await deposit(own, '1', v.ep);
    await refused(await v.op(acc, v.paymaster(own)), -32505,
      /^\[STO-031\] unstaked paymaster accesses its own storage/, v.ep);
  });

  test(`${version}OP-031: a factory that CREATE2s twice is refused`, async () => {
    // The account's creation code: PUSH10 RET0 PUSH1 0 MSTORE PUSH1 10 PUSH1 22 RETURN (19 bytes).
    const init = `69${RET0}600052600a6016f3`;
    // PUSH19 init PUSH1 0 MSTORE; CREATE2(0, 13, 19, salt 0); CREATE2(0, 13, 19, salt 1) POP;
    // return the first address.
    const factory = await install(`72${init}600052 6000 6013 600d 6000 f5 6001 6013 600d 6000 f5 50 600052 6020 6000 f3`
      .replace(/ /g, ''));
    const sender = getContractAddress({ opcode: 'CREATE2', from: factory, salt: toHex(0, { size: 32 }),
      bytecode: `0x${init}` });
    await deposit(sender, '1', v.ep);
    await refused(await v.op(sender, v.factory(factory)), -32502, /^\[OP-031\] factory uses CREATE2 more than once/, v.ep);
  });

  test(`${version}OP-031: a factory whose first CREATE2 fails for want of balance is refused (the static pass leaves it to the steps)`, async () => {
    const init = `69${RET0}600052600a6016f3`;
    // PUSH19 init PUSH1 0 MSTORE; CREATE2(1 wei, 13, 19, salt 1) POP: the factory has no wei, so
    // it fails before any code runs (anvil's call tree shows it without an address);
    // CREATE2(0, 13, 19, salt 0); return the address.
    const factory = await install(`72${init}600052 6001 6013 600d 6001 f5 50 6000 6013 600d 6000 f5 600052 6020 6000 f3`
      .replace(/ /g, ''));
    const sender = getContractAddress({ opcode: 'CREATE2', from: factory, salt: toHex(0, { size: 32 }),
      bytecode: `0x${init}` });
    await deposit(sender, '1', v.ep);
    await refused(await v.op(sender, v.factory(factory)), -32502, /^\[OP-031\] factory uses CREATE2 more than once/, v.ep);
  });
}

test('STO-040: a paymaster that is the sender of an op in the pool is refused', async () => {
  // Returns 64 zero bytes: validateUserOp's validationData 0, and validatePaymasterUserOp's
  // (context at offset 0: empty, validationData 0). PUSH1 64 PUSH1 0 RETURN.
  const both = await account('60406000f3');
  await debug('debug_bundler_setBundlingMode', ['manual']);
  try {
    await send(await op(both));
    await refused(await op(await account(), { paymasterAndData: both }), -32502,
      new RegExp(`^\\[STO-040\\] the paymaster ${both.toLowerCase()} is the sender of another op in the pool`));
  } finally {
    await debug('debug_bundler_clearState');
    await debug('debug_bundler_setBundlingMode', ['auto']);
  }
});

test('reputation: a paymaster seen far more than included is throttled (-32504), then banned', async () => {
  const pm = await install(PM_RET);
  await deposit(pm);
  await debug('debug_bundler_setBundlingMode', ['manual']);
  try {
    // 105 seen and none included is still ok (10 expected <= 0 + THROTTLING_SLACK); five more
    // make it throttled, which allows 4 ops in the pool: the fifth pending one refuses the sixth.
    await debug('debug_bundler_setReputation', [[{ address: pm, opsSeen: 105, opsIncluded: 0 }], EP]);
    for (let i = 0; i < 5; i++) await send(await op(await account(), { paymasterAndData: pm }));
    const rep = (await debug('debug_bundler_dumpReputation', [EP]))
      .find((e) => e.address.toLowerCase() === pm.toLowerCase());
    assert.deepEqual(rep, { address: getAddress(pm), opsSeen: toHex(110), opsIncluded: '0x0', status: 'throttled' });
    await refused(await op(await account(), { paymasterAndData: pm }), -32504, /throttled/);
    const pool = await debug('debug_bundler_dumpMempool', [EP]);
    assert.equal(pool.filter((o) => o.paymasterAndData.toLowerCase() === pm.toLowerCase()).length, 5);
    await debug('debug_bundler_setReputation', [[{ address: pm, opsSeen: toHex(1000), opsIncluded: '0x0' }], EP]);
    await refused(await op(await account(), { paymasterAndData: pm }), -32504, /banned/);
  } finally {
    await debug('debug_bundler_clearState');
    await debug('debug_bundler_setBundlingMode', ['auto']);
  }
  assert.deepEqual(await debug('debug_bundler_dumpMempool', [EP]), []);
});

test('reputation: a paymaster whose op fails when bundled is banned; sendBundleNow lands the others', async () => {
  const pm = await install(PM_RET);
  await deposit(pm);
  await debug('debug_bundler_setBundlingMode', ['manual']);
  try {
    const good = await send(await op(await account()));
    await send(await op(await account(), { paymasterAndData: pm }));
    // The paymaster now reverts (PUSH1 0 DUP1 REVERT): its op fails the bundle's re-check (AA33).
    await rpc('anvil_setCode', [pm, '0x600080fd']);
    const sent = await debug('debug_bundler_sendBundleNow');
    assert.match(sent, /^0x[0-9a-f]{64}$/);
    const r = await waitFor(async () => (await call('eth_getUserOperationReceipt', [good])).result, 'the receipt', 30000);
    assert.equal(r.receipt.transactionHash, sent);
    const rep = (await debug('debug_bundler_dumpReputation', [EP]))
      .find((e) => e.address.toLowerCase() === pm.toLowerCase());
    assert.equal(rep.status, 'banned');
    await rpc('anvil_setCode', [pm, `0x${PM_RET}`]);
    await refused(await op(await account(), { paymasterAndData: pm }), -32504, /banned/);
  } finally {
    await debug('debug_bundler_clearState');
    await debug('debug_bundler_setBundlingMode', ['auto']);
  }
});

test('debug_bundler_* are off unless the network turns them on', async () => {
  const res = await api('/v1/bundler/ethereum/mainnet', { method: 'POST', key: newKey({ plan: 'enterprise', live: true }),
    body: { jsonrpc: '2.0', id: 1, method: 'debug_bundler_dumpMempool', params: [EP] } });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.error.code, -32601, res.text);
});
