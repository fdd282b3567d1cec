// api.js — the console's client of quarry serve, at the page's own origin: DynamoDB's
// JSON operations (POST / with X-Amz-Target) and GET /metrics, each signed with SigV4
// (sigv4.js) by the keys the user entered — or, when none were, by a placeholder key,
// which only a server without --credentials (loopback) accepts, as it accepts any key.
// It also reads Prometheus's text format. It draws nothing.

import { sign } from './sigv4.js';

export const PLACEHOLDER_KEY = { accessKeyId: 'quarry-console', secretAccessKey: 'quarry-console' };

export class ApiError extends Error {
  constructor(type, message, status) {
    super(message || type);
    this.type = type;
    this.status = status;
  }
}

// The error type without its namespace: "com.amazonaws.dynamodb.v20120810#X" -> "X".
function shortType(t) {
  return String(t || '').split('#').pop() || 'Error';
}

export class Api {
  constructor() {
    this.creds = null; // {accessKeyId, secretAccessKey, region}; null: the placeholder
    this.region = 'us-east-1';
    this.listeners = [];
  }

  setCredentials(accessKeyId, secretAccessKey, region) {
    this.region = region || 'us-east-1';
    this.creds = accessKeyId ? { accessKeyId, secretAccessKey } : null;
  }

  signingKey() {
    return { ...(this.creds || PLACEHOLDER_KEY), region: this.region };
  }

  // Called with every error an API call meets (the page shows authentication failures).
  onError(f) {
    this.listeners.push(f);
  }

  async send(method, path, headers, body) {
    const signed = await sign({ method, host: location.host, path, headers, body, creds: this.signingKey() });
    let resp;
    try {
      resp = await fetch(path, { method, headers: signed, body: method === 'GET' ? undefined : body, cache: 'no-store' });
    } catch (e) {
      throw this.fail(new ApiError('NetworkError', `the server could not be reached: ${e.message}`, 0));
    }
    return resp;
  }

  fail(err) {
    for (const f of this.listeners) f(err);
    return err;
  }

  // The answer document of operation op with request body (an object), or an ApiError.
  async call(op, body = {}) {
    const text = JSON.stringify(body);
    const resp = await this.send('POST', '/', {
      'Content-Type': 'application/x-amz-json-1.0',
      'X-Amz-Target': `DynamoDB_20120810.${op}`,
    }, text);
    const answer = await resp.text();
    let doc = null;
    try {
      doc = answer ? JSON.parse(answer) : {};
    } catch (e) {
      doc = null;
    }
    if (resp.ok && doc) return doc;
    if (doc && doc.__type) throw this.fail(new ApiError(shortType(doc.__type), doc.message || doc.Message, resp.status));
    // An unknown target answered with XML (as DynamoDB does for some requests).
    if (/UnknownOperationException/.test(answer)) throw this.fail(new ApiError('UnknownOperationException', `${op} is not an operation of this server`, resp.status));
    throw this.fail(new ApiError('HttpError', `${op}: HTTP ${resp.status}`, resp.status));
  }

  // Every page of a paged read: calls op until the answer has no next key.
  async all(op, body, listKey, nextKey, startKey, limitPages = 50) {
    const out = [];
    let req = { ...body };
    for (let page = 0; page < limitPages; page++) {
      const r = await this.call(op, req);
      out.push(...(r[listKey] || []));
      if (!r[nextKey]) break;
      req = { ...body, [startKey]: r[nextKey] };
    }
    return out;
  }

  // GET /metrics, parsed (parseMetrics).
  async metrics() {
    const resp = await this.send('GET', '/metrics', {}, '');
    const text = await resp.text();
    if (!resp.ok) {
      let doc = null;
      try {
        doc = JSON.parse(text);
      } catch (e) {
        doc = null;
      }
      throw this.fail(new ApiError(doc ? shortType(doc.__type) : 'HttpError', doc ? doc.message : `metrics: HTTP ${resp.status}`, resp.status));
    }
    return parseMetrics(text);
  }
}

// Prometheus's text format (version 0.0.4) into [{name, labels: {k: v}, value}].
export function parseMetrics(text) {
  const samples = [];
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[2]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
      let l;
      while ((l = re.exec(m[2])) !== null)
        labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

// An error as one line for the page.
export function describeError(e) {
  if (e instanceof ApiError) return `${e.type}: ${e.message}`;
  return String(e && e.message ? e.message : e);
}
