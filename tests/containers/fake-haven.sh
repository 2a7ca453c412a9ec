#!/usr/bin/bash
# A stand-in for haven, for the suite's own check (test_probe_verdicts):
# probe.sh must call each of its ways out for what it is.  FAKE_MODE:
#   drop     runs the command as is: every rule silently dropped
#   unnamed  exit 125 naming no rule (as "clone container init:
#            operation not permitted" does)
#   named    exit 125 naming a rule and pointing at haven doctor
# FAKE_DOCTOR: what `doctor` says of each policy, as its report does
# ("runs (namespaces)" or "refused here: network.allow: WHY").
if [ "${1:-}" = doctor ]; then
  for p in default claude-code; do echo "  $p: ${FAKE_DOCTOR:-runs (namespaces)}"; done
  exit 0
fi
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
shift
case ${FAKE_MODE:-drop} in
  drop) exec "$@" ;;
  unnamed) echo "haven: create container haven-run-1: clone container init: operation not permitted" >&2 ;;
  named) printf "haven: the policy default cannot run without namespaces here: 1 rule cannot be enforced\n  network.allow: a name allowlist needs a network namespace\nhaven doctor says what this host offers\n" >&2 ;;
esac
exit 125
