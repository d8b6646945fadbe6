#!/bin/sh
# Installs every Debian/Ubuntu package ocal needs to build and test: the OpenCL headers and
# ICD loader, PoCL (the CPU device the tests run on), CLBlast, clFFT, the VkFFT header, Check,
# LAPACKE (the dense steps of ocal_lobpcg), Autotools, pkg-config, CMake (to test the installed
# CMake package), gnuplot (charts of `ocal bench --plot`), Open MPI (libocal-mpi and its tests
# under mpirun), and clang 14 with its sanitizer runtimes (libFuzzer, ThreadSanitizer) for
# tests/defences.sh. Run as root or with sudo available. Safe to run again.
set -eu
pkgs="build-essential autoconf automake libtool pkg-config
  opencl-c-headers opencl-clhpp-headers ocl-icd-libopencl1 ocl-icd-opencl-dev clinfo
  pocl-opencl-icd gnuplot-nox
  libclblast-dev libclfft-dev libvkfft-dev
  liblapacke-dev
  check cmake
  libopenmpi-dev openmpi-bin
  clang-14 libclang-rt-14-dev"
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
