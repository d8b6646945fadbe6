#!/bin/sh
# Runs one test; under the sanitizers, runs it once more if, and only if, LeakSanitizer's
# own tracer crashed ("LeakSanitizer has encountered a fatal error", a known intermittent
# fault of the sanitizer runtime while it stops the OpenCL driver's threads at exit). A
# real leak report, a failed check or any other error fails at once, as without this.
out=$(mktemp)
"$@" > "$out" 2>&1
rc=$?
cat "$out"
if [ "$rc" -ne 0 ] && grep -q "LeakSanitizer has encountered a fatal error" "$out" &&
   ! grep -q "ERROR: LeakSanitizer: detected memory leaks" "$out"; then
  echo "lsan-retry: LeakSanitizer's tracer crashed (not a leak); running the test again"
  "$@"
  rc=$?
fi
rm -f "$out"
exit "$rc"
