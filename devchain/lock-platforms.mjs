#!/usr/bin/env node
// Adds the other platforms' anvil and litesvm packages to package-lock.json.
//
// @foundry-rs/anvil lists one optional dependency per platform (anvil-linux-amd64,
// anvil-darwin-arm64, ...). The npm registry reachable from this workplace serves only
// @foundry-rs/anvil-linux-amd64, so `npm install` writes a lock file without the others, and
// `npm ci` then refuses it ("Missing: @foundry-rs/anvil-darwin-amd64@ from lock file").
// This script adds an entry (version, os, cpu, optional) for each missing one; npm ci skips
// them on Linux x64 because of os/cpu. Run it after any `npm install` that rewrites the lock
// file from scratch or changes the anvil or litesvm version:  node devchain/lock-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const file = join(dirname(fileURLToPath(import.meta.url)), 'package-lock.json')
const lock = JSON.parse(readFileSync(file, 'utf8'))
const wrapper = lock.packages['node_modules/@foundry-rs/anvil']
if (!wrapper) throw new Error('no @foundry-rs/anvil in package-lock.json')
const OS = { linux: 'linux', darwin: 'darwin', win32: 'win32' }
const CPU = { amd64: 'x64', arm64: 'arm64' }
const known = Object.entries(lock.packages).find(([k]) => /^node_modules\/@foundry-rs\/anvil-[a-z0-9]+-[a-z0-9]+$/.test(k))?.[1] ?? {}
let added = 0
for (const [name, version] of Object.entries(wrapper.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`
  const m = /^@foundry-rs\/anvil-([a-z0-9]+)-([a-z0-9]+)$/.exec(name)
  if (!m || !OS[m[1]] || !CPU[m[2]]) throw new Error(`unexpected optional dependency ${name}`)
  if (lock.packages[key]?.version === version) continue
  lock.packages[key] = {
    version, cpu: [CPU[m[2]]], ...(known.license ? { license: known.license } : {}), optional: true, os: [OS[m[1]]],
    bin: { anvil: m[1] === 'win32' ? 'bin/anvil.exe' : 'bin/anvil' },
    ...(known.engines ? { engines: known.engines } : {}),
  }
  added++
}
// litesvm (the Solana devnet, solana.mjs) likewise: litesvm-OS-CPU[-LIBC] (linux-x64-gnu is the
// one served here). Entries carry libc for Linux, as npm writes for the installed one.
const svm = lock.packages['node_modules/litesvm']
const svmKnown = lock.packages['node_modules/litesvm-linux-x64-gnu'] ?? {}
for (const [name, version] of Object.entries(svm?.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`
  const m = /^litesvm-(linux|darwin|win32)-(x64|arm64)(?:-(gnu|musl|msvc))?$/.exec(name)
  if (!m) throw new Error(`unexpected optional dependency ${name}`)
  if (lock.packages[key]?.version === version) continue
  const libc = { gnu: 'glibc', musl: 'musl' }[m[3]]
  lock.packages[key] = {
    version, cpu: [m[2]], ...(libc ? { libc: [libc] } : {}),
    ...(svmKnown.license ? { license: svmKnown.license } : {}), optional: true, os: [m[1]],
    ...(svmKnown.engines ? { engines: svmKnown.engines } : {}),
  }
  added++
}
// Keep npm's key order: the root package first, then sorted.
const keys = Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en')))
lock.packages = Object.fromEntries(keys.map((k) => [k, lock.packages[k]]))
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n')
process.stderr.write(`lock-platforms: ${added} entr${added === 1 ? 'y' : 'ies'} added\n`)
