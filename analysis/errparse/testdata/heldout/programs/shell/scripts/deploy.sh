#!/usr/bin/env bash
set -e
release_dir=/srv/releases/current
echo "deploying"
cd "$release_dir"
echo "done"
