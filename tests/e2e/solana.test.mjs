// Solana through POST /v1/rpc/solana/devnet, as a client meets it: @solana/kit against
// devchain/solana.mjs (a devnet over LiteSVM: real signatures, the real system and SPL Token
// programs) behind Blockport. An airdrop, a SOL transfer signed here and confirmed, an SPL
// token mint and transfer, scopes (rpc:write for sendTransaction and requestAirdrop), the
// finality cache (finalized answers kept, processed never), the SVM's own errors, and test
// keys only on devnet. Transactions are confirmed by polling getSignatureStatuses (Blockport
// has no Solana subscriptions), at short intervals with a bounded wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  appendTransactionMessageInstructions, createSolanaRpc, createTransactionMessage,
  generateKeyPairSigner, getBase64EncodedWireTransaction, getSignatureFromTransaction, lamports,
  pipe, setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  TOKEN_PROGRAM_ADDRESS, getInitializeAccount3Instruction, getInitializeMintInstruction,
  getMintSize, getMintToInstruction, getTokenSize, getTransferInstruction,
} from '@solana-program/token';

import { env, api, newKey, newKeyPair, assertError, waitFor } from './helpers.mjs';

const PATH = '/v1/rpc/solana/devnet';
const SOL = 1_000_000_000n;
const devnet = process.env.SOLANA_URL;
const req = (method, params, id = 1) => ({ jsonrpc: '2.0', id, method, params });
const call = (key, body) => api(PATH, { method: 'POST', key, body });
const client = (key) => createSolanaRpc(env.base + PATH, { headers: { 'X-API-Key': key } });
const hits = (res) => Number(res.headers.get('x-cache-hits') ?? 0);

// Waits until every signature has reached commitment (confirmed or finalized).
async function confirm(rpc, sigs, commitment = 'confirmed') {
  const rank = { processed: 0, confirmed: 1, finalized: 2 };
  return waitFor(async () => {
    const { value } = await rpc.getSignatureStatuses(sigs).send();
    return value.every((s) => s && rank[s.confirmationStatus] >= rank[commitment]) && value;
  }, `${sigs.length} signature(s) ${commitment}`, 30000);
}

async function airdrop(rpc, to, amount) {
  const sig = await rpc.requestAirdrop(to, lamports(amount)).send();
  await confirm(rpc, [sig]);
  return sig;
}

// Signs instructions with the payer (and extra signers they name), sends, confirms.
async function send(rpc, payer, instructions, opts = {}) {
  const { value: blockhash } = await rpc.getLatestBlockhash().send();
  const message = pipe(createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions(instructions, m));
  const tx = await signTransactionMessageWithSigners(message);
  const wire = getBase64EncodedWireTransaction(tx);
  if (opts.wire) return wire;
  await rpc.sendTransaction(wire, { encoding: 'base64' }).send();
  const sig = getSignatureFromTransaction(tx);
  await confirm(rpc, [sig]);
  return sig;
}

test('an airdrop and a SOL transfer signed by the client: confirmed, balances before and after', async () => {
  const key = newKey({ plan: 'growth' });
  const rpc = client(key);
  const [alice, bob] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
  assert.equal((await rpc.getBalance(alice.address).send()).value, 0n);
  await airdrop(rpc, alice.address, 2n * SOL);
  assert.equal((await rpc.getBalance(alice.address).send()).value, 2n * SOL);

  const sig = await send(rpc, alice, [getTransferSolInstruction({ source: alice,
    destination: bob.address, amount: lamports(SOL / 2n) })]);
  const fee = 5000n;	// one signature
  assert.equal((await rpc.getBalance(alice.address).send()).value, 2n * SOL - SOL / 2n - fee);
  assert.equal((await rpc.getBalance(bob.address).send()).value, SOL / 2n);
  const tx = await rpc.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0,
    encoding: 'json' }).send();
  assert.equal(tx.meta.err, null);
  assert.equal(tx.meta.fee, fee);
  assert.deepEqual(tx.meta.preBalances.slice(0, 2), [2n * SOL, 0n]);
  assert.deepEqual(tx.meta.postBalances.slice(0, 2), [2n * SOL - SOL / 2n - fee, SOL / 2n]);

  // The same calls through kit as a raw batch: one answer each, in order.
  const b = await call(key, [req('getBalance', [bob.address], 'x'), req('getSlot', [], 'y'),
    req('getNoSuchThing', [], 'z')]);
  assert.deepEqual(b.json.map((o) => o.id), ['x', 'y', 'z']);
  assert.equal(b.json[0].result.value, Number(SOL / 2n));
  assert.equal(typeof b.json[1].result, 'number');
  assert.equal(b.json[2].error.code, -32601);
});

