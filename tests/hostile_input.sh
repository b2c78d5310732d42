#!/usr/bin/env bash
# Hostile input and interrupted writes (docs/hardening.md), end to end through the CLI:
#  - headers that claim 10^12 rows or a dimension of 2^31 are one error line, before any
#    allocation (run under a 1 GiB address-space limit);
#  - a convert that fails mid-file (an injected "disk full") or is interrupted by SIGINT leaves
#    no output file and no temporary.
# usage: hostile_input.sh DISTANCIES WORKDIR
set -u
cli=$1 dir=$2
rm -rf "$dir"; mkdir -p "$dir"; cd "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
one_error() {  # file expect...: exactly one error line matching, non-zero exit, no crash
  local f=$1 want=$2 out rc
  out=$( (ulimit -v 1048576; "$cli" info "$f") 2>&1 ); rc=$?
  [ $rc -eq 1 ] || fail "$f: exit $rc (want 1): $out"
  [ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] || fail "$f: more than one line: $out"
  printf '%s' "$out" | grep -q "^distancies: error: .*$want" || fail "$f: '$out' lacks '$want'"
  echo "ok: $f: $out"
}
printf '1000000000000 300\nking ' > rows.bin
printf '10 2147483648\nking ' > dim.bin
printf '2000000000 300\nking ' > claims.bin
one_error rows.bin "more than the 2147483647"
one_error dim.bin "dimension 2147483648"
one_error claims.bin "truncated"
# A native header claiming 2,000,000,000 rows of 300 with zero-sized sections.
printf 'DSTNCIES\001\000\000\000\000\000\000\000\000\224\065\167\000\000\000\000\054\001\000\000\054\001\000\000' > native.dsv
head -c 64 /dev/zero >> native.dsv
one_error native.dsv "bad header"

"$cli" gen src.dsv --rows 20000 --dim 50 >/dev/null || fail "gen"
# A disk that fills after 4 KiB.
out=$(DISTANCIES_TEST_FAIL_WRITE_AFTER=4096 "$cli" convert src.dsv out.dsv 2>&1); rc=$?
[ $rc -eq 1 ] || fail "convert on a full disk: exit $rc: $out"
printf '%s' "$out" | grep -q "distancies: error: .*cannot write: No space left on device" || fail "convert: '$out'"
ls out.dsv* >/dev/null 2>&1 && fail "a failed convert left $(ls out.dsv*)"
echo "ok: convert on a full disk: $(printf '%s' "$out" | tail -1); no output, no temporary"
# SIGINT and SIGTERM in the middle of the file (the writer pauses after its first write). Job
# control on, so the background convert does not start with SIGINT ignored.
set -m
for sig in INT TERM; do
  DISTANCIES_TEST_PAUSE_AFTER_FIRST_WRITE_MS=3000 "$cli" convert src.dsv int.dsv > int.log 2>&1 & pid=$!
  for _ in $(seq 50); do ls int.dsv.tmp.* >/dev/null 2>&1 && break; sleep 0.1; done
  ls int.dsv.tmp.* >/dev/null 2>&1 || fail "the interrupted convert never started its temporary"
  kill -$sig $pid; wait $pid; rc=$?
  want=$((128 + $(kill -l $sig)))
  [ $rc -eq $want ] || fail "convert sent SIG$sig: exit $rc (want $want: killed by the signal)"
  ls int.dsv* >/dev/null 2>&1 && fail "a convert sent SIG$sig left $(ls int.dsv*)"
  echo "ok: SIG$sig mid-file: exit $rc, no output, no temporary"
done
set +m
# And a convert left alone writes the whole file.
"$cli" convert src.dsv whole.dsv >/dev/null 2>&1 && "$cli" info whole.dsv | grep -q "20000 rows" || fail "plain convert"
ls whole.dsv.tmp.* >/dev/null 2>&1 && fail "a finished convert left its temporary"
echo "hostile input ok"
