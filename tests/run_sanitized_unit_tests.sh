#!/bin/bash
# Runs the unit tests of the rendezvous and of the launcher (rendezvous_tests, launcher_tests:
# the agent, processes, output, reports) from an ASan+UBSan build tree, with a CPU load
# beside them: busy loops that take the cores from the tests at random moments, so that faults
# that need an unlucky interleaving (a coroutine resumed after its object was destroyed, a reply
# racing a cancellation) get their chance in every run, not only on a loaded machine.
#   run_sanitized_unit_tests.sh SANITIZED_BUILD_DIR
# The tree must be configured with -DCPPLAUNCH_SANITIZE=ON and the binaries built
# (scripts/build does both, in build/sanitize); this builds nothing. ctest runs it as
# sanitized_unit_tests in place of the plain binaries' test cases.
set -eu
build=${1:?usage: run_sanitized_unit_tests.sh SANITIZED_BUILD_DIR}
if ! grep -q '^CPPLAUNCH_SANITIZE:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "run_sanitized_unit_tests: $build is not a build tree configured with CPPLAUNCH_SANITIZE=ON" >&2
  exit 1
fi
for binary in tests/rendezvous/rendezvous_tests tests/launcher/launcher_tests; do
  if [[ ! -x "$build/$binary" ]]; then
    echo "run_sanitized_unit_tests: $build/$binary is not built (scripts/build builds it)" >&2
    exit 1
  fi
done

# Every report stops the test that made it: a finding is a failure, not a line in a log.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The load: one busy loop per core at a lower priority (nice 10), so that the tests are preempted
# often but still get most of the CPU; bounded by `timeout` even if this script is killed.
cores=$(nproc)
burners=()
for ((i = 0; i < cores; i++)); do
  timeout 1800 nice -n 10 sh -c 'while :; do :; done' &
  burners+=($!)
done
stop_load() { kill "${burners[@]}" 2>/dev/null || true; wait "${burners[@]}" 2>/dev/null || true; }
trap stop_load EXIT

# Each binary runs its test cases one after another in one process: several of them bound an
# elapsed time, so none runs beside another. One process per binary, not one per test case: an
# ASan binary takes about 0.6 s to start (3 million relocations, the globals' registration), which
# over 650 cases was 7 minutes of CI. --durations prints each case as it ends, so an abort
# (ASan's report stops the process) is in the case after the last line printed, and ASan's
# stack names it; a leak is reported at exit with the stack that allocated it.
started=$(date +%s)
status=0
for binary in tests/rendezvous/rendezvous_tests tests/launcher/launcher_tests; do
  echo "--- $binary"
  timeout --kill-after=10 900 "$build/$binary" --durations yes || {
    echo "run_sanitized_unit_tests: $binary failed (exit $?)" >&2
    status=1
  }
done
echo "sanitized unit tests: $(($(date +%s) - started)) s under ASan+UBSan with $cores busy loops"
exit $status
