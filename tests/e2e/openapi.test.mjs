// docs/openapi.yaml: a valid OpenAPI 3.1 document, in step with the programs' route tables,
// served by the web server without a key; and the check of every answer (helpers.mjs) really
// fails a test whose answer differs from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Validator } from '@seriousme/openapi-schema-validator';
import { env, api, openapi } from './helpers.mjs';
import { loadSpec, resolvePointer } from './openapi.mjs';

const specFile = fileURLToPath(new URL('../../docs/openapi.yaml', import.meta.url));
const specText = readFileSync(specFile, 'utf8');
const spec = loadSpec(specText);

test('docs/openapi.yaml is a valid OpenAPI 3.1 document', async () => {
  const v = new Validator();
  const res = await v.validate(structuredClone(spec));
  assert.equal(res.valid, true, JSON.stringify(res.errors, null, 1));
  assert.equal(v.version, '3.1');
  assert.match(spec.openapi, /^3\.1\.\d+$/);
});

test('every $ref of the document resolves, and every path parameter is declared', () => {
  const refs = [];
  (function walk(v) {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) (k === '$ref' ? refs.push(x) : walk(x));
  })(spec);
  assert.ok(refs.length > 50, `only ${refs.length} $refs`);
  for (const ref of refs)
    assert.notEqual(resolvePointer(spec, ref), undefined, `${ref} does not resolve`);
  for (const [path, item] of Object.entries(spec.paths)) {
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    for (const [method, op] of Object.entries(item)) {
      const declared = [...(item.parameters ?? []), ...(op.parameters ?? [])]
        .map((p) => openapi.deref(p)).filter((p) => p.in === 'path').map((p) => p.name).sort();
      assert.deepEqual(declared, names, `${method} ${path}`);
    }
  }
});

test('every route of the programs is documented, and every documented operation is a route',
  () => {
    const dir = new URL('../../fcgi/', import.meta.url);
    const routes = new Set();
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.c'))) {
      const src = readFileSync(new URL(f, dir), 'utf8');
      for (const m of src.matchAll(/\{\s*"([A-Z]+)",\s*"(\/[^"]*)"/g))
        routes.add(`${m[1]} ${m[2].replace(/:[a-z_]+/g, '{}')}`);
    }
    assert.ok(routes.size >= 4, [...routes].join(', '));
    const documented = new Set();
    for (const [path, item] of Object.entries(spec.paths)) {
      for (const method of Object.keys(item)) {
        // Served by the web server itself, not by a program.
        if (path !== '/v1/openapi.yaml')
          documented.add(`${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`);
      }
    }
    assert.deepEqual([...documented].sort(), [...routes].sort());
  });

test('GET /v1/openapi.yaml serves the document as application/yaml, without a key', async () => {
  const res = await api('/v1/openapi.yaml', { key: null });
  assert.equal(res.status, 200, res.text.slice(0, 200));
  assert.equal(res.headers.get('content-type'), 'application/yaml');
  assert.equal(res.text, specText);
  assert.deepEqual(YAML.parse(res.text), spec);
  // With a key it is the same file; the path next to it is still the fallback's 404.
  assert.equal((await api('/v1/openapi.yaml')).text, specText);
  assert.equal((await api('/v1/openapi.yamlx', { key: null })).status, 401);
  assert.equal((await api('/v1/openapi.yamlx')).status, 404);
});

