# ocal — the example programs (each one does one real job; a user copies them), included by
# the top-level Makefile.am. Built by `make`; tests/examples.sh runs each at small sizes.

# examples/example_args.h: the --help/--device handling and context creation they share.
noinst_HEADERS += examples/example_args.h
noinst_PROGRAMS += examples/vector_dot examples/array_sum examples/mlp_train examples/fft_filter
examples_vector_dot_LDADD = src/libocal.la -lm
examples_array_sum_LDADD = src/libocal.la -lm
examples_mlp_train_SOURCES = examples/mlp_train.c examples/mlp_common.c examples/mlp_common.h
examples_mlp_train_LDADD = src/libocal.la -lm
examples_fft_filter_LDADD = src/libocal.la -lm
# Your own kernels: the PyCUDA-style program (a kernel from a string) and a generated
# reduction; tests/example_kernels.sh (src/gen/local.mk) runs them.
noinst_PROGRAMS += examples/raw_kernel examples/gen_reduction
examples_raw_kernel_LDADD = src/libocal.la
examples_gen_reduction_LDADD = src/libocal.la -lm

TESTS += tests/examples.sh
EXTRA_DIST += examples/local.mk tests/examples.sh bench/mlp_torch.py
