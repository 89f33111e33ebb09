#!/usr/bin/python3
"""Draws an AQUILA_TRACE timeline (Trace Event JSON) as a PNG.

Usage: render-trace.py TRACE.json OUT.png [--title TEXT]

One row per track of the trace (builds, each command queue, the commands
waiting on it, each compute unit, the waiting threads that helped), in the
trace's own order; one bar per span, coloured by name (kernel or command).
Spans that overlap on a track (its lanes in the trace) share its row, pale,
so that the row is darker where more of them overlap.
Perfetto (ui.perfetto.dev) or chrome://tracing open the same file
interactively; this is for a picture in a document.
"""
import argparse
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    with open(args.trace) as f:
        data = json.load(f)
    events = data["traceEvents"]
    names, order = {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        if e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        elif e["name"] == "thread_sort_index":
            order[e["tid"]] = e["args"]["sort_index"]
    spans = [e for e in events if e.get("ph") == "X"]
    if not spans:
        sys.exit("render-trace: no spans in " + args.trace)
    start = min(e["ts"] for e in spans)
    # The lanes of a row ("queue 1 waiting (2)", ...) are drawn as one row:
    # a queue's waiting commands overlap there, darker where more wait.
    def row_name(tid):
        return re.sub(r" \(\d+\)$", "", names.get(tid, str(tid)))
    first_tid = {}
    for t in sorted({e["tid"] for e in spans}, key=lambda t: order.get(t, t)):
        first_tid.setdefault(row_name(t), t)
    rows = sorted(first_tid.values(), key=lambda t: order.get(t, t))
    row_index = {row_name(t): i for i, t in enumerate(rows)}
    row_of = {e["tid"]: row_index[row_name(e["tid"])] for e in spans}
    labels = sorted({e["name"] for e in spans})
    cmap = plt.get_cmap("tab20")
    colour = {n: cmap(i % 20) for i, n in enumerate(labels)}

    fig, ax = plt.subplots(figsize=(12, 0.32 * len(rows) + 1.8))
    for e in spans:
        y = row_of[e["tid"]]
        waiting = e.get("cat") == "command waiting"
        ax.broken_barh([((e["ts"] - start) / 1000.0, max(e["dur"] / 1000.0, 1e-4))],
                       (y - 0.4, 0.8), facecolors=colour[e["name"]],
                       alpha=0.2 if waiting else 1.0, edgecolor="none")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([names.get(t, str(t)) for t in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time since the first span (ms)")
    ax.grid(axis="x", alpha=0.3)
    if args.title:
        ax.set_title(args.title, fontsize=10)
    shown = labels[:20]
    ax.legend(handles=[Patch(color=colour[n], label=n) for n in shown], fontsize=7,
              loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print("render-trace: %d spans on %d rows -> %s" % (len(spans), len(rows), args.png))


if __name__ == "__main__":
    main()