test('an SPL token: mint, transfer, getTokenAccountsByOwner and getTokenAccountBalance', async () => {
  const key = newKey({ plan: 'growth' });
  const rpc = client(key);
  const [payer, mint, src, dst, bob] = await Promise.all(Array.from({ length: 5 },
    () => generateKeyPairSigner()));
  await airdrop(rpc, payer.address, SOL);
  const rentMint = await rpc.getMinimumBalanceForRentExemption(BigInt(getMintSize())).send();
  const rentAcct = await rpc.getMinimumBalanceForRentExemption(BigInt(getTokenSize())).send();
  const account = (acct, owner) => [
    getCreateAccountInstruction({ payer, newAccount: acct, lamports: rentAcct, space: getTokenSize(),
      programAddress: TOKEN_PROGRAM_ADDRESS }),
    getInitializeAccount3Instruction({ account: acct.address, mint: mint.address, owner }),
  ];
  await send(rpc, payer, [
    getCreateAccountInstruction({ payer, newAccount: mint, lamports: rentMint, space: getMintSize(),
      programAddress: TOKEN_PROGRAM_ADDRESS }),
    getInitializeMintInstruction({ mint: mint.address, decimals: 6, mintAuthority: payer.address }),
    ...account(src, payer.address), ...account(dst, bob.address),
    getMintToInstruction({ mint: mint.address, token: src.address, mintAuthority: payer, amount: 5_000_000n }),
  ]);
  await send(rpc, payer, [getTransferInstruction({ source: src.address, destination: dst.address,
    authority: payer, amount: 1_250_000n })]);

  const bal = await rpc.getTokenAccountBalance(dst.address).send();
  assert.deepEqual(bal.value, { amount: '1250000', decimals: 6, uiAmount: 1.25, uiAmountString: '1.25' });
  const owned = await rpc.getTokenAccountsByOwner(bob.address, { mint: mint.address },
    { encoding: 'jsonParsed' }).send();
  assert.equal(owned.value.length, 1);
  assert.equal(owned.value[0].pubkey, dst.address);
  const info = owned.value[0].account.data.parsed.info;
  assert.equal(info.mint, mint.address);
  assert.equal(info.owner, bob.address);
  assert.equal(info.tokenAmount.amount, '1250000');
  const mine = await rpc.getTokenAccountsByOwner(payer.address, { programId: TOKEN_PROGRAM_ADDRESS },
    { encoding: 'base64' }).send();
  assert.deepEqual(mine.value.map((a) => a.pubkey), [src.address]);
  assert.equal((await rpc.getTokenAccountBalance(src.address).send()).value.amount, '3750000');
});

test('writes need rpc:write: a read-only key gets 403 for sendTransaction and requestAirdrop', async () => {
  const key = newKey({ plan: 'growth' });
  const ro = newKey({ plan: 'growth', scopes: 'rpc:read' });
  const payer = await generateKeyPairSigner();
  await airdrop(client(key), payer.address, SOL);
  const wire = await send(client(key), payer, [getTransferSolInstruction({ source: payer,
    destination: payer.address, amount: lamports(1n) })], { wire: true });
  assertError(assert, await call(ro, req('sendTransaction', [wire, { encoding: 'base64' }])), 403,
    'forbidden');
  assertError(assert, await call(ro, req('requestAirdrop', [payer.address, 1000])), 403, 'forbidden');
  // In a batch: that item is -32003, the read next to it is answered.
  const b = await call(ro, [req('getSlot', [], 1), req('sendTransaction', [wire, { encoding: 'base64' }], 2)]);
  assert.equal(b.status, 200);
  assert.equal(typeof b.json[0].result, 'number');
  assert.equal(b.json[1].error.code, -32003);
  // Reads are fine with it, and nothing was sent.
  const res = await call(ro, req('getBalance', [payer.address]));
  assert.equal(res.json.result.value, Number(SOL));
  assert.equal(res.headers.get('x-compute-units'), '1');
  // Unknown methods: -32601 from Blockport, never forwarded.
  const unknown = await call(ro, req('getClusterNodesPlease', []));
  assert.equal(unknown.json.error.code, -32601);
});

