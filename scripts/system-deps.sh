#!/usr/bin/env bash
# System packages for what no Python package provides; safe to run again, and optional:
#   - chromium: the report browser test (skipped with a reason without it);
#   - libfribidi0: Pillow's wheels bundle libraqm and HarfBuzz but load FriBiDi from the system
#     at run time (PIL.features.check('raqm') is False without it); most Debian systems have it.
# Fonts are NOT here: they install with maptab itself (manimgx-fonts, noto-cjk-sans-otc).
set -euo pipefail
missing=""
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
  missing="$missing chromium"
ldconfig -p 2>/dev/null | grep -q 'libfribidi\.so\.0' || missing="$missing libfribidi0"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "system-deps: missing$missing (optional; run as root on Debian to install)" >&2
  fi
fi
