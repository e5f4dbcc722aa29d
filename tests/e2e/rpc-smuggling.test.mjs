// Method smuggling through the JSON-RPC proxy (docs/rpc.md, "What is forwarded"). A node written
// in Go reads member names case-insensitively and keeps the last duplicate, so an envelope with
// "method":"eth_blockNumber" and "METHOD":"eth_sendRawTransaction" would be judged, priced and
// logged as a read while such a node runs the write. Behind ethereum/gonode sits
// tests/e2e/go-node-stub.mjs, which decodes requests exactly that way and records the methods
// it read: whatever the variant (case, duplicates, escaped names, folding letters, in single
// calls and in batches), no method the key may not call ever reaches it, and members the proxy
// does not read are not forwarded at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { api, newKey, sleep } from './helpers.mjs';

const stubUrl = process.env.GO_STUB_URL;
const path = '/v1/rpc/ethereum/gonode';
const RAW = '0x02f86b827a6980843b9aca00850c92a69c0082520894a0ee7a142d267c1f36714e4a8f75612f20a79720018080c0';

const rpc = (body, key) => api(path, { method: 'POST', key, body });

// What the stub has read so far.
async function calls() {
  const res = await fetch(`${stubUrl}/calls`);
  assert.equal(res.status, 200);
  return res.json();
}

// Runs fn, then returns the methods and bodies the stub received meanwhile.
async function received(fn) {
  const before = await calls();
  await fn();
  const after = await calls();
  return { methods: after.methods.slice(before.methods.length),
    bodies: after.bodies.slice(before.bodies.length) };
}

// An envelope as text: the members given as [name (raw JSON text of the key), value] pairs,
// written in that order, so duplicates and escapes reach the proxy as written.
const envelope = (...members) =>
  `{${members.map(([k, v]) => `${k}:${JSON.stringify(v)}`).join(',')}}`;
const J = ['"jsonrpc"', '2.0'];
const ID = (n) => ['"id"', n];

// Every spelling of a second method member that some decoder reads as "method".
const METHOD_SPELLINGS = ['"METHOD"', '"Method"', '"mEtHoD"', '"\\u004dETHOD"', '"\\u006dethod"',
  '"m\\u0065thod"', '"\\u004d\\u0065\\u0074\\u0068\\u006f\\u0064"', '"method"'];

// The variants of the trick for a read that hides method: the decoy first or last, and the
// same with params smuggled under a folded name.
function variants(hidden, decoy, params = [RAW]) {
  const out = [];
  for (const k of METHOD_SPELLINGS) {
    out.push(envelope(J, ID(1), ['"method"', decoy], [k, hidden], ['"params"', params]));
    out.push(envelope(J, ID(1), [k, hidden], ['"method"', decoy], ['"params"', params]));
  }
  // Only a folded spelling, no exact "method" at all.
  out.push(envelope(J, ID(1), ['"METHOD"', hidden], ['"params"', params]));
  // params under folded spellings (U+017F folds to s in Go).
  out.push(envelope(J, ID(1), ['"method"', decoy], ['"params"', []], ['"PARAMS"', params]));
  out.push(envelope(J, ID(1), ['"method"', decoy], ['"params"', []], ['"param\\u017f"', params]));
  out.push(envelope(J, ID(1), ['"method"', decoy], ['"params"', []], ['"param\u017f"', params]));
  return out;
}

test('the stub is behind ethereum/gonode and reads like Go (control)', async () => {
  assert.ok(stubUrl, 'GO_STUB_URL is set by scripts/stack.sh --test');
  const key = newKey({ plan: 'growth', scopes: 'rpc:read' });
  const got = await received(async () => {
    const res = await rpc(envelope(J, ID(5), ['"method"', 'eth_chainId']), key);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { jsonrpc: '2.0', id: 5, result: '0x7a69' });
  });
  assert.deepEqual(got.methods, ['eth_chainId']);
  // Straight to the stub, the trick works: that is what the proxy must never let through.
  const direct = await fetch(stubUrl, { method: 'POST',
    body: envelope(J, ID(1), ['"method"', 'eth_blockNumber'], ['"METHOD"', 'eth_sendRawTransaction'],
      ['"params"', [RAW]]) });
  assert.equal((await direct.json()).result, 'stub:eth_sendRawTransaction');
});

