# SPDX-License-Identifier: GPL-2.0-only
"""Benchmark workload: a real interpreter's heap (run with PYTHONHASHSEED=0)."""
import json
import sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
total = 0
for r in range(rounds):
    table = {f"key-{r}-{i}": [i] * (i % 50) for i in range(2000)}
    text = json.dumps(table)
    back = json.loads(text)
    words = sorted(text.split(","), key=len)
    total += len(back) + len(words) + len("".join(words[:500]))
print(total)
