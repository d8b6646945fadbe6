"""Every public C function is wrapped by the extension or listed here with the reason it is
not; the declarations come from the installed headers (tools/gen_pxd.py), so a new C
function fails this test until it is wrapped or listed."""
import os
import re
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Not wrapped on purpose: what Python does another way, or what a Python user would not call.
NOT_WRAPPED = {
    # Shorthands of the generic calls that the package makes (ocal_reduce, ocal_scan).
    "ocal_sum": "ocal_reduce", "ocal_prod": "ocal_reduce", "ocal_amin": "ocal_reduce",
    "ocal_amax": "ocal_reduce", "ocal_argmin": "ocal_reduce", "ocal_argmax": "ocal_reduce",
    "ocal_mean": "ocal_reduce", "ocal_norm2": "ocal_reduce", "ocal_cumsum": "ocal_scan",
    "ocal_cummax": "ocal_scan",
    "ocal_reduce_to_host": "reductions return arrays; .get() reads them",
    "ocal_dot_to_host": "vdot returns an array; .get() reads it",
    # Names of enum values and statuses: Python has its own names for them.
    "ocal_cl_error_name": "messages name OpenCL errors already",
    "ocal_gemm_precision_name": "enum name", "ocal_scan_op_name": "enum name",
    "ocal_transpose_name": "enum name", "ocal_blas_tuning_source_name": "enum name",
    "ocal_unary_op_name": "enum name",
    "ocal_fft_engine_name": "enum name", "ocal_fft_kind_name": "enum name",
    "ocal_fft_direction_name": "enum name", "ocal_fft_norm_name": "enum name",
    "ocal_cg_precond_name": "enum name",
    "ocal_version": "ocal.version() gives the string",
    "ocal_setting_get": "for C libraries built on libocal (libocal-mpi); OCAL_* settings reach a Python program through os.environ before its first Context",
    "ocal_dtype_size": "NumPy dtypes know their size",
    "ocal_dtype_from_name": "NumPy dtypes name the types",
    "ocal_half_encode": "NumPy's float16 and ml_dtypes' bfloat16 convert on the host",
    "ocal_half_decode": "NumPy's float16 and ml_dtypes' bfloat16 convert on the host",
    "ocal_device_select": "Context(selector) resolves selectors",
    "ocal_buffer_get_numel": "Array.size", "ocal_buffer_get_nbytes": "Array.nbytes",
    "ocal_buffer_get_context": "Array.context",
    # Transfer queues and pinned memory: the package's transfers block (with the GIL
    # released), except get(blocking=False), an ocal_buffer_read with an event.
    "ocal_event_get_cl_event": "PyOpenCL interop covers users who manage cl_events",
    "ocal_event_from_cl": "PyOpenCL interop covers users who manage cl_events",
    "ocal_context_enqueue_wait": "no events", "ocal_context_enqueue_marker": "no events",
    "ocal_pinned_alloc": "blocking transfers only", "ocal_pinned_free": "blocking transfers only",
    "ocal_pinned_query": "blocking transfers only", "ocal_transfer_write": "blocking transfers only",
    "ocal_transfer_read": "blocking transfers only",
    # BLAS tuning and engine queries: the `ocal` tool does them (ocal tune, ocal info).
    "ocal_gemm_engine_query": "ocal info", "ocal_gemm_get_precision": "ocal info",
    "ocal_blas_get_tuning": "ocal tune", "ocal_blas_tuning_apply": "ocal tune",
    "ocal_blas_tune_options_init": "ocal tune", "ocal_blas_tune": "ocal tune",
    "ocal_gemv": "matmul runs gemm on a one-column matrix",
    "ocal_axpby": "a * x + b * y", "ocal_scale": "x *= a",
    "ocal_fft_plan_get_info": "the `ocal` tool reports plans",
    "ocal_fft_get_cache_stats": "the library caches plans; nothing to steer from Python",
    "ocal_fft_engine_available": "OCAL_FFT chooses engines",
    "ocal_fft_get_default_engine": "OCAL_FFT chooses engines",
    "ocal_program_create_from_file": "RawModule(open(path).read())",
    "ocal_kernel_get_cl_kernel": "PyOpenCL builds its own kernels",
    "ocal_csr_from_coo": "csr_array takes any scipy.sparse format (SciPy converts)",
    "ocal_csr_from_buffers": "csr_array takes host arrays",
    "ocal_csr_get_dtypes": "csr_array.dtype", "ocal_csr_get_context": "csr_array.context",
}


def public_functions():
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import gen_pxd
    if os.environ.get("OCAL_HEADER_CFLAGS"):  # tests/python.sh: the headers of the build
        return gen_pxd.generate(os.environ["OCAL_HEADER_CFLAGS"].split())[1]
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config is not installed")
    flags = subprocess.run(["pkg-config", "--cflags", "ocal"], capture_output=True, text=True)
    if flags.returncode != 0:
        pytest.skip("pkg-config does not find ocal (set PKG_CONFIG_PATH)")
    return gen_pxd.generate(flags.stdout.split())[1]


def test_every_public_function_is_wrapped_or_listed():
    names = public_functions()
    assert len(names) > 140
    src = ""
    for name in sorted(os.listdir(os.path.join(ROOT, "ocal"))):
        if name.endswith((".pyx", ".pxi")):
            with open(os.path.join(ROOT, "ocal", name)) as f:
                src += f.read()
    missing = [n for n in names if n not in NOT_WRAPPED and not re.search(r"\b%s\(" % n, src)]
    assert not missing, "wrap these in ocal/_core.pyx or list them in NOT_WRAPPED: %s" % missing
    stale = [n for n in NOT_WRAPPED if n not in names or re.search(r"\b%s\(" % n, src)]
    assert not stale, "listed as not wrapped, but wrapped or gone: %s" % stale
