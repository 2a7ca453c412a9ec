#!/usr/bin/env python3
"""Writes the hand-made seed inputs of the fuzz targets into corpus/<target>/
(seed-* files; run from anywhere).  The inputs the fuzzers found and that
were kept are committed beside them under other names."""
import json, os, struct, socket

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))

def put(target, name, data):
    d = os.path.join(here, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)

# --- oci_spec: config.json, process.json, resources, seccomp, egress ------
config = {
    "ociVersion": "1.2.1",
    "process": {"terminal": False, "user": {"uid": 0, "gid": 0, "additionalGids": [1, 2]},
                "args": ["sh", "-c", "echo hi"], "env": ["PATH=/bin", "TERM=xterm"], "cwd": "/",
                "capabilities": {"bounding": ["CAP_CHOWN"], "effective": ["CAP_CHOWN"], "permitted": ["CAP_CHOWN"]},
                "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
                "noNewPrivileges": True, "consoleSize": {"height": 24, "width": 80},
                "ioPriority": {"class": "IOPRIO_CLASS_BE", "priority": 4},
                "scheduler": {"policy": "SCHED_OTHER", "nice": 1}},
    "root": {"path": "rootfs", "readonly": True},
    "hostname": "haven",
    "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"},
               {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "size=64m"]}],
    "hooks": {"prestart": [{"path": "/bin/true", "args": ["true"], "timeout": 5}]},
    "annotations": {"run.haven.policy": "default"},
    "linux": {"namespaces": [{"type": "pid"}, {"type": "mount"}, {"type": "network", "path": "/proc/1/ns/net"}],
              "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
              "gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
              "devices": [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438}],
              "resources": {"memory": {"limit": 536870912, "swap": -1}, "cpu": {"quota": 50000, "period": 100000},
                            "pids": {"limit": 100},
                            "devices": [{"allow": False, "access": "rwm"}, {"allow": True, "type": "c", "major": 1, "minor": 3, "access": "rw"}],
                            "blockIO": {"weight": 100, "throttleReadBpsDevice": [{"major": 8, "minor": 0, "rate": 1000}]}},
              "cgroupsPath": "/haven/c1",
              "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
                          "syscalls": [{"names": ["ptrace"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
                                       {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
                                        "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]}]},
              "maskedPaths": ["/proc/kcore"], "readonlyPaths": ["/proc/sys"],
              "sysctl": {"net.ipv4.ip_forward": "0"}, "timeOffsets": {"monotonic": {"secs": 1, "nanosecs": 2}}}}
put("oci_spec", "config", json.dumps(config))
# The mount options the runtime reads itself (flags, propagation, haven's
# x-haven.* options: a home's overlay shared by sub-directory).
put("oci_spec", "config-haven-mounts", json.dumps(dict(config, mounts=[
    {"destination": "/home/u/.cache", "type": "overlay", "source": "overlay",
     "options": ["lowerdir=/home/u", "upperdir=/s/upper", "workdir=/s/work", "nosuid", "nodev", "x-haven.subdir=.cache"]},
    {"destination": "/home/u/.npm", "type": "overlay", "source": "overlay",
     "options": ["lowerdir=/home/u", "upperdir=/s/upper", "workdir=/s/work", "nosuid", "nodev", "x-haven.subdir=.npm", "noexec"]},
    {"destination": "/home/other", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "nodev", "noexec", "mode=755", "size=1m", "x-haven.nofollow", "x-haven.optional", "x-haven.mkdir"]},
    {"destination": "/project", "type": "bind", "source": "/p", "options": ["rbind", "rro", "rslave", "nosymfollow", "x-haven.nofollow"]}])))
put("oci_spec", "process", json.dumps(config["process"]))
put("oci_spec", "process-commandline", json.dumps({"commandLine": "cmd /c dir", "cwd": "/", "user": {"uid": 1, "gid": 1}}))
put("oci_spec", "resources", json.dumps(config["linux"]["resources"]))
put("oci_spec", "seccomp", json.dumps({"seccomp": config["linux"]["seccomp"]}))
put("oci_spec", "egress", json.dumps({"policy": "agent", "connect": "pasta",
                                       "allow": [{"cidr": "10.0.0.0/8", "ports": "443"}, {"cidr": "::1/128"}],
                                       "deny": [{"cidr": "169.254.0.0/16"}],
                                       "names": [{"name": "api.example.com", "ports": "80-443"},
                                                 {"name": "*.example.org"}],
                                       "deny_names": [{"name": "bad.example.com"}]}))

# --- state: state.json as hv_container_save writes it ---------------------
put("state", "created", json.dumps({"id": "fuzz", "pid": 4242, "startTime": 123456, "bundle": "/b", "rootfs": "/b/rootfs",
                                    "created": "2026-11-23T18:00:00.000000000Z", "owner": 0, "cgroupPath": "/haven/fuzz",
                                    "systemdCgroup": False, "annotations": {"a": "b", "run.haven.policy": "default"}}))
put("state", "minimal", "{}")

# --- policy: two documents cut at ---8<--- --------------------------------
for name in ("default", "strict", "claude-code", "offline"):
    with open(os.path.join(top, "policies", name + ".yaml")) as f:
        text = f.read()
    put("policy", name, text + ("\n---8<---\nextends: none\n" if name == "default" else ""))
put("policy", "extends-file",
    "name: child\nextends: b.yaml\nproject_writable: true\nnetwork: none\n"
    "\n---8<---\nname: base\nextends: none\nsyscalls: default\n")
put("policy", "extends-chain", "extends: b.yaml\n---8<---\nextends: a.yaml\n")

# --- audit_records: notification numbers, then NUL-separated strings -------
def notif(nr, arch, pid, args):
    # struct seccomp_notif: u64 id, u32 pid, u32 flags, seccomp_data
    # {int nr, u32 arch, u64 ip, u64 args[6]}
    return struct.pack("<QIIiIQ6Q", 7, pid, 0, nr, arch, 0, *args)
fields = [b"default", b"c0ffee", b"init", b"evil\xff\xfe\n\"comm", b"api.example.com", b"not in the allowlist",
          b"a.example", "caf\u00e9".encode(), b"\xed\xa0\x80surrogate"]
put("audit_records", "denied", notif(101, 0xc000003e, 42, [1, 2, 3, 4, 5, 6]) + b"\0".join(fields))
put("audit_records", "haven-run", notif(59, 0x40000003, 7, [0] * 6) + b"\0".join([b"strict", b"", b"", b"sh"]))
put("audit_records", "trail",
    '{"time":"2026-11-23T18:00:00.123456789Z","event":"denied","policy":"default","syscall":"ptrace","pid":4,"comm":"x","args":["0x1"]}\n'
    '{"time":"2026-11-23T18:00:01Z","event":"landlock-denied","policy":"p","container":"abc","access":"fs.execute","path":"/x","rule":"exec"}\n'
    '{"time":"2026-11-23T18:00:02Z","event":"net-denied","destination":"1.2.3.4","port":443,"protocol":"tcp","names":["a"]}\n'
    '{"time":"2026-11-23T18:00:03Z","event":"dropped","count":3,"kinds":[{"syscall":"x","count":3}]}\n'
    '{"time":"2026-11-23T18:00:04Z","event":"start","project":"/p","argv":["a","b"]}\n'
    "10m\n2026-11-23T18:00:00Z\n")

# --- netlink: first byte chooses, then one datagram ------------------------
def nlmsg(type_, payload, flags=0, seq=0):
    length = 16 + len(payload)
    return struct.pack("<IHHII", length, type_, flags, seq, 0) + payload + b"\0" * ((4 - length % 4) % 4)
def nlattr(type_, data):
    length = 4 + len(data)
    return struct.pack("<HH", length, type_) + data + b"\0" * ((4 - length % 4) % 4)
def ipv4_tcp(dst, port):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40, 1, 0, 64, 6, 0, socket.inet_aton("10.0.0.2"), socket.inet_aton(dst))
    return ip + struct.pack("!HHIIBBHHH", 40000, port, 0, 0, 0x50, 2, 0, 0, 0)
