import os

import numpy as np
import pytest
from hypothesis import settings

import ocal

# Few examples per property: the suite runs in `make check` on two cores.
settings.register_profile("ocal", max_examples=int(os.environ.get("OCAL_HYPOTHESIS_EXAMPLES", "15")),
                          deadline=None)
settings.load_profile("ocal")


@pytest.fixture(scope="session")
def ctx():
    return ocal.get_context()


def assert_close(got, want, dtype=None):
    """Compares a device result with NumPy's: exact for integers and bools, to a few ulps
    of the type for floats."""
    got = got.get() if isinstance(got, ocal.Array) else got
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        bits = np.finfo(got.dtype).bits if got.dtype.kind in "fc" else 16
        tol = {16: 1e-2, 32: 2e-5, 64: 1e-12}[bits]
        wide = np.complex128 if got.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(got.astype(wide), want.astype(wide), rtol=tol, atol=tol)
