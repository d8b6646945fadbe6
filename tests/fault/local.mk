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

# libocal-mpi's collectives with each device call failing in turn, on one rank at a time: one
# mpirun sweeps every injection point (tests/mpi.sh runs it). libocal-mpi's sources are
# compiled into the program, so the shim counts and wraps their calls too.
if HAVE_MPI
check_PROGRAMS += tests/fault/mpi_fault_program
tests_fault_mpi_fault_program_SOURCES = tests/fault/mpi_fault_program.c tests/fault/shim.c \
	tests/fault/shim.h src/mpi/mpi.c src/mpi/collectives.c src/mpi/shared.c src/mpi/mpi_internal.h
nodist_tests_fault_mpi_fault_program_SOURCES = src/mpi/mpi_cl.c
tests_fault_mpi_fault_program_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
tests_fault_mpi_fault_program_LDADD = src/libocal_core.la $(MPI_LIBS) $(OPENCL_LIBS) \
	$(PTHREAD_LIBS) -ldl -lm
tests_fault_mpi_fault_program_LDFLAGS = -Wl,--export-dynamic \
	-Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
endif
