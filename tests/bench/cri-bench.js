#!/usr/bin/env node
// The CRI benchmarks' client (tests/bench/cri-bench.sh): many CRI calls
// made from ONE process over one gRPC channel, as kubelet makes them, so
// that the figures are the calls and not a program start per call.  The
// same proto and packages as the tests' client (tests/cri/cri.js).
//
//   cri-bench.js start OUT N WARMUP HANDLER...
//       Pod start, interleaved: in each round one pod per HANDLER, in an
//       order that turns by one each round (no handler always goes
//       first).  A pod is timed from RunPodSandbox through CreateContainer
//       and StartContainer until its command's first line is in its CRI
//       log (the process runs); then it is stopped and removed, untimed.
//       WARMUP rounds first, not counted.  One JSON line per pod in
//       OUT/start.jsonl.
//   cri-bench.js up HANDLER COUNT OUT
//       COUNT pods under HANDLER, each with one container (sleep), kept
//       running; "POD_ID CONTAINER_ID" a line in OUT.
//   cri-bench.js down FILE
//       StopPodSandbox and RemovePodSandbox for each pod of FILE (as `up`
//       wrote it); then no pod may be left listed.
//
// Every pod is noted ("POD_ID CGROUP" a line) in BENCH_PODS and its
// container in BENCH_CONTAINERS as it is made, for the check that nothing
// is left (cri-bench.sh).  Needs CRI_SOCK, WORK, CGROUP_PARENT, IMAGE,
// CRI_NODE_MODULES (lib.sh), BENCH_PODS and BENCH_CONTAINERS.
'use strict';

const path = require('path');
const fs = require('fs');
const crypto = require('crypto');
const os = require('os');
const { createRequire } = require('module');

function die(msg) {
  process.stderr.write(`cri-bench.js: ${msg}\n`);
  process.exit(1);
}

function env(name) {
  const v = process.env[name];
  if (!v) die(`${name} is not set (run through tests/bench/cri-bench.sh)`);
  return v;
}

const SOCK = env('CRI_SOCK');
const WORK = env('WORK');
const CGROUP_PARENT = env('CGROUP_PARENT');
const IMAGE = env('IMAGE');
const BENCH_PODS = env('BENCH_PODS');
const BENCH_CONTAINERS = env('BENCH_CONTAINERS');
const fromCache = createRequire(path.join(env('CRI_NODE_MODULES'), '..', 'package.json'));
const grpc = fromCache('@grpc/grpc-js');
const protoLoader = fromCache('@grpc/proto-loader');

const definition = protoLoader.loadSync(path.join(__dirname, '..', 'cri', 'cri.proto'), {
  keepCase: true, longs: String, enums: String, defaults: true, arrays: true, objects: true,
});
const api = grpc.loadPackageDefinition(definition).runtime.v1;
const runtime = new api.RuntimeService(`unix:${SOCK}`, grpc.credentials.createInsecure());
const CALL_SECONDS = Number(process.env.CALL_TIMEOUT || 60);

function call(method, request) {
  const deadline = new Date(Date.now() + CALL_SECONDS * 1000);
  return new Promise((resolve, reject) => {
    runtime[method](request, { deadline }, (err, response) => {
      if (err) reject(new Error(`${method}: ${err.details || err.message}`));
      else resolve(response);
    });
  });
}

const now = () => Number(process.hrtime.bigint()) / 1e6; // ms
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A pod as kubelet sends it (the same fields as lib.sh's pod_config).
function podConfig(name) {
  const uid = crypto.randomUUID();
  const logs = path.join(WORK, 'logs', `hvt_${name}_${uid}`);
  fs.mkdirSync(logs, { recursive: true });
  return {
    metadata: { name, uid, namespace: 'hvt', attempt: 0 },
    hostname: name,
    log_directory: logs,
    labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'hvt', 'io.kubernetes.pod.uid': uid },
    linux: {
      cgroup_parent: `${CGROUP_PARENT}/pod${uid}`,
      security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } },
    },
  };
}

