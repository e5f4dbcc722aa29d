// Prints the EIP-7702 vectors of tests/unit/test_evm_tx7702.c, computed by viem (run once:
// node tests/e2e/eip7702-vectors.mjs; the outputs are pasted there as constants).
import { keccak256, serializeTransaction } from 'viem';
import { hashAuthorization } from 'viem/utils';
import { privateKeyToAccount } from 'viem/accounts';
import { getUserOperationHash } from 'viem/account-abstraction';

// anvil's dev accounts 0 and 1 (public keys, DEV ONLY).
const key0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const key1 = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const simple7702 = '0xe6Cae83BdE06E4c305530e199D7217f42808555B';
const ep08 = '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108';
const eoa = privateKeyToAccount(key1);
const sender = privateKeyToAccount(key0);

const auths = [
  { chainId: 31337, address: simple7702, nonce: 0 },
  { chainId: 0, address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', nonce: 7 },
  { chainId: 1, address: ep08, nonce: 18446744073709551614n },
];
const signed = [];
for (const a of auths) {
  const s = await eoa.signAuthorization(a);
  signed.push(s);
  console.log('auth', a.chainId, a.address, a.nonce, 'hash', hashAuthorization(a),
    'r', s.r, 's', s.s, 'yParity', s.yParity);
}

const txs = [
  { chainId: 31337, nonce: 5, maxPriorityFeePerGas: 1000000000n, maxFeePerGas: 2000000000n,
    gas: 100000n, to: eoa.address, value: 0n, data: '0x', authorizationList: [signed[0]] },
  { chainId: 1, nonce: 0, maxPriorityFeePerGas: 0n, maxFeePerGas: 30000000000n, gas: 200000n,
    to: simple7702, value: 1000000000000000000n, data: '0xdeadbeef',
    authorizationList: [signed[1], signed[2]] },
];
for (const t of txs) {
  const tx = { type: 'eip7702', ...t };
  const unsigned = serializeTransaction(tx);
  const raw = await sender.signTransaction(tx);
  console.log('tx', 'signing', keccak256(unsigned), 'raw', raw, 'hash', keccak256(raw));
}

// userOpHash v0.8 of a Simple7702Account op: factory 0x7702 with the authorization (its
// address replaces the marker), with factoryData, and without an authorization (the marker).
const op = {
  sender: eoa.address, nonce: 3n, factory: '0x7702', factoryData: '0x',
  callData: '0xb61d27f6', callGasLimit: 100000n, verificationGasLimit: 200000n,
  preVerificationGas: 50000n, maxFeePerGas: 2000000000n, maxPriorityFeePerGas: 1000000000n,
  signature: '0x', authorization: signed[0],
};
const h = (userOperation) => getUserOperationHash({ chainId: 31337, entryPointAddress: ep08,
  entryPointVersion: '0.8', userOperation });
console.log('userop 7702', h(op));
console.log('userop 7702 factoryData', h({ ...op, factoryData: '0x1234' }));
console.log('userop marker only', h({ ...op, authorization: undefined }));
console.log('userop plain', h({ ...op, factory: undefined, factoryData: undefined, authorization: undefined }));
