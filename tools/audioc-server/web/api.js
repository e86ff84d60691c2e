// The server's API as the page calls it: paths relative to the page (so
// that it works behind a proxy at a sub-path), the API key from this
// browser's storage, the server's own error messages, and server-sent
// events read from a fetch body as they come.

const KEY = "audioc.apiKey";
let memoryKey = "";   // where storage is refused, the key lasts as long as the page
let onUnauthorized = () => {};

export function apiKey() {
  try { return localStorage.getItem(KEY) || ""; } catch { return ""; }
}

export function setApiKey(key) {
  try {
    if (key) localStorage.setItem(KEY, key);
    else localStorage.removeItem(KEY);
  } catch { /* storage refused: memoryKey keeps it */ }
  memoryKey = key;
}

// F(message) is called when the server answers 401: the page asks for a key.
export function whenUnauthorized(f) { onUnauthorized = f; }

// An error with the server's message (OpenAI's {"error": {"message"}}), or
// what went wrong on the way.
export class ApiError extends Error {
  constructor(message, status, param) {
    super(message);
    this.status = status;
    this.param = param;
  }
}

async function errorOf(resp) {
  let message = `${resp.status} ${resp.statusText}`;
  let param = null;
  try {
    const j = await resp.json();
    if (j && j.error && j.error.message) {
      message = j.error.message;
      param = j.error.param;
    }
  } catch { /* not JSON: the status line */ }
  if (resp.status === 401) onUnauthorized(message);
  return new ApiError(message, resp.status, param);
}

// fetch(PATH) with the key; throws ApiError unless the answer is 2xx.
export async function call(path, init = {}) {
  const headers = new Headers(init.headers || {});
  const key = apiKey() || memoryKey;
  if (key) headers.set("Authorization", `Bearer ${key}`);
  let resp;
  try {
    resp = await fetch(path, { ...init, headers });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(`the server cannot be reached (${e.message})`, 0, null);
  }
  if (!resp.ok) throw await errorOf(resp);
  return resp;
}

export async function getJson(path, init) {
  return (await call(path, init)).json();
}

// The events of a text/event-stream answer: calls ON_EVENT(object) for
// each 'data:' line as it arrives. An {"type": "error"} event throws.
export async function readEvents(resp, onEvent) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    let end;
    while ((end = pending.indexOf("\n\n")) >= 0) {
      const block = pending.slice(0, end);
      pending = pending.slice(end + 2);
      for (const line of block.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const ev = JSON.parse(line.slice(6));
        if (ev.type === "error") throw new ApiError(ev.message, 500, null);
        onEvent(ev);
      }
    }
  }
}