// One answer as the check sees it.
const answer = (method, path, status, headers, body) => ({
  method, url: env.base + path, status, headers: new Headers(headers), body,
});
const rate = { 'x-request-id': '1-1', 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '9',
  'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 1) };
const json = { 'content-type': 'application/json' };
const err = (code, status) => JSON.stringify({ error: { code, message: 'm', status } });

test('the check tells answers that differ from the document', async () => {
  const real = await api('/v1/nope');
  assert.equal(real.status, 404);
  const h = Object.fromEntries(real.headers);
  assert.deepEqual(openapi.check(answer('GET', '/v1/nope', 404, h, real.text)), []);
  const wrong = [
    // Each: an answer, and a word its problem must carry.
    [answer('GET', '/v1/nope', 404, h, real.text.replace('"not_found"', '"gone"')), 'schema'],
    [answer('GET', '/v1/nope', 404, h, JSON.stringify({ ...real.json, extra: 1 })), 'schema'],
    [answer('GET', '/v1/nope', 404, h, err('not_found', 400)), 'schema'],
    [answer('GET', '/v1/nope', 404, { ...h, 'content-type': 'text/html' }, '<p>'), 'Content-Type'],
    [answer('GET', '/v1/nope', 404, { ...h, 'x-request-id': '' }, real.text), 'X-Request-Id'],
    [answer('GET', '/v1/nope', 200, h, '{}'), 'not documented'],
    [answer('GET', '/v1/nope', 404, { ...json, 'x-request-id': 'a' }, real.text), 'X-RateLimit-Limit'],
    [answer('GET', '/v1/wallets', 429, { ...json, ...rate }, err('rate_limited', 429)), 'Retry-After'],
    [answer('GET', '/v1/wallets', 404, { ...json, ...rate }, err('not_found', 404)), 'not documented'],
    [answer('GET', '/v1/wallets?page=2', 200, { ...json, ...rate },
      '{"wallets":[],"page":2,"limit":101,"total":0}'), 'schema'],
    [answer('POST', '/v1/rpc/ethereum/devnet', 200, { ...json, ...rate },
      '{"jsonrpc":"2.0","id":1,"result":"0x1"}'), 'X-Compute-Units'],
    [answer('POST', '/v1/rpc/ethereum/devnet', 200, { ...json, ...rate, 'x-compute-units': '1' },
      '{"jsonrpc":"2.0","id":1}'), 'schema'],
    [answer('POST', '/v1/rpc/ethereum/devnet', 200, { ...json, ...rate, 'x-compute-units': '1' },
      '[{"jsonrpc":"1.0","id":1,"result":1}]'), 'schema'],
    [answer('POST', '/v1/rpc/ethereum/devnet', 200, { ...json, ...rate, 'x-compute-units': '1' },
      '{"jsonrpc":"2.0","id":1,"result":'), 'not JSON'],
  ];
  for (const [a, word] of wrong) {
    const problems = openapi.check(a);
    assert.ok(problems.some((p) => p.includes(word)),
      `${a.method} ${a.url} ${a.status} ${a.body}: ${JSON.stringify(problems)}`);
  }
  // And the right ones pass.
  assert.deepEqual(openapi.check(answer('POST', '/v1/rpc/ethereum/devnet', 200,
    { ...json, ...rate, 'x-compute-units': '0' },
    '[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}},{"jsonrpc":"2.0","id":"a","result":{"b":[1]}}]')), []);
  assert.deepEqual(openapi.check(answer('GET', '/v1/wallets/create', 400, { ...json, ...rate },
    err('invalid_request', 400))), []);
  assert.deepEqual(openapi.check(answer('PUT', '/v1/wallets', 405, { ...json, ...rate },
    err('method_not_allowed', 405))), []);
});

// Runs one test file in a child test runner; resolves { code, out }.
function runChild(file, extraEnv) {
  const childEnv = { ...process.env, ...extraEnv };
  delete childEnv.NODE_TEST_CONTEXT;	// else the child thinks it runs inside this runner
  return new Promise((resolve) => {
    execFile(process.execPath, ['--test', '--test-reporter=tap', file],
      { env: childEnv, encoding: 'utf8', timeout: 60000 },
      (e, stdout, stderr) => resolve({ code: e ? e.code : 0, out: stdout + stderr }));
  });
}

test('an answer that differs from the document fails the test that received it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bp-openapi-'));
  try {
    const helpers = new URL('./helpers.mjs', import.meta.url).href;
    const child = join(dir, 'child.test.mjs');
    writeFileSync(child, `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from ${JSON.stringify(helpers)};
test('a 404', async () => { assert.equal((await api('/v1/nope')).status, 404); });
test('after it', () => {});
`);
    // The same document, except that a 404's code would have to be "gone".
    const broken = join(dir, 'openapi.yaml');
    const bad = structuredClone(spec);
    bad.components.schemas.Error404.allOf[1].properties.error.properties.code.const = 'gone';
    writeFileSync(broken, YAML.stringify(bad));

    const good = await runChild(child, {});
    assert.equal(good.code, 0, good.out);
    assert.match(good.out, /^# pass 2$/m);
    const failed = await runChild(child, { OPENAPI_FILE: broken });
    assert.notEqual(failed.code, 0, failed.out);
    assert.match(failed.out, /^not ok 1 - a 404$/m);
    assert.match(failed.out, /^ok 2 - after it$/m);
    assert.match(failed.out, /differ from docs\/openapi\.yaml/);
    assert.match(failed.out, /GET \/v1\/nope -> 404: the body does not match the schema/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
