// lightorgan receiver page. /live: hello, then lamp levels (3 bytes, then a strip's pixels, 3 bytes each) and
// status; set and check.
// /audio: this device's sound, captured by an AudioWorklet, as ~20 ms Float32 messages.
'use strict';
(() => {
const $ = (selector, root = document) => root.querySelector(selector);
const el = (tag, attributes = {}, text = '') => {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
};
const show = (selector, text) => { $(selector).textContent = text; };
const say = (node, text, kind) => { node.textContent = text; node.className = 'message ' + (kind || ''); };
const STORE = 'lightorgan.key';
const VIEW_ONLY = "View only: open the link from the receiver's log (journalctl -u lightorgan-receiver) to change settings.";
const NO_SECURE = "Your browser allows the microphone only on a secure page: open the https:// address from the receiver's log.";
const NEEDS_KEY = "Needs the key: open the link from the receiver's log (journalctl -u lightorgan-receiver).";

const state = { levels: [0, 0, 0], pixels: null, updates: 0, status: null, control: false, audio: null, stripView: null };
window.lightorgan = state;

// ---- The key: #key=… → localStorage → removed from the address bar. A rejected key is forgotten.
const store = (() => { try { return window.localStorage; } catch (e) { return null; } })();
let keyRejected = false;
function keyFromHash() {
  const hash = location.hash.slice(1);
  const match = /(?:^|&)key=([^&]*)/.exec(hash);
  if (!match) return '';
  let found = '';
  try { found = decodeURIComponent(match[1]).trim(); } catch (e) { /* not a key */ }
  const rest = hash.replace(match[0], '').replace(/^&/, '');
  history.replaceState(null, '', location.pathname + location.search + (rest ? '#' + rest : ''));
  try { if (found && store) store.setItem(STORE, found); } catch (e) { /* private mode: memory only */ }
  return found;
}
let key = keyFromHash();
if (!key) { try { key = (store && store.getItem(STORE)) || ''; } catch (e) { key = ''; } }

window.addEventListener('hashchange', () => {  // the link opened again in this page
  const found = keyFromHash();
  if (!found) return;
  key = found;
  keyRejected = false;
  dropLive();
  refreshAccess();
  liveFailures = 0;
  connectLive();
});

function forgetKey() {
  key = '';
  keyRejected = true;
  try { if (store) store.removeItem(STORE); } catch (e) { /* nothing stored */ }
  state.control = false;
  refreshAccess();
}

function refreshAccess() {
  const notice = $('#access');
  const viewOnly = !state.control && (keyRejected || !key || helloDone);
  notice.hidden = !viewOnly;
  notice.textContent = viewOnly ? (keyRejected ? 'The key was not accepted. ' : '') + VIEW_ONLY : '';
  $('#wiring').hidden = !state.control;
  $('#settings-note').hidden = !viewOnly;
  for (const row of rows.values()) refreshRow(row);
  refreshWiring();
  refreshAudio();
}

// ---- Formatting.
function duration(seconds) {
  const s = Math.max(0, Math.floor(Number(seconds) || 0));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}
const ms = (v) => (typeof v === 'number' ? v.toFixed(v < 10 ? 1 : 0) : '–');
const count = (v) => (typeof v === 'number' && isFinite(v) ? String(Math.round(v)) : '–');
const pinText = (pin) => (pin == null ? 'not on the header' : `pin ${pin}`);
const KINDS = { lightorgan: 'lightorgan sender', '2016 app': '2016 app', browser: 'browser', 'own sound': 'the receiver’s own sound' };

// ---- Lamps and the input meter: drawn once per animation frame, newest values only.
const lamps = ['bass', 'mid', 'treble'].map((band) => {
  const root = $('#lamp-' + band);
  return { root, glow: $('.glow', root), number: $('.num', root), mini: $('#strip-' + band), shown: -1 };
});
// The compact strip: on screen whenever the big lamps are scrolled out of view.
if (window.IntersectionObserver) {
  new IntersectionObserver((entries) => {
    for (const entry of entries) $('#strip').classList.toggle('shown', !entry.isIntersecting);
  }, { threshold: 0 }).observe($('.lamps'));
}
const meter = { db: null, shown: undefined, fill: $('#meter-fill'), text: $('#meter-db') };
let drawQueued = false;
function schedule() {
  if (!drawQueued) { drawQueued = true; requestAnimationFrame(draw); }
}
function draw() {
  drawQueued = false;
  lamps.forEach((lamp, i) => {
    const value = state.levels[i];
    if (value === lamp.shown) return;
    lamp.shown = value;
    lamp.root.dataset.level = String(value);
    const opacity = (value / 255).toFixed(3);
    lamp.glow.style.opacity = opacity;
    if (lamp.mini) lamp.mini.style.opacity = opacity;
    lamp.number.textContent = String(value);
  });
  if (pixelView.drawn !== state.pixels) drawPixels();
  if (meter.db !== meter.shown) {
    const db = meter.shown = meter.db;
    meter.fill.style.transform = `scaleX(${db == null ? 0 : Math.min(1, Math.max(0, (db + 60) / 60)).toFixed(3)})`;
    meter.text.textContent = db == null ? '–' : db <= -90 ? '−∞ dB' : `${Math.round(db)} dB`;
  }
}

// ---- The strip's pixels, live: a canvas as wide as the page, each pixel an LED, in one row as the strip is, up to
// the pixels a phone's width shows apart (MIN_CELL CSS px each: 89 on a phone); more wrap onto a second row.
// Each LED's light is shown as the eye sees it.
const MIN_CELL = 4;  // CSS px a pixel takes at least in the big row (12 device pixels on a phone at 3×)
// A strip's bytes are light (PWM duty: the renderer applied the gamma); a screen's are sRGB-encoded. So each
// byte is shown encoded, 255 · (v/255)^(1/2.2): a pixel at 40 looks on the page as bright as on the strip.
const SHOWN = Array.from({ length: 256 }, (_, v) => Math.round(255 * (v / 255) ** (1 / 2.2)));
const pixelView = { row: $('#pixel-row'), mini: $('#pixel-mini'), drawn: undefined, width: 0 };

function pixelGeometry(canvas, count, minimum, maximumRowHeight) {
  const scale = window.devicePixelRatio || 1;
  const cssWidth = canvas.clientWidth || canvas.parentElement.clientWidth || 300;
  const perRow = Math.max(1, Math.min(count, Math.floor(cssWidth / minimum)));
  const rows = Math.ceil(count / perRow);
  const columns = Math.ceil(count / rows);  // rows as even as they go
  const cell = cssWidth / columns;
  const rowHeight = Math.min(maximumRowHeight, Math.max(cell, 24));
  return { scale, columns, rows, cell: cell * scale, rowHeight: rowHeight * scale, width: Math.round(cssWidth * scale),
    height: Math.round(rows * rowHeight * scale), cssHeight: rows * rowHeight };
}

function paintPixels(canvas, pixels, geometry, centers) {
  if (canvas.width !== geometry.width) canvas.width = geometry.width;
  if (canvas.height !== geometry.height) canvas.height = geometry.height;
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, canvas.width, canvas.height);
  const count = pixels.length / 3;
  const gap = Math.max(1, Math.min(geometry.cell * 0.18, 3 * geometry.scale));
  const boxes = [];
  for (let i = 0; i < count; i++) {
    const column = i % geometry.columns;
    const row = Math.floor(i / geometry.columns);
    const x = Math.round(column * geometry.cell + gap / 2);
    const y = Math.round(row * geometry.rowHeight + gap / 2);
    const w = Math.max(1, Math.round((column + 1) * geometry.cell - gap / 2) - x);
    const h = Math.max(1, Math.round((row + 1) * geometry.rowHeight - gap / 2) - y);
    boxes.push([x, y, w, h]);
    if (centers) centers.push([x + (w >> 1), y + (h >> 1)]);
  }
  // First a soft glow around each lit pixel, then every pixel's body over it: a body is its exact colour.
  const radius = Math.min(4 * geometry.scale, Math.min(geometry.cell, geometry.rowHeight) / 4);
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < count; i++) {
      const r = SHOWN[pixels[3 * i]], gr = SHOWN[pixels[3 * i + 1]], b = SHOWN[pixels[3 * i + 2]];
      const lit = r + gr + b > 0;
      const [x, y, w, h] = boxes[i];
      if (pass === 0) {
        if (!lit) continue;
        g.shadowColor = `rgb(${r} ${gr} ${b} / 0.9)`;
        g.shadowBlur = Math.min(geometry.cell, 16 * geometry.scale);
        g.fillStyle = `rgb(${r} ${gr} ${b})`;
      } else {
        g.shadowColor = 'transparent';
        g.shadowBlur = 0;
        g.fillStyle = lit ? `rgb(${r} ${gr} ${b})` : '#1d1d24';
      }
      g.beginPath();
      if (g.roundRect && w > 4) g.roundRect(x, y, w, h, radius); else g.rect(x, y, w, h);
      g.fill();
    }
  }
}

