// Scenarios for test/helpers/browser.js on pages of -f html (t4008). args: steps separated by
// "--", each MODE then the mode's arguments, run in order on the one page.
//   names NAME...        every NAME is a box of the flame graph
//   zoom NAME            clicking NAME's box makes it the root: full width, last crumb;
//                        the "all" crumb zooms back out
//   search RE SHARE      typing RE in the search box highlights its boxes and says the
//                        matched share, SHARE (to 1e-6)
//   metric IDX NAME SHARE  after choosing metric IDX, NAME's boxes together are SHARE of
//                        the width (to 0.5 px)
//   hover NAME TEXT      the tooltip over NAME's box holds TEXT
//   diff                 rows of growth are marked, and boxes coloured red or blue
//   text SELECTOR TEXT   the element's text holds TEXT
//   untext SELECTOR TEXT the element's text does not hold TEXT
//   select SELECTOR VALUE  choose VALUE in the select element
//   timeline PEAK        the timeline chart is shown, its peak marker says PEAK bytes
//                        (as "83,886,080"), the area's highest point is the marker's,
//                        and the tooltip over it gives those figures
//   first                on load, the graph (deeper than its view) is the first thing on
//                        the screen (the summary below it), and the heaviest stack's frames
//                        half the graph's width or wider are drawn in view, boxes covering
//                        30% or more of the graph's area in view (a deep, thin stack's: 2%)
//   shot FILE            a screenshot of the top of the page
'use strict';
module.exports = async (page, args, assert) => {
	const steps = [[]];
	for (const x of args)
		x === '--' ? steps.push([]) : steps[steps.length - 1].push(x);
	for (const s of steps)
		await step(page, s, assert);
};

