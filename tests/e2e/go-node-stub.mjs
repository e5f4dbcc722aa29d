// THIS IS A STUB, NOT A NODE. It stands in for an Ethereum node written in Go (geth, erigon,
// op-geth, bor), none of which can run here, in the one way that matters to
// tests/e2e/rpc-smuggling.test.mjs: it reads each request the way Go's encoding/json does.
// Member names match case-insensitively (ASCII letters, and U+017F and U+212A, which Go folds
// to s and k), an exact name and its folded spellings all fill the same field, and of several
// the last one in the text wins. Whatever method it reads that way is recorded, so a test can
// prove that a request the proxy judged as one method never reached the node as another.
//
// It answers every call with a fixed result and echoes the id it read:
//   POST /         JSON-RPC (single or batch); eth_chainId 0x7a69, eth_blockNumber 0x10, any
//                  other method the string "stub:METHOD" (so a smuggled write is visible)
//   GET  /calls    JSON: { methods: [every method read, in order], bodies: [every raw body] }
//   GET  /count    how many POSTs / has had
//
//   node tests/e2e/go-node-stub.mjs PORT
import { createServer } from 'node:http';

const port = Number(process.argv[2] || process.env.PORT || 0);
const methods = [];
const bodies = [];

// A JSON parser that keeps every member of an object, duplicates included, in text order:
// objects come back as { entries: [[name, value], ...] }. Throws on anything that is not JSON.
function parseJson(text) {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
  const fail = () => { throw new SyntaxError(`bad JSON at ${i}`); };
  function string() {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail();
    i++;
    return JSON.parse(text.slice(start, i));
  }
  function value() {
    ws();
    const c = text[i];
    if (c === '{') {
      const entries = [];
      i++;
      ws();
      if (text[i] === '}') { i++; return { entries }; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        const name = string();
        ws();
        if (text[i++] !== ':') fail();
        entries.push([name, value()]);
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] === '}') return { entries };
        fail();
      }
    }
    if (c === '[') {
      const arr = [];
      i++;
      ws();
      if (text[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] === ']') return arr;
        fail();
      }
    }
    if (c === '"') return string();
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i));
    if (!m) fail();
    i += m[0].length;
    return JSON.parse(m[0]);
  }
  const v = value();
  ws();
  if (i !== text.length) fail();
  return v;
}

// Go's encoding/json folding of a member name: ASCII letters to upper case, U+017F LATIN SMALL
// LETTER LONG S to S and U+212A KELVIN SIGN to K (the smallest rune of their fold orbits).
const goFold = (name) => name.replace(/[a-z]/g, (c) => c.toUpperCase())
  .replace(/\u017f/g, 'S').replace(/\u212a/g, 'K');

// Decodes a request object into the fields of a Go struct, the last matching member winning.
function goDecode(obj) {
  const fields = {};
  for (const f of ['jsonrpc', 'method', 'params', 'id']) {
    for (const [name, v] of obj.entries) if (goFold(name) === goFold(f)) fields[f] = v;
  }
  return fields;
}

// Back to plain JSON: entries to objects, the last duplicate winning (only params hold them).
const plain = (v) => (Array.isArray(v) ? v.map(plain) : v !== null && typeof v === 'object'
  ? Object.fromEntries(v.entries.map(([k, x]) => [k, plain(x)])) : v);

function answer(obj) {
  if (obj === null || typeof obj !== 'object' || !obj.entries) {
    return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } };
  }
  const req = goDecode(obj);
  const id = plain(req.id ?? null);
  if (typeof req.method !== 'string') {
    return { jsonrpc: '2.0', id, error: { code: -32600, message: 'invalid request' } };
  }
  methods.push(req.method);
  const result = req.method === 'eth_chainId' ? '0x7a69'
    : req.method === 'eth_blockNumber' ? '0x10' : `stub:${req.method}`;
  return { jsonrpc: '2.0', id, result };
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const send = (status, obj) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(obj));
    };
    if (req.method === 'GET' && req.url === '/calls') return send(200, { methods, bodies });
    if (req.method === 'GET' && req.url === '/count') return send(200, bodies.length);
    if (req.method !== 'POST' || req.url !== '/') return send(404, { error: 'not found' });
    const text = Buffer.concat(chunks).toString('utf8');
    bodies.push(text);
    let parsed;
    try {
      parsed = parseJson(text);
    } catch {
      return send(200, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
    }
    return send(200, Array.isArray(parsed) ? parsed.map(answer) : answer(parsed));
  });
});
server.listen(port, '127.0.0.1');
