// What the page writes itself: subtitles and text from a verbose_json
// transcription (as audioc transcribe writes them: a cue per segment with
// text), a 16-bit WAV from PCM, and files handed to the browser to save.

// HH:MM:SS,mmm (SRT) or HH:MM:SS.mmm (VTT).
function stamp(seconds, sep) {
  const ms = Math.floor(seconds * 1000 + 0.5);
  const two = (n) => String(n).padStart(2, "0");
  return `${two(Math.floor(ms / 3600000))}:${two(Math.floor(ms / 60000) % 60)}:${two(Math.floor(ms / 1000) % 60)}` +
    `${sep}${String(ms % 1000).padStart(3, "0")}`;
}

// m:ss.s for the page's own display.
export function clock(seconds) {
  const m = Math.floor(seconds / 60);
  const s = (seconds - 60 * m).toFixed(1).padStart(4, "0");
  return `${m}:${s}`;
}

export function toSrt(t) {
  let out = "";
  let n = 0;
  for (const g of t.segments || []) {
    if (!g.text) continue;
    out += `${++n}\n${stamp(g.start, ",")} --> ${stamp(g.end, ",")}\n${g.text}\n\n`;
  }
  return out;
}

export function toVtt(t) {
  let out = "WEBVTT\n\n";
  for (const g of t.segments || []) {
    if (!g.text) continue;
    out += `${stamp(g.start, ".")} --> ${stamp(g.end, ".")}\n${g.text}\n\n`;
  }
  return out;
}

export function toText(t) { return `${t.text}\n`; }

export function toJson(t) { return `${JSON.stringify(t, null, 2)}\n`; }

// Mono 16-bit PCM (little-endian bytes) at RATE as a WAV file.
export function wavOf(pcmBytes, rate) {
  const head = new DataView(new ArrayBuffer(44));
  const text = (at, s) => { for (let i = 0; i < s.length; i++) head.setUint8(at + i, s.charCodeAt(i)); };
  text(0, "RIFF");
  head.setUint32(4, 36 + pcmBytes.length, true);
  text(8, "WAVE");
  text(12, "fmt ");
  head.setUint32(16, 16, true);
  head.setUint16(20, 1, true);          // PCM
  head.setUint16(22, 1, true);          // mono
  head.setUint32(24, rate, true);
  head.setUint32(28, rate * 2, true);   // bytes a second
  head.setUint16(32, 2, true);          // bytes a frame
  head.setUint16(34, 16, true);         // bits a sample
  text(36, "data");
  head.setUint32(40, pcmBytes.length, true);
  return new Blob([head, pcmBytes], { type: "audio/wav" });
}

// Little-endian 16-bit samples as floats in [-1, 1).
export function floatsOf(pcmBytes) {
  const view = new DataView(pcmBytes.buffer, pcmBytes.byteOffset, pcmBytes.byteLength);
  const out = new Float32Array(pcmBytes.byteLength >> 1);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(2 * i, true) / 32768;
  return out;
}

export function bytesOfBase64(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

// Offers BLOB to be saved as NAME.
export function save(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
}

// The file name of a download: the input's name with EXT.
export function nameFor(input, ext) {
  const base = (input || "audio").replace(/\.[^./]*$/, "") || "audio";
  return `${base}.${ext}`;
}
