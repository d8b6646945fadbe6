# ocal_check_pkg.m4 — find a library through pkg-config, else by its header and library.
#
# OCAL_CHECK_PKG(VARIABLE-PREFIX, PKG-MODULES, HEADER, LIBRARY, FUNCTION,
#                [ACTION-IF-FOUND], [ACTION-IF-NOT-FOUND], [EXTRA-LIBS])
#
# Sets and substitutes PREFIX_CFLAGS and PREFIX_LIBS. pkg-config is tried first (honouring a
# user's PREFIX_CFLAGS / PREFIX_LIBS, as PKG_CHECK_MODULES does); when it has no .pc file
# for the module, the header and the library are looked for on the default paths (plus
# CPPFLAGS / LDFLAGS), which is how many distributions ship OpenCL and clFFT. With no LIBRARY
# (and no FUNCTION) only pkg-config is asked: the caller has its own fallback (MPI's mpicc
# wrapper), and a library found by nothing must not count as found. The empty arguments are
# tested while m4 expands the macro, so that no check is generated for a function not given.
AC_DEFUN([OCAL_CHECK_PKG], [
  AC_REQUIRE([PKG_PROG_PKG_CONFIG])
  ocal_found_$1=no
  AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists "$2" 2>/dev/null], [
    PKG_CHECK_MODULES([$1], [$2], [ocal_found_$1=yes], [ocal_found_$1=no])
  ])
  m4_ifval([$4], [
    AS_IF([test "x$ocal_found_$1" != xyes], [
      m4_ifval([$3], [
        AC_CHECK_HEADER([$3], [ocal_hdr_$1=yes], [ocal_hdr_$1=no])
      ], [ocal_hdr_$1=yes])
      AS_IF([test "x$ocal_hdr_$1" = xyes], [
        ocal_save_LIBS=$LIBS
        AC_CHECK_LIB([$4], [$5], [
          $1_LIBS="-l$4 $8"
          ocal_found_$1=yes
        ], [], [$8])
        LIBS=$ocal_save_LIBS
      ])
    ])
  ])
  AC_SUBST([$1_CFLAGS])
  AC_SUBST([$1_LIBS])
  AS_IF([test "x$ocal_found_$1" = xyes], [$6], [$7])
])
