// Drives audioc-server's web page in Chromium (or Firefox; puppeteer-core,
// headless) as a person would: node web_page.js CONFIG.json. CONFIG names the browser,
// the servers' URLs, the files to use and the folders for screenshots and
// downloads; prints one JSON object: what each scenario saw (tests/server/
// test_web.py checks it). A scenario that throws reports {"error": ...}.
"use strict";
const fs = require("fs");
const path = require("path");
const puppeteer = require("puppeteer-core");

const cfg = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const TIMEOUT = cfg.timeout_ms || 60000;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 667, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let browser;

// A page at URL with its console errors, uncaught errors and every request
// not to the server's origin recorded.
async function open(url, viewport = DESKTOP) {
  const page = await browser.newPage();
  page.setDefaultTimeout(TIMEOUT);
  await page.setViewport(viewport);
  const seen = { console_errors: [], page_errors: [], external: [], requests: [] };
  const origin = new URL(url).origin;
  page.on("console", (m) => { if (m.type() === "error") seen.console_errors.push(m.text()); });
  page.on("pageerror", (e) => seen.page_errors.push(String(e)));
  page.on("request", (r) => {
    const u = r.url();
    seen.requests.push(u);
    if (!u.startsWith(origin) && !u.startsWith("blob:") && !u.startsWith("data:")) seen.external.push(u);
  });
  await page.goto(url, { waitUntil: "load" });
  return { page, seen };
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(cfg.shots, `${name}.png`), fullPage: true });
}

// Saves the page's downloads into a fresh folder; returns it.
async function downloadsTo(page, name) {
  const dir = path.join(cfg.downloads, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const cdp = await page.createCDPSession();
  await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: dir });
  return dir;
}

async function waitForFile(dir, name) {
  const p = path.join(dir, name);
  for (let i = 0; i < 200; i++) {
    if (fs.existsSync(p) && !fs.existsSync(`${p}.crdownload`)) return fs.readFileSync(p, "utf8");
    await sleep(50);
  }
  throw new Error(`no download ${name} in ${dir}: ${fs.readdirSync(dir)}`);
}

const served = (page) => page.waitForFunction(
  () => /^\d+ models?:/.test(document.getElementById("served").textContent), { timeout: TIMEOUT });

// Transcribes FILE on PAGE; returns what the page shows when done (or its error).
async function transcribe(page, file) {
  await page.evaluate(() => {
    window.__added = [];
    const list = document.getElementById("t-segments");
    new MutationObserver((ms) => {
      for (const m of ms) for (const n of m.addedNodes) if (n.tagName === "LI") window.__added.push({ done: list.dataset.state === "done" });
    }).observe(list, { childList: true });
  });
  const input = await page.$("#t-file");
  await input.uploadFile(file);
  await page.click("#t-go");
  await page.waitForFunction(() => !document.getElementById("t-error").hidden ||
    !document.querySelector('#t-result [data-format="srt"]').disabled, { timeout: TIMEOUT });
  return page.evaluate(() => ({
    error: document.getElementById("t-error").hidden ? null : document.getElementById("t-error").textContent,
    segments: [...document.querySelectorAll("#t-segments li")].map((li) => ({
      time: li.querySelector(".time").textContent, text: li.querySelector(".text").textContent,
      start: Number(li.dataset.start), end: Number(li.dataset.end),
    })),
    streamed: window.__added.filter((a) => !a.done).length,
    status: document.getElementById("t-status").textContent,
  }));
}

