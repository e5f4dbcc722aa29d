// Fills a dev chain for bench/tokens.sh: dev account 0 deploys N ERC-20 tokens (OpenZeppelin
// preset, from the devchain's pinned artifacts) and mints a different amount of each to HOLDER,
// one send after the other (anvil signs for its unlocked dev accounts; automine mines each), then
// reads the receipts.
//
//   node bench/tokens-fill.mjs --rpc URL --tokens N --holder 0xADDRESS
//
// Prints one JSON line: {"tokens":[addresses],"block":B,"seconds":S}.
import { readFileSync } from 'node:fs';

const args = Object.fromEntries(process.argv.slice(2).reduce((a, v, i, all) => (i % 2 ? a : [...a, [v.replace(/^--/, ''), all[i + 1]]]), []));
const url = args.rpc;
const n = Number(args.tokens ?? 100);
const holder = args.holder;
if (!url || !(n > 0) || !/^0x[0-9a-fA-F]{40}$/.test(holder ?? '')) {
  process.stderr.write('usage: node tokens-fill.mjs --rpc URL --tokens N --holder 0xADDRESS\n');
  process.exit(2);
}
const t0 = performance.now();
let nextId = 1;
async function batch(calls) {
  const body = calls.map(([method, params]) => ({ jsonrpc: '2.0', id: nextId++, method, params }));
  const res = await (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
  return res.map((r) => { if (r.error) throw new Error(r.error.message); return r.result; });
}
async function receipt(hash) {
  for (let i = 0; i < 1000; i++) {
    const [r] = await batch([['eth_getTransactionReceipt', [hash]]]);
    if (r) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`no receipt for ${hash}`);
}
const word = (hex) => hex.replace(/^0x/, '').padStart(64, '0');
const str = (s) => word(s.length.toString(16)) + Buffer.from(s).toString('hex').padEnd(64, '0');
const art = JSON.parse(readFileSync(new URL('../devchain/node_modules/@openzeppelin/contracts/build/contracts/ERC20PresetMinterPauser.json', import.meta.url), 'utf8'));
const [from] = await batch([['eth_accounts', []]]).then((r) => r[0]);
const tx = (fields) => ['eth_sendTransaction', [{ from, ...fields }]];
// One send at a time (automine: each is mined as it comes), the receipts read after.
async function sendAll(calls) {
  const out = [];
  for (const c of calls) out.push((await batch([c]))[0]);
  return out;
}

const deploys = [];
for (let i = 0; i < n; i++) {
  const name = `Bench ${String(i).padStart(3, '0')}`;
  deploys.push(tx({ data: art.bytecode + word('40') + word('80') + str(name) + str(`B${i}`) }));
}
const hashes = await sendAll(deploys);
const tokens = [];
for (const h of hashes) tokens.push((await receipt(h)).contractAddress);
// mint(address,uint256) = 0x40c10f19: token i gets (i + 1) x 10^18.
const mints = await sendAll(tokens.map((t, i) =>
  tx({ to: t, data: '0x40c10f19' + word(holder) + word(((BigInt(i) + 1n) * 10n ** 18n).toString(16)) })));
let block = 0;
for (const h of mints) block = Math.max(block, Number((await receipt(h)).blockNumber));
process.stdout.write(JSON.stringify({ tokens, block, seconds: ((performance.now() - t0) / 1000).toFixed(1) }) + '\n');
