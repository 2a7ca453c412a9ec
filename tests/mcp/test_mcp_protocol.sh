# The MCP lifecycle through the official SDK's client: initialize (the
# version negotiated, who answers) and tools/list (the six tools, their
# schemas).

TEST_PREPARE_mcp_initialize=need_mcp_sdk
test_mcp_initialize() {
  mcp_session '[{"op":"ping","as":"ping"},{"op":"close","as":"close"}]' --policy offline
  local latest
  latest=$(res .sdk_latest_protocol)
  [ -n "$latest" ] && [ "$latest" != null ] || fail "the SDK's latest protocol revision is unknown"
  # The SDK asks for its newest revision; haven speaks it, so answers with it.
  assert_eq "$latest" "$(res .connect.protocolVersion)" "negotiated protocolVersion"
  assert_eq haven "$(res .connect.serverVersion.name)" "serverInfo.name"
  [ -n "$(res '.connect.serverVersion.version // empty')" ] || fail "serverInfo has no version"
  assert_eq object "$(res '.connect.capabilities.tools | type')" "capabilities.tools"
  [ -n "$(res '.connect.instructions // empty')" ] || fail "the initialize result has no instructions"
  assert_eq "{}" "$(jq -c .results.ping.pong "$OUT")" "ping"
  assert_eq true "$(res '.results.close.closed')" "close"
  # Without --verbose, a session that went well says nothing on stderr.
  assert_eq "" "$(res .stderr)" "haven mcp's stderr"
  [ "$(res .exit)" != null ] || fail "haven mcp did not exit after the client closed"
}

TEST_PREPARE_mcp_tools_list=need_mcp_sdk
test_mcp_tools_list() {
  mcp_session '[{"op":"list","as":"list"}]' --policy offline
  local tools=.results.list.tools
  assert_eq "list_files read_file run_code run_command why write_file" \
    "$(res "[$tools[].name] | sort | join(\" \")")" "the tools"
  # Every schema: an object, nothing beyond its properties, what it
  # requires among them; a title and a description.
  local bad
  bad=$(res "[$tools[] | select(.inputSchema.type != \"object\" or .inputSchema.additionalProperties != false
      or (.inputSchema.properties | type) != \"object\"
      or ((.inputSchema.required // []) - (.inputSchema.properties | keys) | length) > 0
      or ((.title // \"\") | length) == 0 or ((.description // \"\") | length) < 40) | .name] | join(\" \")")
  [ -z "$bad" ] || fail "tools whose schema, title or description is not as the contract says: $bad"
  assert_eq "argv command cwd env stdin timeout_s" \
    "$(res "$tools[] | select(.name == \"run_command\") | .inputSchema.properties | keys | sort | join(\" \")")" "run_command's arguments"
  assert_eq "code language" \
    "$(res "$tools[] | select(.name == \"run_code\") | .inputSchema.required | sort | join(\" \")")" "run_code requires"
  assert_eq "content path" \
    "$(res "$tools[] | select(.name == \"write_file\") | .inputSchema.required | sort | join(\" \")")" "write_file requires"
  assert_eq path "$(res "$tools[] | select(.name == \"read_file\") | .inputSchema.required | join(\" \")")" "read_file requires"
  assert_eq integer "$(res "$tools[] | select(.name == \"run_command\") | .inputSchema.properties.timeout_s.type")" \
    "timeout_s's type"
  # The description tells the agent under which policy its commands run.
  assert_contains "$(res "$tools[] | select(.name == \"run_command\") | .description")" offline "run_command's description"
}
