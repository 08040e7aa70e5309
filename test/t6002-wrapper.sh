#!/bin/sh
# The heapprof wrapper run by root against another user's process: it touches that
# user's snapshot and runs heapprof-analyze only as that user, takes exactly the name
# heapprof.so gives (no glob, no link, no .part), writes 0600 and never through or over a
# file, reads the environment as getenv does and sends only a signal heapprof.so takes;
# nothing it runs as that user shares root's terminal (a pty, TIOCSTI) or environment;
# that user's snapshot is never copied for a report, and checked (size, ELF header)
# before snapshot copies it; gcore's core fits TMPDIR; what the user chose reaches
# root's terminal with control characters escaped; `run` checks PROGRAM first; a
# zombie is named one; `run` leaves Python's allocator alone unless --malloc;
# heapprof(1) matches the script.
. "$(dirname "$0")/lib.sh"

WRAP=$SRC_DIR/scripts/heapprof
export HEAPPROF_SO=$PRELOAD HEAPPROF_ANALYZE=$ANALYZE
# what the wrapper writes is 0600 by its own doing, not by the caller's umask
umask 022

snap_case() { test_case "$@"; end_started; }
started() { echo "$1" >>"$SCRATCH/pids"; }
end_started()
{
	[ -f "$SCRATCH/pids" ] || return 0
	for p in $(cat "$SCRATCH/pids"); do pkill -9 -P "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
	rm -f "$SCRATCH/pids"
	sleep 0.2
}

snap_case 'run: a PROGRAM that cannot run fails as exec would, before a word about a process' '
	mkdir run && cd run && : >noexec && mkdir adir &&
	{ "$WRAP" run ./nosuchprog 2>e1; test $? = 127; } &&
	{ "$WRAP" run nosuchprog-in-path 2>e2; test $? = 127; } &&
	{ "$WRAP" run ./noexec 2>e3; test $? = 126; } &&
	{ "$WRAP" run ./adir 2>e4; test $? = 126; } &&
	cat e1 e2 e3 e4 && ! grep -q "runs" e1 e2 e3 e4 &&
	grep -q "^heapprof: run: .\./nosuchprog. not found" e1 &&
	grep -q "^heapprof: run: .nosuchprog-in-path. not found (in PATH)" e2 &&
	grep -q "^heapprof: run: .\./noexec. is not executable" e3 &&
	{ "$WRAP" run sh -c "exit 3" 2>ok.err; test $? = 3; } && grep -q "runs sh;" ok.err &&
	PATH=$PWD/adir:$PATH && cp /bin/true adir/mytrue && "$WRAP" run --no-signal mytrue
'

snap_case 'run: Python keeps its own allocator (heapprof tags it); --malloc asks for malloc' '
	mkdir pym && cd pym && unset PYTHONMALLOC &&
	"$WRAP" run --no-signal sh -c "echo \"[\${PYTHONMALLOC-unset}]\"" >dflt 2>/dev/null &&
	"$WRAP" run --no-signal --malloc sh -c "echo \"[\$PYTHONMALLOC]\"" >asked 2>/dev/null &&
	PYTHONMALLOC=debug "$WRAP" run --no-signal sh -c "echo \"[\$PYTHONMALLOC]\"" >own 2>/dev/null &&
	"$WRAP" run --no-signal --pymalloc sh -c "echo \"[\${PYTHONMALLOC-unset}]\"" >old 2>/dev/null &&
	printf "[unset]\n[malloc]\n[debug]\n[unset]\n" >want && cat dflt asked own old >got &&
	expect_same want got
'

if command -v groff >/dev/null; then
	snap_case 'heapprof(1) names every option and variable of the script, .part and 0600' '
		"$WRAP" --help | grep -o -- "--[a-z-]*" | sort -u >opts &&
		printf "%s\n" HEAPPROF_SIGNAL HEAPPROF_OUTPUT PYTHONMALLOC HEAPPROF_SO HEAPPROF_ANALYZE HEAPPROF_INJECT attach >>opts &&
		groff -man -Tascii -P-cbou "$SRC_DIR/doc/heapprof.1" 2>/dev/null >page &&
		while read o; do grep -q -- "$o" page || { echo "missing $o"; exit 1; }; done <opts &&
		grep -q "0600" page && grep -q "\.part" page
	'
else
	skip_case 'heapprof(1) names every option and variable' 'groff is not installed'
fi

# a zombie: sleep 1's parent becomes sleep 30, which never waits (sleep 1 outlives the mv,
# which sh waits for, reaping whatever child has ended by then)
snap_case 'a zombie is "has exited (a zombie)", not "permission denied"' '
	sh -c "sleep 1 & echo \$! >zpid.new && mv zpid.new zpid; exec sleep 30" &
	started $! && i=0 &&
	until [ -f zpid ] && grep -q "^State:[[:space:]]*Z" "/proc/$(cat zpid)/status" 2>/dev/null; do
		i=$((i + 1)) && [ $i -lt 100 ] && sleep 0.1 || exit 1
	done && z=$(cat zpid) &&
	{ "$WRAP" snapshot $z z.snap 2>z1.err; test $? = 2; } &&
	{ "$WRAP" report $z 2>z2.err; test $? = 2; } && cat z1.err z2.err &&
	test "$(cat z1.err)" = "heapprof: process $z has exited (a zombie)" &&
	test "$(cat z2.err)" = "heapprof: process $z has exited (a zombie)" && ! test -e z.snap
