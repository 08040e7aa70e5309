#!/bin/sh
# leaks.c counts how often each suppression matched in the suppressions it is given,
# and says so in leaks_apply's signature instead of casting a const away.
. "$(dirname "$0")/lib.sh"
need_tool pkg-config

test_case 'leaks.c casts no const away (-Wcast-qual)' '
	${CC:-cc} -fsyntax-only -Wcast-qual -Werror -I"$SRC_DIR/include" -I"$SRC_DIR/analyzer" \
		$(pkg-config --cflags libdw libelf) -I/usr/include/libiberty -DHP_VERSION="\"t\"" \
		"$SRC_DIR/analyzer/leaks.c"
'
