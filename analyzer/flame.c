/*
 * SVG flame graphs in the manner of Brendan Gregg's flamegraph.pl: merge the stacks
 * into a tree, lay it out bottom-up, one <g> per frame with a <title> tooltip, and a
 * small inline script for zoom and search.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "escape_name.h"
#include "flame.h"
#include "util.h"

#define FLAME_WIDTH 1200.0
#define FLAME_PAD 10.0
#define FLAME_FRAME_H 16
#define FLAME_TOP 44		/* title, search and reset above the frames */
#define FLAME_MIN_W 0.1
#define FLAME_CHART_H 110	/* a timeline's band: its plot, 80 high, and its labels */
#define FLAME_CHART_X 80.0	/* room for the value axis' labels */

struct node {
	const char *name;
	uint64_t value;
	struct node **kids;
	size_t n_kids, cap;
};

static struct node *node_child(struct node *p, const char *name)
{
	struct node *c;

	for (size_t i = 0; i < p->n_kids; i++)
		if (!strcmp(p->kids[i]->name, name))
			return p->kids[i];
	if (p->n_kids == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 4;
		p->kids = xrealloc(p->kids, p->cap * sizeof(*p->kids));
	}
	c = xcalloc(1, sizeof(*c));
	c->name = name;
	p->kids[p->n_kids++] = c;
	return c;
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp((*(struct node *const *)a)->name, (*(struct node *const *)b)->name);
}

/* Sort children by name; returns the tree's depth below n. */
static unsigned node_finish(struct node *n)
{
	unsigned depth = 0;

	if (n->n_kids)
		qsort(n->kids, n->n_kids, sizeof(*n->kids), node_cmp);
	for (size_t i = 0; i < n->n_kids; i++) {
		unsigned d = node_finish(n->kids[i]) + 1;

		depth = d > depth ? d : depth;
	}
	return depth;
}

static void node_free(struct node *n)
{
	for (size_t i = 0; i < n->n_kids; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n);
}

/*
 * s as XML character data or attribute value: well-formed whatever its bytes, since
 * XML takes neither control characters (not even as references) nor bytes that are not
 * UTF-8; those are written \xNN, as names are everywhere (escape.h).
 */
static void put_xml(FILE *f, const char *s)
{
	while (*s) {
		size_t n = escape_char_len(s);

		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if (n)
				fwrite(s, 1, n, f);
			else
				fprintf(f, "\\x%02x", (unsigned char)*s);
		}
		s += n ? n : 1;
	}
}

/* A warm colour from the name, so a function keeps its colour across graphs. */
static void colour(const char *name, unsigned *r, unsigned *g, unsigned *b)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	*r = 205 + h % 50;
	*g = (h >> 8) % 230;
	*b = (h >> 16) % 55;
}

/*
 * As much of name as fits in w pixels (about 7 per character), ".." marking a cut.
 * Characters, not bytes: a UTF-8 character takes 1 to 4, and a cut inside one would
 * leave the SVG no longer UTF-8.
 */
static void put_label(FILE *f, const char *name, double w)
{
	size_t fit = w > 6 ? (size_t)((w - 6) / 7) : 0, chars = 0, keep = 0;
	char *esc = escape_needed(name) ? escape_dup(name) : NULL;
	const char *shown = esc ? esc : name;	/* as put_xml shows it: all printable */

	if (fit < 3)
		goto out;
	for (const char *p = shown; *p; p += escape_char_len(p))
		if (++chars == fit - 2)
			keep = (size_t)(p + escape_char_len(p) - shown);
	if (chars <= fit) {
		put_xml(f, shown);
	} else {
		char *cut = xmalloc(keep + 3);

		memcpy(cut, shown, keep);
		strcpy(cut + keep, "..");
		put_xml(f, cut);
		free(cut);
	}
out:
	free(esc);
}

struct layout {
	FILE *f;
	uint64_t total;
	double scale;		/* pixels per unit */
	unsigned height;
	const char *unit;
};

static void put_frame(struct layout *l, const struct node *n, double x, unsigned depth)
{
	double w = n->value * l->scale, kx = x;
	unsigned y = l->height - FLAME_PAD - (depth + 1) * FLAME_FRAME_H, r, g, b;

	if (w < FLAME_MIN_W)
		return;
	colour(n->name, &r, &g, &b);
	fputs("<g class=\"f\"><title>", l->f);
	put_xml(l->f, n->name);
	fprintf(l->f, " (%" PRIu64 " %s, %.2f%%)</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" "
		"height=\"%u\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/><text x=\"%.2f\" y=\"%u\">",
		n->value, l->unit, l->total ? 100.0 * n->value / l->total : 0.0, x, y, w,
		FLAME_FRAME_H - 1, r, g, b, x + 3, y + 11);
	put_label(l->f, n->name, w);
	fputs("</text></g>\n", l->f);
	for (size_t i = 0; i < n->n_kids; i++) {
		put_frame(l, n->kids[i], kx, depth + 1);
		kx += n->kids[i]->value * l->scale;
	}
}

