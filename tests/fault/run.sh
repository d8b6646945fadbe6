#!/bin/bash
# ocal fault injection sweep (docs/defences.md): runs tests/fault/fault_program once per
# injected failure and requires, of every run, an error status reported with a message and
# a working recovery, or a correct result; never a crash, a hang, a sanitizer report (leaks
# included, in a sanitizer build), an error status without a message or a message that does
# not start with the name of the public call that returned it (FAULT_NAMED).
#
# Usage: tests/fault/run.sh [SECTION...]   (default: every section of the program)
# Environment:
#   FAULT_PROGRAM   the program (default tests/fault/fault_program, run from the build tree)
#   FAULT_MAX_N     how many n to try per section and entry point when it is called more
#                   often: 1, 2, the last two and evenly spaced ones between (default 6;
#                   0 tries every n)
#   FAULT_LASTING   1: also one run per section and entry point where every call from the
#                   middle one on fails (a lasting shortage); default 0
#   FAULT_TIMEOUT   seconds one run may take before it counts as a hang (default 180)
#   FAULT_JOBS      runs at a time (default: the number of processors)
#   FAULT_LOG_DIR   where the logs of failed runs are kept (default a temporary directory)
#   FAULT_ALL_SETUP 1: sweep the entry points only context creation calls (platform and
#                   device enumeration, clCreateContext) in every
#                   section; default 0: only in the `context` section, which creates two
#                   contexts, since every section starts with the same creation
# First, each section runs with OCAL_FAULT_COUNT to learn how often it calls each entry
# point (calls from libocal, CLBlast and clFFT only); the sweep then draws its n from that.
set -u
here=$(cd "$(dirname "$0")" && pwd)
prog=${FAULT_PROGRAM:-tests/fault/fault_program}
max_n=${FAULT_MAX_N:-6}
lasting=${FAULT_LASTING:-0}
limit=${FAULT_TIMEOUT:-180}
all_setup=${FAULT_ALL_SETUP:-0}
jobs=${FAULT_JOBS:-$(nproc)}
logs=${FAULT_LOG_DIR:-$(mktemp -d)}
mkdir -p "$logs"
[ -x "$prog" ] || { echo "fault: $prog is not built (make tests/fault/fault_program)"; exit 2; }