'

if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
	skip_case 'root against another user'\''s process' 'needs root, useradd and setpriv'
	exit 0
fi

# A throw-away user, removed on the way out (after its processes)
U=hpt$$
i=0
until useradd -M -U -s /bin/false "$U" 2>useradd.err; do
	# another run holding /etc/passwd's lock
	i=$((i + 1))
	[ $i -lt 20 ] || { cat useradd.err; echo "# skipped: useradd failed"; exit 77; }
	sleep 0.5
done
del_user() { userdel "$U" 2>/dev/null; getent group "$U" >/dev/null && groupdel "$U"; true; }
trap 'end_started; del_user; cleanup_all' EXIT
chmod 755 "$SCRATCH"
as_user() { setpriv --reuid="$U" --regid="$U" --clear-groups "$@"; }

# tree DIR: DIR/u the user's (real/ with snap.x, link -> real), DIR/secret root's (0700,
# snap.1 0600), DIR/root root's working directory (rootfile 0600)
tree()
{
	mkdir -m 755 "$1" && mkdir -m 700 "$1/u" "$1/u/real" "$1/secret" "$1/root" &&
	ln -s real "$1/u/link" && : >"$1/u/real/snap.x" && chown -hR "$U:$U" "$1/u" &&
	(umask 077 && echo "root secret" >"$1/secret/snap.1" && echo "root file" >"$1/root/rootfile")
}

# intact DIR: root's files in DIR as they were
intact()
{
	test "$(cat "$1/secret/snap.1")" = "root secret" &&
	test "$(stat -c %U:%a "$1/secret/snap.1")" = root:600 &&
	test "$(cat "$1/root/rootfile")" = "root file"
}

# start_user DIR CMD...: CMD as the user in DIR under heapprof.so with HEAPPROF_SIGNAL=USR2
# and HEAPPROF_OUTPUT=DIR/link/snap.%n (and $ENV), until it says ready; its pid in $pid
start_user()
{
	d=$1
	shift
	rm -f "$SCRATCH/$$.out"
	(cd "$d" && exec setpriv --reuid="$U" --regid="$U" --clear-groups env -i PATH="$PATH" \
		LD_PRELOAD="$PRELOAD" HEAPPROF_SIGNAL=USR2 HEAPPROF_OUTPUT="$PWD/link/snap.%n" \
		${ENV:-} "$@" >"$SCRATCH/$$.out" 2>"$SCRATCH/$$.err") &
	pid=$!
	started $pid
	i=0
	while ! grep -q "^ready$" "$SCRATCH/$$.out" 2>/dev/null; do
		kill -0 $pid 2>/dev/null || { cat "$SCRATCH/$$.err" >&2; return 1; }
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "never ready" >&2; return 1; }
		sleep 0.1
	done
}

# A stand-in for heapprof.so's writer with an attacker's timing: on SIGUSR2 it does
# ATTACK, then writes real/snap.1.part and renames it real/snap.1 (an ELF core header,
# then "user snapshot": the file usersnap), or (replay) gives real/kept.snap as its
# snapshot, or real/snap.N of 1 TiB, a hole past the header (huge), or "user snapshot"
# alone (text), or that under a name with escape sequences (esc).
printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000\004\000\076\000\001\000\000\000' >snaphead &&
head -c 40 /dev/zero >>snaphead && { cat snaphead && echo "user snapshot"; } >usersnap
cat >fake.sh <<'EOF'
attack=$1 n=0
snap()
{
	case $attack in
	huge)	n=$((n + 1)) && cat ../../snaphead >real/snap.$n.part &&
		truncate -s 1T real/snap.$n.part && mv real/snap.$n.part real/snap.$n; return ;;
	text)	echo "user snapshot" >real/snap.1.part && mv real/snap.1.part real/snap.1; return ;;
	esc)	e=$(printf "x\033]0;owned\007\033[2J") && echo "user snapshot" >"real/$e.1.part" &&
		mv "real/$e.1.part" "real/$e.1"; return ;;
	repoint)	# the directory of HEAPPROF_OUTPUT, re-pointed at root's for 2 s
		ln -s ../secret link.new && mv -T link.new link && sleep 2 &&
		ln -s real link.new && mv -T link.new link ;;
	glob) : >"real/snap.x *" && sleep 2 ;;
	symlink) ln -s ../../secret/snap.1 real/snap.1; return ;;
	replay) cp real/kept.snap real/snap.1.part && mv real/snap.1.part real/snap.1; return ;;
	esac
	{ cat ../../snaphead && printf "user "; } >real/snap.1.part
	[ $attack != part ] || sleep 2
	printf "snapshot\n" >>real/snap.1.part && mv real/snap.1.part real/snap.1
}
trap snap USR2
# a snapshot is taken only when the process maps as much as it holds: the one replayed
# came from a bigger process than a shell (32 MB of it in one variable)
[ $attack != replay ] || pad=$(head -c 32000000 /dev/zero | tr "\0" x)
echo ready
while :; do sleep 0.1; done
EOF
chmod 644 fake.sh

