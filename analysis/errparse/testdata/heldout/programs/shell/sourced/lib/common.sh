# shellcheck shell=bash
setup_dirs() {
  frobnicate "$1"
}
