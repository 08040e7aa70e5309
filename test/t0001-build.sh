#!/bin/sh
# Build products: the preload exports the allocator and nothing else, and the
# analyzer follows the command-line conventions (--help, --version, exit 64).
. "$(dirname "$0")/lib.sh"

# dlclose: the unwinders learn of unloaded libraries through it (preload/unwind.c);
# pthread_setname_np: a thread that names itself is seen at once (preload/threads.c);
# C++17's replaceable operator new and delete, all of them (preload/new_delete.c);
# the calls that set signal masks or start programs: heapprof's signals stay blocked in
# the program's threads, and unblocked in the programs it starts (preload/sigmask.c);
# mmap, mmap64, munmap and mremap, for the map table (preload/maps.c)
test_case 'heapprof.so exports only the malloc family, new and delete, dlclose, pthread_setname_np, the mask, exec and mmap calls and the API' '
	nm -D --defined-only $PRELOAD | awk "{ print \$3 }" | sort >exports &&
	sz=$(nm -D --defined-only $PRELOAD | sed -n "s/.* _Znw\([mj]\)\$/\1/p") &&
	{ printf "%s\n" aligned_alloc calloc dlclose free malloc malloc_usable_size memalign \
		heapprof_api_v1 posix_memalign pthread_setname_np pvalloc realloc reallocarray valloc \
		sigprocmask pthread_sigmask sigsuspend ppoll pselect epoll_pwait \
		execve execv execvp execvpe fexecve posix_spawn posix_spawnp mmap mmap64 munmap mremap
	  for op in _Znw _Zna; do
		for v in "" RKSt9nothrow_t St11align_val_t St11align_val_tRKSt9nothrow_t; do
			echo "$op$sz$v"
		done
	  done
	  for op in _ZdlPv _ZdaPv; do
		for v in "" RKSt9nothrow_t $sz St11align_val_t St11align_val_tRKSt9nothrow_t \
			${sz}St11align_val_t; do
			echo "$op$v"
		done
	  done; } | sort >want &&
	expect_same want exports
'

test_case 'heapprof.so holds no firmware-kit code (preload/hp_tag.c)' '
	nm $PRELOAD >syms && ! grep -q " hp_tag_" syms
'

test_case 'heapprof.so needs no elfutils, zlib or libunwind' '
	readelf -d $PRELOAD | grep NEEDED >needed &&
	! grep -q "libdw\\|libelf\\|libz\\|libunwind\\|libstdc" needed
'

test_case '--help and --version go to stdout with status 0' '
	heapprof-analyze --help >out && grep -q "^usage: heapprof-analyze" out &&
	grep -q "Exit status" out &&
	heapprof-analyze --version >out && grep -q "^heapprof-analyze [0-9.]* (reads block format versions 1 and 2)\$" out
'

test_case 'bad usage: one line on stderr, a hint, exit 64' '
	for args in "" "onlyone" "--raw=img@0x1000 prog core" "--leaks a b c" "--format=xml a b" \
		"--top=x a b" "--bogus a b" "--raw=nofile prog" "--min-percent=200 a b" \
		"--load-base=1 a b"; do
		heapprof-analyze $args >out 2>err; rc=$?
		test $rc = 64 && ! test -s out && grep -q "^heapprof-analyze: " err &&
		grep -q "Try .heapprof-analyze --help." err ||
		{ echo "args [$args]: status $rc"; cat err; exit 1; }
	done
'

test_case 'make install PREFIX DESTDIR, and the installed wrapper finds its library' '
	make -s -C "$SRC_DIR" install B="$BUILD" PREFIX=/opt/hp DESTDIR="$SCRATCH/stage" >/dev/null &&
	root=$SCRATCH/stage/opt/hp &&
	test -f $root/lib/heapprof.so && test -x $root/bin/heapprof-analyze &&
	test -f $root/lib/libheapprof.a &&
	test -x $root/bin/heapprof && test -f $root/include/heapprof/heapprof_format.h &&
	test -f $root/include/heapprof/hp_tag.c && test -f $root/include/heapprof.h &&
	test "$(PKG_CONFIG_SYSROOT_DIR=$SCRATCH/stage PKG_CONFIG_PATH=$root/lib/pkgconfig \
		pkg-config --cflags heapprof | sed "s/ *$//")" = "-I$root/include" &&
	$root/bin/heapprof run sh -c "echo \$LD_PRELOAD" >preload.txt &&
	grep -q "/opt/hp/lib/heapprof.so\$" preload.txt &&
	make -s -C "$SRC_DIR" uninstall B="$BUILD" PREFIX=/opt/hp DESTDIR="$SCRATCH/stage" >/dev/null &&
	! test -e $root/lib/heapprof.so && ! test -e $root/bin/heapprof &&
	! test -e $root/lib/libheapprof.a &&
	! test -e $root/lib/pkgconfig/heapprof.pc
'