function drawPixels() {
  const pixels = state.pixels;
  pixelView.drawn = pixels;
  if (!pixels || !pixels.length || $('#pixels').hidden) return;
  const count = pixels.length / 3;
  const geometry = pixelGeometry(pixelView.row, count, MIN_CELL, 30);
  pixelView.row.style.height = `${geometry.cssHeight}px`;
  const centers = [];
  paintPixels(pixelView.row, pixels, geometry, centers);
  // For tests and the curious: where each pixel's centre is on the canvas, in canvas pixels.
  state.stripView = { count, columns: geometry.columns, rows: geometry.rows, cssCell: geometry.cell / geometry.scale, centers };
  if (!pixelView.mini.hidden) {
    const mini = pixelGeometry(pixelView.mini, count, 0, 12);
    mini.columns = count;
    mini.rows = 1;
    mini.cell = mini.width / count;
    mini.rowHeight = mini.height = Math.round(12 * mini.scale);
    paintPixels(pixelView.mini, pixels, mini, null);
  }
}
// Redrawn at its new width when the page's width changes (a phone turned).
if (window.ResizeObserver) {
  new ResizeObserver(() => {
    const width = pixelView.row.clientWidth;
    if (width && width !== pixelView.width) { pixelView.width = width; pixelView.drawn = undefined; schedule(); }
  }).observe(pixelView.row);
}

