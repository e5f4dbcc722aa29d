// /v1/tokens end to end (SPEC.md sections 2, 4, 5, 8; docs/tokens.md): ethers sends real
// transactions on the devchain (deploys of OpenZeppelin ERC20PresetMinterPauser tokens, mints,
// transfers, burns, a balance above 2^128), the indexer picks the holdings up, and the balance
// list must equal balanceOf, in the documented order, with exact formatted and USD values;
// pagination edges, metadata (with bytes32 and reverting names, from contracts installed with
// anvil_setCode), 404s, 400s, spam, scopes and a test key on a mainnet.
//
// Dev account 40 of the mnemonic is this file's (funded with anvil_setBalance); account 0 (the
// devchain's deployer) mints the priced sample tokens. Holders are fresh random addresses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  Contract, ContractFactory, JsonRpcProvider, Wallet, getAddress, parseUnits, toBeHex,
} from 'ethers';
import { wallet } from '../../devchain/dev.mjs';
import { api, assertError, env, newKey, onCluster, waitFor } from './helpers.mjs';

const oz = new URL('../../devchain/node_modules/@openzeppelin/contracts/build/contracts/', import.meta.url);
const ERC20 = JSON.parse(readFileSync(new URL('ERC20PresetMinterPauser.json', oz), 'utf8'));
const dc = JSON.parse(readFileSync(`${env.dir}/devchain.json`, 'utf8'));
const BPT = getAddress(dc.tokens.erc20_18);	// priced 2.5 USD in the test config
const BPUSD = getAddress(dc.tokens.erc20_6);	// 6 decimals, priced 1 USD
const NFT = getAddress(dc.tokens.erc721);
const BIG = (1n << 130n) + 5n;			// above 2^128
const LOGO = 'https://logos.example/bpt.png';	// BPT's, in the test config's token list

let provider, me, deployer, key;
let alpha, zeta, empty, lure;		// this file's tokens (18 decimals, unpriced)
const holderWallet = Wallet.createRandom();	// holds ALPHA, ZETA, BPUSD, BPT (and none of EMPTY)
const holder = holderWallet.address;
const spamHolder = Wallet.createRandom().address;

const trim = (s) => s.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
// value / 10^decimals, exact, as the service writes it.
function units(value, decimals) {
  const s = value.toString().padStart(decimals + 1, '0');
  return trim(decimals ? `${s.slice(0, -decimals)}.${s.slice(-decimals)}` : s);
}

async function deploy(name, symbol) {
  const c = await new ContractFactory(ERC20.abi, ERC20.bytecode, me).deploy(name, symbol);
  await c.waitForDeployment();
  return c;
}
const mined = async (p) => { const r = await (await p).wait(); assert.equal(r.status, 1); return r; };

// Runtime code that answers each selector in words (hex of 8 digits -> one 32-byte hex word, or
// an array of them) with those words, and reverts on anything else: hand-assembled, installed
// with anvil_setCode.
function constCode(words, fallback = () => '600080fd') {
  const entries = Object.entries(words).map(([sel, w]) => [sel, [w].flat()]);
  // A body: JUMPDEST, (PUSH32 word PUSH1 offset MSTORE) per word, PUSH1 size PUSH1 0 RETURN.
  const bodies = entries.map(([, ws]) => `5b${ws.map((w, i) =>
    `7f${w}60${(32 * i).toString(16).padStart(2, '0')}52`).join('')}60${(32 * ws.length).toString(16).padStart(2, '0')}6000f3`);
  // Anything else runs fallback(its offset): by default PUSH1 0 DUP1 REVERT.
  const fb = fallback(6 + 11 * entries.length);
  let at = 6 + 11 * entries.length + fb.length / 2;
  let code = '60003560e01c';	// PUSH1 0 CALLDATALOAD PUSH1 0xe0 SHR
  entries.forEach(([sel], k) => {	// DUP1 PUSH4 sel EQ PUSH2 body JUMPI
    code += `8063${sel}1461${at.toString(16).padStart(4, '0')}57`;
    at += bodies[k].length / 2;
  });
  return `0x${code}${fb}${bodies.join('')}`;
}
const word = (n) => BigInt(n).toString(16).padStart(64, '0');
const bytes32 = (s) => Buffer.from(s).toString('hex').padEnd(64, '0');
// A fallback that emits n ERC-20 Transfer(0, base + i, 1) logs in one call: an airdrop.
const TRANSFER = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const airdrop = (n, base) => (at) => '6001600052' + '6000' + '5b' + `8073${base.slice(2)}016000` + `7f${TRANSFER}` +
  '60206000a3' + '600101' + `8060${n.toString(16).padStart(2, '0')}11` +
  `61${(at + 7).toString(16).padStart(4, '0')}57` + '00';
