# Indexing (included by _core.pyx), with NumPy's rules: integers, slices with any step,
# Ellipsis, None, and integer-array or boolean-mask indices (several broadcast together). A
# result that is a contiguous range of the array is a view (ocal's views are ranges); any
# other is a copy made on the device by the strided-copy kernel (_strided.pxi), gathering
# through the index offsets; assignment to one scatters through the same plan.


cdef object _host_index(k, Array a):
    """An index array of a as a NumPy array (an ocal Array is read back: its values decide the
    result's shape), or None for a key element that is not one."""
    if isinstance(k, Array):
        if (<Array>k).context is not a.context:
            raise InvalidArgumentError(
                "ocal: the index array (integer indices or a boolean mask) belongs to another "
                "context than the array it indexes (arrays of two contexts do not mix): make "
                "it in the array's context, ocal.asarray(index.get(), ctx=x.context)")
        return (<Array>k).get()
    if isinstance(k, (list, np.ndarray)):
        v = np.asarray(k)
        if v.dtype.kind not in "biu" and v.size:
            raise IndexError("ocal: arrays used as indices must be of integer or boolean type")
        return v.astype(np.int64) if v.dtype.kind != "b" else v
    return None


cdef tuple _expand_key(Array a, key):
    """The key as a tuple of int, slice, None and int64 index arrays, with the Ellipsis
    expanded and a boolean mask turned into indices; and the array to index (a reshaped
    view when a mask of several dimensions covers several axes)."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        v = _host_index(k, a)
        if v is None and not (k is None or k is Ellipsis or isinstance(k, slice)):
            if not hasattr(k, "__index__") or isinstance(k, (bool, np.bool_)):
                raise IndexError("ocal: only integers, slices, Ellipsis, None and integer or "
                                 "boolean arrays are valid indices (got %r)" % (k,))
            v = k.__index__()
        items.append(k if v is None else v)
    if _builtins.sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("ocal: an index can only have a single ellipsis ('...')")
    used = _builtins.sum((k.ndim if k.dtype.kind == "b" else 1) if isinstance(k, np.ndarray)
                         else (0 if k is None or k is Ellipsis else 1) for k in items)
    if used > a.ndim:
        raise IndexError("ocal: too many indices for an array of shape %r" % (a.shape,))
    if Ellipsis in [k for k in items if not isinstance(k, np.ndarray)]:
        i = [j for j, k in enumerate(items) if not isinstance(k, np.ndarray) and k is Ellipsis][0]
        items[i:i + 1] = [slice(None)] * (a.ndim - used)
    # Boolean masks become integer indices; one over several axes merges them (a reshape).
    out, ax = [], 0
    for k in items:
        if isinstance(k, np.ndarray) and k.dtype.kind == "b":
            span = _builtins.max(k.ndim, 1)
            if k.shape != a.shape[ax:ax + k.ndim]:
                raise IndexError("ocal: boolean index of shape %r does not match the indexed "
                                 "axes %r" % (k.shape, a.shape[ax:ax + k.ndim]))
            if span > 1:
                a = a.reshape(a.shape[:ax] + (_numel(k.shape),) + a.shape[ax + span:])
            out.append(np.flatnonzero(k).astype(np.int64))
            ax += 1
        else:
            out.append(k)
            ax += 0 if k is None else 1
    return a, out


cdef tuple _plan(Array a, key):
    """How a[key] reads a: (a, offset, shape) when the result is a contiguous range (a view),
    else (a, offset, kshape, strides, index, out_shape): element c of the kshape block is a's
    element offset + sum(c[k] * strides[k]), where the axis of kshape that has a stride of
    None takes its term from index (int64 element offsets: the index arrays, broadcast
    together, and the integers beside them); out_shape is the result's (kshape reshaped).
    The returned a is the array indexed (a reshaped view for a mask of several axes)."""
    a, items = _expand_key(a, key)
    shape, strides = a.shape, _c_strides(a.shape)
    arrays = [j for j, k in enumerate(items) if isinstance(k, np.ndarray)]
    dims = []          # (size, stride), or ("index", index array shape, offsets)
    cdef Py_ssize_t offset = 0
    ax = 0
    advanced = []      # positions in items of the index arrays and, beside them, the integers
    picked = []        # (index array, its shape, stride) of each index array
    for j, k in enumerate(items):
        if k is None:
            dims.append((1, 0))
            continue
        n, st = shape[ax], strides[ax]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            count = len(range(start, stop, step))
            if count:
                offset += start * st
            dims.append((count, step * st))
        elif isinstance(k, np.ndarray):
            idx = k.astype(np.int64)
            idx = np.where(idx < 0, idx + n, idx)
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise IndexError("ocal: index %d is out of bounds for axis %d of size %d"
                                 % (k[(idx < 0) | (idx >= n)].reshape(-1)[0], ax, n))
            if not picked:
                dims.append(("index",))
            picked.append((idx, st))
            advanced.append(j)
        else:
            i = k + n if k < 0 else k
            if not 0 <= i < n:
                raise IndexError("ocal: index %d is out of bounds for axis %d of size %d"
                                 % (k, ax, n))
            offset += i * st
            if arrays:
                advanced.append(j)
        ax += 1
    for d in range(ax, len(shape)):
        dims.append((shape[d], strides[d]))
    if not arrays:
        out_shape = tuple(d[0] for d in dims)
        if _numel(out_shape) == 0:               # nothing to read: an empty view at the start
            return a, 0, out_shape
        if _is_range(out_shape, tuple(d[1] for d in dims)):
            return a, offset, out_shape
        return a, offset, out_shape, [d[1] for d in dims], None, out_shape
    # Several index arrays broadcast together, as NumPy's; their terms add into one offset.
    try:
        bshape = np.broadcast_shapes(*[i.shape for i, _ in picked])
    except ValueError:
        raise IndexError("ocal: shape mismatch: indexing arrays could not be broadcast "
                         "together with shapes %s" % " ".join(repr(i.shape) for i, _ in picked))
    flat = np.zeros(bshape, np.int64)
    for idx, st in picked:
        flat += idx * st
    j = dims.index(("index",))
    dims[j] = ("index", bshape, flat.reshape(-1))
    # NumPy puts the index dimensions first when the advanced indices are apart.
    if advanced != list(range(advanced[0], advanced[0] + len(advanced))):
        dims.insert(0, dims.pop(j))
        j = 0
    kshape = tuple(d[2].size if d[0] == "index" else d[0] for d in dims)
    out_shape = tuple(_builtins.sum([list(d[1]) if d[0] == "index" else [d[0]] for d in dims], []))
    strides = [None if d[0] == "index" else d[1] for d in dims]
    return a, offset, kshape, strides, dims[j][2], out_shape


cdef object _getitem(Array a, key):
    """a[key]: a view where the result is a contiguous range, else a device copy."""
    plan = _plan(a, key)
    a = plan[0]
    if len(plan) == 3:
        return a._view(plan[1], plan[2])
    _, offset, kshape, strides, index, out_shape = plan
    if len(kshape) > OCAL_MAX_DIMS or len(out_shape) > OCAL_MAX_DIMS:
        raise UnsupportedError("ocal: the result would have more than %d dimensions"
                               % OCAL_MAX_DIMS)
    if index is None:
        return _strided_copy(a, kshape, offset, strides, kshape)
    j = strides.index(None)
    strides[j] = 1
    out = _strided_copy(a, kshape, offset, strides, kshape, asarray(index, ctx=a.context), j)
    return out if kshape == out_shape else out.reshape(out_shape)


cdef _setitem(Array a, key, value):
    """a[key] = value: through a view where the selection is a contiguous range, else
    scattered on the device through strides or index offsets (where an index repeats, which
    of its values lands is unspecified, as on CuPy)."""
    plan = _plan(a, key)
    cdef Array dst
    if len(plan) == 3:
        dst = (<Array>plan[0])._view(plan[1], plan[2])
        _assign(dst, value)
        return
    dst_a, offset, kshape, strides, index, out_shape = plan
    if len(kshape) > 4:
        raise UnsupportedError("ocal: assignment through a selection of more than 4 "
                               "dimensions")
    if _numel(kshape) == 0:
        _broadcast_value(value, out_shape, (<Array>dst_a).dtype, (<Array>dst_a).context)
        return
    src = _broadcast_value(value, out_shape, (<Array>dst_a).dtype, (<Array>dst_a).context)
    if src is value:    # the scatter must not read what it writes (x[::-1] = x)
        src = src.copy()
    src = src.reshape(kshape)
    j = 0
    if index is not None:
        j = strides.index(None)
        strides[j] = 1
        index = asarray(index, ctx=(<Array>dst_a).context)
    _strided_scatter(src, dst_a, offset, strides, index, j)


cdef Array _broadcast_value(value, tuple shape, dt, Context ctx):
    """value as a C-contiguous device array of shape and type dt (NumPy's broadcasting)."""
    if isinstance(value, Array):
        return _broadcast_to(<Array>value, shape).astype(dt, copy=False)
    host = np.broadcast_to(np.asarray(value, dt), shape)
    return asarray(np.ascontiguousarray(host), ctx=ctx)


cdef bint _is_range(tuple shape, tuple strides):
    """Whether elements of this shape and these strides are one contiguous C-order range."""
    cdef Py_ssize_t expect = 1
    for d in reversed(range(len(shape))):
        if shape[d] == 0:
            return True
        if shape[d] != 1 and strides[d] != expect:
            return False
        expect *= shape[d]
    return True
