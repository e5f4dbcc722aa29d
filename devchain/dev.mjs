// Dev-chain constants and keys for deploy.mjs and the JavaScript tests.
// DEV ONLY: every key here is public knowledge (the standard "test test ... junk" mnemonic that
// anvil and hardhat fund by default). Never use them on a real network.
//
//   import { MNEMONIC, account, wallet, DEPLOYER_INDEX, PAYMASTER_SIGNER_INDEX } from './dev.mjs'
//   account(1)           -> { index: 1, path: "m/44'/60'/0'/0/1", address: '0x70997970...', privateKey: '0x59c6...' }
//   wallet(1, provider)  -> ethers HDNodeWallet connected to provider
//   viem: privateKeyToAccount(account(1).privateKey)

import { HDNodeWallet, Mnemonic } from 'ethers'

export const MNEMONIC = 'test test test test test test test test test test test junk'
export const CHAIN_ID = 31337

// anvil's account 0 deploys everything and owns the paymaster and the token roles.
export const DEPLOYER_INDEX = 0
// Account 9 is the VerifyingPaymaster's verifyingSigner: whoever holds its key can sponsor ops.
export const PAYMASTER_SIGNER_INDEX = 9

// Canonical ERC-4337 v0.6 addresses (CREATE2 through the deterministic deployer, salt 0).
export const CREATE2_DEPLOYER = '0x4e59b44847b379578588920ca78fbf26c0b4956c'
export const ENTRY_POINT_V06 = '0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789'
export const ACCOUNT_FACTORY_V06 = '0x9406cc6185a346906296840746125a0e44976454'
// Canonical v0.7 and v0.8 addresses: the same deployer, the published artifacts and salts
// (salt 0 but for the two EntryPoints), so a live chain has them at the same place.
export const ENTRY_POINT_V07 = '0x0000000071727de22e5e9d8baf0edac6f37da032'
export const ACCOUNT_FACTORY_V07 = '0x91e60e0613810449d098b0b5ec8b51a0fe8c8985'
export const ENTRY_POINT_V08 = '0x4337084d9e255ff0702461cf8895ce9e3b5ff108'
export const ACCOUNT_FACTORY_V08 = '0x13e9ed32155810fdbd067d4522c492d6f68e5944'
export const SIMPLE_7702_ACCOUNT_V08 = '0xe6cae83bde06e4c305530e199d7217f42808555b'
export const ENTRY_POINT_V07_SALT = '0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3'
export const ENTRY_POINT_V08_SALT = '0x0a59dbff790c23c976a548690c27297883cc66b4c67024f9117b0238995e35e9'

// What deploy.mjs mints on every run (fresh token contracts each run, so these hold exactly).
// Amounts are in whole tokens (multiply by 10^decimals); ERC-721 ids are assigned from 0.
export const SAMPLE = Object.freeze({
  erc20_18: { name: 'Blockport Token', symbol: 'BPT', decimals: 18, mint: { 0: 1000000n, 1: 10000n } },
  erc20_6: { name: 'Blockport Dollar', symbol: 'BPUSD', decimals: 6, mint: { 0: 1000000n, 1: 10000n } },
  erc721: { name: 'Blockport Punks', symbol: 'BPP', baseURI: 'http://127.0.0.1/nft/', mintTo1: 2 }, // ids 0 and 1 to account 1
  // A data: URI, so the demo's NFT metadata shows without a server (docs/nfts.md).
  erc1155: {
    uri: 'data:application/json,' + encodeURIComponent(JSON.stringify({
      name: 'Blockport Item', description: 'A sample ERC-1155 id of the devchain',
      attributes: [{ trait_type: 'Origin', value: 'devchain' }] })),
    mintTo1: { 1: 100n, 2: 5n, 3: 1n }, // id -> amount to account 1
  },
  paymaster: { depositEth: '100', stakeEth: '1', unstakeDelaySec: 86400 },
})

export function path(i) {
  if (!Number.isInteger(i) || i < 0) throw new Error(`bad account index ${i}`)
  return `m/44'/60'/0'/0/${i}`
}

let root = null
function node(i) {
  // Compute the BIP-39 seed once (PBKDF2), then derive each index from it.
  root ??= HDNodeWallet.fromSeed(Mnemonic.fromPhrase(MNEMONIC).computeSeed())
  return root.derivePath(path(i))
}

// Account i of the dev mnemonic: address lower-case, privateKey 0x-prefixed 32-byte hex.
export function account(i) {
  const n = node(i)
  return { index: i, path: path(i), address: n.address.toLowerCase(), privateKey: n.privateKey }
}

// ethers v6 wallet for account i, connected to provider when one is given.
export function wallet(i, provider = null) {
  const n = node(i)
  return provider ? n.connect(provider) : n
}
