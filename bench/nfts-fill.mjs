// Fills a dev chain for bench/nfts.sh: an OpenZeppelin ERC721PresetMinterPauserAutoId and an
// ERC1155PresetMinterPauser (the devchain's pinned artifacts) deployed from dev account 0, and
// N NFTs for OWNER: half ERC-721 tokens (one mint each, sent as JSON-RPC batches with automine
// off, one block per batch), half ERC-1155 ids (mintBatch, 250 ids a transaction). The ERC-1155
// uri is a data: document (cron/nftmeta caches it without a fetch); the ERC-721 base URI is
// BASE_URI (default a closed port on loopback: each fetch fails at once and backs off).
//
//   node bench/nfts-fill.mjs --rpc URL --owner ADDRESS --count N [--base-uri URI]
//
// Prints one JSON line: {"erc721":ADDRESS,"erc1155":ADDRESS,"nfts":N,"seconds":S}.
import { readFileSync } from 'node:fs';
import { ContractFactory, Interface } from '../devchain/node_modules/ethers/lib.esm/index.js';

const args = Object.fromEntries(process.argv.slice(2).reduce((a, v, i, all) => (i % 2 ? a : [...a, [v.replace(/^--/, ''), all[i + 1]]]), []));
const { rpc: url, owner } = args;
const count = Number(args.count ?? 1000);
if (!url || !/^0x[0-9a-fA-F]{40}$/.test(owner ?? '') || !(count > 1)) {
  process.stderr.write('usage: node nfts-fill.mjs --rpc URL --owner ADDRESS --count N\n');
  process.exit(2);
}
const t0 = performance.now();
let nextId = 1;
async function post(body) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}
async function call(method, params = []) {
  const r = await post({ jsonrpc: '2.0', id: nextId++, method, params });
  if (r.error) throw new Error(`${method}: ${r.error.message}`);
  return r.result;
}
async function receipt(hash) {
  for (let i = 0; i < 1000; i++) {
    const r = await call('eth_getTransactionReceipt', [hash]);
    if (r) {
      if (r.status !== '0x1') throw new Error(`${hash} reverted`);
      return r;
    }
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`no receipt for ${hash}`);
}
const oz = new URL('../devchain/node_modules/@openzeppelin/contracts/build/contracts/', import.meta.url);
const artifact = (name) => JSON.parse(readFileSync(new URL(`${name}.json`, oz), 'utf8'));
const [from] = await call('eth_accounts');
async function deploy(name, ctorArgs) {
  const art = artifact(name);
  const tx = await new ContractFactory(art.abi, art.bytecode).getDeployTransaction(...ctorArgs);
  const r = await receipt(await call('eth_sendTransaction', [{ from, data: tx.data }]));
  return { address: r.contractAddress, iface: new Interface(art.abi) };
}
const doc = { name: 'Bench Multi', image: 'ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG/m.png' };
const e721 = await deploy('ERC721PresetMinterPauserAutoId', ['Bench Apes', 'BAPE', args['base-uri'] ?? 'http://127.0.0.1:1/apes/']);
const e1155 = await deploy('ERC1155PresetMinterPauser', ['data:application/json;base64,' + Buffer.from(JSON.stringify(doc)).toString('base64')]);
const n721 = Math.floor(count / 2);
const n1155 = count - n721;

const mint721 = e721.iface.encodeFunctionData('mint', [owner]);
await call('evm_setAutomine', [false]);
try {
  for (let done = 0; done < n721; done += 100) {
    const body = [];
    for (let i = done; i < Math.min(n721, done + 100); i++)
      body.push({ jsonrpc: '2.0', id: nextId++, method: 'eth_sendTransaction', params: [{ from, to: e721.address, data: mint721, gas: '0x30000' }] });
    const answers = await post(body);
    for (const a of answers) if (a.error) throw new Error(`mint: ${a.error.message}`);
    await call('evm_mine');
    await receipt(answers[answers.length - 1].result);
  }
} finally {
  await call('evm_setAutomine', [true]);
}
for (let id = 0; id < n1155; id += 250) {
  const ids = [], amounts = [];
  for (let i = id; i < Math.min(n1155, id + 250); i++) { ids.push(i); amounts.push(1 + (i % 3)); }
  const data = e1155.iface.encodeFunctionData('mintBatch', [owner, ids, amounts, '0x']);
  await receipt(await call('eth_sendTransaction', [{ from, to: e1155.address, data, gas: '0x1c9c380' }]));
}
process.stdout.write(JSON.stringify({ erc721: e721.address, erc1155: e1155.address, nfts: count, seconds: Math.round((performance.now() - t0) / 100) / 10 }) + '\n');
