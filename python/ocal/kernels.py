"""ocal.kernels: your own OpenCL C kernels, with CuPy's conventions.

RawKernel / RawModule (CuPy's, PyCUDA's SourceModule) compile OpenCL C source through ocal's
caches and launch it with checked arguments. ElementwiseKernel, ReductionKernel and
ScanKernel write the kernel from expressions (ocal_gen_elementwise, ocal_gen_reduction,
ocal_gen_scan): parameters are declared "float32 x, float32 y" (NumPy or OpenCL C type
names; an upper-case letter such as T is a type taken from the arguments), and array
parameters are named without [i] in the expressions, as in CuPy; a `raw` array parameter is
a pointer that the expression indexes itself (with i)."""
import re

import numpy as np

from ocal._core import Array, Gen, Kernel, LocalMemory, Program, empty, get_context
from ocal._errors import InvalidArgumentError, ShapeMismatchError

_CL = {"float32": "float", "float64": "double", "int32": "int", "int64": "long",
       "uint32": "uint", "uint64": "ulong", "uint8": "uchar", "bool": "uchar",
       "complex64": "float2", "complex128": "double2"}
_NP = {v: k for k, v in _CL.items() if k != "bool"}


class RawModule:
    """A program from source: get_function(name) gives its kernels (PyCUDA's SourceModule,
    CuPy's RawModule)."""

    def __init__(self, code, options=(), ctx=None):
        opts = " ".join(options) if not isinstance(options, str) else options
        self.program = Program(code, opts or None, ctx)

    def get_function(self, name):
        return RawKernel(None, name, _program=self.program)


class RawKernel:
    """RawKernel(code, name, options=()): kernel(grid, block, args) launches grid x block
    work-items in work-groups of block (CuPy's convention; grid counts work-groups), or
    kernel(global_size=..., local_size=None, args=...) as OpenCL counts them."""

    def __init__(self, code, name, options=(), ctx=None, _program=None):
        self.program = _program or RawModule(code, options, ctx).program
        self.kernel = Kernel(self.program, name)
        self.name = name

    @property
    def num_args(self):
        return self.kernel.num_args

    def __call__(self, grid=None, block=None, args=(), *, global_size=None, local_size=None):
        if len(args) != self.kernel.num_args:
            raise InvalidArgumentError("ocal.kernels: %s takes %d arguments, %d given"
                                       % (self.name, self.kernel.num_args, len(args)))
        for i, a in enumerate(args):
            self.kernel.set_arg(i, a)
        if global_size is None:
            grid = (grid,) if isinstance(grid, int) else tuple(grid)
            block = (block,) if isinstance(block, int) else tuple(block)
            global_size = tuple(g * b for g, b in zip(grid, block))
            local_size = block
        elif isinstance(global_size, int):
            global_size = (global_size,)
            local_size = (local_size,) if isinstance(local_size, int) else local_size
        self.kernel.launch(global_size, local_size)


def _params(text):
    """"float32 x, raw T y" -> [(raw, type, name)]."""
    out = []
    for p in filter(None, (s.strip() for s in text.split(","))):
        words = p.split()
        raw = words[0] == "raw"
        words = words[1:] if raw else words
        if len(words) != 2:
            raise InvalidArgumentError("ocal.kernels: cannot read the parameter %r" % p)
        out.append((raw, words[0], words[1]))
    return out


def _cltype(t, types):
    t = types.get(t, t)
    if isinstance(t, np.dtype):
        t = t.name
    return _CL.get(t, t)


def _bind(params, args, types):
    """Fills the placeholder types (T) from the arguments' dtypes."""
    for (raw, t, name), a in zip(params, args):
        if len(t) == 1 and t.isupper() and t not in types and isinstance(a, Array):
            types[t] = a.dtype
    for raw, t, name in params:
        if len(t) == 1 and t.isupper() and t not in types:
            raise InvalidArgumentError("ocal.kernels: no array argument gives the type %s" % t)


def _typedefs(types, preamble):
    """The preamble with a typedef per placeholder type (T -> float), as CuPy's kernels have."""
    defs = "".join("typedef %s %s;\n" % (_cltype(k, types), k) for k in sorted(types))
    return (defs + (preamble or "")) or None


def _npdtype(t, types):
    t = types.get(t, t)
    return np.dtype(_NP.get(t, t))


