/** \file
 * ocal — your own kernels: OpenCL C compiled at run time (raw programs and kernels), and
 * kernels that ocal writes from expressions (elementwise, reduction, scan generators).
 *
 * Raw kernels are PyCUDA's SourceModule / CuPy's RawKernel: build a program from a string or
 * a .cl file, get a kernel by name, set its arguments by type, launch it over a 1-, 2- or
 * 3-D range. Generated kernels are PyOpenCL's ElementwiseKernel / ReductionKernel /
 * GenericScanKernel: give an argument list and expressions, ocal writes the kernel, builds
 * it, caches it and launches it. Both go through the context's memory cache and the disk
 * cache of program binaries, as ocal's own kernels do. */
#ifndef OCAL_KERNEL_H
#define OCAL_KERNEL_H

#include <stddef.h>

#include "ocal/buffer.h"
#include "ocal/context.h"
#include "ocal/export.h"
#include "ocal/reduce.h"
#include "ocal/status.h"
#include "ocal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- raw programs and kernels ------------------------------------------------------- */

/** A built OpenCL program of a context. Its binary lives in the context's cache, so creating
 * the same (source, options) again costs nothing; the handle holds a reference to the
 * context. */
typedef struct ocal_program_s *ocal_program;

/** A kernel of a program with its own argument values: each ocal_kernel is independent (two
 * handles on one kernel name do not share arguments). Not safe to set arguments of one
 * handle from two threads at once. Holds a reference to the context. */
typedef struct ocal_kernel_s *ocal_kernel;

/** Builds a program from OpenCL C source, through the memory and disk caches.
 * ocal adds `-cl-kernel-arg-info` to the options, so that kernels can check their arguments.
 * \param ctx the context.
 * \param source the OpenCL C source (NUL-terminated; copied).
 * \param options build options ("-DN=4 -cl-fast-relaxed-math"), or NULL.
 * \param program receives the program; release it with ocal_program_release.
 * \returns OCAL_OK; OCAL_BUILD_FAILED when the compiler rejects the source: ocal_last_error()
 *          then holds the compiler's log, whose line numbers are those of `source`;
 *          OCAL_INVALID_ARGUMENT or OCAL_INVALID_HANDLE for bad arguments (options the
 *          driver does not take among them). */
OCAL_API ocal_status ocal_program_create(ocal_context ctx, const char *source,
                                         const char *options, ocal_program *program);

/** The largest source file ocal_program_create_from_file reads: 16 MiB. */
#define OCAL_PROGRAM_FILE_MAX ((unsigned long long)16 << 20)

/** Builds a program from a .cl file (read whole; its name labels messages).
 * \param ctx the context.
 * \param path the file: a regular file (or a link to one) of at most OCAL_PROGRAM_FILE_MAX
 *        bytes; a directory, FIFO, device (/dev/zero) or larger file is refused unread.
 * \param options build options, or NULL.
 * \param program receives the program.
 * \returns OCAL_OK; OCAL_IO_ERROR when the file cannot be read, is not a regular file or is
 *          larger than OCAL_PROGRAM_FILE_MAX; else as ocal_program_create. */
OCAL_API ocal_status ocal_program_create_from_file(ocal_context ctx, const char *path,
                                                   const char *options, ocal_program *program);

/** Releases a program handle. Kernels created from it stay valid.
 * \param program the program, or NULL (nothing happens).
 * \returns OCAL_OK, or OCAL_INVALID_HANDLE for a handle that is not a program. */
OCAL_API ocal_status ocal_program_release(ocal_program program);

/** Creates a kernel of a program.
 * \param program the program.
 * \param name the kernel function's name.
 * \param kernel receives the kernel; release it with ocal_kernel_release.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT when the program has no kernel of that name (the
 *          message lists the kernels it has). */
OCAL_API ocal_status ocal_kernel_create(ocal_program program, const char *name,
                                        ocal_kernel *kernel);

/** Releases a kernel and the buffer references its arguments hold. Release a kernel once:
 * the handle is freed, so a second release reads freed memory (as for every handle).
 * \param kernel the kernel, or NULL (nothing happens).
 * \returns OCAL_OK, or OCAL_INVALID_HANDLE. */
