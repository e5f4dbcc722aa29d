// Requests the web server refuses before any Blockport program runs, sent as raw bytes (node:net:
// no client library would send most of them). Each must come back in the uniform JSON error body
// (SPEC.md section 7) with Content-Type application/json, on lighttpd and on Apache alike: the
// servers' error pages are lighttpd/errors/ and the ErrorDocument block of apache/blockport.conf
// (scripts/error-pages.sh). Where one server refuses a request that the other hands to the program
// (Apache takes any method and decodes %fe), the program answers it: a JSON body all the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

import { env, newKey, nextSecond, onCluster } from './helpers.mjs';

const key = newKey({ plan: 'enterprise' });
const long = 'a'.repeat(9000);

// Sends bytes and reads the whole answer (the connection is closed after one request).
function send(bytes) {
  const u = new URL(env.base);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), u.hostname);
    const chunks = [];
    s.on('data', (d) => chunks.push(d));
    s.on('error', reject);
    s.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const cut = text.indexOf('\r\n\r\n');
      const head = text.slice(0, cut).split('\r\n');
      const headers = new Map();
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
      }
      resolve({ status: Number(head[0].split(' ')[1]), headers, body: text.slice(cut + 4) });
    });
    s.end(Buffer.from(bytes, 'latin1'));
  });
}

// A request with the key and Connection: close; head is the request line, extra header lines.
const req = (head, extra = '', body = '') =>
  `${head}\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nConnection: close\r\n${extra}\r\n${body}`;

// [name, bytes, { lighttpd: status, apache: status }, code on each]
const rows = [
  ['query past 8 KB', req(`GET /v1/x?q=${long} HTTP/1.1`), { lighttpd: 431, apache: 414 }],
  ['path past 8 KB', req(`GET /v1/${long} HTTP/1.1`), { lighttpd: 431, apache: 414 }],
  ['header past 8 KB', req('GET /v1/x HTTP/1.1', `X-Big: ${long}\r\n`), { lighttpd: 431, apache: 400 }],
  ['Content-Length: -1', req('POST /v1/x HTTP/1.1', 'Content-Length: -1\r\n'), { lighttpd: 400, apache: 400 }],
  ['Content-Length: abc', req('POST /v1/x HTTP/1.1', 'Content-Length: abc\r\n'), { lighttpd: 400, apache: 400 }],
  ['two Content-Length', req('POST /v1/x HTTP/1.1', 'Content-Length: 1\r\nContent-Length: 2\r\n', 'ab'),
    { lighttpd: 400, apache: 400 }],
  // Apache drops the Content-Length of a chunked body (RFC 9112 6.3) and the program answers.
  ['chunked and Content-Length', req('POST /v1/x HTTP/1.1',
    'Transfer-Encoding: chunked\r\nContent-Length: 3\r\n', '0\r\n\r\n'), { lighttpd: 400, apache: 404 }],
  ['NUL in a header value', req('GET /v1/x HTTP/1.1', 'X-A: a\0b\r\n'), { lighttpd: 400, apache: 400 }],
  ['raw \\xff in the path', req('GET /v1/\xff HTTP/1.1'), { lighttpd: 400, apache: 404 }],
  ['%fe in the path', req('GET /v1/%fe HTTP/1.1'), { lighttpd: 400, apache: 404 }],
  ['%ff%fe in the path', req('GET /v1/a%ff%fe HTTP/1.1'), { lighttpd: 400, apache: 404 }],
  ['unknown method', req('FOO /v1/x HTTP/1.1'), { lighttpd: 501, apache: 404 }],
  ['unknown transfer coding', req('POST /v1/x HTTP/1.1', 'Transfer-Encoding: gzip\r\n'),
    { lighttpd: 501, apache: 400 }],
  ['HTTP/1.1 without Host', `GET /v1/x HTTP/1.1\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`,
    { lighttpd: 400, apache: 400 }],
];
const codes = { 400: 'invalid_request', 404: 'not_found', 414: 'invalid_request', 431: 'invalid_request',
  501: 'not_implemented' };

// On the cluster HAProxy's HTTP/1 parser refuses these first, with its built-in bodies: its
// errorfile directives cover the answers of a stream (no head, a timeout), not those of the
// parser (mux-h1's h1_send_error; docs/scale.md).
test(`requests ${env.server} refuses itself get the uniform JSON error body`, {
  skip: onCluster('HAProxy refuses malformed requests before any head sees them (docs/scale.md)') }, async () => {
  for (const [name, bytes, want] of rows) {
    const status = want[env.server];
    assert.ok(status, `no expected status for ${env.server}`);
    const res = await send(bytes);
    assert.equal(res.status, status, `${name}: ${res.body.slice(0, 120)}`);
    assert.equal(res.headers.get('content-type'), 'application/json', name);
    let json;
    assert.doesNotThrow(() => { json = JSON.parse(res.body); }, `${name}: ${res.body.slice(0, 120)}`);
    assert.deepEqual(Object.keys(json), ['error'], name);
    assert.deepEqual(Object.keys(json.error).sort(), ['code', 'message', 'status'], name);
    assert.equal(json.error.status, status, name);
    assert.equal(json.error.code, codes[status], name);
    assert.ok(json.error.message.length > 0, name);
  }
});

test('a target under the 8 KB header block is the service\'s own 414', async () => {
  await nextSecond();
  const res = await send(req(`GET /v1/x?q=${'a'.repeat(5000)} HTTP/1.1`));
  assert.equal(res.status, 414);
  assert.equal(JSON.parse(res.body).error.code, 'invalid_request');
  assert.match(res.headers.get('x-ratelimit-limit') ?? '', /^\d+$/);	// the program answered
});
