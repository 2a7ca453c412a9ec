# Each tool through the official SDK's client: what a call answers
# (structuredContent, the text the model reads, isError) and what it did
# in the session's sandbox.

# call_step AS TOOL ARGUMENTS-JSON: a call step of a scenario.
call_step() {
  jq -cn --arg name "$1" --arg tool "$2" --argjson a "$3" '{op: "call", "as": $name, tool: $tool, arguments: $a}'
}

# steps STEP...: the STEPs (JSON objects) as a scenario's array.
steps() { jq -cs . <<< "$*"; }

TEST_PREPARE_mcp_run_command_argv=need_mcp_sdk
test_mcp_run_command_argv() {
  mcp_session "$(steps \
    "$(call_step three run_command '{"argv":["sh","-c","echo out; echo err >&2; exit 3"]}')" \
    "$(call_step stdin run_command '{"argv":["tr","a-z","A-Z"],"stdin":"shout\n"}')" \
    "$(call_step mkdir run_command '{"argv":["mkdir","-p","sub/dir"]}')" \
    "$(call_step cwd run_command '{"argv":["pwd"],"cwd":"sub/dir"}')" \
    "$(call_step missing run_command '{"argv":["no-such-program-h-mcptests"]}')" \
    "$(call_step after run_command '{"argv":["echo","still","here"]}')")" --policy offline
  call_ok three "a command that exits 3 ran"
  assert_eq 3 "$(tool_sc three exit_code)" "exit_code"
  assert_eq out "$(tool_sc three stdout)" "stdout"
  assert_eq err "$(tool_sc three stderr)" "stderr"
  assert_eq false "$(tool_sc three timed_out)" "timed_out"
  assert_eq false "$(tool_sc three stdout_truncated)" "stdout_truncated"
  assert_eq number "$(res '.results.three.result.structuredContent.duration_s | type')" "duration_s"
  # The model reads the text: the status, stdout, then stderr marked.
  local text
  text=$(tool_text three)
  assert_eq "exit status 3" "$(head -1 <<< "$text")" "the text's first line"
  assert_contains "$text" "out" "the text"
  assert_contains "$text" "--- stderr ---
err" "the text's stderr"
  call_ok stdin "stdin"
  assert_eq SHOUT "$(tool_sc stdin stdout)" "stdin reached the command"
  call_ok cwd "cwd"
  assert_eq "sub/dir" "$(tool_sc cwd stdout | grep -o 'sub/dir$')" "a relative cwd: $(tool_sc cwd stdout)"
  # A program that is not there could not be started: a tool error.
  call_refused missing "a missing program"
  assert_contains "$(tool_text missing)" "no-such-program-h-mcptests" "the missing program's text"
  call_ok after "a command after a failed one"
  assert_eq "still here" "$(tool_sc after stdout)"
}

TEST_PREPARE_mcp_run_command_arguments=need_mcp_sdk
test_mcp_run_command_arguments() {
  # Arguments that do not match the schema: a tool error naming the
  # argument (the model can correct itself), never a protocol error.
  mcp_session "$(steps \
    "$(call_step both run_command '{"argv":["true"],"command":"true"}')" \
    "$(call_step neither run_command '{}')" \
    "$(call_step notarray run_command '{"argv":"ls -l"}')" \
    "$(call_step empty run_command '{"argv":[]}')" \
    "$(call_step unknown run_command '{"argv":["true"],"bogus_arg":1}')" \
    "$(call_step badtimeout run_command '{"argv":["true"],"timeout_s":0}')" \
    "$(call_step ok run_command '{"argv":["true"]}')")" --policy offline
  local c
  for c in both neither notarray empty unknown badtimeout; do call_refused "$c" "arguments: $c"; done
  assert_contains "$(tool_text notarray)" argv "a string for argv"
  assert_contains "$(tool_text empty)" argv "an empty argv"
  assert_contains "$(tool_text unknown)" bogus_arg "an argument the schema does not have"
  assert_contains "$(tool_text badtimeout)" timeout_s "timeout_s 0"
  call_ok ok "a good call after the bad ones"
}

