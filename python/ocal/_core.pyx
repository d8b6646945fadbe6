# cython: language_level=3, boundscheck=False, cdivision=True
"""The extension over libocal: contexts, arrays and the calls on them. The Python modules
of the package (fft, linalg, random, ...) are thin layers over what this file exports."""

from libc.float cimport FLT_MAX
from libc.math cimport isinf
from libc.stdint cimport *
from libc.string cimport memcmp, memcpy, memset
from cpython.pycapsule cimport PyCapsule_New
from _capi cimport *

import atexit
import builtins as _builtins
import weakref
import numpy as np
from ocal._errors import BY_STATUS, OcalError, TypeMismatchError, UnsupportedError, \
    InvalidHandleError, ShapeMismatchError, InvalidArgumentError, ContextMismatchError, \
    SizeOverflowError

try:
    import ml_dtypes
    bfloat16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bf16 arrays then need ml_dtypes to be read back
    bfloat16 = None

AXIS_ALL = OCAL_AXIS_ALL
MAX_DIMS = OCAL_MAX_DIMS


# ---- errors ---------------------------------------------------------------------------

cdef int raise_status(ocal_status s) except -1:
    """Raises the exception class of a failed status with ocal_last_error()'s message."""
    cls = BY_STATUS.get(<int>s, OcalError)
    msg = (<bytes>ocal_last_error()).decode("utf-8", "replace")
    # The C library's advice names its own conversion; from Python it is astype().
    msg = msg.replace("ocal_cast", "astype()")
    err = cls(msg or (<bytes>ocal_status_description(s)).decode())
    err.status = <int>s
    err.status_name = (<bytes>ocal_status_name(s)).decode()
    raise err


cdef inline int check(ocal_status s) except -1:
    if s != OCAL_OK:
        raise_status(s)
    return 0


def last_error():
    """ocal_last_error(): the calling thread's last failure message."""
    return (<bytes>ocal_last_error()).decode("utf-8", "replace")


def version():
    """The library's version string (ocal_version_string)."""
    return (<bytes>ocal_version_string()).decode()


# ---- element types -----------------------------------------------------------------------

cdef dict _code_of = {
    np.dtype(np.float32): OCAL_F32, np.dtype(np.float64): OCAL_F64,
    np.dtype(np.int32): OCAL_I32, np.dtype(np.uint32): OCAL_U32,
    np.dtype(np.int64): OCAL_I64, np.dtype(np.uint64): OCAL_U64,
    np.dtype(np.uint8): OCAL_U8, np.dtype(np.bool_): OCAL_U8,
    np.dtype(np.complex64): OCAL_C32, np.dtype(np.complex128): OCAL_C64,
    np.dtype(np.float16): OCAL_F16,
}
if bfloat16 is not None:
    _code_of[bfloat16] = OCAL_BF16

cdef object _np_of_code(int code):
    """The NumPy dtype of an ocal element type (bool is never returned: it is stored as u8)."""
    for k, v in _code_of.items():
        if v == code and k != np.dtype(np.bool_):
            return k
    raise UnsupportedError("ocal: element type %s needs ml_dtypes installed to be used from "
                           "Python (pip install ml_dtypes)" % (<bytes>ocal_dtype_name(<ocal_dtype>code)).decode())


cpdef int dtype_code(dt) except -1:
    """The ocal element type of a NumPy dtype; TypeMismatchError for one ocal lacks."""
    try:
        return _code_of[dt]
    except (KeyError, TypeError):
        pass
    d = np.dtype(dt)
    if d in _code_of:
        return _code_of[d]
    raise TypeMismatchError(
        "ocal: no element type for %s; ocal has float16/32/64, bfloat16 (ml_dtypes), int32, "
        "int64, uint8, uint32, uint64, bool, complex64, complex128: convert with astype" % d)


# ---- devices and contexts ------------------------------------------------------------------

cdef class Device:
    """One OpenCL device's facts (ocal_device_info)."""
    cdef readonly str name, vendor, platform_name, driver_version, type
    cdef readonly int platform_index, device_index, has_fp64
    cdef readonly uint64_t global_mem_bytes
    cdef readonly unsigned compute_units

    @staticmethod
    cdef Device from_info(ocal_device_info *info):
        cdef Device d = Device.__new__(Device)
        d.name = (<bytes>info.name).decode("utf-8", "replace")
        d.vendor = (<bytes>info.vendor).decode("utf-8", "replace")
        d.platform_name = (<bytes>info.platform_name).decode("utf-8", "replace")
        d.driver_version = (<bytes>info.driver_version).decode("utf-8", "replace")
        d.type = (<bytes>ocal_device_type_name(info.type)).decode()
        d.platform_index = info.platform_index
        d.device_index = info.device_index
        d.has_fp64 = info.has_fp64
        d.global_mem_bytes = info.global_mem_bytes
        d.compute_units = info.compute_units
        return d

    @property
    def selector(self):
        """The "P:D" selector that picks this device."""
        return "%d:%d" % (self.platform_index, self.device_index)

    def __repr__(self):
        return "<ocal.Device %s %r (%s)>" % (self.selector, self.name, self.platform_name)


def devices():
    """Every OpenCL device there is, as Device objects (ocal_device_list)."""
    cdef size_t count = 0
    cdef ocal_device_info first
    first.struct_size = sizeof(ocal_device_info)
    check(ocal_device_list(0, &first, &count))
    if count == 0:
        return []
    infos = np.zeros(count * sizeof(ocal_device_info), np.uint8)
    cdef unsigned char[::1] raw = infos
    cdef ocal_device_info *p = <ocal_device_info *>&raw[0]
    p[0].struct_size = sizeof(ocal_device_info)
    check(ocal_device_list(count, p, &count))
    return [Device.from_info(&p[i]) for i in range(count)]


cdef class Context:
    """A device, its in-order queue and its kernel caches (ocal_context).

    Context() takes the library's choice of device (OCAL_DEVICE, else the first GPU, else a
    CPU); Context("cpu"), Context("0:1"), Context("nvidia") pick one by selector."""
    cdef ocal_context ptr
    cdef readonly Device device
    cdef readonly bint fp64
    cdef public object _gens      # generated kernels of the package (transpose, ...)
    cdef int _dl_index            # the device's DLPack device_id, found on first use
    cdef dict _consts             # 0-d arrays of scalar operands (where), never written
    # The last float operand where's fast path used (its type code, bits and 0-d array).
    cdef int _last_code
    cdef uint64_t _last_bits
    cdef Array _last_const
    cdef object __weakref__

    def __cinit__(self):
        self.ptr = NULL
        self._gens = {}
        self._dl_index = -1
        self._consts = {}
        self._last_code = -1

    def __init__(self, device=None, *, pool=None, profiling=False):
        cdef ocal_context_options opt
        cdef ocal_context c = NULL
        check(ocal_context_options_init(&opt))
        sel = device.selector if isinstance(device, Device) else device
        if sel is not None and not isinstance(sel, str):
            raise TypeError("ocal.Context(device): device must be None (the library's choice), "
                            "a selector string (\"cpu\", \"gpu\", \"0:1\", \"nvidia\") or an "
                            "ocal.Device, not %s %r" % (type(device).__name__, device))
        cdef bytes bsel = sel.encode() if sel is not None else None
        if bsel is not None:
            opt.device = bsel
        if pool is not None:
            opt.pool = 1 if pool else 0
        opt.profiling = 1 if profiling else 0
        with nogil:
            s = ocal_context_create(&opt, &c)
        check(s)
        self._adopt(c)

    cdef _adopt(self, ocal_context c):
        cdef ocal_device_info info
        cdef int fp64 = 0
        self.ptr = c
        _live_contexts.add(self)
        info.struct_size = sizeof(ocal_device_info)
        check(ocal_context_get_device_info(c, &info))
        check(ocal_context_get_fp64(c, &fp64))
        self.device = Device.from_info(&info)
        self.fp64 = fp64

    cdef inline ocal_context handle(self) except NULL:
        if self.ptr == NULL:
            raise InvalidHandleError("ocal: this Context was released; create a new one "
                                     "(ocal.Context()) or use the default")
        return self.ptr

    def finish(self):
        """Waits for every queued command of the context (ocal_context_finish)."""
        cdef ocal_context c = self.handle()
        with nogil:
            s = ocal_context_finish(c)
        check(s)

    def release(self):
        """Frees the context now (else garbage collection does). Arrays of it must be gone."""
        cdef ocal_context c = self.ptr
        if c == NULL:
            return
        self._gens = {}
        self.ptr = NULL
        with nogil:
            s = ocal_context_release(c)
        check(s)

    def memory_stats(self):
        """The memory pool's counters (ocal_memory_get_stats) as a dict."""
        cdef ocal_memory_stats st
        st.struct_size = sizeof(ocal_memory_stats)
        check(ocal_memory_get_stats(self.handle(), &st))
        return {"bytes_in_use": st.bytes_in_use, "bytes_cached": st.bytes_cached,
                "device_allocs": st.device_allocs, "device_frees": st.device_frees,
                "hits": st.hits, "misses": st.misses, "pool_enabled": st.pool_enabled}

    def trim(self):
        """Gives the pool's cached blocks back to the driver (ocal_memory_trim)."""
        check(ocal_memory_trim(self.handle()))

    def set_pool_limit(self, uint64_t nbytes):
        """The most bytes the pool keeps cached (ocal_memory_set_pool_limit)."""
        check(ocal_memory_set_pool_limit(self.handle(), nbytes))

    def cache_stats(self):
        """The kernel caches' counters (ocal_context_get_cache_stats) and directory."""
        cdef ocal_cache_stats st
        cdef const char *d = NULL
        st.struct_size = sizeof(ocal_cache_stats)
        check(ocal_context_get_cache_stats(self.handle(), &st))
        check(ocal_context_get_cache_dir(self.handle(), &d))
        return {"compiles": st.compiles, "disk_hits": st.disk_hits,
                "memory_hits": st.memory_hits, "disk_rejects": st.disk_rejects,
                "dir": (<bytes>d).decode() if d != NULL else None}

    @property
    def int_ptr(self):
        """The address of the cl_context (for PyOpenCL's from_int_ptr)."""
        cdef cl_context c
        check(ocal_context_get_cl_context(self.handle(), &c))
        return <uintptr_t>c

    @property
    def queue_int_ptr(self):
        """The address of the context's cl_command_queue."""
        cdef cl_command_queue q
        check(ocal_context_get_cl_queue(self.handle(), &q))
        return <uintptr_t>q

    @property
    def device_int_ptr(self):
        """The address of the cl_device_id."""
        cdef cl_device_id d
        check(ocal_context_get_cl_device(self.handle(), &d))
        return <uintptr_t>d

    def __dealloc__(self):
        if self.ptr != NULL:
            ocal_context_release(self.ptr)

    def __repr__(self):
        return "<ocal.Context on %r>" % (self.device.name if self.device else None)


cdef object _adopted = weakref.WeakValueDictionary()


cdef Context _context_for_cl(uintptr_t clctx, uintptr_t dev, uintptr_t queue):
    """The ocal Context over these OpenCL objects: ocal's own when they are its, else one
    made once by ocal_context_from_cl (kept while arrays use it)."""
    if _default is not None and _default.ptr != NULL and _default.int_ptr == clctx:
        return _default
    key = (clctx, dev, queue)
    cdef Context c = _adopted.get(key)
    if c is not None and c.ptr != NULL:
        return c
    cdef ocal_context oc = NULL
    with nogil:
        s = ocal_context_from_cl(<cl_context>clctx, <cl_device_id>dev, <cl_command_queue>queue,
                                 NULL, &oc)
    check(s)
    c = Context.__new__(Context)
    c._adopt(oc)
    _adopted[key] = c
    return c


def from_pyopencl(arr):
    """An ocal.Array over a C-contiguous pyopencl.array.Array's memory (no copy), on an
    ocal context adopting its OpenCL context and queue (ocal_context_from_cl,
    ocal_buffer_from_cl_mem). The ocal array keeps the PyOpenCL array alive."""
    if not arr.flags.c_contiguous:
        raise UnsupportedError("ocal.from_pyopencl: the array is not C-contiguous; copy it "
                               "first (arr.copy())")
    cdef Context c = _context_for_cl(arr.context.int_ptr, arr.queue.device.int_ptr,
                                     arr.queue.int_ptr)
    shape = _norm_shape(arr.shape)
    dt = np.dtype(arr.dtype)
    cdef int code = dtype_code(dt)
    cdef size_t cs[4]
    cdef int nd = _cshape(shape, cs)
    cdef Array a = Array.__new__(Array)
    if arr.size == 0:
        check(ocal_buffer_create(c.handle(), <ocal_dtype>code, nd, cs, &a.buf))
    else:
        check(ocal_buffer_from_cl_mem(c.handle(), <cl_mem><uintptr_t>arr.base_data.int_ptr,
                                      arr.offset, <ocal_dtype>code, nd, cs, &a.buf))
    a.context, a.shape, a.dtype, a.code, a.base = c, shape, dt, code, arr
    _meta(a)
    return a


