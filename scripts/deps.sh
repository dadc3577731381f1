#!/usr/bin/env bash
# Install the system libraries Saltus links against (Debian/Ubuntu, as root or with sudo):
# libhdf5-dev (HDF5 results, linked by hdf5-metno) and pkg-config (to find it); python3-h5py
# and python3-matplotlib for the Python example (examples/contact_force_plot.py), which the
# tests run; libfontconfig1-dev and fonts-dejavu-core for the text of `saltus plot` images
# (plotters finds fonts through fontconfig).
set -euo pipefail
missing=()
for pkg in libhdf5-dev pkg-config libfontconfig1-dev fonts-dejavu-core python3-h5py python3-matplotlib; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# The packages above are the system Python's; a `python3` first on PATH may be another one
# (pyenv, conda, a venv) that cannot import them.
if ! python3 -c "import h5py, matplotlib" >/dev/null 2>&1; then
  echo "note: $(command -v python3 || echo python3) cannot import h5py and matplotlib (installed" \
    "for /usr/bin/python3): run the Python examples with /usr/bin/python3, or" \
    "pip install h5py matplotlib in that environment" >&2
fi