const SEL = { name: '06fdde03', symbol: '95d89b41', decimals: '313ce567', totalSupply: '18160ddd',
  balanceOf: '70a08231' };
async function installed(words, addr = Wallet.createRandom().address, fallback = undefined) {
  await provider.send('anvil_setCode', [addr, constCode(words, fallback)]);
  return addr;
}

const balances = (addr, query = '', k = key) => api(`/v1/tokens/ethereum/balances/${addr}${query}`, { key: k });
const metadata = (addr, query = '', k = key) => api(`/v1/tokens/ethereum/metadata/${addr}${query}`, { key: k });

before(async () => {
  key = newKey({ plan: 'enterprise' });
  provider = new JsonRpcProvider(env.chain, 31337, { staticNetwork: true, cacheTimeout: -1 });
  me = wallet(40, provider);
  deployer = wallet(0, provider);
  await provider.send('anvil_setBalance', [me.address, toBeHex(10n ** 21n)]);
  alpha = await deploy('Alpha Token', 'ALPHA');
  zeta = await deploy('Zeta Token', 'ZETA');
  empty = await deploy('Empty Token', 'EMPTY');
  lure = await deploy('Visit claim-rewards.com', 'CLAIM');
  // Mints, transfers and a burn: ALPHA 2^130 + 5, ZETA 300 (1000 minted, 300 + 300 sent, 100
  // burnt, so a supply of 900), EMPTY 0.
  await mined(alpha.mint(holder, BIG));
  await mined(zeta.mint(me.address, parseUnits('1000', 18)));
  await mined(zeta.transfer(holder, parseUnits('300', 18)));
  await mined(zeta.transfer(spamHolder, parseUnits('300', 18)));
  await mined(zeta.burn(parseUnits('100', 18)));
  // EMPTY goes to the holder and back: a holding of the index with a zero balance.
  await mined(empty.mint(holder, 5n));
  await provider.send('anvil_setBalance', [holder, toBeHex(10n ** 18n)]);
  await mined(empty.connect(holderWallet.connect(provider)).transfer(me.address, 5n));
  await mined(lure.mint(spamHolder, parseUnits('1', 18)));
  // The priced sample tokens, minted by the devchain's deployer (it holds the minter role).
  const sample = (a) => new Contract(a, ERC20.abi, deployer);
  await mined(sample(BPUSD).mint(holder, 1234567900n));		// 1234.5679 BPUSD,
  // of which the holder burns 0.0001: 1234.5678 left.
  await mined(new Contract(BPUSD, ERC20.abi, holderWallet.connect(provider)).burn(100n));
  await mined(sample(BPT).mint(holder, parseUnits('3', 18)));	// 3 BPT = 7.5 USD
});

after(() => provider?.destroy());

// The holder's ZETA moves after the first list, so a helper that waits for what is expected.
async function listOf(addr, total, query = '') {
  return waitFor(async () => {
    const res = await balances(addr, query);
    assert.equal(res.status, 200, res.text);
    return res.json.total === total ? res.json : null;
  }, `${total} tokens of ${addr} in the balance list`, 30000);
}