TEST_PREPARE_mcp_run_command_shell=need_mcp_sdk
test_mcp_run_command_shell() {
  mcp_session "$(steps \
    "$(call_step line run_command '{"command":"echo $((6 * 7)) | cat; echo to-err >&2; exit 2"}')")" --policy default
  call_ok line "a shell line under default"
  assert_eq 42 "$(tool_sc line stdout)" "the shell line's output"
  assert_eq to-err "$(tool_sc line stderr)"
  assert_eq 2 "$(tool_sc line exit_code)"
}

TEST_PREPARE_mcp_run_command_block_shell=need_mcp_sdk
test_mcp_run_command_block_shell() {
  printf 'extends: default\nprocess:\n  block_shell: true\n' > "$PWD/noshell.yaml"
  mcp_session "$(steps \
    "$(call_step line run_command '{"command":"echo hi"}')" \
    "$(call_step argvsh run_command '{"argv":["sh","-c","echo hi"]}')" \
    "$(call_step code run_code '{"language":"sh","code":"echo hi"}')" \
    "$(call_step plain run_command '{"argv":["echo","plain"]}')" \
    "$(call_step why why '{}')")" --policy "$PWD/noshell.yaml"
  # The shell line is refused before anything runs, naming the rule.
  call_refused line "a shell line under block_shell"
  assert_contains "$(tool_text line)" "block_shell" "the refusal names the rule"
  # A shell named in argv: the sandbox refuses the exec; the text says why.
  call_refused argvsh "sh in argv under block_shell"
  assert_contains "$(tool_text argvsh)" "block_shell" "the exec's refusal names the rule"
  assert_not_contains "$(tool_sc argvsh stdout)" hi "sh ran"
  call_refused code "run_code sh under block_shell"
  call_ok plain "a program that is no shell"
  assert_eq plain "$(tool_sc plain stdout)"
  # why: this session's refusals, with the rule.
  call_ok why "why"
  assert_contains "$(tool_text why)" "block_shell" "why after a blocked shell"
}

TEST_PREPARE_mcp_run_code=need_mcp_sdk
test_mcp_run_code() {
  mcp_session "$(steps \
    "$(call_step py run_code '{"language":"python","code":"import sys\nprint(sum(range(10)))\nprint(\"e\", file=sys.stderr)\nsys.exit(4)"}')" \
    "$(call_step py3stdin run_code '{"language":"python3","code":"import sys; print(sys.stdin.read().upper())","stdin":"abc"}')" \
    "$(call_step sh run_code '{"language":"sh","code":"x=5; echo $((x * 2))"}')" \
    "$(call_step bash run_code '{"language":"bash","code":"a=(1 2 3); echo ${#a[@]}"}')" \
    "$(call_step node run_code '{"language":"node","code":"console.log(6 * 7)"}')" \
    "$(call_step cobol run_code '{"language":"cobol","code":"x"}')" \
    "$(call_step nocode run_code '{"language":"sh"}')" \
    "$(call_step ls run_command '{"argv":["sh","-c","ls -A | wc -l"]}')")" --policy offline
  call_ok py "python"
  assert_eq 45 "$(tool_sc py stdout)" "python's output"
  assert_eq e "$(tool_sc py stderr)" "python's stderr"
  assert_eq 4 "$(tool_sc py exit_code)" "python's exit status"
  call_ok py3stdin "python3 with stdin"
  assert_eq ABC "$(tool_sc py3stdin stdout)"
  call_ok sh "sh"
  assert_eq 10 "$(tool_sc sh stdout)" "sh's output"
  call_ok bash "bash"
  assert_eq 3 "$(tool_sc bash stdout)" "bash's output"
  # (node is on the host: the suite's client runs on it.)
  call_ok node "node"
  assert_eq 42 "$(tool_sc node stdout)" "node's output"
  # A language it does not know: refused, listing the known ones.
  call_refused cobol "cobol"
  assert_contains "$(tool_text cobol)" python "the languages known"
  call_refused nocode "no code"
  assert_contains "$(tool_text nocode)" code "the missing argument"
  # The code ran as an argument: no file left in the workspace.
  assert_eq 0 "$(tool_sc ls stdout)" "files left in the workspace by run_code"
}

