// lib/evm/chain.c against the devchain (docs/evm.md, "chain"): each typed read, through
// build/tools/chaintool and the test config's ethereum devnet upstream, agrees with viem reading
// the same node; a batch of eth_calls and the same calls through Multicall3's aggregate3 (which
// deploy.mjs installs at its canonical address) give the same answers, reverts included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createPublicClient, decodeFunctionResult, encodeFunctionData, getAddress, http, parseAbi } from 'viem';
import { env } from './helpers.mjs';

const factoryAbi = parseAbi(['function getAddress(address owner, uint256 salt) view returns (address)']);
const entryPointAbi = parseAbi(['function balanceOf(address account) view returns (uint256)']);
const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const [FACTORY, ENTRY_POINT, DEPLOYER] = [dc.account_factory, dc.entry_point, dc.deployer]
  .map((a) => getAddress(a));
const pub = createPublicClient({ transport: http(env.chain) });

// Runs chaintool on the devnet; returns its output lines (throws on a non-zero exit).
const tool = (...args) => execFileSync(`${env.build}/tools/chaintool`, ['ethereum', 'devnet', ...args],
  { encoding: 'utf8', env: { ...process.env, BLOCKPORT_CONFIG: env.config } }).trim().split('\n');

const getAddressCall = (owner, salt) => encodeFunctionData({
  abi: factoryAbi, functionName: 'getAddress', args: [owner, salt] });

test('single reads: block number, code, balance, nonce, eth_call agree with viem', async () => {
  const before = await pub.getBlockNumber();
  const head = BigInt(tool('block-number')[0]);
  assert.ok(head >= before, `head ${head} behind viem's ${before}`);

  assert.equal(tool('code', ENTRY_POINT)[0], (await pub.getCode({ address: ENTRY_POINT })).toLowerCase());
  assert.equal(tool('has-code', ENTRY_POINT)[0], '1');
  assert.equal(tool('has-code', '0x000000000000000000000000000000000000dEaD')[0], '0');
  assert.equal(tool('code', '0x000000000000000000000000000000000000dEaD')[0], '0x');

  assert.equal(BigInt(tool('balance', dc.paymaster)[0]), await pub.getBalance({ address: dc.paymaster }));
  assert.ok(BigInt(tool('balance', DEPLOYER)[0]) > 0n);
  assert.equal(BigInt(tool('tx-count', DEPLOYER)[0]),
    BigInt(await pub.getTransactionCount({ address: DEPLOYER })));

  // EntryPoint.balanceOf(paymaster): the deposit, a uint256 decoded from the return data.
  const data = encodeFunctionData({ abi: entryPointAbi, functionName: 'balanceOf', args: [dc.paymaster] });
  const deposit = await pub.readContract({
    address: ENTRY_POINT, abi: entryPointAbi, functionName: 'balanceOf', args: [dc.paymaster] });
  assert.ok(deposit > 0n);
  assert.equal(BigInt(tool('call-u256', ENTRY_POINT, data)[0]), deposit);
});

test('a failed read names why: a revert is an RPC error with the node\'s code', () => {
  // An unknown selector on the factory reverts (it has no fallback).
  assert.throws(() => tool('call-u256', FACTORY, '0xdeadbeef'), (e) => {
    assert.equal(e.status, 1);
    assert.match(e.stdout, /^error 2 3 /);	// BP_CHAIN_ERR_RPC, code 3: execution reverted
    return true;
  });
});

test('Multicall3 is on the devchain, and calls through it equal the same calls in a batch', async () => {
  assert.equal(tool('has-multicall3')[0], '1');
  const owners = [DEPLOYER, getAddress(dc.paymaster_signer), FACTORY];
  const args = [];
  for (const [i, o] of owners.entries()) args.push(FACTORY, getAddressCall(o, BigInt(i * 7)));
  args.push(FACTORY, '0xdeadbeef');	// reverts: the other calls still answer
  const batch = tool('batch', ...args);
  const mc3 = tool('calls', ...args);
  assert.equal(batch.length, 4);
  assert.deepEqual(mc3.slice(0, 3), batch.slice(0, 3));
  for (const [i, o] of owners.entries()) {
    const want = await pub.readContract({
      address: FACTORY, abi: factoryAbi, functionName: 'getAddress', args: [o, BigInt(i * 7)] });
    const [ok, hex] = batch[i].split(' ');
    assert.equal(ok, 'ok');
    assert.equal(getAddress(decodeFunctionResult({ abi: factoryAbi, functionName: 'getAddress', data: hex })), want);
  }
  // The revert: an RPC error in both; through Multicall3 with the revert data (none here).
  assert.match(batch[3], /^error 2 3 /);
  assert.match(mc3[3], /^error 2 3 execution reverted$/);
});
