#!/usr/bin/env bash
# Install the one-folder build of rocmpanel for the current user (no root):
#
#   bash packaging/linux/install.sh [--bundle DIR] [--prefix DIR]
#
#   <prefix>/opt/rocmpanel/                                 the bundle (rocmpanel + _internal/)
#   <prefix>/bin/rocmpanel                                  a link to <prefix>/opt/rocmpanel/rocmpanel
#   <data>/applications/rocmpanel.desktop                   the menu entry, Exec = the absolute path
#   <data>/icons/hicolor/<N>x<N>/apps/rocmpanel.png, scalable/apps/rocmpanel.svg
#   <data>/metainfo/io.github.rocmpanel.rocmpanel.metainfo.xml
#
# <prefix> is ~/.local; <data> is $XDG_DATA_HOME, else <prefix>/share. The bundle is DIR,
# else the folder this script is in when that is a bundle (packaging/build.py copies the
# script into it), else dist/rocmpanel of the checkout. Everything else is taken from the
# bundle's own resources, so a copied bundle installs by itself. Running it again upgrades
# in place; packaging/linux/uninstall.sh (also copied into the bundle) removes it all.
set -euo pipefail

APP=rocmpanel
APPSTREAM_ID=io.github.rocmpanel.rocmpanel
SIZES="16 22 24 32 48 64 128 256 512"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="${HOME}/.local"
bundle=""

usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix|--bundle) [ $# -ge 2 ] || { echo "${0##*/}: $1 needs a value" >&2; exit 2; } ;;&
        --bundle) bundle="$2"; shift 2 ;;
        --prefix) prefix="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
done
# A relative prefix is taken from the current folder, made absolute: the link, Exec= and
# TryExec= must name the bundle from anywhere.
if [ -z "$prefix" ]; then echo "install.sh: --prefix needs a folder" >&2; exit 2; fi
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
if [ -z "$bundle" ]; then
    if [ -x "$here/$APP" ] && [ -d "$here/_internal" ]; then
        bundle="$here"
    else
        bundle="$here/../../dist/$APP"
    fi
fi
if [ ! -x "$bundle/$APP" ] || [ ! -d "$bundle/_internal" ]; then
    echo "install.sh: no rocmpanel build in $bundle (run: python packaging/build.py)" >&2
    exit 1
fi
bundle="$(cd "$bundle" && pwd)"
res="$bundle/_internal/$APP/resources"
data="${XDG_DATA_HOME:-$prefix/share}"
opt="$prefix/opt/$APP"

# The bundle: copied beside the old one, then swapped in, so a failed copy leaves the
# installed version working.
mkdir -p "$prefix/opt" "$prefix/bin"
if [ "$bundle" != "$opt" ]; then
    rm -rf "$opt.new"
    cp -a "$bundle" "$opt.new"
    rm -rf "$opt.old"
    if [ -e "$opt" ]; then mv "$opt" "$opt.old"; fi
    mv "$opt.new" "$opt"
    rm -rf "$opt.old"
fi
# The command: a link into the bundle. Anything else there (pip's entry point of a
# `pip install --user`, another program) is the user's: left alone and said, never replaced.
link="$prefix/bin/$APP"
ours() { [ -L "$link" ] && [ "$(readlink "$link")" = "$opt/$APP" ]; }
if { [ ! -e "$link" ] && [ ! -L "$link" ]; } || ours; then
    ln -sfn "$opt/$APP" "$link"
else
    echo "install.sh: leaving $link: it is not the link install.sh makes (remove it and run" \
        "this again to get the command; the menu entry works all the same)" >&2
fi

# Desktop integration. The Exec and TryExec lines point at the bundle: ~/.local/bin is not
# on every desktop session's PATH.
mkdir -p "$data/applications" "$data/metainfo" "$data/icons/hicolor/scalable/apps"
# Exec quotes the path, escaping what the Desktop Entry spec says must be escaped inside
# quotes; both values are then escaped for sed's replacement text.
exe="$opt/$APP"
exec_value="\"$(printf '%s' "$exe" | sed 's/[\\"`$]/\\&/g')\""
# Exec is also a string value: its backslashes are escaped once more, and a field code
# starts with %, so a literal % is written %%.
exec_value="$(printf '%s' "$exec_value" | sed -e 's/\\/\\\\/g' -e 's/%/%%/g')"
for_sed() { printf '%s' "$1" | sed 's/[\\|&]/\\&/g'; }
sed -e "s|^Exec=.*|Exec=$(for_sed "$exec_value")|" -e "s|^\(Exec=.*\)|\1\nTryExec=$(for_sed "$exe")|" \
    "$res/$APP.desktop" > "$data/applications/$APP.desktop.tmp"
mv "$data/applications/$APP.desktop.tmp" "$data/applications/$APP.desktop"
install -m 644 "$res/$APPSTREAM_ID.metainfo.xml" "$data/metainfo/$APPSTREAM_ID.metainfo.xml"
for size in $SIZES; do
    install -D -m 644 "$res/icons/hicolor/${size}x${size}/apps/$APP.png" \
        "$data/icons/hicolor/${size}x${size}/apps/$APP.png"
done
install -m 644 "$res/$APP.svg" "$data/icons/hicolor/scalable/apps/$APP.svg"

# Caches: refreshed only where one already exists (a stale icon cache would hide the new
# icon); none is created, so uninstall.sh leaves the folders as it found them.
refresh_caches() {
    if [ -f "$data/icons/hicolor/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null; then
        gtk-update-icon-cache -q -t -f "$data/icons/hicolor" || true
    fi
    if [ -f "$data/applications/mimeinfo.cache" ] && command -v update-desktop-database >/dev/null; then
        update-desktop-database -q "$data/applications" || true
    fi
}
refresh_caches

echo "rocmpanel installed in $opt"
echo "  command: $prefix/bin/$APP   menu entry: $data/applications/$APP.desktop"
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "  note: $prefix/bin is not on PATH; the menu entry works all the same" ;;
esac
echo "  remove with: bash $opt/uninstall.sh"