test('a key with only rpc:read never gets eth_sendRawTransaction to the node, single calls',
  async () => {
    const key = newKey({ plan: 'growth', scopes: 'rpc:read' });
    const bodies = variants('eth_sendRawTransaction', 'eth_blockNumber');
    const got = await received(async () => {
      for (const body of bodies) {
        const res = await rpc(body, key);
        assert.equal(res.status, 200, body);
        assert.equal(res.json.error?.code, -32600, `${body} -> ${res.text}`);
        assert.equal(res.json.id, 1);
        assert.equal(res.headers.get('x-compute-units'), '0');
      }
    });
    assert.deepEqual(got.methods, [], `forwarded: ${got.bodies.join(' | ')}`);
  });

test('the same in batches: the smuggling item is refused, its neighbours are answered',
  async () => {
    const key = newKey({ plan: 'growth', scopes: 'rpc:read' });
    const items = variants('eth_sendRawTransaction', 'eth_blockNumber');
    const got = await received(async () => {
      for (const item of items) {
        const body = `[${envelope(J, ID(7), ['"method"', 'eth_chainId'])},${item}]`;
        const res = await rpc(body, key);
        assert.equal(res.status, 200, body);
        assert.equal(res.json.length, 2);
        assert.deepEqual(res.json[0], { jsonrpc: '2.0', id: 7, result: '0x7a69' });
        assert.equal(res.json[1].error?.code, -32600, `${body} -> ${res.text}`);
        assert.equal(res.json[1].id, 1);
      }
    });
    assert.deepEqual(got.methods, items.map(() => 'eth_chainId'));
  });

test('a plan without debug never gets debug_* or trace_* to the node', async () => {
  // The free plan allows 10 requests a second: the requests are paced below that.
  const key = newKey({ plan: 'free' });
  const hidden = ['debug_traceTransaction', 'trace_replayTransaction'];
  const got = await received(async () => {
    for (const h of hidden) {
      for (const body of variants(h, 'eth_blockNumber', ['0x' + '11'.repeat(32)])) {
        const res = await rpc(body, key);
        assert.equal(res.json.error?.code, -32600, `${body} -> ${res.text}`);
        await sleep(120);
        const b = await rpc(`[${body}]`, key);
        assert.equal(b.json?.[0]?.error?.code, -32600, `[${body}] -> ${b.text}`);
        await sleep(120);
      }
    }
  });
  assert.deepEqual(got.methods, []);
});

test('duplicate envelope members are refused whichever one a node would keep', async () => {
  const key = newKey({ plan: 'growth', scopes: 'rpc:read' });
  const bodies = [
    envelope(J, ID(1), ['"method"', 'eth_sendRawTransaction'], ['"method"', 'eth_blockNumber'],
      ['"params"', [RAW]]),
    envelope(J, ID(1), ['"method"', 'eth_blockNumber'], ['"params"', []], ['"params"', [RAW]]),
    envelope(J, ID(1), ['"ID"', 2], ['"method"', 'eth_blockNumber']),
    envelope(J, ['"JSONRPC"', '1.0'], ID(1), ['"method"', 'eth_blockNumber']),
  ];
  const got = await received(async () => {
    for (const body of bodies) {
      const res = await rpc(body, key);
      assert.equal(res.json.error?.code, -32600, `${body} -> ${res.text}`);
    }
  });
  assert.deepEqual(got.methods, []);
});

test('members the proxy does not read are not forwarded; the call still works', async () => {
  const key = newKey({ plan: 'growth', scopes: 'rpc:read' });
  const single = envelope(J, ID(3), ['"method"', 'eth_blockNumber'], ['"params"', []],
    ['"methods"', 'eth_sendRawTransaction'], ['"extra"', { method: 'eth_sendRawTransaction' }]);
  const batch = `[${single}]`;
  const got = await received(async () => {
    const res = await rpc(single, key);
    assert.deepEqual(res.json, { jsonrpc: '2.0', id: 3, result: '0x10' });
    const b = await rpc(batch, key);
    assert.deepEqual(b.json, [{ jsonrpc: '2.0', id: 3, result: '0x10' }]);
  });
  assert.deepEqual(got.methods, ['eth_blockNumber', 'eth_blockNumber']);
  for (const body of got.bodies) {
    assert.doesNotMatch(body, /extra|methods|eth_sendRawTransaction/, body);
  }
  // A plain call goes up byte for byte, as before.
  const plainBody = envelope(J, ID(4), ['"method"', 'eth_blockNumber']);
  const got2 = await received(async () => { await rpc(plainBody, key); });
  assert.deepEqual(got2.bodies, [plainBody]);
});

