#!/bin/bash
readonly LIMIT=10
echo "limit $LIMIT"
LIMIT=20
echo "limit $LIMIT"
