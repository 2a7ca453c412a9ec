#!/usr/bin/env node
// The CRI tests' client: the calls kubelet makes to a container runtime,
// made over the runtime's gRPC socket with a real gRPC library
// (@grpc/grpc-js, the proto loaded by @grpc/proto-loader) and the proto
// beside this file (cri.proto).
//
//   cri.js SOCKET METHOD [REQUEST]
//       One call of RuntimeService or ImageService (RunPodSandbox,
//       ExecSync, ListImages, ...).  REQUEST is the request message as
//       JSON, with the proto's field names (snake_case), enums by name and
//       int64s as numbers or strings; "-" reads it from stdin, "@FILE"
//       from FILE; none is the empty message.  A field the proto does not
//       declare is an error (a misspelt field would otherwise be dropped
//       without a word, and a test would check less than it says).  Prints
//       the response as one JSON object: every field, defaults included,
//       int64s as strings, enums by name, bytes as UTF-8 text.
//   cri.js SOCKET exec CONTAINER_ID [--timeout SECONDS] -- CMD [ARG...]
//       ExecSync (what `kubectl exec` without a terminal becomes): the
//       command's stdout and stderr on ours, its exit status as ours.
//   cri.js SOCKET batch [--jobs N] [FILE | -]
//       Many calls in one process (a node start costs more than most
//       calls): one call a line, {"tag": ANY, "method": METHOD,
//       "request": {...}}, at most N (default 8) in flight at a time.
//       Every request is checked against the proto before the first call
//       is made.  Prints one line per call, in the input's order:
//       {"tag", "method", "ok": true, "response": {...}} or {"tag",
//       "method", "ok": false, "error": "CODE: message"}.  Exits 0 when
//       every call succeeded, 125 when any failed (after all are done and
//       printed: the caller sees which).
//
// SOCKET is the runtime's unix socket path.  Every call is bounded by
// CRI_TIMEOUT seconds (default 60).  A failed call (the runtime's error,
// no answer in time, no socket) prints "cri.js: METHOD: CODE: message" on
// stderr and exits 125, a status no test command of ours exits with.
// The gRPC packages are loaded from CRI_NODE_MODULES (default
// /var/cache/haven-tests/cri-client/node_modules, where the suite's
// runner installs them from npm).
'use strict';

const path = require('path');
const fs = require('fs');
const { createRequire } = require('module');

const CLIENT_ERROR = 125;

function die(msg) {
  process.stderr.write(`cri.js: ${msg}\n`);
  process.exit(CLIENT_ERROR);
}

const modules = process.env.CRI_NODE_MODULES || '/var/cache/haven-tests/cri-client/node_modules';
// Resolve the packages as if this file lived in the cache: the checkout
// has no node_modules of its own.
const fromCache = createRequire(path.join(modules, '..', 'package.json'));
let grpc, protoLoader, protobuf;
try {
  grpc = fromCache('@grpc/grpc-js');
  protoLoader = fromCache('@grpc/proto-loader');
  // proto-loader's own parser, for the strict check of requests below.
  protobuf = fromCache('protobufjs');
} catch (e) {
  die(`the gRPC packages are not in ${modules} (npm install @grpc/grpc-js @grpc/proto-loader): ${e.message}`);
}

const PROTO = path.join(__dirname, 'cri.proto');
const PACKAGE = 'runtime.v1';
const SERVICES = ['RuntimeService', 'ImageService'];

const loaderOptions = {
  keepCase: true,
  // Nanosecond timestamps do not fit a double.
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
};

const definition = protoLoader.loadSync(PROTO, loaderOptions);
const api = grpc.loadPackageDefinition(definition).runtime.v1;
const root = new protobuf.Root().loadSync(PROTO, { keepCase: true });

// Where METHOD is declared: its service and its request type.
function findMethod(name) {
  for (const service of SERVICES) {
    const s = root.lookupService(`${PACKAGE}.${service}`);
    if (s.methods[name]) {
      return { service, requestType: s.methods[name].resolve().resolvedRequestType };
    }
  }
  const known = SERVICES.flatMap((s) => Object.keys(root.lookupService(`${PACKAGE}.${s}`).methods));
  die(`unknown method ${name} (this client knows: ${known.join(', ')})`);
  return null;
}

// Every key of VALUE is a field of TYPE, all the way down.
function checkFields(type, value, where) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    die(`${where}: a ${type.name} must be a JSON object`);
  }
  for (const key of Object.keys(value)) {
    const field = type.fields[key];
    if (!field) {
      die(`${where}.${key}: ${type.name} has no field ${key} in cri.proto (fields: ${Object.keys(type.fields).join(', ')})`);
    }
    field.resolve();
    if (!(field.resolvedType instanceof protobuf.Type) || value[key] === null) continue;
    const sub = field.resolvedType;
    if (field.map) {
      for (const k of Object.keys(value[key])) checkFields(sub, value[key][k], `${where}.${key}[${k}]`);
    } else if (field.repeated) {
      if (!Array.isArray(value[key])) die(`${where}.${key}: a repeated field must be a JSON array`);
      value[key].forEach((v, i) => checkFields(sub, v, `${where}.${key}[${i}]`));
    } else {
      checkFields(sub, value[key], `${where}.${key}`);
    }
  }
}