const scenarios = {
  // the page, what the server serves, no console errors, nothing fetched elsewhere
  async load() {
    const { page, seen } = await open(cfg.base);
    await served(page);
    const out = await page.evaluate(() => ({
      served: document.getElementById("served").textContent,
      asr_models: [...document.querySelectorAll("#t-model option")].map((o) => o.value),
      voices: [...document.querySelectorAll("#s-voice option")].map((o) => o.value),
      speak_routes: [...document.querySelectorAll("#s-route option")].map((o) => o.value),
      convert_routes: [...document.querySelectorAll("#c-route option")].map((o) => o.value),
      // what is hidden is not shown: no progress, error or result before a request
      shown_hidden: [...document.querySelectorAll("[hidden]")].filter((e) => getComputedStyle(e).display !== "none")
        .map((e) => e.id),
    }));
    await shot(page, "desktop-load");
    await page.close();
    return { ...out, ...seen };
  },

  // a file: streamed segments with times, then the downloads
  async transcribe_file() {
    const { page, seen } = await open(cfg.base);
    await served(page);
    const dir = await downloadsTo(page, "transcribe");
    const out = await transcribe(page, cfg.files.speech);
    out.downloads = {};
    if (!out.error) {
      for (const f of ["txt", "srt", "vtt", "json"]) {
        await page.click(`#t-result [data-format="${f}"]`);
        out.downloads[f] = await waitForFile(dir, `${path.basename(cfg.files.speech).replace(/\.[^.]*$/, "")}.${f}`);
      }
      // playback marks the segment being played
      out.highlight = await page.evaluate(async () => {
        const a = document.getElementById("t-audio");
        const li = document.querySelector("#t-segments li");
        a.muted = true;
        a.currentTime = (Number(li.dataset.start) + Number(li.dataset.end)) / 2;
        await new Promise((r) => a.addEventListener("seeked", r, { once: true }));
        return li.classList.contains("current") && li.getAttribute("aria-current") === "true";
      });
    }
    await shot(page, "desktop-transcribed");
    // a phone's width (isMobile would reload the page and lose the transcript)
    await page.setViewport({ width: PHONE.width, height: PHONE.height, deviceScaleFactor: 2 });
    out.phone_overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await shot(page, "phone-transcribed");
    await page.close();
    return { ...out, ...seen };
  },

  // bytes that are not audio: the server's message on the page
  async bad_file() {
    const { page } = await open(cfg.base);
    await served(page);
    const out = await transcribe(page, cfg.files.bad);
    await shot(page, "desktop-error");
    await page.close();
    return out;
  },

  // Cancel while a long file is recognized: the request is aborted
  async cancel() {
    const { page } = await open(cfg.base);
    await served(page);
    await (await page.$("#t-file")).uploadFile(cfg.files.long);
    await page.evaluate(() => {   // the slowest settings: the work lasts long enough to be cancelled
      document.getElementById("t-vad").value = "false";
      document.getElementById("t-beam").value = "16";
    });
    await page.click("#t-go");
    // the first segments are streamed: the work is under way
    await page.waitForFunction(() => /Recogni/.test(document.getElementById("t-status").textContent));
    await sleep(cfg.cancel_after_ms || 0);
    const running = await page.evaluate(() => !document.getElementById("t-cancel").disabled);
    const clicked = Date.now();
    await page.click("#t-cancel");
    await page.waitForFunction(() => document.getElementById("t-cancel").disabled);
    const out = await page.evaluate(() => ({
      status: document.getElementById("t-status").textContent,
      error: document.getElementById("t-error").hidden ? null : document.getElementById("t-error").textContent,
      go_enabled: !document.getElementById("t-go").disabled,
    }));
    await shot(page, "desktop-cancelled");
    await page.close();
    return { running, clicked_ms: clicked, ...out };
  },

  // the microphone (Chromium's fake capture device playing a file)
  async microphone() {
    const { page } = await open(cfg.base);
    await served(page);
    await page.click("#t-record");
    await sleep(cfg.record_ms || 1500);
    await page.click("#t-record");
    await page.waitForFunction(() => !document.getElementById("t-error").hidden ||
      !document.querySelector('#t-result [data-format="srt"]').disabled, { timeout: TIMEOUT });
    const out = await page.evaluate(() => ({
      error: document.getElementById("t-error").hidden ? null : document.getElementById("t-error").textContent,
      recorded: document.getElementById("t-record-time").textContent,
      text: [...document.querySelectorAll("#t-segments li .text")].map((e) => e.textContent).join(" "),
    }));
    await page.close();
    return out;
  },

  // speech from text, streamed and not: what the page plays and offers
  async speak() {
    const { page, seen } = await open(`${cfg.base}#speak`);
    await served(page);
    const out = {};
    for (const stream of [true, false]) {
      await page.evaluate((s, opt) => {
        document.getElementById("s-text").value = opt.input;
        document.getElementById("s-voice").value = opt.voice;
        document.getElementById("s-stream").checked = s;
        document.getElementById("s-format").value = "wav";
        for (const [k, v] of Object.entries(opt.fields)) document.getElementById(k).value = String(v);
      }, stream, cfg.speak);
      await page.click("#s-go");
      await page.waitForFunction(() => !document.getElementById("s-error").hidden ||
        document.getElementById("s-download").hasAttribute("href"), { timeout: TIMEOUT });
      out[stream ? "streamed" : "whole"] = await page.evaluate(async () => {
        const err = document.getElementById("s-error");
        if (!err.hidden) return { error: err.textContent };
        const href = document.getElementById("s-download").href;
        const bytes = new Uint8Array(await (await fetch(href)).arrayBuffer());
        let s = "";
        for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
        const ctx = new OfflineAudioContext(1, 1, 24000);
        const decoded = await ctx.decodeAudioData(bytes.buffer.slice(0));
        return { base64: btoa(s), duration: decoded.duration, name: document.getElementById("s-download").download,
                 status: document.getElementById("s-status").textContent };
      });
      await shot(page, stream ? "desktop-speak-streamed" : "desktop-speak");
    }
    await page.close();
    return { ...out, console_errors: seen.console_errors, page_errors: seen.page_errors };
  },

  // word timestamps: each word its own span, marked while it plays
  async words() {
    const { page } = await open(cfg.base);
    await served(page);
    await page.evaluate(() => { document.getElementById("t-words").checked = true; });
    const out = await transcribe(page, cfg.files.speech);
    out.words = await page.evaluate(() => [...document.querySelectorAll("#t-segments .word")].map((w) => ({
      word: w.textContent, start: Number(w.dataset.start), end: Number(w.dataset.end) })));
    out.marked = await page.evaluate(async () => {
      const a = document.getElementById("t-audio");
      const span = (w) => Number(w.dataset.end) - Number(w.dataset.start);
      const w = [...document.querySelectorAll("#t-segments .word")].reduce((b, x) => (!b || span(x) > span(b) ? x : b), null);
      if (!w) return null;
      a.muted = true;
      a.currentTime = (Number(w.dataset.start) + Number(w.dataset.end)) / 2;
      await new Promise((r) => a.addEventListener("seeked", r, { once: true }));
      return { played: w.textContent,
               marked: [...document.querySelectorAll("#t-segments .word.current")].map((e) => e.textContent) };
    });
    await shot(page, "desktop-words");
    await page.close();
    return out;
  },

  // a recording from the (fake) microphone in a served voice
  async convert_recording() {
    const { page } = await open(`${cfg.base}#convert`);
    await served(page);
    await page.click("#c-record");
    await sleep(cfg.record_ms || 1500);
    await page.click("#c-record");
    await page.waitForFunction(() => /recorded/.test(document.getElementById("c-record-time").textContent));
    await page.evaluate((opt) => {
      document.getElementById("c-voice").value = opt.voice;
      for (const [k, v] of Object.entries(opt.fields)) document.getElementById(k).value = String(v);
    }, cfg.convert);
    await page.click("#c-go");
    await page.waitForFunction(() => !document.getElementById("c-error").hidden ||
      !document.getElementById("c-result").hidden, { timeout: TIMEOUT });
    const out = await page.evaluate(async () => {
      const err = document.getElementById("c-error");
      if (!err.hidden) return { error: err.textContent };
      const bytes = await (await fetch(document.getElementById("c-download").href)).arrayBuffer();
      const decoded = await new OfflineAudioContext(1, 1, 24000).decodeAudioData(bytes);
      return { duration: decoded.duration, name: document.getElementById("c-download").download };
    });
    await page.close();
    return out;
  },

  // speech in an uploaded reference voice with its transcript
  async speak_upload() {
    const { page } = await open(`${cfg.base}#speak`);
    await served(page);
    await (await page.$("#s-voice-file")).uploadFile(cfg.files.source);
    await page.evaluate((opt) => {
      document.getElementById("s-text").value = opt.input;
      document.getElementById("s-voice-text").value = opt.voice_text;
      document.getElementById("s-stream").checked = false;
      document.getElementById("s-format").value = "wav";
      for (const [k, v] of Object.entries(opt.fields)) document.getElementById(k).value = String(v);
    }, cfg.speak);
    await page.click("#s-go");
    await page.waitForFunction(() => !document.getElementById("s-error").hidden ||
      document.getElementById("s-download").hasAttribute("href"), { timeout: TIMEOUT });
    const out = await page.evaluate(async () => {
      const err = document.getElementById("s-error");
      if (!err.hidden) return { error: err.textContent };
      const bytes = new Uint8Array(await (await fetch(document.getElementById("s-download").href)).arrayBuffer());
      let s = "";
      for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
      return { base64: btoa(s) };
    });
    await page.close();
    return out;
  },

  // a recording in a served voice
  async convert() {
    const { page } = await open(`${cfg.base}#convert`);
    await served(page);
    await (await page.$("#c-file")).uploadFile(cfg.files.source);
    await page.evaluate((opt) => {
      document.getElementById("c-voice").value = opt.voice;
      for (const [k, v] of Object.entries(opt.fields)) document.getElementById(k).value = String(v);
    }, cfg.convert);
    await page.click("#c-go");
    await page.waitForFunction(() => !document.getElementById("c-error").hidden ||
      !document.getElementById("c-result").hidden, { timeout: TIMEOUT });
    const out = await page.evaluate(async () => {
      const err = document.getElementById("c-error");
      if (!err.hidden) return { error: err.textContent };
      const bytes = new Uint8Array(await (await fetch(document.getElementById("c-download").href)).arrayBuffer());
      let s = "";
      for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
      return { base64: btoa(s) };
    });
    await shot(page, "desktop-convert");
    await page.close();
    return out;
  },

  // a server with --api-key: the page asks, shows the server's 401 message, keeps the key
  async api_key() {
    const { page } = await open(cfg.key_base);
    const dialogText = () => page.evaluate(() => {
      const d = document.getElementById("key-dialog");
      return d.open ? document.getElementById("key-why").textContent : null;
    });
    await page.waitForFunction(() => document.getElementById("key-dialog").open);
    const first = await dialogText();
    await shot(page, "desktop-key");
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
    await page.type("#key-input", "wrong-key");
    await page.click("#key-save");
    await page.waitForFunction(() => document.getElementById("key-dialog").open);
    const wrong = await dialogText();
    await page.evaluate(() => { document.getElementById("key-input").value = ""; });
    await page.type("#key-input", cfg.key);
    await page.keyboard.press("Enter");
    await served(page);
    const after = await page.evaluate(() => document.getElementById("served").textContent);
    await page.reload({ waitUntil: "load" });
    await served(page);
    const kept = await page.evaluate(() => ({
      dialog: document.getElementById("key-dialog").open, stored: localStorage.getItem("audioc.apiKey"),
    }));
    await page.close();
    return { first, focused, wrong, after, kept };
  },

  // keyboard only: every control of each panel is reached with Tab, in
  // document order; every field has a label
  async keyboard() {
    const { page } = await open(cfg.base);
    await served(page);
    const out = { panels: {} };
    out.unlabelled = await page.evaluate(() => [...document.querySelectorAll("input, select, textarea")]
      .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute("aria-label") &&
        !e.getAttribute("aria-labelledby")).map((e) => e.id || e.outerHTML.slice(0, 60)));
    out.nameless_buttons = await page.evaluate(() => [...document.querySelectorAll("button, a.button")]
      .filter((b) => !b.textContent.trim() && !b.getAttribute("aria-label")).map((b) => b.id || b.outerHTML.slice(0, 60)));
    out.positive_tabindex = await page.evaluate(() => [...document.querySelectorAll("[tabindex]")]
      .filter((e) => e.tabIndex > 0).map((e) => e.id));
    for (const [panel, tab] of [["transcribe", 0], ["speak", 1], ["convert", 2]]) {
      // the tab chosen with the arrow keys from the first tab
      await page.focus("#tab-transcribe");
      for (let i = 0; i < tab; i++) await page.keyboard.press("ArrowRight");
      const shown = await page.evaluate((p) => !document.getElementById(p).hidden, panel);
      await page.evaluate((p) => document.querySelectorAll(`#${p} details`).forEach((d) => { d.open = true; }), panel);
      const want = await page.evaluate((p) => [...document.querySelectorAll(
        `#${p} input, #${p} select, #${p} textarea, #${p} button, #${p} summary, #${p} a[href]`)]
        .filter((e) => !e.disabled && e.offsetParent !== null).map((e) => e.id || e.tagName.toLowerCase()), panel);
      const reached = [];
      for (let i = 0; i < 60; i++) {
        await page.keyboard.press("Tab");
        const id = await page.evaluate((p) => {
          const e = document.activeElement;
          return e && document.getElementById(p).contains(e) ? (e.id || e.tagName.toLowerCase()) : null;
        }, panel);
        if (id && !reached.includes(id)) reached.push(id);
        if (!id && reached.length) break;   // out of the panel: done
      }
      out.panels[panel] = { shown, want, reached };
    }
    await page.close();
    return out;
  },

  // behind a reverse proxy at a sub-path: every request stays under it
  async subpath() {
    const { page, seen } = await open(cfg.sub_base);
    await served(page);
    const out = await transcribe(page, cfg.files.speech);
    await page.close();
    const prefix = new URL(cfg.sub_base).pathname;
    const outside = seen.requests.filter((u) => u.startsWith("http") && !new URL(u).pathname.startsWith(prefix));
    return { ...out, outside, console_errors: seen.console_errors };
  },

  // a phone's screen: no horizontal scrolling on any panel
  async phone() {
    const { page } = await open(cfg.base, PHONE);
    await served(page);
    const out = {};
    for (const panel of ["transcribe", "speak", "convert"]) {
      await page.click(`#tab-${panel}`);
      await page.evaluate((p) => document.querySelectorAll(`#${p} details`).forEach((d) => { d.open = true; }), panel);
      out[panel] = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      await shot(page, `phone-${panel}`);
    }
    await page.close();
    return out;
  },
};

(async () => {
  const results = {};
  browser = cfg.firefox ? await puppeteer.launch({
    // Firefox through WebDriver BiDi; its fake microphone is a tone
    browser: "firefox",
    executablePath: cfg.firefox,
    headless: true,
    extraPrefsFirefox: { "media.navigator.streams.fake": true, "media.navigator.permission.disabled": true,
                         "media.autoplay.default": 0 },
  }) : await puppeteer.launch({
    executablePath: cfg.chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--autoplay-policy=no-user-gesture-required",
           "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
           `--use-file-for-fake-audio-capture=${cfg.files.microphone}`,
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-default-apps", "--mute-audio"],
  });
  try {
    for (const name of cfg.scenarios) {
      const t0 = Date.now();
      try {
        results[name] = await scenarios[name]();
      } catch (e) {
        results[name] = { error: `${e.name}: ${e.message}` };
      }
      results[name].seconds = (Date.now() - t0) / 1000;
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
})().catch((e) => {
  process.stdout.write(`${JSON.stringify({ fatal: String(e && e.stack || e) })}\n`);
  process.exit(1);
});
