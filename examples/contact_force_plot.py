#!/usr/bin/env python3
"""Plot one recovered impact: contact force against time and against penetration.

The contact forces of a run are rebuilt from its impulses by `saltus forces`, which writes the
group /contact_forces into the results file (docs/hdf5-layout.md). This script reads that group
with h5py and draws, for one impact, the force history F(t) and the force-penetration loop
F(delta).

    saltus run models/bouncing_ball.toml
    saltus forces models/bouncing_ball.h5 --young 6.043e8 --poisson 0.3
    python3 examples/contact_force_plot.py models/bouncing_ball.h5 [--impact 0] [-o pulse.png]

The same for the two impacts of the crank-slider hit by a block (models/crank_block.toml, add
`--contact slider_block` to `saltus forces`, then `--impact 0` or `--impact 1` here).

Needs h5py and matplotlib (Debian: python3-h5py python3-matplotlib).
"""

import argparse
import sys

import h5py
import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", help="HDF5 results file with /contact_forces")
    ap.add_argument("--impact", type=int, default=0, help="index of the impact (default 0)")
    ap.add_argument("-o", "--output", default="contact_force.png", help="image file to write")
    args = ap.parse_args()

    with h5py.File(args.results, "r") as f:
        if "contact_forces" not in f:
            sys.exit(f"{args.results}: no /contact_forces; run `saltus forces {args.results} ...` first")
        g = f["contact_forces/impacts"]
        k = g["time"].shape[0]
        if not 0 <= args.impact < k:
            sys.exit(f"{args.results}: impact {args.impact} out of range (the file has {k})")
        i = args.impact
        # The contact's element name: /elements/<name> carries the handle as its `id`.
        contact = int(g["contact"][i])
        names = {int(e.attrs["id"]): e.attrs["name"] for e in f.get("elements", {}).values()}
        name = names.get(contact, f"contact {contact}")
        t = g["t"][i] * 1e3  # ms since the start of the pulse
        force = g["force"][i]
        pen = g["penetration"][i] * 1e3  # mm
        title = (
            f"{name}: impact {i} at t = {g['time'][i]:.4f} s: "
            f"T = {g['duration'][i] * 1e3:.3f} ms, F_max = {g['peak_force'][i]:.4g} N "
            f"({f['contact_forces'].attrs['damping']}, {f['contact_forces'].attrs['method']})"
        )

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    a.plot(t, force)
    a.set_xlabel("time since impact start [ms]")
    a.set_ylabel("contact force [N]")
    b.plot(pen, force)
    b.set_xlabel("penetration [mm]")
    b.set_ylabel("contact force [N]")
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