OCAL_API ocal_status ocal_kernel_release(ocal_kernel kernel);

/** The number of arguments the kernel function takes.
 * \param kernel the kernel.
 * \param count receives the number.
 * \returns OCAL_OK, or OCAL_INVALID_HANDLE / OCAL_INVALID_ARGUMENT. */
OCAL_API ocal_status ocal_kernel_get_num_args(ocal_kernel kernel, int *count);

/** Sets argument `index` to a buffer: the kernel sees a `__global T *` at the buffer's first
 * element. The kernel keeps a reference to the buffer until the argument is set again or the
 * kernel is released. A view that starts at an offset is passed as an OpenCL sub-buffer,
 * which needs the offset in bytes to be a multiple of the device's base address alignment;
 * otherwise pass the whole buffer and the offset as a scalar.
 * \param kernel the kernel.
 * \param index the argument's position (0 is the first).
 * \param buffer a buffer of the kernel's context.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT for an index out of range or an argument that is not
 *          a `__global` / `__constant` pointer; OCAL_TYPE_MISMATCH when the pointer's
 *          element type is not the buffer's; OCAL_UNSUPPORTED when the type cannot be known
 *          (see ocal_kernel_set_scalar). */
OCAL_API ocal_status ocal_kernel_set_buffer(ocal_kernel kernel, int index, ocal_buffer buffer);

/** Sets argument `index` to a scalar of an ocal element type (float, double, int, uint,
 * long, ulong, uchar, float2, double2).
 * \param kernel the kernel.
 * \param index the argument's position.
 * \param dtype the scalar's type.
 * \param value points to the value (ocal_dtype_size(dtype) bytes; copied).
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT when the argument is not a by-value scalar;
 *          OCAL_TYPE_MISMATCH when the kernel declares another type; OCAL_UNSUPPORTED when
 *          the type cannot be known: the driver reports no argument information (ocal asks
 *          it once, when the program is compiled, and keeps the answer in the disk cache)
 *          and the declaration names a type that is not built into OpenCL C (a macro of the
 *          build options, a typedef) or cannot be read. Set such an argument with
 *          clSetKernelArg on ocal_kernel_get_cl_kernel's kernel. */
OCAL_API ocal_status ocal_kernel_set_scalar(ocal_kernel kernel, int index, ocal_dtype dtype,
                                            const void *value);

/** Sets a `__local` pointer argument to `bytes` bytes of local memory per work-group.
 * A size that depends on the work-group's size needs that size known: pass `local` to
 * ocal_kernel_launch (with `local` NULL ocal picks it, and the kernel learns it only from
 * get_local_size, after the memory was sized).
 * \param kernel the kernel.
 * \param index the argument's position.
 * \param bytes the size (> 0).
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT when the argument is not `__local` or bytes is 0;
 *          OCAL_UNSUPPORTED when bytes exceeds the device's local memory. */
OCAL_API ocal_status ocal_kernel_set_local(ocal_kernel kernel, int index, size_t bytes);

/** Enqueues the kernel over an ndim-D range of work-items.
 *
 * `global` is the number of work-items wanted in each dimension. With `local` NULL, ocal
 * picks the work-group size from the kernel's and the device's limits, or takes the size a
 * kernel declares with `__attribute__((reqd_work_group_size(X, Y, Z)))`. Either way each
 * global size is rounded UP to a multiple of the work-group size, so the kernel may run on
 * more work-items than asked for: it must pass the true size in as an argument and guard,
 * e.g. `if (get_global_id(0) >= n) return;`. Every argument must have been set.
 *
 * A launch has at most 2^32 - 1 (4294967295) work-groups, all dimensions together, on every
 * device: OpenCL bounds only each global size (by size_t), and PoCL, the CPU device ocal falls
 * back to, numbers the work-groups of a launch with a 32-bit index. Split larger work into
 * several launches.
 * \param kernel the kernel.
 * \param ndim 1, 2 or 3.
 * \param global ndim sizes, each > 0.
 * \param local ndim work-group sizes, or NULL to let ocal choose.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT for an argument that was not set, a zero size, a
 *          bad ndim, a `local` (or fewer dimensions) other than the kernel's declared
 *          reqd_work_group_size, or more than 2^32 - 1 work-groups; OCAL_UNSUPPORTED for a
 *          work-group larger than the kernel or device allows, more local memory than the
 *          device has, or a range the device cannot address — all found before anything
 *          reaches the driver. */
