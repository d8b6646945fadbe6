# ocal_warnings.m4 — compiler flags the build uses when the compiler accepts them.
#
# OCAL_ADD_CFLAG(VARIABLE, FLAG): appends FLAG to VARIABLE if $CC compiles with it.
AC_DEFUN([OCAL_ADD_CFLAG], [
  AC_MSG_CHECKING([whether $CC accepts $2])
  ocal_save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS $2 -Werror"
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])], [
    AC_MSG_RESULT([yes])
    $1="$$1 $2"
  ], [AC_MSG_RESULT([no])])
  CFLAGS=$ocal_save_CFLAGS
])
