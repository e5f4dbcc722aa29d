// The chain indexer (cron/indexer.c, docs/indexer.md) against the devchain: what it stores must
// equal what the chain says at the head, through mints, transfers and burns of ERC-20, ERC-721
// and ERC-1155 tokens, a reorg made with evm_snapshot/evm_revert, and kill -9 in mid-batch.
//
// The stack runs an indexer in --loop mode; these tests run `indexer --once` themselves (the
// pass lock makes the two take turns) and read the database with the sqlite3 CLI. Accounts 4..8
// of the dev mnemonic are used, and the tokens are this file's own, deployed by account 4.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ContractFactory, Contract, JsonRpcProvider, Interface, id as topicOf } from 'ethers';
import { account } from '../../devchain/dev.mjs';
import { env, onCluster, sleep } from './helpers.mjs';

const run = promisify(execFile);
const CHAIN = 'ethereum.devnet';
const ZERO = '0x0000000000000000000000000000000000000000';
const A = [4, 5, 6, 7, 8].map((i) => account(i).address);
const [DEPLOYER, U5, U6, U7, U8] = A;
const oz = new URL('../../devchain/node_modules/@openzeppelin/contracts/build/contracts/', import.meta.url);
const artifact = (name) => JSON.parse(readFileSync(new URL(`${name}.json`, oz), 'utf8'));
const ERC20 = artifact('ERC20PresetMinterPauser');
const ERC721 = artifact('ERC721PresetMinterPauserAutoId');
const ERC1155 = artifact('ERC1155PresetMinterPauser');
const T_TRANSFER = topicOf('Transfer(address,address,uint256)');
const T_SINGLE = topicOf('TransferSingle(address,address,address,uint256,uint256)');
const T_BATCH = topicOf('TransferBatch(address,address,address,uint256[],uint256[])');

let provider;
let tokens; // { erc20, erc721, erc1155 }: ethers Contracts connected to account 4

const rpc = (method, params = []) => provider.send(method, params);
const lc = (a) => a.toLowerCase();

// Runs sql against a database (the stack's by default) and returns the rows as objects.
function sql(query, db = join(env.dir, 'blockport.db')) {
  const out = execFileSync('sqlite3', ['-json', '-cmd', '.timeout 5000', db, query], { encoding: 'utf8' });
  return out.trim() ? JSON.parse(out) : [];
}

// One `indexer --once` (caught up when it returns). It waits for the loop copy's pass; "busy"
// (exit 75) is retried.
async function indexOnce(config = env.config) {
  for (let i = 0; i < 10; i++) {
    try {
      await run(`${env.build}/cron/indexer`, ['--once', '--wait', '20'], {
        env: { ...process.env, BLOCKPORT_CONFIG: config },
      });
      return;
    } catch (e) {
      if (e.code !== 75) throw new Error(`indexer --once failed (${e.code}): ${e.stderr}`);
      await sleep(200);
    }
  }
  throw new Error('indexer stayed busy');
}

// Sends a transaction from an unlocked dev account (anvil signs) and waits for its receipt.
async function send(from, to, data = '0x', extra = {}) {
  const hash = await rpc('eth_sendTransaction', [{ from, to, data, ...extra }]);
  for (let i = 0; i < 400; i++) {
    const r = await rpc('eth_getTransactionReceipt', [hash]);
    if (r) return r;
    await sleep(10);
  }
  throw new Error(`no receipt for ${hash}`);
}

async function deploy(art, args) {
  const f = new ContractFactory(art.abi, art.bytecode);
  const tx = await f.getDeployTransaction(...args);
  const r = await send(DEPLOYER, null, tx.data);
  assert.equal(r.status, '0x1');
  return new Contract(r.contractAddress, art.abi, provider);
}

// Calls a contract function as `from` (anvil signs) and returns the receipt.
async function call(contract, from, fn, ...args) {
  const data = contract.interface.encodeFunctionData(fn, args);
  const r = await send(from, await contract.getAddress(), data);
  assert.equal(r.status, '0x1', `${fn} reverted`);
  return r;
}

async function head() {
  return Number(await rpc('eth_blockNumber'));
}

before(async () => {
  provider = new JsonRpcProvider(env.chain, 31337, { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 1 });
  tokens = {
    erc20: await deploy(ERC20, ['Indexer Test', 'IXT']),
    erc721: await deploy(ERC721, ['Indexer NFT', 'IXN', 'http://127.0.0.1/ix/']),
    erc1155: await deploy(ERC1155, ['http://127.0.0.1/ix/{id}.json']),
  };
});

