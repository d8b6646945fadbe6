#!/bin/sh
# `ocal doctor` on the machine as set up, then on broken setups: an empty vendors directory,
# an .icd file naming a library that does not exist, an unwritable kernel cache directory.
# Each broken setup must give its PROBLEM line with a fix, and the exit status must say
# whether a device works.
set -u
tool=${OCAL_TOOL:-tools/ocal}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "doctor.sh: $*"; cat "$tmp/out"; exit 1; }

# As set up (make check's environment): a device works, nothing is wrong.
"$tool" doctor > "$tmp/out" 2>&1 || fail "exit $? on the working setup"
grep -q "^  ok       device .*a kernel compiled and ran" "$tmp/out" || fail "no working device line"
grep -q "PROBLEM" "$tmp/out" && fail "a problem reported on the working setup"
cat "$tmp/out"

# An empty vendors directory: no platform; exit 1.
mkdir "$tmp/empty"
if OCL_ICD_VENDORS="$tmp/empty" "$tool" doctor > "$tmp/out" 2>&1; then fail "exit 0 without devices"; fi
grep -q "PROBLEM  vendors .*no .icd file in $tmp/empty.*fix: install an OpenCL driver" "$tmp/out" ||
  fail "no line for the empty vendors directory"
grep -q "PROBLEM  platforms .*no OpenCL platform" "$tmp/out" || fail "no line for the missing platform"

# An .icd file naming a missing library: the loader's silence is broken by dlopen's reason.
mkdir "$tmp/bad"
echo "$tmp/no-such-driver.so" > "$tmp/bad/broken.icd"
if OCL_ICD_VENDORS="$tmp/bad" "$tool" doctor > "$tmp/out" 2>&1; then fail "exit 0 without devices"; fi
grep -q "PROBLEM  vendors .*broken.icd names $tmp/no-such-driver.so, which does not load: .*No such file.*fix: install the driver" "$tmp/out" ||
  fail "no line for the .icd naming a missing library"

# An unwritable cache directory (under a regular file, so even root cannot create it): the
# device still works (exit 0) and the cache line says what to do.
touch "$tmp/file"
OCAL_CACHE_DIR="$tmp/file/cache" "$tool" doctor > "$tmp/out" 2>&1 || fail "exit $? with a working device"
grep -q "PROBLEM  cache .*$tmp/file/cache is not writable.*fix: .*OCAL_CACHE_DIR" "$tmp/out" ||
  fail "no line for the unwritable cache directory"
# A bad OCAL_* value: one settings line with its fix, not a driver to reinstall.
if OCAL_FP64=bad "$tool" doctor > "$tmp/out" 2>&1; then fail "exit 0 with every context refused"; fi
grep -q "PROBLEM  settings .*OCAL_FP64='bad'.*fix: correct or unset the variable" "$tmp/out" ||
  fail "no settings line for OCAL_FP64=bad"
grep -q "reinstall" "$tmp/out" && fail "a bad setting blamed on the driver"
[ "$(grep -c "PROBLEM  settings" "$tmp/out")" -eq 1 ] || fail "the settings line said more than once"
echo "doctor checks passed"