cdef Context _default = None

# Every context alive, for _finish_at_exit.
_live_contexts = weakref.WeakSet()


def _finish_at_exit():
    """Waits for the queued work of every live context when the interpreter exits. Operations
    return before their work is done, and a program may end right after one (a script whose
    last line is an FFT): the OpenCL implementation's threads would still run that work (PoCL
    compiles a kernel at its first launch) while the process's exit handlers tear down what
    they use (LLVM's state, CLBlast's program cache), and the process would die of a signal."""
    for c in list(_live_contexts):
        if (<Context>c).ptr != NULL:
            try:
                c.finish()
            except Exception:
                pass  # a context whose device failed: nothing left to wait for


atexit.register(_finish_at_exit)


cpdef Context get_context():
    """The default context, made on first use (the library's choice of device)."""
    global _default
    if _default is None or _default.ptr == NULL:
        _default = Context()
    return _default


def set_context(Context ctx):
    """Makes ctx the default context of later array creations."""
    global _default
    _default = ctx


cdef inline Context _ctx(ctx):
    return get_context() if ctx is None else <Context?>ctx


# ---- arrays --------------------------------------------------------------------------------

cdef inline Py_ssize_t _numel(tuple shape):
    cdef Py_ssize_t n = 1
    for s in shape:
        n *= <Py_ssize_t>s
    return n


cdef tuple _norm_shape(shape):
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    for s in shape:
        if s < 0:
            raise ShapeMismatchError("ocal: negative dimension in shape %r" % (shape,))
    if len(shape) > OCAL_MAX_DIMS:
        raise UnsupportedError("ocal: arrays have at most %d dimensions; shape %r has %d"
                               % (OCAL_MAX_DIMS, shape, len(shape)))
    return shape


cdef inline int _cshape(tuple shape, size_t *out) except -1:
    """The buffer shape of a Python shape: () is stored as {1}. out has OCAL_MAX_DIMS
    entries: a longer shape (a view by reshape or indexing with None) is refused here."""
    cdef int nd = len(shape)
    if nd > OCAL_MAX_DIMS:
        raise UnsupportedError("ocal: an array of shape %r has %d dimensions; ocal arrays have "
                               "at most %d" % (shape, nd, OCAL_MAX_DIMS))
    if nd == 0:
        out[0] = 1
        return 1
    for i in range(nd):
        out[i] = <size_t>shape[i]
    return nd


cdef inline void _meta(Array a):
    """Fills the C copies of an array's shape and type facts (after shape and dtype are set)."""
    a.nd = _cshape(a.shape, a.cs)
    a.fast = a.code != OCAL_C32 and a.code != OCAL_C64 and a.dtype.kind != "b"


