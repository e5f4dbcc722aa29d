// POST /v1/rpc/{chain}/{network}, the JSON-RPC proxy, as clients meet it: viem against the
// devchain through Blockport, raw envelopes (valid, malformed, batched), ids echoed byte for
// byte, method classes and scopes, compute units and their limit, upstream failover, answers
// byte-identical to the node's, and Solana through the scripted stub (tests/e2e/solana-stub.mjs;
// the Solana devnet's own tests are tests/e2e/solana.test.mjs).
// Each test makes its own account (newKey), so no two tests share a rate counter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { createPublicClient, createWalletClient, http, parseAbi, parseEther, encodeFunctionData,
  defineChain } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

import { env, api, newKey, assertError, nextSecond } from './helpers.mjs';
import { account } from '../../devchain/dev.mjs';

const MAX_BATCH = 100;	// the default of max_batch
const MAX_BODY = 65536;	// scripts/stack.sh --test
const CU_PLAN_CUPS = 60;	// [plan cu] of scripts/stack.sh --test

const devchain = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const stubUrl = process.env.SOLANA_STUB_URL;
const erc20 = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);
const chain = defineChain({
  id: 31337, name: 'devnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [`${env.base}/v1/rpc/ethereum/devnet`] } },
});

const rpcPath = (chainName = 'ethereum', network = 'devnet') => `/v1/rpc/${chainName}/${network}`;
const req = (method, params, id = 1) =>
  (params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });

// A POST of body (a string is sent byte for byte) to the proxy.
function rpc(body, { key, path = rpcPath() } = {}) {
  return api(path, { method: 'POST', key, body });
}

// A POST of the same text straight to the devchain.
async function direct(text) {
  const res = await fetch(env.chain, { method: 'POST', body: text,
    headers: { 'Content-Type': 'application/json' } });
  return { status: res.status, text: await res.text() };
}

function transport(key, network = 'devnet') {
  return http(`${env.base}${rpcPath('ethereum', network)}`,
    { fetchOptions: { headers: { 'X-API-Key': key } } });
}

// Asserts a JSON-RPC error object: code, id, and optionally a message pattern.
function assertRpcError(obj, code, id, message) {
  assert.equal(obj.jsonrpc, '2.0');
  assert.deepEqual(obj.id, id);
  assert.equal(obj.error?.code, code, JSON.stringify(obj));
  assert.equal(typeof obj.error.message, 'string');
  if (message) assert.match(obj.error.message, message);
  assert.equal(obj.result, undefined);
}

test('viem reads through Blockport: chain id, block number, balance, ERC-20 call, logs', async () => {
  const key = newKey({ plan: 'growth' });
  const client = createPublicClient({ chain, transport: transport(key) });
  const node = createPublicClient({ chain, transport: http(env.chain) });
  assert.equal(await client.getChainId(), 31337);
  const n = await client.getBlockNumber();
  assert.ok(n >= BigInt(devchain.deploy_block), `block number ${n}`);
  const a0 = account(0).address;
  assert.equal(await client.getBalance({ address: a0 }), await node.getBalance({ address: a0 }));
  const bal = await client.readContract({ address: devchain.tokens.erc20_18, abi: erc20,
    functionName: 'balanceOf', args: [account(1).address] });
  assert.ok(bal >= 10000n * 10n ** 18n, `BPT of account 1: ${bal}`);
  const data = encodeFunctionData({ abi: erc20, functionName: 'balanceOf', args: [a0] });
  const call = await client.call({ to: devchain.tokens.erc20_18, data });
  assert.match(call.data, /^0x[0-9a-f]{64}$/);
  const logs = await client.getLogs({ address: devchain.tokens.erc20_18,
    event: erc20[1], fromBlock: BigInt(devchain.deploy_block), toBlock: 'latest' });
  assert.ok(logs.length >= 2, `${logs.length} Transfer logs of BPT`);
  assert.ok(logs.some((l) => l.args.to === '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'));
});

