# DLPack (included by _core.pyx): device memory out as kDLOpenCL capsules whose data is the
# cl_mem and byte_offset the view's offset, and kDLOpenCL capsules in without a copy
# (ocal_buffer_from_cl_mem). Both the versioned (1.x) and the unversioned capsule forms.

from libc.stdlib cimport malloc, free
from cpython.pycapsule cimport PyCapsule_IsValid, PyCapsule_GetPointer, PyCapsule_SetName, \
    PyCapsule_Destructor
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF

cdef extern from *:
    """
    typedef struct { int32_t device_type; int32_t device_id; } ocal_DLDevice;
    typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } ocal_DLDataType;
    typedef struct {
      void *data; ocal_DLDevice device; int32_t ndim; ocal_DLDataType dtype;
      int64_t *shape; int64_t *strides; uint64_t byte_offset;
    } ocal_DLTensor;
    typedef struct ocal_DLManagedTensor {
      ocal_DLTensor dl_tensor; void *manager_ctx;
      void (*deleter)(struct ocal_DLManagedTensor *);
    } ocal_DLManagedTensor;
    typedef struct { uint32_t major; uint32_t minor; } ocal_DLPackVersion;
    typedef struct ocal_DLManagedTensorVersioned {
      ocal_DLPackVersion version; void *manager_ctx;
      void (*deleter)(struct ocal_DLManagedTensorVersioned *);
      uint64_t flags; ocal_DLTensor dl_tensor;
    } ocal_DLManagedTensorVersioned;
    """
    ctypedef struct ocal_DLDevice:
        int32_t device_type
        int32_t device_id
    ctypedef struct ocal_DLDataType:
        uint8_t code
        uint8_t bits
        uint16_t lanes
    ctypedef struct ocal_DLTensor:
        void *data
        ocal_DLDevice device
        int32_t ndim
        ocal_DLDataType dtype
        int64_t *shape
        int64_t *strides
        uint64_t byte_offset
    ctypedef struct ocal_DLManagedTensor:
        ocal_DLTensor dl_tensor
        void *manager_ctx
        void (*deleter)(ocal_DLManagedTensor *)
    ctypedef struct ocal_DLPackVersion:
        uint32_t major
        uint32_t minor
    ctypedef struct ocal_DLManagedTensorVersioned:
        ocal_DLPackVersion version
        void *manager_ctx
        void (*deleter)(ocal_DLManagedTensorVersioned *)
        uint64_t flags
        ocal_DLTensor dl_tensor

cdef enum:
    _kDLCPU = 1
    _kDLOpenCL = 4
cdef uint64_t _DL_READ_ONLY = 1, _DL_IS_COPIED = 2

# (DLDataTypeCode, bits) of each NumPy dtype ocal has: kDLInt 0, kDLUInt 1, kDLFloat 2,
# kDLBfloat 4, kDLComplex 5, kDLBool 6.
cdef dict _dl_of_np = {
    np.dtype(np.float16): (2, 16), np.dtype(np.float32): (2, 32), np.dtype(np.float64): (2, 64),
    np.dtype(np.int32): (0, 32), np.dtype(np.int64): (0, 64), np.dtype(np.uint8): (1, 8),
    np.dtype(np.uint32): (1, 32), np.dtype(np.uint64): (1, 64), np.dtype(np.bool_): (6, 8),
    np.dtype(np.complex64): (5, 64), np.dtype(np.complex128): (5, 128),
}
if bfloat16 is not None:
    _dl_of_np[bfloat16] = (4, 16)
cdef dict _np_of_dl = {v: k for k, v in _dl_of_np.items()}


# One allocation per export (the manager_ctx of either form): the managed tensor, its shape
# and the producer's reference.
ctypedef struct _DLExport:
    ocal_DLManagedTensorVersioned v
    ocal_DLManagedTensor u
    int64_t shape[4]
    PyObject *owner


cdef void _dl_release(void *manager_ctx) noexcept with gil:
    # The producer's reference (an Array, so also its Context) goes when the consumer is done.
    cdef _DLExport *e = <_DLExport *>manager_ctx
    Py_XDECREF(e.owner)
    free(e)