cdef class Array:
    """An n-dimensional array (0 to 4 dimensions) on an ocal context's device.

    Operations are queued on the context's in-order queue and return at once; .get()
    copies the values to a NumPy array (and so waits for them)."""
    cdef ocal_buffer buf
    cdef readonly Context context
    cdef readonly tuple shape
    cdef readonly object dtype
    cdef int code
    cdef readonly object base     # what keeps this view's memory alive (an Array, a PyOpenCL array)
    # The shape and type facts the operators test, as C values (no Python lookups on the
    # fast path of `a + b`).
    cdef int nd
    cdef size_t cs[4]
    cdef bint fast                # a real type, not bool: ocal_binary's type is the result's
    __array_priority__ = 100
    __array_ufunc__ = None         # NumPy defers to Array's operators instead of converting

    def __cinit__(self):
        self.buf = NULL

    def __dealloc__(self):
        if self.buf != NULL:
            ocal_buffer_release(self.buf)

    def __init__(self, *args, **kwargs):
        raise TypeError("ocal.Array is made by ocal.asarray, ocal.empty, ocal.zeros, ...")

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return _numel(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return _numel(self.shape) * self.dtype.itemsize

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d ocal.Array")
        return self.shape[0]

    def __iter__(self):
        # Without it Python iterates through __getitem__ until IndexError, which a 0-d array
        # raises at once: an empty loop where NumPy raises TypeError.
        if not self.shape:
            raise TypeError("iteration over a 0-d ocal.Array (as over a 0-d NumPy array): "
                            "use x.item() or float(x) for its value")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        return "ocal.Array(%s, dtype=%s)" % (np.array2string(self.get(), separator=", "),
                                             self.dtype)

    def __array__(self, *args, **kwargs):
        raise TypeError("ocal.Array does not convert to a NumPy array implicitly (it would "
                        "copy from the device): call .get() to copy it to the host")

    def get(self, blocking=True):
        """Copies the array into a new NumPy array (blocks until it is computed). With
        blocking=False the copy is queued and (array, ocal.Event) come back at once: read
        the array after event.wait()."""
        out = np.empty(self.shape, self.dtype)
        cdef size_t n = _numel(self.shape)
        cdef ocal_buffer b = self.buf
        cdef void *p = <void *><uintptr_t>out.ctypes.data
        cdef Event ev
        if not blocking:
            ev = Event.__new__(Event)
            ev.keep = out
            if n:
                check(ocal_buffer_read(b, 0, n, p, &ev.ptr))
            return out, ev
        if n:
            with nogil:
                s = ocal_buffer_read(b, 0, n, p, NULL)
            check(s)
        return out

    def item(self):
        return self.get().item()

    def __float__(self):
        return float(self.get())

    def __int__(self):
        return int(self.get())

    def __index__(self):
        if self.dtype.kind not in "iub":
            raise TypeError("only integer ocal arrays can be used as an index")
        return int(self.get())

    def __bool__(self):
        if _numel(self.shape) != 1:
            raise ValueError("the truth value of an ocal.Array with more than one element is "
                             "ambiguous; use .get().any() or .get().all()")
        return bool(self.get())

    __hash__ = None

    # -- views and copies ----------------------------------------------------------------------

    def reshape(self, *shape):
        """A view with another shape of the same number of elements (-1 allowed once)."""
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        shape = list(_norm_shape([s if s != -1 else 0 for s in shape]) if -1 not in shape
                     else shape)
        if -1 in shape:
            known = _numel(tuple(s for s in shape if s != -1))
            shape[shape.index(-1)] = _numel(self.shape) // known if known else 0
        new = _norm_shape(shape)
        if _numel(new) != _numel(self.shape):
            raise ShapeMismatchError("ocal: cannot reshape an array of shape %r into %r"
                                     % (self.shape, new))
        return self._view(0, new)

    def ravel(self):
        return self._view(0, (_numel(self.shape),))

    cdef Array _view(self, size_t offset, tuple shape):
        cdef size_t cs[4]
        cdef int nd = _cshape(shape, cs)
        cdef Array out = Array.__new__(Array)
        check(ocal_buffer_view(self.buf, offset, nd, cs, &out.buf))
        out.context, out.shape, out.dtype, out.code = self.context, shape, self.dtype, self.code
        _meta(out)
        out.base = self if self.base is None else self.base
        return out

    def __getitem__(self, key):
        """NumPy's indexing: integers, slices (any step), Ellipsis, None, and integer
        arrays (broadcast together) or boolean masks. A contiguous range of the array is a
        view; anything else is a copy made on the device (an index array given as an
        ocal.Array is read back)."""
        if type(key) is int or type(key) is slice and key.step is None:
            return _getitem(self, key)
        if key is Ellipsis or type(key) is tuple and len(<tuple>key) == 0:
            return self
        return _getitem(self, key)

    def __setitem__(self, key, value):
        """NumPy's assignment through any index __getitem__ takes: into the view where the
        selection is a contiguous range, else scattered on the device."""
        _check_int_range(value, self.dtype, "ocal.Array.__setitem__ (x[...] = value)")
        if key is Ellipsis or type(key) is tuple and len(<tuple>key) == 0:
            _assign(self, value)
        else:
            _setitem(self, key, value)

    cdef _write(self, host):
        cdef size_t n = _numel(self.shape)
        cdef const void *p = <const void *><uintptr_t>host.ctypes.data
        cdef ocal_buffer b = self.buf
        if n:
            with nogil:
                s = ocal_buffer_write(b, 0, n, p, NULL)
            check(s)

    def set(self, host):
        """Copies a NumPy array of the same shape into this array (blocks)."""
        host = np.asarray(host, dtype=self.dtype, order="C")
        if host.shape != self.shape:
            raise ShapeMismatchError("ocal: set() of shape %r into an array of shape %r"
                                     % (host.shape, self.shape))
        self._write(host)

    def fill(self, value):
        """Sets every element to value (a device kernel); a Python integer outside an integer
        type's range raises SizeOverflowError (an OverflowError), as NumPy 2 does."""
        _check_int_range(value, self.dtype, "ocal.Array.fill")
        v = np.asarray(value).astype(self.dtype)
        if self.dtype == np.bool_:
            v = v.astype(np.uint8)
        cdef const void *p = <const void *><uintptr_t>v.ctypes.data
        if _numel(self.shape):
            check(ocal_buffer_fill(self.buf, p))
        return self

    def copy(self):
        out = _empty(self.shape, self.dtype, self.code, self.context)
        check(ocal_buffer_copy(self.buf, (<Array>out).buf))
        return out

    def astype(self, dtype, copy=True):
        """The array converted to dtype (ocal_cast); bool means != 0, as in NumPy."""
        d = np.dtype(dtype)
        if d == self.dtype:
            return self.copy() if copy else self
        if d == np.bool_:
            return self != 0
        cdef int code = dtype_code(d)
        cdef Array out = _empty(self.shape, d, code, self.context)
        if code == self.code:
            check(ocal_buffer_copy(self.buf, out.buf))
        else:
            check(ocal_cast(self.buf, out.buf))
        return out

    @property
    def T(self):
        return transpose(self)

    def transpose(self, *axes):
        """NumPy's a.transpose(): x.transpose(), x.transpose(1, 0, 2) or x.transpose((1, 0, 2))."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return transpose(self, axes or None)

    # -- interop ---------------------------------------------------------------------------------

    @property
    def int_ptr(self):
        """The address of the cl_mem holding the array (None for an empty one)."""
        cdef cl_mem m = NULL
        check(ocal_buffer_get_cl_mem(self.buf, &m, NULL))
        return <uintptr_t>m if m != NULL else None

    @property
    def offset(self):
        """The byte offset of the first element in the cl_mem."""
        cdef cl_mem m = NULL
        cdef size_t off = 0
        check(ocal_buffer_get_cl_mem(self.buf, &m, &off))
        return off

    def to_pyopencl(self):
        """A pyopencl.array.Array over the same cl_mem (no copy), on ocal's context and
        in-order queue. Its buffer holds a reference to this array, so ocal's memory pool
        cannot hand the memory to another array while PyOpenCL uses it."""
        import pyopencl as cl
        import pyopencl.array as cla
        ctx = cl.Context.from_int_ptr(self.context.int_ptr, retain=True)
        queue = cl.CommandQueue.from_int_ptr(self.context.queue_int_ptr, retain=True)
        if self.size == 0:
            return cla.empty(queue, self.shape, self.dtype)
        cdef cl_mem m = NULL
        cdef size_t off = 0
        check(ocal_buffer_get_cl_mem(self.buf, &m, &off))
        data = cl.Buffer.from_int_ptr(<uintptr_t>m, retain=True)
        data._ocal_owner = self
        return cla.Array(queue, self.shape, self.dtype, data=data, offset=off)

    def __dlpack_device__(self):
        """(kDLOpenCL = 4, the device's index in ocal.devices())."""
        return (_kDLOpenCL, _dl_device_index(self.context))

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export of the device memory (no copy): a kDLOpenCL tensor whose data is the
        cl_mem and byte_offset the view's offset; the consumer's deleter lets go of this
        array. A consumer asking for the CPU (dl_device=(1, 0)) gets a host copy, and
        copy=False then raises BufferError. stream: the consumer's cl_command_queue address;
        unless it is this context's queue (or -1: the consumer orders the work itself), the
        queue is finished first, so the memory holds its values for any queue."""
        if dl_device is not None:
            dev_type, dev_id = tuple(dl_device)
            if dev_type == _kDLCPU:
                if copy is False:
                    raise BufferError("ocal: the array is on an OpenCL device; a CPU consumer "
                                      "needs a copy (copy=None or True)")
                host = self.get()
                if max_version is None:
                    return host.__dlpack__()
                return host.__dlpack__(max_version=max_version, copy=False)
            if (dev_type, dev_id) != self.__dlpack_device__():
                raise BufferError("ocal: DLPack export to device %r: the array is on %r; copy "
                                  "through the host (dl_device=(1, 0))"
                                  % (tuple(dl_device), self.__dlpack_device__()))
        src = self.copy() if copy else self
        if stream != -1 and stream != self.context.queue_int_ptr:
            self.context.finish()
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        return _dl_export(src, versioned, bool(copy))

    # -- operators ---------------------------------------------------------------------------

    def __add__(self, other):
        return _binop(OCAL_BINARY_ADD, self, other)

    def __radd__(self, other):
        return _binop(OCAL_BINARY_ADD, other, self)

    def __sub__(self, other):
        return _binop(OCAL_BINARY_SUB, self, other)

    def __rsub__(self, other):
        return _binop(OCAL_BINARY_SUB, other, self)

    def __mul__(self, other):
        return _binop(OCAL_BINARY_MUL, self, other)

    def __rmul__(self, other):
        return _binop(OCAL_BINARY_MUL, other, self)

    def __truediv__(self, other):
        return true_divide(self, other)

    def __rtruediv__(self, other):
        return true_divide(other, self)

    def __floordiv__(self, other):
        return floor_divide(self, other)

    def __rfloordiv__(self, other):
        return floor_divide(other, self)

    def __mod__(self, other):
        return remainder(self, other)

    def __rmod__(self, other):
        return remainder(other, self)

    def __pow__(self, other, mod):
        _check_int_power(self, other)
        return _binop(OCAL_BINARY_POW, self, other)

    def __rpow__(self, other, mod):
        return _binop(OCAL_BINARY_POW, other, self)

    def __eq__(self, other):
        return _binop(OCAL_BINARY_EQ, self, other)

    def __ne__(self, other):
        return _binop(OCAL_BINARY_NE, self, other)

    def __lt__(self, other):
        return _binop(OCAL_BINARY_LT, self, other)

    def __le__(self, other):
        return _binop(OCAL_BINARY_LE, self, other)

    def __gt__(self, other):
        return _binop(OCAL_BINARY_GT, self, other)

    def __ge__(self, other):
        return _binop(OCAL_BINARY_GE, self, other)

    def __neg__(self):
        return unary(OCAL_UNARY_NEG, self)

    def __pos__(self):
        return self.copy()

    def __abs__(self):
        return unary(OCAL_UNARY_ABS, self)

    def __and__(self, other):
        return _logical(OCAL_BINARY_MIN, self, other)

    def __rand__(self, other):
        return _logical(OCAL_BINARY_MIN, other, self)

    def __or__(self, other):
        return _logical(OCAL_BINARY_MAX, self, other)

    def __ror__(self, other):
        return _logical(OCAL_BINARY_MAX, other, self)

    def __invert__(self):
        if self.dtype != np.bool_:
            raise UnsupportedError("ocal: ~ is defined for bool arrays only")
        return self == 0

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def __iadd__(self, other):
        return _inplace(OCAL_BINARY_ADD, self, other)

    def __isub__(self, other):
        return _inplace(OCAL_BINARY_SUB, self, other)

    def __imul__(self, other):
        return _inplace(OCAL_BINARY_MUL, self, other)

    def __itruediv__(self, other):
        if self.dtype.kind not in "fV" and self.dtype != bfloat16:
            raise TypeMismatchError("ocal: in-place true division of an integer array")
        return _inplace(OCAL_BINARY_DIV, self, other)

    # -- reductions as methods -----------------------------------------------------------
    def sum(self, axis=None, keepdims=False, out=None):
        return _reduce(OCAL_REDUCE_SUM, self, axis, keepdims, 0, out)

    def prod(self, axis=None, keepdims=False, out=None):
        return _reduce(OCAL_REDUCE_PROD, self, axis, keepdims, 0, out)

    def min(self, axis=None, keepdims=False, out=None):
        return _reduce(OCAL_REDUCE_MIN, self, axis, keepdims, 0, out)

    def max(self, axis=None, keepdims=False, out=None):
        return _reduce(OCAL_REDUCE_MAX, self, axis, keepdims, 0, out)

    def argmin(self, axis=None, keepdims=False, out=None):
        return _reduce(OCAL_REDUCE_ARGMIN, self, axis, keepdims, 0, out)

    def argmax(self, axis=None, keepdims=False, out=None):
        return _reduce(OCAL_REDUCE_ARGMAX, self, axis, keepdims, 0, out)

    def mean(self, axis=None, keepdims=False, out=None):
        return _reduce(OCAL_REDUCE_MEAN, self, axis, keepdims, 0, out)

    def var(self, axis=None, ddof=0, keepdims=False, out=None):
        return _reduce(OCAL_REDUCE_VAR, self, axis, keepdims, ddof, out)

    def std(self, axis=None, ddof=0, keepdims=False, out=None):
        return _reduce(OCAL_REDUCE_STD, self, axis, keepdims, ddof, out)

    def cumsum(self, axis=None):
        return scan(OCAL_SCAN_SUM, self, axis)


cdef _assign(Array dst, value):
    """dst[...] = value (NumPy's broadcasting and casting)."""
    if isinstance(value, Array):
        src = _broadcast_to(<Array>value, dst.shape).astype(dst.dtype, copy=False)
        check(ocal_buffer_copy((<Array>src).buf, dst.buf))
    elif np.isscalar(value):
        dst.fill(value)
    else:
        host = np.asarray(np.broadcast_to(np.asarray(value, dst.dtype), dst.shape), order="C")
        dst._write(host)


cdef class Event:
    """A queued command (ocal_event): a non-blocking get's copy. wait() blocks until it is
    done; the host array it fills is kept alive until then, also when the event is dropped."""
    cdef ocal_event ptr
    cdef object keep

    def __cinit__(self):
        self.ptr = NULL

    def wait(self):
        """Blocks until the command has finished (ocal_event_wait), the GIL released."""
        cdef ocal_event e = self.ptr
        if e == NULL:
            return
        with nogil:
            s = ocal_event_wait(e)
        check(s)

    def __dealloc__(self):
        if self.ptr != NULL:
            with nogil:
                ocal_event_wait(self.ptr)   # the copy writes into keep's memory: finish it
            ocal_event_release(self.ptr)


cdef inline Array _empty(tuple shape, dt, int code, Context ctx):
    cdef size_t cs[4]
    cdef int nd = _cshape(shape, cs)
    cdef Array a = Array.__new__(Array)
    check(ocal_buffer_create(ctx.handle(), <ocal_dtype>code, nd, cs, &a.buf))
    a.context, a.shape, a.dtype, a.code = ctx, shape, dt, code
    _meta(a)
    return a


cdef Array _wrap_buffer(ocal_buffer b, tuple shape, dt, Context ctx, base):
    cdef Array a = Array.__new__(Array)
    a.buf, a.context, a.shape, a.dtype = b, ctx, shape, dt
    a.code = dtype_code(dt)
    a.base = base
    _meta(a)
    return a


# ---- creation ------------------------------------------------------------------------------

def empty(shape, dtype=np.float32, ctx=None):
    """An array of uninitialised values (ocal's default dtype is float32, the GPU's)."""
    d = np.dtype(dtype)
    return _empty(_norm_shape(shape), d, dtype_code(d), _ctx(ctx))


def zeros(shape, dtype=np.float32, ctx=None):
    cdef size_t cs[4]
    d = np.dtype(dtype)
    sh = _norm_shape(shape)
    cdef Context c = _ctx(ctx)
    cdef int nd = _cshape(sh, cs)
    cdef Array a = Array.__new__(Array)
    a.code = dtype_code(d)
    check(ocal_buffer_zeros(c.handle(), <ocal_dtype>a.code, nd, cs, &a.buf))
    a.context, a.shape, a.dtype = c, sh, d
    _meta(a)
    return a


def full(shape, fill_value, dtype=None, ctx=None):
    d = np.dtype(dtype) if dtype is not None else np.asarray(fill_value).dtype
    if dtype is None and d == np.float64:
        d = np.dtype(np.float32) if not _ctx(ctx).fp64 else d
    _check_int_range(fill_value, d, "ocal.full")
    return empty(shape, d, ctx).fill(fill_value)


def ones(shape, dtype=np.float32, ctx=None):
    return full(shape, 1, dtype, ctx)


def empty_like(Array a, dtype=None):
    return empty(a.shape, a.dtype if dtype is None else dtype, a.context)


def zeros_like(Array a, dtype=None):
    return zeros(a.shape, a.dtype if dtype is None else dtype, a.context)


def ones_like(Array a, dtype=None):
    return ones(a.shape, a.dtype if dtype is None else dtype, a.context)


def full_like(Array a, fill_value, dtype=None):
    _check_int_range(fill_value, a.dtype if dtype is None else dtype, "ocal.full_like")
    return full(a.shape, fill_value, a.dtype if dtype is None else dtype, a.context)


def asarray(obj, dtype=None, ctx=None):
    """An ocal.Array of obj (a NumPy array, a list, a scalar or an Array), copied to the
    device unless it is already an Array of that dtype and context."""
    cdef Context c
    if isinstance(obj, Array):
        a = <Array>obj
        if (ctx is None or ctx is a.context) and (dtype is None or np.dtype(dtype) == a.dtype):
            return a
        if ctx is not None and ctx is not a.context:
            obj = a.get()
        else:
            return a.astype(dtype)
    host = np.asarray(obj, dtype=dtype, order="C")
    if host.dtype == np.float64 and dtype is None and not isinstance(obj, np.ndarray) \
            and not _ctx(ctx).fp64:
        host = host.astype(np.float32)
    c = _ctx(ctx)
    sh = _norm_shape(host.shape)
    cdef int code = dtype_code(host.dtype)
    cdef size_t cs[4]
    cdef int nd = _cshape(sh, cs)
    cdef const void *p = <const void *><uintptr_t>host.ctypes.data if host.size else NULL
    cdef Array a2 = Array.__new__(Array)
    cdef ocal_context cc = c.handle()
    with nogil:
        s = ocal_buffer_from_host(cc, <ocal_dtype>code, nd, cs, p, &a2.buf)
    check(s)
    a2.context, a2.shape, a2.dtype, a2.code = c, sh, host.dtype, code
    _meta(a2)
    return a2


array = asarray


def arange(start, stop=None, step=1, dtype=None, ctx=None):
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = np.arange(start, start + step, step).dtype if step else np.int64
    n = _builtins.max(0, int(np.ceil((stop - start) / step)))
    out = empty((n,), dtype, ctx)
    if n:
        check(ocal_arange(float(start), float(step), (<Array>out).buf))
    return out


def linspace(start, stop, num=50, endpoint=True, dtype=np.float32, ctx=None):
    out = empty((num,), dtype, ctx)
    if num == 0:
        return out
    if not endpoint:
        stop = start + (stop - start) * (num - 1) / num
    check(ocal_linspace(float(start), float(stop), (<Array>out).buf))
    return out


# ---- elementwise -------------------------------------------------------------------------

cdef dict _result_dtypes = {}
cdef object _bool_dtype = np.dtype(np.bool_)

cdef object _np_ufunc_of_binary = {
    OCAL_BINARY_ADD: np.add, OCAL_BINARY_SUB: np.subtract, OCAL_BINARY_MUL: np.multiply,
    OCAL_BINARY_DIV: np.true_divide, OCAL_BINARY_POW: np.power, OCAL_BINARY_MIN: np.minimum,
    OCAL_BINARY_MAX: np.maximum, OCAL_BINARY_ATAN2: np.arctan2, OCAL_BINARY_FMOD: np.fmod,
    OCAL_BINARY_EQ: np.equal, OCAL_BINARY_NE: np.not_equal, OCAL_BINARY_LT: np.less,
    OCAL_BINARY_LE: np.less_equal, OCAL_BINARY_GT: np.greater, OCAL_BINARY_GE: np.greater_equal,
    OCAL_BINARY_FLOOR_DIVIDE: np.floor_divide, OCAL_BINARY_REMAINDER: np.remainder,
}


cdef inline bint _is_cmp(int op):
    """A comparison (a bool result): the ops from eq to ge."""
    return OCAL_BINARY_EQ <= op <= OCAL_BINARY_GE


cdef object _binary_types(int op, da, db):
    """(the dtype both inputs are cast to, the result dtype), as NumPy types them; db is a
    dtype, or a Python scalar's type (NumPy 2's weak scalars)."""
    key = (op, da, db)
    r = _result_dtypes.get(key)
    if r is not None:
        return r
    f = _np_ufunc_of_binary[op]
    x = np.ones(1, da)
    y = np.ones(1, db) if isinstance(db, np.dtype) else db(1)
    with np.errstate(all="ignore"):
        out = f(x, y).dtype
        common = np.add(x, y).dtype if out == np.bool_ else out
    if common == np.bool_:
        common = np.dtype(np.uint8)
    r = (common, out)
    _result_dtypes[key] = r
    return r


cdef tuple _broadcast_shape(tuple a, tuple b):
    if a == b:
        return a
    cdef int n = _builtins.max(len(a), len(b))
    out = []
    for i in range(n):
        x = a[len(a) - n + i] if len(a) - n + i >= 0 else 1
        y = b[len(b) - n + i] if len(b) - n + i >= 0 else 1
        if x != y and x != 1 and y != 1:
            raise ShapeMismatchError("ocal: shapes %r and %r do not broadcast" % (a, b))
        out.append(y if x == 1 else x)
    return tuple(out)


cdef Array _as_operand(x, Array like):
    if isinstance(x, Array):
        return <Array>x
    raise TypeError("ocal: operand of type %s; convert NumPy arrays with ocal.asarray"
                    % type(x).__name__)


cdef inline Array _to(Array a, dt):
    if a.dtype is dt or a.dtype == dt:
        return a
    return a.astype(dt)


cdef inline bint _same_shape(Array a, Array b):
    """a and b have one shape (compared in C: the fast paths' test)."""
    return len(a.shape) == len(b.shape) and memcmp(a.cs, b.cs, a.nd * sizeof(size_t)) == 0


cdef bint _is_broadcast_of(Array out, Array a, Array b):
    """out's shape is the broadcast of a's and b's, compared in C (no tuples made)."""
    cdef Py_ssize_t na = len(a.shape), nb = len(b.shape), no = len(out.shape), i
    cdef size_t da, db
    if no != (na if na > nb else nb):
        return 0
    for i in range(no):
        da = a.cs[na - no + i] if na - no + i >= 0 else 1
        db = b.cs[nb - no + i] if nb - no + i >= 0 else 1
        if (da != db and da != 1 and db != 1) or out.cs[i] != (db if da == 1 else da):
            return 0
    return 1


cdef inline bint _keeps_type(int op, int code):
    """ocal_binary's result type is its inputs' (an arithmetic op, not an integer true
    division or arctan2, whose results are floats)."""
    return not _is_cmp(op) and not ((op == OCAL_BINARY_DIV or op == OCAL_BINARY_ATAN2)
                                    and code != OCAL_F32 and code != OCAL_F64
                                    and code != OCAL_F16 and code != OCAL_BF16)


cdef bint _is_scalar(x):
    return isinstance(x, (int, float, bool)) or (isinstance(x, np.generic) and x.ndim == 0)


cdef double _scalar_arg(y, int code) except? -1:
    """The double a scalar call (ocal_binary_scalar, ocal_scalar_binary) gets for the number y
    beside an array of type code. NumPy 2 casts a Python number to a float32 or half array's
    type, so one beyond f32's range is an infinity there, with NumPy's overflow warning; the
    C calls refuse such a finite value (it would become inf without a word), so the cast is
    made here, by NumPy (its np.errstate applies)."""
    cdef double v = y
    if (v > FLT_MAX or v < -FLT_MAX) and not isinf(v) \
            and (code == OCAL_F32 or code == OCAL_F16 or code == OCAL_BF16):
        v = np.array(v).astype(np.float32)
    return v


cdef int _check_int_range(value, dt, what) except -1:
    """A Python integer must fit an integer type: NumPy 2 raises OverflowError rather than
    wrapping it, and so does ocal (SizeOverflowError, an OverflowError)."""
    dt = np.dtype(dt)
    if type(value) is int and dt.kind in "iu":
        info = np.iinfo(dt)
        if value < info.min or value > info.max:
            raise SizeOverflowError("%s: the Python integer %d is out of bounds for %s "
                                    "(%d to %d), as NumPy 2 refuses it: use a dtype that holds "
                                    "it (astype() the array first)"
                                    % (what, value, dt, info.min, info.max))
    return 0


cdef object _cmp_beyond(int op, y, dt, bint left):
    """NumPy 2 compares a Python integer outside an integer array's type exactly: every
    element is below it (or above it). The result of array op y (y op array when left) for
    every element, or None where y is in the type's range."""
    dt = np.dtype(dt)
    if type(y) is not int or dt.kind not in "iu":
        return None
    info = np.iinfo(dt)
    if info.min <= y <= info.max:
        return None
    above = y > info.max          # array < y for every element
    if op == OCAL_BINARY_EQ or op == OCAL_BINARY_NE:
        return op == OCAL_BINARY_NE
    if op == OCAL_BINARY_LT or op == OCAL_BINARY_LE:
        return above != left
    return above == left


cdef object _int_operand(int op, y, dt, int ndim, ctx):
    """An integer scalar (Python's or NumPy's) beside an integer array, used exactly: a
    double (the scalar calls' argument) carries it up to 2**53; beyond, it comes back as a
    one-element array of the type, for the array path. A Python integer outside the type's
    range raises OverflowError in arithmetic, as NumPy 2 does (comparisons take _cmp_beyond
    first). None: the scalar call takes it."""
    if not isinstance(y, (int, np.integer)) or np.dtype(dt).kind not in "iu":
        return None
    _check_int_range(y, dt, "ocal." + ocal_binary_op_name(<ocal_binary_op>op).decode())
    if -(1 << 53) <= y <= (1 << 53):
        return None
    return asarray(np.full((1,) * ndim, y, dt), ctx=ctx)


cpdef Array _binop(int op, x, y):
    """x op y with NumPy's broadcasting and types: the inputs are cast to their common type,
    and the C call (ocal_binary, ocal_binary_scalar, ocal_scalar_binary) does the rest."""
    cdef Array a, b, out
    cdef ocal_buffer ob
    cdef ocal_status s
    cdef size_t cs[4]
    if type(x) is Array and type(y) is Array:
        a, b = <Array>x, <Array>y
        if a.fast and a.code == b.code and a.nd == b.nd and _keeps_type(op, a.code) \
                and memcmp(a.cs, b.cs, a.nd * sizeof(size_t)) == 0 \
                and len(a.shape) == len(b.shape):
            # The fast path: same type and shape, and the result type is the inputs'.
            out = Array.__new__(Array)
            s = ocal_buffer_create(a.context.ptr, <ocal_dtype>a.code, a.nd, a.cs, &out.buf)
            if s == OCAL_OK:
                s = ocal_binary(<ocal_binary_op>op, a.buf, b.buf, out.buf)
            if s != OCAL_OK:
                raise_status(s)
            out.code, out.nd, out.fast = a.code, a.nd, 1
            memcpy(out.cs, a.cs, a.nd * sizeof(size_t))
            out.context, out.shape, out.dtype = a.context, a.shape, a.dtype
            return out
        if a.context is not b.context:
            raise InvalidArgumentError("ocal: the arrays belong to different contexts")
        if a.fast and a.code == b.code and _keeps_type(op, a.code):
            # Same type, shapes that broadcast (a bias row): the result type is the inputs'.
            shape = a.shape if _is_broadcast_of(a, a, b) else \
                b.shape if _is_broadcast_of(b, a, b) else _broadcast_shape(a.shape, b.shape)
            out = _empty(shape, a.dtype, a.code, a.context)
            check(ocal_binary(<ocal_binary_op>op, a.buf, b.buf, out.buf))
            return out
        common, res = _binary_types(op, a.dtype, b.dtype)
        a, b = _to(a, common), _to(b, common)
        shape = _broadcast_shape(a.shape, b.shape)
        out = _empty(shape, res, dtype_code(res), a.context)
        check(ocal_binary(<ocal_binary_op>op, a.buf, b.buf, out.buf))
        return out
    if type(x) is Array and (type(y) is float or type(y) is int) \
            and ((<Array>x).code == OCAL_F32 or (<Array>x).code == OCAL_F64):
        # A float array and a Python number (weak, as NumPy 2 types it): the array's type
        # out, or a bool mask for a comparison.
        a = <Array>x
        if not _is_cmp(op):
            out = _empty(a.shape, a.dtype, a.code, a.context)
        else:
            out = _empty(a.shape, _bool_dtype, OCAL_U8, a.context)
        check(ocal_binary_scalar(<ocal_binary_op>op, a.buf, _scalar_arg(y, a.code), out.buf))
        return out
    if isinstance(x, Array) and _is_scalar(y):
        a = <Array>x
        common, res = _binary_types(op, a.dtype, type(y) if not isinstance(y, np.generic) else y.dtype)
        if _is_cmp(op):
            c = _cmp_beyond(op, y, common, 0)
            if c is not None:
                return full(a.shape, c, np.bool_, a.context)
        a = _to(a, common)
        big = _int_operand(op, y, common, len(a.shape), a.context)
        if big is not None:
            return _binop(op, a, big)
        out = _empty(a.shape, res, dtype_code(res), a.context)
        check(ocal_binary_scalar(<ocal_binary_op>op, a.buf, _scalar_arg(y, a.code), out.buf))
        return out
    if isinstance(y, Array) and _is_scalar(x):
        b = <Array>y
        common, res = _binary_types(op, b.dtype, type(x) if not isinstance(x, np.generic) else x.dtype)
        if _is_cmp(op):
            c = _cmp_beyond(op, x, common, 1)
            if c is not None:
                return full(b.shape, c, np.bool_, b.context)
        b = _to(b, common)
        big = _int_operand(op, x, common, len(b.shape), b.context)
        if big is not None:
            return _binop(op, big, b)
        out = _empty(b.shape, res, dtype_code(res), b.context)
        check(ocal_scalar_binary(<ocal_binary_op>op, _scalar_arg(x, b.code), b.buf, out.buf))
        return out
    if isinstance(x, Array) or isinstance(y, Array):
        other = y if isinstance(x, Array) else x
        if isinstance(other, (np.ndarray, list, tuple)):
            raise TypeError("ocal: cannot mix an ocal.Array with a %s implicitly (that would "
                            "copy it to the device): use ocal.asarray() first"
                            % type(other).__name__)
        return NotImplemented
    return _binop(op, asarray(x), asarray(y))


cdef int _check_inplace(Array a, other) except -1:
    """NumPy's same_kind rule for an in-place operator: the result type of a op other must
    cast back to a's type (an integer array does not take a float operand)."""
    dt = a.dtype
    if isinstance(other, Array):
        if (<Array>other).dtype == dt:
            return 0
        o = (<Array>other).dtype
    else:
        t = type(other)
        if (t is int and dt.kind in "iuf") or (t is float and dt.kind == "f"):
            return 0
        o = other
    try:
        res = np.result_type(dt, o)
    except (TypeError, ValueError):   # a type NumPy does not promote (bfloat16 aside)
        return 0
    if not np.can_cast(res, dt, "same_kind"):
        raise TypeMismatchError("ocal: the result of an in-place operation on a %s array is %s, "
                                "which NumPy's same_kind rule does not cast back: write "
                                "x = x op y, or astype() first" % (dt, res))
    return 0


cdef _inplace(int op, Array a, other):
    cdef Array b
    if isinstance(other, Array) or _is_scalar(other):
        _check_inplace(a, other)
    if isinstance(other, Array):
        b = _to(<Array>other, a.dtype)
        check(ocal_binary(<ocal_binary_op>op, a.buf, b.buf, a.buf))
    elif _is_scalar(other):
        big = _int_operand(op, other, a.dtype, len(a.shape), a.context)
        if big is not None:
            check(ocal_binary(<ocal_binary_op>op, a.buf, (<Array>big).buf, a.buf))
        else:
            check(ocal_binary_scalar(<ocal_binary_op>op, a.buf, _scalar_arg(other, a.code),
                                     a.buf))
    else:
        return NotImplemented
    return a


cdef Array _binop_out(int op, x, y, Array out):
    """x op y written into out (out=): out has the broadcast shape and NumPy's result type."""
    cdef Array a, b
    if type(x) is Array and type(out) is Array:
        # The fast paths (the step of a training loop): types and shapes compared in C.
        a = <Array>x
        if type(y) is Array:
            b = <Array>y
            if a.fast and a.code == b.code and a.code == out.code and _keeps_type(op, a.code) \
                    and a.context is b.context and a.context is out.context \
                    and _is_broadcast_of(out, a, b):
                check(ocal_binary(<ocal_binary_op>op, a.buf, b.buf, out.buf))
                return out
        elif (type(y) is float or type(y) is int) and (a.code == OCAL_F32 or a.code == OCAL_F64) \
                and a.context is out.context and _same_shape(a, out) \
                and ((not _is_cmp(op) and out.code == a.code)
                     or (_is_cmp(op) and out.code == OCAL_U8 and not out.fast)):
            # A float array and a Python number (weak): the array's type out, or bool.
            check(ocal_binary_scalar(<ocal_binary_op>op, a.buf, _scalar_arg(y, a.code), out.buf))
            return out
    if isinstance(x, Array) and isinstance(y, Array):
        a, b = <Array>x, <Array>y
        common, res = _binary_types(op, a.dtype, b.dtype)
        _check_out(out, _broadcast_shape(a.shape, b.shape), res)
        a, b = _to(a, common), _to(b, common)
        check(ocal_binary(<ocal_binary_op>op, a.buf, b.buf, out.buf))
    elif isinstance(x, Array) and _is_scalar(y):
        a = <Array>x
        common, res = _binary_types(op, a.dtype, type(y) if not isinstance(y, np.generic) else y.dtype)
        _check_out(out, a.shape, res)
        c = _cmp_beyond(op, y, common, 0) if _is_cmp(op) else None
        if c is not None:
            return out.fill(c)
        big = _int_operand(op, y, common, len(a.shape), a.context)
        if big is not None:
            check(ocal_binary(<ocal_binary_op>op, _to(a, common).buf, (<Array>big).buf, out.buf))
        else:
            a = _to(a, common)
            check(ocal_binary_scalar(<ocal_binary_op>op, a.buf, _scalar_arg(y, a.code), out.buf))
    elif isinstance(y, Array) and _is_scalar(x):
        b = <Array>y
        common, res = _binary_types(op, b.dtype, type(x) if not isinstance(x, np.generic) else x.dtype)
        _check_out(out, b.shape, res)
        c = _cmp_beyond(op, x, common, 1) if _is_cmp(op) else None
        if c is not None:
            return out.fill(c)
        big = _int_operand(op, x, common, len(b.shape), b.context)
        if big is not None:
            check(ocal_binary(<ocal_binary_op>op, (<Array>big).buf, _to(b, common).buf, out.buf))
        else:
            b = _to(b, common)
            check(ocal_scalar_binary(<ocal_binary_op>op, _scalar_arg(x, b.code), b.buf, out.buf))
    else:
        return _binop_out(op, asarray(x, ctx=out.context), asarray(y, ctx=out.context), out)
    return out


cdef _logical(int op, x, y):
    """& and | of bool arrays: min and max of 0/1 masks."""
    for v in (x, y):
        if isinstance(v, Array) and (<Array>v).dtype != np.bool_:
            raise UnsupportedError("ocal: & and | are defined for bool arrays only")
    r = _binop(op, x, y)
    return r.astype(np.bool_) if r.dtype != np.bool_ else r


def add(x, y, out=None):
    return _binop(OCAL_BINARY_ADD, x, y) if out is None else _binop_out(OCAL_BINARY_ADD, x, y, out)


def subtract(x, y, out=None):
    return _binop(OCAL_BINARY_SUB, x, y) if out is None else _binop_out(OCAL_BINARY_SUB, x, y, out)


def multiply(x, y, out=None):
    return _binop(OCAL_BINARY_MUL, x, y) if out is None else _binop_out(OCAL_BINARY_MUL, x, y, out)


cdef int _check_int_power(x, y) except -1:
    """NumPy refuses an integer array to a negative integer power (the result is no integer)."""
    if isinstance(x, Array) and (<Array>x).dtype.kind in "iub" and _is_scalar(y) \
            and not isinstance(y, (float, np.inexact)) and y < 0:
        raise InvalidArgumentError("ocal: integers to negative integer powers are not allowed "
                                   "(NumPy's rule): astype(float) first")
    return 0


def power(x, y, out=None):
    _check_int_power(x, y)
    return _binop(OCAL_BINARY_POW, x, y) if out is None else _binop_out(OCAL_BINARY_POW, x, y, out)


def minimum(x, y, out=None):
    return _binop(OCAL_BINARY_MIN, x, y) if out is None else _binop_out(OCAL_BINARY_MIN, x, y, out)


def maximum(x, y, out=None):
    return _binop(OCAL_BINARY_MAX, x, y) if out is None else _binop_out(OCAL_BINARY_MAX, x, y, out)


def arctan2(x, y, out=None):
    return _binop(OCAL_BINARY_ATAN2, x, y) if out is None else _binop_out(OCAL_BINARY_ATAN2, x, y, out)


def fmod(x, y, out=None):
    return _binop(OCAL_BINARY_FMOD, x, y) if out is None else _binop_out(OCAL_BINARY_FMOD, x, y, out)


def equal(x, y, out=None):
    return _binop(OCAL_BINARY_EQ, x, y) if out is None else _binop_out(OCAL_BINARY_EQ, x, y, out)


def not_equal(x, y, out=None):
    return _binop(OCAL_BINARY_NE, x, y) if out is None else _binop_out(OCAL_BINARY_NE, x, y, out)


def less(x, y, out=None):
    return _binop(OCAL_BINARY_LT, x, y) if out is None else _binop_out(OCAL_BINARY_LT, x, y, out)


def less_equal(x, y, out=None):
    return _binop(OCAL_BINARY_LE, x, y) if out is None else _binop_out(OCAL_BINARY_LE, x, y, out)


def greater(x, y, out=None):
    return _binop(OCAL_BINARY_GT, x, y) if out is None else _binop_out(OCAL_BINARY_GT, x, y, out)


def greater_equal(x, y, out=None):
    return _binop(OCAL_BINARY_GE, x, y) if out is None else _binop_out(OCAL_BINARY_GE, x, y, out)


def true_divide(x, y, out=None):
    """x / y; integers are divided as floats (NumPy's true division)."""
    return _binop(OCAL_BINARY_DIV, x, y) if out is None else _binop_out(OCAL_BINARY_DIV, x, y, out)


def floor_divide(x, y, out=None):
    """x // y, rounded toward minus infinity, exactly for integers (NumPy's floor_divide);
    an integer divided by 0 gives 0, as NumPy's result (without its warning)."""
    return _binop(OCAL_BINARY_FLOOR_DIVIDE, x, y) if out is None \
        else _binop_out(OCAL_BINARY_FLOOR_DIVIDE, x, y, out)


def remainder(x, y, out=None):
    """x % y with the sign of y (NumPy's remainder); an integer modulo 0 gives 0."""
    return _binop(OCAL_BINARY_REMAINDER, x, y) if out is None \
        else _binop_out(OCAL_BINARY_REMAINDER, x, y, out)


divide = true_divide
mod = remainder


cdef dict _unary_types = {}


cdef object _unary_np = {
    OCAL_UNARY_NEG: np.negative, OCAL_UNARY_ABS: np.abs, OCAL_UNARY_SQRT: np.sqrt,
    OCAL_UNARY_RSQRT: np.sqrt, OCAL_UNARY_EXP: np.exp, OCAL_UNARY_LOG: np.log,
    OCAL_UNARY_LOG1P: np.log1p, OCAL_UNARY_EXPM1: np.expm1, OCAL_UNARY_SIN: np.sin,
    OCAL_UNARY_COS: np.cos, OCAL_UNARY_TANH: np.tanh, OCAL_UNARY_SIGMOID: np.exp,
    OCAL_UNARY_RELU: np.negative, OCAL_UNARY_GELU: np.exp, OCAL_UNARY_FLOOR: np.floor,
    OCAL_UNARY_CEIL: np.ceil, OCAL_UNARY_ROUND: np.round, OCAL_UNARY_SIGN: np.sign,
    OCAL_UNARY_SQUARE: np.square, OCAL_UNARY_RECIPROCAL: np.sqrt,
}


cpdef Array unary(int op, x, Array out=None):
    """op(x) elementwise (ocal_unary); the result type is NumPy's for the same function
    (integers become floats for exp, log, ...). out: an array of x's shape and the result's
    type to write (x itself for in place)."""
    if type(x) is Array and out is not None and ((<Array>x).code == OCAL_F32
                                                 or (<Array>x).code == OCAL_F64) \
            and out.code == (<Array>x).code and _same_shape(<Array>x, out):
        # Float in, the same float out (every function): nothing to look up.
        check(ocal_unary(<ocal_unary_op>op, (<Array>x).buf, out.buf))
        return out
    cdef Array a = x if isinstance(x, Array) else asarray(x)
    if op == OCAL_UNARY_NEG and a.dtype == np.bool_:
        raise TypeMismatchError("ocal: negative of a bool array (NumPy refuses it too): use ~x")
    if a.code == OCAL_F32 or a.code == OCAL_F64:
        res = a.dtype                # float in, the same float out, for every function
    else:
        key = (op, a.dtype)
        res = _unary_types.get(key)
        if res is None:
            f = _unary_np[op]
            with np.errstate(all="ignore"):
                res = f(np.ones(1, a.dtype if a.dtype != np.bool_ else np.uint8)).dtype
            if res.kind in "iub" and a.dtype.kind in "iub":
                res = a.dtype if a.dtype != np.bool_ else np.dtype(np.uint8)
            _unary_types[key] = res
        if a.dtype == np.bool_:
            a = a.astype(np.uint8)
        if res.kind == "f" and a.dtype.kind in "iu" and a.dtype != res:
            a = a.astype(res)
    if out is None:
        out = _empty(a.shape, res, dtype_code(res), a.context)
    else:
        _check_out(out, a.shape, res)
    check(ocal_unary(<ocal_unary_op>op, a.buf, out.buf))
    return out


cdef int _check_out(Array out, tuple shape, dt) except -1:
    """An out= array must have the result's shape and type (NumPy would cast; ocal does
    not convert silently)."""
    if out.shape != shape:
        raise ShapeMismatchError("ocal: out has shape %r; the result has shape %r"
                                 % (out.shape, shape))
    if out.dtype != dt:
        raise TypeMismatchError("ocal: out has dtype %s; the result is %s (astype() it after)"
                                % (out.dtype, np.dtype(dt)))
    return 0


def negative(x, out=None): return unary(OCAL_UNARY_NEG, x, out)
def abs(x, out=None): return unary(OCAL_UNARY_ABS, x, out)
def sqrt(x, out=None): return unary(OCAL_UNARY_SQRT, x, out)
def rsqrt(x, out=None): return unary(OCAL_UNARY_RSQRT, x, out)
def exp(x, out=None): return unary(OCAL_UNARY_EXP, x, out)
def log(x, out=None): return unary(OCAL_UNARY_LOG, x, out)
def log1p(x, out=None): return unary(OCAL_UNARY_LOG1P, x, out)
def expm1(x, out=None): return unary(OCAL_UNARY_EXPM1, x, out)
def sin(x, out=None): return unary(OCAL_UNARY_SIN, x, out)
def cos(x, out=None): return unary(OCAL_UNARY_COS, x, out)
def tanh(x, out=None): return unary(OCAL_UNARY_TANH, x, out)
def sigmoid(x, out=None): return unary(OCAL_UNARY_SIGMOID, x, out)
def relu(x, out=None): return unary(OCAL_UNARY_RELU, x, out)
def gelu(x, out=None): return unary(OCAL_UNARY_GELU, x, out)
def floor(x, out=None): return unary(OCAL_UNARY_FLOOR, x, out)
def ceil(x, out=None): return unary(OCAL_UNARY_CEIL, x, out)
def round(x, out=None): return unary(OCAL_UNARY_ROUND, x, out)
def sign(x, out=None): return unary(OCAL_UNARY_SIGN, x, out)
def square(x, out=None): return unary(OCAL_UNARY_SQUARE, x, out)
def reciprocal(x, out=None): return unary(OCAL_UNARY_RECIPROCAL, x, out)
absolute = abs
rint = round


cdef Array _broadcast_to(Array a, tuple shape):
    if a.shape == shape:
        return a
    _broadcast_shape(a.shape, shape)
    return _binop(OCAL_BINARY_ADD, zeros(shape, a.dtype, a.context), a)


def broadcast_to(Array a, shape):
    """A new array of shape holding a broadcast (a copy: ocal has no strided views)."""
    return _broadcast_to(a, _norm_shape(shape))


def where(condition, x, y, out=None):
    """x where condition, else y (ocal_where), with broadcasting of all three. A scalar x or
    y is a cached 0-d array of the context, broadcast by ocal_where (no array of the
    condition's shape is made and filled). out: where to write (x or y for in place)."""
    if type(condition) is Array and (out is None or type(out) is Array) \
            and not (<Array>condition).fast and (<Array>condition).code == OCAL_U8:
        r = _where_fast(<Array>condition, x, y, out)
        if r is not None:
            return r
    cdef Array m = condition if isinstance(condition, Array) else asarray(condition)
    if m.fast or m.code != OCAL_U8:   # not a bool array
        m = m != 0
    cdef Array a = x if isinstance(x, Array) else _scalar_operand(m.context, x, _weak(x, y))
    cdef Array b = y if isinstance(y, Array) else _scalar_operand(m.context, y, _weak(y, a))
    if a.dtype is not b.dtype and a.dtype != b.dtype:
        common = np.result_type(a.dtype, b.dtype)
        a, b = _to(a, common), _to(b, common)
    shape = _broadcast_shape(_broadcast_shape(m.shape, a.shape), b.shape)
    if out is None:
        out = _empty(shape, a.dtype, a.code, m.context)
    else:
        _check_out(out, shape, a.dtype)
    check(ocal_where(m.buf, a.buf, b.buf, (<Array>out).buf))
    return out


cdef Array _where_fast_operand(Array m, Array like, v):
    """An operand of where's fast path: an array of like's type and m's shape, or a float as
    a 0-d array of like's type (the context keeps the last one); None otherwise."""
    cdef double d
    cdef uint64_t bits
    cdef Context ctx = m.context
    if type(v) is Array:
        if (<Array>v).code == like.code and (<Array>v).context is ctx and _same_shape(<Array>v, m):
            return <Array>v
        return None
    if type(v) is not float or (like.code != OCAL_F32 and like.code != OCAL_F64):
        return None
    d = <double>v
    memcpy(&bits, &d, sizeof(bits))
    if ctx._last_code != like.code or ctx._last_bits != bits:
        ctx._last_const = _scalar_operand(ctx, v, like.dtype)
        ctx._last_code, ctx._last_bits = like.code, bits
    return ctx._last_const


cdef _where_fast(Array m, x, y, out):
    """where(m, x, y, out) when x, y are arrays of one type and m's shape or floats (one of
    them an array), and out is None or an array of that type and shape: no type or shape
    work in Python. None when the general path must decide."""
    cdef Array like = x if type(x) is Array else y if type(y) is Array else None
    if like is None or (out is not None and ((<Array>out).code != like.code
                                             or (<Array>out).context is not m.context
                                             or not _same_shape(<Array>out, m))):
        return None
    cdef Array a = _where_fast_operand(m, like, x)
    if a is None:
        return None
    cdef Array b = _where_fast_operand(m, like, y)
    if b is None:
        return None
    if out is None:
        out = _empty(m.shape, like.dtype, like.code, m.context)
    check(ocal_where(m.buf, a.buf, b.buf, (<Array>out).buf))
    return out


cdef Array _scalar_operand(Context ctx, value, dt):
    """A 0-d array holding value as dt, made once per context, dtype and value (operands
    only: nothing writes to it)."""
    if not _is_scalar(value):
        return asarray(value, dt, ctx)
    _check_int_range(value, dt, "ocal.where")
    # A float by its bits: -0.0 == 0.0 and nan != nan as keys, but where writes them apart.
    key = (dt, type(value), value.hex() if type(value) is float else value)
    cdef Array c = ctx._consts.get(key)
    if c is None:
        if len(ctx._consts) >= 256:
            ctx._consts.clear()
        c = full((), value, dt, ctx)
        ctx._consts[key] = c
    return c


cdef _weak(x, other):
    if isinstance(other, Array):
        return np.result_type((<Array>other).dtype, x)
    return np.asarray(x).dtype


# ---- reductions and scans -------------------------------------------------------------------

cdef int _axis(Array a, axis) except? -1:
    cdef int nd = len(a.shape)
    cdef int ax = axis
    if ax < -nd or ax >= nd:
        raise InvalidArgumentError("ocal: axis %d is out of bounds for an array of %d "
                                   "dimensions" % (axis, nd))
    return ax + nd if ax < 0 else ax


cdef dict _reduce_types = {}   # (op, input type) -> (result type code, its NumPy dtype)


cdef _reduce_axis_fast(int op, Array a, Py_ssize_t axis, out):
    """A reduction along one axis into out (None: a new array of the input's type), the
    types and shapes compared in C; None when the general path must decide (or raise)."""
    cdef Py_ssize_t nd = len(a.shape), i
    cdef size_t n = 1
    cdef ocal_dtype rd
    cdef Array o
    if not a.fast or axis < -nd or axis >= nd or op == OCAL_REDUCE_VAR or op == OCAL_REDUCE_STD \
            or ocal_reduce_dtype(<ocal_reduce_op>op, <ocal_dtype>a.code, &rd) != OCAL_OK:
        return None
    if axis < 0:
        axis += nd
    if a.cs[axis] == 0 and (op == OCAL_REDUCE_MIN or op == OCAL_REDUCE_MAX
                            or op == OCAL_REDUCE_ARGMIN or op == OCAL_REDUCE_ARGMAX):
        return None
    if out is None:
        if <int>rd != a.code:
            return None
        o = _empty(a.shape[:axis] + a.shape[axis + 1:], a.dtype, a.code, a.context)
    else:
        o = <Array>out
        if not o.fast or <int>rd != o.code or a.context is not o.context \
                or len(o.shape) != nd - 1:
            return None
    for i in range(nd - 1):
        if o.cs[i] != a.cs[i if i < axis else i + 1]:
            return None
        n *= o.cs[i]
    if n:
        check(ocal_reduce(<ocal_reduce_op>op, a.buf, <int>axis, o.buf))
    return o


cdef _reduce(int op, x, axis, keepdims, int ddof, out):
    """reduce(), its fast path (one axis into out) tried first, as a C call."""
    if type(x) is Array and (out is None or type(out) is Array) and type(axis) is int \
            and keepdims is False:
        r = _reduce_axis_fast(op, <Array>x, axis, out)
        if r is not None:
            return r
    return reduce(op, x, axis, keepdims, ddof, out)


def reduce(int op, x, axis=None, keepdims=False, int ddof=0, out=None):
    """A reduction (ocal_reduce, ocal_var, ocal_std) over all elements (axis=None), one axis,
    or a tuple of axes, with NumPy's keepdims and result types. out: an array of the
    result's shape and type to write (one axis or all)."""
    cdef Array a = x if isinstance(x, Array) else asarray(x)
    cdef ocal_dtype rd
    if isinstance(axis, tuple) and len(axis) != 1 and out is not None:
        raise UnsupportedError("ocal: out= with a tuple of axes; reduce one axis at a time")
    cdef bint bool_minmax = not a.fast and a.code == OCAL_U8 \
        and op in (OCAL_REDUCE_MIN, OCAL_REDUCE_MAX)
    if not a.fast and a.code == OCAL_U8:   # bool
        a = a.astype(np.int64 if op in (OCAL_REDUCE_SUM, OCAL_REDUCE_PROD) else np.uint8)
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]
    if isinstance(axis, tuple):
        if op in (OCAL_REDUCE_ARGMIN, OCAL_REDUCE_ARGMAX):
            raise TypeError("ocal: argmin/argmax take one axis")
        axes = sorted({_axis(a, k) for k in axis}, reverse=True)
        if len(axes) != len(axis):
            raise InvalidArgumentError("ocal: duplicate value in axis=%r" % (axis,))
        if op in (OCAL_REDUCE_MEAN, OCAL_REDUCE_VAR, OCAL_REDUCE_STD):
            # Move the reduced axes together into one by reshaping a copy in that order.
            keep = [d for d in range(a.ndim) if d not in axes]
            host_order = keep + sorted(axes)
            if host_order == list(range(a.ndim)):
                flat = a.reshape(tuple(a.shape[d] for d in keep) + (-1,))
                r = reduce(op, flat, -1, False, ddof)
            else:
                # Axes apart (a (0, 2) of three): from sums over the axes one at a time, the
                # mean, then the squared deviations from it, with NumPy's result types.
                n = 1
                for k in axes:
                    n *= a.shape[k]
                r = reduce(OCAL_REDUCE_SUM, a, tuple(axes), False, 0) / n
                if op != OCAL_REDUCE_MEAN:
                    d = a - r.reshape(tuple(1 if k in axes else a.shape[k]
                                            for k in range(a.ndim)))
                    r = reduce(OCAL_REDUCE_SUM, d * d, tuple(axes), False, 0) \
                        / _builtins.max(n - ddof, 0)
                    if op == OCAL_REDUCE_STD:
                        r = unary(OCAL_UNARY_SQRT, r)
        else:
            r = a
            for k in axes:
                r = reduce(op, r, k, False, ddof)
        if keepdims:
            r = r.reshape(tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)))
        return r
    key = (op, a.code)
    cached = _reduce_types.get(key)
    if cached is None:
        check(ocal_reduce_dtype(<ocal_reduce_op>op, <ocal_dtype>a.code, &rd))
        cached = _reduce_types[key] = (<int>rd, _np_of_code(rd))
    rd = <ocal_dtype><int>cached[0]
    res = cached[1] if not bool_minmax else _bool_dtype   # NumPy: min and max of bools are bools
    cdef int ax
    if axis is None:
        ax = OCAL_AXIS_ALL
        shape = ()
        kshape = (1,) * a.ndim
    else:
        ax = _axis(a, axis)
        shape = a.shape[:ax] + a.shape[ax + 1:]
        kshape = a.shape[:ax] + (1,) + a.shape[ax + 1:]
    if op in (OCAL_REDUCE_ARGMIN, OCAL_REDUCE_ARGMAX, OCAL_REDUCE_MIN, OCAL_REDUCE_MAX) \
            and (a.size == 0 if axis is None else a.shape[ax] == 0):
        raise InvalidArgumentError("ocal: zero-size array to reduction operation %s which "
                                   "has no identity" % (<bytes>ocal_reduce_op_name(<ocal_reduce_op>op)).decode())
    cdef Array res_arr
    if out is None:
        res_arr = _empty(shape, res, rd, a.context)
    else:
        _check_out(out, kshape if keepdims else shape, res)
        res_arr = <Array?>out if not keepdims else (<Array?>out).reshape(shape)
    if _numel(shape):
        if op == OCAL_REDUCE_VAR:
            check(ocal_var(a.buf, ax, ddof, res_arr.buf))
        elif op == OCAL_REDUCE_STD:
            check(ocal_std(a.buf, ax, ddof, res_arr.buf))
        else:
            check(ocal_reduce(<ocal_reduce_op>op, a.buf, ax, res_arr.buf))
    if out is not None:
        return out
    return res_arr.reshape(kshape) if keepdims else res_arr


