#!/usr/bin/env python3
"""Turns run.sh's samples into a markdown table of medians (with min–max) and qail/sqlx ratios.

Sample lines: `<mode> <crate> <rustc wall s> <user s> <sys s> <max RSS KiB> <cargo wall s>`.
Usage: summarize.py SAMPLES [--machine TEXT]
"""

import statistics
import sys
from collections import defaultdict

GOAL = {"check": 0.5, "edit": 0.5, "build": 0.4}
CRATES = ("qail100", "sqlx100")
MODE = {"check": "check", "edit": "check (edit loop)", "build": "build"}
LABEL = {"qail100": "qail! ×100", "sqlx100": "sqlx::query! ×100 (offline)"}


def load(path):
    data = defaultdict(lambda: defaultdict(list))
    for line in open(path):
        parts = line.split()
        if len(parts) != 7:
            continue
        mode, crate = parts[0], parts[1]
        wall, user, sys_, rss, cargo = map(float, parts[2:])
        data[(mode, crate)]["wall"].append(wall)
        data[(mode, crate)]["cpu"].append(user + sys_)
        data[(mode, crate)]["rss"].append(rss / 1024)
        data[(mode, crate)]["cargo"].append(cargo)
    return data


def cell(values, digits):
    med = statistics.median(values)
    return f"{med:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: summarize.py SAMPLES [--machine TEXT]")
    data = load(sys.argv[1])
    machine = sys.argv[sys.argv.index("--machine") + 1] if "--machine" in sys.argv else ""
    modes = sorted({mode for mode, _ in data}, key=lambda m: ("check", "edit", "build").index(m))
    keys = [("wall", 2), ("cpu", 2), ("rss", 0), ("cargo", 2)]
    print("| cargo | crate | rustc wall s | rustc CPU s | rustc peak RSS MiB | cargo wall s |")
    print("|---|---|---|---|---|---|")
    verdicts = []
    for mode in modes:
        for crate in CRATES:
            s = data.get((mode, crate))
            if not s:
                continue
            cells = " | ".join(cell(s[k], d) for k, d in keys)
            print(f"| {MODE[mode]} | {LABEL[crate]} | {cells} |")
        q, x = data.get((mode, "qail100")), data.get((mode, "sqlx100"))
        if q and x:
            ratios = [statistics.median(q[k]) / statistics.median(x[k]) for k, _ in keys]
            print(f"| {MODE[mode]} | **qail / sqlx** | " + " | ".join(f"**{r:.2f}×**" for r in ratios) + " |")
            goal = GOAL[mode]
            met = "met" if ratios[1] <= goal else "missed"
            verdicts.append(f"{MODE[mode]}: qail takes {ratios[1]:.2f}× sqlx's CPU time "
                            f"({ratios[0]:.2f}× its wall time) — goal ≤ {goal}× CPU: {met}")
    rounds = min((len(s["wall"]) for s in data.values()), default=0)
    print()
    print(f"Medians of {rounds} interleaved rounds, (min–max) in brackets. {machine}")
    print()
    for v in verdicts:
        print(f"- {v}")


if __name__ == "__main__":
    main()