// ---- /live, reconnecting with backoff 1, 2, 4, 8, 10, 10… s.
const wsURL = (path) => (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + path;
let live = null;
let liveFailures = 0;
let liveTimer = 0;
let helloDone = false;
let nextId = 1;
const pending = new Map();  // set id → settings row

let everConnected = false;
function setConnection(text, kind) {
  const node = $('#conn');
  node.textContent = text;
  node.className = kind || '';
  if (kind === 'up') everConnected = true;
  // Where the person is, whatever they scrolled to: a bar at the bottom of the screen and the lamp strip.
  const lost = kind !== 'up' && everConnected;
  const banner = $('#offline');
  banner.hidden = !lost;
  banner.textContent = lost ? `Connection to the receiver lost — ${text}. The lamps and figures here are not current.` : '';
  document.body.classList.toggle('disconnected', kind !== 'up');
  if (kind !== 'up') clearFigures();
}

// The figures of a receiver we no longer hear from are not shown as if current.
function clearFigures() {
  for (const id of ['#st-fps', '#st-age', '#st-connections']) show(id, '–');
}

function connectLive() {
  clearTimeout(liveTimer);
  setConnection('connecting…');
  let socket;
  try { socket = new WebSocket(wsURL('/live')); } catch (e) { retryLive(); return; }
  socket.binaryType = 'arraybuffer';
  live = socket;
  socket.onopen = () => socket.send(JSON.stringify({ type: 'hello', key }));
  socket.onmessage = (event) => { if (live === socket) onLive(event.data); };
  socket.onclose = (event) => {
    if (live !== socket) return;
    dropLive(event.code === 1009 ? 'too long: the receiver takes at most 4 KiB a message' : undefined);
    if (event.code === 4001) { forgetKey(); liveTimer = setTimeout(connectLive, 300); }
    else { refreshAccess(); retryLive(); }
  };
}

function dropLive(why) {
  const socket = live;
  live = null;
  helloDone = false;
  state.control = false;
  for (const row of pending.values()) {
    row.busy = false;
    say(row.message, why || 'not applied: the connection to the receiver dropped', 'err');
  }
  pending.clear();
  state.levels.fill(0);
  if (state.pixels) state.pixels = new Uint8Array(state.pixels.length);
  schedule();
  if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000);
}

function retryLive() {
  const delay = Math.min(10, 2 ** liveFailures++);
  setConnection(`receiver not reachable — retrying in ${delay} s`, 'down');
  liveTimer = setTimeout(connectLive, delay * 1000);
}

function onLive(data) {
  if (typeof data !== 'string') {
    const bytes = new Uint8Array(data);
    if (bytes.length < 3 || bytes.length % 3 !== 0) return;
    state.levels[0] = bytes[0];
    state.levels[1] = bytes[1];
    state.levels[2] = bytes[2];
    if (bytes.length > 3) state.pixels = bytes.subarray(3);  // the strip's pixels, red, green, blue
    state.updates++;
    schedule();
    return;
  }
  let message;
  try { message = JSON.parse(data); } catch (e) { return; }
  if (!message) return;
  if (message.type === 'hello') {
    helloDone = true;
    liveFailures = 0;
    state.control = message.control === true;
    setConnection('connected', 'up');
    refreshAccess();
  } else if (message.type === 'status') {
    renderStatus(message);
  } else if (message.type === 'set') {
    finishSet(pending.get(message.id) || rows.get(message.key), message);
    pending.delete(message.id);
  } else if (message.type === 'check') {
    say($('#check-msg'), message.ok ? '' : String(message.error || 'check failed'), 'err');
  }
}

function send(message) {
  if (!live || live.readyState !== WebSocket.OPEN || !state.control) return false;
  live.send(JSON.stringify(message));
  return true;
}

// ---- Status.
function renderStatus(s) {
  state.status = s;
  const receiver = s.receiver || {};
  show('#receiver-name', receiver.name || '');
  document.title = receiver.name ? `lightorgan · ${receiver.name}` : 'lightorgan';
  const sender = s.sender;
  const senderText = $('#sender-text');
  senderText.className = sender ? '' : 'idle';
  if (sender) {
    const now = typeof s.now === 'number' ? s.now : Date.now() / 1000;
    const who = sender.name ? `${sender.name} (${sender.address})` : sender.address;
    const since = typeof sender.since === 'number' ? `, for ${duration(now - sender.since)}` : '';
    senderText.textContent = `Sending: ${who} — ${KINDS[sender.kind] || sender.kind || 'sender'}${since}`;
  } else {
    senderText.textContent = "Nothing is sending — play music on a sender, or use this device's microphone below";
  }
  // Nobody sends: no rate, no frame age (the last ones would read as current).
  show('#st-fps', sender ? count(s.fps) : '–');
  show('#st-age', sender && s.frameAge ? `${ms(s.frameAge.p50)} / ${ms(s.frameAge.p99)}` : '–');
  show('#st-drops', count(s.drops));
  show('#st-reconnects', count(s.reconnects));
  show('#st-connections', count(s.connections));
  renderBeat(s);
  show('#st-sound', s.sound || 'none (receiver.sound: network)');
  show('#st-output', receiver.output || '–');
  show('#st-mode', receiver.mode || '–');
  show('#st-chip', receiver.chip || '–');
  const lines = Array.isArray(receiver.lines) ? receiver.lines : [];
  show('#st-lines', lines.map((l) => `${l.band} ${l.line} (${pinText(l.pin)})`).join(', ') || 'none');
  show('#st-uptime', typeof s.uptime === 'number' ? duration(s.uptime) : '–');
  show('#st-version', s.version || '–');
  renderStrip(receiver.strip || null);
  renderSettings(Array.isArray(s.settings) ? s.settings : []);
  renderWiring(lines, s.checking || null, s.checkingStrip === true);
}

