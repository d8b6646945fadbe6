#!/usr/bin/env python3
"""PyTorch peer of examples/mlp_train --bench-steps: the time of one SGD step of the same
network, 784 -> 512 (ReLU) -> 10 with softmax cross-entropy (mean over the batch), plain SGD,
FP32 with TF32 off (--tf32: on, the peer of mlp_train under OCAL_GEMM_PRECISION=tf32), on
random data at the same batch size.

The step is forward, loss, backward and the parameter update, as an eager PyTorch training
loop writes it; timed with torch.cuda.synchronize() around many steps queued back to back
(as mlp_train times its steps between two ocal_context_finish calls). Prints one JSON line.

    python3 bench/mlp_torch.py [--batch 256] [--steps 1000] [--hidden 512] [--tf32]
"""
import argparse
import json
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--tf32", action="store_true", help="matmuls in TF32 (allow_tf32)")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    torch.manual_seed(1)
    dev = torch.device("cuda")

    model = torch.nn.Sequential(
        torch.nn.Linear(784, a.hidden), torch.nn.ReLU(), torch.nn.Linear(a.hidden, 10)
    ).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(a.batch, 784, device=dev)
    y = torch.randint(0, 10, (a.batch,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(20):  # warm-up: cuBLAS handles, kernel selection, caching allocator
        step()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / a.steps)
    print(
        json.dumps(
            dict(
                bench="mlp_step",
                impl="torch",
                device=torch.cuda.get_device_name(0),
                dtype="f32",
                tf32=a.tf32,
                batch=a.batch,
                hidden=a.hidden,
                steps=a.steps,
                us_per_step=round(best * 1e6, 1),
                torch=torch.__version__,
            )
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