test('the balance list equals balanceOf, in USD then symbol order, with exact values', async () => {
  // EMPTY was received and sent on (a holding with a zero balance): left out.
  const list = await listOf(holder, 4);
  assert.equal(list.address, getAddress(holder));
  assert.equal(list.truncated, false);
  assert.equal(list.chain, 'ethereum');
  assert.equal(list.page, 1);
  const want = [
    [BPUSD, 'BPUSD', 'Blockport Dollar', 6, 1234567800n, '1234.5678', '1234.5678'],
    [BPT, 'BPT', 'Blockport Token', 18, 3n * 10n ** 18n, '3', '7.5', LOGO],
    [await alpha.getAddress(), 'ALPHA', 'Alpha Token', 18, BIG, units(BIG, 18), null],
    [await zeta.getAddress(), 'ZETA', 'Zeta Token', 18, 300n * 10n ** 18n, '300', null],
  ];
  assert.deepEqual(list.tokens.map((t) => t.symbol), want.map((w) => w[1]));
  for (const [i, [contract, symbol, name, decimals, balance, formatted, usd, logo = null]] of want.entries()) {
    const t = list.tokens[i];
    const onChain = await new Contract(contract, ERC20.abi, provider).balanceOf(holder);
    assert.equal(BigInt(t.balance), onChain, `${symbol} balance equals balanceOf`);
    assert.deepEqual(t, {
      contract: getAddress(contract), symbol, name, decimals, balance: balance.toString(),
      formatted_balance: formatted, usd_value: usd, logo_url: logo, spam: false,
    });
  }
  assert.equal(list.tokens[2].formatted_balance, '1361129467683753853853.498429727072845829');
});

test('pages: limit 1 walks the same order; past the end is empty with the real total', async () => {
  const all = (await listOf(holder, 4)).tokens.map((t) => t.contract);
  const walked = [];
  for (let page = 1; page <= 4; page++) {
    const res = await balances(holder, `?page=${page}&limit=1`);
    assert.equal(res.status, 200);
    assert.equal(res.json.page, page);
    assert.equal(res.json.total, 4);
    walked.push(...res.json.tokens.map((t) => t.contract));
  }
  assert.deepEqual(walked, all);
  const last = await balances(holder, '?page=2&limit=3');
  assert.deepEqual(last.json.tokens.map((t) => t.contract), all.slice(3));
  const past = await balances(holder, '?page=5&limit=1');
  assert.equal(past.status, 200);
  assert.deepEqual(past.json.tokens, []);
  assert.equal(past.json.total, 4);
  const far = await balances(holder, '?page=1000000000');
  assert.deepEqual([far.json.tokens.length, far.json.total], [0, 4]);
  // An address the index has never seen: an empty list.
  const none = await balances(Wallet.createRandom().address);
  assert.deepEqual([none.status, none.json.tokens, none.json.total], [200, [], 0]);
});

test('bad page, limit, address and exclude_spam are 400 naming the parameter', async () => {
  for (const [q, name] of [['?limit=0', 'limit'], ['?limit=101', 'limit'], ['?limit=-1', 'limit'],
    ['?limit=abc', 'limit'], ['?page=0', 'page'], ['?page=-3', 'page'], ['?page=1.5', 'page'],
    ['?exclude_spam=yes', 'exclude_spam']]) {
    const res = await balances(holder, q);
    assertError(assert, res, 400, 'invalid_request');
    assert.match(res.json.error.message, new RegExp(name), q);
  }
  const mixed = getAddress(holder);
  const flipped = mixed.replace(/[a-f]/, (c) => c.toUpperCase());
  for (const bad of ['0x1234', holder.slice(0, 41) + 'g', `${holder}00`, 'vitalik.eth', flipped]) {
    const res = await balances(bad);
    assertError(assert, res, 400, 'invalid_request');
    assert.match(res.json.error.message, /address/);
  }
  // All lower and all upper case carry no checksum and pass.
  assert.equal((await balances(holder.toLowerCase())).status, 200);
  assert.equal((await balances(`0x${holder.slice(2).toUpperCase()}`)).status, 200);
});

