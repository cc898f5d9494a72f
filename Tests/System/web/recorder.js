// Injected into every page before its own scripts (Page.addScriptToEvaluateOnNewDocument): keeps each lamp
// message the page receives as [Date.now(), bass, mid, treble] (and, from a receiver with a strip, its pixels
// as [Date.now(), [r, g, b, r, g, b, …]] in strip) and each sound message it sends as [Date.now(), samples,
// peak] in window.__recorded.
window.__recorded = {lamps: [], strip: [], sent: []};
(() => {
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (event.data instanceof ArrayBuffer || event.data instanceof Blob) {
          const now = Date.now();
          const keep = (buffer) => {
            const b = new Uint8Array(buffer);
            if (b.length < 3 || b.length % 3) return;
            window.__recorded.lamps.push([now, b[0], b[1], b[2]]);
            if (b.length > 3) window.__recorded.strip.push([now, Array.from(b.subarray(3))]);
          };
          if (event.data instanceof ArrayBuffer) keep(event.data); else event.data.arrayBuffer().then(keep);
        }
      });
    }
    send(data) {
      if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) {
        const samples = new Float32Array(data instanceof ArrayBuffer ? data : data.buffer);
        let peak = 0; for (const s of samples) peak = Math.max(peak, Math.abs(s));
        window.__recorded.sent.push([Date.now(), samples.length, peak]);
      }
      return super.send(data);
    }
  };
})();