OCAL_API ocal_status ocal_kernel_launch(ocal_kernel kernel, int ndim, const size_t *global,
                                        const size_t *local);

/** The underlying OpenCL kernel, to mix ocal with your own OpenCL calls.
 * \param kernel the kernel.
 * \param out receives the cl_kernel (owned by the ocal_kernel).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when out is NULL. */
OCAL_API ocal_status ocal_kernel_get_cl_kernel(ocal_kernel kernel, cl_kernel *out);

/* ---- generated kernels -------------------------------------------------------------- */

/** A kernel (or a set of kernels) that ocal wrote from expressions: elementwise, reduction
 * or scan. Holds a reference to its context. One handle may be run from several threads. */
typedef struct ocal_gen_s *ocal_gen;

/** One argument of a generated kernel's call: a buffer for a pointer argument, or a pointer
 * to the value for a scalar argument (its type is the one declared in the argument list).
 * Build them with OCAL_GEN_BUFFER(b) and OCAL_GEN_SCALAR(&v). */
typedef struct ocal_gen_arg {
  ocal_buffer buffer; /**< the buffer of a pointer argument, else NULL */
  const void *scalar; /**< the value of a scalar argument (read during the call), else NULL */
} ocal_gen_arg;

/** The argument for a pointer parameter: buffer \p b. */
#define OCAL_GEN_BUFFER(b) ((ocal_gen_arg){(b), NULL})
/** The argument for a scalar parameter: the value \p p points to. */
#define OCAL_GEN_SCALAR(p) ((ocal_gen_arg){NULL, (p)})

/** Run over the length of the first buffer argument (ocal_gen_run's n). */
#define OCAL_GEN_AUTO ((size_t)-1)

/** The most arguments a generator's argument list may declare (more are refused at creation). */
#define OCAL_GEN_MAX_ARGS 64

/** Writes an elementwise kernel.
 *
 * `arguments` is a C-style parameter list of scalars and pointers of the ocal element types,
 * spelled as OpenCL C types: "float a, const float *x, float *y" (float, double, int, uint,
 * long, ulong, uchar, float2, double2; pointers may be const). `body` is one or more C
 * statements run for every index `i` (a `ulong`, 0 <= i < n), e.g. "y[i] = a * x[i] + y[i]";
 * `n` is also in scope. A pointer points at its buffer's first element (views included).
 * `preamble` (or NULL) is OpenCL C placed before the kernel: helper functions, macros.
 * Names that start with `ocal_` or `OCAL_` are reserved for the code ocal generates around
 * the user's texts: the preamble and the argument names must not define or declare them.
 * The body for index i should touch element i of the buffers it writes (the elementwise
 * contract): on GPUs each work-item runs it for four indices with the pointers declared
 * `restrict`, so that their loads can all be in flight before the stores. The same buffer
 * may be passed for two arguments ("y[i] = a * x[i] + y[i]" with x = y) when the body
 * reads element i before it writes it.
 * \param ctx the context.
 * \param arguments the argument list.
 * \param body the statements.
 * \param preamble helpers, or NULL.
 * \param gen receives the generator; the kernel is built (or loaded from the caches) now.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT when the argument list cannot be parsed (the
 *          message names the column and the offending token) or gen is NULL (checked before
 *          anything is built); OCAL_UNSUPPORTED for more than OCAL_GEN_MAX_ARGS arguments or
 *          a double argument on a context without fp64; OCAL_BUILD_FAILED when the
 *          generated kernel does not compile: the message holds the log and the generated
 *          source with numbered lines. The user's texts sit under \#line directives, so
 *          drivers that honour them (PoCL) report "body:1:8: error ..."; others (NVIDIA)
 *          report the line of the numbered source.
 *
 * On GPUs, when every argument has one type and the body uses only arithmetic, assignments,
 * `p[i]` subscripts, scalar arguments, literals (float ones with the f suffix) and
 * componentwise built-in functions, ocal also builds a 4-wide form of the kernel (each
 * `p[i]` a 4-vector) and runs it when every buffer starts at a multiple of 4 elements: the
 * generated `y[i] = a * x[i] + y[i]` then streams as fast as ocal_axpy. The source of both
 * forms is in ocal_gen_get_source. */
