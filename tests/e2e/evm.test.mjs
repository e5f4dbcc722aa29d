// Blockport's EVM primitives (lib/evm) checked against someone else's code and a real node:
// transactions signed in C are byte-identical to ethers' and are accepted by the devchain;
// personal signatures and keccak agree with ethers. The C side runs as build/tools/evmtool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { ethers } from 'ethers';
import { env } from './helpers.mjs';
import { account as devAccount } from '../../devchain/dev.mjs';

const tool = (...args) =>
  execFileSync(`${env.build}/tools/evmtool`, args.map(String), { encoding: 'utf8' }).trim();

async function chainRpc(method, params = []) {
  const res = await fetch(env.chain, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const j = await res.json();
  if (j.error) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
}

function signBoth(wallet, tx) {
  const c = tool('sign-tx', wallet.privateKey, tx.chainId, tx.nonce, tx.maxPriorityFeePerGas,
    tx.maxFeePerGas, tx.gasLimit, tx.to ?? '-', tx.value, tx.data ?? '0x').split(' ');
  return { raw: c[0], hash: c[1], from: c[2] };
}

test('EIP-1559 transactions signed in C equal ethers byte for byte', async () => {
  const wallet = new ethers.Wallet(devAccount(30).privateKey);
  const cases = [
    { chainId: 31337, nonce: 0, maxPriorityFeePerGas: 1n, maxFeePerGas: 2n, gasLimit: 21000,
      to: ethers.Wallet.createRandom().address, value: 1n },
    { chainId: 1, nonce: 12345, maxPriorityFeePerGas: 0n, maxFeePerGas: 10n ** 12n,
      gasLimit: 100000, to: ethers.Wallet.createRandom().address, value: 0n,
      data: '0xa9059cbb' + '00'.repeat(12) + 'ab'.repeat(20) + '00'.repeat(31) + '07' },
    { chainId: 137, nonce: 2 ** 40, maxPriorityFeePerGas: 3n * 10n ** 9n,
      maxFeePerGas: 2n ** 256n - 1n, gasLimit: 3000000, value: 10n ** 30n,
      data: '0x' + randomBytes(300).toString('hex') },
  ];
  for (const tx of cases) {
    const c = signBoth(wallet, tx);
    const e = await wallet.signTransaction({ type: 2, ...tx, to: tx.to ?? null });
    assert.equal(c.raw, e, `raw tx for nonce ${tx.nonce}`);
    assert.equal(c.hash, ethers.keccak256(e));
    assert.equal(c.from, wallet.address);
    assert.equal(ethers.Transaction.from(c.raw).from, wallet.address);
  }
});

test('the devchain accepts a transaction signed in C and recovers its sender', async () => {
  const wallet = new ethers.Wallet(devAccount(31).privateKey);
  await chainRpc('anvil_setBalance', [wallet.address, '0x' + (10n ** 20n).toString(16)]);
  const nonce = Number(await chainRpc('eth_getTransactionCount', [wallet.address, 'pending']));
  const block = await chainRpc('eth_getBlockByNumber', ['latest', false]);
  const to = ethers.Wallet.createRandom().address;
  const tx = { chainId: 31337, nonce, maxPriorityFeePerGas: 10n ** 9n,
    maxFeePerGas: BigInt(block.baseFeePerGas) * 2n + 10n ** 9n, gasLimit: 21000, to,
    value: 123456789n };
  const c = signBoth(wallet, tx);
  const hash = await chainRpc('eth_sendRawTransaction', [c.raw]);
  assert.equal(hash, c.hash);
  let receipt = null;
  for (let i = 0; i < 100 && !receipt; i++) {
    receipt = await chainRpc('eth_getTransactionReceipt', [hash]);
    if (!receipt) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(receipt, 'receipt');
  assert.equal(receipt.status, '0x1');
  assert.equal(ethers.getAddress(receipt.from), wallet.address);
  assert.equal(BigInt(await chainRpc('eth_getBalance', [to, 'latest'])), 123456789n);
});

test('EIP-191 personal signatures and recovery agree with ethers', async () => {
  const wallet = new ethers.Wallet(devAccount(32).privateKey);
  for (const msg of ['hello', '', 'x'.repeat(1000), 'unicode: \u00e9\u4e2d']) {
    const sig = tool('personal-sign', wallet.privateKey, msg);
    assert.equal(sig, await wallet.signMessage(msg), `signature of ${JSON.stringify(msg)}`);
    assert.equal(tool('recover', msg, sig), wallet.address);
    assert.equal(ethers.verifyMessage(msg, sig), wallet.address);
  }
  const other = await new ethers.Wallet(devAccount(33).privateKey).signMessage('hello');
  assert.notEqual(tool('recover', 'hello', other), wallet.address);
});

test('keccak-256 agrees with ethers on random inputs of every length class', () => {
  for (const n of [0, 1, 31, 32, 135, 136, 137, 272, 1000]) {
    const data = '0x' + randomBytes(n).toString('hex');
    assert.equal(tool('keccak', data), ethers.keccak256(data), `length ${n}`);
  }
});
