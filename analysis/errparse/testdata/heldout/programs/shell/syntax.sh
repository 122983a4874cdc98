#!/bin/bash
for f in "$@"; do
  if [ -f "$f" ]; then
    echo "found $f"
  fi
fi
echo done