def sum(x, axis=None, keepdims=False, out=None): return _reduce(OCAL_REDUCE_SUM, x, axis, keepdims, 0, out)
def prod(x, axis=None, keepdims=False, out=None): return _reduce(OCAL_REDUCE_PROD, x, axis, keepdims, 0, out)
def min(x, axis=None, keepdims=False, out=None): return _reduce(OCAL_REDUCE_MIN, x, axis, keepdims, 0, out)
def max(x, axis=None, keepdims=False, out=None): return _reduce(OCAL_REDUCE_MAX, x, axis, keepdims, 0, out)
def argmin(x, axis=None, keepdims=False, out=None): return _reduce(OCAL_REDUCE_ARGMIN, x, axis, keepdims, 0, out)
def argmax(x, axis=None, keepdims=False, out=None): return _reduce(OCAL_REDUCE_ARGMAX, x, axis, keepdims, 0, out)
def mean(x, axis=None, keepdims=False, out=None): return _reduce(OCAL_REDUCE_MEAN, x, axis, keepdims, 0, out)
def var(x, axis=None, ddof=0, keepdims=False, out=None): return _reduce(OCAL_REDUCE_VAR, x, axis, keepdims, ddof, out)
def std(x, axis=None, ddof=0, keepdims=False, out=None): return _reduce(OCAL_REDUCE_STD, x, axis, keepdims, ddof, out)
amin = min
amax = max


