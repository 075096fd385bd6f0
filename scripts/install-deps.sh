#!/bin/sh
# Installs the Debian 12 packages rltune needs, only when some are missing (recommends stay out:
# they add hundreds of MB). Needs root, or sudo when available. gnuplot-nox draws `rltune report`; munge,
# slurmctld and slurmd run the real Slurm of the `rltune slurm` test (the advisor itself needs only slurm-client);
# pybind11-dev and python3-dev build the Python module, python3-numpy and python3-pytest run it and its tests,
# python3-torch and python3-matplotlib its examples (examples/python); libopenmpi-dev and openmpi-bin spread
# training and experiments over MPI ranks (mpirun); libxgboost-dev fits learned runtime models (--runtime predicted:learned).
set -eu
PACKAGES="g++ make cmake pkg-config libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libyaml-cpp-dev
libglpk-dev libgtest-dev libgmock-dev libbenchmark-dev libtorch-dev libopenblas0-pthread libeigen3-dev gnuplot-nox
munge slurmctld slurmd slurm-client pybind11-dev python3-dev python3-numpy python3-pytest python3-torch python3-matplotlib
libopenmpi-dev openmpi-bin libxgboost-dev"
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "rltune: installing Debian packages:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
