#!/bin/sh
count=$(ls | wc -l)
if [ "$count" -gt 100 ]; then
  echo "too many files"
fi
if [ "$count" == 0 ]; then
  echo "empty"
fi
