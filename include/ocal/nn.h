/** \file
 * ocal — building blocks of neural networks that the elementwise operations and reductions
 * cannot make in one pass: softmax, log-softmax, and softmax cross-entropy with its gradient.
 *
 * Each call checks its arguments, enqueues one kernel on the context's in-order queue and
 * returns without waiting. Element types: f32, f64 on contexts with fp64, f16 and bf16
 * (computed in f32, results rounded to nearest even).
 *
 * Numerics. Every line is shifted by its maximum before exp (so large logits do not
 * overflow), and its sum of exponentials is accumulated in the element type (f32 for f16
 * and bf16). A NaN anywhere
 * in a line makes the whole line of the result NaN; a line of all -inf, or one holding +inf,
 * gives NaN too (0/0), as PyTorch does.
 *
 * Work. One work-item computes one line, in three passes over it: fast for the short lines
 * of classifiers (tens to a few thousand classes). */
#ifndef OCAL_NN_H
#define OCAL_NN_H

#include "ocal/buffer.h"
#include "ocal/export.h"
#include "ocal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = softmax of x along \p axis: exp(x - max) / sum(exp(x - max)) over each line.
 * \param x an f32, f64, f16 or bf16 buffer.
 * \param axis the axis the lines run along (negative counts from the end, -1 the last), or
 *        OCAL_AXIS_ALL (ocal/reduce.h) for the whole buffer as one line.
 * \param out a buffer of x's type and element count; may be x itself (in place).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT (bad axis, another context,
 *          partial overlap); OCAL_TYPE_MISMATCH (not f32/f64/f16/bf16, or types differ);
 *          OCAL_SHAPE_MISMATCH (element counts differ); OpenCL errors. */
OCAL_API ocal_status ocal_softmax(ocal_buffer x, int axis, ocal_buffer out);

/** out = log of the softmax of x along \p axis, computed as x - max - log(sum(exp(x - max)))
 * (accurate where softmax underflows to 0).
 * \param x an f32, f64, f16 or bf16 buffer.
 * \param axis as for ocal_softmax.
 * \param out a buffer of x's type and element count; may be x itself.
 * \returns as ocal_softmax. */
OCAL_API ocal_status ocal_log_softmax(ocal_buffer x, int axis, ocal_buffer out);

/** Softmax cross-entropy of rows of logits against integer class labels, and its gradient,
 * in one pass: for row r with label y = labels[r],
 *   loss[r]    = log(sum_j exp(logits[r, j])) - logits[r, y]
 *   grad[r, j] = softmax(logits[r])[j] - (j == y ? 1 : 0)
 * grad is the gradient of loss[r] with respect to logits[r]: for the mean loss over a batch
 * of n rows, scale it (or what is computed from it) by 1/n.
 * \param logits an f32, f64, f16 or bf16 buffer of 2 dimensions {rows, classes}, or more:
 *        the last dimension holds the classes, the others count rows.
 * \param labels an integer buffer (i32, u32, i64, u64 or u8) with one element per row. A
 *        label outside [0, classes) makes that row's loss and gradient NaN (the kernel
 *        cannot stop the program, and a NaN does not go unnoticed).
 * \param loss NULL, or a buffer of logits' type with one element per row.
 * \param grad NULL, or a buffer of logits' type and element count; may be logits itself (the
 *        gradient then replaces the logits).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT (loss and grad both NULL,
 *          another context, overlaps other than grad == logits); OCAL_TYPE_MISMATCH;
 *          OCAL_SHAPE_MISMATCH; OpenCL errors. */
OCAL_API ocal_status ocal_softmax_cross_entropy(ocal_buffer logits, ocal_buffer labels,
                                                ocal_buffer loss, ocal_buffer grad);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_NN_H */
