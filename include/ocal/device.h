/** \file
 * ocal — OpenCL devices: listing them and choosing one.
 *
 * A selector string picks a device. It is, case-insensitively:
 *   "gpu", "cpu", "accelerator"  the first device of that type;
 *   "P:D"                         device D of platform P (both 0-based, as `ocal devices` shows);
 *   anything else                 the first device whose device or platform name contains it
 *                                 ("nvidia", "h100", "intel", "rusticl", "oclgrind"), or
 *                                 whose platform goes by that short name: "pocl" (PoCL's
 *                                 platform is "Portable Computing Language"), "amd"
 *                                 ("Advanced Micro Devices"), "mesa" (Clover, rusticl).
 * Leading and trailing blanks do not count. A NULL, empty or blank selector means: the
 * OCAL_DEVICE environment variable if it is set, else the first GPU, else the first
 * accelerator, else the first CPU. A selector of 256 characters or more is refused
 * (OCAL_INVALID_ARGUMENT), as such an OCAL_DEVICE is. */
#ifndef OCAL_DEVICE_H
#define OCAL_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "ocal/export.h"
#include "ocal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kind of a device (CL_DEVICE_TYPE). */
typedef enum ocal_device_type {
  OCAL_DEVICE_OTHER = 0,      /**< none of the others (a custom device) */
  OCAL_DEVICE_CPU = 1,        /**< CL_DEVICE_TYPE_CPU */
  OCAL_DEVICE_GPU = 2,        /**< CL_DEVICE_TYPE_GPU */
  OCAL_DEVICE_ACCELERATOR = 3 /**< CL_DEVICE_TYPE_ACCELERATOR */
} ocal_device_type;

/** The facts of one device. Strings are NUL-terminated and truncated to fit.
 * The library fills it; set struct_size = sizeof(ocal_device_info) before the call
 * (`ocal_device_info x = {.struct_size = sizeof x};`), as for every struct ocal fills:
 * a later version may append fields, and then writes only the ones a program compiled
 * against this struct knows. */
typedef struct ocal_device_info {
  size_t struct_size;           /**< sizeof(ocal_device_info), set by the caller */
  int platform_index;           /**< index of the platform, as in selector "P:D" */
  int device_index;             /**< index of the device within its platform */
  ocal_device_type type;        /**< CL_DEVICE_TYPE */
  char name[256];               /**< CL_DEVICE_NAME */
  char vendor[256];             /**< CL_DEVICE_VENDOR */
  char platform_name[256];      /**< CL_PLATFORM_NAME */
  char platform_version[256];   /**< CL_PLATFORM_VERSION */
  char device_version[256];     /**< CL_DEVICE_VERSION ("OpenCL 3.0 CUDA") */
  char driver_version[256];     /**< CL_DRIVER_VERSION */
  char opencl_c_version[256];   /**< CL_DEVICE_OPENCL_C_VERSION */
  uint64_t global_mem_bytes;    /**< CL_DEVICE_GLOBAL_MEM_SIZE */
  uint64_t max_alloc_bytes;     /**< CL_DEVICE_MAX_MEM_ALLOC_SIZE: the largest single buffer */
  uint64_t local_mem_bytes;     /**< CL_DEVICE_LOCAL_MEM_SIZE */
  unsigned compute_units;       /**< CL_DEVICE_MAX_COMPUTE_UNITS */
  unsigned max_clock_mhz;       /**< CL_DEVICE_MAX_CLOCK_FREQUENCY */
  size_t max_work_group_size;   /**< CL_DEVICE_MAX_WORK_GROUP_SIZE */
  size_t max_work_item_sizes[3];/**< CL_DEVICE_MAX_WORK_ITEM_SIZES */
  unsigned mem_base_align_bytes;/**< CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bytes */
  int has_fp64;                 /**< 1 when the device supports double precision */
} ocal_device_info;

/** Short name of a device type ("GPU", "CPU", "accelerator", "other").
 * \param type any value.
 * \returns a static string; "invalid" for a value that is not an ocal_device_type. */
OCAL_API const char *ocal_device_type_name(ocal_device_type type);

/** Lists every device of every OpenCL platform, in platform then device order.
 * \param capacity number of entries \p infos can hold.
 * \param infos array that receives up to \p capacity entries; may be NULL when capacity is 0.
 *        Set infos[0].struct_size (the others need not be set): it is the size of every
 *        entry, so the array of a program compiled against an older, shorter struct is
 *        filled with that stride.
 * \param count receives the number of devices that exist (which may exceed capacity).
 * \returns OCAL_OK (also when there are no devices: count is then 0); OCAL_INVALID_ARGUMENT
 *          for a NULL count or infos, or an infos[0].struct_size this library does not know
 *          (nothing is written then); an error when OpenCL itself fails. */
OCAL_API ocal_status ocal_device_list(size_t capacity, ocal_device_info *infos, size_t *count);

/** Resolves a selector to the device it picks, without creating anything.
 * \param selector see the top of this header; NULL, "" or blanks for OCAL_DEVICE / the
 *        default.
 * \param info receives the chosen device's facts; set its struct_size first.
 * \returns OCAL_OK; OCAL_NO_DEVICE when there is no OpenCL device at all;
 *          OCAL_DEVICE_NOT_FOUND when the selector matches nothing (the message lists the
 *          devices that exist); OCAL_INVALID_ARGUMENT for a NULL info, a bad
 *          info->struct_size, or a selector (or, for a blank one, an OCAL_DEVICE) of 256
 *          characters or more; an error when OpenCL itself fails, as for ocal_device_list. */
OCAL_API ocal_status ocal_device_select(const char *selector, ocal_device_info *info);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_DEVICE_H */
