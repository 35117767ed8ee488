#!/usr/bin/env bash
# Provisions the Debian trixie root the project builds and tests in.
#
# Idempotent and safe to interrupt: debootstrap writes into a temporary folder
# that is renamed into place only when complete, and package-list changes are
# applied by apt inside the finished root (dpkg recovers from an interrupted
# run on the next call). A lock keeps two concurrent runs apart.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${TORCHLIGHT_TOOLCHAIN_DIR:-/var/cache/torchlight/trixie-root}"
packages_file="$here/packages.txt"
stamp="$root/.torchlight-packages"

log() { echo "[toolchain] $*" >&2; }

wanted_packages() { grep -v '^\s*#' "$packages_file" | grep -v '^\s*$' | sort -u; }

mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9

if [ -f "$stamp" ] && diff -q <(wanted_packages) "$stamp" >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  log "error: provisioning the toolchain root needs root (debootstrap, chroot)"
  exit 1
fi

if [ ! -x "$root/usr/bin/apt-get" ]; then
  if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap on the host"
    apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null
  fi
  tmp="$root.partial"
  rm -rf "$tmp"
  log "debootstrap trixie into $tmp (a few minutes)"
  start=$(date +%s)
  # A private mount namespace keeps debootstrap's /proc mount from leaking.
  unshare --mount --propagation private \
    debootstrap --variant=minbase --include="$(wanted_packages | paste -sd, -)" \
    trixie "$tmp" >"$root.debootstrap.log" 2>&1 || {
      log "error: debootstrap failed; see $root.debootstrap.log"; tail -n 20 "$root.debootstrap.log" >&2; exit 1; }
  rm -rf "$root"
  mv "$tmp" "$root"
  log "root ready in $(( $(date +%s) - start ))s"
else
  log "installing changed packages into $root"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  unshare --mount --propagation private sh -c "
    mount -t proc proc '$root/proc' &&
    chroot '$root' sh -c 'dpkg --configure -a && apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(wanted_packages | paste -sd' ' -)'" >&2
fi
wanted_packages >"$stamp"
