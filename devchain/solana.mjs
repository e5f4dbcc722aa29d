#!/usr/bin/env node
// A Solana devnet for make run and the end-to-end tests. It STANDS IN FOR A VALIDATOR: no Solana
// validator installs on this machine, but the SVM does (npm `litesvm`, its linux-x64-gnu binary),
// so this small JSON-RPC server runs real transactions, real signatures and the real system and
// SPL Token programs in process, and answers the methods a client (@solana/kit, web3.js) needs:
//
//   getSlot getBlockHeight getEpochInfo getVersion getHealth getGenesisHash getLatestBlockhash
//   isBlockhashValid getBalance getAccountInfo getMultipleAccounts getMinimumBalanceForRentExemption
//   getFeeForMessage requestAirdrop sendTransaction simulateTransaction getSignatureStatuses
//   getTransaction getTokenAccountsByOwner getTokenAccountBalance    (and GET /health)
//
// Slots advance on a timer (--slot-ms, 400 by default, as on mainnet), one block a slot, a new
// blockhash a slot, each valid for 150 blocks. Commitment levels: processed is the newest slot,
// confirmed one behind, finalized --finality slots behind (8 by default, not mainnet's ~32, so a
// test waits ~3 s and not ~13 s). getTransaction and getSignatureStatuses follow them.
//
// What it does NOT do: consensus, gossip, votes, leaders, forks or skipped slots (every slot has
// a block, and nothing rolls back); account state per commitment (every read answers the newest
// state, only the context slot follows the commitment); WebSocket subscriptions; blocks
// (getBlock*), getProgramAccounts, getSignaturesForAddress, address lookup tables; token
// balances in transaction meta (preTokenBalances/postTokenBalances are empty); rewards, stake,
// inflation. sendTransaction executes at once (in the processed slot); with preflight (the
// default) a failing transaction is refused as a validator refuses it (-32002 with the SVM's
// error and logs); with skipPreflight it lands failed and charged. Unknown methods: -32601.
//
//   node devchain/solana.mjs PORT [--slot-ms N] [--finality N]
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { LiteSVM } from 'litesvm';
import * as internal from 'litesvm/dist/internal.js';
import {
  address, appendTransactionMessageInstruction, createTransactionMessage, generateKeyPairSigner,
  getBase58Decoder, getBase58Encoder, getBase64Decoder, getBase64Encoder,
  getCompiledTransactionMessageDecoder, getTransactionDecoder, getTransactionEncoder, lamports, pipe,
  setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const port = Number(args[0] ?? 0);
const SLOT_MS = opt('--slot-ms', 400);
const FINALITY = opt('--finality', 8);
const VALID_BLOCKS = 150;		/* a blockhash's life, as on a validator */
const SLOTS_PER_EPOCH = 432000;
const LAMPORTS_PER_SIGNATURE = 5000n;
const AIRDROP_MAX = 1_000_000_000_000n;	/* 1000 SOL a request, as solana-test-validator's faucet */
const U64_MAX = 18446744073709551615n;	/* rentEpoch of rent-exempt accounts */
const SYSTEM = '11111111111111111111111111111111';
const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS14EpPwfGAEg8ThkRrpQuh';

const b58 = { enc: getBase58Encoder(), dec: getBase58Decoder() };	/* enc: text to bytes */
const b64 = { enc: getBase64Encoder(), dec: getBase64Decoder() };
const txDecoder = getTransactionDecoder();
const txEncoder = getTransactionEncoder();
const msgDecoder = getCompiledTransactionMessageDecoder();

// The SVM checks signatures; the blockhash check is ours (below), because LiteSVM accepts only
// its newest blockhash while a validator accepts any of the last 150 blocks'.
const svm = new LiteSVM().withSigverify(true).withBlockhashCheck(false);
const genesisHash = b58.dec.decode(randomBytes(32));
let slot = 0;
const blockhashes = new Map();	/* blockhash -> slot it was made in; pruned past its life */
const slotHashes = [];		/* slot -> blockhash, for commitment-pinned getLatestBlockhash */
const txs = new Map();		/* signature -> what getTransaction and the statuses answer */
let txCount = 0;

function newSlot() {
  if (slot > 0) svm.expireBlockhash();
  const hash = svm.latestBlockhash();
  slotHashes[slot] = hash;
  blockhashes.set(hash, slot);
  svm.warpToSlot(BigInt(slot));
  const old = slot - VALID_BLOCKS - 1;
  if (old >= 0) {
    blockhashes.delete(slotHashes[old]);
    delete slotHashes[old];
  }
}
newSlot();
setInterval(() => { slot++; newSlot(); }, SLOT_MS).unref?.();

const commitmentSlot = (c) => c === 'processed' ? slot :
  c === 'confirmed' ? Math.max(0, slot - 1) : Math.max(0, slot - FINALITY);
const status = (txSlot) => txSlot <= slot - FINALITY ? 'finalized' :
  txSlot <= slot - 1 ? 'confirmed' : 'processed';
const blockhashValid = (hash) => blockhashes.has(hash) &&
  slot <= blockhashes.get(hash) + VALID_BLOCKS;

class RpcError extends Error {
  constructor(code, message, data) { super(message); this.code = code; this.data = data; }
}
const invalidParams = (m) => new RpcError(-32602, m);

function config(p, i) {
  const c = p[i];
  if (c === undefined || c === null) return {};
  if (typeof c !== 'object' || Array.isArray(c)) throw invalidParams('Invalid params: expected a config object');
  if (c.commitment !== undefined && !['processed', 'confirmed', 'finalized'].includes(c.commitment))
    throw invalidParams(`Invalid params: unknown variant \`${c.commitment}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\``);
  return c;
}

function pubkey(s) {
  if (typeof s !== 'string') throw invalidParams('Invalid params: expected a base-58 public key');
  let bytes;
  try { bytes = b58.enc.encode(s); } catch { bytes = null; }
  if (!bytes || bytes.length !== 32) throw invalidParams('Invalid param: Invalid');
  return address(s);
}

const context = (c) => ({ apiVersion: '2.2.0', slot: commitmentSlot(c?.commitment) });

// --- errors, as the validator writes them (TransactionError's serde form and Display) ---

const TX_ERRORS = ['AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound',
  'InsufficientFundsForFee', 'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound',
  'CallChainTooDeep', 'MissingSignatureForFee', 'InvalidAccountIndex', 'SignatureFailure',
  'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance', 'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit',
  'CommitCancelled'];
const IX_ERRORS = ['GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData',
  'AccountDataTooSmall', 'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature',
  'AccountAlreadyInitialized', 'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId',
  'ExternalAccountLamportSpend', 'ExternalAccountDataModified', 'ReadonlyLamportChange',
  'ReadonlyDataModified', 'DuplicateAccountIndex', 'ExecutableModified', 'RentEpochModified',
  'NotEnoughAccountKeys', 'AccountDataSizeChanged', 'AccountNotExecutable', 'AccountBorrowFailed',
  'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync', 'InvalidError', 'ExecutableDataModified',
  'ExecutableLamportChange', 'ExecutableAccountNotRentExempt', 'UnsupportedProgramId', 'CallDepth',
  'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded', 'InvalidSeeds', 'InvalidRealloc',
  'ComputationalBudgetExceeded', 'PrivilegeEscalation', 'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete', 'ProgramFailedToCompile', 'Immutable', 'IncorrectAuthority',
  'AccountNotRentExempt', 'InvalidAccountOwner', 'ArithmeticOverflow', 'UnsupportedSysvar',
  'IllegalOwner', 'MaxAccountsDataAllocationsExceeded', 'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded', 'BuiltinProgramsMustConsumeComputeUnits'];
const TX_TEXT = {
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  BlockhashNotFound: 'Blockhash not found',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  AlreadyProcessed: 'This transaction has already been processed',
  SignatureFailure: 'Transaction did not pass signature verification',
};
const IX_TEXT = {
  InsufficientFunds: 'insufficient funds for instruction',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
  IncorrectProgramId: 'incorrect program id for instruction',
};

// LiteSVM's error object -> [the JSON form, the Display text].
function txError(e) {
  if (typeof e === 'number') {
    const name = TX_ERRORS[e] ?? 'SanitizeFailure';
    return [name, TX_TEXT[name] ?? name.replace(/([a-z])([A-Z])/g, '$1 $2')];
  }
  if (e instanceof internal.TransactionErrorInstructionError) {
    const ie = e.err();
    let json, text;
    if (typeof ie === 'number') {
      json = IX_ERRORS[ie] ?? 'GenericError';
      text = IX_TEXT[json] ?? json.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
    } else if (ie instanceof internal.InstructionErrorCustom) {
      json = { Custom: ie.code };
      text = `custom program error: 0x${ie.code.toString(16)}`;
    } else {
      json = { BorshIoError: String(ie.msg ?? '') };
      text = 'Failed to serialize or deserialize account data';
    }
    return [{ InstructionError: [e.index, json] }, `Error processing Instruction ${e.index}: ${text}`];
  }
  if (e instanceof internal.TransactionErrorDuplicateInstruction)
    return [{ DuplicateInstruction: e.index }, `Transaction contains a duplicate instruction (${e.index}) that is not allowed`];
  if (e instanceof internal.TransactionErrorInsufficientFundsForRent)
    return [{ InsufficientFundsForRent: { account_index: e.accountIndex } },
      `Transaction results in an account (${e.accountIndex}) with insufficient funds for rent`];
  return [{ ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex } },
    `Execution of the program referenced by account at index ${e.accountIndex} is temporarily restricted.`];
}

