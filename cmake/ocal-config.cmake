# ocal's CMake package file: `find_package(ocal)` defines the imported target ocal::ocal
# (headers and library of this installed copy) and ocal_VERSION. It is installed beside
# ocal.pc and finds the installation relative to itself, so a staged or moved install works.
get_filename_component(_ocal_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(ocal_VERSION "0.1.0")
set(ocal_INCLUDE_DIRS "${_ocal_prefix}/include")
find_library(ocal_LIBRARY NAMES ocal PATHS "${_ocal_prefix}/lib" NO_DEFAULT_PATH)
if(NOT ocal_LIBRARY OR NOT EXISTS "${ocal_INCLUDE_DIRS}/ocal.h")
  set(ocal_FOUND FALSE)
  set(ocal_NOT_FOUND_MESSAGE "libocal or ocal.h is missing under ${_ocal_prefix}")
  return()
endif()
if(NOT TARGET ocal::ocal)
  add_library(ocal::ocal UNKNOWN IMPORTED)
  set_target_properties(ocal::ocal PROPERTIES
    IMPORTED_LOCATION "${ocal_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ocal_INCLUDE_DIRS}")
  # A static libocal needs what it was linked against (ocal.pc's Libs.private).
  if(ocal_LIBRARY MATCHES "\\.a$")
    separate_arguments(_ocal_private UNIX_COMMAND "-lclblast  -lclFFT  -lOpenCL  -lpthread -lm")
    set_target_properties(ocal::ocal PROPERTIES INTERFACE_LINK_LIBRARIES "${_ocal_private}")
  endif()
endif()
set(ocal_LIBRARIES ocal::ocal)
set(ocal_FOUND TRUE)
