#!/bin/bash
. "$(dirname "$0")/lib/common.sh"
setup_dirs /tmp/x