// --- transactions ---

function decodeTx(s, encoding) {
  if (typeof s !== 'string') throw invalidParams('Invalid params: expected an encoded transaction');
  if (encoding !== undefined && encoding !== 'base58' && encoding !== 'base64')
    throw invalidParams(`Invalid params: unknown variant \`${encoding}\`, expected \`base58\` or \`base64\``);
  let bytes;
  try {
    bytes = encoding === 'base64' ? b64.enc.encode(s) : b58.enc.encode(s);
  } catch {
    throw invalidParams(`invalid ${encoding ?? 'base58'} encoding: the transaction does not decode`);
  }
  try {
    const tx = txDecoder.decode(bytes);
    const msg = msgDecoder.decode(tx.messageBytes);
    return { tx, msg, bytes: new Uint8Array(bytes) };
  } catch {
    throw invalidParams('invalid transaction: Transaction failed to sanitize accounts offsets correctly');
  }
}

const signatureOf = (tx) => {
  const sig = Object.values(tx.signatures)[0];
  return sig ? b58.dec.decode(sig) : null;
};
const balances = (keys) => keys.map((k) => svm.getBalance(k) ?? 0n);	/* u64: bigint out */

function simulation(meta, err) {
  return { err, logs: meta.logs(), accounts: null, unitsConsumed: Number(meta.computeUnitsConsumed()),
    returnData: null, innerInstructions: null, replacementBlockhash: null };
}

