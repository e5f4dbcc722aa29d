// Fills a dev chain for bench/indexer.sh: deploys an ERC-20 (OpenZeppelin preset, from the
// devchain's pinned artifacts) from dev account 0, mints to accounts 0..9, then makes BLOCKS
// blocks of PER_BLOCK transfers each between those accounts (automine off; anvil signs for its
// unlocked dev accounts; one JSON-RPC batch of sends, then evm_mine, per block).
//
//   node bench/indexer-fill.mjs --rpc URL --blocks N --per-block K
//
// Prints one JSON line: {"first":B,"last":B,"transfers":N,"seconds":S}.
import { readFileSync } from 'node:fs';

const args = Object.fromEntries(process.argv.slice(2).reduce((a, v, i, all) => (i % 2 ? a : [...a, [v.replace(/^--/, ''), all[i + 1]]]), []));
const url = args.rpc;
const blocks = Number(args.blocks ?? 500);
const perBlock = Number(args['per-block'] ?? 20);
if (!url || !(blocks > 0) || !(perBlock > 0)) {
  process.stderr.write('usage: node indexer-fill.mjs --rpc URL --blocks N --per-block K\n');
  process.exit(2);
}
const t0 = performance.now();

let nextId = 1;
async function post(body) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}
async function rpc(method, params = []) {
  const r = await post({ jsonrpc: '2.0', id: nextId++, method, params });
  if (r.error) throw new Error(`${method}: ${r.error.message}`);
  return r.result;
}
async function receipt(hash) {
  for (let i = 0; i < 500; i++) {
    const r = await rpc('eth_getTransactionReceipt', [hash]);
    if (r) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`no receipt for ${hash}`);
}

const word = (hex) => hex.replace(/^0x/, '').padStart(64, '0');
const accounts = await rpc('eth_accounts');
const users = accounts.slice(0, 10);
const art = JSON.parse(readFileSync(new URL('../devchain/node_modules/@openzeppelin/contracts/build/contracts/ERC20PresetMinterPauser.json', import.meta.url), 'utf8'));
// constructor(string name, string symbol): two dynamic strings "Bench", "BNCH".
const str = (s) => word((s.length).toString(16)) + Buffer.from(s).toString('hex').padEnd(64, '0');
const ctor = word('40') + word('80') + str('Bench') + str('BNCH');
const deployed = await receipt(await rpc('eth_sendTransaction', [{ from: users[0], data: art.bytecode + ctor }]));
const token = deployed.contractAddress;
for (const u of users) {
  // mint(address,uint256) = 0x40c10f19
  await receipt(await rpc('eth_sendTransaction', [{ from: users[0], to: token, data: '0x40c10f19' + word(u) + word((10n ** 30n).toString(16)) }]));
}

const first = Number(await rpc('eth_blockNumber')) + 1;
await rpc('evm_setAutomine', [false]);
let transfers = 0;
try {
  for (let b = 0; b < blocks; b++) {
    const body = [];
    for (let i = 0; i < perBlock; i++) {
      const from = users[(b + i) % users.length];
      const to = users[(b + i * 7 + 1) % users.length];
      // transfer(address,uint256) = 0xa9059cbb
      const data = '0xa9059cbb' + word(to) + word((b * perBlock + i + 1).toString(16));
      body.push({ jsonrpc: '2.0', id: nextId++, method: 'eth_sendTransaction', params: [{ from, to: token, data, gas: '0x15f90' }] });
    }
    const res = await post(body);
    for (const r of res) if (r.error) throw new Error(`eth_sendTransaction: ${r.error.message}`);
    transfers += perBlock;
    await rpc('evm_mine');
  }
} finally {
  await rpc('evm_setAutomine', [true]);
}
const last = Number(await rpc('eth_blockNumber'));
process.stdout.write(JSON.stringify({ first, last, transfers, token, seconds: +((performance.now() - t0) / 1000).toFixed(2) }) + '\n');