class ElementwiseKernel:
    """ElementwiseKernel(in_params, out_params, operation, name, preamble=''): kernel(*in)
    allocates the outputs (the shape of the array inputs, which must agree) and returns them
    (a tuple for several); kernel(*in, *out) writes into given outputs. size= gives the
    number of indices when no argument is an array; beside arrays it must equal their size."""

    def __init__(self, in_params, out_params, operation, name="kernel", preamble="",
                 options=None):
        self.in_params, self.out_params = _params(in_params), _params(out_params)
        self.operation, self.name, self.preamble = operation, name, preamble
        self._gens = {}

    def _gen(self, ctx, arrays, types):
        key = (id(ctx), tuple(arrays), tuple(sorted((k, str(v)) for k, v in types.items())))
        g = self._gens.get(key)
        if g is not None:
            return g
        decl, loads, stores = [], [], []
        params = self.in_params + self.out_params
        for j, (raw, t, name) in enumerate(params):
            ct = _cltype(t, types)
            out = j >= len(self.in_params)
            if arrays[j]:
                const = "" if out else "const "
                if raw:
                    decl.append("%s%s *%s" % (const, ct, name))
                else:
                    decl.append("%s%s *%s_ocalpy" % (const, ct, name))
                    loads.append("%s %s = %s_ocalpy[i];" % (ct, name, name))
                    if out:
                        stores.append("%s_ocalpy[i] = %s;" % (name, name))
            else:
                decl.append("%s %s" % (ct, name))
        body = "%s %s; %s" % (" ".join(loads), self.operation.rstrip().rstrip(";"), " ".join(stores))
        g = Gen.elementwise(ctx, ", ".join(decl), body, _typedefs(types, self.preamble))
        self._gens[key] = g
        return g

    def __call__(self, *args, size=None):
        nin, nout = len(self.in_params), len(self.out_params)
        if len(args) not in (nin, nin + nout):
            raise InvalidArgumentError("ocal.kernels: %s takes %d inputs (and %d outputs)"
                                       % (self.name, nin, nout))
        types = {}
        _bind(self.in_params + self.out_params, args, types)
        shapes = {a.shape for a in args if isinstance(a, Array)}
        if len(shapes) > 1:
            raise ShapeMismatchError("ocal.kernels: %s: the array arguments have shapes %s; "
                                     "ocal's elementwise kernels do not broadcast"
                                     % (self.name, sorted(shapes)))
        arrays_in = [isinstance(a, Array) for a in args[:nin]]
        ctx = next((a.context for a in args if isinstance(a, Array)), get_context())
        if size is not None and (not isinstance(size, (int, np.integer)) or size < 0):
            raise InvalidArgumentError("ocal.kernels: %s(..., size=%r): size must be a "
                                       "non-negative integer" % (self.name, size))
        if shapes:
            shape = shapes.pop()
            if size is not None and size != int(np.prod(shape)):
                # The kernel writes element i of its array arguments for every i < size.
                raise InvalidArgumentError(
                    "ocal.kernels: %s(..., size=%d): the array arguments have %d elements "
                    "(shape %s), and size= must equal that: leave size= out, or pass arrays "
                    "of %d elements" % (self.name, size, int(np.prod(shape)), str(shape), size))
        elif size is None:
            raise InvalidArgumentError("ocal.kernels: %s: no array argument gives the size: "
                                       "pass size=" % self.name)
        else:
            shape = (size,)
        outs = list(args[nin:])
        if not outs:
            outs = [empty(shape, _npdtype(t, types), ctx) for raw, t, name in self.out_params]
        g = self._gen(ctx, arrays_in + [True] * nout, types)
        vals = [a if isinstance(a, Array) else np.asarray(a, _npdtype(t, types))
                for a, (raw, t, name) in zip(list(args[:nin]) + outs,
                                             self.in_params + self.out_params)]
        n = int(np.prod(shape))
        if n:
            g.run(n, vals)
        return outs[0] if nout == 1 else tuple(outs)


def _inputs(params, args, types):
    """The OpenCL parameter list of a reduction's or scan's inputs, and the names of the
    array parameters that the expressions use without [i]."""
    decl, names = [], []
    for (raw, t, name), a in zip(params, args):
        if isinstance(a, Array):
            decl.append("const %s *%s" % (_cltype(t, types), name))
            if not raw:
                names.append(name)
        else:
            decl.append("%s %s" % (_cltype(t, types), name))
    return decl, names


def _one_shape(name, params, args):
    """The shape of the array arguments that the expressions index with i (all but raw
    ones), which must agree: the kernels read element i of each."""
    shapes = {a.shape for (raw, t, n), a in zip(params, args) if isinstance(a, Array) and not raw}
    if len(shapes) > 1:
        raise ShapeMismatchError("ocal.kernels: %s: the array arguments have shapes %s; they "
                                 "must have one shape (ocal's generated kernels do not "
                                 "broadcast)" % (name, sorted(shapes)))


def _check_axis(name, axis, ndim):
    """axis as a non-negative index, refused (as ocal's reductions do) when out of range."""
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        raise InvalidArgumentError("ocal.kernels: %s(..., axis=%r): axis is out of bounds for "
                                   "an array of %d dimensions: pass an integer from %d to %d, "
                                   "or None" % (name, axis, ndim, -ndim, ndim - 1))
    return int(axis) % ndim


def _index_names(expr, names):
    """"x * y" -> "x[i] * y[i]" for the array parameters' names."""
    for name in names:
        expr = re.sub(r"\b%s\b(?!\s*\[)" % re.escape(name), "%s[i]" % name, expr)
    return expr


