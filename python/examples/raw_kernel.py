#!/usr/bin/env python3
"""A kernel from OpenCL C source (CuPy's RawKernel, PyCUDA's SourceModule): a Mandelbrot
escape-time image computed on the device, checked against NumPy on the host.

    python3 python/examples/raw_kernel.py [width=256]
"""
import sys

import numpy as np

import ocal

SOURCE = r"""
__kernel void mandelbrot(__global uchar *out, uint width, uint height, uint max_iter) {
  uint x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  float cr = -2.0f + 3.0f * x / width, ci = -1.5f + 3.0f * y / height;
  float zr = 0.0f, zi = 0.0f;
  uint n = 0;
  while (n < max_iter && zr * zr + zi * zi <= 4.0f) {
    float t = zr * zr - zi * zi + cr;
    zi = 2.0f * zr * zi + ci;
    zr = t;
    n++;
  }
  out[y * width + x] = (uchar)n;
}
"""


def host(width, height, max_iter):
    x = -2.0 + 3.0 * np.arange(width, dtype=np.float32) / width
    y = -1.5 + 3.0 * np.arange(height, dtype=np.float32) / height
    c = x[None, :] + 1j * y[:, None]
    z = np.zeros_like(c)
    n = np.zeros(c.shape, np.uint8)
    for _ in range(max_iter):
        alive = np.abs(z) <= 2
        z[alive] = z[alive] ** 2 + c[alive]
        n[alive] += 1
    return n


def main():
    width = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    height, max_iter = width, 50
    kernel = ocal.kernels.RawKernel(SOURCE, "mandelbrot")
    image = ocal.empty((height, width), np.uint8)
    # CuPy's convention: grid (work-groups) and block (work-items per group).
    kernel(((width + 15) // 16, (height + 15) // 16), (16, 16),
           (image, np.uint32(width), np.uint32(height), np.uint32(max_iter)))
    got, want = image.get(), host(width, height, max_iter)
    agree = np.mean(np.abs(got.astype(int) - want.astype(int)) <= 1)
    print("%dx%d image, %.4f of the pixels agree with NumPy's (rounding at the set's edge)"
          % (width, height, agree))
    for row in got[:: height // 16, :: width // 48]:
        print("".join(" .:-=+*#%@"[min(v // 5, 9)] for v in row))
    return 0 if agree > 0.99 else 1


if __name__ == "__main__":
    sys.exit(main())
