# ocal — fault injection (docs/defences.md): the shim that fails the n-th call of an OpenCL
# entry point or the n-th host allocation of libocal, and the program it runs against. Built
# with `make check` (not run by it: tests/fault/run.sh sweeps it, from tests/defences.sh).
# Included by the top-level Makefile.am.
#
# The program links libocal statically (its convenience library) so that --wrap rewires the
# allocations of libocal's objects, and exports its symbols (--export-dynamic) so that
# CLBlast and clFFT reach the shim's OpenCL wrappers too.
check_PROGRAMS += tests/fault/fault_program
tests_fault_fault_program_SOURCES = \
	tests/fault/fault_program.c tests/fault/shim.c tests/fault/shim.h
tests_fault_fault_program_LDADD = src/libocal_core.la $(OPENCL_LIBS) -ldl -lm
tests_fault_fault_program_LDFLAGS = -Wl,--export-dynamic \
	-Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
EXTRA_DIST += tests/fault/local.mk tests/fault/run.sh tests/defences.sh tests/sanitizer-ignorelist.txt
