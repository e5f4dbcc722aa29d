// A node that accepts connections but does not answer (SIGSTOP, not dead): with a second
// upstream configured, clients keep getting answers with no gap over about a second and no
// error, because the wait for a first byte is bounded (upstream_first_byte_ms, 500 in the test
// config) and the first thread to give up marks the node down for every thread and process
// (lib/health.c). The frozen node is a real TCP relay to the devchain in a child process.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { api, env, newKey, sleep, waitFor } from './helpers.mjs';

const port = Number(process.env.FROZEN_PORT);
const chain = new URL(env.chain);
const relay = spawn(process.execPath, ['-e', `
  const net = require('node:net');
  net.createServer((c) => {
    const u = net.connect(${Number(chain.port)}, '127.0.0.1');
    c.pipe(u); u.pipe(c);
    c.on('error', () => u.destroy()); u.on('error', () => c.destroy());
  }).listen(${port}, '127.0.0.1', () => console.log('ready'));
`], { stdio: ['ignore', 'pipe', 'inherit'] });
after(() => { relay.kill('SIGCONT'); relay.kill('SIGKILL'); });

test('a frozen primary: answers keep coming, with no gap over ~1 s and no error', { timeout: 60000 }, async () => {
  await new Promise((resolve) => relay.stdout.once('data', resolve));
  const key = newKey({ plan: 'enterprise' });
  const call = (id) => api('/v1/rpc/ethereum/frozen', {
    method: 'POST', key, body: { jsonrpc: '2.0', id, method: 'eth_chainId', params: [] } });
  await waitFor(async () => (await call(0)).json?.result === '0x7a69', 'the relay answers');

  relay.kill('SIGSTOP');
  const stopAt = Date.now() + 6000;
  const times = [Date.now()];
  const bad = [];
  let n = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (Date.now() < stopAt) {
      const id = ++n;
      const res = await call(id);
      if (res.status !== 200 || res.json?.result !== '0x7a69' || res.json?.id !== id)
        bad.push(`${res.status} ${res.text}`);
      times.push(Date.now());
    }
  }));
  relay.kill('SIGCONT');
  assert.deepEqual(bad, [], 'every call answered without error');
  times.sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i] - times[i - 1]);
  assert.ok(gap < 1500, `longest gap between answers ${gap} ms`);
  assert.ok(times.length > 50, `${times.length} answers in 6 s`);
  await sleep(0);
});