test('spam: a lure in the name marks the entry; exclude_spam=true leaves it out of the total', async () => {
  const list = await listOf(spamHolder, 2);
  const byContract = Object.fromEntries(list.tokens.map((t) => [t.contract, t.spam]));
  assert.equal(byContract[await lure.getAddress()], true);
  assert.equal(byContract[await zeta.getAddress()], false);
  const clean = await balances(spamHolder, '?exclude_spam=true');
  assert.equal(clean.json.total, 1);
  assert.deepEqual(clean.json.tokens.map((t) => t.symbol), ['ZETA']);
  const meta = await metadata(await lure.getAddress());
  assert.equal(meta.json.spam, true);
});

test('spam: an airdrop to 150 addresses in one transaction, none of which ever used the token', async () => {
  const drop = await installed({ [SEL.name]: bytes32('Harmless'), [SEL.symbol]: bytes32('HRM'),
    [SEL.decimals]: word(18), [SEL.totalSupply]: word(150), [SEL.balanceOf]: word(1) }, undefined,
    airdrop(150, `${Wallet.createRandom().address.slice(0, 38).toLowerCase()}0000`));
  const r = await mined(me.sendTransaction({ to: drop, data: '0x', gasLimit: 2_000_000 }));
  assert.equal(r.logs.length, 150);
  const receiver = `0x${r.logs[42].topics[2].slice(26)}`;
  const list = await listOf(receiver, 1);
  assert.deepEqual([list.tokens[0].contract, list.tokens[0].symbol, list.tokens[0].spam],
    [getAddress(drop), 'HRM', true]);
  assert.equal((await balances(receiver, '?exclude_spam=true')).json.total, 0);
  assert.equal((await metadata(drop)).json.spam, true);
});

test('the cut at token_balances_max (8 here): spam at low addresses never hides a real holding', { skip: onCluster('reads the SQLite file of one head') }, async () => {
  // Ten holdings: eight lure-named tokens at addresses that sort first, airdropped to the
  // victim by someone else, and two real ones at addresses that sort last: one it got in a
  // transaction of its own (a purchase), one sent by someone else. A cut by address kept only
  // spam.
  const victimWallet = Wallet.createRandom().connect(provider);
  const victim = victimWallet.address;
  await provider.send('anvil_setBalance', [victim, toBeHex(10n ** 18n)]);
  const tail = () => Wallet.createRandom().address.slice(10).toLowerCase();	// 32 hex digits
  const token = (name, symbol) => ({ [SEL.name]: bytes32(name), [SEL.symbol]: bytes32(symbol),
    [SEL.decimals]: word(18), [SEL.totalSupply]: word(1), [SEL.balanceOf]: word(1) });
  const toVictim = airdrop(1, victim.toLowerCase());
  const spam = [];
  for (let i = 0; i < 8; i++)
    spam.push(await installed(token(`Claim reward ${i}`, `SPAM${i}`), `0x00000000${tail()}`, toVictim));
  const bought = await installed(token('Real Bought', 'RBUY'), `0xffffffff${tail()}`, toVictim);
  const sent = await installed(token('Real Sent', 'RSNT'), `0xffffffff${tail()}`, toVictim);
  for (const a of [...spam, sent])
    await mined(me.sendTransaction({ to: a, data: '0x', gasLimit: 100_000 }));
  await mined(victimWallet.sendTransaction({ to: bought, data: '0x', gasLimit: 100_000 }));
  await waitFor(() => execFileSync('sqlite3', [`${env.dir}/blockport.db`,
    `SELECT count(*) FROM index_erc20_holdings WHERE owner = '${victim.toLowerCase()}'`],
  { encoding: 'utf8' }).trim() === '10', 'the ten holdings in the index', 15000);

  // No verdict is known yet: the bought token comes first, the rest by address.
  const first = await balances(victim, '?limit=100');
  assert.equal(first.status, 200, first.text);
  assert.ok(first.json.tokens.some((t) => t.contract === getAddress(bought)),
    'the token the victim got in its own transaction is listed');
  assert.equal(first.json.total, 8);
  assert.equal(first.json.truncated, true);

  // Once the verdicts are cached (metadata reads), known spam goes after the token known clean.
  for (const a of spam) assert.equal((await metadata(a)).json.spam, true);
  assert.equal((await metadata(sent)).json.spam, false);
  const clean = await waitFor(async () => {
    const res = await balances(victim, '?exclude_spam=true');
    return res.json.total === 2 ? res.json : null;
  }, 'both real tokens past the cut', 10000);
  assert.deepEqual(clean.tokens.map((t) => [t.contract, t.symbol]),
    [[getAddress(bought), 'RBUY'], [getAddress(sent), 'RSNT']]);
  assert.equal(clean.truncated, true);
  const all = await balances(victim, '?limit=100');
  assert.equal(all.json.total, 8);
  assert.deepEqual(all.json.tokens.slice(0, 2).map((t) => t.symbol), ['RBUY', 'RSNT']);
  assert.ok(all.json.tokens.slice(2).every((t) => t.spam));
});

