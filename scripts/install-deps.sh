#!/bin/sh
# Installs every Debian/Ubuntu package ocal needs to build and test: the OpenCL headers and
# ICD loader, PoCL (the CPU device the tests run on), CLBlast, clFFT, the VkFFT header, Check,
# LAPACKE (the dense steps of ocal_lobpcg), Autotools, pkg-config, CMake (to test the installed
# CMake package), gnuplot (charts of `ocal bench --plot`), Open MPI (libocal-mpi and its tests
# under mpirun), clang 14 with its sanitizer runtimes (libFuzzer, ThreadSanitizer) for
# tests/defences.sh, and the other CPU OpenCL implementations make check also runs the suite on
# (Mesa's rusticl, Intel's CPU runtime from PyPI) and Oclgrind, which checks ocal's kernels for
# races and out-of-bounds accesses; Doxygen (make doc, and tests/doc.sh's check that every
# public function is documented) and abi-dumper with abi-compliance-checker (make abi-check).
# Run as root or with sudo available. Safe to run again.
set -eu
pkgs="build-essential autoconf automake libtool pkg-config
  opencl-c-headers opencl-clhpp-headers ocl-icd-libopencl1 ocl-icd-opencl-dev clinfo
  pocl-opencl-icd gnuplot-nox
  libclblast-dev libclfft-dev libvkfft-dev
  liblapacke-dev
  check cmake
  libopenmpi-dev openmpi-bin
  clang-14 libclang-rt-14-dev
  mesa-opencl-icd oclgrind python3-pip python3-venv python3-dev
  doxygen abi-dumper abi-compliance-checker"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: installing:$missing"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
else
  echo "install-deps: all packages already installed"
fi

# Intel's CPU OpenCL runtime: PyPI packages (no Debian package exists). It is not registered in
# /etc/OpenCL/vendors: tests/implementations.sh finds libintelocl.so in the Python prefix and
# names it through OCL_ICD_VENDORS, so programs see it only when asked. A failure here (no
# network to PyPI) leaves the other implementations; make check then skips Intel's.
py=python3
if command -v "$py" > /dev/null; then
  if ! "$py" -c 'import sys, site, os, sysconfig; d=[sysconfig.get_path("data"), sys.prefix, site.USER_BASE]; sys.exit(0 if any(os.path.exists(os.path.join(p, "lib", "libintelocl.so")) for p in d) else 1)'; then
    echo "install-deps: installing Intel's CPU OpenCL runtime (pip: intel-opencl-rt intel-cmplr-lib-rt)"
    # Debian's own Python installs into /usr/local (root's); another one (pyenv, a virtual
    # environment) into its own prefix, as the user.
    pipsudo=""
    if [ "$("$py" -c 'import sys; print(sys.prefix)')" = /usr ]; then pipsudo="$sudo"; fi
    $pipsudo "$py" -m pip install --quiet intel-opencl-rt intel-cmplr-lib-rt ||
      $pipsudo "$py" -m pip install --quiet --break-system-packages intel-opencl-rt intel-cmplr-lib-rt ||
      echo "install-deps: could not install Intel's CPU OpenCL runtime; its tests will be skipped"
  else
    echo "install-deps: Intel's CPU OpenCL runtime already installed"
  fi
fi
