/*
 * The session: one dump, or NEW and OLD for --base and --peak-diff, from the options
 * to the report to write, through the analyses table (analysis.h).
 */
#ifndef HP_SESSION_H
#define HP_SESSION_H

#include "analysis.h"

/*
 * Read what o names, run the analyses it asks for and return the report to write:
 * the dump's, or NEW - OLD. Exits with a one-line reason (EXIT_NO_REPORT, or
 * EXIT_USAGE for an option the dump shows to be wrong) when none can be made.
 * s->status is the exit status an analysis asks for once the report is written.
 */
const struct report *session_report(struct session *s, const struct options *o);
/* Everything the session and its analyses hold. */
void session_end(struct session *s);

#endif