def vdot(x, y):
    """The dot product of two arrays taken flat (ocal_dot, compensated for floats)."""
    cdef Array a = x, b = y
    cdef ocal_dtype rd
    if a.dtype != b.dtype:
        common = np.result_type(a.dtype, b.dtype)
        a, b = a.astype(common), b.astype(common)
    check(ocal_reduce_dtype(OCAL_REDUCE_DOT, <ocal_dtype>a.code, &rd))
    cdef Array out = _empty((), _np_of_code(rd), rd, a.context)
    check(ocal_dot(a.buf, b.buf, OCAL_AXIS_ALL, out.buf))
    return out


def norm2(x, axis=None, keepdims=False):
    """sqrt of the sum of squares (ocal_norm2)."""
    return reduce(OCAL_REDUCE_NORM2, x, axis, keepdims)


def scan(int op, x, axis=None):
    """A prefix sum or maximum (ocal_scan); axis=None scans the flattened array (NumPy)."""
    cdef Array a = x if isinstance(x, Array) else asarray(x)
    cdef ocal_dtype rd
    if a.dtype == np.bool_:
        a = a.astype(np.int64)
    check(ocal_scan_dtype(<ocal_scan_op>op, <ocal_dtype>a.code, &rd))
    cdef int ax = OCAL_AXIS_ALL if axis is None else _axis(a, axis)
    shape = (a.size,) if axis is None else a.shape
    cdef Array out = _empty(shape, _np_of_code(rd), rd, a.context)
    if out.size:
        check(ocal_scan(<ocal_scan_op>op, a.buf, ax, 0, out.buf))
    return out


