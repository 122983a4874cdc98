#!/bin/sh
set -e
echo "building"
compile_all
echo "built"
