#!/bin/bash
# Builds the wire decoder fuzz target with clang's libFuzzer + ASan + UBSan and runs it for a
# bounded time from a seed corpus of the protocol vectors.
#   run_fuzz.sh SOURCE_ROOT [SECONDS]      (default 20 s)
# Exit status: 0 no finding, 1 a finding or a build failure, 77 clang++-14 or libFuzzer missing.
set -u
root=${1:?usage: run_fuzz.sh SOURCE_ROOT [SECONDS]}
seconds=${2:-20}
clang=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$clang" ]; then
  echo "SKIP: clang++-14 not found"; exit 77
fi
work=$(mktemp -d /tmp/cpplaunch-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
    | "$clang" -x c++ -fsanitize=fuzzer - -o "$work/probe" 2>/dev/null; then
  echo "SKIP: $clang has no libFuzzer runtime"; exit 77
fi
"$clang" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root" "$root/tests/rendezvous/store/fuzz/wire_decoder_fuzz.cpp" \
  "$root"/rendezvous/store/wire/{command_table,field_reader,request_decoder,reply_codec,tag_framing}.cpp \
  "$root"/rendezvous/store/{kv_table,kv_agent_requests,kv_long_requests,kv_wait_sweep,store_budget,owner_table,agent_handshake}.cpp \
  "$root"/base/crypto/{sha256,hmac,random_bytes}.cpp "$root"/base/fd_io.cpp \
  -o "$work/fuzz" || { echo "FAILED: build"; exit 1; }

# Seeds: each protocol vector stream, prefixed by the two control bytes (cut size, reply shape).
mkdir -p "$work/corpus"
n=0
while read -r hex; do
  [ -z "$hex" ] && continue
  n=$((n + 1))
  python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.argv[1]))' "$hex" > "$work/corpus/seed$n"
done < "$root/tests/rendezvous/store/fuzz/seeds.hex"
cd "$work" && ./fuzz -max_total_time="$seconds" -rss_limit_mb=1024 -max_len=4096 \
  -print_final_stats=1 corpus 2>&1 | tail -15
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then echo "FAILED: the fuzzer found a problem (exit $status)"; exit 1; fi
echo "fuzzing for ${seconds}s found nothing"
