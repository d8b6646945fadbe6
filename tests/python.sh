#!/bin/sh
# The Python package's suite (python/tests, pytest) on the library just built, when a
# virtual environment with the package and pytest is there: $OCAL_PYTHON, else .venv/bin/python
# at the top of the source tree (the README's Python section makes it). Skips (77) otherwise.
top_srcdir=$(cd "${srcdir:-.}" && pwd)
py=${OCAL_PYTHON:-$top_srcdir/.venv/bin/python}
if [ ! -x "$py" ] || ! "$py" -c "import ocal, pytest, hypothesis" 2>/dev/null; then
  echo "python.sh: no virtual environment with ocal, pytest and hypothesis ($py); see the README's Python section"
  exit 77
fi
# The library of this build before the installed one the package was linked against.
LD_LIBRARY_PATH="$PWD/src/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
# The headers of this build, for the test that every public function is wrapped.
OCAL_HEADER_CFLAGS="-I$PWD/include -I$top_srcdir/include"
export OCAL_HEADER_CFLAGS
# From a directory without the package's sources, so `import ocal` is the installed package.
cd "$top_srcdir/python/tests" && exec "$py" -m pytest -q -p no:cacheprovider .
