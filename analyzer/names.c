/*
 * short_name(): one left-to-right pass with a small stack of open brackets, copying
 * only what is outside template arguments and parameter lists.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "names.h"

#define NAMES_DEPTH 64

struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n && o->len + 1 < o->size; i++)
		o->buf[o->len++] = s[i];
}

static bool ends_with(const struct out *o, const char *s)
{
	size_t n = strlen(s);

	return o->len >= n && !memcmp(o->buf + o->len - n, s, n);
}

/* At "operator" (as a word): how many bytes the operator's own name takes. */
static size_t operator_len(const char *p)
{
	static const char *const ops[] = { "operator<=>", "operator<<=", "operator>>=",
		"operator()", "operator[]", "operator->*", "operator->", "operator<<", "operator>>",
		"operator<=", "operator>=", "operator<", "operator>" };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(p, ops[i], strlen(ops[i])))
			return strlen(ops[i]);
	return 0;
}

/*
 * Where the name starts after a return type: past the last space outside brackets
 * ("(anonymous namespace)", a Rust "<A as B>", "{lambda#1}") and before an
 * operator's name, which may hold spaces and brackets itself ("operator new[]").
 */
static size_t name_start(const char *s, size_t len)
{
	size_t depth = 0, start = 0;

	for (size_t i = 0; i < len; i++) {
		if (!depth && !strncmp(s + i, "operator", 8) &&
		    (!i || s[i - 1] == ' ' || s[i - 1] == ':'))
			break;
		if (s[i] == '(' || s[i] == '<' || s[i] == '{')
			depth++;
		else if ((s[i] == ')' || s[i] == '>' || s[i] == '}') && depth)
			depth--;
		else if (s[i] == ' ' && !depth)
			start = i + 1;
	}
	return start;
}

const char *short_name(const char *demangled, char *buf, size_t size)
{
	struct out o = { buf, size, 0 };
	char stack[NAMES_DEPTH];	/* 'T' template args, 'Q' Rust path, 'P' parameters */
	size_t depth = 0, hidden = 0;	/* hidden: open 'T' and 'P' brackets */
	size_t braces = 0;		/* inside "{lambda...}": parameters there end nothing */
	bool after_op = false;		/* just past an operator's name */
	size_t t_end = (size_t)-1;	/* o.len when template arguments last closed */
	bool templ_fn = false;		/* a function template: its return type is shown */
	const char *p = demangled;

	while (*p) {
		size_t n;

		if (!hidden && (p == demangled || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
		    (n = operator_len(p))) {
			put(&o, p, n);		/* operator< is a name, not a bracket */
			p += n;
			while (*p == ' ')	/* "operator< <int>": what follows is arguments */
				p++;
			after_op = true;
			continue;
		}
		if (!strncmp(p, "(anonymous namespace)", 21) && !hidden) {
			put(&o, p, 21);
			p += 21;
			continue;
		}
		if ((*p == '<' || *p == '(') && depth < NAMES_DEPTH) {
			/* "<" opening a name, not following one, is a Rust qualified path */
			bool q = *p == '<' && !hidden && !after_op &&
				 (o.len == 0 || ends_with(&o, "::") || ends_with(&o, " ") ||
				  ends_with(&o, "<"));

			stack[depth++] = q ? 'Q' : *p == '<' ? 'T' : 'P';
			/* only a function template's name shows its return type (Itanium ABI) */
			if (*p == '(' && !hidden && o.len == t_end)
				templ_fn = true;
			if (q)
				put(&o, p, 1);
			else
				hidden++;
		} else if ((*p == '>' || *p == ')') && depth) {
			char kind = stack[--depth];

			if (kind == 'Q')
				put(&o, p, 1);
			else if (kind == 'T' && hidden == 1)
				t_end = o.len;
			if (kind != 'Q' && --hidden == 0 && kind == 'P' && !braces &&
			    strncmp(p + 1, "::", 2))
				break;	/* the function's own parameters: the rest is qualifiers */
		} else if (!hidden) {
			braces += *p == '{';
			braces -= *p == '}' && braces;
			put(&o, p, 1);
		}
		after_op = false;
		p++;
	}
	/* "foo<int> " before a cut, or a space left by "operator< <int>" */
	while (o.len && o.buf[o.len - 1] == ' ')
		o.len--;
	if (templ_fn) {
		size_t from = name_start(o.buf, o.len);

		memmove(o.buf, o.buf + from, o.len - from);
		o.len -= from;
	}
	buf[o.len] = '\0';
	return buf;
}
