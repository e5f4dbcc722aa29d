// Limits as ordinary clients live with them: a Free key (10 requests a second, a bucket of 3
// seconds' worth: docs/limits.md) used as a dApp uses it, a burst of reads as a page loads, then
// ethers v6 sending a transaction and waiting for it (about 10 requests in a quarter second).
// ethers reads Retry-After as milliseconds, so a 429 there made it fail within milliseconds
// ("exceeded maximum retry limit"): the burst must simply pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';

import { env, newKey, nextSecond } from './helpers.mjs';

const rpcUrl = `${env.base}/v1/rpc/ethereum/devnet`;

async function call(key, method, params = []) {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

test('ethers sends and waits for a transaction right after a burst of calls, on a Free key',
  async () => {
    const key = newKey();	// free
    const wallet = ethers.Wallet.createRandom();
    // The sender's coins, straight from the devchain (not through the key).
    const fund = await fetch(env.chain, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_setBalance',
        params: [wallet.address, '0x56bc75e2d63100000'] }),
    });
    assert.equal(fund.status, 200);
    const req = new ethers.FetchRequest(rpcUrl);
    req.setHeader('X-API-Key', key);
    const provider = new ethers.JsonRpcProvider(req);
    const signer = wallet.connect(provider);

    // A page load, at the start of a second: ten reads at once.
    await nextSecond();
    const reads = await Promise.all([
      ...Array.from({ length: 5 }, () => call(key, 'eth_blockNumber')),
      ...Array.from({ length: 5 }, () => call(key, 'eth_getBalance', [wallet.address, 'latest'])),
    ]);
    for (const r of reads) assert.equal(r.status, 200, JSON.stringify(r.json));
    const to = ethers.Wallet.createRandom().address;
    const tx = await signer.sendTransaction({ to, value: 12345n });
    const receipt = await tx.wait();
    assert.equal(receipt.status, 1);
    assert.equal(await provider.getBalance(to), 12345n);
    provider.destroy();

    // The average still holds to the plan: hammered, the key is refused, Retry-After in seconds.
    const res = await Promise.all(Array.from({ length: 40 }, () => call(key, 'eth_chainId')));
    const limited = res.filter((r) => r.status === 429);
    assert.ok(limited.length > 0, 'a Free key hammered past its bucket is limited');
    for (const r of limited) {
      assert.equal(r.json.error.code, 'rate_limited');
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal(r.headers.get('x-ratelimit-limit'), '30');
      assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
    }
  });
