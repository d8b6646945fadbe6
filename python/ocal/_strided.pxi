# Strided copies on the device (included by _core.pyx): one generated kernel per element
# type reads out[c0, c1, c2, c3] from x[offset + sum(c_k * stride_k)] (strides in elements,
# negative ones too) where every c_k < limit_k, else writes zero. Slices with steps, fft's
# n=/s= cropping and zero padding, and (with an index array) gathers use it: ocal has views
# of contiguous ranges only.

cdef dict _cl_type_of = {"f32": "float", "f64": "double", "i32": "int", "u32": "uint",
                         "i64": "long", "u64": "ulong", "u8": "uchar", "c32": "float2",
                         "c64": "double2", "f16": "ushort", "bf16": "ushort"}


# The copy kernels' shared parts: index i as the 4 coordinates c0..c3 of the block (c3
# fastest), and coordinate ik's position taken from the index offsets instead.
cdef str _COORDS = ("ulong c3 = i % o3, t = i / o3; ulong c2 = t % o2; t /= o2; "
                    "ulong c1 = t % o1, c0 = t / o1; ")
cdef str _PICK = ("if (ik == 0) p0 = idx[c0]; else if (ik == 1) p1 = idx[c1]; "
                  "else if (ik == 2) p2 = idx[c2]; else p3 = idx[c3]; ")


cdef str _gen_type(int code):
    """The OpenCL type of the copy kernels for an element type (generated kernels take no
    16-bit type, so float16 and bfloat16 have none)."""
    t = _cl_type_of[(<bytes>ocal_dtype_name(<ocal_dtype>code)).decode()]
    if t == "ushort":
        raise UnsupportedError("ocal: copies and assignments through steps or index arrays "
                               "are not supported for 16-bit floats; astype(np.float32) first")
    return t


cdef Gen _strided_gen(Context ctx, int code, bint indexed):
    key = ("gather" if indexed else "strided", code)
    cdef Gen g = ctx._gens.get(key)
    if g is None:
        t = _gen_type(code)
        # The output's 4 coordinates, c3 fastest; with an index array, coordinate ik reads
        # its position in the input from idx (a gather along that axis).
        args = ("const %s *x, %s *y, ulong o1, ulong o2, ulong o3, long off, long s0, long s1, "
                "long s2, long s3, ulong l0, ulong l1, ulong l2, ulong l3" % (t, t))
        pick = ""
        if indexed:
            args += ", const long *idx, ulong ik"
            pick = _PICK
        body = (_COORDS + "if (c0 < l0 && c1 < l1 && c2 < l2 && c3 < l3) { "
                "long p0 = (long)c0, p1 = (long)c1, p2 = (long)c2, p3 = (long)c3; " + pick +
                "y[i] = x[off + p0 * s0 + p1 * s1 + p2 * s2 + p3 * s3]; } "
                "else y[i] = (%s)0;" % t)
        g = Gen.elementwise(ctx, args, body)
        ctx._gens[key] = g
    return g


cdef Array _strided_copy(Array a, tuple out_shape, Py_ssize_t offset, strides, limits,
                         Array index=None, int index_axis=0):
    """A new array of out_shape (up to 4-D) whose element c is a's element
    offset + sum(c[k] * strides[k]) where every c[k] < limits[k], else zero. With index (an
    int64 array), coordinate index_axis goes through it (index[c[k]] * strides[k])."""
    cdef Array out = _empty(out_shape, a.dtype, a.code, a.context)
    cdef Py_ssize_t n = _numel(out_shape)
    if n == 0:
        return out
    cdef int pad = 4 - len(out_shape)
    dims = (1,) * pad + tuple(out_shape)
    st = (0,) * pad + tuple(strides)
    lim = (1,) * pad + tuple(limits)
    cdef Gen g = _strided_gen(a.context, a.code, index is not None)
    cdef uint64_t o[3]
    cdef int64_t off = offset, s[4]
    cdef uint64_t l[4]
    cdef uint64_t ik = index_axis + pad
    for k in range(3):
        o[k] = dims[k + 1]
    for k in range(4):
        s[k] = st[k]
        l[k] = lim[k]
    cdef ocal_gen_arg args[16]
    args[0].buffer, args[0].scalar = a.buf, NULL
    args[1].buffer, args[1].scalar = out.buf, NULL
    for k in range(3):
        args[2 + k].buffer, args[2 + k].scalar = NULL, &o[k]
    args[5].buffer, args[5].scalar = NULL, &off
    for k in range(4):
        args[6 + k].buffer, args[6 + k].scalar = NULL, &s[k]
        args[10 + k].buffer, args[10 + k].scalar = NULL, &l[k]
    cdef int na = 14
    if index is not None:
        args[14].buffer, args[14].scalar = index.buf, NULL
        args[15].buffer, args[15].scalar = NULL, &ik
        na = 16
    check(ocal_gen_run(g.ptr, n, na, args, NULL))
    return out


