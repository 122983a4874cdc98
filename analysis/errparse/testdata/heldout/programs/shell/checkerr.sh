#!/bin/bash
files=$(ls *.txt)
for f in $files; do
  echo "$f"
done
echo "tenth argument: $10"