// ---- The beat: the tempo held and the place in the bar, extrapolated between statuses (twice a second)
// from the latest beat's place and phase.
const beat = { bpm: 0, place: 0, phase: 0, at: 0, timer: null };
function renderBeat(s) {
  beat.bpm = typeof s.bpm === 'number' ? s.bpm : 0;
  beat.place = typeof s.place === 'number' ? s.place : 0;
  beat.phase = typeof s.phase === 'number' ? s.phase : 0;
  beat.at = performance.now();
  show('#st-bpm', beat.bpm > 0 ? String(beat.bpm) : '–');
  if (beat.bpm > 0 && !beat.timer) beat.timer = setInterval(drawBeat, 40);
  drawBeat();
}
function drawBeat() {
  const dots = document.querySelectorAll('#beat-dots i');
  let lit = -1;
  if (beat.bpm > 0 && beat.place > 0) {
    const beats = beat.phase + (performance.now() - beat.at) / 1000 * beat.bpm / 60;
    if (beats - Math.floor(beats) < 0.35) lit = (beat.place - 1 + Math.floor(beats)) % 4;
  } else if (beat.timer) {
    clearInterval(beat.timer);
    beat.timer = null;
  }
  dots.forEach((dot, index) => dot.classList.toggle('on', index === lit));
}

// ---- The strip wired to the receiver (none: nothing of it shows).
const LED_TYPES = { ws2812b: 'WS2812B', sk6812: 'SK6812 (RGB)', 'sk6812-rgbw': 'SK6812 (RGBW)' };
function stripDevice(device) {
  return device === 'virtual' ? 'virtual (only on this page)' : device;
}
function renderStrip(strip) {
  const had = !$('#pixels').hidden;
  $('#pixels').hidden = !strip;
  pixelView.mini.hidden = !strip;
  for (const node of document.querySelectorAll('.strip-fact')) node.hidden = !strip;
  $('#strip-settings').hidden = !strip;
  $('#strip-check').hidden = !strip;
  if (!strip) { state.pixels = null; return; }
  if (!had) pixelView.drawn = undefined;  // drawn now that it shows
  const effect = effectName(strip.effect);
  show('#st-strip', stripDevice(strip.device));
  show('#st-pixels', count(strip.pixels));
  show('#st-type', LED_TYPES[strip.type] || strip.type || '–');
  show('#st-effect', effect);
  show('#pixels-caption', `· ${strip.pixels} pixels · ${effect}`);
  const shown = state.pixels ? state.pixels.length / 3 : 0;
  const note = $('#pixels-note');
  note.hidden = !(shown && shown < strip.pixels);
  note.textContent = note.hidden ? '' : `${strip.pixels} pixels shown as ${shown}, each the average of about ${Math.round(strip.pixels / shown)}.`;
  schedule();
}
function effectName(effect) {
  const choice = SETTINGS['receiver.strip.effect'].choices.find((c) => c[0] === effect);
  return choice ? choice[1] : effect || '–';
}