test('viem sends a signed transaction (rpc:write) and the receipt arrives', async () => {
  const key = newKey({ plan: 'growth', scopes: 'rpc:read,rpc:write' });
  const signer = privateKeyToAccount(account(3).privateKey);
  const wallet = createWalletClient({ account: signer, chain, transport: transport(key) });
  const client = createPublicClient({ chain, transport: transport(key), pollingInterval: 100 });
  const to = account(4).address;
  const before = await client.getBalance({ address: to });
  const hash = await wallet.sendTransaction({ to, value: parseEther('0.01') });
  assert.match(hash, /^0x[0-9a-f]{64}$/);
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 100,
    timeout: 20_000 });
  assert.equal(receipt.status, 'success');
  assert.equal(receipt.from, account(3).address);
  assert.equal(await client.getBalance({ address: to }), before + parseEther('0.01'));
});

test('a key with only rpc:read: 403 on eth_sendRawTransaction; in a batch, -32003 for that item',
  async () => {
    const key = newKey({ plan: 'growth', scopes: 'rpc:read' });
    const signer = privateKeyToAccount(account(3).privateKey);
    const raw = await signer.signTransaction({ chainId: 31337, type: 'eip1559', nonce: 1_000_000,
      to: account(4).address, value: 1n, gas: 21000n, maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1n });
    const res = await rpc(req('eth_sendRawTransaction', [raw]), { key });
    assertError(assert, res, 403, 'forbidden');
    assert.match(res.json.error.message, /rpc:write/);

    const b = await rpc([req('eth_chainId', [], 1), req('eth_sendRawTransaction', [raw], 2)],
      { key });
    assert.equal(b.status, 200);
    assert.equal(b.json.length, 2);
    assert.equal(b.json[0].result, '0x7a69');
    assertRpcError(b.json[1], -32003, 2, /rpc:write/);

    // A key without rpc:read cannot read either.
    const other = newKey({ plan: 'growth', scopes: 'data:read' });
    assertError(assert, await rpc(req('eth_blockNumber'), { key: other }), 403, 'forbidden');
  });

test('a mixed batch is answered item by item, in order; only valid items reach the node',
  async () => {
    const key = newKey({ plan: 'growth' });
    const body = [
      req('eth_chainId', [], 1),
      { jsonrpc: '2.0', id: 2 },				// no method
      req('eth_blockNumber', [], 'x'),
      req('eth_noSuchMethod', [], 3),
      5,							// not an object
      { jsonrpc: '1.0', id: 6, method: 'eth_chainId' },
      req('eth_getBalance', [account(0).address, 'latest'], 4),
      req('anvil_mine', [], 7),
    ];
    const res = await rpc(body, { key });
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.json));
    assert.equal(res.json.length, body.length);
    assert.deepEqual(res.json.map((o) => o.id), [1, 2, 'x', 3, null, 6, 4, 7]);
    assert.equal(res.json[0].result, '0x7a69');
    assertRpcError(res.json[1], -32600, 2, /method/);
    assert.match(res.json[2].result, /^0x[0-9a-f]+$/);
    assertRpcError(res.json[3], -32601, 3, /eth_noSuchMethod/);
    assertRpcError(res.json[4], -32600, null);
    assertRpcError(res.json[5], -32600, 6, /jsonrpc/);
    assert.match(res.json[6].result, /^0x[0-9a-f]+$/);
    assertRpcError(res.json[7], -32601, 7, /not offered/);
    // eth_chainId 1 + eth_blockNumber 1 + eth_getBalance 2; the rest cost nothing.
    assert.equal(res.headers.get('x-compute-units'), '4');
  });

