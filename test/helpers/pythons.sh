# Sourced by the Python tests (t1005, t3014): the interpreters they run on.
#   PYTHONS             labels: debian-3.11 (/usr/bin/python3), then pyenv's 3.11, 3.12, 3.13
#   python_path LABEL   its interpreter, or nothing when this machine lacks it
PYTHONS='debian-3.11 3.11 3.12 3.13'

python_path()
{
	case $1 in
	debian-*)
		[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' &&
			echo /usr/bin/python3
		return 0 ;;
	esac
	command -v pyenv >/dev/null 2>&1 || return 0
	v=$(pyenv versions --bare 2>/dev/null | grep -x "$1\.[0-9]*" | sort -t. -k3 -n | tail -n 1)
	[ -n "$v" ] && p=$(pyenv prefix "$v" 2>/dev/null) && [ -x "$p/bin/python" ] && echo "$p/bin/python"
	return 0
}
