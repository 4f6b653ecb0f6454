#!/bin/sh
# tests/install/run.sh: an install that moves.  Configures a build of its
# own as a Debian package would (--prefix=/usr
# --libdir=lib/x86_64-linux-gnu, -Dtests=disabled so without cmocka),
# installs it into a DESTDIR, moves the tree elsewhere and checks that the
# moved gpuadvise finds its rules, recordings and injection library from its
# own location; that the injection library's runpath has $ORIGIN (a
# libjansson.so.4 carried beside it is the one loaded); that test fixtures
# are not installed; and that the bash and zsh completions are, and work.
# About a minute on 2 cores (a plain build of the program alone).
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRCDIR=${SRCDIR:-$(cd "$here/../.." && pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-install.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
. "$SRCDIR/tests/cli/tap.sh"
XDG_CONFIG_HOME=$T/config
export XDG_CONFIG_HOME
unset GPUADVISE_RULES_DIR GPUADVISE_RECORDED_DIR GPUADVISE_INJECT

if ! meson setup "$T/b" "$SRCDIR" --prefix=/usr --libdir=lib/x86_64-linux-gnu \
	-Dtests=disabled -Ddemos=disabled -Dbuildtype=plain >"$T/setup.log" 2>&1; then
	not_ok "meson setup --libdir=lib/x86_64-linux-gnu -Dtests=disabled"
	tail -20 "$T/setup.log" | sed 's/^/#   /'
	tap_end
	exit 1
fi
if grep -qi 'cmocka' "$T/setup.log"; then
	not_ok "-Dtests=disabled still looks for cmocka"
else
	ok "-Dtests=disabled configures without looking for cmocka"
fi
have_cupti=0
grep -q '#define GA_HAVE_CUPTI 1' "$T/b/ga_build.h" && have_cupti=1
if ! ninja -C "$T/b" >"$T/build.log" 2>&1 ||
	! DESTDIR="$T/dest" meson install -C "$T/b" --no-rebuild >"$T/install.log" 2>&1; then
	not_ok "build and install into DESTDIR"
	tail -20 "$T/build.log" "$T/install.log" | sed 's/^/#   /'
	tap_end
	exit 1
fi
ok "built and installed into DESTDIR"

# Move the whole prefix: nothing may still point at /usr or at DESTDIR.
mkdir -p "$T/elsewhere"
mv "$T/dest/usr" "$T/elsewhere/gpuadvise-root"
rm -rf "$T/dest" "$T/b"
R=$T/elsewhere/gpuadvise-root
G=$R/bin/gpuadvise

"$G" --version >"$T/out" 2>&1 && grep -q '^gpuadvise [0-9]' "$T/out" &&
	ok "moved: gpuadvise --version" || not_ok "moved: gpuadvise --version: $(cat "$T/out")"
"$G" --list-rules >"$T/out" 2>"$T/err" && grep -q '^uncoalesced-global-access ' "$T/out" &&
	ok "moved: --list-rules finds the rules relative to the executable" ||
	not_ok "moved: --list-rules: $(head -2 "$T/err")"
"$G" --print-paths >"$T/paths" 2>&1
rules=$(sed -n 's/^rules *//p' "$T/paths")
recorded=$(sed -n 's/^recorded *//p' "$T/paths")
inject=$(sed -n 's/^inject *//p' "$T/paths")
case $rules in
"$R"/share/gpuadvise/rules) ok "moved: rules from $rules" ;;
*) not_ok "moved: rules from '$rules'" ;;
esac
case $recorded in
"$R"/share/gpuadvise/recorded) ok "moved: recordings from $recorded" ;;
*) not_ok "moved: recordings from '$recorded'" ;;
esac
if [ "$have_cupti" = 1 ]; then
	if [ "$inject" = "$R/lib/x86_64-linux-gnu/gpuadvise/libgpuadvise-inject.so" ] &&
		[ -f "$inject" ]; then
		ok "moved: the injection library is found in lib/x86_64-linux-gnu/gpuadvise"
	else
		not_ok "moved: injection library '$inject'"
	fi
	"$G" /bin/true >"$T/out" 2>"$T/err"
	if grep -q 'without CUPTI\|injection library' "$T/err"; then
		not_ok "moved: running a program: $(head -1 "$T/err")"
	else
		ok "moved: running a program does not say 'built without CUPTI' ($(head -1 "$T/err" | cut -c1-60))"
	fi
	# $ORIGIN first in the runpath: a libjansson.so.4 beside the library
	# is the one it loads.
	if readelf -d "$inject" | grep -E 'RUNPATH|RPATH' | grep -q '\[\$ORIGIN:'; then
		ok "the injection library's runpath starts with \$ORIGIN"
	else
		not_ok "the injection library's runpath: $(readelf -d "$inject" | grep -E 'RUNPATH|RPATH')"
	fi
	jansson=$(ldd "$inject" | sed -n 's/.*libjansson.so.4 => \([^ ]*\).*/\1/p')
	if [ -n "$jansson" ]; then
		cp "$jansson" "$(dirname "$inject")/libjansson.so.4"
		ldd "$inject" | grep -q "libjansson.so.4 => $(dirname "$inject")/libjansson.so.4" &&
			ok "a libjansson.so.4 carried beside the injection library is the one loaded" ||
			not_ok "carried libjansson.so.4 not used: $(ldd "$inject" | grep jansson)"
	fi
