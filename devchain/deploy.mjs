#!/usr/bin/env node
// Deploys the Blockport dev-chain contracts onto a running dev node (anvil from start.sh):
//   ERC-4337 v0.6 EntryPoint + SimpleAccountFactory at their canonical CREATE2 addresses,
//   v0.7 EntryPoint + SimpleAccountFactory and v0.8 EntryPoint + SimpleAccountFactory +
//   Simple7702Account at theirs (the published artifacts and salts),
//   a VerifyingPaymaster per version (plain CREATE, owned by the deployer, deposit + stake),
//   sample ERC-20 (18 and 6 decimals), ERC-721 and ERC-1155 tokens with a few mints,
//   Multicall3 at its canonical address.
//
//   node devchain/deploy.mjs --rpc http://127.0.0.1:8545 --out FILE.json --ini FILE.ini
//
// Idempotent: the canonical contracts are skipped when their code is already there; the
// paymaster and the tokens are fresh on every run, and the output describes this run's ones.
// Only prebuilt artifacts from the pinned npm packages are used: nothing is compiled.
// DEV ONLY: the output holds the paymaster signer's private key (a public dev-mnemonic key).

import { readFileSync, writeFileSync, renameSync, mkdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  AbiCoder, Contract, ContractFactory, Interface, JsonRpcProvider, ZeroHash, concat, getAddress,
  getCreate2Address, getCreateAddress, keccak256, parseEther, parseUnits,
} from 'ethers'
import {
  ACCOUNT_FACTORY_V06, ACCOUNT_FACTORY_V07, ACCOUNT_FACTORY_V08, CREATE2_DEPLOYER, DEPLOYER_INDEX,
  ENTRY_POINT_V06, ENTRY_POINT_V07, ENTRY_POINT_V07_SALT, ENTRY_POINT_V08, ENTRY_POINT_V08_SALT,
  PAYMASTER_SIGNER_INDEX, SAMPLE, SIMPLE_7702_ACCOUNT_V08, account, wallet,
} from './dev.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const t0 = performance.now()

// Runtime code of the deterministic deployment proxy (Arachnid); anvil has it at genesis.
const CREATE2_DEPLOYER_CODE = '0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3'

// Multicall3 (https://www.multicall3.com), at the address it has on most public chains. Its
// creation code is the copy pinned viem ships for deployless multicalls (not exported by name,
// so read from the package's file); eth_call of it answers the runtime code, installed with
// anvil_setCode: no transaction, so no deployer nonce and no block is spent on it.
const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11'
function multicall3Creation() {
  const text = readFileSync(join(here, 'node_modules/viem/_esm/constants/contracts.js'), 'utf8')
  const m = /multicall3Bytecode = '(0x[0-9a-f]+)'/.exec(text)
  if (!m) die('viem no longer ships multicall3Bytecode in constants/contracts.js')
  return m[1]
}

function die(msg) {
  process.stderr.write(`deploy.mjs: ${msg}\n`)
  process.exit(1)
}

function parseArgs(argv) {
  const opts = { rpc: 'http://127.0.0.1:8545', out: null, ini: null }
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]
    const key = k.replace(/^--/, '')
    if (!['rpc', 'out', 'ini'].includes(key) || !k.startsWith('--')) {
      if (k === '-h' || k === '--help') {
        process.stdout.write('usage: node deploy.mjs --rpc URL --out FILE.json [--ini FILE.ini]\n')
        process.exit(0)
      }
      die(`unknown argument ${k} (usage: --rpc URL --out FILE.json [--ini FILE.ini])`)
    }
    if (i + 1 >= argv.length) die(`${k} needs a value`)
    opts[key] = argv[++i]
  }
  return opts
}

function artifact(rel) {
  const p = join(here, 'node_modules', rel)
  try {
    const a = JSON.parse(readFileSync(p, 'utf8'))
    if (!a.abi || !/^0x[0-9a-f]{2,}$/i.test(a.bytecode)) throw new Error('no abi/bytecode')
    return a
  } catch (e) {
    die(`cannot load artifact ${p}: ${e.message} (run make deps, or: cd devchain && npm ci)`)
  }
}

