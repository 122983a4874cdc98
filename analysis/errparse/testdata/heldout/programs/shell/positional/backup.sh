#!/usr/bin/env bash
set -euo pipefail
source ./lib.sh

backup_dir