// Runs a decoded transaction in the current slot and records it; returns its signature.
function execute({ tx, msg, bytes }, skipPreflight) {
  const sig = signatureOf(tx);
  if (!blockhashValid(msg.lifetimeToken)) {
    if (!skipPreflight)
      throw new RpcError(-32002, 'Transaction simulation failed: Blockhash not found',
        { accounts: null, err: 'BlockhashNotFound', innerInstructions: null, logs: [],
          replacementBlockhash: null, returnData: null, unitsConsumed: 0 });
    return sig;	/* a validator drops it: no status ever */
  }
  if (!skipPreflight) {
    const sim = svm.simulateTransaction(tx);
    if (sim instanceof internal.FailedTransactionMetadata || sim.constructor?.name === 'FailedTransactionMetadata') {
      const [json, text] = txError(sim.err());
      throw new RpcError(-32002, `Transaction simulation failed: ${text}`, simulation(sim.meta(), json));
    }
  }
  const keys = msg.staticAccounts;
  const pre = balances(keys);
  const res = svm.sendTransaction(tx);
  const failed = res instanceof internal.FailedTransactionMetadata || typeof res.err === 'function';
  const meta = failed ? res.meta() : res;
  const err = failed ? txError(res.err())[0] : null;
  if (failed && typeof err === 'string' && ['AlreadyProcessed', 'SignatureFailure', 'BlockhashNotFound',
      'AccountNotFound', 'InsufficientFundsForFee', 'SanitizeFailure'].includes(err))
    throw new RpcError(-32002, `Transaction simulation failed: ${txError(res.err())[1]}`,
      simulation(meta, err));	/* never lands on a validator either */
  const post = balances(keys);
  const fee = pre.reduce((a, b) => a + b, 0n) - post.reduce((a, b) => a + b, 0n);
  txs.set(sig, { slot, blockTime: Math.floor(Date.now() / 1000), bytes, msg, tx, err, fee, pre, post,
    logs: meta.logs(), units: Number(meta.computeUnitsConsumed()) });
  txCount++;
  return sig;
}

