// A recording from the microphone with MediaRecorder (WebM/Opus, or
// MP4/AAC where that is what the browser makes; the server decodes both).
// BUTTON starts and stops it; ON_DONE(file) gets the recording, ON_ERROR(message) a failure.
const TYPES = [["audio/webm;codecs=opus", "webm"], ["audio/webm", "webm"], ["audio/mp4", "m4a"], ["audio/ogg", "ogg"]];

export function attachRecorder(button, timeLabel, onDone, onError) {
  let rec = null;
  let timer = null;
  const label = button.textContent;

  async function start() {
    if (!navigator.mediaDevices || !window.MediaRecorder) {
      onError("this browser cannot record here (the page needs https or localhost, and MediaRecorder)");
      return;
    }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (e) {
      onError(`no microphone: ${e.message || e.name}`);
      return;
    }
    const [type, ext] = TYPES.find(([t]) => MediaRecorder.isTypeSupported(t)) || ["", "webm"];
    rec = new MediaRecorder(stream, type ? { mimeType: type } : {});
    const parts = [];
    rec.addEventListener("dataavailable", (e) => { if (e.data.size) parts.push(e.data); });
    rec.addEventListener("stop", () => {
      stream.getTracks().forEach((t) => t.stop());
      clearInterval(timer);
      button.textContent = label;
      button.setAttribute("aria-pressed", "false");
      const blob = new Blob(parts, { type: rec.mimeType || type });
      rec = null;
      onDone(new File([blob], `recording.${ext}`, { type: blob.type }));
    });
    const t0 = performance.now();
    rec.start(250);
    button.textContent = "Stop recording";
    button.setAttribute("aria-pressed", "true");
    timeLabel.textContent = "recording 0 s";
    timer = setInterval(() => {
      timeLabel.textContent = `recording ${((performance.now() - t0) / 1000).toFixed(0)} s`;
    }, 250);
  }

  button.addEventListener("click", () => {
    if (rec) rec.stop();
    else start();
  });
}