cdef Gen _scatter_gen(Context ctx, int code, bint indexed):
    key = ("scatter_indexed" if indexed else "scatter", code)
    cdef Gen g = ctx._gens.get(key)
    if g is None:
        t = _gen_type(code)
        # The strided copy's addressing with the sides swapped: x is read in order, y is
        # written at off + sum(p_k * s_k), coordinate ik's p taken from idx.
        args = ("const %s *x, %s *y, ulong o1, ulong o2, ulong o3, long off, long s0, long s1, "
                "long s2, long s3" % (t, t))
        pick = ""
        if indexed:
            args += ", const long *idx, ulong ik"
            pick = _PICK
        body = (_COORDS + "long p0 = (long)c0, p1 = (long)c1, p2 = (long)c2, p3 = (long)c3; "
                + pick + "y[off + p0 * s0 + p1 * s1 + p2 * s2 + p3 * s3] = x[i];")
        g = Gen.elementwise(ctx, args, body)
        ctx._gens[key] = g
    return g


cdef _strided_scatter(Array src, Array dst, Py_ssize_t offset, strides, Array index,
                      int index_axis):
    """Writes src (C-contiguous, up to 4-D) into dst: src's element c goes to dst's element
    offset + sum(c[k] * strides[k]); with index (int64), coordinate index_axis goes through
    it (index[c[k]] * strides[k]). The inverse of _strided_copy's addressing."""
    cdef Py_ssize_t n = _numel(src.shape)
    if n == 0:
        return
    cdef int pad = 4 - len(src.shape)
    dims = (1,) * pad + tuple(src.shape)
    st = (0,) * pad + tuple(strides)
    cdef Gen g = _scatter_gen(dst.context, dst.code, index is not None)
    cdef uint64_t o[3]
    cdef int64_t off = offset, s[4]
    cdef uint64_t ik = index_axis + pad
    for k in range(3):
        o[k] = dims[k + 1]
    for k in range(4):
        s[k] = st[k]
    cdef ocal_gen_arg args[12]
    args[0].buffer, args[0].scalar = src.buf, NULL
    args[1].buffer, args[1].scalar = dst.buf, NULL
    for k in range(3):
        args[2 + k].buffer, args[2 + k].scalar = NULL, &o[k]
    args[5].buffer, args[5].scalar = NULL, &off
    for k in range(4):
        args[6 + k].buffer, args[6 + k].scalar = NULL, &s[k]
    cdef int na = 10
    if index is not None:
        args[10].buffer, args[10].scalar = index.buf, NULL
        args[11].buffer, args[11].scalar = NULL, &ik
        na = 12
    check(ocal_gen_run(g.ptr, n, na, args, NULL))


cdef tuple _c_strides(tuple shape):
    """The element strides of a C-contiguous array of this shape."""
    st = []
    cdef Py_ssize_t acc = 1
    for d in reversed(shape):
        st.append(acc)
        acc *= d
    return tuple(reversed(st))


def _resize_trailing(Array a, tuple sizes):
    """a with its last len(sizes) axes cropped or zero-padded at the end to sizes (numpy.fft's
    n= and s=), copied on the device; a itself when nothing changes."""
    k = len(sizes)
    if tuple(a.shape[a.ndim - k:]) == sizes:
        return a
    if a.ndim > 4:
        raise UnsupportedError("ocal.fft: n=/s= on arrays of more than 4 dimensions")
    out_shape = a.shape[:a.ndim - k] + sizes
    limits = a.shape[:a.ndim - k] + tuple(_builtins.min(a.shape[a.ndim - k + j], sizes[j])
                                          for j in range(k))
    return _strided_copy(a, out_shape, 0, _c_strides(a.shape), limits)