def ipv6_udp(dst, port):
    ip = struct.pack("!IHBB16s16s", 6 << 28, 8, 17, 64, socket.inet_pton(socket.AF_INET6, "fd00::2"),
                     socket.inet_pton(socket.AF_INET6, dst))
    return ip + struct.pack("!HHHH", 5353, port, 8, 0)
NFLOG = (4 << 8) | 0
for fam, pkt, name in ((socket.AF_INET, ipv4_tcp("93.184.216.34", 443), "nflog-v4-tcp"),
                       (socket.AF_INET6, ipv6_udp("2001:db8::1", 53), "nflog-v6-udp")):
    msg = nlmsg(NFLOG, struct.pack("<BBH", fam, 0, 0) + nlattr(1, struct.pack("!HBB", 0x0800, 3, 0))
                + nlattr(10, b"haven-egress\0") + nlattr(9, pkt))
    put("netlink", name, bytes([4]) + msg)
    put("netlink", name + "-packet", bytes([2 | (4 if fam == socket.AF_INET6 else 0)]) + pkt)
# nf_tables acks: NLMSG_ERROR (2), struct nlmsgerr {int error; nlmsghdr msg}
def ack(seq, error, ext=None):
    orig = struct.pack("<IHHII", 20, (10 << 8) | 0, 5, seq, 0)
    flags = 0x100 | 0x200 if ext else 0  # NLM_F_CAPPED | NLM_F_ACK_TLVS
    payload = struct.pack("<i", error) + orig
    if ext:
        payload += nlattr(1, ext.encode() + b"\0")
    return nlmsg(2, payload, flags, seq)