after(() => provider?.destroy());

// Compares everything the index holds about this file's tokens with the chain at the head.
async function assertMatchesChain() {
  const { erc20, erc721, erc1155 } = tokens;
  const a20 = lc(await erc20.getAddress());
  const a721 = lc(await erc721.getAddress());
  const a1155 = lc(await erc1155.getAddress());

  // ERC-20: an address holds a contract in the index iff it has a transfer; the balances the
  // stored transfers add up to equal balanceOf.
  const holders = sql(`SELECT owner FROM index_erc20_holdings WHERE chain = '${CHAIN}' AND contract = '${a20}' ORDER BY owner`).map((r) => r.owner);
  const rows = sql(`SELECT from_addr, to_addr, value FROM index_transfers WHERE chain = '${CHAIN}' AND contract = '${a20}'`);
  const sums = new Map();
  const touched = new Set();
  for (const r of rows) {
    sums.set(r.from_addr, (sums.get(r.from_addr) ?? 0n) - BigInt(r.value));
    sums.set(r.to_addr, (sums.get(r.to_addr) ?? 0n) + BigInt(r.value));
    for (const x of [r.from_addr, r.to_addr]) if (x !== ZERO) touched.add(x);
  }
  assert.deepEqual(holders, [...touched].sort(), 'ERC-20 holdings = addresses with transfers');
  for (const a of A) {
    assert.equal(sums.get(a) ?? 0n, await erc20.balanceOf(a), `ERC-20 balance of ${a}`);
  }
  assert.equal(-(sums.get(ZERO) ?? 0n), await erc20.totalSupply(), 'minted - burnt = totalSupply');

  // ERC-721: one owner row per live token, equal to ownerOf; burnt tokens have none.
  const owners = new Map(sql(`SELECT token_id, owner, quantity FROM index_nft_owners WHERE chain = '${CHAIN}' AND contract = '${a721}'`).map((r) => [r.token_id, r]));
  const supply = Number(await erc721.totalSupply());
  let live = 0;
  for (let t = 0; t < 8; t++) {
    let owner = null;
    try { owner = lc(await erc721.ownerOf(t)); } catch { /* burnt or never minted */ }
    if (owner) live++;
    assert.equal(owners.get(String(t))?.owner ?? null, owner, `owner of ERC-721 #${t}`);
    if (owner) assert.equal(owners.get(String(t)).quantity, '1');
  }
  assert.equal(live, supply);
  assert.equal(owners.size, supply, 'no owner rows for burnt tokens');

  // ERC-1155: the stored quantity of each id and holder equals balanceOf(holder, id).
  const q = sql(`SELECT token_id, owner, quantity FROM index_nft_owners WHERE chain = '${CHAIN}' AND contract = '${a1155}'`);
  const qmap = new Map(q.map((r) => [`${r.token_id}/${r.owner}`, BigInt(r.quantity)]));
  let nonzero = 0;
  for (const id of [1, 2, 3, 4]) {
    for (const a of A) {
      const bal = await erc1155.balanceOf(a, id);
      if (bal > 0n) nonzero++;
      assert.equal(qmap.get(`${id}/${a}`) ?? 0n, bal, `ERC-1155 #${id} of ${a}`);
    }
  }
  assert.equal(q.length, nonzero, 'no zero-quantity rows');
}