snap_case 'snapshot: HEAPPROF_OUTPUT through a link re-pointed at root'\''s directory moves nothing of root'\''s' '
	tree t1 && start_user t1/u sh "$SCRATCH/fake.sh" repoint &&
	(cd t1/root && "$WRAP" snapshot $pid out.snap) &&
	intact t1 && cmp usersnap t1/root/out.snap &&
	test "$(stat -c %U:%a t1/root/out.snap)" = root:600 && ! test -e t1/u/real/snap.1
'

snap_case 'snapshot FILE.gz: the same race neither deletes nor discloses root'\''s file; FILE.gz is 0600' '
	tree t2 && start_user t2/u sh "$SCRATCH/fake.sh" repoint &&
	(cd t2/root && "$WRAP" snapshot $pid out.snap.gz) &&
	intact t2 && zcat t2/root/out.snap.gz | cmp usersnap - &&
	test "$(stat -c %U:%a t2/root/out.snap.gz)" = root:600
'

snap_case 'report: the same race does not delete root'\''s file' '
	tree t3 && start_user t3/u sh "$SCRATCH/fake.sh" repoint &&
	{ (cd t3/root && "$WRAP" report $pid) >rep.out 2>rep.err; true; } && cat rep.err &&
	intact t3 && ! test -e t3/u/real/snap.1
'

snap_case 'a snapshot name that is a link to root'\''s file is refused, nothing written or removed' '
	tree t4 && start_user t4/u sh "$SCRATCH/fake.sh" symlink &&
	{ (cd t4/root && "$WRAP" snapshot $pid out.snap.gz) 2>link.err; rc=$?; } && cat link.err &&
	test $rc = 2 && intact t4 && ! test -e t4/root/out.snap.gz && test -L t4/u/real/snap.1 &&
	grep -q "not taking .*snap.1.: not a regular file" link.err
'

snap_case 'a name "snap.x *" is matched whole: no glob in root'\''s working directory' '
	tree t5 && start_user t5/u sh "$SCRATCH/fake.sh" glob &&
	(cd t5/root && "$WRAP" snapshot $pid out.snap.gz) &&
	intact t5 && zcat t5/root/out.snap.gz | cmp usersnap - &&
	test -e "t5/u/real/snap.x *"
'

snap_case 'snap.1.part, still being written, is never taken: the wrapper waits for snap.1' '
	tree t6 && start_user t6/u sh "$SCRATCH/fake.sh" part &&
	(cd t6/root && "$WRAP" snapshot $pid out.snap) 2>part.err && cat part.err &&
	cmp usersnap t6/root/out.snap && ! test -e t6/u/real/snap.1.part &&
	! grep -q "cannot move\|failed" "$SCRATCH/$$.err"
'

snap_case 'a real snapshot of the user'\''s program: FILE, FILE.gz 0600 root'\''s; report --keep leaves the user'\''s' '
	tree t7 && cd t7 && start_user u $PROGS/sites small=3x1000 &&
	(cd root && "$WRAP" snapshot $pid a.snap && "$WRAP" snapshot $pid a.snap.gz &&
		"$WRAP" report --keep $pid -f collapsed >r.txt 2>r.err) &&
	kept=$(sed -n "s/.*keeping the snapshot: //p" root/r.err) &&
	test "$kept" = "$SCRATCH/t7/u/link/snap.3" && test "$(stat -c %U:%a "$kept")" = $U:600 &&
	for f in root/a.snap root/a.snap.gz "$kept"; do
		[ "$f" = "$kept" ] || test "$(stat -c %U:%a "$f")" = root:600 || { ls -l "$f"; exit 1; }
		heapprof-analyze -f collapsed $PROGS/sites "$f" >c.txt && expect_bytes site_small 3000 c.txt || exit 1
	done && expect_bytes site_small 3000 root/r.txt && test "$(ls u/real)" = "snap.3
snap.x"
'

if command -v gcore >/dev/null; then
	snap_case 'the gcore fallback writes 0600 too' '
		tree t8 && ENV=HEAPPROF_SIGNAL= start_user t8/u $PROGS/sites small=2x1000 &&
		(cd t8/root && "$WRAP" snapshot $pid g.snap.gz 2>g.err && "$WRAP" snapshot $pid g.snap 2>>g.err) &&
		grep -q "using gcore" t8/root/g.err &&
		test "$(stat -c %U:%a t8/root/g.snap.gz)" = root:600 &&
		test "$(stat -c %U:%a t8/root/g.snap)" = root:600
	'
else
	skip_case 'the gcore fallback writes 0600 too' 'gcore is not installed'
fi

snap_case 'FILE a dangling link: refused, nothing written through it' '
	tree t9 && start_user t9/u $PROGS/sites small=1x100 &&
	ln -s ../victim t9/root/out.snap.gz &&
	{ (cd t9/root && "$WRAP" snapshot $pid out.snap.gz) 2>dl.err; rc=$?; } && cat dl.err &&
	test $rc = 2 && ! test -e t9/victim && grep -q "exists" dl.err
'

