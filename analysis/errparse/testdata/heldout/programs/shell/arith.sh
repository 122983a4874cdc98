#!/bin/bash
total=10
count=0
echo "average: $((total / count))"
