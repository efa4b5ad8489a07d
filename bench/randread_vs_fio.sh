#!/usr/bin/env bash
# 4 KiB random read, psync, one job, a 1 GiB file on tmpfs: fio against
# storlab, alternating five times; prints both medians and storlab/fio.
# Kept for its name: it is the randread-psync pair of engine_vs_fio.sh.
#   bash bench/randread_vs_fio.sh [ROUNDS] [RUNTIME_S]
set -euo pipefail
exec bash "$(dirname "$0")/engine_vs_fio.sh" "${1:-5}" "${2:-10}" randread-psync