if command -v cc >/dev/null; then
	snap_case 'duplicate variables: the first HEAPPROF_SIGNAL and HEAPPROF_OUTPUT, as getenv' '
		printf "%s\n" "#include <string.h>" "#include <unistd.h>" "#include <stdio.h>" \
			"/* dupenv NAME=VALUE... -- PROGRAM ARGS: exactly this environment, duplicates kept */" \
			"int main(int argc, char **argv) { char *env[64]; int n = 0, i = 1;" \
			"	for (; i < argc && strcmp(argv[i], \"--\"); i++) if (n < 63) env[n++] = argv[i];" \
			"	env[n] = 0; if (i + 1 >= argc) return 64;" \
			"	execve(argv[i + 1], argv + i + 1, env); perror(argv[i + 1]); return 127; }" >dupenv.c &&
		cc -O2 -Wall -Wextra dupenv.c -o dupenv &&
		tree t10 && mkdir -m 700 t10/u/other && chown "$U:$U" t10/u/other &&
		nl="
" && start_user t10/u "$SCRATCH/dupenv" "FAKE=x${nl}HEAPPROF_SIGNAL=USR1" \
			HEAPPROF_SIGNAL=USR2 HEAPPROF_SIGNAL=USR1 HEAPPROF_OUTPUT=$SCRATCH/t10/u/real/d.%n \
			HEAPPROF_OUTPUT=$SCRATCH/t10/u/other/d.%n LD_PRELOAD=$PRELOAD -- $PROGS/sites small=2x1000 &&
		tr "\0" "\n" </proc/$pid/environ | grep HEAPPROF_ &&
		(cd t10/root && "$WRAP" snapshot $pid d.snap) &&
		heapprof-analyze -f collapsed $PROGS/sites t10/root/d.snap >d.txt &&
		expect_bytes site_small 2000 d.txt && ! ls t10/u/other/* 2>/dev/null
	'
else
	skip_case 'duplicate variables: the first, as getenv' 'cc is not installed'
fi

path_without_gdb nogdb

snap_case 'HEAPPROF_SIGNAL=KILL, STOP, SEGV, 9...: never sent; the wrapper says why and falls back' '
	tree t11 &&
	for s in KILL SIGSTOP SEGV 9 11 ABRT CHLD SIGSIGUSR2 RTMIN+99 0 USR2x; do
		ENV=HEAPPROF_SIGNAL=$s start_user t11/u $PROGS/sites small=1x100 || exit 1
		{ (cd t11/root && PATH=$SCRATCH/nogdb "$WRAP" snapshot $pid s.snap) 2>s.err; rc=$?; } &&
		cat s.err && test $rc = 2 && ! test -e t11/root/s.snap &&
		grep -q "^State:[[:space:]]*[RS]" /proc/$pid/status &&
		grep -q "HEAPPROF_SIGNAL=$s is not a signal heapprof.so takes.*, and gcore was not found" s.err ||
			exit 1
		end_started
	done &&
	# a number with leading zeros is that number, as strtol reads it
	n=1 && while [ "$(kill -l $n)" != WINCH ]; do n=$((n + 1)); done &&
	for s in SIGWINCH RTMIN+2 0$n RTMIN+02; do
		ENV=HEAPPROF_SIGNAL=$s start_user t11/u $PROGS/sites small=1x100 &&
		(cd t11/root && PATH=$SCRATCH/nogdb "$WRAP" snapshot $pid $s.snap) &&
		heapprof-analyze -f collapsed $PROGS/sites t11/root/$s.snap >s.txt &&
		expect_bytes site_small 100 s.txt || exit 1
		end_started
	done
'

if command -v gcore >/dev/null; then
	snap_case 'HEAPPROF_SIGNAL=STOP with gcore: the process is not stopped, gcore takes the snapshot' '
		tree t12 && ENV=HEAPPROF_SIGNAL=STOP start_user t12/u $PROGS/sites small=2x1000 &&
		(cd t12/root && "$WRAP" snapshot $pid g.snap 2>g.err) && cat t12/root/g.err &&
		grep -q "HEAPPROF_SIGNAL=STOP is not a signal heapprof.so takes.*: using gcore" t12/root/g.err &&
		grep -q "^State:[[:space:]]*[RS]" /proc/$pid/status &&
		heapprof-analyze -f collapsed $PROGS/sites t12/root/g.snap >g.txt &&
		expect_bytes site_small 2000 g.txt
	'
else
	skip_case 'HEAPPROF_SIGNAL=STOP with gcore' 'gcore is not installed'
fi

snap_case 'HEAPPROF_SIGNAL=USR2 the process does not catch: not sent, the wrapper says why' '
	tree t16 && echo "trap - USR2; echo ready; while :; do sleep 0.1; done" >nocatch.sh &&
	start_user t16/u sh "$SCRATCH/nocatch.sh" &&
	{ (cd t16/root && PATH=$SCRATCH/nogdb "$WRAP" snapshot $pid n.snap) 2>n.err; rc=$?; } &&
	cat n.err && test $rc = 2 && kill -0 $pid &&
	grep -q "has no handler for its HEAPPROF_SIGNAL=USR2 .*, and gcore was not found" n.err
'

# A stand-in for heapprof-analyze: who runs it, with what arguments, reading what, in
# whose session (its own: no controlling terminal to push input into); it exits 3 and
# writes to both streams, to show both pass through.
cat >fakeanalyze <<'EOF'
#!/bin/sh
echo "ids $(id -u) $(id -g) $(id -G)"
echo "args $*"
echo "stdin $(cksum | cut -d" " -f1,2)"
[ "$(cut -d" " -f6 /proc/$$/stat)" = $$ ] && echo "session own" || echo "session shared"
echo "fake analyzer on stderr" >&2
exit 3
EOF
chmod 755 fakeanalyze

# fake_report DIR PID: root's `heapprof report --keep PID -f collapsed` from DIR/root with
# the stand-in analyzer; its stdout in fa.out, stderr in fa.err, status in fa.rc, snapshot
# in $kept; the ids it ran with are the user's
fake_report()
{
	{ (cd "$1/root" && HEAPPROF_ANALYZE=$SCRATCH/fakeanalyze "$WRAP" report --keep $2 -f collapsed) \
		>fa.out 2>fa.err; echo $? >fa.rc; } && cat fa.out fa.err &&
	test "$(cat fa.rc)" = 3 && grep -q "^fake analyzer on stderr$" fa.err &&
	kept=$(sed -n "s/.*keeping the snapshot: //p" fa.err) && test -f "$kept" &&
	test "$(sed -n "s/^ids //p" fa.out)" = "$(id -u $U) $(id -g $U) $(id -g $U)" &&
	test "$(sed -n "s/^stdin //p" fa.out)" = "$(cksum <"$kept" | cut -d" " -f1,2)" &&
	grep -qx "session own" fa.out && rm -f "$kept"
}

snap_case 'report: heapprof-analyze runs as the process'\''s user, the snapshot on its stdin' '
	tree t13 && start_user t13/u $PROGS/sites small=2x1000 && fake_report t13 $pid &&
	sed -n "s/^args //p" fa.out | grep -qx -- "--max-size=[0-9]* -f collapsed /proc/$pid/exe -"
'

snap_case 'report: an executable its user cannot read is named by its path, not /proc/PID/exe' '
	tree t14 && mkdir t14/bin && cp $PROGS/sites $PROGS/libsite.so t14/bin && chmod 711 t14/bin/sites &&
	start_user t14/u "$SCRATCH/t14/bin/sites" small=2x1000 &&
	! setpriv --reuid="$U" --regid="$U" --clear-groups cat /proc/$pid/exe >/dev/null 2>&1 &&
	fake_report t14 $pid &&
	sed -n "s/^args //p" fa.out | grep -qx -- "--max-size=[0-9]* -f collapsed $(readlink -f t14/bin/sites) -"
'

snap_case 'report: a snapshot naming a library only root may read gets no names from it' '
	tree t15 && mkdir t15/u/bin t15/u/lib t15/secret/lib && cp $PROGS/sites t15/u/bin &&
	cp $PROGS/libsite.so t15/u/lib && chown -R "$U:$U" t15/u/bin t15/u/lib &&
	ENV=LD_LIBRARY_PATH=$SCRATCH/t15/u/lib start_user t15/u "$SCRATCH/t15/u/bin/sites" lib=2x1000 &&
	(cd t15/root && "$WRAP" snapshot $pid lib.snap) && end_started &&
	heapprof-analyze -f collapsed $PROGS/sites t15/root/lib.snap >own.txt &&
	expect_bytes lib_alloc 2000 own.txt &&
	# the user keeps that snapshot and points the directory it names at root'\''s copy
	cp t15/root/lib.snap t15/u/real/kept.snap && chown "$U:$U" t15/u/real/kept.snap &&
	(umask 077 && cp $PROGS/libsite.so t15/secret/lib) &&
	mv t15/u/lib t15/u/lib.old && ln -s ../secret/lib t15/u/lib && chown -h "$U:$U" t15/u/lib &&
	start_user t15/u sh "$SCRATCH/fake.sh" replay &&
	(cd t15/root && "$WRAP" report $pid -f collapsed >rep.txt 2>rep.err); cat t15/root/rep.*;
	expect_bytes site_lib 2000 t15/root/rep.txt && ! grep -q lib_alloc t15/root/rep.txt &&
	grep -q "libsite.so.*Permission denied" t15/root/rep.err
'

snap_case 'report -o FILE in root'\''s directory: the failure says whose rights the analyzer had' '
	tree t30 && start_user t30/u $PROGS/sites small=1x100 &&
	{ (cd t30/root && "$WRAP" report $pid -o out.txt) 2>o.err; rc=$?; } &&
	sed "s/uid [0-9]*/uid N/; s/process [0-9]*/process N/" o.err >got &&
	cat >want <<-EOF &&
	heapprof-analyze: cannot write '\''out.txt'\'': Permission denied
	heapprof: the analyzer ran as process N'\''s user (uid N), not as you: the files it writes or reads (-o FILE, --suppressions FILE...) must be open to that user
	EOF
	expect_same want got && test $rc = 2 && ! test -e t30/root/out.txt
