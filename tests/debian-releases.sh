# The one table of what differs between the Debian releases that xom is
# tested on and that no command can tell.  Everything else is found on the
# machine (tests/deps.sh: package names; tests/vm/run: python3's and gcc's
# paths; tests/vm/fetch: where a package keeps busybox).  Sourced by bash
# and sh scripts; sets, for the release this machine runs:
#
#   release        its code name (VERSION_CODENAME of /etc/os-release)
#   second_kernel  the apt suite of the emulated-PKU guest's second kernel,
#                  the one that must have mseal(2) (Linux 6.10) for
#                  tests/vm/guest-6.12.list.  Debian 12's own kernel is 6.1,
#                  so its second kernel is 6.12 from bookworm-backports;
#                  Debian 13's own kernel is already 6.12, so its second
#                  boot is on that same kernel ("" is the release's own
#                  kernel, from the machine's apt sources).
release=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
case $release in
bookworm) second_kernel=bookworm-backports ;;  # Debian 12: 6.1, and 6.12 from backports
trixie)   second_kernel= ;;                    # Debian 13: 6.12
*)
	echo "tests/debian-releases.sh: Debian '$release' is not in the table (bookworm, trixie); add it there" >&2
	exit 2 ;;
esac
