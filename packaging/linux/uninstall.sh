#!/usr/bin/env bash
# Remove what packaging/linux/install.sh installed for the current user:
#
#   bash packaging/linux/uninstall.sh [--prefix DIR]
#
# Only the files install.sh writes are removed (the bundle folder, the bin link when it
# points into the bundle, the menu entry, the icons, the AppStream file). The panel's
# settings, managed environments and chat history are the user's data and stay; their
# folders are printed at the end.
set -euo pipefail

APP=rocmpanel
APPSTREAM_ID=io.github.rocmpanel.rocmpanel
SIZES="16 22 24 32 48 64 128 256 512"
prefix="${HOME}/.local"

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix|--bundle) [ $# -ge 2 ] || { echo "${0##*/}: $1 needs a value" >&2; exit 2; } ;;&
        --prefix) prefix="$2"; shift 2 ;;
        -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "uninstall.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
# A relative prefix is made absolute, as install.sh does (its link names the absolute path).
if [ -z "$prefix" ]; then echo "uninstall.sh: --prefix needs a folder" >&2; exit 2; fi
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
data="${XDG_DATA_HOME:-$prefix/share}"
opt="$prefix/opt/$APP"

link="$prefix/bin/$APP"
if [ -L "$link" ] && [ "$(readlink "$link")" = "$opt/$APP" ]; then
    rm -f "$link"
elif [ -e "$link" ]; then
    echo "uninstall.sh: leaving $link: it is not the link install.sh made" >&2
fi
rm -f "$data/applications/$APP.desktop" "$data/metainfo/$APPSTREAM_ID.metainfo.xml"
for size in $SIZES; do
    rm -f "$data/icons/hicolor/${size}x${size}/apps/$APP.png"
done
rm -f "$data/icons/hicolor/scalable/apps/$APP.svg"
rm -rf "$opt" "$opt.new" "$opt.old"

# The same rule as install.sh: refresh a cache that exists, never create one.
if [ -f "$data/icons/hicolor/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null; then
    gtk-update-icon-cache -q -t -f "$data/icons/hicolor" || true
fi
if [ -f "$data/applications/mimeinfo.cache" ] && command -v update-desktop-database >/dev/null; then
    update-desktop-database -q "$data/applications" || true
fi

echo "rocmpanel removed from $prefix"
config="${XDG_CONFIG_HOME:-$HOME/.config}/$APP"
state="${XDG_DATA_HOME:-$HOME/.local/share}/$APP"
echo "  your settings and data are kept: $config, $state (delete them by hand if you like)"