cdef void _dl_delete(ocal_DLManagedTensor *m) noexcept nogil:
    if m != NULL:
        _dl_release(m.manager_ctx)


cdef void _dl_delete_versioned(ocal_DLManagedTensorVersioned *m) noexcept nogil:
    if m != NULL:
        _dl_release(m.manager_ctx)


cdef void _dl_capsule_gone(object capsule) noexcept:
    # A capsule no consumer took (still named "dltensor"/"dltensor_versioned") frees its tensor.
    cdef void *p
    if PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        p = PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        _dl_delete_versioned(<ocal_DLManagedTensorVersioned *>p)
    elif PyCapsule_IsValid(capsule, b"dltensor"):
        p = PyCapsule_GetPointer(capsule, b"dltensor")
        _dl_delete(<ocal_DLManagedTensor *>p)


cdef int _dl_device_index(Context ctx) except -1:
    """The device's place in ocal.devices(): the device_id of its DLPack device."""
    if ctx._dl_index < 0:
        ctx._dl_index = 0
        for i, d in enumerate(devices()):
            if (d.platform_index, d.device_index) == (ctx.device.platform_index,
                                                      ctx.device.device_index):
                ctx._dl_index = i
                break
    return ctx._dl_index


cdef object _dl_export(Array a, bint versioned, bint copied):
    """A capsule over a's memory; it holds a reference to a until the consumer's deleter."""
    cdef cl_mem m = NULL
    cdef size_t off = 0
    if _numel(a.shape):
        check(ocal_buffer_get_cl_mem(a.buf, &m, &off))
    code, bits = _dl_of_np[a.dtype]
    cdef _DLExport *e = <_DLExport *>malloc(sizeof(_DLExport))
    if e == NULL:
        raise MemoryError("ocal: no host memory for a DLPack tensor")
    memset(e, 0, sizeof(_DLExport))
    cdef ocal_DLTensor *t = &e.v.dl_tensor if versioned else &e.u.dl_tensor
    t.data = <void *>m
    t.device.device_type = _kDLOpenCL
    t.device.device_id = _dl_device_index(a.context)
    t.ndim = len(a.shape)
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
    for i in range(t.ndim):
        e.shape[i] = a.shape[i]
    t.shape = e.shape
    t.strides = NULL  # C-contiguous, as every ocal array
    t.byte_offset = off
    Py_INCREF(a)
    e.owner = <PyObject *>a
    if versioned:
        e.v.version.major, e.v.version.minor = 1, 0
        e.v.manager_ctx = e
        e.v.deleter = _dl_delete_versioned
        e.v.flags = _DL_IS_COPIED if copied else 0
        return PyCapsule_New(&e.v, b"dltensor_versioned", <PyCapsule_Destructor>_dl_capsule_gone)
    e.u.manager_ctx = e
    e.u.deleter = _dl_delete
    return PyCapsule_New(&e.u, b"dltensor", <PyCapsule_Destructor>_dl_capsule_gone)


cdef class _DLImport:
    """Keeps a consumed DLPack tensor until the ocal.Array over its memory is gone, then
    calls the producer's deleter."""
    cdef void *m
    cdef bint versioned

    def __dealloc__(self):
        if self.m == NULL:
            return
        if self.versioned:
            (<ocal_DLManagedTensorVersioned *>self.m).deleter(<ocal_DLManagedTensorVersioned *>self.m)
        else:
            (<ocal_DLManagedTensor *>self.m).deleter(<ocal_DLManagedTensor *>self.m)