OCAL_API ocal_status ocal_gen_elementwise(ocal_context ctx, const char *arguments,
                                          const char *body, const char *preamble,
                                          ocal_gen *gen);

/** Writes a reduction: out = reduce over i of map(i), starting from `neutral`.
 *
 * `map` is an expression of `i` and the arguments ("x[i] * y[i]") giving a value of type
 * `dtype`; `reduce` combines two such values named `a` and `b` ("a + b", "max(a, b)") and
 * must be associative (the order of combination is a tree, not left to right); `neutral` is
 * its identity ("0", "-INFINITY"). The kernels and the plan are ocal_sum's (one engine:
 * cl/reduce.cl instantiated with the user's expressions, planned by the same host code): one
 * work-group per row or per chunk of a row, a work-item per column along other axes, a
 * second pass merging the chunks.
 *
 * Accuracy: when dtype is f32 or f64 and `reduce` is a plain sum ("a + b" or "b + a",
 * spaces ignored), the reduction is ocal_sum's compensated (Neumaier) sum, and map products
 * are rounded before they are added (no contraction into fma): a generated "a + b" of
 * "x[i]" gives ocal_sum's result (to the bit on CPUs; GPUs read a generated row as
 * scalars, coalesced, rather than as vectors). Any other reduce expression is evaluated as
 * written, and must also be commutative (the trees do not keep the order of the elements).
 * The names starting with `ocal_` or `OCAL_` are reserved (see ocal_gen_elementwise). The
 * reduction's kernels follow the preamble in one program, but declare no other names
 * (beyond `i`, `n`, `a` and `b`, which the expressions use, and OpenCL C's own), so a
 * preamble may `#define` any other name, short ones such as `L` or `VW` included.
 * \param ctx the context.
 * \param dtype the type of map's values and of the result (not complex).
 * \param neutral the identity of reduce.
 * \param reduce the combining expression of `a` and `b`.
 * \param map the expression of `i` to reduce.
 * \param arguments the argument list (as for ocal_gen_elementwise).
 * \param preamble helpers, or NULL.
 * \param gen receives the generator.
 * \returns as ocal_gen_elementwise. */
OCAL_API ocal_status ocal_gen_reduction(ocal_context ctx, ocal_dtype dtype, const char *neutral,
                                        const char *reduce, const char *map,
                                        const char *arguments, const char *preamble,
                                        ocal_gen *gen);

/** Writes a scan (prefix operation): out[i] = input(0) op input(1) op ... op input(i)
 * (inclusive), or the same without input(i), starting from `neutral` (exclusive).
 * `input` is an expression of `i` and the arguments ("x[i]"), `op` an associative
 * expression of `a` and `b` ("a + b", "max(a, b)") with `neutral` as its identity; `a` is
 * always the earlier part, but the totals of the pieces of a long row are combined in a
 * tree that does not keep their order, so `op` must also be commutative. Run it over
 * indices 0 .. n-1 with ocal_gen_run, or along an axis of the first buffer's shape with
 * ocal_gen_run_axis. The kernels and the plan are those of ocal_scan / ocal_cumsum: rows
 * of contiguous indices are scanned by work-groups in tiles, other axes by a work-item per
 * column, and long rows or columns that would not fill the device are cut into pieces
 * (reduce the pieces, scan their totals, rescan the pieces). So the accuracy is the
 * built-in's (sums are not compensated), and "a + b" over "x[i]" adds in ocal_cumsum's
 * order.
 * The names starting with `ocal_` or `OCAL_` are reserved (see ocal_gen_elementwise). The
 * scan's kernels follow the preamble in one program, but declare no other names (beyond `i`,
 * `n`, `a` and `b`, which the expressions use, and OpenCL C's own), so a preamble may
 * `#define` any other name, short ones such as `L` or `tile` included.
 * \param ctx the context.
 * \param dtype the type of the values and of out (not complex).
 * \param neutral the identity of op.
 * \param op the combining expression of `a` and `b`.
 * \param input the expression of `i` giving the values to scan.
 * \param arguments the argument list (as for ocal_gen_elementwise).
 * \param preamble helpers, or NULL.
 * \param exclusive 0 for an inclusive scan, 1 for an exclusive one.
 * \param gen receives the generator.
 * \returns as ocal_gen_elementwise. */