// requestAirdrop is a real transfer from a faucet key, so getTransaction and the statuses show
// it; legacy, as a validator's faucet sends, with a memo that numbers it: two equal airdrops in
// one slot would otherwise be one signature (AlreadyProcessed).
let faucet;
let airdrops = 0;
const MEMO = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
async function airdrop(to, amount) {
  const hash = svm.latestBlockhash();
  const memo = { programAddress: MEMO, data: new TextEncoder().encode(`airdrop ${++airdrops}`) };
  const message = pipe(createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayerSigner(faucet, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: hash, lastValidBlockHeight: BigInt(slot + VALID_BLOCKS) }, m),
    (m) => appendTransactionMessageInstruction(getTransferSolInstruction({ source: faucet,
      destination: to, amount: lamports(amount) }), m),
    (m) => appendTransactionMessageInstruction(memo, m));
  const tx = await signTransactionMessageWithSigners(message);
  const bytes = new Uint8Array(txEncoder.encode(tx));
  return execute({ tx, msg: msgDecoder.decode(tx.messageBytes), bytes }, false);
}

function encodeTx(t, encoding) {
  if (encoding === 'base64') return [b64.dec.decode(t.bytes), 'base64'];
  if (encoding === 'base58') return [b58.dec.decode(t.bytes), 'base58'];
  const m = t.msg;
  const message = {
    accountKeys: m.staticAccounts,
    header: m.header,
    recentBlockhash: m.lifetimeToken,
    instructions: (m.instructions ?? []).map((ix) => ({ programIdIndex: ix.programAddressIndex,
      accounts: ix.accountIndices ?? [], data: b58.dec.decode(ix.data ?? new Uint8Array()),
      stackHeight: null })),
  };
  if (m.version !== 'legacy') message.addressTableLookups = m.addressTableLookups ?? [];
  return { signatures: Object.values(t.tx.signatures).map((s) => b58.dec.decode(s)), message };
}

// --- accounts ---

const raw = (a) => a.data;
function encodeAccount(a, encoding) {
  if (!a.exists) return null;
  let data;
  const parsed = encoding === 'jsonParsed' ? parseToken(a) : null;
  if (parsed) data = parsed;
  else if (encoding === 'base58') data = [b58.dec.decode(raw(a)), 'base58'];
  else if (encoding === undefined || encoding === 'binary') data = b58.dec.decode(raw(a));
  else if (encoding === 'base64' || encoding === 'jsonParsed') data = [b64.dec.decode(raw(a)), 'base64'];
  else throw invalidParams(`Invalid params: unknown encoding \`${encoding}\``);
  return { data, executable: a.executable, lamports: BigInt(a.lamports), owner: a.programAddress,
    rentEpoch: U64_MAX, space: raw(a).length };
}

function account(addr) {
  const a = svm.getAccount(addr);
  return a;
}

