# A memory cgroup of our own, for HEAPPROF_OOM (t6012, bench/oom.sh). Sourced; gives:
#   memcg_make LIMIT   make one limited to LIMIT bytes under this shell's own cgroup
#                      (v1: memory.limit_in_bytes; v2: memory.max, the memory controller
#                      enabled for our cgroup's children); its directory in MEMCG, its
#                      kind (v1, v2) in MEMCG_KIND. Status 1 and a reason on stderr where
#                      none can be made: not root, no memory controller we may write to.
#   memcg_run CMD...   run CMD in it (a shell that moves itself in, then execs CMD)
#   memcg_kills        how many times the kernel's OOM killer has ended a process in it
#   memcg_pids         the processes in it (those memcg_run started, and their children)
#   memcg_kill         kill -9 them (a program left waiting by a failed case)
#   memcg_drop         remove it, once its processes are gone
MEMCG=
MEMCG_KIND=

# the mount point of the hierarchy of fs type $1 (cgroup2, or cgroup with memory)
memcg_mount()
{
	awk -v t="$1" '{ for (i = 7; i <= NF && $i != "-"; i++); if ($(i + 1) != t) next;
		if (t == "cgroup" && $(i + 3) !~ /(^|,)memory(,|$)/) next; print $5; exit }' \
		/proc/self/mountinfo
}

memcg_make()
{
	own=$(awk '{ i = index($0, ":"); r = substr($0, i + 1); j = index(r, ":");
		if (substr(r, 1, j - 1) ~ /(^|,)memory(,|$)/) { print substr(r, j + 1); exit } }' \
		/proc/self/cgroup)
	mnt=$(memcg_mount cgroup)
	if [ -n "$own" ] && [ -n "$mnt" ]; then
		MEMCG_KIND=v1
	else
		own=$(sed -n 's/^0::\(.*\)/\1/p' /proc/self/cgroup)
		mnt=$(memcg_mount cgroup2)
		MEMCG_KIND=v2
	fi
	[ -n "$mnt" ] || { echo "no memory cgroup hierarchy is mounted" >&2; return 1; }
	parent=$mnt${own%/}
	MEMCG=$parent/heapprof-oom-$$
	if [ $MEMCG_KIND = v2 ] && ! grep -qw memory "$parent/cgroup.subtree_control" 2>/dev/null; then
		echo +memory >"$parent/cgroup.subtree_control" 2>/dev/null ||
			{ echo "cannot enable the memory controller under $parent" >&2; MEMCG=; return 1; }
	fi
	mkdir "$MEMCG" 2>/dev/null || { echo "cannot make a cgroup under $parent" >&2; MEMCG=; return 1; }
	if [ $MEMCG_KIND = v1 ]; then
		echo "$1" >"$MEMCG/memory.limit_in_bytes"
	else
		echo "$1" >"$MEMCG/memory.max"
	fi 2>/dev/null || { echo "cannot limit $MEMCG" >&2; memcg_drop; return 1; }
}

memcg_run()
{
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$MEMCG" "$@"
}

memcg_kills()
{
	if [ $MEMCG_KIND = v1 ]; then
		sed -n 's/^oom_kill //p' "$MEMCG/memory.oom_control"
	else
		sed -n 's/^oom_kill //p' "$MEMCG/memory.events"
	fi
}

memcg_pids()
{
	cat "$MEMCG/cgroup.procs"
}

memcg_kill()
{
	[ -n "$MEMCG" ] || return 0
	for p in $(memcg_pids); do kill -9 "$p"; done 2>/dev/null
}

memcg_drop()
{
	[ -n "$MEMCG" ] || return 0
	i=0
	until rmdir "$MEMCG" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 50 ] || { echo "cannot remove $MEMCG" >&2; return 1; }
		sleep 0.1
	done
	MEMCG=
}