test('metadata: read from the contract, supply after burns, exact price and market cap', async () => {
  const z = await metadata(await zeta.getAddress());
  assert.equal(z.status, 200, z.text);
  assert.deepEqual(z.json, {
    contract: await zeta.getAddress(), chain: 'ethereum', name: 'Zeta Token', symbol: 'ZETA',
    decimals: 18, total_supply: (900n * 10n ** 18n).toString(), formatted_total_supply: '900',
    price_usd: null, market_cap_usd: null, logo_url: null, spam: false,
  });
  const supply = await new Contract(BPT, ERC20.abi, provider).totalSupply();
  const b = await metadata(BPT);
  assert.equal(b.json.total_supply, supply.toString());
  assert.equal(b.json.price_usd, '2.5');
  assert.equal(b.json.logo_url, LOGO);
  assert.equal(b.json.market_cap_usd, units(supply * 25n, 19));
  const u = await metadata(BPUSD.toLowerCase());
  assert.deepEqual([u.json.decimals, u.json.price_usd, u.json.market_cap_usd],
    [6, '1', units(await new Contract(BPUSD, ERC20.abi, provider).totalSupply(), 6)]);
  // A burn and a mint move the supply within seconds of being indexed, though the cached one
  // is far from token_refresh_seconds (60 in the test config): the indexer makes it stale.
  await mined(zeta.burn(parseUnits('50', 18)));
  await waitFor(async () => (await metadata(await zeta.getAddress())).json.total_supply ===
    (850n * 10n ** 18n).toString(), 'the total supply after a burn', 8000);
  await mined(zeta.mint(me.address, parseUnits('25', 18)));
  await waitFor(async () => (await metadata(await zeta.getAddress())).json.total_supply ===
    (875n * 10n ** 18n).toString(), 'the total supply after a mint', 8000);
});

test('metadata: bytes32 (MKR-style) names, a reverting name(), and 404 for what is no ERC-20', async () => {
  const mkr = await installed({ [SEL.name]: bytes32('Maker'), [SEL.symbol]: bytes32('MKR'),
    [SEL.decimals]: word(18), [SEL.totalSupply]: word(10n ** 24n) });
  const m = await metadata(mkr);
  assert.equal(m.status, 200, m.text);
  assert.deepEqual([m.json.name, m.json.symbol, m.json.formatted_total_supply], ['Maker', 'MKR', '1000000']);
  const mute = await installed({ [SEL.symbol]: bytes32('MUTE'), [SEL.decimals]: word(6),
    [SEL.totalSupply]: word(7) });
  const r = await metadata(mute);
  assert.deepEqual([r.status, r.json.name, r.json.symbol, r.json.formatted_total_supply],
    [200, null, 'MUTE', '0.000007']);
  // No decimals()/totalSupply(): not an ERC-20. An account without code, an ERC-721.
  const named = await installed({ [SEL.name]: bytes32('Only a name') });
  for (const a of [named, Wallet.createRandom().address, me.address, NFT]) {
    const res = await metadata(a);
    assertError(assert, res, 404, 'not_found');
  }
  for (const bad of ['0x12', 'nothex', getAddress(BPT).replace(/[a-f]/, (c) => c.toUpperCase())])
    assertError(assert, await metadata(bad), 400, 'invalid_request');
});