const u64le = (d, o) => new DataView(d.buffer, d.byteOffset).getBigUint64(o, true);
const key = (d, o) => b58.dec.decode(d.subarray(o, o + 32));
function uiAmount(amount, decimals) {
  const s = amount.toString().padStart(decimals + 1, '0');
  const str = decimals ? `${s.slice(0, -decimals)}.${s.slice(-decimals)}`.replace(/\.?0+$/, '') : s;
  return { amount: amount.toString(), decimals, uiAmount: Number(str), uiAmountString: str };
}
function mintDecimals(mint) {
  const m = svm.getAccount(address(mint));
  return m.exists && raw(m).length >= 45 ? raw(m)[44] : 0;
}

// SPL Token (and the base of Token-2022) accounts and mints, as spl-token's jsonParsed.
function parseToken(a) {
  if (a.programAddress !== TOKEN && a.programAddress !== TOKEN_2022) return null;
  const d = raw(a);
  const program = a.programAddress === TOKEN ? 'spl-token' : 'spl-token-2022';
  if (d.length === 165 || (d.length > 165 && d[165] === 2)) {
    const mint = key(d, 0);
    const state = ['uninitialized', 'initialized', 'frozen'][d[108]] ?? 'initialized';
    const info = { isNative: d[109] === 1, mint, owner: key(d, 32), state,
      tokenAmount: uiAmount(u64le(d, 64), mintDecimals(mint)) };
    if (new DataView(d.buffer, d.byteOffset).getUint32(72, true)) {
      info.delegate = key(d, 76);
      info.delegatedAmount = uiAmount(u64le(d, 121), info.tokenAmount.decimals);
    }
    return { parsed: { info, type: 'account' }, program, space: d.length };
  }
  if (d.length === 82 || (d.length > 165 && d[165] === 1)) {
    const opt = (o) => new DataView(d.buffer, d.byteOffset).getUint32(o, true) ? key(d, o + 4) : null;
    return { parsed: { info: { decimals: d[44], freezeAuthority: opt(46), isInitialized: d[45] === 1,
      mintAuthority: opt(0), supply: u64le(d, 36).toString() }, type: 'mint' }, program,
      space: d.length };
  }
  return null;
}

function tokenAccount(addr) {
  const a = account(addr);
  const p = a.exists ? parseToken(a) : null;
  if (!p || p.parsed.type !== 'account')
    throw invalidParams('Invalid param: not a Token account');
  return p.parsed.info.tokenAmount;
}

// --- the methods ---

