#!/usr/bin/env python3
"""Joins the JSON lines of bench/gemm (tuned and untuned runs) and bench/gemm_torch.py into
one Markdown table: GFLOP/s per shape and the ratio to PyTorch.

    python3 bench/gemm_table.py tuned.jsonl untuned.jsonl torch.jsonl
"""
import json
import sys


def load(path):
    rows = [json.loads(l) for l in open(path) if l.startswith("{")]
    info = next((r for r in rows if r.get("bench") == "info"), {})
    return info, rows


def main():
    runs = [load(p) for p in sys.argv[1:]]
    cols, table, blas1 = [], {}, {}
    for info, rows in runs:
        name = info.get("impl", "ocal") + ("" if "tuning" not in info else " (" + info["tuning"] + ")")
        cols.append(name)
        for r in rows:
            if r.get("bench") == "gemm":
                key = (r["shape"], r["m"], r["n"], r["k"], r["ta"] + r["tb"])
                table.setdefault(key, {})[name] = r["gflops"]
            elif r.get("bench") == "blas1":
                blas1.setdefault(r["op"], {})[name] = r["gbps"]
    torch_col = next((c for c in cols if c.startswith("torch")), None)
    print("| shape | m x n x k | op | " + " | ".join(cols) +
          (" | " + " | ".join("%s / torch" % c for c in cols if c != torch_col) if torch_col else "") + " |")
    print("|" + "---|" * (3 + len(cols) + (len(cols) - 1 if torch_col else 0)))
    for key, vals in table.items():
        cells = ["%.0f" % vals[c] if c in vals else "-" for c in cols]
        ratios = []
        if torch_col:
            for c in cols:
                if c == torch_col:
                    continue
                ratios.append("%.2f" % (vals[c] / vals[torch_col]) if c in vals and vals.get(torch_col) else "-")
        print("| %s | %dx%dx%d | %s | %s |" % (key[0], key[1], key[2], key[3], key[4],
                                              " | ".join(cells + ratios)))
    if blas1:
        print("\nGB/s (n = 2^26 f32):\n")
        print("| op | " + " | ".join(cols) + " |")
        print("|" + "---|" * (1 + len(cols)))
        for op, vals in blas1.items():
            print("| %s | %s |" % (op, " | ".join("%.0f" % vals[c] if c in vals else "-" for c in cols)))


if __name__ == "__main__":
    main()
