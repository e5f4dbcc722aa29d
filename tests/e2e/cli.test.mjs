// The admin CLI as an operator types it: what each command prints, and how it answers a typo.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { admin, env } from './helpers.mjs';

// Runs the CLI; returns { status, stdout, stderr } whatever the exit status.
function cli(args, { config = env.config } = {}) {
  const e = { ...process.env };
  delete e.BLOCKPORT_CONFIG;
  if (config) e.BLOCKPORT_CONFIG = config;
  const r = spawnSync(`${env.build}/blockport`, args, { env: e, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const email = () => `cli-${randomBytes(6).toString('hex')}@example.test`;

test('account create prints the id, the e-mail and the plan', () => {
  const e = email();
  const out = admin('account', 'create', '--email', e, '--plan', 'growth');
  const m = /^account (\d+) created: (\S+), plan (\S+)$/.exec(out);
  assert.ok(m, `account create printed: ${out}`);
  assert.equal(m[2], e);
  assert.equal(m[3], 'growth');
  // The id printed is the account's: key create takes it.
  const key = admin('key', 'create', m[1], '--test');
  assert.match(key, /^blockport_test_[0-9a-f]{40}$/);
  const row = admin('account', 'list').split('\n').find((l) => l.includes(e));
  assert.match(row, new RegExp(`^${m[1]} +${e.replace(/\./g, '\\.')} +growth `));
});

test('account plan says what changed, and when nothing did', () => {
  const e = email();
  const id = /^account (\d+)/.exec(admin('account', 'create', '--email', e))[1];
  assert.equal(admin('account', 'plan', e, 'enterprise'), `account ${id} (${e}): plan free -> enterprise`);
  assert.equal(admin('account', 'plan', id, 'enterprise'), `account ${id} (${e}) is already on plan enterprise`);
  const row = admin('account', 'list').split('\n').find((l) => l.includes(e));
  assert.match(row, / enterprise /);
  const bad = cli(['account', 'plan', e, 'nosuchplan']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /no such plan in the config: nosuchplan/);
});

test('an unknown command is named, then the usage, exit 2, with or without a config', () => {
  for (const config of [env.config, null]) {
    const r = cli(['acount', 'list'], { config });
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^blockport: unknown command 'acount'\nusage: blockport /);
  }
  const sub = cli(['key', 'lsit']);
  assert.equal(sub.status, 2);
  assert.match(sub.stderr, /^blockport: unknown command 'key lsit'\nusage: /);
  const missing = cli(['account', 'plan', 'x']);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /^blockport: account plan: missing arguments\nusage: /);
  // Asked for, the usage is not an error.
  const help = cli(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: blockport /);
});
