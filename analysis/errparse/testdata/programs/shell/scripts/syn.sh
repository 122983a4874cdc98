#!/bin/bash
if [ -n "$1" ]; then
  echo "cleaning $1"
fi fi
echo done
