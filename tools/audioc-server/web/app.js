// The page: its tabs, the API key dialog, and what the server serves
// (GET /v1/models, /v1/audio/voices) filled into the panels' choices.
import { apiKey, getJson, setApiKey, whenUnauthorized } from "./api.js";
import { initConvert } from "./convert.js";
import { initSpeak } from "./speak.js";
import { initTranscribe } from "./transcribe.js";

const $ = (id) => document.getElementById(id);
// the routes that speak from text; the others convert a recording
const TEXT_ROUTES = ["zero_shot_tts", "text_to_singing", "svs"];

function initTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  function select(tab, focus) {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      $(t.getAttribute("aria-controls")).hidden = !on;
    }
    if (focus) tab.focus();
    history.replaceState(null, "", `#${tab.getAttribute("aria-controls")}`);
  }
  tabs.forEach((t, i) => {
    t.addEventListener("click", () => select(t, false));
    t.addEventListener("keydown", (e) => {
      const step = { ArrowRight: 1, ArrowLeft: -1, Home: -i, End: tabs.length - 1 - i }[e.key];
      if (step === undefined) return;
      e.preventDefault();
      select(tabs[(i + step + tabs.length) % tabs.length], true);
    });
  });
  const start = tabs.find((t) => `#${t.getAttribute("aria-controls")}` === location.hash);
  if (start) select(start, false);
}

function fill(select, items, empty) {
  select.replaceChildren(...items.map(([value, text]) => new Option(text, value)));
  if (!items.length) select.append(new Option(empty, ""));
  select.disabled = !items.length;
}

let asking = false;

function initKey(reload) {
  const dialog = $("key-dialog");
  const input = $("key-input");
  function open(why) {
    if (dialog.open) return;
    $("key-why").textContent = why;
    input.value = apiKey();
    dialog.showModal();
  }
  whenUnauthorized((message) => {
    if (asking) return;
    asking = true;
    open(`The server said: ${message}`);
  });
  $("key-open").addEventListener("click", () => open("The key this server was started with (--api-key)."));
  dialog.addEventListener("close", () => {
    asking = false;
    if (dialog.returnValue === "save") setApiKey(input.value.trim());
    else if (dialog.returnValue === "forget") setApiKey("");
    else return;
    reload();
  });
}

async function loadServed() {
  const note = $("served");
  let models, voices;
  try {
    models = (await getJson("v1/models")).data || [];
    voices = (await getJson("v1/audio/voices")).data || [];
  } catch (e) {
    note.textContent = `The server's models are not known: ${e.message}`;
    note.classList.add("error");
    return;
  }
  note.classList.remove("error");
  const of = (task) => models.filter((m) => m.task === task);
  const asr = of("transcription"), voice = of("voice");
  note.textContent = `${models.length} model${models.length === 1 ? "" : "s"}: ` +
    `${models.map((m) => `${m.id} (${m.task})`).join(", ") || "none"}; ` +
    `${voices.length} voice${voices.length === 1 ? "" : "s"}.`;
  fill($("t-model"), asr.map((m) => [m.id, `${m.id} (${m.family})`]), "no transcription model is served");
  for (const p of ["s", "c"]) {
    fill($(`${p}-model`), voice.map((m) => [m.id, `${m.id} (${m.family})`]), "no voice model is served");
    fill($(`${p}-voice`), voices.map((v) => [v.id, `${v.id} (${v.duration.toFixed(1)} s)`]), "no voices are served");
  }
  const routes = (voice[0] && voice[0].routes) || [];
  const nice = (r) => r.replaceAll("_", " ");
  fill($("s-route"), routes.filter((r) => TEXT_ROUTES.includes(r)).map((r) => [r, nice(r)]), "no routes");
  fill($("c-route"), routes.filter((r) => !TEXT_ROUTES.includes(r)).map((r) => [r, nice(r)]), "no routes");
}

initTabs();
initKey(loadServed);
initTranscribe();
initSpeak();
initConvert();
loadServed();
