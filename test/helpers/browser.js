// Drive a page in headless Chromium over the DevTools protocol, with node's own
// WebSocket (node --experimental-websocket on node 20): no driver to install.
//   node --experimental-websocket test/helpers/browser.js PAGE SCENARIO.js [ARG...]
// SCENARIO.js exports async (page, args) => {...}; page.eval(expr) gives the value,
// page.click(selector) clicks the element's centre with real mouse events,
// page.type(selector, text), page.select(selector, value), page.screenshot(file).
// Fails (exit 1) on a thrown assertion, any console error or uncaught exception, and
// any request other than the page itself.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [pageFile, scenarioFile, ...args] = process.argv.slice(2);
// Chromium keeps its temporary files in TMPDIR: the profile, removed at the end. Its
// socket there (org.chromium.Chromium.XXXXXX/SingletonSocket, 45 bytes more) must fit
// a Unix socket's 107 bytes, which a test's deep TMPDIR may not leave room for.
const base = os.tmpdir().length + 20 + 45 <= 107 ? os.tmpdir() : '/tmp';
const profile = fs.mkdtempSync(path.join(base, 'hp-chromium-'));
const chrome = spawn(process.env.CHROMIUM || 'chromium', ['--headless', '--no-sandbox',
	'--disable-gpu', '--no-first-run', '--no-default-browser-check', '--disable-extensions',
	'--disable-background-networking', '--disable-component-update', '--disable-sync',
	'--remote-debugging-port=0', '--user-data-dir=' + profile, '--window-size=1280,900',
	'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'],
	env: Object.assign({}, process.env, { TMPDIR: profile }) });
let chromeErr = '';
chrome.stderr.on('data', (d) => { chromeErr += d; });

function fail(msg) {
	console.error('browser: ' + msg);
	finish(1);
}
// Chromium is killed and waited for before its profile is removed: a browser still
// running for a moment would write its files into the directory again.
let finishing = false;
function finish(code) {
	if (finishing)
		return;
	finishing = true;
	const done = () => {
		try {
			fs.rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
		} catch (e) {
			console.error('browser: ' + profile + ' left: ' + e.message);
		}
		process.exit(code);
	};
	if (chrome.exitCode !== null || chrome.signalCode !== null)
		return done();
	chrome.once('exit', done);
	chrome.kill('SIGKILL');
}
setTimeout(() => fail('timed out; chromium said:\n' + chromeErr.slice(-2000)), 90000);

async function port() {
	const file = path.join(profile, 'DevToolsActivePort');
	for (let i = 0; i < 300; i++) {
		if (fs.existsSync(file)) {
			const p = fs.readFileSync(file, 'utf8').split('\n')[0];
			if (p)
				return p;
		}
		await new Promise((r) => setTimeout(r, 100));
	}
	throw new Error('chromium did not start:\n' + chromeErr.slice(-2000));
}

async function main() {
	const p = await port();
	const list = await (await fetch(`http://127.0.0.1:${p}/json/list`)).json();
	const target = list.find((t) => t.type === 'page');
	const ws = new WebSocket(target.webSocketDebuggerUrl);
	await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
	let id = 0;
	const waiting = new Map(), errors = [], requests = [];
	let loaded = null;
	ws.onmessage = (m) => {
		const msg = JSON.parse(m.data);
		if (msg.id && waiting.has(msg.id)) {
			const w = waiting.get(msg.id);
			waiting.delete(msg.id);
			msg.error ? w.j(new Error(JSON.stringify(msg.error))) : w.r(msg.result);
		} else if (msg.method === 'Runtime.exceptionThrown') {
			errors.push(msg.params.exceptionDetails.exception ?
				msg.params.exceptionDetails.exception.description : msg.params.exceptionDetails.text);
		} else if (msg.method === 'Runtime.consoleAPICalled' &&
			   ['error', 'assert', 'warning'].includes(msg.params.type)) {
			errors.push('console.' + msg.params.type + ': ' + msg.params.args.map((a) => a.value || a.description).join(' '));
		} else if (msg.method === 'Log.entryAdded' && msg.params.entry.level === 'error') {
			errors.push('log: ' + msg.params.entry.text);
		} else if (msg.method === 'Network.requestWillBeSent') {
			requests.push(msg.params.request.url);
		} else if (msg.method === 'Page.loadEventFired' && loaded) {
			loaded();
		}
	};
	const send = (method, params = {}) => new Promise((r, j) => {
		waiting.set(++id, { r, j });
		ws.send(JSON.stringify({ id, method, params }));
	});
	for (const d of ['Runtime', 'Log', 'Network', 'Page'])
		await send(d + '.enable');
	await send('Emulation.setDeviceMetricsOverride', { width: 1200, height: 900, deviceScaleFactor: 1, mobile: false });
	const url = 'file://' + path.resolve(pageFile);
	const t0 = Date.now();
	await new Promise((r) => { loaded = r; send('Page.navigate', { url }); });
	const loadMs = Date.now() - t0;

	const page = {
		loadMs,
		errors,
		async eval(expr) {
			const res = await send('Runtime.evaluate', { expression: expr, returnByValue: true, awaitPromise: true });
			if (res.exceptionDetails)
				throw new Error('in page: ' + expr + ': ' + (res.exceptionDetails.exception || {}).description);
			return res.result.value;
		},
		async click(selector) {
			const box = await page.eval(`(function () { var e = document.querySelector(${JSON.stringify(selector)});
				if (!e) return null; e.scrollIntoView({ block: 'center' }); var r = e.getBoundingClientRect();
				return { x: r.left + Math.min(r.width / 2, 5), y: r.top + r.height / 2 }; })()`);
			if (!box)
				throw new Error('nothing matches ' + selector);
			for (const type of ['mouseMoved', 'mousePressed', 'mouseReleased'])
				await send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 });
		},
		async type(selector, text) {
			await page.eval(`document.querySelector(${JSON.stringify(selector)}).focus()`);
			await send('Input.insertText', { text });
		},
		async select(selector, value) {
			await page.eval(`(function () { var e = document.querySelector(${JSON.stringify(selector)});
				e.value = ${JSON.stringify(value)}; e.dispatchEvent(new Event('change')); })()`);
		},
		async screenshot(file, height) {
			const r = await send('Page.captureScreenshot', { format: 'png',
				clip: { x: 0, y: 0, width: 1200, height: height || 700, scale: 1 } });
			fs.writeFileSync(file, Buffer.from(r.data, 'base64'));
		},
	};
	const assert = (ok, msg) => { if (!ok) throw new Error('assertion failed: ' + msg); };
	await require(path.resolve(scenarioFile))(page, args, assert);
	await new Promise((r) => setTimeout(r, 100));	/* late errors and requests */
	const others = requests.filter((u) => u !== url);
	if (others.length)
		fail('the page fetched: ' + others.join(', '));
	if (errors.length)
		fail('errors in the page: ' + errors.join('\n'));
	console.log('load_ms ' + loadMs);
	/* when the page drew its first flame graph, from the start of navigation */
	const drawn = await page.eval(`(performance.getEntriesByName('hp-drawn')[0] || {}).startTime`);
	if (drawn !== undefined)
		console.log('drawn_ms ' + Math.round(drawn));
	finish(0);
}
main().catch((e) => fail(e.stack || String(e)));
