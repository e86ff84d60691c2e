// The Speak panel: text in a served voice (POST /v1/audio/speech), or in
// an uploaded reference with its transcript (the same speech through
// /v1/audio/conversions, route and all, which takes uploads). Streamed (stream_format=sse,
// 16-bit PCM), each chunk plays as soon as it arrives and the waveform
// grows; the whole is then a WAV to play again and download. Not
// streamed, the answer in the chosen format is played and downloaded as
// the server made it.
import { call, readEvents } from "./api.js";
import { bytesOfBase64, floatsOf, wavOf } from "./formats.js";
import { Task } from "./task.js";

const $ = (id) => document.getElementById(id);
const RATE = 24000;   // Vevo2's rate: what response_format=pcm carries
const TYPES = { wav: "audio/wav", flac: "audio/flac", mp3: "audio/mpeg", opus: "audio/ogg", pcm: "audio/pcm" };

// Min and max of SAMPLES per pixel column of CANVAS, scaled to the peak
// (quiet speech still shows its shape).
export function drawWave(canvas, samples) {
  const w = canvas.width = Math.max(1, Math.round(canvas.clientWidth * (window.devicePixelRatio || 1)));
  const h = canvas.height;
  const g = canvas.getContext("2d");
  g.clearRect(0, 0, w, h);
  g.fillStyle = getComputedStyle(canvas).color;
  const per = Math.max(1, Math.ceil(samples.length / w));
  let peak = 1e-4;
  for (let i = 0; i < samples.length; i++) peak = Math.max(peak, Math.abs(samples[i]));
  const gain = 0.95 / peak;
  for (let x = 0; x * per < samples.length; x++) {
    let lo = 1, hi = -1;
    for (let i = x * per; i < Math.min(samples.length, (x + 1) * per); i++) {
      lo = Math.min(lo, samples[i]);
      hi = Math.max(hi, samples[i]);
    }
    const y0 = Math.round((1 - hi * gain) * h / 2), y1 = Math.round((1 - lo * gain) * h / 2);
    g.fillRect(x, y0, 1, Math.max(1, y1 - y0));
  }
}

function numberField(body, id, name) {
  const v = $(id).value.trim();
  if (v !== "") body[name] = Number(v);
}

export function initSpeak() {
  const task = new Task("s");
  const audio = $("s-audio");
  const link = $("s-download");
  const canvas = $("s-wave");
  let ctx = null;
  let url = null;

  function show(blob, ext) {
    if (url) URL.revokeObjectURL(url);
    url = URL.createObjectURL(blob);
    if (ext !== "pcm") audio.src = url;
    link.href = url;
    link.download = `speech.${ext}`;
    link.textContent = `Download ${ext.toUpperCase()}`;
  }

  // streamed speech is 16-bit PCM, kept as WAV: the format is for the whole answer only
  const formatChoice = () => { $("s-format").disabled = $("s-stream").checked; };
  $("s-stream").addEventListener("change", formatChoice);
  formatChoice();

  $("s-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = $("s-text").value;
    if (!input.trim()) {
      task.error("Write the text to say.");
      return;
    }
    const stream = $("s-stream").checked;
    const fmt = stream ? "pcm" : $("s-format").value;
    const body = { input, voice: $("s-voice").value, response_format: fmt };
    if ($("s-model").value) body.model = $("s-model").value;
    if ($("s-route").value) body.route = $("s-route").value;
    if (stream) body.stream_format = "sse";
    const speed = $("s-speed").value.trim();
    if (speed !== "" && Number(speed) !== 1) body.speed = Number(speed);
    numberField(body, "s-temperature", "temperature");
    numberField(body, "s-steps", "steps");
    numberField(body, "s-max-tokens", "max_tokens");
    numberField(body, "s-seed", "seed");
    // an uploaded reference: the same request as a form to /v1/audio/conversions
    const ref = $("s-voice-file").files[0];
    let request;
    if (ref) {
      if (body.speed) {
        task.error("Speed works with the served voices only (POST /v1/audio/speech).");
        return;
      }
      const form = new FormData();
      form.append("file", ref, ref.name);   // not heard on a text route; the endpoint wants a source
      form.append("target_voice", ref, ref.name);
      const said = $("s-voice-text").value.trim();
      if (said) form.append("target_voice_text", said);
      form.append("text", input);
      form.append("route", body.route || "zero_shot_tts");
      for (const [k, v] of Object.entries(body)) if (!["input", "voice", "route"].includes(k)) form.append(k, String(v));
      request = ["v1/audio/conversions", { method: "POST", body: form }];
    } else {
      request = ["v1/audio/speech", { method: "POST", body: JSON.stringify(body),
        headers: { "Content-Type": "application/json" } }];
    }
    if (!ctx && window.AudioContext) ctx = new AudioContext();   // made on a click: allowed to play
    if (ctx && ctx.state === "suspended") ctx.resume().catch(() => {});
    audio.pause();
    audio.removeAttribute("src");
    $("s-result").hidden = false;
    link.removeAttribute("href");
    link.textContent = "Download";
    drawWave(canvas, new Float32Array(0));
    await task.run("Making speech…", async (signal) => {
      const resp = await call(request[0], { ...request[1], signal });
      if (!stream) {
        const blob = new Blob([await resp.arrayBuffer()], { type: TYPES[fmt] });
        show(blob, fmt);
        if (fmt === "pcm") drawWave(canvas, floatsOf(new Uint8Array(await blob.arrayBuffer())));
        else if (ctx) drawWave(canvas, (await ctx.decodeAudioData(await blob.arrayBuffer())).getChannelData(0));
        if (fmt !== "pcm") audio.play().catch(() => {});
        return;
      }
      const chunks = [];
      let total = 0;
      let at = ctx ? ctx.currentTime + 0.05 : 0;
      const sources = [];
      signal.addEventListener("abort", () => sources.forEach((s) => s.stop()));
      await readEvents(resp, (ev) => {
        if (ev.type !== "speech.audio.delta") return;
        const bytes = bytesOfBase64(ev.audio);
        chunks.push(bytes);
        total += bytes.length;
        const floats = floatsOf(bytes);
        if (ctx && floats.length) {
          const buf = ctx.createBuffer(1, floats.length, RATE);
          buf.copyToChannel(floats, 0);
          const src = ctx.createBufferSource();
          src.buffer = buf;
          src.connect(ctx.destination);
          at = Math.max(at, ctx.currentTime + 0.02);
          src.start(at);
          at += buf.duration;
          sources.push(src);
        }
        const all = new Uint8Array(total);
        let o = 0;
        for (const c of chunks) { all.set(c, o); o += c.length; }
        drawWave(canvas, floatsOf(all));
        task.progress(null, `Playing ${(total / 2 / RATE).toFixed(1)} s of speech as it is made…`);
      });
      const pcm = new Uint8Array(total);
      let o = 0;
      for (const c of chunks) { pcm.set(c, o); o += c.length; }
      show(wavOf(pcm, RATE), "wav");
    });
  });
}