test('malformed envelopes: each gets its JSON-RPC error in a 200 answer, and costs nothing',
  async () => {
    const key = newKey({ plan: 'growth' });
    const deep = `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":${'['.repeat(70)}${']'.repeat(70)}}`;
    const cases = [
      ['not json', -32700, null],
      ['', -32700, null],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_chainId"', -32700, null],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_chainId"} x', -32700, null],
      ['{"jsonrpc":"2.0","id":01,"method":"eth_chainId"}', -32700, null],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_chainId",}', -32700, null],
      ["{'jsonrpc':'2.0'}", -32700, null],
      ['"a string"', -32600, null],
      ['42', -32600, null],
      ['null', -32600, null],
      ['{"jsonrpc":"1.0","id":1,"method":"eth_chainId"}', -32600, 1],
      ['{"id":1,"method":"eth_chainId"}', -32600, 1],
      ['{"jsonrpc":2.0,"id":1,"method":"eth_chainId"}', -32600, 1],
      ['{"jsonrpc":"2.0","id":1}', -32600, 1],
      ['{"jsonrpc":"2.0","id":1,"method":5}', -32600, 1],
      ['{"jsonrpc":"2.0","id":1,"method":""}', -32600, 1],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":"x"}', -32600, 1],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":null}', -32600, 1],
      ['{"jsonrpc":"2.0","id":[1],"method":"eth_chainId"}', -32600, null],
      ['{"jsonrpc":"2.0","id":{"a":1},"method":"eth_chainId"}', -32600, null],
      ['{"jsonrpc":"2.0","id":true,"method":"eth_chainId"}', -32600, null],
      ['{"jsonrpc":"2.0","method":"eth_chainId"}', -32600, null],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_chainId","method":"eth_sendTransaction"}', -32600, 1],
      ['{"jsonrpc":"2.0","id":1,"m\\u0065thod":"eth_chainId","method":"eth_accounts"}', -32600, 1],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_send\\u0054ransaction","params":[]}', -32601, 1],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_chainId\\u0000"}', -32601, 1],
      [`{"jsonrpc":"2.0","id":1,"method":"${'a'.repeat(300)}"}`, -32601, 1],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_nope"}', -32601, 1],
      [deep, -32600, null],
    ];
    for (const [body, code, id] of cases) {
      const res = await rpc(body, { key });
      assert.equal(res.status, 200, `${body.slice(0, 80)}: ${res.text}`);
      assert.ok(res.json && !Array.isArray(res.json), `${body.slice(0, 80)}: ${res.text}`);
      assertRpcError(res.json, code, id);
      assert.equal(res.headers.get('x-compute-units'), '0', body.slice(0, 80));
    }
  });

test('methods that are never offered, and subscriptions over HTTP, are -32601', async () => {
  const key = newKey({ plan: 'growth' });
  const before = (await direct(JSON.stringify(req('eth_blockNumber')))).text;
  for (const m of ['eth_sendTransaction', 'eth_sign', 'personal_sign', 'personal_unlockAccount',
    'admin_peers', 'miner_start', 'debug_setHead', 'anvil_mine', 'anvil_setBalance', 'evm_mine',
    'evm_snapshot', 'hardhat_mine', 'wallet_addEthereumChain']) {
    const res = await rpc(req(m, []), { key });
    assert.equal(res.status, 200);
    assertRpcError(res.json, -32601, 1, /not offered/);
  }
  // Nothing reached the node: no block was mined.
  assert.equal((await direct(JSON.stringify(req('eth_blockNumber')))).text, before);
  const sub = await rpc(req('eth_subscribe', ['newHeads']), { key });
  assertRpcError(sub.json, -32601, 1, /\/v1\/ws\/ethereum\/devnet/);
  // Solana methods are unknown on an EVM chain, and the other way round.
  assertRpcError((await rpc(req('getSlot'), { key })).json, -32601, 1);
  assertRpcError((await rpc(req('eth_blockNumber'), { key, path: rpcPath('solana', 'devnet') })).json,
    -32601, 1);
});

