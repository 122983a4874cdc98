# shellcheck shell=bash
backup_dir() {
  local target=$1
  echo "backing up $target"
}