TEST_PREPARE_mcp_files=need_mcp_sdk
test_mcp_files() {
  local b64
  b64=$({ printf 'bin\000\377\376'; head -c 1000 /dev/zero | tr '\0' x; } | base64 -w0)
  mcp_session "$(steps \
    "$WHERE_STEP" \
    "$(call_step write write_file '{"path":"dir/hello.txt","content":"hello from the model\nline two\n"}')" \
    "$(call_step read read_file '{"path":"dir/hello.txt"}')" \
    "$(call_step cat run_command '{"argv":["cat","dir/hello.txt"]}')" \
    "$(call_step made run_command '{"argv":["sh","-c","echo made by a command > made.txt; mkdir -p d2; : > d2/empty"]}')" \
    "$(call_step readmade read_file '{"path":"made.txt"}')" \
    "$(call_step writeb64 write_file "{\"path\":\"bin.dat\",\"content\":\"$b64\",\"encoding\":\"base64\"}")" \
    "$(call_step readbin read_file '{"path":"bin.dat"}')" \
    "$(call_step list list_files '{}')" \
    "$(call_step listdir list_files '{"path":"dir"}')" \
    "$(call_step missing read_file '{"path":"no/such/file"}')")" --policy offline
  sandbox_of_session
  call_ok write "write_file"
  assert_contains "$(tool_text write)" 30 "the bytes written"
  call_ok read "read_file"
  assert_eq "hello from the model
line two" "$(tool_text read)" "the file read back"
  # The structured result holds what the text says (for clients that give
  # the model structuredContent instead).
  assert_eq "$(tool_text read)" "$(tool_sc read text)" "read_file's structuredContent.text"
  assert_eq "30 false" "$(tool_sc read size) $(tool_sc read truncated)" "read_file's size and truncated"
  assert_eq 30 "$(tool_sc write size)" "write_file's structuredContent.size"
  call_ok cat "cat"
  assert_eq "hello from the model
line two" "$(tool_sc cat stdout)" "a command reads what write_file wrote"
  call_ok readmade "read_file of a command's file"
  assert_eq "made by a command" "$(tool_text readmade)"
  call_ok writeb64 "write_file base64"
  # Bytes that are not UTF-8: refused, saying the size and how to read them.
  call_refused readbin "read_file of a binary file"
  assert_contains "$(tool_text readbin)" 1006 "the binary file's size"
  assert_contains "$(tool_text readbin)" base64 "how to read a binary file"
  call_ok list "list_files"
  local list
  list=$(tool_text list)
  local name
  for name in dir made.txt bin.dat d2; do
    grep -qE "(^|[[:space:]])$name/?\$" <<< "$list" || fail "list_files: no $name in: $list"
  done
  grep -E "(^|[[:space:]])made.txt\$" <<< "$list" | grep -qw 18 || fail "list_files: made.txt's size (18) not said: $list"
  grep -E "(^|[[:space:]])dir/?\$" <<< "$list" | grep -qiE "dir" || fail "list_files: dir's type: $list"
  assert_eq "18 file" "$(res '.results.list.result.structuredContent.entries[] | select(.name == "made.txt") | "\(.size) \(.type)"')" \
    "list_files' structuredContent for made.txt"
  call_ok listdir "list_files dir"
  assert_contains "$(tool_text listdir)" hello.txt "list_files of a directory"
  assert_not_contains "$(tool_text listdir)" made.txt "list_files of a directory"
  call_refused missing "read_file of a missing file"
}

