#!/usr/bin/env bash
# System packages some tests need beyond Python and npm: Chromium, which
# tests/report/test_html_chromium.py uses to render the HTML report headless and screenshot it.
# Installs only what is missing, only with apt-get, quietly and non-interactively. It never fails
# the build: without Chromium that test skips and says why.
set -u

have_chromium() {
  command -v chromium || command -v chromium-browser || command -v google-chrome || [ -x /usr/bin/chromium ]
} >/dev/null 2>&1

if have_chromium; then
  echo "chromium present"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "apt-get not available; chromium not installed (the HTML screenshot test will skip)"
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
  SUDO="sudo -n"
else
  echo "not root and no password-less sudo; chromium not installed (the HTML screenshot test will skip)"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp "${TMPDIR:-/tmp}/mcp-assay-apt.XXXXXX")
install() { $SUDO apt-get install -y -q -o Dpkg::Use-Pty=0 chromium >>"$log" 2>&1; }
# A fresh image often has empty package lists: update once, only if the first attempt fails.
if install || { $SUDO apt-get update -q >>"$log" 2>&1 && install; }; then
  echo "chromium installed"
  rm -f "$log"
else
  echo "could not install chromium with apt-get (log: $log); the HTML screenshot test will skip"
fi
exit 0