// ---- Settings, for people: words and units, a slider (with the value, and a field to type it) or a
// segmented choice; a change applies as the person moves (debounced), checked by the receiver with the
// settings file's rules and messages. Each shows where its value comes from, and a way back to the file.
const rows = new Map();
const DEBOUNCE_MS = 250;
const MAX_MESSAGE = 4096;  // bytes of one message on /live (the receiver closes a longer one, 1009)
const SETTINGS = {
  'receiver.lights': {
    label: 'Lights',
    choices: [
      ['on', 'Dancing', 'The lamps, the strip and the stage lights follow the music.'],
      ['off', 'Dark', 'Everything dark while senders and sound go on (the home’s hub can switch this too).'],
    ],
  },
  'receiver.mode': {
    label: 'Lamp mode',
    choices: [
      ['pwm', 'Dimmed', 'Each lamp dims smoothly with its band’s level.'],
      ['onoff', 'On / off', 'A lamp is on above a threshold and off below: for relay boards.'],
      ['bar', 'Level meter', 'A band’s lines light one after another, like a meter.'],
    ],
  },
  'receiver.max_brightness': { label: 'Brightness limit', unit: '%', min: 1, max: 100, step: 1 },
  'receiver.delay': { label: 'Delay before the lamps', unit: 'ms', min: 0, max: 1000, step: 5,
    hint: 'For a speaker behind the sound: Bluetooth needs 100–300 ms.' },
  'receiver.timeout': { label: 'Lamps off after silence of', unit: 's', min: 0.1, max: 10, step: 0.1 },
  'receiver.strip.effect': {
    label: 'Effect',
    strip: true,
    choices: [
      ['scroll', 'Scroll', 'Each moment’s colour starts at the centre and moves out to both ends, fading.'],
      ['energy', 'Energy', 'A bar per band grows from the centre with its level; where bars overlap, colours add.'],
      ['flash', 'Flash', 'The whole strip flashes in the bass colour on each bass beat, dark between.'],
      ['segments', 'Segments', 'A third of the strip per band — bass, mid, treble — each at its level.'],
      ['blend', 'Blend', 'The whole strip in the bands’ colours, mixed by their levels.'],
      ['bpm_strobe', 'BPM strobe', 'Strip and lamps flash on each beat (a flash on each bass beat while no beat is held).'],
      ['bar_step', 'Bar step', 'One colour at a time, stepping to the next on each bar’s first beat; the lamps too.'],
      ['beat_pulse', 'Beat pulse', 'A pulse runs out from the centre with each beat; the lamps chase bass, mid, treble.'],
    ],
  },
  'receiver.strip.brightness': { label: 'Brightness limit', unit: '%', min: 1, max: 100, step: 1, strip: true,
    hint: 'Of full white, for the power supply and the glare: a pixel at full white draws about 60 mA.' },
  'receiver.strip.palette': { label: 'Colours of bass, mid, treble', text: true, strip: true,
    suggestions: ['red, green, blue', 'red, amber, white', 'orange, yellow, white', 'purple, magenta, cyan', 'blue, cyan, white'],
    hint: 'Three colours separated by commas: #rrggbb or a name (red, green, blue, white, amber, orange, yellow, cyan, magenta, purple).' },
  'receiver.sound': { label: 'The receiver’s own sound', text: true,
    suggestions: ['network', 'airplay', 'bluetooth', 'snapcast', 'snapcast://house.local', 'pipe:/run/lightorgan/spotify', 'hw:1,0'],
    hint: 'network: only senders and pages; airplay: an AirPlay speaker (needs shairport-sync); bluetooth: a Bluetooth speaker, phones pair in a window (lightorgan pair; needs bluez and bluez-alsa-utils); snapcast: a room of the Snapcast house the network announces, snapcast://HOST[:PORT] of that server’s (needs snapclient); pipe:PATH: raw sound from a FIFO (Spotify Connect through raspotify); hw:1,0: a USB microphone or line-in.' },
  'analysis.idle': {
    label: 'Without music',
    choices: [
      ['dark', 'Dark', 'The lamps follow the levels as they are: dark in silence.'],
      ['breathe', 'Breathe', 'A slow breathing glow after a while without music; the first beat brings the dance back.'],
      ['drift', 'Drift', 'A dim glow drifting through the colours after a while without music.'],
    ],
  },
  'analysis.idle_after': { label: 'Idle look after', unit: 's', min: 1, max: 120, step: 1 },
  'receiver.play': { label: 'Play it on', text: true,
    suggestions: ['default', 'hw:0,0', 'none'],
    hint: 'The ALSA device AirPlay, Bluetooth, Snapcast and pipe sound is played on (hw:0,0: the 3.5 mm jack; plughw:CARD=…: a USB DAC or HAT), or none. The lamps change when it is heard.' },
};
const SOURCES = {
  default: () => 'the built-in default',
  file: () => 'the settings file',
  page: () => 'set on this page',
  environment: () => 'an environment variable',
  option: () => 'a command-line option',
};

function withUnit(spec, value) {
  const text = value == null || value === '' ? '(empty)' : String(value);
  if (spec.choices) {
    const choice = spec.choices.find((c) => c[0] === text);
    return choice ? choice[1] : text;
  }
  return spec.unit ? `${text} ${spec.unit}` : text;
}

function renderSettings(list) {
  const seen = new Set();
  const hasStrip = !!(state.status && state.status.receiver && state.status.receiver.strip);
  for (const item of list) {
    if (!item || typeof item.key !== 'string') continue;
    const forStrip = item.key.startsWith('receiver.strip.');
    // No strip: its settings do not show, but the effect, whose beat effects the lamps follow too.
    if (forStrip && !hasStrip && item.key !== 'receiver.strip.effect') continue;
    seen.add(item.key);
    let row = rows.get(item.key);
    if (!row) {
      row = makeRow(item);
      rows.set(item.key, row);
      $(forStrip && hasStrip ? '#strip-settings-list' : '#settings-list').append(row.root);
    }
    updateRow(row, item);
  }
  for (const [name, row] of rows) {
    if (!seen.has(name)) { row.root.remove(); rows.delete(name); }
  }
}

