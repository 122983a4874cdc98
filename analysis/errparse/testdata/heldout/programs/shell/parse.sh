#!/bin/bash
if [ -n "$1" ]; then
  echo "arg"
echo "no fi"
