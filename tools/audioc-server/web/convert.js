// The Convert panel: a recording (picked or recorded here) in a served
// voice or an uploaded one, by a route, with a pitch shift; the answer
// played and offered for download as the server made it.
import { call } from "./api.js";
import { nameFor } from "./formats.js";
import { attachRecorder } from "./recorder.js";
import { Task } from "./task.js";

const $ = (id) => document.getElementById(id);

export function initConvert() {
  const task = new Task("c");
  const audio = $("c-audio");
  const link = $("c-download");
  let source = null;
  let url = null;

  $("c-file").addEventListener("change", () => { source = $("c-file").files[0] || null; });
  attachRecorder($("c-record"), $("c-record-time"), (f) => {
    source = f;
    $("c-record-time").textContent = `recorded ${f.name}`;
  }, (msg) => task.error(msg));

  $("c-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!source) {
      task.error("Choose or record the source first.");
      return;
    }
    const form = new FormData();
    form.append("file", source, source.name);
    const target = $("c-voice-file").files[0];
    if (target) form.append("target_voice", target, target.name);
    else form.append("voice", $("c-voice").value);
    for (const [id, name] of [["c-model", "model"], ["c-route", "route"], ["c-pitch", "pitch_shift"],
      ["c-text", "text"], ["c-source-text", "source_text"], ["c-format", "response_format"], ["c-seed", "seed"]]) {
      const v = $(id).value.trim();
      if (v !== "") form.append(name, v);
    }
    const fmt = $("c-format").value;
    $("c-result").hidden = true;
    await task.run(`Converting ${source.name}…`, async (signal) => {
      const resp = await call("v1/audio/conversions", { method: "POST", body: form, signal });
      const blob = await resp.blob();
      if (url) URL.revokeObjectURL(url);
      url = URL.createObjectURL(blob);
      audio.src = url;
      link.href = url;
      link.download = nameFor(`${source.name.replace(/\.[^.]*$/, "")}-converted`, fmt);
      link.textContent = `Download ${fmt.toUpperCase()}`;
      $("c-result").hidden = false;
      audio.play().catch(() => {});
    });
  });
}
