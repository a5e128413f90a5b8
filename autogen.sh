#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Generates ./configure from configure.ac (needs autoconf, automake, libtool, pkg-config).
set -e
cd "$(dirname "$0")"
mkdir -p m4
autoreconf --install --force