TEST_PREPARE_mcp_outside_workspace=need_mcp_sdk
test_mcp_outside_workspace() {
  # A secret on the host, beside nothing the sandbox should reach.
  echo "h-mcptests-host-secret" > "$PWD/secret"
  chmod 0600 "$PWD/secret"
  mcp_session "$(steps \
    "$WHERE_STEP" \
    "$(call_step link run_command "{\"argv\":[\"sh\",\"-c\",\"ln -s $PWD/secret out; ln -s /etc/shadow shadow; ln -s .. up\"]}")" \
    "$(call_step dotdot read_file '{"path":"../x"}')" \
    "$(call_step dotdot2 read_file '{"path":"a/../../secret"}')" \
    "$(call_step abs read_file "{\"path\":\"$PWD/secret\"}")" \
    "$(call_step etc read_file '{"path":"/etc/passwd"}')" \
    "$(call_step viaLink read_file '{"path":"out"}')" \
    "$(call_step viaShadow read_file '{"path":"shadow"}')" \
    "$(call_step viaUp read_file '{"path":"up/x"}')" \
    "$(call_step writeOut write_file '{"path":"../h-mcptests-escaped","content":"x"}')" \
    "$(call_step writeLink write_file '{"path":"up/h-mcptests-escaped","content":"x"}')" \
    "$(call_step listOut list_files '{"path":".."}')" \
    "$(call_step listUp list_files '{"path":"up"}')" \
    "$(call_step writeFileLink write_file '{"path":"out","content":"overwritten"}')" \
    "$(call_step why why '{"limit":50}')")" --policy offline
  call_ok link "making the links"
  assert_eq 0 "$(tool_sc link exit_code)" "making the links: $(tool_sc link stderr)"
  local c
  for c in dotdot dotdot2 abs etc viaLink viaShadow viaUp writeOut writeLink listOut listUp; do
    call_refused "$c" "a path outside the workspace ($c)"
    assert_not_contains "$(tool_text "$c")" "h-mcptests-host-secret" "$c"
    assert_not_contains "$(tool_text "$c")" "root:" "$c"
  done
  # A write to a link that leads out: refused, or it replaced the link;
  # the host's file is untouched either way.
  assert_eq h-mcptests-host-secret "$(cat "$PWD/secret")" "the host file a link in the workspace names"
  sandbox_of_session
  [ ! -e "$(dirname "$WS")/h-mcptests-escaped" ] && [ ! -e "$(dirname "$(dirname "$WS")")/h-mcptests-escaped" ] \
    || fail "write_file wrote outside the workspace $WS"
  # why lists the session's own refusals: a path outside the workspace.
  call_ok why "why"
  assert_contains "$(tool_text why)" "../x" "why names the refused path"
}

TEST_PREPARE_mcp_workspace_persists=need_mcp_sdk
test_mcp_workspace_persists() {
  mcp_session "$(steps \
    "$WHERE_STEP" \
    "$(call_step one run_command '{"command":"echo 1 > counter; export GONE=1; cd /tmp"}')" \
    "$(call_step two run_command '{"command":"echo $(( $(cat counter) + 1 )) > counter; cat counter; echo \"gone=${GONE:-}\"; pwd"}')" \
    "$(call_step py run_code '{"language":"python3","code":"open(\"from_py\",\"w\").write(\"p\")"}')" \
    "$(call_step three read_file '{"path":"from_py"}')" \
    "$(call_step bg run_command '{"command":"(sleep 2; echo late > late.txt) > /dev/null 2>&1 &"}')" \
    '{"op":"sleep","ms":3500}' \
    "$(call_step late read_file '{"path":"late.txt"}')")" --policy default
  sandbox_of_session
  call_ok two "the second command"
  assert_eq "2
gone=
$WS" "$(tool_sc two stdout)" "files persist, shell state does not"
  call_ok three "read_file"
  assert_eq p "$(tool_text three)" "a file run_code wrote"
  # A process a call left behind runs on in the sandbox (it is a terminal).
  call_ok late "read_file of what a background process wrote"
  assert_eq late "$(tool_text late)"
}

