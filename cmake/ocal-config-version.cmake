# Version check for find_package(ocal VERSION): before 1.0 a minor release may change the API,
# so the major and minor numbers must match and the patch number must be at least the one asked.
set(PACKAGE_VERSION "0.1.0")
if(NOT PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
elseif(PACKAGE_FIND_VERSION_MAJOR EQUAL 0 AND
   PACKAGE_FIND_VERSION_MINOR EQUAL 1 AND
   NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
else()
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