test('scopes: data:read is needed; a test key on a mainnet is 403; an unknown chain is 404', async () => {
  const rpcOnly = newKey({ plan: 'enterprise', scopes: 'rpc:read' });
  assertError(assert, await balances(holder, '', rpcOnly), 403, 'forbidden');
  assertError(assert, await metadata(BPT, '', rpcOnly), 403, 'forbidden');
  const data = newKey({ plan: 'enterprise', scopes: 'data:read' });
  assert.equal((await metadata(BPT, '', data)).status, 200);
  assertError(assert, await balances(holder, '?network=mainnet'), 403, 'forbidden');
  assertError(assert, await metadata(BPT, '?network=mainnet'), 403, 'forbidden');
  // A live key reads the mainnet twin (the devchain, not indexed): metadata answers.
  const live = newKey({ plan: 'enterprise', live: true });
  assert.equal((await metadata(BPT, '', live)).json.symbol, 'BPT');
  assertError(assert, await api('/v1/tokens/nochain/metadata/' + BPT, { key }), 404, 'not_found');
  assertError(assert, await api(`/v1/tokens/ethereum/metadata/${BPT}`, { key: null }), 401, 'unauthorized');
});

test('Chainlink prices: cron/prices reads latestRoundData; a stale answer is no price', { skip: onCluster('reads the SQLite file of one head') }, async () => {
  // The test config names these (scripts/stack.sh): token c1a10 priced by aggregator c1a11,
  // token c1a20 by c1a21. The aggregators answer (roundId, answer, startedAt, updatedAt,
  // answeredInRound) with 8 decimals, as Chainlink's USD feeds do.
  const at = (n) => `0x${n.toString(16).padStart(40, '0')}`;
  const now = BigInt(Math.floor(Date.now() / 1000));
  const round = (answer, updated) => [word(7), word(answer), word(updated), word(updated), word(7)];
  await installed({ feaf968c: round(123456789012n, now), [SEL.decimals]: word(8) }, at(0xc1a11));
  await installed({ feaf968c: round(99n * 10n ** 8n, now - 7200n), [SEL.decimals]: word(8) }, at(0xc1a21));
  for (const t of [0xc1a10, 0xc1a20])
    await installed({ [SEL.symbol]: bytes32('FEED'), [SEL.decimals]: word(18),
      [SEL.totalSupply]: word(2n * 10n ** 18n) }, at(t));
  const fresh = await waitFor(async () => {
    const res = await metadata(at(0xc1a10));
    return res.json.price_usd !== null ? res.json : null;
  }, 'the sampled Chainlink price', 40000);
  assert.deepEqual([fresh.price_usd, fresh.market_cap_usd], ['1234.56789012', '2469.13578024']);
  // Sampled too (the worker stores every answer), but an hour past price_max_age: null.
  await waitFor(async () => {
    const out = execFileSync('sqlite3', [`${env.dir}/blockport.db`,
      `SELECT price FROM token_prices WHERE contract = '${at(0xc1a20)}'`], { encoding: 'utf8' });
    return out.trim() === '99';
  }, 'the stale sample', 40000);
  const stale = await metadata(at(0xc1a20));
  assert.deepEqual([stale.status, stale.json.price_usd, stale.json.market_cap_usd], [200, null, null]);
});
