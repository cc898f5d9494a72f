// lightorgan: posts each 128-frame block of its input (channel 0, or the mean of the channels)
// to the main thread, which batches and sends them. The output stays silent.
class LightorganCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.running = true;
    this.port.onmessage = (event) => {
      if (event.data === 'stop') this.running = false;
    };
  }

  process(inputs) {
    const channels = inputs[0];
    if (channels && channels.length > 0 && channels[0].length > 0) {
      const block = new Float32Array(channels[0].length);
      if (channels.length === 1) {
        block.set(channels[0]);
      } else {
        for (const channel of channels) {
          for (let i = 0; i < block.length; i++) block[i] += channel[i];
        }
        const scale = 1 / channels.length;
        for (let i = 0; i < block.length; i++) block[i] *= scale;
      }
      this.port.postMessage(block, [block.buffer]);
    }
    return this.running;
  }
}

registerProcessor('lightorgan-capture', LightorganCapture);
