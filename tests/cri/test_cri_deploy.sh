# The Kubernetes node installer (deploy/kubernetes/node-installer.sh)
# against the harness's containerd: the script installs haven on a node
# whose root is a directory of the test (HOST_ROOT), registers a handler
# per shipped policy in that node's containerd configuration (a copy of
# the harness's), restarts containerd as the DaemonSet would (here: the
# harness's containerd, started again on the node's file), labels the
# node through a stand-in API server; a pod under the installed handler
# runs under its policy; the uninstall gives the configuration back byte
# for byte, removes the files and the label, and restarts again.

DEPLOY_INSTALLER=$here_lib/../../deploy/kubernetes/node-installer.sh

# deploy_restart_script FILE: a script, `FILE CONFIG`, that stops the
# harness's containerd and starts it again in its namespaces on CONFIG,
# as `systemctl restart containerd` does on a node (the DaemonSet's
# HAVEN_RESTART), and returns once its CRI service answers.  The new pid
# goes where run.sh's stop_containerd finds it.
deploy_restart_script() {
  cat > "$1" << EOF
#!/bin/bash
set -u
config=\$1
pid=\$(cat "$CTRD_DIR/containerd.pid")
kill -TERM "\$pid" 2> /dev/null
for i in \$(seq 100); do kill -0 "\$pid" 2> /dev/null || break; sleep 0.1; done
kill -KILL "\$pid" 2> /dev/null
env $(sanitizer_env) "$(cri_policy_path_env)" nsenter -t "\$(cat "$NS_PID_FILE")" -m -n --wd="$CTRD_DIR" containerd --config "\$config" \\
  >> "$CTRD_DIR/containerd.log" 2>&1 < /dev/null &
echo \$! > "$CTRD_DIR/containerd.pid"
for i in \$(seq 300); do
  node "$CRI_JS" "$CRI_SOCK" Version > /dev/null 2>&1 && exit 0
  sleep 0.1
done
echo "containerd did not come back on \$config" >&2
exit 1
EOF
  chmod 755 "$1"
}

# A stand-in for the API server's node endpoint: records each request
# (method, path, content type, authorization, body) as a JSON line and
# answers 200; its port in FILE.port.
# ADDR (default 127.0.0.1): where it listens; another address is taken to
# be in containerd's network namespace (where the pods' bridge is).
deploy_api_standin() {
  local launch=()
  [ "${2:-127.0.0.1}" = 127.0.0.1 ] || launch=(nsenter -t "$(cat "$NS_PID_FILE")" -n)
  "${launch[@]}" python3 - "$1" "${2:-127.0.0.1}" << 'EOF' &
import http.server, json, sys
log = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_PATCH(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        with open(log, "a") as f:
            f.write(json.dumps({"method": "PATCH", "path": self.path, "type": self.headers.get("Content-Type"),
                                "auth": self.headers.get("Authorization"), "body": body}) + "\n")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *a):
        pass
s = http.server.HTTPServer((sys.argv[2], 0), H)
open(log + ".port.new", "w").write(str(s.server_address[1]))
import os
os.rename(log + ".port.new", log + ".port")
s.serve_forever()
EOF
  DEPLOY_API_PID=$!
  defer "kill $DEPLOY_API_PID"
  wait_for 10 test -s "$1.port" || fail "the stand-in API server did not start"
}

# deploy_installer NODE ACTION: the installer as the DaemonSet runs it,
# with the node's root at NODE: a mount namespace of its own where the
# node's /usr (this machine's, read-only), /proc and /dev are bound, so
# that its chroot into the node runs the node's copy of haven.  Called
# in a subshell ($(...) or &), which it replaces: the pid of `&` is then
# the installer's own, for SIGTERM.
deploy_installer() {
  local node=$1 action=$2
  # shellcheck disable=SC2016 # $1.. are the inner shell's
  exec unshare --mount --propagation private bash -c '
    set -e
    node=$1; shift
    mount --bind /usr "$node/usr" && mount -o remount,bind,ro "$node/usr"
    mount --bind /proc "$node/proc"
    mount --bind /dev "$node/dev"
    exec "$@"' sh "$node" env HOST_ROOT="$node" HAVEN_DIR="$DEPLOY_HAVEN_DIR" HAVEN_PAYLOAD="$DEPLOY_PAYLOAD" \
    CONTAINERD_CONFIG=/etc/containerd/config.toml HAVEN_RESTART="$DEPLOY_RESTART $node/etc/containerd/config.toml" \
    NODE_NAME=node-1 KUBE_API="http://127.0.0.1:$(cat "$PWD/api.log.port")" KUBE_SA_DIR="$PWD/sa" \
    "$DEPLOY_INSTALLER" "$action"
}

