#!/usr/bin/env python3
"""Plot a node's position and the model's energy against time from a Saltus results file.

    saltus run models/slider_crank.toml -o crank.h5
    python3 examples/post/node_history.py crank.h5 slider -o slider.png

Reads the layout of docs/hdf5-layout.md with h5py: /time, /nodes/names, /nodes/position and
/energy/*. Prints the node's final position (m) and the largest change of the total energy (J)
on standard output. Needs h5py and matplotlib (Debian: python3-h5py python3-matplotlib).
"""

import argparse
import sys

import h5py
import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", help="HDF5 results file written by saltus run")
    ap.add_argument("node", help="node name (see /nodes/names)")
    ap.add_argument("-o", "--output", default="node_history.png", help="image file to write")
    args = ap.parse_args()

    with h5py.File(args.results, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["nodes/names"][:]]
        if args.node not in names:
            sys.exit(f"{args.results}: no node `{args.node}` (nodes: {', '.join(names)})")
        k = names.index(args.node)
        t = f["time"][:]
        x = f["nodes/position"][:, k, :]  # (records, 3) in m
        total = f["energy/total"][:]

    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    for c, label in enumerate("xyz"):
        ax1.plot(t, x[:, c], label=label)
    ax1.set_ylabel(f"{args.node} position [m]")
    ax1.legend()
    ax2.plot(t, total - total[0])
    ax2.set_ylabel("total energy − E(0) [J]")
    ax2.set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(args.output, dpi=100)
    print(f"final position {x[-1, 0]:.9f} {x[-1, 1]:.9f} {x[-1, 2]:.9f}")
    print(f"largest change of the total energy {abs(total - total[0]).max():.6e}")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