'

# Stand-ins for what the wrapper may run as the user (first in PATH) and for
# heapprof-analyze: run as someone else than root, one notes in rec/log its ids,
# session, controlling terminal (tty_nr of /proc/PID/stat), fds 0-2, environment,
# arguments and working directory,
# and does what that user can do to a process of theirs left in root's terminal, by
# ptracing it: push a command into root's input (TIOCSTI), which root's shell would run
# after the wrapper; then it runs the real command. Run as root, only the real one.
cat >fake.tmpl <<'EOF'
#!/bin/sh
if [ "$(id -u)" != 0 ]; then
	read -r s </proc/$$/stat
	s=${s##*) }
	printf "%s uid=%s sid=%s tty=%s fd0=%s fd1=%s fd2=%s sti=" @TOOL@ "$(id -u)" \
		"$(echo "$s" | cut -d" " -f4)" "$(echo "$s" | cut -d" " -f5)" "$(readlink /proc/$$/fd/0)" \
		"$(readlink /proc/$$/fd/1)" "$(readlink /proc/$$/fd/2)" >>@SCRATCH@/rec/log
	@PROGS@/tiocsti "
touch @SCRATCH@/PWNED.@TOOL@
" @SCRATCH@/rec/log
	tr "\0" "\n" </proc/$$/environ | sed "s/^/@TOOL@ env /" >>@SCRATCH@/rec/log
	echo "@TOOL@ args $*" >>@SCRATCH@/rec/log
	echo "@TOOL@ cwd $(readlink /proc/$$/cwd)" >>@SCRATCH@/rec/log
fi
exec @REAL@ "$@"
EOF
mkdir -m 755 fake rec && : >rec/log && chmod 666 rec/log
for t in find sh cat rm stat dd od head gzip heapprof-analyze; do
	real=$ANALYZE
	[ $t = heapprof-analyze ] || real=$(command -v $t) || continue
	sed -e "s|@TOOL@|$t|g" -e "s|@REAL@|$real|" -e "s|@SCRATCH@|$SCRATCH|g" -e "s|@PROGS@|$PROGS|" \
		fake.tmpl >fake/$t && chmod 755 fake/$t
done

# fresh: an empty log, no PWNED.* file; faked CMD...: CMD with the stand-ins
fresh() { : >"$SCRATCH/rec/log" && rm -f "$SCRATCH"/PWNED.*; }
faked() { PATH=$SCRATCH/fake:$PATH HEAPPROF_ANALYZE=$SCRATCH/fake/heapprof-analyze "$@"; }

# no_terminal: what ran as the user ran (find, sh, heapprof-analyze at least), in no
# terminal: no controlling one (tty_nr 0), none on fds 0-2, and no command pushed into
# root's (no PWNED.* file)
no_terminal()
{
	grep -v " env \| args \| cwd " "$SCRATCH/rec/log" &&
	for t in find sh heapprof-analyze; do
		grep -q "^$t uid=$(id -u $U) " "$SCRATCH/rec/log" || { echo "$t never ran as $U"; return 1; }
	done &&
	! grep -v " env \| args \| cwd " "$SCRATCH/rec/log" | grep -v " tty=0 fd0=[^ ]* fd1=[^ ]* fd2=[^ ]* sti=" &&
	! grep -v " env \| args \| cwd " "$SCRATCH/rec/log" | grep "fd[012]=/dev/\(pts\|tty\)" &&
	! ls "$SCRATCH"/PWNED.* 2>/dev/null
}

if command -v python3 >/dev/null; then
	# in_pty DIR CMD: CMD run by an interactive shell in a terminal of its own, as root
	# types it, and whatever was pushed into its input meanwhile; the terminal's text
	# in DIR/pty.out
	in_pty()
	{
		python3 "$TEST_DIR/helpers/pty_shell.py" "$1/done" "$2; : >$1/done" >"$1/pty.out"
	}
	case $(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null) in
	0) how="no TIOCSTI on this kernel (dev.tty.legacy_tiocsti=0): the session and fds only" ;;
	*) how="TIOCSTI through a pty" ;;
	esac
	snap_case "report, snapshot: nothing run as the user can type into root's terminal ($how)" '
		tree t17 && start_user t17/u $PROGS/sites small=2x1000 && fresh &&
		faked in_pty "$SCRATCH/t17" "cd $SCRATCH/t17/root && $WRAP report $pid -f collapsed \
			>r.txt 2>r.err; $WRAP snapshot $pid s.snap.gz" &&
		cat t17/pty.out t17/root/r.err && no_terminal &&
		grep -q "heapprof: snapshot of process $pid in s.snap.gz" t17/pty.out &&
		expect_bytes site_small 2000 t17/root/r.txt && zcat t17/root/s.snap.gz >s.snap &&
		heapprof-analyze -f collapsed $PROGS/sites s.snap >s.txt && expect_bytes site_small 2000 s.txt
	'
