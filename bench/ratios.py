#!/usr/bin/env python3
"""Paired ratios of interleaved benchmark rounds, with 95% intervals.

Reads RESULTS, one measurement a line: `ROUND LABEL VALUE` (whitespace
separated; lines starting with # are skipped). For each NUM/DEN pair of
labels given, prints the medians of both, and the geometric mean of the
rounds' ratios NUM/DEN with its 95% Student t interval on the log scale
(paired by round: a load that drifts between rounds hits both sides of a
round alike). A ratio whose interval excludes 1 is a difference, not noise.

    python3 bench/ratios.py results.txt storlab/loop before/loop
"""
import math
import statistics
import sys
from collections import defaultdict

from scipy.stats import t as student_t


def read(path):
    rounds = defaultdict(dict)
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        r, label, value = line.split()[:3]
        rounds[r][label] = float(value)
    return rounds


def ratio(rounds, num, den):
    """(geometric mean, low, high, n) of num/den over the rounds with both."""
    logs = [
        math.log(x[num] / x[den])
        for x in rounds.values()
        if num in x and den in x and x[num] > 0 and x[den] > 0
    ]
    n = len(logs)
    if n == 0:
        return None
    mean = statistics.mean(logs)
    if n < 2:
        return math.exp(mean), float("nan"), float("nan"), n
    half = student_t.ppf(0.975, n - 1) * statistics.stdev(logs) / math.sqrt(n)
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half), n


def main():
    path, pairs = sys.argv[1], sys.argv[2:]
    rounds = read(path)
    for pair in pairs:
        num, den = pair.split("/")
        med = {
            k: statistics.median([x[k] for x in rounds.values() if k in x] or [float("nan")])
            for k in (num, den)
        }
        r = ratio(rounds, num, den)
        if r is None:
            print(f"{num}/{den}: no round has both")
            continue
        g, lo, hi, n = r
        print(
            f"{num}/{den} = {g:.3f} [{lo:.3f}, {hi:.3f}] (95%, {n} rounds); "
            f"medians {num} {med[num]:.4g}, {den} {med[den]:.4g}"
        )


if __name__ == "__main__":
    main()