async function step(page, args, assert) {
	const [mode, ...a] = args;
	const boxes = (n) => `boxes.filter(function (b) { return b.n.fi >= 0 && name(b.n.fi) === ${JSON.stringify(n)}; })`;
	const q = JSON.stringify;
	switch (mode) {
	case 'names':
		for (const n of a)
			assert(await page.eval(`${boxes(n)}.length > 0`), 'no box for ' + n);
		break;
	case 'zoom': {
		const i = await page.eval(`boxes.indexOf(${boxes(a[0])}[0])`);
		assert(i >= 0, 'no box for ' + a[0]);
		await page.click(`#graph .fr[data-i="${i}"]`);
		const r = await page.eval(`[name(boxes[0].n.fi), boxes[0].w, document.getElementById('graph').clientWidth,
			document.getElementById('crumbs').lastChild.textContent, document.getElementById('crumbs').firstChild.textContent]`);
		assert(r[0] === a[0] && Math.abs(r[1] - r[2]) < 0.01 && r[3] === a[0] && r[4] === 'all', 'zoom: ' + JSON.stringify(r));
		await page.click('#crumbs a');
		assert(await page.eval(`boxes[0].n.fi === -1`), 'the "all" crumb did not zoom out');
		break;
	}
	case 'search': {
		await page.type('#search', a[0]);
		const r = await page.eval(`[+document.getElementById('match').dataset.share, document.getElementById('match').textContent,
			document.querySelectorAll('#graph .fr.hit').length,
			boxes.filter(function (b) { return b.n.fi >= 0 && new RegExp(${q(a[0])}).test(name(b.n.fi)); }).length]`);
		assert(Math.abs(r[0] - +a[1]) < 1e-6, `share ${r[0]} (${r[1]}), expected ${a[1]}`);
		assert(r[2] > 0 && r[2] === r[3], `${r[2]} boxes highlighted, ${r[3]} match`);
		break;
	}
	case 'metric': {
		await page.select('#metric', a[0]);
		const r = await page.eval(`[${boxes(a[1])}.reduce(function (s, b) { return s + b.w; }, 0),
			document.getElementById('graph').clientWidth,
			${boxes(a[1])}.reduce(function (s, b) { return s + parseFloat(document.querySelector('#graph .fr[data-i="' + boxes.indexOf(b) + '"]').style.width); }, 0)]`);
		const want = r[1] * +a[2];
		assert(Math.abs(r[0] - want) < 0.5 && Math.abs(r[2] - want) < 0.5, `${a[1]}: ${r[0]} (drawn ${r[2]}) px of ${r[1]}, expected ${want}`);
		break;
	}
	case 'hover': {
		const i = await page.eval(`boxes.indexOf(${boxes(a[0])}[0])`);
		await page.click(`#graph .fr[data-i="${i}"]`.replace(/$/, ''));	/* moves the mouse there first */
		await page.click('#crumbs a');	/* and back out */
		const j = await page.eval(`boxes.indexOf(${boxes(a[0])}[0])`);
		const t = await page.eval(`(function () { var e = document.querySelector('#graph .fr[data-i="${j}"]'), r = e.getBoundingClientRect();
			e.dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: r.left + 2, clientY: r.top + 2 }));
			return [document.getElementById('tip').style.display, document.getElementById('tip').textContent]; })()`);
		assert(t[0] === 'block' && t[1].includes(a[1]), 'tooltip: ' + JSON.stringify(t));
		break;
	}
	case 'diff': {
		const r = await page.eval(`[document.querySelector('#stacks tr.row td').className,
			Array.from(document.querySelectorAll('#graph .fr')).some(function (e) { return /^rgb\\(245, /.test(e.style.background); }),
			Array.from(document.querySelectorAll('#graph .fr')).some(function (e) { return /, 245\\)$/.test(e.style.background); })]`);
		assert(r[0] === 'grow' && r[1], 'diff: ' + JSON.stringify(r));
		if (a[0] === 'shrink')
			assert(r[2], 'no shrinking box drawn blue');
		break;
	}
	case 'text': {
		const t = await page.eval(`document.querySelector(${q(a[0])}).textContent`);
		assert(t.includes(a[1]), `${a[0]}: ${JSON.stringify(t.slice(0, 300))} lacks ${a[1]}`);
		break;
	}
	case 'untext': {
		const t = await page.eval(`document.querySelector(${q(a[0])}).textContent`);
		assert(!t.includes(a[1]), `${a[0]}: ${JSON.stringify(t.slice(0, 300))} holds ${a[1]}`);
		break;
	}
	case 'select':
		await page.select(a[0], a[1]);
		break;
	case 'timeline': {
		const r = await page.eval(`(function () { var s = document.getElementById('tl-sec'), p = document.querySelector('#tl-peak circle'),
			b = p.getBoundingClientRect();
			p.dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: b.left + b.width / 2, clientY: b.top + b.height / 2 }));
			return [s.hidden, document.querySelector('#tl-peak title').textContent, document.querySelector('#tl-now title').textContent,
				document.getElementById('tip').style.display, document.getElementById('tip').textContent,
				document.querySelectorAll('#tl polygon').length, +p.getAttribute('cy'),
				document.querySelector('#tl polygon').getAttribute('points').split(' ').reduce(function (m, xy) {
					return Math.min(m, +xy.split(',')[1]); }, Infinity)]; })()`);
		assert(!r[0] && r[5] === 1, 'timeline not drawn: ' + JSON.stringify(r));
		assert(Math.abs(r[6] - r[7]) < 0.06, `the area's top at y ${r[7]}, the peak marker at ${r[6]}`);
		assert(r[1].startsWith('peak: ' + a[0] + ' bytes in '), 'peak marker: ' + r[1]);
		assert(r[3] === 'block' && r[4].includes('(peak)') && r[4].includes('live bytes: ' + a[0]), 'tooltip: ' + JSON.stringify(r[4]));
		break;
	}
	case 'first': {
		const r = await page.eval(`(function () {
			var v = document.getElementById('graph-view') || document.getElementById('graph'), g = v.getBoundingClientRect(),
				s = document.getElementById('summary').getBoundingClientRect(), H = window.innerHeight;
			/* the part of the graph on the screen, and the boxes in it */
			var top = Math.max(g.top, 0), bottom = Math.min(g.bottom, H), area = Math.max(0, bottom - top) * g.width, drawn = 0;
			var v0 = D.v[fig()], heavy = 0, i, on = {}, wide = 0;
			for (i = 1; i < NS; i++)
				if (Math.abs(v0[i]) > Math.abs(v0[heavy])) heavy = i;
			for (var id = ENDS[heavy]; id >= 0; id = UP[id]) on[id] = 1;
			Array.prototype.forEach.call(document.querySelectorAll('#graph .fr'), function (e) {
				var r = e.getBoundingClientRect(), h = Math.min(r.bottom, bottom) - Math.max(r.top, top);
				if (h <= 0) return;
				drawn += h * r.width;
				if (on[boxes[e.dataset.i].n.id] && r.width >= g.width / 2) wide++;
			});
			return { graphTop: Math.round(g.top), summaryTop: Math.round(s.top), graphBottom: Math.round(g.bottom),
				height: H, deep: document.getElementById('graph').offsetHeight, wide: wide,
				covered: area ? drawn / area : 0 };
		})()`);
		const msg = 'first screen: ' + JSON.stringify(r);
		assert(r.graphTop >= 0 && r.graphTop < 200 && r.summaryTop >= r.graphBottom && r.graphBottom <= r.height, msg);
		assert(r.deep > r.graphBottom - r.graphTop, 'the graph fits its view: ' + msg);
		assert(r.wide >= 2 && r.covered >= 0.3, msg);
		break;
	}
	case 'shot':
		await page.screenshot(a[0], 640);
		break;
	default:
		throw new Error('unknown mode ' + mode);
	}
}
