// A node that accepts connections but does not answer (SIGSTOP, not dead): with a second
// upstream configured, clients keep getting answers with no gap over about a second and no
// error, because the wait for a first byte is bounded (upstream_first_byte_ms, 500 in the test
// config, checked on curl's progress tick, about once a second while nothing moves: so up to
// ~1.5 s) and the first thread to give up marks the node down for every thread and process
// (lib/net/health.c). The frozen node is tests/e2e/relay.mjs, a real TCP relay to the devchain that
// scripts/stack.sh starts as the primary upstream of ethereum.frozen (FROZEN_PID).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, newKey, waitFor } from './helpers.mjs';

const relay = Number(process.env.FROZEN_PID);
after(() => { try { process.kill(relay, 'SIGCONT'); } catch { /* already gone */ } });

test('a frozen primary: answers keep coming, with no gap over ~1.5 s and no error', { timeout: 60000 }, async (t) => {
  assert.ok(relay > 0, 'FROZEN_PID is set by scripts/stack.sh');
  const key = newKey({ plan: 'enterprise' });
  const call = (id) => api('/v1/rpc/ethereum/frozen', {
    method: 'POST', key, body: { jsonrpc: '2.0', id, method: 'eth_chainId', params: [] } });
  await waitFor(async () => (await call(0)).json?.result === '0x7a69', 'the relay answers');

  process.kill(relay, 'SIGSTOP');
  const stopAt = Date.now() + 6000;
  const times = [Date.now()];
  const bad = [];
  let n = 0;
  try {
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (Date.now() < stopAt) {
        const id = ++n;
        const res = await call(id);
        if (res.status !== 200 || res.json?.result !== '0x7a69' || res.json?.id !== id)
          bad.push(`${res.status} ${res.text}`);
        times.push(Date.now());
      }
    }));
  } finally {
    process.kill(relay, 'SIGCONT');
  }
  assert.deepEqual(bad, [], 'every call answered without error');
  times.sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i] - times[i - 1]);
  t.diagnostic(`${times.length - 1} answers in 6 s with the primary frozen; longest gap ${gap} ms`);
  assert.ok(gap < 2000, `longest gap between answers ${gap} ms`);
  assert.ok(times.length > 50, `${times.length} answers in 6 s`);
});
