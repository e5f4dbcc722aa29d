// Checks answers of the service against docs/openapi.yaml: the request's path is matched to a
// path template, the status must be documented for that operation (or, when no operation of
// the document serves the request, in the document's x-any-path-responses), the Content-Type
// must be one the response documents, required headers must be there and valid, and a JSON
// body must validate against the response's schema (JSON Schema 2020-12, as OpenAPI 3.1 says).
// tests/e2e/helpers.mjs runs this on every answer the tests fetch from the service.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import YAML from 'yaml';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

// OPENAPI_FILE names another document: tests/e2e/openapi.test.mjs gives a deliberately wrong
// one to a child test run, to see the check fail it.
export const specUrl = process.env.OPENAPI_FILE ? pathToFileURL(process.env.OPENAPI_FILE) :
  new URL('../../docs/openapi.yaml', import.meta.url);
const DOC_ID = 'blockport-openapi.yaml';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export function loadSpec(text = readFileSync(specUrl, 'utf8')) {
  return YAML.parse(text);
}

// The value a local JSON pointer ("#/a/b~1c") names in doc, or undefined.
export function resolvePointer(doc, ref) {
  if (!ref.startsWith('#')) return undefined;
  let v = doc;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = v[key];
  }
  return v;
}

const escapePointer = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiChecker {
  constructor(doc = loadSpec()) {
    this.doc = doc;
    // strict off: the document holds OpenAPI keywords around its schemas, and schemas carry
    // OpenAPI's own annotations; formats (date-time) are checked.
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema(doc, DOC_ID);
    this.validators = new Map();
    // Concrete paths before templated ones (OpenAPI's matching rule), then by length.
    this.paths = Object.keys(doc.paths ?? {}).map((template) => {
      const names = [];
      const re = template.split('/').map((seg) => seg.replace(/\{([^}]+)\}|[^{}]+/g, (m, name) => {
        if (name) { names.push(name); return '([^/]+)'; }
        return m.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      })).join('/');
      return { template, re: new RegExp(`^${re}$`), params: names.length };
    }).sort((a, b) => a.params - b.params || b.template.length - a.template.length);
  }

  deref(obj) {
    for (let i = 0; obj && typeof obj === 'object' && obj.$ref && i < 10; i++)
      obj = resolvePointer(this.doc, obj.$ref);
    return obj;
  }

  // The compiled schema at the JSON pointer ptr of the document.
  validator(ptr) {
    let v = this.validators.get(ptr);
    if (!v) {
      v = this.ajv.compile({ $ref: `${DOC_ID}${ptr}` });
      this.validators.set(ptr, v);
    }
    return v;
  }

  // The operation serving method and pathname, as { template, op, responses, where }.
  operation(method, pathname) {
    const m = method.toLowerCase();
    let matched = null;
    for (const p of this.paths) {
      if (!p.re.test(pathname)) continue;
      const item = this.doc.paths[p.template];
      if (METHODS.includes(m) && item[m])
        return { template: p.template, op: item[m], where: `#/paths/${escapePointer(p.template)}/${m}/responses` };
      matched ??= p.template;
    }
    return { template: matched, op: null, where: '#/x-any-path-responses' };
  }

  // Problems (strings) with one answer; [] when it is as documented.
  check({ method, url, status, headers, body }) {
    const u = new URL(url);
    const { template, op, where } = this.operation(method, u.pathname);
    const what = `${method} ${u.pathname}${u.search} -> ${status}`;
    const responses = op ? op.responses : this.doc['x-any-path-responses'];
    const key = Object.hasOwn(responses ?? {}, String(status)) ? String(status) :
      Object.hasOwn(responses ?? {}, 'default') ? 'default' : null;
    if (key === null) {
      const on = op ? `the operation ${method} ${template}` :
        template ? `${template} (no ${method} operation)` : 'any path';
      return [`${what}: status ${status} is not documented for ${on}`];
    }
    const res = this.deref(responses[key]);
    const ptr = (responses[key].$ref ?? `${where}/${key}`).slice(1);	// without the '#'
    const problems = [];
    for (const [name, h0] of Object.entries(res.headers ?? {})) {
      const h = this.deref(h0);
      const v = headers.get(name);
      if (v === null) {
        if (h.required) problems.push(`header ${name} is missing`);
        continue;
      }
      const t = h.schema?.type;
      let value = v;
      if (t === 'integer' || t === 'number') {
        if (!/^-?\d+(\.\d+)?$/.test(v)) { problems.push(`header ${name}: "${v}" is not a number`); continue; }
        value = Number(v);
      }
      const hp = h0.$ref ? h0.$ref.slice(1) : `${ptr}/headers/${escapePointer(name)}`;
      const validate = this.validator(`#${hp}/schema`);
      if (!validate(value))
        problems.push(`header ${name}: "${v}" ${this.ajv.errorsText(validate.errors)}`);
    }
    const ctype = (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const content = res.content ?? {};
    if (Object.keys(content).length === 0) {
      if (body.length > 0) problems.push(`a body (${ctype}) where none is documented`);
    } else if (!Object.hasOwn(content, ctype)) {
      problems.push(`Content-Type "${ctype}" is not documented (${Object.keys(content).join(', ')})`);
    } else if (ctype === 'application/json' || ctype.endsWith('+json')) {
      let json;
      try { json = JSON.parse(body); } catch (e) {
        problems.push(`the body is not JSON (${e.message}): ${body.slice(0, 200)}`);
      }
      if (json !== undefined && content[ctype].schema) {
        const validate = this.validator(`#${ptr}/content/${escapePointer(ctype)}/schema`);
        if (!validate(json)) {
          problems.push(`the body does not match the schema: ${this.ajv.errorsText(validate.errors,
            { dataVar: 'body' })}; body: ${body.slice(0, 300)}`);
        }
      }
    }
    return problems.map((p) => `${what}: ${p}`);
  }
}