function makeRow(item) {
  const spec = SETTINGS[item.key] || { label: item.key };
  const id = 'setting-' + item.key.replace(/[^\w]+/g, '-');
  const root = el('div', { class: 'setting', 'data-key': item.key });
  const row = {
    root, spec, item, busy: false, dirty: false, timer: 0, savedTimer: 0, controls: [],
    shown: el('span', { class: 'shown' }),
    source: el('p', { class: 'source' }),
    back: el('button', { type: 'button', class: 'use-file' }),
    locked: el('p', { class: 'locked' }),
    message: el('p', { class: 'message', 'aria-live': 'polite' }),
  };
  const title = el('div', { class: 'title' });
  title.append(el('label', { class: 'name', for: id, id: id + '-name' }, spec.label), row.shown);
  root.append(title);
  if (spec.choices) {
    const group = el('div', { class: `segments choices-${spec.choices.length}`, role: 'radiogroup', 'aria-labelledby': id + '-name', id });
    row.explain = el('p', { class: 'summary' });
    if (item.key === 'receiver.mode') row.gpioNote = el('p', { class: 'hint gpio-note' });
    for (const [value, text] of spec.choices) {
      const button = el('button', { type: 'button', role: 'radio', 'data-value': value, 'aria-checked': 'false' }, text);
      button.addEventListener('click', () => { row.value = value; row.dirty = true; showValue(row, value); applyRow(row); });
      group.append(button);
      row.controls.push(button);
    }
    root.append(group, row.explain);
    if (row.gpioNote) root.append(row.gpioNote);
  } else if (spec.text) {
    // Free text (a device name, a path), applied on Enter or when the field is left, not while typing.
    const list = el('datalist', { id: id + '-choices' });
    for (const value of spec.suggestions || []) list.append(el('option', { value }));
    row.field = el('input', { type: 'text', class: 'value wide-value', id, list: id + '-choices', autocomplete: 'off',
      spellcheck: 'false', 'aria-labelledby': id + '-name' });
    row.field.addEventListener('input', () => { row.value = row.field.value.trim(); row.dirty = true; });
    row.field.addEventListener('change', () => { if (row.dirty) applyRow(row); });
    row.field.addEventListener('keydown', (event) => { if (event.key === 'Enter' && row.dirty) applyRow(row); });
    row.controls.push(row.field);
    root.append(row.field, list);
    if (spec.hint) root.append(el('p', { class: 'summary' }, spec.hint));
  } else {
    const line = el('div', { class: 'slider' });
    row.range = el('input', { type: 'range', id, min: spec.min, max: spec.max, step: spec.step, 'aria-labelledby': id + '-name' });
    row.field = el('input', { type: 'text', class: 'value', inputmode: 'decimal', autocomplete: 'off', spellcheck: 'false',
      'aria-label': `${spec.label}${spec.unit ? ', ' + spec.unit : ''}` });
    const unit = el('span', { class: 'unit' }, spec.unit || '');
    row.range.addEventListener('input', () => { row.field.value = row.range.value; changed(row, row.range.value); });
    row.field.addEventListener('input', () => {
      const number = Number(row.field.value);
      if (row.field.value.trim() !== '' && isFinite(number)) row.range.value = String(number);
      changed(row, row.field.value);
    });
    row.field.addEventListener('keydown', (event) => { if (event.key === 'Enter') { clearTimeout(row.timer); applyRow(row); } });
    line.append(row.range, row.field, unit);
    row.controls.push(row.range, row.field);
    root.append(line);
    if (spec.hint) root.append(el('p', { class: 'summary' }, spec.hint));
  }
  row.back.addEventListener('click', () => useFileValue(row));
  const origin = el('div', { class: 'origin' });
  origin.append(row.source, row.back);
  root.append(origin, row.locked, row.message);
  return row;
}

// A slider moved or a value typed: apply once the person pauses.
function changed(row, value) {
  row.value = String(value).trim();
  row.dirty = true;
  clearTimeout(row.timer);
  row.timer = setTimeout(() => applyRow(row), DEBOUNCE_MS);
}

function showValue(row, value) {
  const text = value == null ? '' : String(value);
  row.shown.textContent = withUnit(row.spec, text);
  if (row.spec.choices) {
    for (const button of row.controls) button.setAttribute('aria-checked', String(button.dataset.value === text));
    const choice = row.spec.choices.find((c) => c[0] === text);
    row.explain.textContent = choice ? choice[2] : '';
  } else {
    if (document.activeElement !== row.field) row.field.value = text;
    if (row.range && document.activeElement !== row.range) row.range.value = text;
  }
}

function updateRow(row, item) {
  row.item = item;
  if (!row.dirty) showValue(row, item.value);
  const from = (SOURCES[item.source] || (() => item.source || '?'))();
  row.source.textContent = `From ${from}`;
  const pageSet = item.source === 'page';
  row.back.hidden = !pageSet;
  row.back.textContent = item.fileSource === 'file'
    ? `Use the file’s value (${withUnit(row.spec, item.fileValue)})`
    : `Use the default (${withUnit(row.spec, item.fileValue)})`;
  if (row.gpioNote) {
    const receiver = (state.status && state.status.receiver) || {};
    const output = receiver.output;
    const strip = receiver.strip ? ', not on the LED strip (its effect is below)' : '';
    row.gpioNote.textContent = output && output !== 'gpio'
      ? `The mode acts on GPIO lamps${strip}; this receiver drives ${output}, so nothing here changes with it.`
      : `The mode acts on the GPIO lamps${strip}.`;
  }
  refreshRow(row);
}

function refreshRow(row) {
  const locked = row.item.locked ? String(row.item.locked) : '';
  row.locked.textContent = locked ? `Locked: ${locked}` : '';
  row.locked.hidden = !locked;
  const off = !!locked || !state.control;
  for (const control of row.controls) if (control.disabled !== off) control.disabled = off;
  row.back.disabled = off || row.busy;
}

function request(row, message, saying) {
  const text = JSON.stringify(message);
  if (new TextEncoder().encode(text).length > MAX_MESSAGE) {
    say(row.message, `too long: a value may be at most ${MAX_MESSAGE / 1024} KiB`, 'err');
    row.dirty = false;
    return;
  }
  if (!live || live.readyState !== WebSocket.OPEN || !state.control) {
    say(row.message, live && live.readyState === WebSocket.OPEN ? 'not sent: view only' : 'not sent: no connection to the receiver', 'err');
    return;
  }
  live.send(text);
  pending.set(message.id, row);
  row.busy = true;
  say(row.message, saying);
  refreshRow(row);
}

function applyRow(row) {
  clearTimeout(row.timer);
  row.timer = 0;
  if (row.value == null || row.value === String(row.item.value)) { row.dirty = false; return; }
  request(row, { type: 'set', id: nextId++, key: row.item.key, value: row.value }, 'applying…');
}

function useFileValue(row) {
  clearTimeout(row.timer);
  row.timer = 0;
  row.dirty = false;
  request(row, { type: 'useFile', id: nextId++, key: row.item.key }, 'going back…');
}

