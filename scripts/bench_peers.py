#!/usr/bin/env python3
"""Saltus against the peer codes of ../shared/bench-peers, side by side in one run.

Runs our benchmark programs (benches/bouncing_ball.rs, benches/cradle.rs, benches/slider_crank.rs,
benches/chain.rs; release build) and the peers' scripts on the same cases, interleaved
(ours, peer, ours, peer, ... with the order alternating between repeats), single thread,
and writes the ratio table into docs/performance.md between the markers
<!-- peers:begin --> and <!-- peers:end -->: min and median µs/step of each code, the ratio of
the medians and of the minima, the physical outputs both print, and the machine load.

usage: scripts/bench_peers.py PEERS_DIR [--repeats 3] [--quick] [--no-write]

PEERS_DIR is a writable copy of ../shared/bench-peers on which setup.sh has run (it holds
.venv/ with Exudyn; Siconos runs on the system python3):

    d=$(mktemp -d) && cp -r ../shared/bench-peers "$d"/ && (cd "$d"/bench-peers && ./setup.sh)
    scripts/bench_peers.py "$d"/bench-peers
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHES = ["bouncing_ball", "cradle", "slider_crank", "chain"]
SICONOS_PY = "/usr/bin/python3"


def executables():
    """Build the benchmark programs and return {name: path} (cargo's JSON messages)."""
    cmd = ["cargo", "bench", "--no-run", "--message-format=json"]
    for b in BENCHES:
        cmd += ["--bench", b]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            name = msg["target"]["name"]
            if name in BENCHES:
                found[name] = msg["executable"]
    missing = [b for b in BENCHES if b not in found]
    if missing:
        sys.exit(f"cargo did not report the benchmark executables {missing}")
    return found


def run_json(cmd, cwd):
    """Run `cmd` and return the last JSON line it prints."""
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError(f"{' '.join(cmd)} printed no JSON line:\n{p.stdout[-2000:]}")
    return json.loads(lines[-1])


def cases(exe, peers, quick):
    """(label, ours command, peer name, peer command, [(output label, our key, peer key)])."""
    venv = os.path.join(peers, ".venv", "bin", "python")
    ball = [("first apex [m] (exact 0.829)", "zmax_after_first_impact", "zmax_after_first_impact")]
    out = [
        ("(a) bouncing ball, h = 5e-3, T = 10 s", [exe["bouncing_ball"], "5e-3", "10"],
         "Siconos", [SICONOS_PY, "siconos/bouncing_ball.py", "5e-3", "10", "-"], ball),
        ("(a) bouncing ball, h = 5e-3, HDF5 every step", [exe["bouncing_ball"], "5e-3", "10", "--hdf5"],
         "Siconos", [SICONOS_PY, "siconos/bouncing_ball.py", "5e-3", "10", "-"], ball),
    ]
    if not quick:
        out.append(("(a) bouncing ball, h = 5e-5, T = 10 s", [exe["bouncing_ball"], "5e-5", "10"],
                    "Siconos", [SICONOS_PY, "siconos/bouncing_ball.py", "5e-5", "10", "-"], ball))
    for n in [5, 50]:
        out.append((f"(b) Newton's cradle N = {n} touching, e = 1, h = 1e-3, T = 1 s",
                    [exe["cradle"], str(n), "0", "1e-3", "1"],
                    "Siconos", [SICONOS_PY, "siconos/cradle.py", str(n), "0", "1e-3", "1", "1", "-"],
                    [("last sphere velocity [m/s] (exact 1)", "v_last", "v_last")]))
    # The same cradle with the contact-space Gauss–Seidel run first (free spheres).
    out.append(("(b) Newton's cradle N = 50 touching, e = 1, h = 1e-3, T = 1 s, Gauss–Seidel first",
                [exe["cradle"], "50", "0", "1e-3", "1", "--gauss-seidel"],
                "Siconos", [SICONOS_PY, "siconos/cradle.py", "50", "0", "1e-3", "1", "1", "-"],
                [("last sphere velocity [m/s] (exact 1)", "v_last", "v_last")]))
    out.append(("(d) flexible slider-crank, 8 beams, h = 1e-4, T = 0.5 s",
                [exe["slider_crank"], "8", "0.5", "1e-4"],
                "Exudyn", [venv, "exudyn/slider_crank.py", "GE", "8", "0.5", "1e-4", "0.05"],
                [("max midpoint deflection [m]", "mid_defl_max_abs", "mid_defl_max_abs"),
                 ("slider x(0.5 s) [m]", "slider_x_final", "slider_x_final")]))
    for n in ([10, 100] if quick else [10, 100, 1000]):
        steps = str(min(200, max(10, 20000 // n)))
        out.append((f"(e) rigid chain N = {n}, h = 1e-3, {steps} steps",
                    [exe["chain"], str(n), "--json"],
                    "Exudyn", [venv, "exudyn/chain.py", str(n), steps],
                    [("last link z [m]", "last_link_z", "z_last_final")]))
    return out


def fmt(x):
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peers", help="set-up copy of ../shared/bench-peers")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="skip the longest cases")
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    args = ap.parse_args()
    peers = os.path.abspath(args.peers)
    exe = executables()
    todo = cases(exe, peers, args.quick)
    ours = {c[0]: [] for c in todo}
    theirs = {c[0]: [] for c in todo}
    last = {}
    loads = []
    for rep in range(args.repeats):
        for label, our_cmd, _, peer_cmd, _ in todo:
            loads.append(os.getloadavg()[0])
            pair = [("ours", our_cmd, ROOT), ("peer", peer_cmd, peers)]
            if rep % 2:
                pair.reverse()
            for who, cmd, cwd in pair:
                r = run_json(cmd, cwd)
                (ours if who == "ours" else theirs)[label].append(r["us_per_step"])
                last[(who, label)] = r
            print(f"repeat {rep + 1}: {label}: ours {ours[label][-1]:.2f}, "
                  f"peer {theirs[label][-1]:.2f} µs/step", file=sys.stderr)

    rows = ["| case | Saltus µs/step (min / median) | peer | peer µs/step (min / median) "
            "| ratio of medians | ratio of minima | outputs (Saltus / peer) |",
            "|---|---|---|---|---|---|---|"]
    for label, _, peer_name, _, outputs in todo:
        a, b = ours[label], theirs[label]
        o = "; ".join(f"{name} {fmt(last[('ours', label)].get(k1))} / {fmt(last[('peer', label)].get(k2))}"
                      for name, k1, k2 in outputs)
        rows.append(f"| {label} | {min(a):.2f} / {statistics.median(a):.2f} | {peer_name} | "
                    f"{min(b):.2f} / {statistics.median(b):.2f} | "
                    f"{statistics.median(a) / statistics.median(b):.2f} | {min(a) / min(b):.2f} | {o} |")
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.+)", f.read())
            cpu = m.group(1).strip() if m else ""
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    head = (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit `{commit}` by "
            f"`scripts/bench_peers.py` ({args.repeats} interleaved repeats, single thread; "
            f"{os.cpu_count()} cores, {cpu or platform.machine()}; 1-minute load average "
            f"{min(loads):.2f}–{max(loads):.2f} during the run). The HDF5 row writes every step "
            f"to a file (ratio against the peer's stepping, which stores to memory).")
    table = head + "\n\n" + "\n".join(rows) + "\n"
    print(table)
    if args.no_write:
        return
    path = os.path.join(ROOT, "docs", "performance.md")
    with open(path) as f:
        text = f.read()
    begin, end = "<!-- peers:begin -->", "<!-- peers:end -->"
    if begin in text and end in text:
        i, j = text.index(begin) + len(begin), text.index(end)
        text = text[:i] + "\n" + table + text[j:]
    else:
        text = text.rstrip() + f"\n\n## Ratio table (generated)\n\n{begin}\n{table}{end}\n"
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
