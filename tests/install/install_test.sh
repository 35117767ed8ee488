#!/usr/bin/env bash
# The install end to end: `cmake --install` a built tree into a fresh prefix,
# build tests/install/app against it (find_package, then pkg-config flags),
# and run the app on upstream's fixtures, which checks the outputs itself.
#
#   install_test.sh BUILD_DIR WORK_DIR CMAKE CXX GENERATOR
set -euo pipefail

build_dir="$1" work="$2" cmake="$3" cxx="$4" generator="$5"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fixtures="$here/../fixtures/upstream"
prefix="$work/prefix"

rm -rf "$work"
mkdir -p "$work"

echo "== cmake --install into $prefix"
"$cmake" --install "$build_dir" --prefix "$prefix" >"$work/install.log"

# Nothing from the source or build tree may leak into the app's build: it
# sees only the prefix, so a header or library missing from the install fails.
echo "== find_package(Torchlight) app"
"$cmake" -S "$here/app" -B "$work/app-build" -G "$generator" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/app-configure.log"
"$cmake" --build "$work/app-build" >"$work/app-build.log"
app="$work/app-build/install_app"
"$app" "$fixtures/add.pte"
"$app" "$fixtures/mlp_xnnpack.pte" "$fixtures/mlp_xnnpack.input0.bin" \
  "$fixtures/mlp_xnnpack.output0.bin"
"$work/app-build/extensions_check"

# Every installed header compiles on its own from the prefix alone.
echo "== installed headers compile alone"
find "$prefix/include" -name '*.h' | sort >"$work/headers.txt"
failed=0
while IFS= read -r header; do
  echo "#include \"$header\"" >"$work/header_check.cpp"
  if ! "$cxx" -std=c++17 -fsyntax-only -I"$prefix/include/torchlight" -I"$prefix/include" \
       "$work/header_check.cpp" 2>"$work/header_check.err"; then
    # The WRAP_TO_ATEN headers are for torch extensions: they need torch's
    # C++ headers, which a machine without libtorch-dev lacks.
    if grep -q "fatal error: ATen/ATen.h: No such file" "$work/header_check.err"; then
      echo "skipped (needs torch's C++ headers): ${header#"$prefix/"}"
      continue
    fi
    echo "installed header does not compile alone: ${header#"$prefix/"}"
    head -n 3 "$work/header_check.err"
    failed=1
  fi
done <"$work/headers.txt"
[ "$failed" = 0 ]
echo "$(wc -l <"$work/headers.txt") headers"

# pkg-config flags: the real tool when present; otherwise the .pc file's
# variables, Cflags and Libs expanded here (the toolchain has no pkg-config).
pc_dir="$(dirname "$(find "$prefix" -name torchlight.pc | head -n1)")"
[ -f "$pc_dir/torchlight.pc" ] || { echo "torchlight.pc not installed"; exit 1; }
if command -v pkg-config >/dev/null; then
  flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs torchlight)"
  echo "== pkg-config app (pkg-config)"
else
  expand_pc() {
    local pcfiledir="$pc_dir" line key value cflags="" libs=""
    declare -A vars=([pcfiledir]="$pc_dir")
    while IFS= read -r line; do
      # ${name} references, in order of appearance, from earlier variables.
      while [[ "$line" =~ \$\{([A-Za-z_]+)\} ]]; do
        key="${BASH_REMATCH[1]}"
        [ -n "${vars[$key]+set}" ] || { echo "torchlight.pc: undefined \${$key}" >&2; return 1; }
        line="${line//\$\{$key\}/${vars[$key]}}"
      done
      case "$line" in
        \#*|"") ;;
        Cflags:*) cflags="${line#Cflags:}" ;;
        Libs:*) libs="${line#Libs:}" ;;
        *=*) key="${line%%=*}"; value="${line#*=}"; vars[$key]="$value" ;;
      esac
    done <"$pc_dir/torchlight.pc"
    echo "$cflags $libs"
  }
  flags="$(expand_pc)"
  echo "== pkg-config app (torchlight.pc expanded by this script; no pkg-config here)"
fi
echo "flags: $flags"
# shellcheck disable=SC2086  # the flags are a word list
"$cxx" -O1 "$here/app/main.cpp" -o "$work/install_app_pc" $flags
"$work/install_app_pc" "$fixtures/add.pte"
"$work/install_app_pc" "$fixtures/mlp_xnnpack.pte" "$fixtures/mlp_xnnpack.input0.bin" \
  "$fixtures/mlp_xnnpack.output0.bin"
echo "install test passed"
