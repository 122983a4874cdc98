#!/bin/bash
version="1.4.2"
major=${version%%.*}
echo "major $major"
tag=${version//./-}
echo "release ${$version} tagged $tag"
