# ocal — the fuzz targets (docs/defences.md). libFuzzer builds them (tests/fuzz/build.sh,
# clang, from tests/defences.sh); here each is linked with replay.c's main instead, and
# `make check` replays the checked-in seed corpus and the inputs of fixed crashes through
# them (tests/fuzz/replay.sh). Included by the top-level Makefile.am.
FUZZ_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/core -I$(top_srcdir)/src/gen \
	-I$(top_srcdir)/src/kernel \
	-I$(top_srcdir)/src/blas -I$(top_srcdir)/src/fft -I$(top_srcdir)/src/sparse
FUZZ_LDADD = src/libocal_core.la $(OPENCL_LIBS) -lm
FUZZ_REPLAYS = \
	tests/fuzz/replay_gen_params \
	tests/fuzz/replay_gen_body \
	tests/fuzz/replay_settings \
	tests/fuzz/replay_disk_cache \
	tests/fuzz/replay_tuning \
	tests/fuzz/replay_mtx
check_PROGRAMS += $(FUZZ_REPLAYS)
TESTS += tests/fuzz/replay.sh
tests_fuzz_replay_gen_params_SOURCES = tests/fuzz/fuzz_gen_params.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_gen_params_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_gen_params_LDADD = $(FUZZ_LDADD)
tests_fuzz_replay_gen_body_SOURCES = tests/fuzz/fuzz_gen_body.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_gen_body_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_gen_body_LDADD = $(FUZZ_LDADD)
tests_fuzz_replay_settings_SOURCES = tests/fuzz/fuzz_settings.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_settings_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_settings_LDADD = $(FUZZ_LDADD)
tests_fuzz_replay_disk_cache_SOURCES = tests/fuzz/fuzz_disk_cache.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_disk_cache_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_disk_cache_LDADD = $(FUZZ_LDADD)
tests_fuzz_replay_tuning_SOURCES = tests/fuzz/fuzz_tuning.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_tuning_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_tuning_LDADD = $(FUZZ_LDADD)
tests_fuzz_replay_mtx_SOURCES = tests/fuzz/fuzz_mtx.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_mtx_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_mtx_LDADD = $(FUZZ_LDADD)
EXTRA_DIST += tests/fuzz/local.mk tests/fuzz/replay.sh tests/fuzz/build.sh tests/fuzz/corpus \
	tests/fuzz/regress
