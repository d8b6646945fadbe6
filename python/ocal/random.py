"""ocal.random: Philox-4x32-10 random numbers on the device (ocal_random_uniform,
ocal_random_normal); the same seed gives the same numbers on every device."""
import numpy as np

from ocal._core import empty, random_fill


class Generator:
    """numpy.random.Generator's names over ocal's counter-based stream: each draw takes the
    next `size` numbers of the stream (seed, offset)."""

    def __init__(self, seed=0):
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self.offset = 0

    def _draw(self, size, dtype, kind, p, q, ctx):
        out = empty(() if size is None else size, dtype, ctx)
        random_fill(out, self.seed, self.offset, kind, p, q)
        self.offset += out.size + (out.size & 1)  # Box-Muller uses the numbers in pairs
        return out

    def random(self, size=None, dtype=np.float32, ctx=None):
        return self._draw(size, dtype, "uniform", 0.0, 1.0, ctx)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float32, ctx=None):
        return self._draw(size, dtype, "uniform", low, high, ctx)

    def standard_normal(self, size=None, dtype=np.float32, ctx=None):
        return self._draw(size, dtype, "normal", 0.0, 1.0, ctx)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float32, ctx=None):
        return self._draw(size, dtype, "normal", loc, scale, ctx)


def default_rng(seed=0):
    return Generator(seed)


_global = Generator(0)


def seed(s):
    global _global
    _global = Generator(s)


def rand(*shape):
    return _global.random(shape)


def randn(*shape):
    return _global.standard_normal(shape)


def uniform(low=0.0, high=1.0, size=None, dtype=np.float32):
    return _global.uniform(low, high, size, dtype)


def normal(loc=0.0, scale=1.0, size=None, dtype=np.float32):
    return _global.normal(loc, scale, size, dtype)
