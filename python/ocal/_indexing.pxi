# Indexing (included by _core.pyx), with NumPy's rules: integers, slices with any step,
# Ellipsis, None, and one integer-array or boolean-mask index. A result that is a contiguous
# range of the array is a view (ocal's views are ranges); any other is a copy made on the
# device by the strided-copy kernel (_strided.pxi), gathering through the index array.


cdef object _host_index(k):
    """An index array as a NumPy array (an ocal Array is read back: its values decide the
    result's shape), or None for a key element that is not one."""
    if isinstance(k, Array):
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
        v = _host_index(k)
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


cdef object _getitem(Array a, key, bint need_view):
    """a[key]: a view where the result is a contiguous range, else a device copy (or
    UnsupportedError when need_view: assignment needs a view)."""
    a, items = _expand_key(a, key)
    shape, strides = a.shape, _c_strides(a.shape)
    arrays = [j for j, k in enumerate(items) if isinstance(k, np.ndarray)]
    if len(arrays) > 1:
        raise UnsupportedError("ocal: one index array per indexing (got %d); index in steps, "
                               "or on the host (.get()[...])" % len(arrays))
    dims = []          # (size, stride), or ("index", index array, stride)
    cdef Py_ssize_t offset = 0
    ax = 0
    advanced = []      # positions in items of the index array and, beside one, the integers
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
            idx = k.astype(np.int64).reshape(-1)
            idx = np.where(idx < 0, idx + n, idx)
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise IndexError("ocal: index %d is out of bounds for axis %d of size %d"
                                 % (k.reshape(-1)[(idx < 0) | (idx >= n)][0], ax, n))
            dims.append(("index", k.shape, idx, st))
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
            return a._view(0, out_shape)
        if _is_range(out_shape, tuple(d[1] for d in dims)):
            return a._view(offset, out_shape)
        if need_view:
            raise UnsupportedError("ocal: assignment through slices with steps is not "
                                   "supported (ocal views are contiguous ranges); assign on "
                                   "the host and copy back, or use ocal.where")
        if len(out_shape) > OCAL_MAX_DIMS:
            raise UnsupportedError("ocal: the result would have %d dimensions; ocal arrays "
                                   "have at most %d" % (len(out_shape), OCAL_MAX_DIMS))
        return _strided_copy(a, out_shape, offset, [d[1] for d in dims], out_shape)
    if need_view:
        raise UnsupportedError("ocal: assignment through index arrays is not supported; "
                               "assign on the host and copy back, or use ocal.where")
    # NumPy puts the index array's dimensions first when integers and the array are apart.
    if advanced != list(range(advanced[0], advanced[0] + len(advanced))):
        j = [i for i, d in enumerate(dims) if d[0] == "index"][0]
        dims.insert(0, dims.pop(j))
    flat = [(d[2].size, d[3]) if d[0] == "index" else d for d in dims]
    out_shape = tuple(_builtins.sum([list(d[1]) if d[0] == "index" else [d[0]] for d in dims], []))
    if len(flat) > OCAL_MAX_DIMS or len(out_shape) > OCAL_MAX_DIMS:
        raise UnsupportedError("ocal: the result would have more than %d dimensions"
                               % OCAL_MAX_DIMS)
    j = [i for i, d in enumerate(dims) if d[0] == "index"][0]
    index = asarray(dims[j][2], ctx=a.context)
    kshape = tuple(d[0] for d in flat)
    out = _strided_copy(a, kshape, offset, [d[1] for d in flat], kshape, index, j)
    return out if kshape == out_shape else out.reshape(out_shape)


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
