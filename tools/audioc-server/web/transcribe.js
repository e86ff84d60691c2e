// The Transcribe panel: a file (picked, dropped or recorded) sent with
// stream=true and response_format=verbose_json; each segment shown with
// its times as it is recognized; then the whole transcription (words too
// when asked) to download as TXT, SRT, VTT or JSON, and the audio played
// with the current segment and word highlighted.
import { call, readEvents } from "./api.js";
import { clock, nameFor, save, toJson, toSrt, toText, toVtt } from "./formats.js";
import { attachRecorder } from "./recorder.js";
import { Task } from "./task.js";

const $ = (id) => document.getElementById(id);

export function initTranscribe() {
  const task = new Task("t");
  const fileInput = $("t-file");
  const audio = $("t-audio");
  const list = $("t-segments");
  const result = $("t-result");
  const downloads = result.querySelectorAll(".downloads button");
  let file = null;
  let transcript = null;
  let audioUrl = null;

  function useFile(f) {
    file = f;
    if (audioUrl) URL.revokeObjectURL(audioUrl);
    audioUrl = URL.createObjectURL(f);
    audio.src = audioUrl;
  }

  fileInput.addEventListener("change", () => { if (fileInput.files[0]) useFile(fileInput.files[0]); });
  const drop = $("t-drop");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const f = e.dataTransfer.files[0];
    if (f) {
      useFile(f);
      $("t-record-time").textContent = f.name;
    }
  });
  attachRecorder($("t-record"), $("t-record-time"), (f) => {
    useFile(f);
    $("t-record-time").textContent = `recorded ${f.name}`;
    $("t-form").requestSubmit();
  }, (msg) => task.error(msg));

  // A list item for segment G: its times (a button that plays from there) and its text (or words).
  function segmentItem(g, words) {
    const li = document.createElement("li");
    li.dataset.start = g.start;
    li.dataset.end = g.end;
    const at = document.createElement("button");
    at.type = "button";
    at.className = "time";
    at.textContent = `${clock(g.start)} – ${clock(g.end)}`;
    at.setAttribute("aria-label", `Play from ${clock(g.start)}`);
    at.addEventListener("click", () => { audio.currentTime = g.start; audio.play().catch(() => {}); });
    const text = document.createElement("span");
    text.className = "text";
    if (words && words.length) {
      words.forEach((w, i) => {
        const s = document.createElement("span");
        s.className = "word";
        s.dataset.start = w.start;
        s.dataset.end = w.end;
        s.textContent = w.word;
        text.append(s, i + 1 < words.length ? " " : "");
      });
    } else {
      text.textContent = g.text.trim();
    }
    li.append(at, " ", text);
    return li;
  }

  function showTranscript(t) {
    list.replaceChildren();
    for (const g of t.segments || []) {
      if (!g.text) continue;
      const words = (t.words || []).filter((w) => w.segment === g.id);
      list.append(segmentItem(g, words));
    }
  }

  // the segment and word at the playing time
  function highlight() {
    const now = audio.currentTime;
    for (const el of list.querySelectorAll("li, .word")) {
      const on = now >= Number(el.dataset.start) && now < Number(el.dataset.end);
      el.classList.toggle("current", on);
      if (el.tagName === "LI") {
        if (on) el.setAttribute("aria-current", "true");
        else el.removeAttribute("aria-current");
      }
    }
  }
  audio.addEventListener("timeupdate", highlight);
  audio.addEventListener("seeked", highlight);

  $("t-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!file) {
      task.error("Choose a file, drop one here, or record.");
      return;
    }
    const form = new FormData();
    form.append("file", file, file.name);
    const model = $("t-model").value;
    if (model) form.append("model", model);
    const lang = $("t-language").value.trim();
    if (lang) form.append("language", lang);
    if ($("t-vad").value) form.append("vad", $("t-vad").value);
    if ($("t-words").checked) {
      form.append("timestamp_granularities[]", "segment");
      form.append("timestamp_granularities[]", "word");
    }
    const beam = $("t-beam").value;
    if (beam && beam !== "1") form.append("beam_size", beam);
    form.append("response_format", "verbose_json");
    form.append("stream", "true");
    transcript = null;
    downloads.forEach((b) => { b.disabled = true; });
    list.replaceChildren();
    list.dataset.state = "streaming";
    result.hidden = false;
    const duration = Number.isFinite(audio.duration) ? audio.duration : 0;
    await task.run(`Sending ${file.name}…`, async (signal) => {
      const resp = await call("v1/audio/transcriptions", { method: "POST", body: form, signal });
      task.progress(duration ? 0 : null, "Recognizing…");
      await readEvents(resp, (ev) => {
        if (ev.type === "transcript.text.delta") {
          list.append(segmentItem({ start: ev.start, end: ev.end, text: ev.delta }, null));
          if (duration) task.progress(ev.end / duration, `Recognized ${clock(ev.end)} of ${clock(duration)}`);
        } else if (ev.type === "transcript.text.done") {
          transcript = ev.response || { text: ev.text, segments: [] };
        }
      });
      if (!transcript) throw new Error("the stream ended before the transcription was done");
      list.dataset.state = "done";
      showTranscript(transcript);
      downloads.forEach((b) => { b.disabled = false; });
    });
    if (!transcript && !list.children.length) result.hidden = true;   // failed or cancelled before any text
  });

  const writers = { txt: [toText, "text/plain"], srt: [toSrt, "application/x-subrip"], vtt: [toVtt, "text/vtt"],
    json: [toJson, "application/json"] };
  downloads.forEach((b) => b.addEventListener("click", () => {
    if (!transcript) return;
    const [write, type] = writers[b.dataset.format];
    save(new Blob([write(transcript)], { type }), nameFor(file && file.name, b.dataset.format));
  }));
}