def _from_dlpack_capsule(capsule, Context ctx):
    """An ocal.Array over a kDLOpenCL capsule's cl_mem, in ctx (no copy)."""
    cdef bint versioned
    cdef void *p
    cdef ocal_DLTensor *t
    cdef uint64_t flags = 0
    if PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        versioned = True
        p = PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        if (<ocal_DLManagedTensorVersioned *>p).version.major != 1:
            raise BufferError("ocal.from_dlpack: DLPack %d.x tensors are not understood (1.x "
                              "are)" % (<ocal_DLManagedTensorVersioned *>p).version.major)
        t = &(<ocal_DLManagedTensorVersioned *>p).dl_tensor
        flags = (<ocal_DLManagedTensorVersioned *>p).flags
    elif PyCapsule_IsValid(capsule, b"dltensor"):
        versioned = False
        p = PyCapsule_GetPointer(capsule, b"dltensor")
        t = &(<ocal_DLManagedTensor *>p).dl_tensor
    else:
        raise BufferError("ocal.from_dlpack: not an unconsumed DLPack capsule (a capsule can "
                          "be consumed once)")
    if t.device.device_type != _kDLOpenCL:
        raise BufferError("ocal.from_dlpack: the capsule's memory is on DLPack device type %d, "
                          "not OpenCL (4); pass the producer itself for a host copy"
                          % t.device.device_type)
    key = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or key not in _np_of_dl:
        raise TypeMismatchError("ocal.from_dlpack: DLPack type (code %d, %d bits, %d lanes) "
                                "has no ocal element type" % (t.dtype.code, t.dtype.bits,
                                                              t.dtype.lanes))
    dt = _np_of_dl[key]
    if not 0 <= t.ndim <= OCAL_MAX_DIMS:
        raise UnsupportedError("ocal.from_dlpack: %d dimensions; ocal arrays have at most %d"
                               % (t.ndim, OCAL_MAX_DIMS))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    cdef int64_t expect = 1
    if t.strides != NULL:
        for i in reversed(range(t.ndim)):
            if shape[i] != 1 and t.strides[i] != expect:
                raise UnsupportedError("ocal.from_dlpack: the tensor is not C-contiguous "
                                       "(strides %r); ocal views are contiguous ranges: make a "
                                       "contiguous copy on the producer's side first"
                                       % (tuple(t.strides[j] for j in range(t.ndim)),))
            expect *= shape[i]
    cdef int code = dtype_code(dt)
    cdef size_t cs[4]
    cdef int nd = _cshape(shape, cs)
    cdef Array a = Array.__new__(Array)
    cdef _DLImport owner = None
    if _numel(shape) == 0:
        check(ocal_buffer_create(ctx.handle(), <ocal_dtype>code, nd, cs, &a.buf))
    else:
        if t.byte_offset % dt.itemsize:
            raise InvalidArgumentError("ocal.from_dlpack: byte_offset %d is not a multiple of "
                                       "the %d-byte elements" % (t.byte_offset, dt.itemsize))
        s = ocal_buffer_from_cl_mem(ctx.handle(), <cl_mem>t.data, t.byte_offset,
                                    <ocal_dtype>code, nd, cs, &a.buf)
        # Of the invalid arguments only two are left: a cl_mem of another OpenCL context, or
        # one created read-only or write-only (check raises ocal's message for that one).
        if s == OCAL_INVALID_ARGUMENT and "another OpenCL context" in last_error():
            raise ContextMismatchError(
                "ocal.from_dlpack: the tensor's cl_mem belongs to another OpenCL context than "
                "the ocal Context's (%r); pass ctx= the Context that made it, or copy through "
                "the host (ocal.asarray(numpy.from_dlpack(x, device='cpu')))" % (ctx,))
        check(s)
        owner = _DLImport.__new__(_DLImport)
        owner.m, owner.versioned = p, versioned
    # Consumed: the capsule no longer frees the tensor; the owner (or we, now) calls its deleter.
    PyCapsule_SetName(capsule, b"used_dltensor_versioned" if versioned else b"used_dltensor")
    if owner is None:
        if versioned:
            (<ocal_DLManagedTensorVersioned *>p).deleter(<ocal_DLManagedTensorVersioned *>p)
        else:
            (<ocal_DLManagedTensor *>p).deleter(<ocal_DLManagedTensor *>p)
    a.context, a.shape, a.dtype, a.code, a.base = ctx, shape, dt, code, owner
    _meta(a)
    if flags & _DL_READ_ONLY:  # ocal arrays are writable: a copy of read-only memory
        return a.copy()
    return a
