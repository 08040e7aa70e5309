#!/bin/sh
# The input seam (analyzer/image.h): each input format is read by one reader file, and
# nothing past image_open asks which format it was. A new format is then one new file.
. "$(dirname "$0")/lib.sh"

A=$SRC_DIR/analyzer
test_case 'only the core reader walks a core'"'"'s notes or program headers' '
	grep -l "gelf_getnote\|== NT_PRSTATUS\|== NT_AUXV\|== NT_FILE\|HP_NOTE_RESIDENT" "$A"/*.c |
		sed "s|.*/||" >found &&
	echo image_core.c >want && expect_same want found
'

test_case 'nobody downstream takes the core'"'"'s ELF handle to tell the input kind' '
	! grep -n "img->elf\b\|\.elf\b" "$A"/*.c "$A"/*.h &&
	grep -l "[.>]dwfl_core\b" "$A"/*.c | sed "s|.*/||" >found &&
	printf "%s\n" image.c image_core.c sym_dwfl.c >want && expect_same want found &&
	grep -c "[.>]dwfl_core\b" "$A/sym_dwfl.c" >n && echo 3 >want && expect_same want n
'

test_case 'the readers table names every reader, and only image_open.c dispatches' '
	grep -l "image_core_read\|image_raw_read" "$A"/*.c | sed "s|.*/||" >found &&
	printf "%s\n" image_core.c image_open.c image_raw.c >want && expect_same want found
'

test_case 'the spooler knows no format: it asks the readers'"'"' table what the bytes are' '
	! grep -n -i "elf\|core_size" "$A/spool.c" "$A/spool.h" &&
	grep -q "spool_input(&src, path, known, err, errlen)" "$A/image_open.c" &&
	grep -q "image_core_claims, &image_core_size, image_core_read" "$A/image_open.c"
'