def cumsum(x, axis=None): return scan(OCAL_SCAN_SUM, x, axis)


def _nn(fn, x, axis):
    cdef Array a = x if isinstance(x, Array) else asarray(x)
    if a.dtype.kind in "iub":
        a = a.astype(np.float64 if a.context.fp64 else np.float32)
    cdef Array out = _empty(a.shape, a.dtype, a.code, a.context)
    cdef int ax = _axis(a, axis)
    if out.size:
        if fn == 0:
            check(ocal_softmax(a.buf, ax, out.buf))
        else:
            check(ocal_log_softmax(a.buf, ax, out.buf))
    return out


def softmax(x, axis=-1):
    """exp(x - max) / sum(exp(x - max)) along axis (ocal_softmax; SciPy's softmax)."""
    return _nn(0, x, axis)


def log_softmax(x, axis=-1):
    return _nn(1, x, axis)


def softmax_cross_entropy(Array logits, Array labels, bint want_grad=True, out=None):
    """(loss per row, gradient of it with respect to the logits) in one pass
    (ocal_softmax_cross_entropy); labels are integers, and a label outside [0, classes)
    makes its row's loss and gradient NaN. out: (loss, grad) arrays to write (grad may be
    logits itself, in place)."""
    cdef Array loss, grad
    if type(out) is tuple and len(<tuple>out) == 2 and type((<tuple>out)[0]) is Array \
            and type((<tuple>out)[1]) is Array:
        # The fast path: the shapes and types compared in C.
        loss, grad = (<tuple>out)[0], (<tuple>out)[1]
        if loss.code == logits.code and grad.code == logits.code \
                and len(logits.shape) == 2 and len(loss.shape) == 1 \
                and loss.cs[0] == logits.cs[0] and _same_shape(grad, logits):
            check(ocal_softmax_cross_entropy(logits.buf, labels.buf, loss.buf, grad.buf))
            return out
    if out is not None:
        loss, grad = out
        _check_out(loss, (logits.shape[0],), logits.dtype)
        if grad is not None:
            _check_out(grad, logits.shape, logits.dtype)
        check(ocal_softmax_cross_entropy(logits.buf, labels.buf, loss.buf,
                                         grad.buf if grad is not None else NULL))
        return loss, grad
    loss = _empty((logits.shape[0],), logits.dtype, logits.code, logits.context)
    grad = _empty(logits.shape, logits.dtype, logits.code, logits.context) \
        if want_grad else None
    check(ocal_softmax_cross_entropy(logits.buf, labels.buf, loss.buf,
                                     grad.buf if grad is not None else NULL))
    return loss, grad