put("netlink", "nft-acks", bytes([1]) + ack(100, 0) + ack(101, 0) + ack(102, 0))
put("netlink", "nft-error", bytes([1]) + ack(100, 0) + ack(101, -17, "Could not process rule: File exists") + ack(102, 0))

# --- landlock_audit: datagrams cut at \n--\n -------------------------------
def rec(type_, text):
    return nlmsg(type_, text.encode())[: 16 + len(text)]
ll = [rec(1424, 'audit(1700000000.100:41): domain=1caadd671 status=allocated mode=enforcing pid=4242 uid=0 exe="/bin/sh" comm="sh"'),
      rec(1423, 'audit(1700000000.124:43): domain=1caadd671 blockers=fs.write_file path="/etc/passwd" dev="vda" ino=12'),
      rec(1300, 'audit(1700000000.124:43): arch=c000003e syscall=257 success=no exit=-13 pid=4243 comm="cat" exe="/bin/cat"'),
      rec(1320, 'audit(1700000000.124:43): '),
      rec(1423, 'audit(1700000000.200:44): domain=1caadd671 blockers=fs.execute path=2F746D702F6120620A ino=9'),
      rec(1423, 'audit(1700000000.300:45): domain=1caadd671 blockers=net.connect_tcp daddr=1.2.3.4 dest=443')]
put("landlock_audit", "events", b"\n--\n".join(ll))
put("landlock_audit", "late-domain", b"\n--\n".join([ll[4], ll[0], ll[1], ll[3]]))

# --- agent_config: first byte picks hv_agent_configs[i % 6], then the text --
# 0 .claude/settings.json, 1 settings.local.json, 2 .mcp.json,
# 3 .gemini/settings.json, 4 .codex/config.toml, 5 .vscode/tasks.json
claude = {"$schema": "https://json.schemastore.org/claude-code-settings.json", "model": "opus",
          "permissions": {"allow": ["Bash(npm test)"], "defaultMode": "bypassPermissions"},
          "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "./fmt.sh"}]}]},
          "statusLine": {"type": "command", "command": "~/.claude/status.sh"}, "env": {"BASH_ENV": "x"}}
put("agent_config", "claude-settings", bytes([0]) + json.dumps(claude, indent=2).encode())
put("agent_config", "mcp", bytes([2]) + json.dumps(
    {"mcpServers": {"db": {"command": "node", "args": ["srv.js"], "env": {"K": "v"}}}}).encode())
put("agent_config", "gemini", bytes([3]) + json.dumps(
    {"theme": "dark", "mcpServers": {"x": {"command": "python3"}}, "toolDiscoveryCommand": "bin/tools"}).encode())
put("agent_config", "codex", bytes([4]) + b'model = "o3"\nnotify = ["notify-send", "done"]\n'
    b'approval_policy = "never"  # comment\n\n[mcp_servers.docs]\ncommand = "npx"\nargs = [\n  "-y",\n  "srv"\n]\n'
    b'[[profiles]] # table array\nenv = { BASH_ENV = "./x" }\r\n')
put("agent_config", "vscode-tasks", bytes([5]) + json.dumps(
    {"version": "2.0.0", "tasks": [{"label": "a", "command": "make", "runOptions": {"runOn": "folderOpen"}},
                                   {"label": "b", "command": "make test"}],
     "linux": {"runOptions": {"runOn": "folderOpen"}}}).encode())
