// N newHeads subscribers on one WebSocket URL while the devchain mines a block a second (the
// script asks for each block itself, with evm_mine): for each block, the time from asking for it
// to its arrival at the last subscriber, and every delivery's latency. Prints "ready" on stderr
// once all subscribed, waits for a line on stdin (the caller measures memory then), then mines.
//   node bench/ws-subscribers.mjs WS_URL CHAIN_URL N BLOCKS
import WebSocket from '../devchain/node_modules/ws/index.js';

const [url, chain, n = '1000', blocks = '10'] = process.argv.slice(2);
const N = Number(n), B = Number(blocks);
const pct = (a, p) => a.slice().sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))];
const asked = new Map();	// block number -> time asked
const got = new Map();		// block number -> arrival times

async function rpc(method, params = []) {
  const r = await fetch(chain, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await r.json()).result;
}

function subscriber() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('error', reject);
    ws.on('open', () => ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}'));
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.id === 1) { if (m.result) resolve(ws); else reject(new Error(JSON.stringify(m))); return; }
      const num = Number(BigInt(m.params.result.number));
      if (!got.has(num)) got.set(num, []);
      got.get(num).push(performance.now());
    });
  });
}

const t0 = performance.now();
const socks = [];
for (let i = 0; i < N; i += 50)
  socks.push(...await Promise.all(Array.from({ length: Math.min(50, N - i) }, subscriber)));
process.stderr.write(`ready ${N} subscribers in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
await new Promise((r) => process.stdin.once('data', r));
for (let b = 0; b < B; b++) {
  const before = Number(BigInt(await rpc('eth_blockNumber')));
  asked.set(before + 1, performance.now());
  await rpc('evm_mine');
  await new Promise((r) => setTimeout(r, 1000));
}
await new Promise((r) => setTimeout(r, 2000));
const last = [], all = [];
let missing = 0;
for (const [num, t] of asked) {
  const arr = got.get(num) ?? [];
  missing += N - arr.length;
  if (arr.length === 0) continue;
  last.push(Math.max(...arr) - t);
  for (const x of arr) all.push(x - t);
}
const f = (x) => `${x.toFixed(0)} ms`;
console.log(`to the last subscriber: p50 ${f(pct(last, 0.5))}, max ${f(Math.max(...last))}; ` +
  `every delivery: p50 ${f(pct(all, 0.5))}, p99 ${f(pct(all, 0.99))}; deliveries missing: ${missing}`);
for (const s of socks) s.terminate();
process.exit(0);