# ---- matrix products ----------------------------------------------------------------------

def gemm(Array a, Array b, Array c=None, *, bint transa=False, bint transb=False,
         double alpha=1.0, double beta=0.0):
    """c = alpha op(a) op(b) + beta c (ocal_gemm), a new c when none is given."""
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise ShapeMismatchError("ocal: gemm takes 2-D or 3-D arrays")
    if c is None:
        if a.dtype is not b.dtype and a.dtype != b.dtype:
            common = np.result_type(a.dtype, b.dtype)
            a, b = _to(a, common), _to(b, common)
        c = _gemm_out(a, b, transa, transb)
    check(ocal_gemm(OCAL_TRANS if transa else OCAL_NO_TRANS,
                    OCAL_TRANS if transb else OCAL_NO_TRANS, alpha, a.buf, b.buf, beta, c.buf))
    return c


cdef Array _gemm_out(Array a, Array b, bint transa, bint transb):
    """The new result of op(a) op(b), of a's type (a and b share it)."""
    m = a.shape[-1] if transa else a.shape[-2]
    n = b.shape[-2] if transb else b.shape[-1]
    batch = a.shape[:-2] or b.shape[:-2]
    return _empty(batch + (m, n), a.dtype, a.code, a.context)


def matmul(x, y):
    """NumPy's matmul for 1-D, 2-D and batched 3-D float arrays (ocal_gemm, ocal_gemv)."""
    if not isinstance(x, Array) or not isinstance(y, Array):
        raise TypeError("ocal: matmul needs two ocal.Array operands")
    cdef Array a = x, b = y, out
    if len(a.shape) == 2 and len(b.shape) == 2 and a.code == b.code \
            and (a.code == OCAL_F32 or a.code == OCAL_F64) and a.shape[1] == b.shape[0]:
        # The common case, 2-D matrices of one float type: no type or shape work in Python.
        out = _gemm_out(a, b, False, False)
        check(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, a.buf, b.buf, 0.0, out.buf))
        return out
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: a 0-d operand (use *)")
    common = np.result_type(a.dtype, b.dtype)
    if common.kind in "iub":
        raise TypeMismatchError("ocal: matmul of %s arrays; ocal multiplies float matrices "
                                "(astype(float32))" % common)
    a, b = _to(a, common), _to(b, common)
    a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ShapeMismatchError("ocal: matmul: %r @ %r, the inner sizes differ"
                                 % (a.shape, b.shape))
    out = gemm(a2, b2)
    if a.ndim == 1:
        out = out.reshape(out.shape[:-2] + out.shape[-1:])
    if b.ndim == 1:
        out = out.reshape(out.shape[:-1])
    return out


def axpy(double alpha, Array x, Array y):
    """y += alpha * x in place, in one kernel (ocal_axpy: x and y of one type and element
    count); returns y."""
    check(ocal_axpy(alpha, x.buf, y.buf))
    return y


def transpose(Array a, axes=None):
    """The transpose (a copy, on the device): the axes reversed, or permuted as axes says
    (NumPy's transpose); 2-D through its own kernel, 3-D and 4-D through the strided copy.
    With the axes in order, a itself."""
    cdef Py_ssize_t nd = a.ndim
    if axes is None:
        perm = tuple(range(nd - 1, -1, -1))
    else:
        perm = tuple(int(k) + nd if int(k) < 0 else int(k) for k in axes)
        if sorted(perm) != list(range(nd)):
            raise InvalidArgumentError("ocal.transpose: axes %r is not a permutation of the "
                                       "%d axes of an array of shape %r: give each axis "
                                       "(0 to %d, or negative from the end) once"
                                       % (tuple(axes), nd, a.shape, nd - 1))
    if perm == tuple(range(nd)):
        return a
    if nd > 4:
        raise UnsupportedError("ocal.transpose: arrays of more than 4 dimensions are not "
                               "supported; reshape to 4 or fewer first")
    out_shape = tuple(a.shape[k] for k in perm)
    if nd != 2:
        st = _c_strides(a.shape)
        return _strided_copy(a, out_shape, 0, tuple(st[k] for k in perm), out_shape)
    key = ("transpose", a.code)
    cdef Gen g = a.context._gens.get(key)
    if g is None:
        t = (<bytes>ocal_dtype_name(<ocal_dtype>a.code)).decode()
        cl = _cl_type_of[t]
        g = Gen.elementwise(a.context, "const %s *x, %s *y, ulong r, ulong c" % (cl, cl),
                            "y[i] = x[(i % r) * c + i / r]")
        a.context._gens[key] = g
    cdef Array out = _empty(out_shape, a.dtype, a.code, a.context)
    cdef uint64_t r = a.shape[0], c = a.shape[1]
    cdef ocal_gen_arg args[4]
    args[0].buffer, args[0].scalar = a.buf, NULL
    args[1].buffer, args[1].scalar = out.buf, NULL
    args[2].buffer, args[2].scalar = NULL, &r
    args[3].buffer, args[3].scalar = NULL, &c
    if out.size:
        check(ocal_gen_run(g.ptr, out.size, 4, args, NULL))
    return out


cdef class Gen:
    """A generated kernel (ocal_gen_elementwise, ocal_gen_reduction, ocal_gen_scan)."""
    cdef ocal_gen ptr
    cdef readonly Context context

    def __dealloc__(self):
        if self.ptr != NULL:
            ocal_gen_release(self.ptr)

    @staticmethod
    def elementwise(Context ctx, str arguments, str body, str preamble=None):
        cdef Gen g = Gen.__new__(Gen)
        cdef bytes ba = arguments.encode(), bb = body.encode()
        cdef bytes bp = preamble.encode() if preamble else None
        cdef const char *pp = NULL
        if bp is not None:
            pp = bp
        cdef ocal_context c = ctx.handle()
        cdef const char *pa = ba
        cdef const char *pb = bb
        with nogil:
            s = ocal_gen_elementwise(c, pa, pb, pp, &g.ptr)
        check(s)
        g.context = ctx
        return g

    @staticmethod
    def reduction(Context ctx, dtype, str neutral, str reduce, str map, str arguments,
                  str preamble=None):
        return _gen_from_expressions(ctx, 0, dtype, neutral, reduce, map, arguments, preamble, 0)

    @staticmethod
    def scan(Context ctx, dtype, str neutral, str op, str input, str arguments,
             str preamble=None, bint exclusive=False):
        return _gen_from_expressions(ctx, 1, dtype, neutral, op, input, arguments, preamble,
                                     exclusive)

    @property
    def source(self):
        cdef const char *src = NULL
        check(ocal_gen_get_source(self.ptr, &src))
        return (<bytes>src).decode()

    def run(self, size_t n, list args, Array out=None, axis=None):
        """Runs over indices 0 .. n-1 (ocal_gen_run), or along an axis of the first buffer
        argument (ocal_gen_run_axis). args: Arrays, and (NumPy scalar) values."""
        cdef int na = len(args)
        if na > OCAL_GEN_MAX_ARGS:
            raise InvalidArgumentError("ocal: at most %d kernel arguments" % OCAL_GEN_MAX_ARGS)
        cdef ocal_gen_arg cargs[64]
        keep = []
        for i, a in enumerate(args):
            if isinstance(a, Array):
                cargs[i].buffer, cargs[i].scalar = (<Array>a).buf, NULL
            else:
                v = np.asarray(a)
                keep.append(v)
                cargs[i].buffer = NULL
                cargs[i].scalar = <const void *><uintptr_t>v.ctypes.data
        cdef ocal_buffer ob = out.buf if out is not None else NULL
        if axis is None:
            check(ocal_gen_run(self.ptr, n, na, cargs, ob))
        else:
            check(ocal_gen_run_axis(self.ptr, axis, na, cargs, ob))


cdef Gen _gen_from_expressions(Context ctx, int scan, dtype, str neutral, str combine,
                               str expr, str arguments, str preamble, int exclusive):
    """ocal_gen_reduction (scan 0) or ocal_gen_scan (scan 1) from Python strings."""
    cdef Gen g = Gen.__new__(Gen)
    cdef bytes bn = neutral.encode(), bc = combine.encode(), be = expr.encode()
    cdef bytes ba = arguments.encode()
    cdef bytes bp = preamble.encode() if preamble else None
    cdef const char *pn = bn
    cdef const char *pc = bc
    cdef const char *pe = be
    cdef const char *pa = ba
    cdef const char *pp = NULL
    if bp is not None:
        pp = bp
    cdef ocal_dtype dt = <ocal_dtype>dtype_code(dtype)
    cdef ocal_context c = ctx.handle()
    with nogil:
        if scan:
            s = ocal_gen_scan(c, dt, pn, pc, pe, pa, pp, exclusive, &g.ptr)
        else:
            s = ocal_gen_reduction(c, dt, pn, pc, pe, pa, pp, &g.ptr)
    check(s)
    g.context = ctx
    return g


cdef class Program:
    """A compiled OpenCL C program (ocal_program_create, through ocal's caches)."""
    cdef ocal_program ptr
    cdef readonly Context context

    def __init__(self, str source, options=None, Context ctx=None):
        self.context = _ctx(ctx)
        cdef bytes bs = source.encode()
        cdef bytes bo = options.encode() if options else None
        cdef const char *po = NULL
        if bo is not None:
            po = bo
        cdef ocal_context c = self.context.handle()
        cdef const char *ps = bs
        with nogil:
            s = ocal_program_create(c, ps, po, &self.ptr)
        check(s)

    def __dealloc__(self):
        if self.ptr != NULL:
            ocal_program_release(self.ptr)


cdef class LocalMemory:
    """A __local pointer argument of nbytes per work-group (PyOpenCL's LocalMemory)."""
    cdef readonly size_t nbytes

    def __init__(self, size_t nbytes):
        self.nbytes = nbytes


cdef class Kernel:
    """One kernel of a Program (ocal_kernel), with checked arguments."""
    cdef ocal_kernel ptr
    cdef readonly Program program
    cdef readonly int num_args
    cdef list keep

    def __init__(self, Program program, str name):
        self.program = program
        cdef bytes bn = name.encode()
        check(ocal_kernel_create(program.ptr, bn, &self.ptr))
        check(ocal_kernel_get_num_args(self.ptr, &self.num_args))
        self.keep = [None] * self.num_args

    def __dealloc__(self):
        if self.ptr != NULL:
            ocal_kernel_release(self.ptr)

    def set_arg(self, int index, value):
        """An Array for a pointer argument; a NumPy scalar for a scalar of its type, or a
        Python int/float, whose type is taken from the kernel's declaration."""
        cdef ocal_status s
        cdef int code
        if isinstance(value, LocalMemory):
            check(ocal_kernel_set_local(self.ptr, index, (<LocalMemory>value).nbytes))
        elif isinstance(value, Array):
            check(ocal_kernel_set_buffer(self.ptr, index, (<Array>value).buf))
        else:
            if isinstance(value, np.generic):
                candidates = [value.dtype]
            elif isinstance(value, (bool, int)):
                candidates = [np.int32, np.int64, np.uint32, np.uint64, np.uint8, np.float32,
                              np.float64]
            elif isinstance(value, float):
                candidates = [np.float32, np.float64]
            else:
                raise TypeError("ocal.kernels: argument %d is a %s; pass an ocal.Array or a "
                                "scalar" % (index, type(value).__name__))
            for dt in candidates:
                v = np.asarray(value, dt)
                code = dtype_code(v.dtype)
                s = ocal_kernel_set_scalar(self.ptr, index, <ocal_dtype>code,
                                           <const void *><uintptr_t>v.ctypes.data)
                if s == OCAL_OK:
                    break
                if s != OCAL_TYPE_MISMATCH or len(candidates) == 1:
                    raise_status(s)
            else:
                raise_status(s)
        self.keep[index] = value

    def launch(self, global_size, local_size=None):
        cdef size_t g[3]
        cdef size_t l[3]
        cdef int nd = len(global_size)
        if not 1 <= nd <= 3:
            raise InvalidArgumentError("ocal.kernels: 1 to 3 dimensions")
        for i in range(nd):
            g[i] = global_size[i]
            if local_size is not None:
                l[i] = local_size[i]
        check(ocal_kernel_launch(self.ptr, nd, g, l if local_size is not None else NULL))