const methods = {
  getSlot: (p) => commitmentSlot(config(p, 0).commitment),
  getBlockHeight: (p) => commitmentSlot(config(p, 0).commitment),
  getEpochInfo: (p) => {
    const s = commitmentSlot(config(p, 0).commitment);
    return { absoluteSlot: s, blockHeight: s, epoch: Math.floor(s / SLOTS_PER_EPOCH),
      slotIndex: s % SLOTS_PER_EPOCH, slotsInEpoch: SLOTS_PER_EPOCH, transactionCount: txCount };
  },
  getVersion: () => ({ 'solana-core': '2.2.0', 'feature-set': 3294202862 }),
  getHealth: () => 'ok',
  getGenesisHash: () => genesisHash,
  getLatestBlockhash: (p) => {
    const c = config(p, 0);
    const s = commitmentSlot(c.commitment);
    return { context: context(c), value: { blockhash: slotHashes[s], lastValidBlockHeight: s + VALID_BLOCKS } };
  },
  isBlockhashValid: (p) => {
    if (typeof p[0] !== 'string') throw invalidParams('Invalid params: expected a blockhash');
    return { context: context(config(p, 1)), value: blockhashValid(p[0]) };
  },
  getBalance: (p) => {
    const a = pubkey(p[0]);
    return { context: context(config(p, 1)), value: svm.getBalance(a) ?? 0n };
  },
  getAccountInfo: (p) => {
    const a = pubkey(p[0]);
    const c = config(p, 1);
    return { context: context(c), value: encodeAccount(account(a), c.encoding) };
  },
  getMultipleAccounts: (p) => {
    if (!Array.isArray(p[0])) throw invalidParams('Invalid params: expected an array of public keys');
    if (p[0].length > 100) throw invalidParams('Too many inputs provided; max 100');
    const c = config(p, 1);
    return { context: context(c), value: p[0].map((s) => encodeAccount(account(pubkey(s)), c.encoding)) };
  },
  getMinimumBalanceForRentExemption: (p) => {
    const n = p[0] ?? 0;
    if (!Number.isInteger(n) || n < 0) throw invalidParams('Invalid params: expected a data length');
    return svm.minimumBalanceForRentExemption(BigInt(n));
  },
  getFeeForMessage: (p) => {
    const c = config(p, 1);
    let msg;
    try { msg = msgDecoder.decode(b64.enc.encode(p[0])); } catch {
      throw invalidParams('invalid base64 encoding: the message does not decode');
    }
    const fee = blockhashValid(msg.lifetimeToken) ?
      Number(LAMPORTS_PER_SIGNATURE) * msg.header.numSignerAccounts : null;
    return { context: context(c), value: fee };
  },
  requestAirdrop: async (p) => {
    const to = pubkey(p[0]);
    if (!Number.isSafeInteger(p[1]) || p[1] <= 0) throw invalidParams('Invalid params: expected lamports');
    if (BigInt(p[1]) > AIRDROP_MAX) throw new RpcError(-32600, 'Invalid request');
    return airdrop(to, BigInt(p[1]));
  },
  sendTransaction: (p) => {
    const c = config(p, 1);
    return execute(decodeTx(p[0], c.encoding), c.skipPreflight === true);
  },
  simulateTransaction: (p) => {
    const c = config(p, 1);
    const { tx, msg } = decodeTx(p[0], c.encoding);
    if (c.sigVerify && c.replaceRecentBlockhash)
      throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
    if (!c.replaceRecentBlockhash && !blockhashValid(msg.lifetimeToken))
      return { context: context(c), value: { ...simulation({ logs: () => [], computeUnitsConsumed: () => 0n },
        'BlockhashNotFound') } };
    svm.withSigverify(c.sigVerify === true);
    let sim;
    try { sim = svm.simulateTransaction(tx); } finally { svm.withSigverify(true); }
    const failed = sim instanceof internal.FailedTransactionMetadata || typeof sim.err === 'function';
    const value = failed ? simulation(sim.meta(), txError(sim.err())[0]) : simulation(sim.meta(), null);
    if (c.replaceRecentBlockhash)
      value.replacementBlockhash = { blockhash: slotHashes[slot], lastValidBlockHeight: slot + VALID_BLOCKS };
    return { context: context(c), value };
  },
  getSignatureStatuses: (p) => {
    if (!Array.isArray(p[0])) throw invalidParams('Invalid params: expected an array of signatures');
    if (p[0].length > 256) throw invalidParams('Too many inputs provided; max 256');
    config(p, 1);
    return { context: context({ commitment: 'processed' }), value: p[0].map((s) => {
      const t = txs.get(s);
      if (!t) return null;
      const cs = status(t.slot);
      return { slot: t.slot, confirmations: cs === 'finalized' ? null : slot - t.slot, err: t.err,
        status: t.err ? { Err: t.err } : { Ok: null }, confirmationStatus: cs };
    }) };
  },
  getTransaction: (p) => {
    if (typeof p[0] !== 'string') throw invalidParams('Invalid params: expected a signature');
    const c = typeof p[1] === 'string' ? { encoding: p[1] } : config(p, 1);
    if (c.commitment === 'processed')
      throw invalidParams('Method does not support commitment below `confirmed`');
    const t = txs.get(p[0]);
    if (!t || t.slot > commitmentSlot(c.commitment ?? 'finalized')) return null;
    if (t.msg.version !== 'legacy' && (c.maxSupportedTransactionVersion ?? -1) < t.msg.version)
      throw new RpcError(-32015, `Transaction version (${t.msg.version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${t.msg.version}`);
    return { slot: t.slot, blockTime: t.blockTime,
      meta: { computeUnitsConsumed: t.units, err: t.err, fee: t.fee, innerInstructions: [],
        loadedAddresses: { readonly: [], writable: [] }, logMessages: t.logs, postBalances: t.post,
        postTokenBalances: [], preBalances: t.pre, preTokenBalances: [], rewards: [],
        status: t.err ? { Err: t.err } : { Ok: null } },
      transaction: encodeTx(t, c.encoding), version: t.msg.version };
  },
  getTokenAccountsByOwner: (p) => {
    const owner = pubkey(p[0]);
    const f = p[1];
    if (!f || typeof f !== 'object' || (f.mint === undefined) === (f.programId === undefined))
      throw invalidParams('Invalid params: expected a filter: {"mint": ...} or {"programId": ...}');
    const program = f.programId !== undefined ? pubkey(f.programId) : TOKEN;
    if (program !== TOKEN && program !== TOKEN_2022)
      throw invalidParams('Invalid param: unrecognized Token program id');
    const mint = f.mint !== undefined ? pubkey(f.mint) : null;
    const c = config(p, 2);
    const value = [];
    for (const { address: addr, programAddress, ...rest } of svm.getProgramAccounts(program)) {
      const d = rest.data;
      if (d.length < 165 || key(d, 32) !== owner || (mint && key(d, 0) !== mint)) continue;
      value.push({ pubkey: addr, account: encodeAccount({ exists: true, programAddress, ...rest }, c.encoding) });
    }
    return { context: context(c), value };
  },
  getTokenAccountBalance: (p) => ({ context: context(config(p, 1)), value: tokenAccount(pubkey(p[0])) }),
};