function finishSet(row, reply) {
  if (!row) return;
  row.busy = false;
  clearTimeout(row.savedTimer);
  if (reply.ok) {
    // A newer value typed meanwhile goes next; otherwise the receiver's value shows.
    if (!row.timer) row.dirty = false;
    if (!row.dirty && reply.value != null) showValue(row, reply.value);
    say(row.message, 'applied', 'ok');
    row.savedTimer = setTimeout(() => { if (row.message.textContent === 'applied') say(row.message, ''); }, 3000);
  } else {
    row.dirty = false;
    showValue(row, row.item.value);
    say(row.message, String(reply.error || 'not applied'), 'err');
  }
  refreshRow(row);
}

// ---- Wiring check: light one line alone.
let wiringKey = '';
let checking = null;
let checkingStrip = false;

function renderWiring(lines, nowChecking, stripNow) {
  checking = nowChecking;
  checkingStrip = stripNow;
  const signature = JSON.stringify(lines);
  if (signature !== wiringKey) {
    wiringKey = signature;
    const box = $('#wiring-buttons');
    box.textContent = '';
    if (!lines.length) box.append(el('p', { class: 'hint' }, 'This receiver drives no GPIO lines.'));
    for (const l of lines) {
      const button = el('button', { type: 'button', class: 'band-' + l.band, 'data-line': String(l.line) }, `Light ${l.band} — line ${l.line} (${pinText(l.pin)})`);
      button.addEventListener('click', () => check(l.line));
      box.append(button);
    }
  }
  refreshWiring();
}

function refreshWiring() {
  for (const button of document.querySelectorAll('#wiring-buttons button')) {
    button.disabled = !state.control;
    button.setAttribute('aria-pressed', String(!!checking && String(checking.line) === button.dataset.line));
  }
  const stripButton = $('#check-strip');
  stripButton.disabled = !state.control;
  stripButton.setAttribute('aria-pressed', String(checkingStrip));
  stripButton.textContent = checkingStrip ? 'Checking the strip…' : 'Check the strip';
  $('#check-stop').disabled = !state.control || !(checking || checkingStrip);
  show('#checking', checking
    ? `Lighting ${checking.band || 'line'} alone — line ${checking.line} (${pinText(checking.pin)}), for up to 10 s.`
    : checkingStrip ? 'Checking the strip: first red, last blue, then one green pixel runs along it; the lamps stay dark.'
    : 'No check running.');
}

function check(line) {
  const sent = send({ type: 'check', id: nextId++, line });
  say($('#check-msg'), sent ? '' : 'not sent: not connected, or view only', 'err');
}
$('#check-stop').addEventListener('click', () => check(null));
$('#check-strip').addEventListener('click', () => {
  const sent = send({ type: 'check', id: nextId++, strip: true });
  say($('#check-msg'), sent ? '' : 'not sent: not connected, or view only', 'err');
});

// ---- This device as the sound source.
const media = navigator.mediaDevices;
const AudioContextClass = window.AudioContext || window.webkitAudioContext;
const canCapture = !!(media && media.getUserMedia && AudioContextClass && window.AudioWorkletNode);
const micButton = $('#mic');
const tabButton = $('#tab');
let audio = null;
tabButton.hidden = !(media && media.getDisplayMedia);

function refreshAudio() {
  const reason = !media ? NO_SECURE
    : !canCapture ? 'This browser cannot capture sound for the receiver (no getUserMedia or AudioWorklet).'
    : !key ? NEEDS_KEY : '';
  const note = $('#audio-note');
  note.textContent = reason;
  note.hidden = !reason;
  micButton.disabled = tabButton.disabled = !!reason || !!audio;
  $('#stop-audio').disabled = !audio;
}

function audioSay(text, kind) {
  const node = $('#audio-msg');
  node.textContent = text;
  node.className = kind || '';
}

function explain(error, source) {
  const name = error && error.name;
  if (name === 'NotAllowedError') return source === 'tab' ? 'Sharing was cancelled or not allowed.' : 'The microphone was not allowed: allow it in the site settings and try again.';
  if (name === 'NotFoundError') return 'No microphone found.';
  if (name === 'NotReadableError') return 'The microphone is busy or unavailable.';
  return `Could not start: ${(error && error.message) || error}`;
}