function readRequest(arg) {
  if (arg === undefined) return {};
  let text = arg;
  try {
    if (arg === '-') text = fs.readFileSync(0, 'utf8');
    else if (arg.startsWith('@')) text = fs.readFileSync(arg.slice(1), 'utf8');
  } catch (e) {
    die(`reading the request: ${e.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    die(`the request is not JSON: ${e.message}`);
  }
  return null;
}

// bytes fields (ExecSync's output) as text in the JSON we print.
function plain(value) {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const k of Object.keys(value)) out[k] = plain(value[k]);
    return out;
  }
  return value;
}

function statusName(err) {
  const code = Object.keys(grpc.status).find((k) => grpc.status[k] === err.code) || err.code;
  return `${code}: ${err.details || err.message}`;
}

// One call on CLIENT (checked already); resolves to {response} or {error}.
function invoke(client, method, request) {
  const seconds = Number(process.env.CRI_TIMEOUT || 60);
  const deadline = new Date(Date.now() + seconds * 1000);
  return new Promise((resolve) => {
    client[method](request, { deadline }, (err, response) => {
      resolve(err ? { error: statusName(err) } : { response });
    });
  });
}

async function call(socket, method, request) {
  const { service, requestType } = findMethod(method);
  checkFields(requestType, request, method);
  const client = new api[service](`unix:${socket}`, grpc.credentials.createInsecure());
  const r = await invoke(client, method, request);
  client.close();
  if (r.error) die(`${method}: ${r.error}`);
  return r.response;
}

// The batch verb: lines of {"tag", "method", "request"}, every request
// checked before any call, at most JOBS calls in flight on one channel
// per service, each call's own deadline; results in the input's order.
async function batch(socket, args) {
  let jobs = 8;
  let source;
  while (args.length) {
    const a = args.shift();
    if (a === '--jobs' && args.length) jobs = Number(args.shift());
    else if (source === undefined) source = a;
    else die(`batch: unexpected argument ${a}`);
  }
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 256) die('batch: --jobs takes 1 to 256');
  let text;
  try {
    text = fs.readFileSync(source === undefined || source === '-' ? 0 : source, 'utf8');
  } catch (e) {
    die(`batch: reading the calls: ${e.message}`);
  }
  const calls = text.split('\n').filter((l) => l.trim() !== '').map((line, i) => {
    let c;
    try {
      c = JSON.parse(line);
    } catch (e) {
      die(`batch: line ${i + 1} is not JSON: ${e.message}`);
    }
    if (c === null || typeof c !== 'object' || typeof c.method !== 'string') {
      die(`batch: line ${i + 1}: no "method"`);
    }
    const { service, requestType } = findMethod(c.method);
    const request = c.request === undefined ? {} : c.request;
    checkFields(requestType, request, `line ${i + 1}: ${c.method}`);
    return { tag: c.tag === undefined ? i + 1 : c.tag, method: c.method, service, request };
  });
  const clients = {};
  for (const service of SERVICES) {
    clients[service] = new api[service](`unix:${socket}`, grpc.credentials.createInsecure());
  }
  const results = new Array(calls.length);
  let next = 0;
  async function worker() {
    while (next < calls.length) {
      const i = next++;
      const c = calls[i];
      const r = await invoke(clients[c.service], c.method, c.request);
      results[i] = r.error
        ? { tag: c.tag, method: c.method, ok: false, error: r.error }
        : { tag: c.tag, method: c.method, ok: true, response: plain(r.response) };
    }
  }
  await Promise.all(Array.from({ length: Math.min(jobs, calls.length) }, worker));
  for (const service of SERVICES) clients[service].close();
  const out = results.map((r) => `${JSON.stringify(r)}\n`).join('');
  const failed = results.some((r) => !r.ok);
  process.stdout.write(out, () => process.exit(failed ? CLIENT_ERROR : 0));
}

async function main(argv) {
  const [socket, method, ...rest] = argv;
  if (!socket || !method) {
    die('usage: cri.js SOCKET METHOD [REQUEST-JSON | - | @FILE] | cri.js SOCKET exec ID [--timeout S] -- CMD... | '
      + 'cri.js SOCKET batch [--jobs N] [FILE | -]');
  }
  if (method === 'batch') {
    await batch(socket, rest);
    return;
  }
  if (method === 'exec') {
    const id = rest.shift();
    let timeout = 0;
    while (rest.length && rest[0] !== '--') {
      const opt = rest.shift();
      if (opt === '--timeout' && rest.length) timeout = Number(rest.shift());
      else die(`exec: unknown option ${opt}`);
    }
    rest.shift();
    if (!id || rest.length === 0) die('usage: cri.js SOCKET exec ID [--timeout S] -- CMD [ARG...]');
    const r = await call(socket, 'ExecSync', { container_id: id, cmd: rest, timeout });
    // Both written before we exit: exit() does not wait for a pipe.
    await new Promise((res) => process.stdout.write(r.stdout, res));
    await new Promise((res) => process.stderr.write(r.stderr, res));
    process.exit(r.exit_code);
  }
  if (rest.length > 1) die(`${method}: one request at most`);
  const r = await call(socket, method, readRequest(rest[0]));
  process.stdout.write(`${JSON.stringify(plain(r))}\n`, () => process.exit(0));
}

main(process.argv.slice(2)).catch((e) => die(e.stack || String(e)));
