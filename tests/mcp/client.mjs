// An MCP client built on the official TypeScript SDK
// (@modelcontextprotocol/sdk: Client over StdioClientTransport) that
// drives `haven mcp` through a scenario and prints what happened as one
// JSON object, for the shell tests (tests/mcp/test_*.sh) to check with jq.
//
//   node client.mjs SDK_DIR SCENARIO_FILE
//
// SDK_DIR holds node_modules/@modelcontextprotocol/sdk (the suite's
// prepare step installs it there).  SCENARIO_FILE is JSON:
//   {"command": "/path/haven", "args": ["mcp", ...],
//    "steps": [STEP...]}
// Each STEP has an "op" and, optionally, "as": the name its result is
// stored under in the output's "results" (default: its index):
//   {"op": "ping"}                       ping: {"pong": {}}
//   {"op": "list"}                       tools/list: {"tools": [...]}
//   {"op": "call", "tool": T, "arguments": {...}, "timeout_ms": N,
//    "background": true}                 tools/call: {"result": R, "text",
//                                        "elapsed_ms", "done_at_ms"} or
//                                        {"error": {"code", "message"}, ...};
//                                        background: started, awaited by "await"
//   {"op": "abort", "name": AS}          abort a background call (the SDK
//                                        sends notifications/cancelled)
//   {"op": "await", "name": AS}          its outcome ({"aborted": true, ...})
//   {"op": "host", "cmd": SH, "timeout_ms": N}
//                                        a shell command on the host, with
//                                        MCP_PID (haven mcp's pid) and
//                                        MCP_RESULTS (a file: the results so
//                                        far) in its environment:
//                                        {"status", "stdout", "stderr"}
//   {"op": "sleep", "ms": N}
//   {"op": "close"}                      the client closes (stdin's EOF)
// Output: {"connect": {"ok", "error", "protocolVersion", "serverVersion",
// "capabilities", "instructions"}, "pid", "results", "transport_errors",
// "exit": {"code", "signal"} (once haven mcp ended), "stderr"}.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [sdkDir, scenarioFile] = process.argv.slice(2);
if (!sdkDir || !scenarioFile) {
  process.stderr.write('usage: node client.mjs SDK_DIR SCENARIO_FILE\n');
  process.exit(2);
}
const esm = join(sdkDir, 'node_modules/@modelcontextprotocol/sdk/dist/esm');
// The SDK is imported from where the prepare step put it (an import by
// bare name would look beside this script).
const { Client } = await import(pathToFileURL(join(esm, 'client/index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(join(esm, 'client/stdio.js')).href);
const { LATEST_PROTOCOL_VERSION } = await import(pathToFileURL(join(esm, 'types.js')).href);

const scenario = JSON.parse(readFileSync(scenarioFile, 'utf8'));
const out = {
  sdk_latest_protocol: LATEST_PROTOCOL_VERSION,
  connect: { ok: false },
  pid: null,
  results: {},
  transport_errors: [],
  exit: null,
  stderr: '',
};
const resultsFile = scenarioFile + '.results.json';

// Everything the tests need reaches haven mcp (the SDK passes only a few
// variables by default): HAVEN_TEST_SUITE marks what the suite started.
const transport = new StdioClientTransport({
  command: scenario.command,
  args: scenario.args ?? [],
  env: { ...process.env, ...(scenario.env ?? {}) },
  stderr: 'pipe',
});
transport.stderr?.on('data', (d) => { out.stderr += d.toString('utf8'); });
// The stdio transport has no protocol version of its own; the client
// hands it the negotiated one here, which is how the test sees it.
transport.setProtocolVersion = (v) => { out.connect.protocolVersion = v; };

const client = new Client({ name: 'haven-mcp-tests', version: '1.0.0' }, { capabilities: {} });
client.onerror = (e) => { out.transport_errors.push(String(e?.message ?? e)); };

let exited = null;
function watchExit() {
  // The transport keeps the child private; its exit status is what a
  // test checks (0 at EOF, 1 for a bad policy).
  const child = transport._process;
  if (!child) return;
  exited = new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      out.exit = { code: child.exitCode, signal: child.signalCode };
      resolve();
      return;
    }
    child.once('exit', (code, signal) => { out.exit = { code, signal }; resolve(); });
  });
}

function errorOf(e) {
  return { code: e?.code ?? null, message: String(e?.message ?? e), name: e?.name ?? null };
}

function textOf(result) {
  return (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

const background = new Map();

async function runStep(step) {
  switch (step.op) {
    case 'ping':
      return { pong: await client.ping() };
    case 'list': {
      const r = await client.listTools();
      return { tools: r.tools };
    }
    case 'call': {
      const ac = new AbortController();
      const t0 = Date.now();
      const p = client
        .callTool({ name: step.tool, arguments: step.arguments ?? {} }, undefined, {
          signal: ac.signal,
          timeout: step.timeout_ms ?? 300000,
        })
        .then((result) => ({ result, text: textOf(result), elapsed_ms: Date.now() - t0, done_at_ms: Date.now() }))
        .catch((e) => ({ error: errorOf(e), aborted: ac.signal.aborted, elapsed_ms: Date.now() - t0, done_at_ms: Date.now() }));
      if (step.background) {
        background.set(step.as, { p, ac });
        return { started: true };
      }
      return await p;
    }
    case 'abort': {
      const b = background.get(step.name);
      if (!b) throw new Error(`no background call ${step.name}`);
      b.ac.abort('cancelled by the test');
      return { aborted: true };
    }
    case 'await': {
      const b = background.get(step.name);
      if (!b) throw new Error(`no background call ${step.name}`);
      return await b.p;
    }
    case 'host': {
      writeFileSync(resultsFile, JSON.stringify(out.results));
      try {
        const stdout = execFileSync('bash', ['-c', step.cmd], {
          env: { ...process.env, MCP_PID: String(transport.pid ?? ''), MCP_RESULTS: resultsFile },
          timeout: step.timeout_ms ?? 60000,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        return { status: 0, stdout, stderr: '' };
      } catch (e) {
        return { status: e.status ?? -1, stdout: e.stdout ?? '', stderr: String(e.stderr ?? e.message) };
      }
    }
    case 'sleep':
      await new Promise((r) => setTimeout(r, step.ms ?? 100));
      return {};
    case 'close':
      await client.close();
      if (exited) await exited;
      return { closed: true };
    default:
      throw new Error(`unknown op ${step.op}`);
  }
}

try {
  const connecting = client.connect(transport, { timeout: scenario.connect_timeout_ms ?? 120000 });
  // The child exists once start() ran (inside connect).
  setImmediate(watchExit);
  await connecting;
  out.connect.ok = true;
  out.connect.serverVersion = client.getServerVersion() ?? null;
  out.connect.capabilities = client.getServerCapabilities() ?? null;
  out.connect.instructions = client.getInstructions() ?? null;
} catch (e) {
  out.connect.error = errorOf(e);
}
out.pid = transport.pid ?? null;
if (!exited) watchExit();

if (out.connect.ok) {
  for (const [i, step] of (scenario.steps ?? []).entries()) {
    const name = step.as ?? String(i);
    step.as = name;
    try {
      out.results[name] = await runStep(step);
    } catch (e) {
      out.results[name] = { error: errorOf(e), step_failed: true };
    }
  }
}
// The end of the session, unless a step closed it already.
await client.close().catch(() => {});
if (exited) await Promise.race([exited, new Promise((r) => setTimeout(r, 10000))]);
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
