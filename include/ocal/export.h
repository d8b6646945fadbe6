/** \file
 * ocal — symbol export macro.
 *
 * The library is built with -fvisibility=hidden; only declarations marked OCAL_API are
 * exported from the shared object, so internal helpers (prefix ocal__) never leak into
 * users' symbol namespace. */
#ifndef OCAL_EXPORT_H
#define OCAL_EXPORT_H

#if defined(_WIN32) && defined(OCAL_BUILDING_DLL)
#define OCAL_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define OCAL_API __attribute__((visibility("default")))
#else
#define OCAL_API
#endif

#endif /* OCAL_EXPORT_H */