async function answer(req) {
  const id = req?.id ?? null;
  if (req === null || typeof req !== 'object' || Array.isArray(req) || req.jsonrpc !== '2.0' ||
      typeof req.method !== 'string')
    return { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id };
  const fn = Object.hasOwn(methods, req.method) ? methods[req.method] : null;
  if (!fn) return { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id };
  if (req.params !== undefined && !Array.isArray(req.params))
    return { jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params: expected an array' }, id };
  try {
    return { jsonrpc: '2.0', result: await fn(req.params ?? []), id };
  } catch (e) {
    if (!(e instanceof RpcError)) {
      console.error(e);
      return { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id };
    }
    const error = { code: e.code, message: e.message };
    if (e.data !== undefined) error.data = e.data;
    return { jsonrpc: '2.0', error, id };
  }
}

// u64 values (rentEpoch) do not fit a double: they go out as bare digits, as the node writes them.
const json = (v) => JSON.stringify(v, (k, x) => typeof x === 'bigint' ? `\u0000${x}\u0000` : x)
  .replace(/"\\u0000(\d+)\\u0000"/g, '$1');

function send(res, code, body, type = 'application/json') {
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const MAX_BODY = 8 << 20;	/* a batch of large transactions fits; a runaway client does not */
const server = createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size <= MAX_BODY) chunks.push(c);
  });
  req.on('end', async () => {
    if (size > MAX_BODY) return send(res, 413, 'Payload Too Large\n', 'text/plain');
    if (req.method === 'GET' && req.url === '/health') return send(res, 200, 'ok', 'text/plain');
    if (req.method !== 'POST') return send(res, 405, 'Method Not Allowed\n', 'text/plain');
    let parsed;
    try { parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch {
      return send(res, 200, json({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
    }
    if (Array.isArray(parsed)) {
      if (parsed.length === 0)
        return send(res, 200, json({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null }));
      const out = [];
      for (const r of parsed) out.push(await answer(r));	/* in order: writes are sequential */
      return send(res, 200, json(out));
    }
    return send(res, 200, json(await answer(parsed)));
  });
});
server.keepAliveTimeout = 60_000;

faucet = await generateKeyPairSigner();
svm.setAccount({ address: faucet.address, data: new Uint8Array(), executable: false,
  lamports: lamports(U64_MAX / 4n), programAddress: address(SYSTEM), space: 0n });
server.listen(port, '127.0.0.1', () => {
  console.log(`solana devnet (LiteSVM ${'1.5.0'}, not a validator) listening on 127.0.0.1:${server.address().port}, ` +
    `slot ${SLOT_MS} ms, finality ${FINALITY} slots`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