class ReductionKernel:
    """ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
    name): kernel(*in, axis=None, keepdims=False); reduce_expr combines a and b, the reduced
    value is `a` in post_map_expr (CuPy's conventions)."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr,
                 identity, name="reduce_kernel", preamble=""):
        self.in_params, self.out_params = _params(in_params), _params(out_params)
        if len(self.out_params) != 1:
            raise InvalidArgumentError("ocal.kernels: a reduction has one output")
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity, self.name, self.preamble = str(identity), name, preamble
        self._gens = {}

    def __call__(self, *args, axis=None, keepdims=False):
        types = {}
        _bind(self.in_params, args, types)
        arrays = [a for a in args if isinstance(a, Array)]
        if not arrays:
            raise InvalidArgumentError("ocal.kernels: a reduction needs an array argument")
        if len(args) != len(self.in_params):
            raise InvalidArgumentError("ocal.kernels: %s takes %d inputs, %d given"
                                       % (self.name, len(self.in_params), len(args)))
        _one_shape(self.name, self.in_params, args)
        x0, ctx = arrays[0], arrays[0].context
        out_raw, out_t, out_name = self.out_params[0]
        if out_t not in types and len(out_t) == 1:
            raise InvalidArgumentError("ocal.kernels: the output type %s is unbound" % out_t)
        odt = _npdtype(out_t, types)
        key = (id(ctx), tuple(isinstance(a, Array) for a in args), str(odt),
               tuple(sorted((k, str(v)) for k, v in types.items())))
        g = self._gens.get(key)
        if g is None:
            decl, names = _inputs(self.in_params, args, types)
            g = Gen.reduction(ctx, odt, self.identity, self.reduce_expr,
                              _index_names(self.map_expr, names), ", ".join(decl),
                              _typedefs(types, self.preamble))
            self._gens[key] = g
        vals = [a if isinstance(a, Array) else np.asarray(a, _npdtype(t, types))
                for a, (raw, t, name) in zip(args, self.in_params)]
        if axis is None:
            out = empty((), odt, ctx)
            g.run(x0.size, vals, out)
            kshape = (1,) * x0.ndim
        else:
            ax = _check_axis(self.name, axis, x0.ndim)
            out = empty(x0.shape[:ax] + x0.shape[ax + 1:], odt, ctx)
            g.run(0, vals, out, axis=ax)
            kshape = x0.shape[:ax] + (1,) + x0.shape[ax + 1:]
        post = self.post_map_expr.replace(" ", "")
        if post and post != "%s=a" % out_name:
            post_k = ElementwiseKernel("%s a" % _NP.get(_CL.get(odt.name), odt.name),
                                       "%s %s" % (odt.name, out_name), self.post_map_expr,
                                       self.name + "_post", self.preamble)
            out = post_k(out)
        return out.reshape(kshape) if keepdims else out


class ScanKernel:
    """ScanKernel(dtype, scan_expr, neutral, input_expr='x', in_params='T x', exclusive=False):
    kernel(*in) gives the prefix scan of input_expr over the flattened input, combining with
    scan_expr of a and b (PyOpenCL's GenericScanKernel in CuPy's parameter style)."""

    def __init__(self, dtype, scan_expr, neutral, input_expr="x", in_params="T x",
                 exclusive=False, name="scan_kernel", preamble=""):
        self.dtype = np.dtype(dtype)
        self.scan_expr, self.neutral, self.input_expr = scan_expr, str(neutral), input_expr
        self.in_params, self.exclusive = _params(in_params), exclusive
        self.name, self.preamble = name, preamble
        self._gens = {}

    def __call__(self, *args, axis=None):
        types = {}
        _bind(self.in_params, args, types)
        arrays = [a for a in args if isinstance(a, Array)]
        if not arrays:
            raise InvalidArgumentError("ocal.kernels: %s: a scan needs an array argument"
                                       % self.name)
        if len(args) != len(self.in_params):
            raise InvalidArgumentError("ocal.kernels: %s takes %d inputs, %d given"
                                       % (self.name, len(self.in_params), len(args)))
        _one_shape(self.name, self.in_params, args)
        x0, ctx = arrays[0], arrays[0].context
        key = (id(ctx), tuple(sorted((k, str(v)) for k, v in types.items())))
        g = self._gens.get(key)
        if g is None:
            decl, names = _inputs(self.in_params, args, types)
            g = Gen.scan(ctx, self.dtype, self.neutral, self.scan_expr,
                         _index_names(self.input_expr, names), ", ".join(decl),
                         _typedefs(types, self.preamble), self.exclusive)
            self._gens[key] = g
        vals = [a if isinstance(a, Array) else np.asarray(a, _npdtype(t, types))
                for a, (raw, t, name) in zip(args, self.in_params)]
        if axis is None:
            out = empty((x0.size,), self.dtype, ctx)
            if x0.size:
                g.run(x0.size, vals, out)
        else:
            ax = _check_axis(self.name, axis, x0.ndim)
            out = empty(x0.shape, self.dtype, ctx)
            if x0.size:
                g.run(0, vals, out, axis=ax)
        return out


__all__ = ["LocalMemory", "RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel", "ScanKernel"]