test('debug_* and trace_* follow the plan: -32601 on free, forwarded on growth', async () => {
  const block = JSON.parse((await direct(JSON.stringify(req('eth_getBlockByNumber',
    [`0x${devchain.deploy_block.toString(16)}`, false])))).text).result;
  const tx = block.transactions[0];
  const free = newKey({ plan: 'free' });
  const r1 = await rpc(req('debug_traceTransaction', [tx, { tracer: 'callTracer' }]), { key: free });
  assertRpcError(r1.json, -32601, 1, /free plan/);
  const growth = newKey({ plan: 'growth' });
  const r2 = await rpc(req('debug_traceTransaction', [tx, { tracer: 'callTracer' }]), { key: growth });
  assert.equal(r2.status, 200);
  assert.equal(r2.json.error, undefined, r2.text.slice(0, 200));
  assert.equal(typeof r2.json.result, 'object');
  assert.equal(r2.headers.get('x-compute-units'), '4');
});

test('ids are echoed exactly, byte for byte', async () => {
  const key = newKey({ plan: 'growth' });
  for (const id of ['1', '0', '7', '"abc"', '"a\\u0041"', '"<&>"', '""', '1.0', '-3', '1e2',
    '0.5', '123456789012345678901234567890', '18446744073709551616', 'null', '"\u00e9t\u00e9"']) {
    const single = `{"jsonrpc":"2.0","method":"eth_chainId","id":${id}}`;
    const res = await rpc(single, { key });
    assert.equal(res.status, 200, res.text);
    assert.ok(res.text.includes(`"id":${id},`) || res.text.includes(`"id":${id}}`),
      `id ${id} in ${res.text}`);
    assert.equal(res.json.result, '0x7a69', res.text);
    const batch = `[${single},{"jsonrpc":"2.0","method":"eth_nope","id":${id}}]`;
    const b = await rpc(batch, { key });
    assert.equal(b.status, 200, b.text);
    assert.equal(b.text.split(`"id":${id}`).length - 1, 2, `id ${id} twice in ${b.text}`);
    assert.equal(b.json[0].result, '0x7a69');
    assert.equal(b.json[1].error.code, -32601);
  }
  // Duplicate ids in one batch keep their own answers.
  const dup = await rpc([req('eth_chainId', [], 9), req('net_version', [], 9)], { key });
  assert.deepEqual(dup.json.map((o) => o.result), ['0x7a69', '31337']);
});

test('an empty batch is one -32600 object; a batch over max_batch too; max_batch itself passes',
  async () => {
    const key = newKey({ plan: 'growth' });
    for (const body of ['[]', '[ ]']) {
      const res = await rpc(body, { key });
      assert.equal(res.status, 200);
      assert.ok(!Array.isArray(res.json), res.text);
      assertRpcError(res.json, -32600, null, /empty batch/);
    }
    const over = await rpc(Array.from({ length: MAX_BATCH + 1 }, (_, i) => req('eth_chainId', [], i)),
      { key });
    assert.equal(over.status, 200);
    assert.ok(!Array.isArray(over.json), over.text.slice(0, 200));
    assertRpcError(over.json, -32600, null, /batch/);
    assert.equal(over.headers.get('x-compute-units'), '0');
    const full = await rpc(Array.from({ length: MAX_BATCH }, (_, i) => req('eth_chainId', [], i)),
      { key });
    assert.equal(full.status, 200);
    assert.equal(full.json.length, MAX_BATCH);
    assert.deepEqual(full.json.map((o) => o.id), Array.from({ length: MAX_BATCH }, (_, i) => i));
    assert.ok(full.json.every((o) => o.result === '0x7a69'));
    assert.equal(full.headers.get('x-compute-units'), String(MAX_BATCH));
  });

test('a body over max_body is 413 from the pipeline, in the uniform body', async () => {
  const key = newKey({ plan: 'growth' });
  const big = JSON.stringify(req('eth_call', [{ to: account(0).address,
    data: `0x${'00'.repeat(MAX_BODY / 2 + 16)}` }, 'latest']));
  assert.ok(big.length > MAX_BODY);
  assertError(assert, await rpc(big, { key }), 413, 'payload_too_large');
});

// Runs fn(key) on a fresh key of plan at the start of a second until a run fits in one second
// (a run that straddles two sees its counters reset: a loaded machine under ASan can be that
// slow). Returns what fn returned.
async function withinOneSecond(plan, fn, tries = 4) {
  for (let i = 0; i < tries; i++) {
    const key = newKey({ plan });
    await nextSecond();
    const t0 = Math.floor(Date.now() / 1000);
    const out = await fn(key);
    if (Math.floor(Date.now() / 1000) === t0) return out;
  }
  assert.fail(`no run fitted into one second in ${tries} tries`);
}