else
	skip_case "report, snapshot: nothing run as the user can type into root's terminal" \
		'python3 is not installed'
fi

# env_names TOOL: the names of the variables TOOL had, run as the user, one a line, sorted
env_names() { sed -n "s/^$1 env \([^=]*\)=.*/\1/p" "$SCRATCH/rec/log" | sort -u; }

snap_case 'report, snapshot: what runs as the user has a fixed environment, nothing else of root'\''s' '
	tree t18 && start_user t18/u $PROGS/sites small=2x1000 && fresh &&
	(cd t18/root && ROOT_SECRET=hunter2 LANG=C.UTF-8 DEBUGINFOD_TIMEOUT=7 LD_PRELOAD= TMPDIR=$SCRATCH \
		faked "$WRAP" report $pid -f collapsed >r.txt && faked "$WRAP" snapshot $pid s.snap) &&
	expect_bytes site_small 2000 t18/root/r.txt && for t in find sh heapprof-analyze; do
		env_names $t | grep . >/dev/null || { echo "$t never ran as $U"; exit 1; }
	done &&
	! grep hunter2 rec/log && env_names "[a-z-]*" | grep -v "^DEBUGINFOD_" >names &&
	printf "%s\n" HOME LANG PATH PWD >want && expect_same want names &&
	grep -qx "heapprof-analyze env DEBUGINFOD_TIMEOUT=7" rec/log &&
	grep -qx "heapprof-analyze env HOME=$(getent passwd $U | cut -d: -f6)" rec/log &&
	grep -qx "heapprof-analyze env LANG=C.UTF-8" rec/log && ! grep "env PWD=[^/]" rec/log