put("agent_config", "not-object", bytes([1]) + b'["a", 1, null, true, {"b": -1.5e3}]')
put("agent_config", "not-json", bytes([0]) + b'{"hooks": // comment\n 1}')

# --- home_commands: first byte's low bit: 1 config.toml, 0 settings.json ----
put("home_commands", "claude-json", bytes([0]) + json.dumps(
    {"apiKeyHelper": "$CLAUDE_PROJECT_DIR/rw/run.sh", "statusLine": {"command": "~/bin/s.sh --x=1"},
     "hooks": {"Stop": [{"hooks": [{"command": "FOO=/tmp/a /bin/sh -c 'echo hi' | ./rw/run.sh"}]}]},
     "mcpServers": {"a": {"command": "node", "args": ["../x.js", "run.sh"], "env": {"BASH_ENV": "${HOME}/e"}}}}).encode())
put("home_commands", "codex-toml", bytes([1]) + b'notify = ["/usr/bin/notify-send", "done"]\n'
    b'[mcp_servers.docs]\ncommand = "/bin/sh"\nargs = [ # comment\n  "-c", \'literal\',\n  "./rw/run.sh"\n]\n'
    b'env = { BASH_ENV = "/nonexistent-haven-fuzz/x", "PATH" = "a\\"b" }\n[[x]]\nmcp."command" = "$PWD/y"\n')
put("home_commands", "safe-toml", bytes([1]) + b'model = "o3"\n# notify = ["./rw/run.sh"]\n[t]\ncommand = "ls"\n')
put("home_commands", "not-json", bytes([0]) + b'{"command": "x",}')

# --- http_message: first byte: bit 0 response, 1 to HEAD, 2 body limit 64,
# 3 closed after, bits 4-7 piece size - 1; then the message -----------------
def flags(response=False, head=False, limit=False, close=False, piece=1):
    return bytes([(1 if response else 0) | (2 if head else 0) | (4 if limit else 0) | (8 if close else 0)
                  | ((piece - 1) << 4)])
put("http_message", "messages-cl", flags(piece=3) + b'POST /v1/messages?beta=true HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n'
    b'x-api-key: placeholder\r\nanthropic-version: 2023-06-01\r\nContent-Type: application/json\r\n'
    b'Content-Length: 27\r\n\r\n{"model":"m","messages":[]}')
put("http_message", "responses-chunked", flags(piece=7) + b'POST /v1/responses HTTP/1.1\r\nHost: gw\r\n'
    b'Authorization: Bearer placeholder\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nTransfer-Encoding: chunked\r\n\r\n'
    b'5;ext=1\r\nhello\r\nA\r\n{"x":true}\r\n0\r\nX-Trailer: t\r\n\r\n')
put("http_message", "gemini-stream", flags(piece=16) + b'POST /v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse '
    b'HTTP/1.1\r\nHost: gw\r\nx-goog-api-key: placeholder\r\nContent-Length: 2\r\n\r\n{}GET /v1beta/models HTTP/1.1\r\n\r\n')
put("http_message", "smuggle-cl-te", flags(piece=2) + b'POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n'
    b'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n')
put("http_message", "sse-response", flags(response=True, piece=5) + b'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n'
    b'Transfer-Encoding: chunked\r\n\r\n24\r\nevent: message_start\ndata: {"a":1}\n\n\r\n'
    b'28\r\nevent: content_block_delta\ndata: {"b"}\n\n\r\n0\r\n\r\n')
put("http_message", "close-response", flags(response=True, close=True, limit=True, piece=4)
    + b'HTTP/1.0 200\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\ndata: 2\n\n')
put("http_message", "head-response", flags(response=True, head=True) + b'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n')

# --- keeper_proto: the keeper's requests (even first byte: (b/2)%5 fds) and
# events (odd first byte) --------------------------------------------------
def keeper_spawn(run_id, argv, env, cwd=None):
    strings = argv + env + ([cwd] if cwd is not None else [])
    body = b"".join(s.encode() + b"\0" for s in strings)
    return struct.pack("=IIIII", 1, run_id, len(argv), len(env), 1 if cwd is not None else 0) + body

