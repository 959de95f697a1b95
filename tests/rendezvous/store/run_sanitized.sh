#!/bin/bash
# Builds the store (library, cpplaunch-store, store_tests) with -DCPPLAUNCH_SANITIZE=ON
# (ASan + UBSan) in its own build directory and runs the store tests under it, including the
# PyTorch client test against the sanitized server.
#   run_sanitized.sh SOURCE_ROOT [BUILD_DIR]     (default BUILD_DIR: SOURCE_ROOT/build-sanitize)
# Takes a few minutes on two cores; ctest runs it as store_sanitized.
set -eu
root=${1:?usage: run_sanitized.sh SOURCE_ROOT [BUILD_DIR]}
build=${2:-$root/build-sanitize}
mkdir -p "$build"
cmake -S "$root" -B "$build" -DCPPLAUNCH_SANITIZE=ON -DCPPLAUNCH_WITH_TORCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$build/configure.log"
cmake --build "$build" -j2 --target store_tests cpplaunch-store
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$build/tests/rendezvous/store/store_tests"
/usr/bin/python3 "$root/tests/rendezvous/store/torch_client_compat.py" "$build/rendezvous/store/cpplaunch-store" \
  | tail -1
/usr/bin/python3 -B "$root/tests/rendezvous/store/torch_client_vs_agents.py" \
  "$build/rendezvous/store/cpplaunch-store" | tail -1
/usr/bin/python3 "$root/tests/rendezvous/store/run_torch_job.py" "$build/rendezvous/store/cpplaunch-store" \
  --hostile | tail -3
echo "store tests passed under ASan+UBSan"
