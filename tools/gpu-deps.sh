# Sourced by tools/gpu-check.sh where .gpudeps/ holds Debian 12 packages (.deb), in place of
# tools/install-deps.sh: the GPU machine has no package registry (no apt, no network), so the
# libraries come along with the working tree, fetched beforehand on a Debian 12 machine with
#   apt-get download libeigen3-dev libfmt-dev libfmt9 nlohmann-json3-dev libgtest-dev \
#     libgmock-dev libbenchmark-dev libbenchmark1debian libcli11-dev libopenblas-openmp-dev \
#     libopenblas0-openmp libgfortran5 libquadmath0 libsentencepiece-dev libsentencepiece0 \
#     pkgconf pkgconf-bin libpkgconf3
# They are unpacked into a prefix of their own, not into /: dpkg -x bypasses dpkg's database,
# and overwriting the image's files could break it. A package the image already has stays the
# image's (no older copy shadows it). MPI is left out: gpu-check.sh builds with MINIGRAPH_MPI=OFF.
# Runs under the caller's `set -euo pipefail`.
mgdeps=${MGDEPS_PREFIX:-/opt/mgdeps}
rm -rf "$mgdeps"  # afresh each time: a half-unpacked or older set never lingers
mkdir -p "$mgdeps"
for deb in .gpudeps/*.deb; do
  pkg=$(basename "$deb"); pkg=${pkg%%_*}
  if [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)" = installed ]; then
    echo "gpu-deps: $pkg: the image's own"
  elif command -v dpkg-deb >/dev/null; then
    dpkg -x "$deb" "$mgdeps"
  else  # an image without dpkg: a .deb is an ar archive around a tar
    ar p "$deb" data.tar.xz | tar -xJ -C "$mgdeps"
  fi
done
mglib=$mgdeps/usr/lib/x86_64-linux-gnu
# Their CMake and pkg-config files name /usr where the others find their place by relative
# paths (OpenBLAS's config, most .pc files): now the prefix. The second expression undoes a
# rewrite done twice.
find "$mgdeps" -type f \( -name '*.cmake' -o -name '*.pc' \) -exec sed -i \
  -e "s#/usr\b#$mgdeps/usr#g" -e "s#$mgdeps$mgdeps/#$mgdeps/#g" {} +
# What the OpenBLAS packages' update-alternatives would do: the OpenMP build as the OpenBLAS
# that find_package finds (cmake/MinigraphBlas.cmake looks in /usr first, then the prefix path).
for f in "$mglib"/openblas-openmp/cmake/openblas/*.cmake; do
  [ -e "$f" ] && mkdir -p "$mglib/cmake/openblas" && ln -sf "$f" "$mglib/cmake/openblas/"
done
export CMAKE_PREFIX_PATH=$mgdeps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
export PATH=$mgdeps/usr/bin:$PATH  # pkg-config (pkgconf) where the image has none
# The loader, for what no run path reaches: libgfortran behind the dlopen'ed OpenBLAS,
# libpkgconf behind pkg-config, libfmt and SentencePiece in programs built outside the tree.
export LD_LIBRARY_PATH=$mglib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# LIBDIR (the default search path), not PKG_CONFIG_PATH: the install_pkg_config test sets
# PKG_CONFIG_PATH to its scratch install alone, and minigraph.pc's `Requires: fmt` must still
# resolve. The image's own folders stay after ours.
export PKG_CONFIG_LIBDIR=$mglib/pkgconfig:$mgdeps/usr/share/pkgconfig:/usr/local/lib/x86_64-linux-gnu/pkgconfig:/usr/local/lib/pkgconfig:/usr/local/share/pkgconfig:/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/lib/pkgconfig:/usr/share/pkgconfig
echo "gpu-deps: $(ls .gpudeps/*.deb | wc -l) packages carried, unpacked where missing into $mgdeps"