sections=("$@")
if [ ${#sections[@]} -eq 0 ]; then
  sections=(context buffers elementwise reduce scan softmax random gemm-ocal gemm-clblast
            fft-vkfft fft-clfft fft-fourstep fft-measure fft-unit gen kernel)
fi

# Exclusions: "SECTION ENTRY N" (glob patterns; N a call number, or * for every one), each
# after a comment with its reason: a failure the sweep found whose fix belongs to another
# change or to a dependency. Keep them narrow.
exclusions=(
  # A fault that can be guarded only in part: clfftBakePlan swallows a failed
  # write of its constant buffer (the 1st and 3rd writes of the section are the two
  # plans'), reports success, computes wrong results and leaves the heap corrupt.
  # src/fft/clfft.c drains the queue before the bake, so a queue already in error fails
  # there; a write that fails on its own inside the bake, as the shim makes it, cannot be
  # seen from outside clFFT (README, FFT).
  "fft-clfft clEnqueueWriteBuffer [13]"
)
excluded() { # $1: n
  local e s f k
  for e in "${exclusions[@]}"; do
    read -r s f k <<< "$e" # no word splitting into file names: the patterns hold '*'
    # shellcheck disable=SC2053
    [[ $sec == $s && $entry == $f && $1 == $k ]] && return 0
  done
  return 1
}

export OCAL_DEVICE=${OCAL_DEVICE:-cpu}
# Every message of ocal starts with the public call that returned it, however deep inside it
# the fault struck: fault_program checks that of every error it meets.
export FAULT_NAMED=1
# A private kernel cache, filled by the counting run, so every faulted run meets the same
# cache and makes the same calls in the same order.
cache=$(mktemp -d)
export OCAL_CACHE_DIR=$cache
# use_sigaltstack=0 and PoCL alone: the sanitizer runtime's faults on CI's machine that
# Makefile.am's sanitizer test environment names.
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=99:detect_leaks=1:use_sigaltstack=0}
if [ -z "${OCL_ICD_VENDORS-}" ] && [ -r /etc/OpenCL/vendors/pocl.icd ]; then
  export OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd
fi
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/../lsan.supp:print_suppressions=0:intercept_tls_get_addr=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

runs=0 passed=0 reported=0 failures=0 skipped=0
declare -A tried

# One run of task $1 (NAME:N) into $tmpd/$2.log and .rc. LeakSanitizer's tracer sometimes
# crashes while it stops the driver's threads at exit (see tests/lsan-retry.sh): such a
# run, and only such a run, is repeated once.
#
# A leak report from the fast unwinder can hold stacks that stop at the first frame of a
# dependency built without frame pointers (libstdc++'s operator new under PoCL's LLVM, or
# clFFT), which tests/lsan.supp cannot name: such a run is repeated once with the slow
# unwinder, which sees the frames the suppressions name, and that run's report is the verdict
# (ocal's own leaks show in both: its code keeps frame pointers).
run_task() {
  local try log="$tmpd/$2.log"
  for try in 1 2; do
    OCAL_FAULT=$1 timeout -k 10 "$limit" "$prog" "$sec" > "$log" 2>&1
    echo $? > "$tmpd/$2.rc"
    if grep -q "detected memory leaks" "$log" && [ "${LSAN_OPTIONS#*fast_unwind_on_malloc=0}" = "$LSAN_OPTIONS" ]; then
      LSAN_OPTIONS="$LSAN_OPTIONS:fast_unwind_on_malloc=0" OCAL_FAULT=$1 \
        timeout -k 10 "$limit" "$prog" "$sec" > "$log" 2>&1
      echo $? > "$tmpd/$2.rc"
    fi
    grep -q "LeakSanitizer has encountered a fatal error" "$log" &&
      ! grep -q "detected memory leaks" "$log" || return 0
  done
}

judge() { # $1: what was injected
  runs=$((runs + 1))
  local why=""
  if grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|UndefinedBehaviorSanitizer" "$out"; then
    why="sanitizer report"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    why="hang (over ${limit}s)"
  elif [ "$rc" -gt 128 ]; then
    why="killed by signal $((rc - 128))"
  elif [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
  elif [ "$rc" -eq 10 ]; then
    reported=$((reported + 1))
  elif [ "$rc" -eq 20 ]; then
    why="wrong result with OCAL_OK"
  elif [ "$rc" -eq 30 ]; then
    why="no recovery after the error"
  elif [ "$rc" -eq 40 ]; then
    why="error status without a message"
  elif [ "$rc" -eq 50 ]; then
    why="message not starting with the name of the call that failed"
  elif [ "$rc" -eq 60 ]; then
    why="the fault failed no call"
  else
    why="exit status $rc"
  fi
  if [ -n "$why" ]; then
    failures=$((failures + 1))
    local keep="$logs/$sec.${1//[:+]/_}.log"
    cp "$out" "$keep"
    echo "FAIL $sec $1: $why (log: $keep)"
    grep -E "fault-program|ERROR|runtime error|#[0-9] " "$out" | head -15 | sed 's/^/    /'
  fi
}

scratch=$(mktemp)
tmpd=$(mktemp -d)
start=$SECONDS
lsan_base=$LSAN_OPTIONS
for sec in "${sections[@]}"; do
  # clFFT (C++, no frame pointers) keeps each kernel's code in its repository until
  # clfftTeardown; tests/lsan.supp names that frame (FFTRepo::setProgramCode), which only the
  # slow unwinder sees: so the clFFT section unwinds the slow way (it alone: it is slower).
  case $sec in
    fft-clfft) export LSAN_OPTIONS="$lsan_base:fast_unwind_on_malloc=0" ;;
    *) export LSAN_OPTIONS=$lsan_base ;;
  esac
  counts="$logs/$sec.counts"
  # Twice: the first run fills the kernel cache, the second counts what a warm run calls.
  out=$scratch
  "$prog" "$sec" > "$out" 2>&1
  OCAL_FAULT_COUNT=$counts "$prog" "$sec" > "$out" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ] || [ ! -s "$counts" ]; then
    echo "FAIL $sec: the section does not pass without a fault (exit $rc)"
    tail -20 "$out"
    failures=$((failures + 1))
    continue
  fi
  tasks=()
  while read -r entry count; do
    if [ "$all_setup" != 1 ] && [ "$sec" != context ]; then
      case $entry in
        clGetPlatformIDs | clGetPlatformInfo | clGetDeviceIDs | clCreateContext)
          continue ;;
      esac
    fi
    if [ "$max_n" -eq 0 ] || [ "$count" -le "$max_n" ]; then
      ns=$(seq 1 "$count")
    elif [ "$max_n" -lt 4 ]; then
      ns=$(printf '%s\n' 1 "$count" $(((count + 1) / 2)) | head -n "$max_n" | sort -nu)
    else
      ns=$( { echo 1; echo 2; echo $((count - 1)); echo "$count"
              for ((k = 1; k <= max_n - 4; k++)); do echo $((1 + k * (count - 1) / (max_n - 3))); done
            } | sort -nu)
    fi
    [ "$lasting" = 1 ] && ns="$ns $(((count + 1) / 2))+"
    for n in $ns; do
      if excluded "${n%+}"; then
        skipped=$((skipped + 1))
        continue
      fi
      tasks+=("$entry:$n")
    done
    tried[$sec]="${tried[$sec]:-} $entry:$count"
  done < "$counts"
  # The section's runs, $jobs at a time; then each is judged in order.
  for ((i = 0; i < ${#tasks[@]}; i++)); do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || :; done
    run_task "${tasks[$i]}" "$i" &
  done
  wait
  for ((i = 0; i < ${#tasks[@]}; i++)); do
    out="$tmpd/$i.log"
    rc=$(cat "$tmpd/$i.rc")
    judge "${tasks[$i]}"
  done
  n_sec=${#tasks[@]}
  echo "fault: $sec: $n_sec runs over$(echo "${tried[$sec]:-}" | wc -w) entry points (calls per entry point:${tried[$sec]:-})"
done
# Runs on an empty cache, "SECTION FAULT" each after its reason: faults whose effect only a
# cold run (a compile) meets.
cold=(
  # A driver that gives no argument information at all: a raw kernel's argument typed by a
  # macro of the build options cannot be checked, and must be refused, not set unchecked.
  "kernel clGetKernelArgInfo:1+"
)
for c in "${cold[@]}"; do
  read -r sec fault <<< "$c"
  [[ " ${sections[*]} " == *" $sec "* ]] || continue
  OCAL_CACHE_DIR=$(mktemp -d)
  out="$tmpd/cold.log"
  OCAL_FAULT=$fault timeout -k 10 "$limit" "$prog" "$sec" > "$out" 2>&1
  rc=$?
  rm -rf "$OCAL_CACHE_DIR"
  judge "$fault.cold"
  echo "fault: $sec: one run with $fault on an empty cache"
done
# Named runs, "SECTION FAULT" each: the fault fails a kernel launch inside an operation,
# whose message must start with the name of the public call that returned it (FAULT_NAMED,
# as in every run), not with a bare "ocal:"; here the fault must also fail a call. Each runs
# on the warm cache.
named=(
  "elementwise clEnqueueNDRangeKernel:1" # ocal_binary
  "elementwise clSetKernelArg:1"
  "softmax clEnqueueNDRangeKernel:1" # ocal_log_softmax
  "softmax clSetKernelArg:1"
  "random clEnqueueNDRangeKernel:1" # ocal_random_uniform
  "buffers clEnqueueNDRangeKernel:1" # ocal_buffer_fill
  "gen clEnqueueNDRangeKernel:1" # ocal_gen_run
)
export OCAL_CACHE_DIR=$cache
for c in "${named[@]}"; do
  read -r sec fault <<< "$c"
  [[ " ${sections[*]} " == *" $sec "* ]] || continue
  out="$tmpd/named.log"
  OCAL_FAULT=$fault timeout -k 10 "$limit" "$prog" "$sec" > "$out" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] && rc=60 # the fault failed no call: the run proves nothing
  judge "$fault.named"
  echo "fault: $sec: one named run with $fault"
done
rm -f "$scratch"
rm -rf "$cache" "$tmpd"
echo "fault: $runs runs in $((SECONDS - start)) s: $passed correct results, $reported errors reported and recovered from, $failures failures, $skipped excluded runs"
[ "$failures" -eq 0 ]