// OpenZeppelin 4.9.6 ships no ERC-20 artifact with configurable decimals (its presets and
// ERC20 return a constant 18; the ERC20Wrapper/ERC4626 artifacts are abstract, no bytecode).
// For the 6-decimals sample token we take ERC20PresetMinterPauser and change the constant in
// its decimals() body from 18 to 6. The patch is checked byte by byte against the pinned
// artifact and fails loudly if the artifact ever differs; the result is verified on chain.
function patchDecimals(a, decimals) {
  const init = Buffer.from(a.bytecode.slice(2), 'hex')
  const runtime = Buffer.from(a.deployedBytecode.slice(2), 'hex')
  const rtOff = init.length - runtime.length
  if (rtOff <= 0 || !init.subarray(rtOff).equals(runtime)) die('ERC20PresetMinterPauser: runtime code is not at the end of the init code; cannot patch decimals')
  // Dispatcher entry: PUSH4 313ce567 (decimals()) EQ PUSH2 <dest> JUMPI
  const sel = Buffer.from('63313ce5671461', 'hex')
  const hits = []
  for (let i = runtime.indexOf(sel); i >= 0; i = runtime.indexOf(sel, i + 1)) hits.push(i)
  if (hits.length !== 1 || runtime[hits[0] + 9] !== 0x57) die('ERC20PresetMinterPauser: decimals() dispatcher entry not found; cannot patch decimals')
  const dest = runtime.readUInt16BE(hits[0] + 7)
  // Body: JUMPDEST PUSH1 40 MLOAD PUSH1 12 DUP2 MSTORE  (returns the constant 18)
  const body = Buffer.from('5b604051601281', 'hex')
  if (!runtime.subarray(dest, dest + body.length).equals(body)) die('ERC20PresetMinterPauser: unexpected decimals() body; cannot patch decimals')
  const out = Buffer.from(init)
  out[rtOff + dest + 5] = decimals
  return '0x' + out.toString('hex')
}