test('compute units: eth_getLogs trips the CU limit within a second while rps is far away',
  async () => {
    const logs = req('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest',
      address: devchain.tokens.erc20_18 }]);
    for (let i = 0; i < 4; i++) await rpc(logs, { key: newKey({ plan: 'growth' }) });	// warm up
    const { statuses, limited, key } = await withinOneSecond('cu', async (k) => {
      const st = [];
      let lim;
      for (let i = 0; i < 12; i++) {
        const res = await rpc(logs, { key: k });
        st.push(res.status);
        if (res.status === 429 && !lim) lim = res;
      }
      return { statuses: st, limited: lim, key: k };
    });
    // 60 CU/s at 6 CU per eth_getLogs: 10 pass, then 429, with 1000 rps allowed.
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(200), statuses.join(','));
    assert.ok(limited, `no 429 in ${statuses.join(',')}`);
    assertError(assert, limited, 429, 'rate_limited');
    assert.match(limited.json.error.message, /compute units/);
    assert.match(limited.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(limited.headers.get('x-ratelimit-limit'), '1000');
    assert.ok(Number(limited.headers.get('x-ratelimit-remaining')) > 900);

    // Errors the proxy answers itself cost nothing: served even when the CUs are gone.
    const unknown = await rpc(req('eth_nope'), { key });
    assert.equal(unknown.status, 200);
    assertRpcError(unknown.json, -32601, 1);

    // In a batch only the excess items fail (-32005); the earlier ones are served.
    const b = await withinOneSecond('cu', (k) =>
      rpc(Array.from({ length: 12 }, (_, i) => ({ ...logs, id: i })), { key: k }));
    assert.equal(b.status, 200);
    assert.equal(b.json.length, 12);
    for (let i = 0; i < 10; i++) assert.ok(Array.isArray(b.json[i].result), JSON.stringify(b.json[i]));
    for (let i = 10; i < 12; i++) assertRpcError(b.json[i], -32005, i, /rate limited/);
    assert.equal(b.headers.get('x-compute-units'), String(CU_PLAN_CUPS));
  });

test('archive reads cost 20: eth_getStorageAt at an old block, and the CU limit after 3 of them',
  async () => {
    const path = rpcPath('ethereum', 'failover');	// archive_depth = 2 there
    const slot = (block) => req('eth_getStorageAt', [devchain.tokens.erc20_18, '0x0', block]);
    const growth = newKey({ plan: 'growth' });
    for (let i = 0; i < 4; i++) {	// warm up: processes started, head known, dead port marked
      const recent = await rpc(slot('latest'), { key: growth, path });
      assert.equal(recent.status, 200, recent.text);
      assert.equal(recent.headers.get('x-compute-units'), '2');
    }
    const { results, last } = await withinOneSecond('cu', async (key) => {
      const res = [];
      for (const block of ['0x1', 'earliest', { blockNumber: '0x1' }])
        res.push({ block, r: await rpc(slot(block), { key, path }) });
      return { results: res, last: await rpc(slot('latest'), { key, path }) };
    });
    for (const { block, r } of results) {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.error, undefined, r.text);
      assert.equal(r.headers.get('x-compute-units'), '20', JSON.stringify(block));
    }
    // 3 x 20 = 60 CU/s, all of the cu plan: even a recent read is refused in this second.
    assertError(assert, last, 429, 'rate_limited');
  });