TEST_PREPARE_mcp_env=need_mcp_sdk
test_mcp_env() {
  mcp_session "$(steps \
    "$(call_step pass run_command '{"argv":["sh","-c","echo $LANG"],"env":{"LANG":"C.UTF-8"}}')" \
    "$(call_step refused run_command '{"argv":["sh","-c","echo ${H_MCPTESTS_SECRET:-unset}"],"env":{"H_MCPTESTS_SECRET":"s3cr3t"}}')" \
    "$(call_step badname run_command '{"argv":["true"],"env":{"1BAD=":"x"}}')" \
    "$(call_step why why '{}')")" --policy offline
  call_ok pass "a variable the policy passes"
  assert_eq C.UTF-8 "$(tool_sc pass stdout)"
  # A variable the policy's env rules drop: refused, naming the rule.
  call_refused refused "a variable the policy does not pass"
  assert_contains "$(tool_text refused)" H_MCPTESTS_SECRET "the refusal names the variable"
  assert_contains "$(tool_text refused)" env "the refusal names the rule"
  assert_not_contains "$(tool_text refused)" s3cr3t "the refusal"
  call_refused badname "a bad variable name"
  call_ok why "why"
  assert_contains "$(tool_text why)" H_MCPTESTS_SECRET "why after a refused variable"
  # offline keeps no trail: said, rather than an empty list.
  assert_contains "$(tool_text why)" trail "why under a policy without a trail"
}

TEST_PREPARE_mcp_truncation=need_mcp_sdk
test_mcp_truncation() {
  mcp_session "$(steps \
    "$(call_step big run_command '{"argv":["sh","-c","head -c 100000 /dev/zero | tr \"\\0\" a; head -c 5000 /dev/zero | tr \"\\0\" b >&2"]}')" \
    "$(call_step small run_command '{"argv":["echo","small"]}')" \
    "$(call_step write write_file '{"path":"big.txt","content":"'"$(head -c 3000 /dev/zero | tr '\0' c)"'"}')" \
    "$(call_step readbig read_file '{"path":"big.txt"}')")" --policy offline --max-output 2048
  call_ok big "a command with much output"
  assert_eq true "$(tool_sc big stdout_truncated)" "stdout_truncated"
  assert_eq true "$(tool_sc big stderr_truncated)" "stderr_truncated"
  local n
  n=$(res '.results.big.result.structuredContent.stdout | length')
  [ "$n" -le 2048 ] && [ "$n" -ge 1024 ] || fail "stdout kept $n bytes of 100000 with --max-output 2048"
  n=$(res '.results.big.result.structuredContent.stderr | length')
  [ "$n" -le 2048 ] || fail "stderr kept $n bytes with --max-output 2048"
  [ "$(tool_text big | wc -c)" -lt 8000 ] || fail "the text is $(tool_text big | wc -c) bytes"
  assert_contains "$(tool_text big)" "truncated" "the text says the output was truncated"
  call_ok small "a small output"
  assert_eq false "$(tool_sc small stdout_truncated)"
  assert_not_contains "$(tool_text small)" truncated "a small output's text"
  call_ok readbig "read_file of a file over --max-output"
  assert_contains "$(tool_text readbig)" truncated "read_file says it truncated"
  [ "$(tool_text readbig | wc -c)" -lt 3000 ] || fail "read_file gave $(tool_text readbig | wc -c) bytes with --max-output 2048"
}