test('holdings and owners equal the chain after mints, transfers and burns', { skip: onCluster('reads the SQLite file of one head') }, async () => {
  const { erc20, erc721, erc1155 } = tokens;
  const e18 = 10n ** 18n;
  // ERC-20: mint, transfer, burn.
  await call(erc20, DEPLOYER, 'mint', U5, 1000n * e18);
  await call(erc20, U5, 'transfer', U6, 300n * e18);
  await call(erc20, U6, 'burn', 100n * e18);
  await call(erc20, DEPLOYER, 'mint', U7, 5n);
  await call(erc20, U7, 'transfer', U7, 2n); // to itself
  // ERC-721: ids 0, 1, 2 to account 5; move one, burn one, move one.
  for (let i = 0; i < 3; i++) await call(erc721, DEPLOYER, 'mint', U5);
  await call(erc721, U5, 'transferFrom', U5, U6, 0n);
  await call(erc721, U5, 'burn', 1n);
  await call(erc721, U5, 'safeTransferFrom(address,address,uint256)', U5, U7, 2n);
  // ERC-1155: single and batch mints, transfers and burns.
  await call(erc1155, DEPLOYER, 'mint', U5, 1n, 10n, '0x');
  await call(erc1155, DEPLOYER, 'mintBatch', U6, [2n, 3n, 4n], [5n, 7n, 1n], '0x');
  await call(erc1155, U5, 'safeTransferFrom', U5, U6, 1n, 4n, '0x');
  await call(erc1155, U6, 'safeBatchTransferFrom', U6, U7, [2n, 3n], [1n, 2n], '0x');
  await call(erc1155, U5, 'burn', U5, 1n, 3n);
  await call(erc1155, U6, 'burnBatch', U6, [2n, 4n], [4n, 1n]);
  // A transaction that reverts (transfer more than the balance), with gas given so it is mined.
  const bad = await send(U8, await erc20.getAddress(), erc20.interface.encodeFunctionData('transfer', [U5, 1n]), { gas: '0x30000' });
  assert.equal(bad.status, '0x0');

  await indexOnce();
  await assertMatchesChain();

  // Transactions: status and contract created come from the receipts.
  const tx = sql(`SELECT status, contract_created, from_addr, to_addr FROM index_transactions WHERE chain = '${CHAIN}' AND hash = '${bad.transactionHash}'`);
  assert.deepEqual(tx, [{ status: 0, contract_created: null, from_addr: U8, to_addr: lc(await erc20.getAddress()) }]);
  const created = sql(`SELECT contract_created FROM index_transactions WHERE chain = '${CHAIN}' AND contract_created = '${lc(await erc1155.getAddress())}'`);
  assert.equal(created.length, 1);
  // The ERC-1155 batch mint is one row per id, with its position in the batch.
  const batch = sql(`SELECT token_id, value, batch_index, operator FROM index_transfers WHERE chain = '${CHAIN}' AND contract = '${lc(await erc1155.getAddress())}' AND from_addr = '${ZERO}' AND to_addr = '${U6}' ORDER BY batch_index`);
  assert.deepEqual(batch, [
    { token_id: '2', value: '5', batch_index: 0, operator: DEPLOYER },
    { token_id: '3', value: '7', batch_index: 1, operator: DEPLOYER },
    { token_id: '4', value: '1', batch_index: 2, operator: DEPLOYER },
  ]);
  // The cursor: caught up, final = head with 0 confirmations, status shows it.
  const [cur] = sql(`SELECT head, confirmed, chain_head FROM index_cursors WHERE chain = '${CHAIN}'`);
  assert.ok(cur.head >= bad.blockNumber && cur.confirmed === cur.head, JSON.stringify(cur));
  const status = execFileSync(`${env.build}/blockport`, ['status'], { env: { ...process.env, BLOCKPORT_CONFIG: env.config }, encoding: 'utf8' });
  assert.match(status, new RegExp(`indexed: +${CHAIN.replace('.', '\\.')} +head \\d+ .*last pass \\d{4}-`));
  // The indexer's lease across heads: held by the stack's --loop copy (host:pid:random).
  assert.match(status, /lease: +indexer +\* held by \S+:\d+:[0-9a-f]{8}, epoch \d+, expires in \d+\.\d{3} s/);
});

