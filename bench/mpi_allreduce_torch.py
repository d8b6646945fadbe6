#!/usr/bin/env python3
"""The upper reference for bench/mpi_allreduce: torch.distributed.all_reduce over NCCL on the
same GPUs, one process per GPU, f32 tensors of 1 MiB to 1 GiB, in the same JSON format
(algorithm bandwidth: bytes over the slowest rank's median time).

    torchrun --nproc_per_node 2 bench/mpi_allreduce_torch.py [--quick] [--max-mib N]

Needs at least two GPUs (NCCL refuses two ranks on one GPU); with fewer it says so and exits 0.
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--max-mib", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if torch.cuda.device_count() < world or world < 2:
        print(json.dumps({"bench": "mpi_allreduce_torch", "skipped":
                          f"{torch.cuda.device_count()} GPUs for {world} ranks"}))
        return
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    max_mib = 4 if a.quick else a.max_mib
    mib = 1
    while mib <= max_mib:
        n = (mib << 20) // 4
        x = torch.empty(n, dtype=torch.float32, device="cuda")
        times = []
        for r in range(-1, a.repeat):
            x.fill_(rank + 1)
            torch.cuda.synchronize()
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(x)
            torch.cuda.synchronize()
            dt = torch.tensor([time.perf_counter() - t0], device="cuda")
            dist.all_reduce(dt, op=dist.ReduceOp.MAX)
            if r >= 0:
                times.append(dt.item())
        want = world * (world + 1) / 2
        ok = bool((x == want).all().item())
        t = statistics.median(times)
        if rank == 0:
            print(json.dumps({"bench": "mpi_allreduce_torch", "device": torch.cuda.get_device_name(),
                              "ranks": world, "bytes": mib << 20,
                              "nccl_gbps": round((mib << 20) / t * 1e-9, 3), "ok": ok}), flush=True)
        mib *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