put("keeper_proto", "spawn", bytes([6]) + keeper_spawn(1, ["sh", "-c", "echo hi"], ["PATH=/bin", "HOME=/root"], "/work"))
put("keeper_proto", "spawn-no-cwd", bytes([6]) + keeper_spawn(2, ["true", ""], []))
put("keeper_proto", "spawn-two-fds", bytes([4]) + keeper_spawn(3, ["true"], []))
put("keeper_proto", "spawn-cut", bytes([6]) + keeper_spawn(4, ["ls", "-l"], ["A=1"])[:-2])
put("keeper_proto", "spawn-counts-wrap", bytes([6]) + struct.pack("=IIIII", 1, 5, 0xffffffff, 1, 0) + b"x\0")
put("keeper_proto", "signal", bytes([0]) + struct.pack("=IIi", 2, 7, 15))
put("keeper_proto", "signal-out-of-range", bytes([0]) + struct.pack("=IIi", 2, 7, 65))
put("keeper_proto", "event-started", bytes([1]) + struct.pack("=IIi", 1, 9, 42))
put("keeper_proto", "event-exited", bytes([1]) + struct.pack("=IIi", 2, 9, 137))
put("keeper_proto", "event-bad-status", bytes([1]) + struct.pack("=IIi", 2, 9, 256))
# --- service_api: first byte: bits 0-2 the method (GET, POST, PUT, DELETE,
# HEAD, PATCH, get, ""), bits 3-7 where the rest is cut for the answers (in
# 32nds); the rest is at once a target, two bodies and two outputs --------
def api(method, cut, rest):
    return bytes([method | (cut << 3)]) + (rest.encode() if isinstance(rest, str) else rest)
put("service_api", "route-version", api(0, 16, "/v1/version"))
put("service_api", "route-create", api(1, 8, "/v1/sandboxes"))
put("service_api", "route-delete", api(3, 8, "/v1/sandboxes/hvs-0a1b2c3d"))
put("service_api", "route-run", api(1, 8, "/v1/sandboxes/hvs-0a1b2c3d/run"))
put("service_api", "route-file-put", api(2, 20, "/v1/sandboxes/s1/files/d%C3%A9j%C3%A0/a%20b+c/..x/%2E%2E"))
put("service_api", "route-file-get", api(0, 4, "/v1/sandboxes/A_z-9/files/src/main.c"))
put("service_api", "route-list", api(0, 31, "/v1/sandboxes/s1/list?path=a+b%2Fc&path=x"))
put("service_api", "route-list-bad", api(0, 2, "/v1/sandboxes/s1/list?&p%61th=%00#f"))
put("service_api", "create", api(1, 10, json.dumps(
    {"policy": "offline", "project": "/home/u/p", "pool": False, "destroy_on_disconnect": True, "idle_timeout_s": 600})))
put("service_api", "create-bad", api(1, 10, '{"policy":"a\\u0000b","policy":1,"idle_timeout_s":86401,"x":[[[]]]}'))
put("service_api", "run", api(1, 12, json.dumps(
    {"argv": ["sh", "-c", "echo $A; cat"], "env": {"A": "1", "_B": "x=y"}, "cwd": "src/x", "stdin": "h\u00e9\n",
     "timeout_s": 10, "max_output": 1048576, "stream": True})))
put("service_api", "run-b64", api(1, 12, '{"argv":["cat"],"stdin_b64":"AAEC/w==","cwd":"/tmp","env":{"1A":"v"}}'))
put("service_api", "run-bad", api(1, 12, '{"argv":["ls","a\\u0000"],"env":{"A\\u0000B":"v"},"stdin":"a","stdin_b64":"QR=="}'))
put("service_api", "outputs", api(0, 16, b"ok \xc3\xa9\n\xff\xfe\x00tail\xe2\x82\xf0\x9f\x98\x80\xed\xa0\x80\xc3"))
put("service_api", "output-cut-char", api(0, 0, b"h\xc3\xa9llo \xc3"))
# --- mcp_proto: first byte: bits 0-3 the piece size the stream is fed in (0:
# whole), bit 4 a 64-byte line bound, bit 5 calls answered after each line;
# the rest is what an MCP client writes to haven mcp's stdin ----------------
def mcp(sel, *lines, end="\n"):
    return bytes([sel]) + end.join(l if isinstance(l, str) else json.dumps(l, separators=(",", ":"))
                                   for l in lines).encode() + end.encode()
init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}},
                   "clientInfo": {"name": "claude-code", "version": "2.1.197"}}}
ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
put("mcp_proto", "session", mcp(0, init, ready, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "now", "arguments": {"argv": ["ls", "-l"], "env": {"A": "\u00e9"}, "timeout_s": 5}}},
    {"jsonrpc": "2.0", "id": "s-3", "method": "tools/call", "params": {"name": "later", "arguments": {"code": "print(1)"}}},
    {"jsonrpc": "2.0", "id": 4, "method": "ping"}))