// The container's command says it runs, then waits to be stopped.
const COMMAND = ['/bin/sh', '-c', 'echo up; exec sleep 3600'];

let serial = 0;

// One pod with its container, started; the times of each step (ms).
async function startPod(handler) {
  const name = `bench-${process.pid}-${serial++}`;
  const config = podConfig(name);
  const t = { handler };
  const t0 = now();
  const pod = (await call('RunPodSandbox', { config, runtime_handler: handler })).pod_sandbox_id;
  const t1 = now();
  fs.appendFileSync(BENCH_PODS, `${pod} ${config.linux.cgroup_parent}\n`);
  const log = path.join(config.log_directory, 'c.log');
  const ctr = (await call('CreateContainer', {
    pod_sandbox_id: pod,
    sandbox_config: config,
    config: {
      metadata: { name: 'c', attempt: 0 }, image: { image: IMAGE }, command: COMMAND,
      log_path: 'c.log', labels: { 'io.kubernetes.container.name': 'c' },
    },
  })).container_id;
  const t2 = now();
  fs.appendFileSync(BENCH_CONTAINERS, `${ctr}\n`);
  await call('StartContainer', { container_id: ctr });
  const t3 = now();
  // Until the command's line is in its log (the CRI log format: "TIME
  // stdout F up").  1 ms polls: the step is tens of milliseconds.
  for (;;) {
    let text = '';
    try { text = fs.readFileSync(log, 'utf8'); } catch (e) { if (e.code !== 'ENOENT') throw e; }
    if (/ stdout F up$/m.test(text)) break;
    if (now() - t3 > CALL_SECONDS * 1000) throw new Error(`${handler}: no "up" in ${log} after ${CALL_SECONDS} s`);
    await sleep(1);
  }
  const t4 = now();
  Object.assign(t, { pod, ctr, run: t1 - t0, create: t2 - t1, start: t3 - t2, up: t4 - t3, total: t4 - t0 });
  return t;
}

async function removePod(pod) {
  await call('StopPodSandbox', { pod_sandbox_id: pod });
  await call('RemovePodSandbox', { pod_sandbox_id: pod });
}

async function start(out, n, warmup, handlers) {
  const file = path.join(out, 'start.jsonl');
  fs.writeFileSync(file, '');
  for (let round = 0; round < warmup + n; round++) {
    for (let i = 0; i < handlers.length; i++) {
      const handler = handlers[(round + i) % handlers.length];
      const s = await startPod(handler);
      const t = now();
      await removePod(s.pod);
      s.remove = now() - t;
      s.round = round - warmup;
      s.load = os.loadavg()[0];
      if (round >= warmup) fs.appendFileSync(file, `${JSON.stringify(s)}\n`);
    }
  }
}

async function up(handler, count, out) {
  fs.writeFileSync(out, '');
  for (let i = 0; i < count; i++) {
    const s = await startPod(handler);
    fs.appendFileSync(out, `${s.pod} ${s.ctr}\n`);
  }
}

async function down(file) {
  const pods = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' ')[0]);
  for (const pod of pods) await removePod(pod);
  const left = (await call('ListPodSandbox', {})).items.map((p) => p.id).filter((id) => pods.includes(id));
  if (left.length) die(`still listed after removal: ${left.join(' ')}`);
}

async function main(argv) {
  const [mode, ...a] = argv;
  if (mode === 'start' && a.length >= 4) await start(a[0], Number(a[1]), Number(a[2]), a.slice(3));
  else if (mode === 'up' && a.length === 3) await up(a[0], Number(a[1]), a[2]);
  else if (mode === 'down' && a.length === 1) await down(a[0]);
  else die('usage: cri-bench.js start OUT N WARMUP HANDLER... | up HANDLER COUNT OUT | down FILE');
  runtime.close();
}

main(process.argv.slice(2)).catch((e) => die(e.stack || String(e)));
