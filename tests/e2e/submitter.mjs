// This stack's bundle submitter (cron/bundle) as processes: found, signalled, replaced
// (tests/e2e/bundler.test.mjs, bundler-v07.test.mjs).
import assert from 'node:assert/strict';
import { openSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { env, waitFor } from './helpers.mjs';

// The pids of this stack's cron/bundle (by executable and config, as scripts/stack.sh finds them).
// This stack's cron/bundle processes; every head's with all (on a cluster each head runs one,
// under a lease: the one that holds it may be on any head).
export function submitters(all = false) {
  const configs = [`BLOCKPORT_CONFIG=${env.config}`];
  if (all) {
    for (const d of (process.env.HEAD_DIRS ?? '').split(/\s+/).filter(Boolean))
      configs.push(`BLOCKPORT_CONFIG=${d}/blockport.ini`);
  }
  const pids = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readlinkSync(`/proc/${p}/exe`) !== `${env.build}/cron/bundle`) continue;
      const e = readFileSync(`/proc/${p}/environ`, 'utf8').split('\0');
      if (configs.some((c) => e.includes(c))) pids.push(Number(p));
    } catch { /* gone meanwhile */ }
  }
  return pids;
}
export function signalSubmitters(sig, all = false) {
  const pids = submitters(all);
  assert.ok(pids.length >= 1, 'the stack runs cron/bundle');
  for (const p of pids) process.kill(p, sig);
  return pids;
}
// Signals this head's submitters with sig and waits until they are gone: once their files are
// closed (their flocks released), which comes after /proc/PID/exe goes.
export async function stopSubmitters(sig) {
  const killed = signalSubmitters(sig);
  const closed = (p) => { try { return readdirSync(`/proc/${p}/fd`).length === 0; } catch { return true; } };
  await waitFor(() => submitters().length === 0 && killed.every(closed), 'the submitter gone');
}
const leases = () => {
  try {
    return (readFileSync(`${env.dir}/bundle-restarted.log`, 'utf8').match(/took the lease/g) ?? []).length;
  } catch { return 0; }
};
// Starts a new submitter (startSubmitter) and waits until it holds the job's lease: until then
// it stands by (the stopped one's lease ends with its clean exit, or its TTL of 6 s when that
// exit could not write), so what a test then measures is the working submitter's.
export async function startSubmitterLeased(interval = 200) {
  const before = leases();
  const pid = startSubmitter(interval);
  await waitFor(() => leases() > before, 'the restarted submitter holds the lease');
  return pid;
}
// Starts a new submitter in loop mode, as scripts/stack.sh does (stack.sh stop finds it).
export function startSubmitter(interval = 200) {
  const log = openSync(`${env.dir}/bundle-restarted.log`, 'a');
  const child = spawn(`${env.build}/cron/bundle`, ['--loop', '--interval', String(interval)], {
    env: { ...process.env, BLOCKPORT_CONFIG: env.config }, detached: true, stdio: ['ignore', log, log] });
  child.unref();
  return child.pid;
}
export async function paused(fn) {
  const pids = signalSubmitters('SIGSTOP', true);
  try {
    return await fn();
  } finally {
    for (const p of pids) process.kill(p, 'SIGCONT');
  }
}