'

# The user's snapshot is that user's file, of their choosing: 1 TiB (a hole), or no
# snapshot at all. Root's TMPDIR never gets a copy; a 128 MiB file size limit keeps a
# wrapper that copies from filling this machine's disk.
snap_case 'report: heapprof-analyze reads the user'\''s own snapshot, opened as the user: nothing copied' '
	tree t19 && mkdir -m 700 t19/tmp && start_user t19/u $PROGS/sites small=2x1000 && fresh &&
	(cd t19/root && TMPDIR=$SCRATCH/t19/tmp faked "$WRAP" report $pid -f collapsed >r.txt) &&
	grep -a "^heapprof-analyze [a-z]*=" rec/log &&
	expect_bytes site_small 2000 t19/root/r.txt && test -z "$(ls t19/tmp)" &&
	grep -q "^heapprof-analyze uid=$(id -u $U) .* fd0=$SCRATCH/t19/u/real/snap.1 " rec/log &&
	max=$(sed -n "s/^heapprof-analyze args --max-size=\([0-9]*\) -f collapsed .*/\1/p" rec/log) &&
	[ "$max" -ge 16777216 ] && [ "$max" -lt 1073741824 ] && ! test -e t19/u/real/snap.1
'

snap_case 'report, snapshot: a snapshot of 1 TiB (a hole) is refused, and nothing lands in TMPDIR' '
	tree t20 && mkdir -m 700 t20/tmp && start_user t20/u sh "$SCRATCH/fake.sh" huge &&
	for c in "report $pid" "snapshot $pid big.snap" "snapshot $pid big.snap.gz"; do
		{ (cd t20/root && ulimit -f 262144 && TMPDIR=$SCRATCH/t20/tmp "$WRAP" $c) >out 2>err; rc=$?; } &&
		cat err && test $rc = 2 && test -z "$(ls t20/tmp)" && ! test -s out &&
		grep -q "^heapprof: not taking .$SCRATCH/t20/u/link/snap.[0-9]*.: more than the [0-9]* bytes process $pid.s mappings can hold$" err ||
		exit 1
	done && test "$(ls t20/root)" = rootfile && test "$(ls t20/u/real)" = "snap.1
snap.2
snap.3
snap.x"
'

snap_case 'report, snapshot: a snapshot that is no ELF core is refused' '
	tree t21 && start_user t21/u sh "$SCRATCH/fake.sh" text &&
	{ (cd t21/root && "$WRAP" snapshot $pid text.snap) 2>err; rc=$?; } && cat err && test $rc = 2 &&
	grep -q "^heapprof: not taking .*/snap.1.: not a heapprof snapshot (no ELF core header)$" err &&
	! test -e t21/root/text.snap && rm t21/u/real/snap.1 &&
	{ (cd t21/root && "$WRAP" report $pid) >out 2>err; rc=$?; } && cat err && test $rc = 2 &&
	grep -q "^heapprof: not taking .*/snap.1.: not a heapprof snapshot (no ELF core header)$" err
'

if command -v gcore >/dev/null; then
	# gdb writes each mapping whole, zeros and PROT_NONE included: a process that maps
	# 1 GiB more than TMPDIR's free room
	snap_case 'gcore: a process that maps more than TMPDIR holds is refused before gdb writes' '
		tree t22 && mkdir -m 700 t22/tmp &&
		free=$(stat -f -c "%a %S" t22/tmp | awk "{ printf \"%.0f\", \$1 * \$2 }") &&
		[ $free -lt $((64 << 40)) ] || { echo "# $free bytes free: no room to map more"; exit 0; }
		ENV=HEAPPROF_SIGNAL= start_user t22/u $PROGS/bigmap $((free + (1 << 30))) &&
		{ (cd t22/root && ulimit -f 131072 && TMPDIR=$SCRATCH/t22/tmp "$WRAP" snapshot $pid g.snap) \
			2>err; rc=$?; } && cat err && test $rc = 2 && test -z "$(ls t22/tmp)" &&
		grep -q "^heapprof: gcore.s core of process $pid needs up to [0-9]* bytes, and only [0-9]* are free in .$SCRATCH/t22/tmp/heapprof.[^/]*. (set TMPDIR or FILE elsewhere)$" err
	'
fi

# A stand-in for gcore as gdb's behaves when the process maps more by the time it is
# stopped than when the wrapper looked: it writes on past the file size limit, is told
# "File too large", and saves what it wrote with status 0
mkdir -m 755 bigcore && cat >bigcore/gcore <<'EOF'
#!/bin/sh
trap '' XFSZ
head -c 64G /dev/zero >"$2.$3" 2>/dev/null
echo 'warning: cannot close "'"$2.$3"'": File too large'
echo "Saved corefile $2.$3"
EOF
chmod 755 bigcore/gcore

