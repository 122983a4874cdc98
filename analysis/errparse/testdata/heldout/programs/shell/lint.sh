#!/bin/bash
read name
echo "cleaning logs for $name"
cd /var/log/app
rm -f ./*.log
