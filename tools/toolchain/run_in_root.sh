#!/usr/bin/env bash
# Runs a command inside the toolchain root, with the repository bound at the
# same absolute path so paths, build folders and error messages are identical
# inside and out. Each call gets a private mount namespace: nothing stays
# mounted after it ends.
#
# usage: run_in_root.sh REPO_DIR CMD [ARGS...]
set -euo pipefail

root="${TORCHLIGHT_TOOLCHAIN_DIR:-/var/cache/torchlight/trixie-root}"
repo="$1"; shift
[ -d "$root/usr" ] || { echo "error: toolchain root $root is missing; run tools/toolchain/provision.sh" >&2; exit 1; }

# The command and its arguments travel as a NUL-separated file so that no
# quoting is lost on the way through sh -c and chroot.
argfile="$(mktemp "$root/tmp/torchlight-args.XXXXXX")"
trap 'rm -f "$argfile"' EXIT
printf '%s\0' "$@" >"$argfile"
inner_argfile="${argfile#"$root"}"

# Carry across only the variables the project uses; the rest of the host's
# environment (paths into the host's Python, for example) would mislead.
env_args=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
          LANG=C.UTF-8 TERM="${TERM:-dumb}" PYTHONPATH="$repo/python" PYTHONDONTWRITEBYTECODE=1)
for name in CI TORCHLIGHT_BUILD_DIR TORCHLIGHT_JOBS; do
  [ -n "${!name:-}" ] && env_args+=("$name=${!name}")
done

mkdir -p "$root$repo"
unshare --mount --propagation private -- sh -c '
  root="$1"; repo="$2"; shift 2
  mount --bind "$repo" "$root$repo" &&
  mount -t proc proc "$root/proc" &&
  mount --rbind /dev "$root/dev" &&
  mount -t tmpfs tmpfs "$root/dev/shm" 2>/dev/null
  exec chroot "$root" env -i "$@"
' sh "$root" "$repo" "${env_args[@]}" bash -c '
  cd "$1" || exit 1
  argfile="$2"
  set --
  mapfile -d "" args <"$argfile"
  exec "${args[@]}"
' bash "$repo" "$inner_argfile"