async function startAudio(source) {
  if (audio || !key || !canCapture) return;
  let context;
  try { context = new AudioContextClass(); } catch (e) { audioSay(explain(e, source), 'err'); return; }  // its own rate
  context.resume().catch(() => {});  // still inside the click, so that it may start
  const a = { source, context, stream: null, socket: null, node: null, input: null, started: false, stopped: false, sent: 0, dropped: 0,
    sending: false, lastSent: 0, monitor: 0 };
  audio = state.audio = a;
  refreshAudio();
  audioSay(source === 'tab' ? "Choose a tab and tick 'Share tab audio'…" : 'Asking for the microphone…');
  try {
    const plain = { echoCancellation: false, noiseSuppression: false, autoGainControl: false };
    const stream = source === 'tab'
      ? await media.getDisplayMedia({ video: true, audio: plain })
      : await media.getUserMedia({ audio: { ...plain, channelCount: 1 } });
    a.stream = stream;
    for (const track of stream.getVideoTracks()) track.stop();
    if (a.stopped) { stream.getTracks().forEach((t) => t.stop()); return; }
    const tracks = stream.getAudioTracks();
    if (!tracks.length) { stopAudio("No sound was shared: tick 'Share tab audio' in the dialog.", 'err'); return; }
    for (const track of tracks) {
      track.addEventListener('ended', () => {
        if (audio === a) stopAudio(source === 'tab' ? 'Sharing ended.' : 'The microphone stopped.');
      });
    }
    await context.audioWorklet.addModule('/worklet.js');
    if (a.stopped) return;
    a.input = context.createMediaStreamSource(stream);
    a.node = new AudioWorkletNode(context, 'lightorgan-capture', { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
    // About 10 ms a message: the receiver makes a frame every 10 ms of audio, as `send` does, and
    // shows each as it completes (larger messages would show frames in pairs, 50 a second).
    const size = 128 * Math.max(1, Math.round((0.01 * context.sampleRate) / 128));
    const batch = new Float32Array(size);
    let filled = 0;
    a.node.port.onmessage = (event) => {
      const block = event.data;
      for (let offset = 0; offset < block.length;) {
        const n = Math.min(block.length - offset, size - filled);
        batch.set(block.subarray(offset, offset + n), filled);
        filled += n;
        offset += n;
        if (filled === size) { filled = 0; ship(a, batch); }
      }
    };
    a.input.connect(a.node);
    a.node.connect(context.destination);  // silent (the processor writes nothing), but pulled
    openAudioSocket(a);
    await context.resume();
  } catch (error) {
    if (audio === a) stopAudio(explain(error, source), 'err');
  }
}

function ship(a, batch) {
  let sum = 0;
  for (let i = 0; i < batch.length; i++) sum += batch[i] * batch[i];
  meter.db = sum > 0 ? 10 * Math.log10(sum / batch.length) : -100;
  schedule();
  const socket = a.socket;
  if (!a.started || socket.readyState !== WebSocket.OPEN) return;
  if (socket.bufferedAmount > 65536) { a.dropped++; return; }  // newest wins: never a backlog
  socket.send(batch.buffer.slice(0));
  a.sent++;
  a.lastSent = performance.now();
  if (!a.sending) sendingState(a);
}

// "Sending" only while the audio engine runs and messages leave; otherwise the reason, in words.
function sendingState(a) {
  if (audio !== a || !a.started) return;
  const running = a.context.state === 'running';
  const flowing = running && performance.now() - (a.lastSent || -1e9) < 1000;
  a.sending = flowing;
  const what = a.source === 'tab' ? "the tab's sound" : 'the microphone';
  if (flowing) {
    audioSay(`Sending ${what} to the receiver (${a.context.sampleRate} Hz).`, 'ok');
  } else if (!running) {
    audioSay(`Not sending: this browser's audio engine has not started (${a.context.state}); it may have no sound `
      + 'output device. Check the sound settings, then press Stop and try again.', 'err');
  } else if (a.socket && a.socket.bufferedAmount > 65536) {
    audioSay('Not sending: the network to the receiver is not keeping up.', 'err');
  } else {
    audioSay(`Not sending: no sound arrives from ${what}.`, 'err');
  }
}

function openAudioSocket(a) {
  const socket = a.socket = new WebSocket(wsURL('/audio'));
  socket.binaryType = 'arraybuffer';
  socket.onopen = () => socket.send(JSON.stringify({
    type: 'start', key, sampleRate: a.context.sampleRate, channels: 1, source: a.source === 'tab' ? 'tab' : 'microphone',
  }));
  socket.onmessage = (event) => {
    let message = null;
    try { message = JSON.parse(event.data); } catch (e) { return; }
    if (message && message.type === 'started' && audio === a) {
      a.started = true;
      audioSay('Connected; waiting for sound…');
      a.monitor = setInterval(() => sendingState(a), 500);
    }
  };
  socket.onclose = (event) => {
    if (audio !== a) return;
    if (event.code === 4001) { stopAudio('The key was not accepted.', 'err'); forgetKey(); return; }
    const why = { 1003: 'the receiver refused the audio data', 1007: 'the receiver refused a message', 1008: 'not allowed', 1009: 'a message was too long' }[event.code]
      || (a.started ? 'the connection dropped' : 'the receiver is not reachable');
    stopAudio(`Stopped: ${why}${event.reason ? ` (${event.reason})` : ''}.`, 'err');
  };
}

function stopAudio(text, kind) {
  const a = audio;
  if (!a) return;
  audio = null;
  a.stopped = true;
  clearInterval(a.monitor);
  try {
    if (a.node) { a.node.port.onmessage = null; a.node.port.postMessage('stop'); a.node.disconnect(); }
    if (a.input) a.input.disconnect();
  } catch (e) { /* already gone */ }
  if (a.stream) a.stream.getTracks().forEach((t) => t.stop());
  if (a.socket && a.socket.readyState <= WebSocket.OPEN) a.socket.close(1000, 'stopped');
  a.context.close().catch(() => {});
  meter.db = null;
  schedule();
  audioSay(text || 'Stopped.', kind);
  refreshAudio();
}

micButton.addEventListener('click', () => startAudio('microphone'));
tabButton.addEventListener('click', () => startAudio('tab'));
$('#stop-audio').addEventListener('click', () => stopAudio('Stopped.'));
window.addEventListener('pagehide', () => stopAudio('Stopped.'));
window.addEventListener('online', () => { if (!live) connectLive(); });

refreshAccess();
connectLive();
})();
