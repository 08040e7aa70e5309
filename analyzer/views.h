/*
 * Views on a built report (issue 12): --focus, --ignore, --hide and --max-frames
 * (and --by's key), applied to the symbolized frames after report_build(), and the --top /
 * --min-percent cut made again afterwards. Also --base: the difference of two reports
 * (diff.c). Kept apart from report.c so that the report stays one simple pass.
 */
#ifndef HP_VIEWS_H
#define HP_VIEWS_H

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>

#include "report.h"

enum view_by { BY_NONE, BY_FUNCTION, BY_FILE, BY_MODULE };

struct view_opts {
	const char *focus, *ignore, *hide;	/* POSIX extended regexes, NULL = none */
	regex_t focus_re, ignore_re, hide_re;
	const char *focus_type, *ignore_type;	/* --focus=type:REGEX, --ignore=type:...:
						 * matched against a block's type (types.h) */
	regex_t focus_type_re, ignore_type_re;
	unsigned max_frames;			/* 0: all */
	enum view_by by;
	size_t top;				/* the cut, made after the view */
	double min_percent;
};

/* Compile the regexes; exits with a usage message naming the bad one. */
void views_compile(struct view_opts *v);
void views_free(struct view_opts *v);
/* Does a stack of these frames pass --focus and --ignore (by frame)? */
bool views_stack_kept(const struct view_opts *v, const struct report_frame *f, unsigned n);
/* Does a block of this type (NULL: untyped, matched as "[untyped]") pass --focus=type:
 * and --ignore=type:? */
bool views_type_kept(const struct view_opts *v, const char *type);
/* Does anything need every stack symbolized (report_build with no cut)? */
bool views_active(const struct view_opts *v);
/*
 * Filter, hide and shorten r's stacks (built with no cut), merge the stacks that
 * became equal, sort them again and cut by v->top / v->min_percent (not with
 * cut == false: --base cuts after the difference). Sets r->view_note.
 */
void views_apply(struct report *r, const struct view_opts *v, bool cut);
/* Sort r's stacks again (bytes descending; signed with r->diff) and cut them. */
void views_cut(struct report *r, size_t top, double min_percent);
/* into's figures (value, bytes, blocks, counters) plus sign times from's; with
 * diff the sums wrap as int64_t, else they saturate. */
void views_add_figures(struct report_stack *into, const struct report_stack *from, int sign,
		       bool diff);

/* diff.c: out = new - old, stacks matched by module and offset (or by symbol when a
 * module's build-id differs). out borrows frames and names from both. */
void diff_build(struct report *out, const struct report *new_r, const struct report *old_r);
void diff_free(struct report *out);

#endif
