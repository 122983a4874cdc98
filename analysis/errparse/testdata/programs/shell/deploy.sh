#!/bin/bash
target=$1
echo "Deploying to $target"
deploy_to "$target"
cp build/* $target