test('a read at a block hash is priced by that block: old or unknown archive, recent not',
  async () => {
    const path = rpcPath('ethereum', 'failover');	// archive_depth = 2 there
    const key = newKey({ plan: 'growth' });
    const hashOf = async (tag) => JSON.parse((await direct(JSON.stringify(
      req('eth_getBlockByNumber', [tag, false])))).text).result.hash;
    const [old, recent] = [await hashOf('0x1'), await hashOf('latest')];
    const unknown = `0x${'ab'.repeat(32)}`;
    const cases = [
      [{ blockHash: old }, '20'], [old, '20'], [{ blockHash: old, requireCanonical: true }, '20'],
      [{ blockHash: unknown }, '20'], [unknown, '20'],
      [{ blockHash: recent }, '2'], [recent, '2'],
    ];
    for (const [block, cu] of cases) {
      const r = await rpc(req('eth_getBalance', [account(0).address, block]), { key, path });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('x-compute-units'), cu, JSON.stringify(block));
    }
    // eth_call as viem sends it (blockHash) costs the archive price at an old block too.
    const data = encodeFunctionData({ abi: erc20, functionName: 'balanceOf',
      args: [account(1).address] });
    const call = await rpc(req('eth_call', [{ to: devchain.tokens.erc20_18, data },
      { blockHash: old }]), { key, path });
    assert.equal(call.headers.get('x-compute-units'), '20', call.text);
  });

test('failover: a dead first upstream, or one answering 503, is invisible to the client',
  async () => {
    const key = newKey({ plan: 'growth' });
    for (const network of ['failover', 'failover503']) {
      for (let i = 0; i < 6; i++) {
        const body = JSON.stringify(req('eth_getBlockByNumber', ['0x1', false], i));
        const res = await rpc(body, { key, path: rpcPath('ethereum', network) });
        assert.equal(res.status, 200, `${network}: ${res.text}`);
        assert.equal(res.text, (await direct(body)).text, network);
      }
      const client = createPublicClient({ chain, transport: transport(key, network) });
      assert.equal(await client.getChainId(), 31337);
    }
  });

test('a JSON-RPC error from an upstream is passed through, never retried elsewhere', async () => {
  const key = newKey({ plan: 'growth' });
  // solana.flaky: the first upstream answers HTTP 500 with a JSON-RPC error body.
  const res = await rpc(req('getSlot', [], 11), { key, path: rpcPath('solana', 'flaky') });
  assert.equal(res.status, 200);
  assertRpcError(res.json, -32002, 11, /stub error/);
  // A node's own error for bad params goes through as it is, too.
  const bad = await rpc(req('eth_call', [], 12), { key });
  assert.equal(bad.status, 200);
  assert.equal(bad.json.id, 12);
  assert.equal(typeof bad.json.error?.code, 'number');
  assert.equal(bad.text, (await direct(JSON.stringify(req('eth_call', [], 12)))).text);
});

test('every upstream down: 500 internal_error; an answer over max_response: 500 too', async () => {
  const key = newKey({ plan: 'growth' });
  const down = await rpc(req('getSlot'), { key, path: rpcPath('solana', 'down') });
  assertError(assert, down, 500, 'internal_error');
  const big = await rpc(req('getProgramAccounts', ['BigProgram11111111111111111111111111111111']),
    { key, path: rpcPath('solana', 'stub') });
  assertError(assert, big, 500, 'internal_error');
  assert.match(big.json.error.message, /too large/);
});

test('answers are byte-identical to the node\'s', async () => {
  const key = newKey({ plan: 'growth' });
  const a0 = account(0).address;
  const data = encodeFunctionData({ abi: erc20, functionName: 'balanceOf', args: [a0] });
  const bodies = [
    req('eth_getBlockByNumber', ['0x1', true], 1),
    req('eth_getBlockByNumber', ['0x2', false], 'blk'),
    req('eth_chainId', [], 2),
    req('eth_getBalance', [a0, '0x1'], 3),
    req('eth_call', [{ to: devchain.tokens.erc20_18, data }, '0x2'], 4),
    req('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x3' }], 5),
    req('eth_getCode', [devchain.tokens.erc20_18, '0x3'], 6),
  ];
  for (const b of bodies) {
    const text = JSON.stringify(b);
    const res = await rpc(text, { key });
    assert.equal(res.status, 200);
    assert.equal(res.text, (await direct(text)).text, b.method);
  }
  const batch = JSON.stringify(bodies);
  const res = await rpc(batch, { key });
  assert.equal(res.text, (await direct(batch)).text, 'the batch');
});

