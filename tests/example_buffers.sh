#!/bin/sh
# Runs the buffers example and the ocal tool as a user would, and checks their exit codes.
set -eu
"$OCAL_EXAMPLES/buffers" 1001
"$OCAL_EXAMPLES/buffers" --help > /dev/null
if "$OCAL_EXAMPLES/buffers" nonsense 2> /dev/null; then echo "bad argument accepted"; exit 1; fi
"$OCAL_TOOL" --version
"$OCAL_TOOL" devices
"$OCAL_TOOL" info > info.log
# The GEMM precision mode and the tensor-core probe's answer.
grep -q "^GEMM precision *fp32" info.log || { echo "ocal info: no 'GEMM precision fp32' line"; exit 1; }
grep -q "^tensor cores  *." info.log || { echo "ocal info: no 'tensor cores' line"; exit 1; }
OCAL_GEMM_PRECISION=tf32 "$OCAL_TOOL" info | grep -q "^GEMM precision *tf32" ||
  { echo "ocal info: OCAL_GEMM_PRECISION=tf32 not shown"; exit 1; }
"$OCAL_TOOL" demo > demo.log
cat demo.log
# Every capability has its checked line, and none failed.
for what in transfer "kernel cache" elementwise reduction gemm fft "generated kernel"; do
  grep -q "^  $what  *ok " demo.log || { echo "ocal demo: no passing '$what' line"; exit 1; }
done
if grep -q FAIL demo.log; then echo "ocal demo reported a failure"; exit 1; fi
if "$OCAL_TOOL" demo no-such-device-anywhere 2> /dev/null; then echo "demo: bad selector accepted"; exit 1; fi
if "$OCAL_TOOL" frobnicate 2> /dev/null; then echo "unknown command accepted"; exit 1; fi
# Commands that take no argument refuse one (exit 2) instead of ignoring it.
for c in --version --help devices doctor; do
  rc=0
  "$OCAL_TOOL" $c extra > /dev/null 2> err.log || rc=$?
  [ $rc -eq 2 ] && grep -q "takes no argument" err.log || { echo "'ocal $c extra' was not refused"; exit 1; }
done
if "$OCAL_TOOL" info no-such-device-anywhere 2> err.log; then echo "bad selector accepted"; exit 1; fi
grep -q "matches" err.log
rm -f err.log demo.log info.log
echo "example and tool checks passed"
