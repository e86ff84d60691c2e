// One request of a panel at a time: its progress bar and elapsed time,
// its Cancel button (which aborts the request: the server sees the client
// hang up and stops the work), and its error shown as the server said it.
export class Task {
  // P: the panel's id prefix ("t", "s", "c"): P-go, P-cancel, P-progress, P-bar, P-status, P-error.
  constructor(p) {
    const $ = (id) => document.getElementById(`${p}-${id}`);
    this.go = $("go");
    this.cancelButton = $("cancel");
    this.box = $("progress");
    this.bar = $("bar");
    this.statusLine = $("status");
    this.errorLine = $("error");
    this.controller = null;
    this.cancelButton.addEventListener("click", () => this.cancel());
  }

  get running() { return this.controller !== null; }

  cancel() {
    if (this.controller) this.controller.abort();
  }

  // Shows FRACTION done (null: not known) and TEXT.
  progress(fraction, text) {
    if (fraction === null || fraction === undefined) this.bar.removeAttribute("value");
    else this.bar.value = Math.max(0, Math.min(1, fraction));
    if (text !== undefined) this.note = text;
    this.tick();
  }

  tick() {
    const s = ((performance.now() - this.t0) / 1000).toFixed(0);
    this.statusLine.textContent = `${this.note} (${s} s)`;
  }

  error(message) {
    this.errorLine.textContent = message;
    this.errorLine.hidden = !message;
  }

  // Runs FN(signal) with the progress shown; resolves to FN's value, or
  // undefined when it failed (the error shown) or was cancelled.
  async run(what, fn) {
    if (this.running) return undefined;
    this.controller = new AbortController();
    this.error("");
    this.t0 = performance.now();
    this.note = what;
    this.bar.max = 1;
    this.bar.removeAttribute("value");
    this.box.hidden = false;
    this.go.disabled = true;
    this.cancelButton.disabled = false;
    this.tick();
    const timer = setInterval(() => this.tick(), 500);
    try {
      return await fn(this.controller.signal);
    } catch (e) {
      if (e.name === "AbortError") {
        this.statusLine.textContent = "Cancelled.";
        return undefined;
      }
      this.error(e.message || String(e));
      this.box.hidden = true;
      return undefined;
    } finally {
      clearInterval(timer);
      const cancelled = this.controller.signal.aborted;
      this.controller = null;
      this.go.disabled = false;
      this.cancelButton.disabled = true;
      if (!cancelled && this.errorLine.hidden) {
        this.bar.value = 1;
        this.statusLine.textContent = `Done in ${((performance.now() - this.t0) / 1000).toFixed(1)} s.`;
      }
    }
  }
}