test('networks: a test key on a mainnet is 403, a live key passes; unknown chain or network 404',
  async () => {
    const test = newKey({ plan: 'growth' });
    assertError(assert, await rpc(req('eth_chainId'), { key: test, path: rpcPath('ethereum', 'mainnet') }),
      403, 'forbidden');
    const live = newKey({ plan: 'growth', live: true });
    const ok = await rpc(req('eth_chainId'), { key: live, path: rpcPath('ethereum', 'mainnet') });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.result, '0x7a69');
    assertError(assert, await rpc(req('eth_chainId'), { key: test, path: rpcPath('nochain', 'devnet') }),
      404, 'not_found');
    assertError(assert, await rpc(req('eth_chainId'), { key: test, path: rpcPath('ethereum', 'nonet') }),
      404, 'not_found');
    const get = await api(rpcPath(), { key: test });
    assert.equal(get.status, 405);
    assertError(assert, await rpc(req('eth_chainId'), { key: null }), 401, 'unauthorized');
  });

test('Solana through the scripted stub: reads, writes need rpc:write, batches', async () => {
  assert.ok(stubUrl, 'SOLANA_STUB_URL is set by scripts/stack.sh --test');
  const key = newKey({ plan: 'growth' });
  const path = rpcPath('solana', 'stub');	// the devnet's own tests: tests/e2e/solana.test.mjs
  const pubkey = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
  const slot = await rpc(req('getSlot'), { key, path });
  assert.equal(slot.status, 200);
  assert.equal(typeof slot.json.result, 'number');
  const bal = await rpc(req('getBalance', [pubkey]), { key, path });
  assert.equal(typeof bal.json.result.value, 'number');
  const bh = await rpc(req('getLatestBlockhash', [{ commitment: 'finalized' }]), { key, path });
  assert.match(bh.json.result.value.blockhash, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  const info = await rpc(req('getAccountInfo', [pubkey, { encoding: 'base64' }]), { key, path });
  assert.equal(info.json.result.value.owner, '11111111111111111111111111111111');
  assert.equal(info.headers.get('x-compute-units'), '1');

  const tx = 'AQAB'.repeat(20);
  const ro = newKey({ plan: 'growth', scopes: 'rpc:read' });
  assertError(assert, await rpc(req('sendTransaction', [tx]), { key: ro, path }), 403, 'forbidden');
  assertError(assert, await rpc(req('requestAirdrop', [pubkey, 1000]), { key: ro, path }), 403,
    'forbidden');
  const sent = await rpc(req('sendTransaction', [tx]), { key, path });
  assert.match(sent.json.result, /^[1-9A-HJ-NP-Za-km-z]{64,90}$/);
  const air = await rpc(req('requestAirdrop', [pubkey, 1000]), { key, path });
  assert.equal(typeof air.json.result, 'string');

  // A mixed batch: only the valid items are forwarded, renumbered; answers in the client's order.
  const b = await rpc([req('getSlot', [], 'a'), { jsonrpc: '2.0', id: 'b' }, req('eth_call', [], 'c'),
    req('getBalance', [pubkey], 'd'), req('slotSubscribe', [], 'e')], { key, path });
  assert.deepEqual(b.json.map((o) => o.id), ['a', 'b', 'c', 'd', 'e']);
  assert.equal(typeof b.json[0].result, 'number');
  assertRpcError(b.json[1], -32600, 'b');
  assertRpcError(b.json[2], -32601, 'c');
  assert.equal(typeof b.json[3].result.value, 'number');
  assertRpcError(b.json[4], -32601, 'e', /\/v1\/ws\/solana\/stub/);
  const forwarded = JSON.parse(await (await fetch(`${stubUrl}/last`)).text());
  assert.deepEqual(forwarded.map((o) => [o.id, o.method]), [[0, 'getSlot'], [1, 'getBalance']]);
});
