#!/usr/bin/env bash
# System packages the project needs (fonts for every script the renderer uses; Chromium for the
# report browser test). Installed from Debian's registry; safe to run again.
set -euo pipefail
PKGS="fonts-noto-core fonts-noto-cjk fonts-dejavu-core libfribidi0 chromium"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "system-deps: missing$missing (run as root to install)" >&2
  fi
fi