/* Zoom, search and labels: plain ES5, no external resources. */
static const char flame_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"var W = %.1f, P = %.1f, frames = [], matchEl, zoomed = null;\n"
	"function nameOf(g) { var t = g.firstChild.textContent; return t.substring(0, t.lastIndexOf(' (')); }\n"
	"function label(g, x, w) {\n"
	"  var t = g.lastChild, n = nameOf(g), fit = Math.floor((w - 6) / 7);\n"
	"  t.setAttribute('x', x + 3);\n"
	"  t.textContent = fit < 3 ? '' : n.length <= fit ? n : n.substring(0, fit - 2) + '..';\n"
	"}\n"
	"function init() {\n"
	"  var gs = document.getElementsByClassName('f');\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var r = gs[i].getElementsByTagName('rect')[0];\n"
	"    frames.push({ g: gs[i], r: r, x: +r.getAttribute('x'), y: +r.getAttribute('y'),\n"
	"                  w: +r.getAttribute('width'), fill: r.getAttribute('fill') });\n"
	"    gs[i].onclick = (function (f) { return function () { zoom(f); }; })(frames[i]);\n"
	"  }\n"
	"  matchEl = document.getElementById('matched');\n"
	"  document.getElementById('search').onclick = search;\n"
	"  document.getElementById('reset').onclick = function () { zoom(null); search(''); };\n"
	"}\n"
	"function zoom(z) {\n"
	"  zoomed = z;\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], x = f.x, w = f.w, show = true;\n"
	"    if (z) {\n"
	"      if (f.y >= z.y) {  /* z, its ancestors, or frames beside it */\n"
	"        show = f.x <= z.x + 1e-6 && f.x + f.w >= z.x + z.w - 1e-6;\n"
	"        if (show) { x = P; w = W - 2 * P; }\n"
	"      } else {\n"
	"        show = f.x >= z.x - 1e-6 && f.x + f.w <= z.x + z.w + 1e-6;\n"
	"        x = P + (f.x - z.x) * (W - 2 * P) / z.w; w = f.w * (W - 2 * P) / z.w;\n"
	"      }\n"
	"    }\n"
	"    f.g.style.display = show ? '' : 'none';\n"
	"    f.r.setAttribute('x', x); f.r.setAttribute('width', w); label(f.g, x, w);\n"
	"  }\n"
	"}\n"
	"function search(re) {\n"
	"  if (typeof re !== 'string') re = prompt('Search frames (regular expression)', '');\n"
	"  if (re === null) return;\n"
	"  var rx = re ? new RegExp(re) : null, spans = [], total = frames.length ? frames[0].w : 0;\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], hit = rx && i > 0 && rx.test(nameOf(f.g));\n"
	"    f.r.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);\n"
	"    if (hit) spans.push([f.x, f.x + f.w]);\n"
	"  }\n"
	"  /* a match inside another match counts once */\n"
	"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var sum = 0, end = -1;\n"
	"  for (var j = 0; j < spans.length; j++) {\n"
	"    if (spans[j][0] >= end - 1e-6) { sum += spans[j][1] - spans[j][0]; end = spans[j][1]; }\n"
	"  }\n"
	"  matchEl.textContent = rx ? 'Matched: ' + (total ? (100 * sum / total).toFixed(1) : 0) + '%%' : '';\n"
	"}\n"
	"]]></script>\n";

int flame_write(const struct flame_stack *stacks, size_t n, const char *unit, const char *title,
		FILE *f)
{
	return flame_write_with(stacks, n, unit, title, NULL, f);
}

int flame_write_with(const struct flame_stack *stacks, size_t n, const char *unit,
		     const char *title, const struct flame_timeline *tl, FILE *f)
{
	struct node *root = xcalloc(1, sizeof(*root));
	struct layout l = { .f = f, .unit = unit ? unit : "" };
	unsigned depth;

	root->name = "all";
	for (size_t i = 0; i < n; i++) {
		struct node *p = root;

		root->value += stacks[i].value;
		for (size_t k = 0; k < stacks[i].n_frames; k++) {
			p = node_child(p, stacks[i].frames[k]);
			p->value += stacks[i].value;
		}
	}
	depth = node_finish(root);
	l.total = root->value;
	l.scale = l.total ? (FLAME_WIDTH - 2 * FLAME_PAD) / l.total : 0;
	l.height = FLAME_TOP + (depth + 1) * FLAME_FRAME_H + 2 * FLAME_PAD;
	if (tl && tl->n)	/* frames count from the bottom: the band goes above them */
		l.height += FLAME_CHART_H;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%u\" viewBox=\"0 0 %.0f %u\" onload=\"init()\">\n"
		"<style type=\"text/css\"><![CDATA[\n"
		"text { font-family: Verdana, Helvetica, sans-serif; font-size: 12px; fill: #000; }\n"
		".f:hover rect { stroke: #000; stroke-width: 0.5; } .f { cursor: pointer; }\n"
		"#title { font-size: 17px; } .button { cursor: pointer; fill: #333; }\n"
		"]]></style>\n", FLAME_WIDTH, l.height, FLAME_WIDTH, l.height);
	fprintf(f, flame_script, FLAME_WIDTH, FLAME_PAD);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%u\" fill=\"#f8f8f0\"/>\n"
		"<text id=\"title\" x=\"%.1f\" y=\"24\" text-anchor=\"middle\">", FLAME_WIDTH,
		l.height, FLAME_WIDTH / 2);
	put_xml(f, title ? title : "Flame Graph");
	fprintf(f, "</text>\n<text id=\"reset\" class=\"button\" x=\"%.1f\" y=\"24\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%.1f\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%.1f\" y=\"40\" text-anchor=\"end\"></text>\n",
		FLAME_PAD, FLAME_WIDTH - FLAME_PAD, FLAME_WIDTH - FLAME_PAD);
	if (tl && tl->n)
		chart_write_svg(tl->points, tl->n, tl->peak, tl->unit, FLAME_CHART_X,
				FLAME_TOP + 10, FLAME_WIDTH - FLAME_CHART_X - 2 * FLAME_PAD, 80, f);
	put_frame(&l, root, FLAME_PAD, 0);
	fputs("</svg>\n", f);
	node_free(root);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