else
	skip "injection library: this gpuadvise is built without CUPTI"
fi
"$G" --demo matmul >"$T/out" 2>"$T/err"
if [ -e /dev/nvidia0 ]; then
	skip "moved: --demo matmul from the recording (a GPU is present)"
elif grep -q '^Demo matmul: naive' "$T/out"; then
	ok "moved: --demo matmul shows the installed recording"
else
	not_ok "moved: --demo matmul: $(head -2 "$T/err")"
fi

# Test fixtures stay out; the demos' recordings are in.
(cd "$R" && find . -type f | sort) >"$T/files"
if grep -Eq 'testapp-|counter-image|pytorch|-source\.json|-stalls\.json|fixtures' "$T/files"; then
	not_ok "test fixtures installed: $(grep -E 'testapp-|counter-image|pytorch|-source|-stalls|fixtures' "$T/files" | head -3 | tr '\n' ' ')"
else
	ok "no test fixture installed"
fi
n=$(grep -c '^\./share/gpuadvise/recorded/demo-[a-z]*\.json$' "$T/files")
[ "$n" = 11 ] && ok "the eleven demo recordings installed" || not_ok "$n demo recordings installed"

# Completions.
bash_comp=$(grep -E '^\./share/bash-completion/completions/gpuadvise$' "$T/files")
zsh_comp=$(grep -E '^\./share/zsh/site-functions/_gpuadvise$' "$T/files")
[ -n "$bash_comp" ] && [ -n "$zsh_comp" ] &&
	ok "bash and zsh completions installed" ||
	not_ok "completions: bash '$bash_comp', zsh '$zsh_comp'"
if [ -n "$bash_comp" ] && command -v bash >/dev/null; then
	PATH=$R/bin:$PATH bash -c '
		. "$1"
		t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _gpuadvise
		      echo "${COMPREPLY[*]}"; }
		t gpuadvise --expl
		t gpuadvise --explain uncoal
		t gpuadvise --explain = shared-bank
		t gpuadvise --demo ma
		t gpuadvise --format j
		t gpuadvise --format = m
		t gpuadvise --fail-on r' sh "$R/share/bash-completion/completions/gpuadvise" >"$T/comp" 2>&1
	printf '%s\n' '--explain=' 'uncoalesced-global-access' 'shared-bank-conflicts' 'matmul' \
		'json junit' 'markdown' 'regression' >"$T/comp-want"
	if cmp -s "$T/comp" "$T/comp-want"; then
		ok "bash completion: options, rule ids, demo names, formats, severities"
	else
		not_ok "bash completion"
		diff "$T/comp-want" "$T/comp" | sed 's/^/#   /'
	fi
fi
tap_end