snap_case 'gcore: a process that maps more once gdb stops it: the core cut short is refused' '
	tree t23 && mkdir -m 700 t23/tmp && ENV=HEAPPROF_SIGNAL= start_user t23/u $PROGS/sites small=1x100 &&
	{ (cd t23/root && ulimit -f 262144 && PATH=$SCRATCH/bigcore:$PATH TMPDIR=$SCRATCH/t23/tmp \
		"$WRAP" snapshot $pid g.snap) 2>err; rc=$?; } &&
	cat err && test $rc = 2 && test -z "$(ls t23/tmp)" && ! test -e t23/root/g.snap &&
	grep -q "^heapprof: gcore.s core of process $pid was cut short at [0-9]* bytes: the most its mappings allowed when they were checked$" err &&
	{ (cd t23/root && ulimit -f 2048 && PATH=$SCRATCH/bigcore:$PATH TMPDIR=$SCRATCH/t23/tmp \
		"$WRAP" snapshot $pid g.snap) 2>err; rc=$?; } &&
	cat err && test $rc = 2 && test -z "$(ls t23/tmp)" && ! test -e t23/root/g.snap &&
	grep -q "^heapprof: gcore.s core of process $pid was cut short at 1048576 bytes: the file size limit (ulimit -f)$" err
'

# What the user writes reaches root's terminal with its control characters escaped:
# names (HEAPPROF_OUTPUT's and the snapshot's), HEAPPROF_SIGNAL, and what runs as the
# user writes on stderr, or on stdout when that is a terminal (a report in a file
# stays as it is). A stand-in analyzer writes escape sequences on both.
E=$(printf '\033')
cat >escanalyze <<'EOF'
#!/bin/sh
printf "report \033]0;owned\007 \033[2J \302\233 tab\tend\n"
printf "heapprof-analyze: in \033[31mred\033[0m\r\n" >&2
EOF
chmod 755 escanalyze

# controls FILE: the lines of FILE with a control character but tab (carriage returns
# from a pty dropped)
controls() { tr -d "\r" <"$1" | LC_ALL=C grep -a "$(printf "[\001-\010\013-\037\177]\|\302[\200-\237]")"; }

snap_case 'messages and what runs as the user reach root'\''s terminal with control characters escaped' '
	tree t24 && ENV="HEAPPROF_OUTPUT=$SCRATCH/t24/u/link/x$E]0;owned$(printf "\007")$E[2J.%n" &&
	start_user t24/u sh "$SCRATCH/fake.sh" esc &&
	{ (cd t24/root && "$WRAP" snapshot $pid s.snap) 2>err; rc=$?; } && test $rc = 2 && cat err &&
	! controls err && grep -q "^heapprof: not taking .*/link/x\\\\x1b]0;owned\\\\x07\\\\x1b\[2J.1.: not a heapprof snapshot" err &&
	end_started && ENV=HEAPPROF_SIGNAL=USR2$E[2J start_user t24/u $PROGS/sites small=1x100 &&
	{ (cd t24/root && PATH=$SCRATCH/nogdb "$WRAP" snapshot $pid s.snap) 2>err; rc=$?; } &&
	test $rc = 2 && cat err && ! controls err &&
	grep -q "HEAPPROF_SIGNAL=USR2\\\\x1b\[2J is not a signal" err &&
	end_started && ENV="HEAPPROF_OUTPUT=$SCRATCH/t24/u/link/y$E[2J.%n" start_user t24/u $PROGS/sites small=1x100 &&
	{ (cd t24/root && HEAPPROF_ANALYZE=$SCRATCH/escanalyze "$WRAP" report --keep $pid) >out 2>err; } &&
	cat err out && ! controls err && grep -q "^heapprof: keeping the snapshot: .*/link/y\\\\x1b\[2J.1$" err &&
	grep -qx "heapprof-analyze: in \\\\x1b\[31mred\\\\x1b\[0m\\\\x0d" err &&
	test "$(cat out)" = "$(printf "report \033]0;owned\007 \033[2J \302\233 tab\tend")" &&
	if command -v python3 >/dev/null; then
		in_pty "$SCRATCH/t24" "cd $SCRATCH/t24/root && HEAPPROF_ANALYZE=$SCRATCH/escanalyze $WRAP report $pid" &&
		cat t24/pty.out && ! controls t24/pty.out &&
		grep -q "report \\\\x1b]0;owned\\\\x07 \\\\x1b\[2J \\\\xc2\\\\x9b tab	end" t24/pty.out &&
		grep -q "heapprof-analyze: in \\\\x1b\[31mred" t24/pty.out
	fi
'

# A working directory inherited opens what is below it even when a directory above is
# closed to that user: root's, in t25/secret (0700), is not handed over.
snap_case 'report: heapprof-analyze runs from root'\''s directory only when the user may reach it' '
	tree t25 && mkdir -m 755 t25/secret/open && echo "root notes" >t25/secret/open/notes &&
	start_user t25/u $PROGS/sites small=2x1000 && fresh &&
	(cd t25/secret/open && faked "$WRAP" report $pid -f collapsed >r1.txt) &&
	grep -x "heapprof-analyze cwd /" rec/log && expect_bytes site_small 2000 t25/secret/open/r1.txt &&
	fresh && (cd t25 && faked "$WRAP" report $pid -f collapsed >r2.txt) &&
	grep -x "heapprof-analyze cwd $SCRATCH/t25" rec/log && expect_bytes site_small 2000 t25/r2.txt
'
