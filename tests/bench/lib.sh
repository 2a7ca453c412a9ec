# Shared by the benchmark scripts that run `haven run` in a project of
# their own (sourced).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/state_name.sh"

# bench_forget_project PROJECT: removes the per-project state haven keeps
# for PROJECT under the caller's state home (the copy-on-write layers, the
# trial mount's verdict): a benchmark's project is a temporary directory,
# so its state would only pile up.
bench_forget_project() {
  local real name root
  real=$(realpath "$1" 2>/dev/null) || return 0
  name=$(haven_state_name "$real") || return 0
  root=${XDG_STATE_HOME:-$HOME/.local/state}
  [ -d "$root/haven/projects/$name" ] && rm -rf -- "$root/haven/projects/$name"
  return 0
}