put("mcp_proto", "session-pieces-crlf", mcp(3 | 32, init, ready,
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "later"}},
    {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "later", "arguments": None}}, end="\r\n"))
put("mcp_proto", "cancel", mcp(7, init, ready,
    {"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {"name": "later"}},
    {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "later"}},
    {"jsonrpc": "2.0", "id": "c", "method": "ping"},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c", "reason": "user"}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "9"}},
    {"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {"name": "now"}}))
put("mcp_proto", "before-init", mcp(0, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 2, "method": "ping"}, ready,
    dict(init, params=dict(init["params"], protocolVersion="1999-01-01")),
    dict(init, id=3), {"jsonrpc": "2.0", "id": 4, "method": "resources/list"}))
put("mcp_proto", "errors", mcp(0, "not json", "[]", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "7",
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', '{"jsonrpc":"2.0","id":true,"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}', '{"jsonrpc":"1.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}', '{"jsonrpc":"2.0","id":1,"method":"ping","x":1}',
    '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', '{"jsonrpc":"2.0","id":1,"method":"ping"/**/}',
    '{"jsonrpc":"2.0","id":"a\\u0000b","method":"ping"}', '{"jsonrpc":"2.0","id":2,"method":"x","params":{"s":"\\ud800"}}',
    '{"jsonrpc":"2.0","id":3,"method":"x","params":{"s":"\\udc00\\ud83d\\ude00"}}',
    '{"jsonrpc":"2.0","id":1,"result":{}}', '{"jsonrpc":"2.0","method":"x","params":5}',
    '{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}', '{"jsonrpc":"2.0","id":-0,"method":"ping"}'))
put("mcp_proto", "call-errors", mcp(0, init, {"jsonrpc": "2.0", "id": 1, "method": "tools/call"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 5}},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "nope"}},
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "now", "arguments": [1]}},
    {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"cursor": 1}}))
put("mcp_proto", "bytes", bytes([0]) + b'{"jsonrpc":"2.0","id":"\xc3\xa9","method":"p\xffing"}\n\x00\n'
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"later"}}\n\xed\xa0\x80\n\xc3')
put("mcp_proto", "too-long", mcp(16 | 5, init, "x" * 200,
    {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "y" * 65 + "\r", "z" * 64))
put("mcp_proto", "deep", mcp(0, init, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"now","arguments":{"a":'
    + "[" * 61 + "]" * 61 + "}}}", '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"now","arguments":{"a":'
    + "[" * 62 + "]" * 62 + "}}}", "[" * 3000))

# --- trail_chain: a trail file's bytes ---------------------------------------
def chain(records, prev=None):
    """records (dicts) as chained lines, the first after prev (a line's bytes, or None: the file's start)."""
    import hashlib
    lines = []
    seq = 1
    last = prev
    for r in records:
        h = hashlib.sha256(last).hexdigest() if last is not None else "0" * 64
        line = json.dumps(dict(r, seq=seq, prev=h), separators=(",", ":")).encode()
        lines.append(line)
        last = line
        seq += 1
    return lines


trail = chain([{"time": "2026-11-30T00:00:0%dZ" % i, "event": e, "policy": "p", "run": "0123456789abcdef"}
               for i, e in enumerate(["start", "denied", "denied", "exit"])])
put("trail_chain", "chained", b"\n".join(trail) + b"\n")
old = [b'{"time":"2026-11-01T00:00:00Z","event":"start","policy":"old"}', b'{"event":"exit","policy":"old"}']
put("trail_chain", "older-first", b"\n".join(old + chain([{"event": "start"}, {"event": "exit"}], prev=old[-1])) + b"\n")
put("trail_chain", "cut", b"\n".join(trail) + b"\n" + trail[0][:20])
put("trail_chain", "forged", b"\n".join([trail[0], trail[1].replace(b"denied", b"allowed"), trail[2], trail[3]]) + b"\n")
put("trail_chain", "removed", b"\n".join([trail[0], trail[2], trail[3]]) + b"\n")
put("trail_chain", "bad-links", b'{"seq":1}\n{"seq":0,"prev":"x"}\n{"seq":"1","prev":1}\n\n[]\n{"seq":1,"seq":1,"prev":"'
    + b"0" * 64 + b'"}\n')