test('a reorg removes the orphaned transfers and restores ownership', { skip: onCluster('reads the SQLite file of one head') }, async () => {
  const { erc20, erc721, erc1155 } = tokens;
  await indexOnce();
  const [before0] = sql(`SELECT reorgs FROM index_cursors WHERE chain = '${CHAIN}'`);
  const snap = await rpc('evm_snapshot');
  // One block with three transfers to account 8, which held nothing of these tokens.
  await rpc('evm_setAutomine', [false]);
  const hashes = [];
  try {
    for (const [c, from, fn, args] of [
      [erc721, U6, 'transferFrom', [U6, U8, 0n]],
      [erc20, U5, 'transfer', [U8, 7n]],
      [erc1155, U6, 'safeTransferFrom', [U6, U8, 1n, 1n, '0x']],
    ]) {
      hashes.push(await rpc('eth_sendTransaction', [{ from, to: await c.getAddress(), data: c.interface.encodeFunctionData(fn, args) }]));
    }
    await rpc('evm_mine');
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  const orphanHeight = await head();
  await indexOnce();
  assert.equal(lc((await erc721.ownerOf(0n))), U8);
  const inIndex = (h) => sql(`SELECT count(*) AS n FROM index_transfers WHERE chain = '${CHAIN}' AND tx_hash = '${h}'`)[0].n;
  for (const h of hashes) assert.equal(inIndex(h), 1, 'the transfer was indexed before the reorg');
  await assertMatchesChain();

  // Back to the snapshot, and a different block at the same height.
  assert.equal(await rpc('evm_revert', [snap]), true);
  await send(U7, DEPLOYER, '0x', { value: '0x1' });
  assert.equal(await head(), orphanHeight, 'the new block is at the orphan\'s height');
  await indexOnce();

  for (const h of hashes) assert.equal(inIndex(h), 0, 'orphaned transfer gone');
  assert.equal(sql(`SELECT count(*) AS n FROM index_transactions WHERE chain = '${CHAIN}' AND hash IN ('${hashes.join("','")}')`)[0].n, 0);
  assert.equal(sql(`SELECT count(*) AS n FROM index_erc20_holdings WHERE chain = '${CHAIN}' AND owner = '${U8}' AND contract = '${lc(await erc20.getAddress())}'`)[0].n, 0);
  assert.equal(lc(await erc721.ownerOf(0n)), U6);
  await assertMatchesChain();
  // The stored block at that height is the chain's new one, and the reorg was counted.
  const blk = await rpc('eth_getBlockByNumber', ['0x' + orphanHeight.toString(16), false]);
  assert.deepEqual(sql(`SELECT hash, parent_hash FROM index_blocks WHERE chain = '${CHAIN}' AND number = ${orphanHeight}`), [{ hash: blk.hash, parent_hash: blk.parentHash }]);
  const [after0] = sql(`SELECT reorgs FROM index_cursors WHERE chain = '${CHAIN}'`);
  assert.ok(after0.reorgs > before0.reorgs);

  // A deeper one: the head goes back below the stored head, then grows past it.
  const snap2 = await rpc('evm_snapshot');
  await call(erc721, U6, 'transferFrom', U6, U8, 0n);
  await call(erc1155, DEPLOYER, 'mint', U8, 4n, 9n, '0x');
  await indexOnce();
  assert.equal(sql(`SELECT owner FROM index_nft_owners WHERE chain = '${CHAIN}' AND contract = '${lc(await erc721.getAddress())}' AND token_id = '0'`)[0].owner, U8);
  assert.equal(await rpc('evm_revert', [snap2]), true);
  await indexOnce(); // the stored head is above the chain's now
  await rpc('anvil_mine', ['0x4']);
  await indexOnce();
  await assertMatchesChain();
});

// Makes `blocks` blocks holding `perBlock` ERC-20 transfers each (automine off, anvil signs).
async function fillBlocks(blocks, perBlock) {
  const { erc20 } = tokens;
  const to = await erc20.getAddress();
  await call(erc20, DEPLOYER, 'mint', U5, 10n ** 24n);
  const ifc = new Interface(ERC20.abi);
  await rpc('evm_setAutomine', [false]);
  try {
    for (let b = 0; b < blocks; b++) {
      const body = [];
      for (let i = 0; i < perBlock; i++) {
        const data = ifc.encodeFunctionData('transfer', [A[(b + i) % 5], BigInt(b * perBlock + i + 1)]);
        body.push({ jsonrpc: '2.0', id: i, method: 'eth_sendTransaction', params: [{ from: U5, to, data, gas: '0x20000' }] });
      }
      const res = await (await fetch(env.chain, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
      for (const r of res) assert.ok(r.result, JSON.stringify(r.error));
      await rpc('evm_mine');
    }
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
}

test('kill -9 in mid-batch leaves no duplicate and no gap', { skip: onCluster('runs its own indexer on a SQLite file of its own (tests/cluster kills a whole head)') }, async () => {
  // A database of its own (the stack's loop indexer must not help), small batches, and both
  // networks of the test config indexed, so there is plenty to interrupt.
  const dir = mkdtempSync(join(tmpdir(), 'bp-ix-'));
  const db = join(dir, 'ix.db');
  const config = join(dir, 'blockport.ini');
  writeFileSync(config, readFileSync(env.config, 'utf8')
    .replace(/^database = .*$/m, `database = ${db}`)
    .replace(/^(\[chain [^\]]+\])$/gm, '$1\nindex_batch = 7\nindex_logs_range = 3'));
  execFileSync(`${env.build}/blockport`, ['migrate'], { env: { ...process.env, BLOCKPORT_CONFIG: config }, stdio: 'ignore' });
  try {
    await fillBlocks(60, 8);
    const target = await head();
    let kills = 0;
    let partial = 0;
    // 12 rounds at least; up to 24 (killed later and later) while fewer than 2 kills have
    // landed mid-index: on a loaded machine an --once can take longer than the early delays
    // to store its first batch, and such a kill proves nothing.
    for (let round = 0; round < 24 && (round < 12 || kills < 3 || partial < 2); round++) {
      const child = spawn(`${env.build}/cron/indexer`, ['--once'], { env: { ...process.env, BLOCKPORT_CONFIG: config }, stdio: 'ignore' });
      await sleep(15 + round * 11);
      if (child.exitCode === null && child.kill('SIGKILL')) kills++;
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.on('exit', r)));
      // After every kill the stored blocks are exactly start..head, with no hole.
      const [c] = sql(`SELECT (SELECT head FROM index_cursors WHERE chain = '${CHAIN}') AS head, count(*) AS n, min(number) AS lo, max(number) AS hi FROM index_blocks WHERE chain = '${CHAIN}'`, db);
      if (c.n > 0 && c.head < target) partial++;
      if (c.n > 0) {
        assert.equal(c.lo, 0);
        assert.equal(c.hi, c.head, 'cursor = highest stored block');
        assert.equal(c.n, c.hi + 1, 'no gap');
      }
    }
    assert.ok(kills >= 3, `only ${kills} kills landed`);
    assert.ok(partial >= 2, `only ${partial} kills left a partial index`);
    await indexOnce(config);
    const [c] = sql(`SELECT count(*) AS n, min(number) AS lo, max(number) AS hi FROM index_blocks WHERE chain = '${CHAIN}'`, db);
    assert.ok(c.hi >= target);
    assert.deepEqual([c.lo, c.n], [0, c.hi + 1], 'contiguous blocks');
    // Every stored hash is the chain's.
    const stored = sql(`SELECT number, hash FROM index_blocks WHERE chain = '${CHAIN}' ORDER BY number`, db);
    const body = stored.map((s, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_getBlockByNumber', params: ['0x' + s.number.toString(16), false] }));
    const res = await (await fetch(env.chain, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    for (const r of res) assert.equal(r.result.hash, stored[r.id].hash);
    // The transfers stored equal the chain's transfer logs, one row per log (per id in a batch).
    const logs = await rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x' + c.hi.toString(16), topics: [[T_TRANSFER, T_SINGLE, T_BATCH]] }]);
    let want = 0;
    const ifc = new Interface(ERC1155.abi);
    for (const l of logs) {
      if (l.topics[0] === T_BATCH) want += ifc.parseLog(l).args[3].length;
      else if (l.topics[0] === T_SINGLE || l.topics.length === 3 || l.topics.length === 4) want++;
    }
    const [t] = sql(`SELECT count(*) AS n, count(DISTINCT tx_hash || '/' || log_index || '/' || batch_index) AS d FROM index_transfers WHERE chain = '${CHAIN}'`, db);
    assert.equal(t.n, want, 'one row per transfer log');
    assert.equal(t.d, t.n, 'no duplicates');
    // And the transactions: one row per transaction of the stored blocks.
    const [tx] = sql(`SELECT count(*) AS n, (SELECT sum(tx_count) FROM index_blocks WHERE chain = '${CHAIN}') AS want FROM index_transactions WHERE chain = '${CHAIN}'`, db);
    assert.equal(tx.n, tx.want);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a second --loop copy exits at once as busy; --once waits its turn', { skip: onCluster('reads the SQLite file of one head') }, async () => {
  // The stack's loop indexer holds the run lock: another long-running copy must not start.
  const t0 = Date.now();
  const r = await run(`${env.build}/cron/indexer`, ['--for', '30'], { env: { ...process.env, BLOCKPORT_CONFIG: env.config } });
  assert.ok(Date.now() - t0 < 5000, 'it did not wait');
  assert.match(r.stderr, /busy/);
  // worker_runs records the passes.
  const [w] = sql(`SELECT ok, finished_at >= started_at AS done FROM worker_runs WHERE name = 'indexer'`);
  assert.ok(w);
});
