#!/bin/bash
set -u
greet() {
  echo "hello $NAME"
}
greet