OCAL_API ocal_status ocal_gen_scan(ocal_context ctx, ocal_dtype dtype, const char *neutral,
                                   const char *op, const char *input, const char *arguments,
                                   const char *preamble, int exclusive, ocal_gen *gen);

/** Runs a generated kernel over indices 0 .. n-1.
 *   - elementwise: out must be NULL;
 *   - reduction: out gets the one result (a buffer of `dtype` with one element);
 *   - scan: out gets n results (a buffer of `dtype` with n elements; it may be one of the
 *     arguments only if input(i) reads nothing but element i of it, and may overlap no
 *     argument otherwise: a view of one that starts elsewhere is refused).
 * \param gen the generator.
 * \param n the number of indices, or OCAL_GEN_AUTO for the element count of the first
 *          buffer argument.
 * \param nargs the number of arguments (as many as the argument list declares).
 * \param args the arguments, in the order of the argument list.
 * \param out the output buffer, as above.
 * An elementwise kernel writes element i of its writable (non-const) pointer arguments for
 * every i < n, so each of them must hold at least n elements. Beyond that, ocal does not
 * check how the expressions index the buffers (a const table may be read at any index):
 * keep them within bounds.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE for a NULL or released gen, buffer argument or
 *          (reduction, scan) out; OCAL_INVALID_ARGUMENT for a wrong count or kind of argument,
 *          (elementwise) an n larger than a non-const pointer argument's element count, or
 *          (scan) an out that overlaps an argument without starting where it starts;
 *          OCAL_TYPE_MISMATCH for a buffer whose type is not the declared one;
 *          OCAL_SHAPE_MISMATCH for an out of the wrong size. */
OCAL_API ocal_status ocal_gen_run(ocal_gen gen, size_t n, int nargs, const ocal_gen_arg *args,
                                  ocal_buffer out);

/** Runs a generated reduction or scan along one axis of the first buffer argument's shape.
 * `i` in the map or input expression is then the row-major flat index of that shape, so
 * "x[i] * y[i]" still reads element i of buffers of that shape (views included: their own
 * shape, from their first element).
 *   - reduction: out gets one result per position of the other axes;
 *   - scan: out[i] is the scan of input along the axis up to i (inclusive or exclusive as
 *     created), for every i of the shape; out may be x itself under ocal_gen_run's rule.
 * \param gen a reduction or scan generator (not elementwise).
 * \param axis the axis (negative counts from the end), or OCAL_AXIS_ALL: the whole first
 *        buffer as one row (a scan over its element count, as ocal_gen_run with
 *        OCAL_GEN_AUTO).
 * \param nargs the number of arguments.
 * \param args the arguments.
 * \param out reduction: the shape without the axis, or with it as 1 (as ocal_sum), one
 *        element for OCAL_AXIS_ALL; scan: the first buffer's shape (as ocal_cumsum), any
 *        shape of as many elements for OCAL_AXIS_ALL. Its type is the generator's dtype.
 * \returns as ocal_gen_run; OCAL_INVALID_ARGUMENT for an elementwise generator, an axis out
 *          of range or no buffer argument; OCAL_SHAPE_MISMATCH for an out of another
 *          shape (the message names both shapes). */
OCAL_API ocal_status ocal_gen_run_axis(ocal_gen gen, int axis, int nargs,
                                       const ocal_gen_arg *args, ocal_buffer out);

/** The OpenCL C source that ocal wrote (for debugging).
 * \param gen the generator.
 * \param source receives a string owned by gen, valid until it is released.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when source is NULL. */
OCAL_API ocal_status ocal_gen_get_source(ocal_gen gen, const char **source);

/** Releases a generator.
 * \param gen the generator, or NULL.
 * \returns OCAL_OK, or OCAL_INVALID_HANDLE. */
OCAL_API ocal_status ocal_gen_release(ocal_gen gen);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_KERNEL_H */