# ---- random numbers --------------------------------------------------------------------------

def random_fill(Array out, uint64_t seed, uint64_t offset, str kind, double p, double q):
    """Fills out from the Philox stream (seed, offset): uniform in [p, q) or normal(p, q)."""
    if out.size == 0:
        return out
    if kind == "uniform":
        check(ocal_random_uniform(seed, offset, p, q, out.buf))
    else:
        check(ocal_random_normal(seed, offset, p, q, out.buf))
    return out


# ---- FFT -----------------------------------------------------------------------------------

cdef class FFTPlan:
    """A plan of ocal_fft (the library caches equal plans per context)."""
    cdef ocal_fft_plan ptr
    cdef readonly Context context

    def __dealloc__(self):
        if self.ptr != NULL:
            ocal_fft_plan_release(self.ptr)


def fft_execute(Array x, tuple lengths, int kind, int direction, int norm, out_shape, out_dtype):
    """Runs one transform over the last len(lengths) axes of x (the rest is the batch)."""
    cdef ocal_fft_desc d
    check(ocal_fft_desc_init(&d))
    d.ndim = len(lengths)
    for i in range(d.ndim):
        d.lengths[i] = lengths[i]
    batch = _numel(x.shape) // _numel(x.shape[len(x.shape) - d.ndim:]) if x.size else 0
    d.batch = batch
    d.kind = <ocal_fft_kind>kind
    d.precision = OCAL_F64 if x.dtype in (np.float64, np.complex128) else OCAL_F32
    d.norm = <ocal_fft_norm>norm
    cdef Array out = empty(out_shape, out_dtype, x.context)
    if out.size == 0 or batch == 0:
        return out
    cdef FFTPlan plan = FFTPlan.__new__(FFTPlan)
    cdef ocal_context c = x.context.handle()
    with nogil:
        s = ocal_fft_plan_create(c, &d, &plan.ptr)
    check(s)
    plan.context = x.context
    check(ocal_fft_execute(plan.ptr, <ocal_fft_direction>direction, x.buf, out.buf))
    return out


FFT_C2C, FFT_R2C, FFT_C2R = OCAL_FFT_C2C, OCAL_FFT_R2C, OCAL_FFT_C2R
FFT_FORWARD, FFT_INVERSE = OCAL_FFT_FORWARD, OCAL_FFT_INVERSE
FFT_NORMS = {None: OCAL_FFT_NORM_BACKWARD, "backward": OCAL_FFT_NORM_BACKWARD,
             "ortho": OCAL_FFT_NORM_ORTHO, "forward": OCAL_FFT_NORM_FORWARD}

REDUCE_SUM, REDUCE_MAX = OCAL_REDUCE_SUM, OCAL_REDUCE_MAX


# ---- benchmark helper ------------------------------------------------------------------------

def _bench_c_add(Array a, Array b, int n):
    """Runs n times, in C, what `c = a + b` costs in C (create the result, ocal_binary,
    release it), then waits: the baseline of the Python overhead benchmark."""
    cdef size_t cs[4]
    cdef int nd = _cshape(a.shape, cs)
    cdef ocal_buffer c
    cdef ocal_context ctx = a.context.handle()
    for i in range(n):
        check(ocal_buffer_create(ctx, <ocal_dtype>a.code, nd, cs, &c))
        check(ocal_binary(OCAL_BINARY_ADD, a.buf, b.buf, c))
        ocal_buffer_release(c)
    check(ocal_context_finish(ctx))


# ---- sparse ----------------------------------------------------------------------------------

cdef class CSR:
    """A CSR matrix on the device (ocal_csr); ocal.sparse.csr_array is the user's class."""
    cdef ocal_csr ptr
    cdef readonly Context context
    cdef readonly tuple shape
    cdef readonly object dtype

    def __dealloc__(self):
        if self.ptr != NULL:
            ocal_csr_release(self.ptr)

    @property
    def nnz(self):
        cdef size_t n = 0
        check(ocal_csr_get_nnz(self.ptr, &n))
        return n

    @property
    def spmv_kernel(self):
        cdef const char *name = NULL
        check(ocal_csr_get_spmv_kernel(self.ptr, &name))
        return (<bytes>name).decode()

    def diagonal(self):
        cdef Array out = _empty((self.shape[0],), self.dtype, dtype_code(self.dtype), self.context)
        check(ocal_csr_diagonal(self.ptr, out.buf))
        return out

    def matmul(self, Array x, bint trans=False):
        """op(A) @ x for a vector (ocal_spmv) or a row-major block (ocal_spmm)."""
        rows = self.shape[1] if trans else self.shape[0]
        cdef Array xx = _to(x, self.dtype)
        if xx.ndim not in (1, 2):
            raise ShapeMismatchError("ocal.sparse: A @ x takes a vector or a 2-D block")
        out_shape = (rows,) + xx.shape[1:]
        cdef Array y = _empty(out_shape, self.dtype, dtype_code(self.dtype), self.context)
        cdef ocal_transpose t = OCAL_TRANS if trans else OCAL_NO_TRANS
        if y.size == 0:
            return y
        if xx.ndim == 1:
            check(ocal_spmv(t, 1.0, self.ptr, xx.buf, 0.0, y.buf))
        else:
            check(ocal_spmm(t, 1.0, self.ptr, xx.buf, 0.0, y.buf))
        return y


def csr_from_host(indptr, indices, data, shape, ctx=None):
    """Copies host CSR arrays to the device (ocal_csr_from_host, which validates them)."""
    cdef Context c = _ctx(ctx)
    data = np.asarray(data, order="C")
    if data.dtype not in (np.float32, np.float64):
        data = data.astype(np.float64 if c.fp64 else np.float32)
    itype = np.int32 if indices.dtype.itemsize <= 4 and indptr[-1] < 2**31 else np.int64
    indptr = np.asarray(indptr, itype, order="C")
    indices = np.asarray(indices, itype, order="C")
    cdef CSR m = CSR.__new__(CSR)
    cdef uintptr_t rp = indptr.ctypes.data, ci = indices.ctypes.data, v = data.ctypes.data
    cdef size_t rows = shape[0], cols = shape[1]
    cdef ocal_dtype vt = <ocal_dtype>dtype_code(data.dtype), it = <ocal_dtype>dtype_code(indptr.dtype)
    cdef ocal_context cc = c.handle()
    with nogil:
        s = ocal_csr_from_host(cc, vt, it, rows, cols, <const void *>rp, <const void *>ci,
                               <const void *>v, &m.ptr)
    check(s)
    m.context, m.shape, m.dtype = c, (int(rows), int(cols)), data.dtype
    return m


def csr_read_mtx(str path, dtype, ctx=None):
    """Reads a Matrix Market file into a device CSR matrix (ocal_csr_read_mtx)."""
    cdef Context c = _ctx(ctx)
    cdef CSR m = CSR.__new__(CSR)
    cdef bytes bp = path.encode()
    cdef const char *pp = bp
    cdef ocal_dtype vt = <ocal_dtype>dtype_code(dtype)
    cdef ocal_context cc = c.handle()
    cdef size_t rows = 0, cols = 0
    with nogil:
        s = ocal_csr_read_mtx(cc, pp, vt, OCAL_I32, &m.ptr)
    check(s)
    check(ocal_csr_get_shape(m.ptr, &rows, &cols))
    m.context, m.shape, m.dtype = c, (int(rows), int(cols)), np.dtype(dtype)
    return m


cdef class Operator:
    """A square linear operator for ocal's solvers (ocal_operator): a CSR matrix, or a
    Python object whose matmat(X) (X an {n, k} ocal.Array) returns A @ X."""
    cdef ocal_operator op
    cdef object pyop, error
    cdef readonly Context context
    cdef readonly object dtype
    cdef CSR csr

    @staticmethod
    def of(obj, int n, dtype, Context ctx):
        cdef Operator o = Operator.__new__(Operator)
        o.context, o.dtype = ctx, np.dtype(dtype)
        if isinstance(obj, CSR):
            o.csr = obj
            check(ocal_operator_from_csr((<CSR>obj).ptr, &o.op))
        else:
            o.pyop = obj
            o.op.n = n
            o.op.dtype = <ocal_dtype>dtype_code(o.dtype)
            o.op.apply = _py_apply
            o.op.user = <void *>o
            o.op.csr = NULL
        return o

    def reraise(self):
        if self.error is not None:
            e, self.error = self.error, None
            raise e


cdef Array _borrow(ocal_buffer b, Context ctx):
    """An Array over a buffer ocal lends to a callback (a view of its own, released by the
    Array, so the callback cannot free the solver's buffer)."""
    cdef int nd = 0
    cdef size_t sh[4]
    cdef ocal_dtype dt
    check(ocal_buffer_get_shape(b, &nd, sh))
    check(ocal_buffer_get_dtype(b, &dt))
    cdef Array a = Array.__new__(Array)
    check(ocal_buffer_view(b, 0, nd, sh, &a.buf))
    a.context, a.shape, a.code = ctx, tuple(sh[i] for i in range(nd)), dt
    a.dtype = _np_of_code(dt)
    _meta(a)
    return a


cdef ocal_status _py_apply(void *user, ocal_buffer x, ocal_buffer y) noexcept with gil:
    cdef Operator o = <Operator>user
    cdef Array X, Y, R
    cdef bytes name
    cdef const char *cname
    try:
        X = _borrow(x, o.context)
        Y = _borrow(y, o.context)
        f = getattr(o.pyop, "matmat", None) or getattr(o.pyop, "matvec")
        R = _to(asarray(f(X), ctx=o.context), Y.dtype)
        if R.shape != Y.shape:
            R = R.reshape(Y.shape)
        check(ocal_buffer_copy(R.buf, Y.buf))
        return OCAL_OK
    except BaseException as e:
        o.error = e
        name = type(e).__name__.encode()
        cname = name
        return ocal_error_set(OCAL_INVALID_ARGUMENT, "ocal.sparse.linalg",
                              "the Python operator raised %s", cname)


def cg_solve(Operator A, Array b, Array x, double rtol, double atol, size_t maxiter,
             bint jacobi, bint use_x0):
    """ocal_cg: x receives the solution; returns (converged, iterations, true residual)."""
    cdef ocal_cg_options opt
    cdef ocal_cg_result res
    check(ocal_cg_options_init(&opt))
    opt.rtol, opt.atol, opt.max_iter, opt.use_x0 = rtol, atol, maxiter, use_x0
    opt.precond = OCAL_PRECOND_JACOBI if jacobi else OCAL_PRECOND_NONE
    memset(&res, 0, sizeof(res))
    res.struct_size = sizeof(res)
    with nogil:
        s = ocal_cg(&A.op, b.buf, x.buf, &opt, &res)
    A.reraise()
    if s != OCAL_OK and s != OCAL_NOT_CONVERGED:
        raise_status(s)
    return bool(res.converged), res.iterations, res.true_residual_norm


def lobpcg_solve(Operator A, Array X, Operator B, Operator M, Array Y, double tol,
                 size_t maxiter, bint largest, int restart_control, bint use_x0):
    """ocal_lobpcg: X receives the eigenvectors; returns (eigenvalues, residual norms, stop)."""
    cdef ocal_lobpcg_options opt
    cdef ocal_lobpcg_result res
    check(ocal_lobpcg_options_init(&opt))
    opt.largest, opt.tol, opt.max_iter = largest, tol, maxiter
    opt.restart_control, opt.use_x0 = restart_control, use_x0
    opt.b = &B.op if B is not None else NULL
    opt.m = &M.op if M is not None else NULL
    opt.y = Y.buf if Y is not None else NULL
    k = X.shape[1]
    w = np.zeros(k)
    r = np.zeros(k)
    cdef double[::1] wv = w, rv = r
    memset(&res, 0, sizeof(res))
    res.struct_size = sizeof(res)
    with nogil:
        s = ocal_lobpcg(&A.op, X.buf, &opt, &wv[0], &rv[0], &res)
    for o in (A, B, M):
        if o is not None:
            (<Operator>o).reraise()
    if s != OCAL_OK and s != OCAL_NOT_CONVERGED:
        raise_status(s)
    return w, r, (<bytes>ocal_lobpcg_stop_name(res.stop)).decode()


include "_dlpack.pxi"
include "_strided.pxi"
include "_indexing.pxi"