const lc = (a) => getAddress(a).toLowerCase()

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  const EP = artifact('@account-abstraction/contracts/artifacts/EntryPoint.json')
  const FACTORY = artifact('@account-abstraction/contracts/artifacts/SimpleAccountFactory.json')
  const PAYMASTER = artifact('@account-abstraction/contracts/artifacts/VerifyingPaymaster.json')
  const EP07 = artifact('aa07/artifacts/EntryPoint.json')
  const FACTORY07 = artifact('aa07/artifacts/SimpleAccountFactory.json')
  const PAYMASTER07 = artifact('aa07/artifacts/VerifyingPaymaster.json')
  const EP08 = artifact('aa08/artifacts/EntryPoint.json')
  const FACTORY08 = artifact('aa08/artifacts/SimpleAccountFactory.json')
  const S7702 = artifact('aa08/artifacts/Simple7702Account.json')
  const oz = '@openzeppelin/contracts/build/contracts/'
  const ERC20 = artifact(oz + 'ERC20PresetMinterPauser.json')
  const ERC721 = artifact(oz + 'ERC721PresetMinterPauserAutoId.json')
  const ERC1155 = artifact(oz + 'ERC1155PresetMinterPauser.json')

  // Ask for the chain id first, so that a missing node gives one clear error (ethers would
  // retry its network detection and log about it).
  let chainId
  try {
    const res = await fetch(opts.rpc, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(5000),
    })
    chainId = Number((await res.json()).result)
    if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new Error(`bad eth_chainId answer (HTTP ${res.status})`)
  } catch (e) {
    die(`no JSON-RPC node at ${opts.rpc}: ${e.cause?.code ?? e.message} (start one with devchain/start.sh PORT)`)
  }
  // cacheTimeout -1: ethers v6 otherwise serves identical requests (eth_getCode right after a
  // deploy) from a 250 ms cache. batchMaxCount 1: no 10 ms batching stall per request.
  const provider = new JsonRpcProvider(opts.rpc, chainId, {
    staticNetwork: true, cacheTimeout: -1, pollingInterval: 50, batchMaxCount: 1,
  })
  const rpc = (m, p = []) => provider.send(m, p)
  const deployer = wallet(DEPLOYER_INDEX, provider)
  const from = lc(deployer.address)
  const signer = account(PAYMASTER_SIGNER_INDEX)
  const code = async (addr) => rpc('eth_getCode', [addr, 'latest'])
  const hasCode = async (addr) => (await code(addr)) !== '0x'

  // The deterministic deployer: present on anvil; on other dev nodes try to install it.
  if (!(await hasCode(CREATE2_DEPLOYER))) {
    for (const m of ['anvil_setCode', 'hardhat_setCode']) {
      try { await rpc(m, [CREATE2_DEPLOYER, CREATE2_DEPLOYER_CODE]); break } catch { /* next */ }
    }
    if ((await code(CREATE2_DEPLOYER)).toLowerCase() !== CREATE2_DEPLOYER_CODE) die(`no code at the deterministic deployer ${CREATE2_DEPLOYER} and the node refused anvil_setCode/hardhat_setCode`)
  }

  if (!(await hasCode(MULTICALL3))) {
    const runtime = await rpc('eth_call', [{ data: multicall3Creation() }, 'latest'])
    for (const m of ['anvil_setCode', 'hardhat_setCode']) {
      try { await rpc(m, [MULTICALL3, runtime]); break } catch { /* next */ }
    }
    if (!(await hasCode(MULTICALL3))) die(`no code at Multicall3 ${MULTICALL3} and the node refused anvil_setCode/hardhat_setCode`)
  }

  // One nonce counter and one fee quote for the whole run: transactions are sent back to back
  // and their receipts awaited together, so the run takes one block per phase even with
  // --block-time.
  let nonce = await provider.getTransactionCount(from, 'pending')
  const fee = await provider.getFeeData()
  const receipts = []
  const txs = []
  // Sends a phase of transactions: estimate all gas in parallel, send in nonce order, then wait
  // for every receipt and require success.
  async function phase(list) {
    const gas = await Promise.all(list.map(async (t) => {
      if (t.gas) return t.gas
      try {
        return await provider.estimateGas({ from, to: t.to, data: t.data ?? '0x', value: t.value ?? 0n })
      } catch (e) {
        die(`${t.what}: gas estimation failed: ${e.shortMessage ?? e.message}`)
      }
    }))
    const hashes = []
    for (let i = 0; i < list.length; i++) {
      const t = list[i]
      const tx = await deployer.sendTransaction({
        type: 2, chainId, nonce: nonce++, to: t.to ?? null, data: t.data ?? '0x', value: t.value ?? 0n,
        gasLimit: gas[i] + gas[i] / 5n + 10000n,
        maxFeePerGas: fee.maxFeePerGas, maxPriorityFeePerGas: fee.maxPriorityFeePerGas,
      })
      hashes.push(tx.hash)
    }
    const got = await Promise.all(hashes.map(async (h, i) => {
      for (const deadline = Date.now() + 60000; Date.now() < deadline;) {
        const r = await provider.getTransactionReceipt(h)
        if (r) {
          if (r.status !== 1) die(`${list[i].what}: transaction ${h} reverted (block ${r.blockNumber})`)
          return r
        }
        await new Promise((res) => setTimeout(res, 50))
      }
      die(`${list[i].what}: no receipt for ${h} after 60 s (is the node mining?)`)
    }))
    receipts.push(...got)
    txs.push(...list.map((t) => t.what))
    return got
  }

  // ---- phase 1: contracts ----
  const p1 = []
  const abi = AbiCoder.defaultAbiCoder()
  // gas: a fixed limit for what cannot be estimated before an earlier transaction of the same
  // phase lands (a constructor that calls the EntryPoint deployed just before it).
  const create2 = (what, initcode, expected, salt = ZeroHash, gas = 0n) => {
    const addr = getCreate2Address(CREATE2_DEPLOYER, salt, keccak256(initcode))
    if (addr.toLowerCase() !== expected) die(`${what}: artifact gives CREATE2 address ${addr}, not the canonical ${expected}`)
    return { what, to: CREATE2_DEPLOYER, data: concat([salt, initcode]), gas }
  }
  const epExisted = await hasCode(ENTRY_POINT_V06)
  if (!epExisted) p1.push(create2('EntryPoint v0.6', EP.bytecode, ENTRY_POINT_V06))
  const factoryExisted = await hasCode(ACCOUNT_FACTORY_V06)
  if (!factoryExisted) p1.push(create2('SimpleAccountFactory v0.6', concat([FACTORY.bytecode, abi.encode(['address'], [ENTRY_POINT_V06])]), ACCOUNT_FACTORY_V06))
  // Plain CREATE from the deployer: the addresses follow from the nonces.
  const created = {}
  const create = async (key, what, art, args, bytecode = art.bytecode) => {
    const { data } = await new ContractFactory(art.abi, bytecode).getDeployTransaction(...args)
    created[key] = lc(getCreateAddress({ from, nonce: nonce + p1.length }))
    p1.push({ what, data })
  }
  const S = SAMPLE
  await create('paymaster', 'VerifyingPaymaster', PAYMASTER, [ENTRY_POINT_V06, signer.address])
  await create('erc20_18', 'ERC-20 (18 decimals)', ERC20, [S.erc20_18.name, S.erc20_18.symbol])
  await create('erc20_6', 'ERC-20 (6 decimals)', ERC20, [S.erc20_6.name, S.erc20_6.symbol], patchDecimals(ERC20, S.erc20_6.decimals))
  await create('erc721', 'ERC-721', ERC721, [S.erc721.name, S.erc721.symbol, S.erc721.baseURI])
  await create('erc1155', 'ERC-1155', ERC1155, [S.erc1155.uri])
  // v0.7 and v0.8, after v0.6's contracts and the tokens so that those keep the addresses a
  // new chain always gave them. Every immutable (the EntryPoints' SenderCreator, the factories' account
  // implementation, v0.8's senderCreator read from its EntryPoint) is set by the real
  // constructor, so these are byte for byte the contracts of a public chain.
  const canonical = [
    ['EntryPoint v0.7', EP07.bytecode, ENTRY_POINT_V07, ENTRY_POINT_V07_SALT, 0n],
    ['EntryPoint v0.8', EP08.bytecode, ENTRY_POINT_V08, ENTRY_POINT_V08_SALT, 0n],
    ['SimpleAccountFactory v0.7', concat([FACTORY07.bytecode, abi.encode(['address'], [ENTRY_POINT_V07])]), ACCOUNT_FACTORY_V07, ZeroHash, 0n],
    ['SimpleAccountFactory v0.8', concat([FACTORY08.bytecode, abi.encode(['address'], [ENTRY_POINT_V08])]), ACCOUNT_FACTORY_V08, ZeroHash, 4000000n],
    ['Simple7702Account v0.8', S7702.bytecode, SIMPLE_7702_ACCOUNT_V08, ZeroHash, 0n],
  ]
  const existing = {}
  for (const [what, initcode, addr, salt, gas] of canonical) {
    existing[addr] = await hasCode(addr)
    // EntryPoint v0.8 first when both are new: the factory's constructor calls it.
    if (!existing[addr]) p1.push(create2(what, initcode, addr, salt, existing[ENTRY_POINT_V08] ? 0n : gas))
  }

  // BasePaymaster v0.7's constructor checks its EntryPoint's ERC-165 id, which v0.7 may have
  // deployed only in this phase: a fixed gas limit instead of an estimate.
  const fixed = (gas) => { p1[p1.length - 1].gas = existing[ENTRY_POINT_V07] ? 0n : gas }
  await create('paymaster_v07', 'VerifyingPaymaster v0.7', PAYMASTER07, [ENTRY_POINT_V07, signer.address])
  fixed(3000000n)
  // npm's 0.8.0 ships no VerifyingPaymaster, and v0.7's refuses the v0.8 EntryPoint in its
  // constructor (the interface id changed; nothing else it calls did). So a second v0.7 one
  // is created for v0.7, then its runtime code, with the EntryPoint immutable rewritten to
  // v0.8, replaces its own (anvil_setCode; storage, owner included, stays).
  await create('paymaster_v08', 'VerifyingPaymaster v0.8 (v0.7 code)', PAYMASTER07, [ENTRY_POINT_V07, signer.address])
  fixed(3000000n)
  const r1 = await phase(p1)

  // Every contract must have code now.
  for (const [what, addr] of [['EntryPoint', ENTRY_POINT_V06], ['SimpleAccountFactory', ACCOUNT_FACTORY_V06], ...canonical.map((c) => [c[0], c[2]]), ...Object.entries(created)]) {
    if (!(await hasCode(addr))) die(`${what}: no code at ${addr} after deployment`)
  }
  for (const r of r1) {
    if (r.contractAddress && !Object.values(created).includes(r.contractAddress.toLowerCase())) die(`contract landed at unexpected address ${r.contractAddress}`)
  }
  {
    const rt = (await code(created.paymaster_v08)).toLowerCase()
    const from07 = '000000000000000000000000' + ENTRY_POINT_V07.slice(2)
    const to08 = '000000000000000000000000' + ENTRY_POINT_V08.slice(2)
    const n = rt.split(from07).length - 1
    if (n < 1) die('VerifyingPaymaster v0.7: no EntryPoint immutable found in its runtime code')
    await rpc('anvil_setCode', [created.paymaster_v08, rt.split(from07).join(to08)]).catch(() =>
      rpc('hardhat_setCode', [created.paymaster_v08, rt.split(from07).join(to08)]))
    const pm8 = new Contract(created.paymaster_v08, PAYMASTER07.abi, provider)
    if (lc(await pm8.entryPoint()) !== ENTRY_POINT_V08) die('VerifyingPaymaster v0.8: entryPoint() is not v0.8 after the code rewrite')
  }
  const factory = new Contract(ACCOUNT_FACTORY_V06, FACTORY.abi, provider)
  const impl = lc(await factory.accountImplementation())
  if (!(await hasCode(impl))) die(`SimpleAccount implementation ${impl}: no code`)

  // ---- phase 2: paymaster funding and token mints ----
  const ifc = (art) => new Interface(art.abi)
  const pm = ifc(PAYMASTER)
  const e20 = ifc(ERC20)
  const e721 = ifc(ERC721)
  const e1155 = ifc(ERC1155)
  const acct1 = account(1).address
  const p2 = [
    { what: 'paymaster deposit', to: created.paymaster, data: pm.encodeFunctionData('deposit'), value: parseEther(S.paymaster.depositEth) },
    { what: 'paymaster addStake', to: created.paymaster, data: pm.encodeFunctionData('addStake', [S.paymaster.unstakeDelaySec]), value: parseEther(S.paymaster.stakeEth) },
  ]
  const pm7 = ifc(PAYMASTER07)
  for (const key of ['paymaster_v07', 'paymaster_v08']) {
    p2.push({ what: `${key} deposit`, to: created[key], data: pm7.encodeFunctionData('deposit'), value: parseEther(S.paymaster.depositEth) })
    p2.push({ what: `${key} addStake`, to: created[key], data: pm7.encodeFunctionData('addStake', [S.paymaster.unstakeDelaySec]), value: parseEther(S.paymaster.stakeEth) })
  }
  for (const key of ['erc20_18', 'erc20_6']) {
    for (const [i, amount] of Object.entries(S[key].mint)) {
      p2.push({ what: `${key} mint`, to: created[key], data: e20.encodeFunctionData('mint', [account(Number(i)).address, parseUnits(amount.toString(), S[key].decimals)]) })
    }
  }
  for (let n = 0; n < S.erc721.mintTo1; n++) p2.push({ what: 'erc721 mint', to: created.erc721, data: e721.encodeFunctionData('mint', [acct1]) })
  // The first id with mint (TransferSingle), the others in one mintBatch (TransferBatch).
  const ids = Object.entries(S.erc1155.mintTo1)
  p2.push({ what: 'erc1155 mint', to: created.erc1155, data: e1155.encodeFunctionData('mint', [acct1, ids[0][0], ids[0][1], '0x']) })
  p2.push({ what: 'erc1155 mintBatch', to: created.erc1155, data: e1155.encodeFunctionData('mintBatch', [acct1, ids.slice(1).map((x) => x[0]), ids.slice(1).map((x) => x[1]), '0x']) })
  await phase(p2)

  // ---- checks ----
  const ep = new Contract(ENTRY_POINT_V06, EP.abi, provider)
  const info = await ep.getDepositInfo(created.paymaster)
  if (info.deposit !== parseEther(S.paymaster.depositEth) || !info.staked || Number(info.unstakeDelaySec) !== S.paymaster.unstakeDelaySec) die(`paymaster deposit/stake not as expected: ${info}`)
  const pmc = new Contract(created.paymaster, PAYMASTER.abi, provider)
  if (lc(await pmc.verifyingSigner()) !== signer.address || lc(await pmc.owner()) !== from) die('paymaster signer/owner not as expected')
  for (const [key, epAddr, epArt] of [['paymaster_v07', ENTRY_POINT_V07, EP07], ['paymaster_v08', ENTRY_POINT_V08, EP08]]) {
    const d = await new Contract(epAddr, epArt.abi, provider).getDepositInfo(created[key])
    if (d.deposit !== parseEther(S.paymaster.depositEth) || !d.staked || Number(d.unstakeDelaySec) !== S.paymaster.unstakeDelaySec) die(`${key}: deposit/stake not as expected: ${d}`)
    const c = new Contract(created[key], PAYMASTER07.abi, provider)
    if (lc(await c.verifyingSigner()) !== signer.address || lc(await c.owner()) !== from) die(`${key}: signer/owner not as expected`)
  }
  const impl07 = lc(await new Contract(ACCOUNT_FACTORY_V07, FACTORY07.abi, provider).accountImplementation())
  const impl08 = lc(await new Contract(ACCOUNT_FACTORY_V08, FACTORY08.abi, provider).accountImplementation())
  for (const key of ['erc20_18', 'erc20_6']) {
    const d = Number(await new Contract(created[key], ERC20.abi, provider).decimals())
    if (d !== S[key].decimals) die(`${key}: decimals() is ${d}, expected ${S[key].decimals}`)
  }

  const blocks = receipts.map((r) => r.blockNumber)
  const out = {
    chain_id: chainId,
    entry_point: ENTRY_POINT_V06,
    account_factory: ACCOUNT_FACTORY_V06,
    account_implementation: impl,
    paymaster: created.paymaster,
    paymaster_signer: signer.address,
    paymaster_signer_key: signer.privateKey,
    entry_point_v07: ENTRY_POINT_V07,
    account_factory_v07: ACCOUNT_FACTORY_V07,
    account_implementation_v07: impl07,
    paymaster_v07: created.paymaster_v07,
    entry_point_v08: ENTRY_POINT_V08,
    account_factory_v08: ACCOUNT_FACTORY_V08,
    account_implementation_v08: impl08,
    paymaster_v08: created.paymaster_v08,
    simple_7702_account: SIMPLE_7702_ACCOUNT_V08,
    deployer: from,
    tokens: { erc20_18: created.erc20_18, erc20_6: created.erc20_6, erc721: created.erc721, erc1155: created.erc1155 },
    deploy_block: Math.min(...blocks),
  }
  const ini = ['entry_point', 'account_factory', 'account_implementation', 'paymaster', 'paymaster_signer',
    ...['07', '08'].flatMap((v) => ['entry_point', 'account_factory', 'account_implementation', 'paymaster'].map((k) => `${k}_v${v}`))]
    .map((k) => `${k} = ${out[k]}\n`).join('')
  const write = (file, text) => {
    const p = resolve(file)
    mkdirSync(dirname(p), { recursive: true })
    writeFileSync(p + '.tmp', text)
    renameSync(p + '.tmp', p)
  }
  const json = JSON.stringify(out, null, 2) + '\n'
  if (opts.out) write(opts.out, json)
  else process.stdout.write(json)
  if (opts.ini) write(opts.ini, ini)

  const secs = ((performance.now() - t0) / 1000).toFixed(2)
  process.stderr.write(`devchain: chain ${chainId} blocks ${Math.min(...blocks)}-${Math.max(...blocks)}: entry_point ${ENTRY_POINT_V06} (${epExisted ? 'existing' : 'deployed'}), account_factory ${ACCOUNT_FACTORY_V06} (${factoryExisted ? 'existing' : 'deployed'}), paymaster ${created.paymaster}, 4 tokens; ${txs.length} txs in ${secs}s\n`)
  provider.destroy()
}

main().catch((e) => die(e.stack ?? String(e)))