TEST_PREPARE_mcp_timeout=need_mcp_sdk
test_mcp_timeout() {
  mcp_session "$(steps \
    "$WHERE_STEP" "$NOTE_STEP" \
    "$(call_step slow run_command '{"argv":["sh","-c","echo started; sleep 30; echo never"],"timeout_s":2}')" \
    "$(call_step after run_command '{"argv":["echo","next"]}')" \
    '{"op":"host","as":"left","cmd":"here=$MCP_HERE; source \"$MCP_HERE/../service/lib.sh\"; id=$(jq -r .note.stdout \"$MCP_RESULTS\"); for p in $(sandbox_pids $id); do tr \"\\0\" \" \" < /proc/$p/cmdline; echo; done"}' \
    "$(call_step why why '{}')")" --policy offline
  call_ok slow "a command past its timeout ran"
  assert_eq true "$(tool_sc slow timed_out)" "timed_out"
  assert_eq started "$(tool_sc slow stdout)" "the output before the timeout"
  local d
  d=$(tool_sc slow duration_s)
  awk -v d="$d" 'BEGIN { exit !(d >= 1.5 && d < 10) }' || fail "a 2 s timeout took $d s"
  assert_contains "$(head -1 <<< "$(tool_text slow)")" "timed out" "the text says it timed out"
  [ "$(res '.results.slow.elapsed_ms')" -lt 15000 ] || fail "the call took $(res .results.slow.elapsed_ms) ms"
  call_ok after "a call after a timeout"
  host_ok left "the sandbox's processes"
  assert_not_contains "$HOST_OUT" "sleep 30" "the timed-out command's processes"
  call_ok why "why"
  assert_contains "$(tool_text why)" "time" "why after a time limit"
}

TEST_PREPARE_mcp_why_trail=need_mcp_sdk
test_mcp_why_trail() {
  # A policy that keeps a trail: why gives the sandbox's denials from it
  # (here a ptrace the agent profile refuses), with the rule.
  printf 'extends: offline\naudit:\n  log: %s/audit.log\n' "$PWD" > "$PWD/trail.yaml"
  local code='import ctypes, os
nr = {"x86_64": 101, "aarch64": 117}[os.uname().machine]
print(ctypes.CDLL(None).syscall(nr, 0, 0, 0, 0))'
  mcp_session "$(steps \
    "$(call_step before why '{}')" \
    "$(call_step ptrace run_code "$(jq -cn --arg c "$code" '{language: "python3", code: $c}')")" \
    "$(call_step why why '{"limit":5}')")" --policy "$PWD/trail.yaml"
  call_ok before "why before any denial"
  assert_not_contains "$(tool_text before)" ptrace "why before the denial"
  call_ok ptrace "the ptrace"
  assert_eq -1 "$(tool_sc ptrace stdout)" "ptrace in the sandbox: $(tool_sc ptrace stderr)"
  call_ok why "why"
  assert_contains "$(tool_text why)" ptrace "why after a denied ptrace"
  assert_contains "$(tool_text why)" syscalls "the rule behind the denial"
  assert_eq trail "$(res '[.results.why.result.structuredContent.denials[] | select(.what | test("ptrace")) | .source] | first')" \
    "the ptrace's denial comes from the trail: $(jq -c .results.why.result.structuredContent "$OUT")"
  grep -q '"ptrace"\|ptrace' "$PWD/audit.log" || fail "the trail has no ptrace record"
}

TEST_PREPARE_mcp_project=need_mcp_sdk
test_mcp_project() {
  # --project: the sandbox works in a project directory of the host; what
  # a call writes there stays after the session.
  mkdir -p "$PWD/proj"
  echo "from the host" > "$PWD/proj/README"
  mcp_session "$(steps \
    "$WHERE_STEP" \
    "$(call_step read read_file '{"path":"README"}')" \
    "$(call_step write write_file '{"path":"made.txt","content":"by the model\n"}')" \
    "$(call_step ls run_command '{"argv":["ls"]}')")" --policy default --project "$PWD/proj"
  call_ok where "pwd"
  assert_eq "$PWD/proj" "$(tool_sc where stdout)" "the working directory is the project"
  call_ok read "read_file in the project"
  assert_eq "from the host" "$(tool_text read)"
  call_ok write "write_file in the project"
  call_ok ls "ls"
  assert_eq "README
made.txt" "$(tool_sc ls stdout)" "the project's files"
  assert_eq "by the model" "$(cat "$PWD/proj/made.txt" 2> /dev/null)" "the file on the host after the session"
}