test('finalized answers come from the cache the second time; processed and confirmed never', async () => {
  const key = newKey({ plan: 'growth' });
  const rpc = client(key);
  const payer = await generateKeyPairSigner();
  const sig = await airdrop(rpc, payer.address, SOL);
  await confirm(rpc, [sig], 'finalized');
  const body = req('getTransaction', [sig, { commitment: 'finalized', encoding: 'json',
    maxSupportedTransactionVersion: 0 }], 7);
  const first = await call(key, body);
  assert.equal(first.status, 200);
  assert.equal(first.json.result.transaction.signatures[0], sig);
  assert.equal(hits(first), 0, 'the first call goes to the node');
  const second = await call(key, { ...body, id: 'again' });
  assert.equal(hits(second), 1, 'the second call is a hit');
  assert.equal(second.json.id, 'again');
  assert.deepEqual(second.json.result, first.json.result);
  assert.ok(Number(second.headers.get('x-compute-units')) < Number(first.headers.get('x-compute-units')));

  // Not kept: at confirmed (it could still change), the default commitment (finalized for
  // getTransaction, but a null before it lands must not stick), processed reads, a null.
  for (const params of [[sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }],
    ['1'.repeat(64), { commitment: 'finalized' }]]) {
    await call(key, req('getTransaction', params));
    assert.equal(hits(await call(key, req('getTransaction', params))), 0, JSON.stringify(params));
  }
  const bal = req('getBalance', [payer.address, { commitment: 'processed' }]);
  await call(key, bal);
  assert.equal(hits(await call(key, bal)), 0);
});

test('a bad transaction: the SVM\'s error as a validator gives it, passed through as it is', async () => {
  const key = newKey({ plan: 'growth' });
  const rpc = client(key);
  const [payer, bob] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
  await airdrop(rpc, payer.address, SOL);
  // More lamports than the payer has: the system program's Custom(1), at preflight.
  const wire = await send(rpc, payer, [getTransferSolInstruction({ source: payer,
    destination: bob.address, amount: lamports(5n * SOL) })], { wire: true });
  const body = req('sendTransaction', [wire, { encoding: 'base64' }], 9);
  const res = await call(key, body);
  assert.equal(res.status, 200);
  assert.equal(res.json.id, 9);
  assert.equal(res.json.error.code, -32002);
  assert.equal(res.headers.get('x-compute-units'), '4');	// a write, refused by the node: charged
  assert.match(res.json.error.message, /^Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1$/);
  assert.deepEqual(res.json.error.data.err, { InstructionError: [0, { Custom: 1 }] });
  assert.ok(res.json.error.data.logs.some((l) => /insufficient lamports/.test(l)), res.text);
  // Byte for byte what the devnet says to the same body (a refused preflight changes nothing),
  // and the same error simulateTransaction reports.
  const direct = (b) => fetch(devnet, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(b) });
  assert.equal(await (await direct(body)).text(), res.text);
  const sim = await (await direct(req('simulateTransaction', [wire, { encoding: 'base64' }], 9))).json();
  assert.deepEqual(sim.result.value.err, res.json.error.data.err);
  // Garbage is the node's -32602, and nothing was charged.
  const junk = await call(key, req('sendTransaction', ['AQAB', { encoding: 'base64' }]));
  assert.equal(junk.json.error.code, -32602);
  assert.equal((await rpc.getBalance(payer.address).send()).value, SOL);
});

test('test keys only on devnet: a test key on a Solana mainnet is 403, a live key passes', async () => {
  const { test: t, live } = newKeyPair('growth');
  const main = (key) => api('/v1/rpc/solana/mainnet', { method: 'POST', key, body: req('getSlot', []) });
  assert.equal((await call(t, req('getSlot', []))).status, 200);
  assertError(assert, await main(t), 403, 'forbidden');
  const ok = await main(live);
  assert.equal(ok.status, 200);
  assert.equal(typeof ok.json.result, 'number');
});