# deploy_node NODE ORIG: the node's root at NODE (the merged-/usr links,
# empty mount points, a copy of the configuration the harness's
# containerd runs on, also kept at ORIG), the installer's payload
# (DEPLOY_PAYLOAD), where haven goes on the node (DEPLOY_HAVEN_DIR), a
# service-account token (./sa), the restart script (DEPLOY_RESTART), and
# the harness's containerd put back on its own file when the test ends.
deploy_node() {
  local node=$1 orig=$2 p
  mkdir -p "$node/usr" "$node/proc" "$node/dev" "$node/etc/containerd" "$node/tmp"
  for p in bin sbin lib lib64; do [ -e "/$p" ] && ln -s "usr/$p" "$node/$p"; done
  # The node's configuration before haven: the harness's without the
  # handlers it registered itself (blocks `haven install` marked, each
  # with the blank line before it), which the installer would otherwise
  # take over under the same names and then remove.
  python3 - "$CTRD_DIR/config.toml" > "$node/etc/containerd/config.toml" << 'EOF'
import re, sys
text = open(sys.argv[1]).read()
sys.stdout.write(re.sub(r'\n# >>> haven runtime handler "[^"\n]*"[^\n]*\n.*?# <<< haven runtime handler "[^"\n]*"[^\n]*\n', '', text, flags=re.S))
EOF
  grep -q '^# >>> haven' "$node/etc/containerd/config.toml" && fail "the harness's handlers are still in the node's configuration"
  cp "$node/etc/containerd/config.toml" "$orig"
  # What the installer image carries (images/node-installer/build.sh).
  DEPLOY_PAYLOAD=$PWD/payload
  mkdir -p "$DEPLOY_PAYLOAD/bin" "$DEPLOY_PAYLOAD/policies"
  cp "$RUNTIME" "$DEPLOY_PAYLOAD/bin/haven-runc"
  cp "$here_lib"/../../policies/*.yaml "$DEPLOY_PAYLOAD/policies/"
  # Where haven goes on the node, as the node names it: a path that the
  # harness's containerd (which sees this machine's root, not the node
  # directory) also finds, through a link to the node's copy.
  DEPLOY_HAVEN_DIR=$PWD/haven
  mkdir -p "$node$PWD"
  ln -s "$node$DEPLOY_HAVEN_DIR" "$DEPLOY_HAVEN_DIR"
  mkdir -p "$PWD/sa"
  echo "test-token-$$" > "$PWD/sa/token"
  : > "$PWD/sa/ca.crt"
  DEPLOY_RESTART=$PWD/restart-containerd.sh
  deploy_restart_script "$DEPLOY_RESTART"
  # Whatever happens, the harness's containerd ends on its own file
  # again (after the pod's removal: deferred first, so it runs last).
  defer "$DEPLOY_RESTART $CTRD_DIR/config.toml"
}

test_cri_deploy_node_installer() {
  local node=$PWD/node orig=$PWD/config.orig out p status
  deploy_node "$node" "$orig"
  deploy_api_standin "$PWD/api.log"

  # As the DaemonSet's pod: `run` installs, labels, and waits for SIGTERM.
  deploy_installer "$node" run > "$PWD/run.log" 2>&1 &
  local runner=$!
  defer "kill $runner"
  wait_for 120 grep -q 'label haven.run/runtime set to "ready"' "$PWD/run.log" \
    || fail "node-installer.sh run did not get to the label: $(tail -5 "$PWD/run.log")"
  kill -0 $runner 2> /dev/null || fail "node-installer.sh run exited after installing: $(tail -5 "$PWD/run.log")"
  out=$(cat "$PWD/run.log")
  local bin=$node$DEPLOY_HAVEN_DIR/bin
  cmp -s "$RUNTIME" "$bin/haven-runc" || fail "no copy of haven-runc at $bin: $out"
  assert_eq haven-runc "$(readlink "$bin/haven")" "the haven name on the node"
  for p in "$DEPLOY_PAYLOAD"/policies/*.yaml; do
    cmp -s "$p" "$bin/policies/$(basename "$p")" || fail "policy $(basename "$p") not on the node"
    p=$(basename "$p" .yaml)
    grep -q "^# >>> haven runtime handler \"haven-$p\"" "$node/etc/containerd/config.toml" \
      || fail "no handler haven-$p in the node's configuration"
    assert_eq "$DEPLOY_HAVEN_DIR/handlers/containerd-haven-$p" \
      "$(containerd --config "$node/etc/containerd/config.toml" config dump 2> /dev/null \
        | awk -v h="[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.haven-$p.options]" \
          '$0 ~ /^ *\[/ {inside = ($1 == h)} inside && $1 == "BinaryName" {gsub(/"/, "", $3); print $3}')" \
      "the BinaryName containerd reads for haven-$p (the node's path)"
  done
  assert_contains "$out" "containerd's configuration changed" "the installer's restart"
  assert_eq "$node/etc/containerd/config.toml" \
    "$(tr '\0' ' ' < "/proc/$(cat "$CTRD_DIR/containerd.pid")/cmdline" | awk '{print $NF}')" \
    "the configuration the restarted containerd runs on"
  # The label, through the API with the service account's token.
  out=$(tail -1 "$PWD/api.log")
  assert_eq /api/v1/nodes/node-1 "$(jq -r .path <<< "$out")" "the node the label went to"
  assert_eq application/merge-patch+json "$(jq -r .type <<< "$out")" "the label's patch type"
  assert_eq "Bearer test-token-$$" "$(jq -r .auth <<< "$out")" "the label request's token"
  assert_eq '{"metadata":{"labels":{"haven.run/runtime":"ready"}}}' "$(jq -r .body <<< "$out")" "the label patch"

  # A second install (the DaemonSet's pod restarted) changes nothing and
  # restarts nothing.
  cp "$node/etc/containerd/config.toml" "$PWD/config.installed"
  out=$(deploy_installer "$node" install 2>&1) || fail "node-installer.sh install, again: $out"
  cmp -s "$PWD/config.installed" "$node/etc/containerd/config.toml" || fail "a second install changed the configuration"
  [[ $out != *"configuration changed"* ]] || fail "a second install restarted containerd: $out"

  # A pod under the installed handler runs under its policy (default:
  # seccomp filter, no new privileges, read-only root), where the same
  # pod under the plain haven handler has none of them (test_cri_pods.sh).
  run_pod deploy-default haven-default
  assert_eq haven "$(runtime_of "$POD_ID")" "the runtime of the pod's sandbox container"
  create_container box sh -c 'while :; do sleep 1; done'
  start_container "$CID"
  wait_for 20 container_is "$CID" CONTAINER_RUNNING || fail "the container is $(container_state "$CID"), not running"
  assert_eq haven "$(runtime_of "$CID")" "the runtime of the container"
  OUT=$(cri_exec "$CID" cat /proc/self/status 2>&1) || fail "ExecSync cat /proc/self/status: $OUT"
  status=$OUT
  assert_eq 2 "$(awk '$1 == "Seccomp:" {print $2}' <<< "$status")" "Seccomp of the exec'd process under haven-default"
  assert_eq 1 "$(awk '$1 == "NoNewPrivs:" {print $2}' <<< "$status")" "NoNewPrivs under haven-default"
  OUT=$(cri_exec "$CID" sh -c 'touch /deploy-probe 2>&1; echo rc=$?' 2>&1)
  assert_contains "$OUT" "Read-only file system" "writing the root under haven-default"
  pod_remove "$POD_ID" || fail "removing the pod"

  # The uninstall: label removed, configuration back byte for byte,
  # containerd restarted on it, the node's files gone.
  # The pod deleted: SIGTERM, and `run` undoes it all and exits 0.
  kill -TERM $runner
  wait_for 120 eval '! kill -0 $runner' || fail "node-installer.sh run still runs after SIGTERM: $(tail -5 "$PWD/run.log")"
  wait $runner
  status=$?
  out=$(cat "$PWD/run.log")
  assert_eq 0 "$status" "the exit status of node-installer.sh run after SIGTERM ($(tail -3 <<< "$out"))"
  assert_contains "$out" "stopping: uninstalling" "what run says on SIGTERM"
  cmp "$orig" "$node/etc/containerd/config.toml" || fail "the node's configuration is not given back byte for byte"
  assert_contains "$(sed -n '/stopping: uninstalling/,$p' <<< "$out")" "containerd's configuration changed" "the uninstaller's restart"
  [ ! -e "$node$DEPLOY_HAVEN_DIR" ] || fail "left on the node: $(find "$node$DEPLOY_HAVEN_DIR" | head -5 | tr '\n' ' ')"
  out=$(tail -1 "$PWD/api.log")
  assert_eq '{"metadata":{"labels":{"haven.run/runtime":null}}}' "$(jq -r .body <<< "$out")" "the unlabel patch"
  OUT=$(cri RunPodSandbox "$(jq -n --slurpfile c "pod-deploy-default.json" '{config: $c[0], runtime_handler: "haven-default"}')" 2>&1) \
    && fail "a pod under haven-default started after the uninstall: $OUT"
  assert_contains "$OUT" "haven-default" "RunPodSandbox's refusal after the uninstall"
}

# The installer image itself (images/node-installer/build.sh), as the
# DaemonSet runs it: a privileged container of a pod under runc, the
# node's root at /host, its token where kubelet mounts one.  Built before
# the test's clock starts (the Debian part is downloaded once, cached).
DEPLOY_IMAGE_TAR=$WORK/node-installer.oci.tar
TEST_PREPARE_cri_deploy_installer_image=deploy_build_image
TEST_TIMEOUT_cri_deploy_installer_image=300
deploy_build_image() {
  command -v mmdebstrap > /dev/null || skip "mmdebstrap is not installed (it builds the installer image)"
  local out
  out=$(HAVEN_RUNC="$RUNTIME" "$here_lib/../../images/node-installer/build.sh" --tag docker.io/haven/node-installer:test \
    --out "$DEPLOY_IMAGE_TAR" 2>&1) || skip "images/node-installer/build.sh failed: $(tail -3 <<< "$out" | tr '\n' ' ')"
}

# deploy_label_is VALUE-JSON: the last request to the stand-in API server
# set the node's label to VALUE.
deploy_label_is() {
  [ "$(tail -1 "$PWD/api.log" 2> /dev/null | jq -r .body)" = "{\"metadata\":{\"labels\":{\"haven.run/runtime\":$1}}}" ]
}

test_cri_deploy_installer_image() {
  local node=$PWD/node orig=$PWD/config.orig out cid pid watcher
  [ -s "$DEPLOY_IMAGE_TAR" ] || fail "no installer image at $DEPLOY_IMAGE_TAR"
  out=$(ctrd images import "$DEPLOY_IMAGE_TAR" 2>&1) || fail "ctr images import: $out"
  defer "ctrd images rm docker.io/haven/node-installer:test"
  deploy_node "$node" "$orig"
  # containerd cannot be restarted from inside its own container here: the
  # container's HAVEN_RESTART asks, and this loop restarts it on the
  # node's file (as systemd would on a node) and answers.
  (while :; do
    if [ -e "$node/.restart" ]; then
      "$DEPLOY_RESTART" "$node/etc/containerd/config.toml" >> "$PWD/restarts.log" 2>&1
      rm -f "$node/.restart"
    fi
    sleep 0.2
  done) &
  watcher=$!
  defer "kill $watcher"

  # A privileged pod, as the DaemonSet's (its sandbox privileged too:
  # containerd refuses a privileged container in a pod that is not).
  POD_NAME=installer
  pod_config installer
  jq '.linux.security_context.privileged = true' pod-installer.json > pod-installer.json.new && mv pod-installer.json.new pod-installer.json
  OUT=$(cri RunPodSandbox "$(jq -n --slurpfile c pod-installer.json '{config: $c[0], runtime_handler: "runc"}')" 2>&1) \
    || fail "RunPodSandbox installer: $OUT"
  POD_ID=$(json .pod_sandbox_id)
  echo "$POD_ID $POD_CGROUP" >> "$WORK/pods"
  defer "pod_remove $POD_ID"
  # The API server, on the pods' bridge (the gateway's address).
  deploy_api_standin "$PWD/api.log" 0.0.0.0
  # An ASan build of haven-runc run by the installer in its container
  # (chrooted into the node, whose /proc is the host's, not the
  # container's pid namespace): LeakSanitizer cannot find its threads
  # there and fails the run; the leaks are the other suites' to find.
  local asan=
  [ -z "$(sanitizer_env)" ] || asan=detect_leaks=0
  CTR_EXTRA=$(jq -n --arg node "$node" --arg hd "$DEPLOY_HAVEN_DIR" --arg sa "$PWD/sa" --arg asan "$asan" \
    --arg api "http://$CNI_GATEWAY:$(cat "$PWD/api.log.port")" '{
      image: {image: "docker.io/haven/node-installer:test"},
      envs: ([{key: "HOST_ROOT", value: "/host"}, {key: "HAVEN_DIR", value: $hd},
             {key: "CONTAINERD_CONFIG", value: "/etc/containerd/config.toml"},
             {key: "HAVEN_RESTART", value: "touch /host/.restart && while [ -e /host/.restart ]; do sleep 0.2; done"},
             {key: "NODE_NAME", value: "node-1"}, {key: "KUBE_API", value: $api}]
            + (if $asan == "" then [] else [{key: "ASAN_OPTIONS", value: $asan}] end)),
      mounts: [{container_path: "/host", host_path: $node},
               {container_path: "/host/usr", host_path: "/usr", readonly: true},
               {container_path: "/host/proc", host_path: "/proc"},
               {container_path: "/host/dev", host_path: "/dev"},
               {container_path: "/var/run/secrets/kubernetes.io/serviceaccount", host_path: $sa, readonly: true}],
      linux: {security_context: {privileged: true}}
    }')
  create_container installer
  cid=$CID
  start_container "$cid"
  wait_for 120 deploy_label_is '"ready"' \
    || fail "the installer did not label the node: $(tail -5 "$POD_LOGS/installer.log" 2> /dev/null)"
  assert_eq CONTAINER_RUNNING "$(container_state "$cid")" "the installer's state once installed"
  cmp -s "$RUNTIME" "$node$DEPLOY_HAVEN_DIR/bin/haven-runc" || fail "the image's haven-runc is not on the node"
  grep -q '^# >>> haven runtime handler "haven-default"' "$node/etc/containerd/config.toml" \
    || fail "no handler haven-default in the node's configuration"
  assert_eq "Bearer test-token-$$" "$(tail -1 "$PWD/api.log" | jq -r .auth)" "the token the image's curl sent"
  assert_eq "$node/etc/containerd/config.toml" \
    "$(tr '\0' ' ' < "/proc/$(cat "$CTRD_DIR/containerd.pid")/cmdline" | awk '{print $NF}')" \
    "the configuration the restarted containerd runs on"

  # A pod under the handler the image installed.
  local installer_pod=$POD_ID installer_name=$POD_NAME
  CTR_EXTRA=
  run_pod deploy-image haven-default
  assert_eq haven "$(runtime_of "$POD_ID")" "the runtime of a pod under haven-default"
  # Its sandbox process, seen from the host, under the policy.
  OUT=$(cri PodSandboxStatus "{\"pod_sandbox_id\": \"$POD_ID\", \"verbose\": true}" 2>&1) || fail "PodSandboxStatus: $OUT"
  pid=$(json '.info.info | fromjson | .pid')
  assert_eq 2 "$(awk '$1 == "Seccomp:" {print $2}' "/proc/$pid/status")" "Seccomp of the pod's sandbox process under haven-default"
  assert_eq 1 "$(awk '$1 == "NoNewPrivs:" {print $2}' "/proc/$pid/status")" "NoNewPrivs of the pod's sandbox process"
  pod_remove "$POD_ID" || fail "removing the haven-default pod"
  POD_ID=$installer_pod POD_NAME=$installer_name

  # The pod deleted: SIGTERM to the container's init (what StopContainer
  # sends first); it uninstalls (asking for a restart) and exits 0.
  OUT=$(cri ContainerStatus "{\"container_id\": \"$cid\", \"verbose\": true}" 2>&1) || fail "ContainerStatus: $OUT"
  pid=$(json '.info.info | fromjson | .pid')
  [ "${pid:-0}" -gt 1 ] || fail "no pid for the installer container"
  kill -TERM "$pid"
  wait_for 120 container_is "$cid" CONTAINER_EXITED \
    || fail "the installer is $(container_state "$cid") after SIGTERM: $(tail -5 "$POD_LOGS/installer.log" 2> /dev/null)"
  OUT=$(cri ContainerStatus "{\"container_id\": \"$cid\"}" 2>&1)
  assert_eq 0 "$(json .status.exit_code)" "the installer's exit status after SIGTERM ($(tail -3 "$POD_LOGS/installer.log" 2> /dev/null))"
  cmp "$orig" "$node/etc/containerd/config.toml" || fail "the node's configuration is not given back byte for byte"
  [ ! -e "$node$DEPLOY_HAVEN_DIR" ] || fail "left on the node: $(find "$node$DEPLOY_HAVEN_DIR" | head -5 | tr '\n' ' ')"
  assert_eq '{"metadata":{"labels":{"haven.run/runtime":null}}}' "$(tail -1 "$PWD/api.log" | jq -r .body)" "the unlabel patch"
}
