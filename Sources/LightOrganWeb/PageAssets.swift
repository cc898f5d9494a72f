/// The receiver's page, compiled into the binary: no file is read at run time, no CDN.
enum PageAssets {
    /// `GET /`: the page, CSS inline.
    static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="color-scheme" content="dark">
    <meta name="theme-color" content="rgb(16, 16, 19)">
    <title>lightorgan</title>
    <link rel="icon" href="data:,">
    <style>
    :root { color-scheme: dark; --bg: #101013; --card: #18181d; --line: #2b2b33; --text: #ececf1; --muted: #a6a6b0;
      --ok: #6ee29b; --err: #ff8f85; --accent: #ffb347; --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
      font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; -webkit-text-size-adjust: 100%; }
    * { box-sizing: border-box; }
    [hidden] { display: none !important; }
    body { margin: 0; background: var(--bg); color: var(--text); }
    main { max-width: 40rem; margin: 0 auto; padding: 16px 16px 40px; }
    header { display: flex; align-items: baseline; flex-wrap: wrap; gap: 2px 10px; }
    h1 { font-size: 1.55rem; margin: 0; }
    h2 { font-size: 1.02rem; margin: 0 0 8px; }
    p { margin: 0 0 8px; }
    #receiver-name { color: var(--muted); font-size: 1.05rem; overflow-wrap: anywhere; }
    #conn { margin-left: auto; align-self: center; font-size: .8rem; padding: 3px 10px; border-radius: 99px; background: var(--line); color: var(--muted); }
    #conn.up, .ok { color: var(--ok); }
    #conn.down, .err { color: var(--err); }
    .lamps { display: grid; grid-template-columns: repeat(3, 1fr); gap: 14px; margin: 22px 0 6px; }
    .lamp { margin: 0; text-align: center; min-width: 0; }
    #lamp-bass, .band-bass { --c: 255 40 20; }
    #lamp-mid, .band-mid { --c: 255 150 0; }
    #lamp-treble, .band-treble { --c: 40 110 255; }
    .bulb { position: relative; z-index: 0; width: min(100%, 124px); aspect-ratio: 1; margin: 0 auto; border-radius: 50%;
      background: radial-gradient(circle at 38% 32%, rgb(var(--c) / .2), rgb(var(--c) / .06) 62%, #0b0b0d); box-shadow: inset 0 0 0 2px rgb(var(--c) / .32); }
    .glow { position: absolute; inset: 0; border-radius: 50%; opacity: 0; will-change: opacity;
      background: radial-gradient(circle at 38% 32%, rgb(255 255 255 / .85), rgb(var(--c)) 40%, rgb(var(--c)) 70%, rgb(var(--c) / .8));
      box-shadow: 0 0 18px 4px rgb(var(--c) / .85), 0 0 60px 18px rgb(var(--c) / .4); }
    .lamp figcaption { margin-top: 12px; font-weight: 600; }
    header, figcaption, .card, .notice { position: relative; z-index: 1; }  /* above the glow */
    .num { display: block; font: 500 .8rem/1.3 var(--mono); color: var(--muted); font-variant-numeric: tabular-nums; }
    .card { background: var(--card); border: 1px solid var(--line); border-radius: 14px; padding: 14px 16px; margin-top: 14px; }
    .hint, .locked, #sender-text.idle { color: var(--muted); }
    .hint { font-size: .88rem; }
    .notice { background: #2a2414; border: 1px solid #5c4a1c; color: #f5e2b2; border-radius: 12px; padding: 10px 14px; margin: 16px 0 0; font-size: .9rem; }
    .tiles { display: grid; grid-template-columns: repeat(3, 1fr); gap: 8px; margin: 10px 0 12px; }
    .tiles div { background: #101014; border-radius: 10px; padding: 8px 10px; min-width: 0; }
    .tiles .wide { grid-column: span 2; }
    .tiles b { display: block; font-size: 1.1rem; font-variant-numeric: tabular-nums; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    .tiles span { display: block; color: var(--muted); font-size: .75rem; }
    .facts { display: grid; grid-template-columns: max-content 1fr; gap: 3px 14px; margin: 0; font-size: .88rem; }
    .facts dt { color: var(--muted); }
    .facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
    button, input, select { font: inherit; color: var(--text); border: 1px solid #40404b; min-height: 44px; }
    button { font-size: .95rem; background: #2a2a32; border-radius: 10px; padding: 9px 14px; cursor: pointer; }
    button:hover:not(:disabled) { background: #34343e; }
    button:disabled { opacity: .45; cursor: not-allowed; }
    button.primary { background: #3b2a0f; border-color: #8a5f1c; }
    button[aria-pressed="true"] { border-color: var(--accent); box-shadow: inset 0 0 0 1px var(--accent); }
    :focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
    input, select { background: #0f0f13; border-radius: 8px; padding: 8px 10px; width: 100%; min-width: 0; }
    input:disabled, select:disabled { opacity: .55; }
    .setting { padding: 12px 0; border-top: 1px solid var(--line); }
    .setting:first-child { border-top: 0; padding-top: 4px; }
    .setting .key { display: block; font: 600 .9rem var(--mono); overflow-wrap: anywhere; }
    .summary, .current, .message, .locked { font-size: .85rem; overflow-wrap: anywhere; }
    .summary { color: var(--muted); margin: 2px 0 4px; }
    .edit { display: flex; gap: 8px; }
    .message, .locked { margin: 6px 0 0; }
    .message:empty { display: none; }
    .buttons { display: flex; flex-wrap: wrap; gap: 8px; margin: 4px 0 10px; }
    #wiring-buttons button { flex: 1 1 100%; text-align: left; border-left: 5px solid rgb(var(--c, 160 160 170)); }
    .level { display: flex; align-items: center; gap: 10px; margin: 2px 0 8px; font-size: .85rem; color: var(--muted); }
    .meter { flex: 1; height: 10px; background: #0b0b0e; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
    .meter span { display: block; height: 100%; transform-origin: left; transform: scaleX(0); background: linear-gradient(90deg, #2fbf71, #e6c229 78%, #ff5a4f); }
    #meter-db { width: 4.5em; text-align: right; font-variant-numeric: tabular-nums; }
    details summary { cursor: pointer; font-weight: 600; }
    details p { margin: 8px 0 0; color: var(--muted); font-size: .9rem; }
    </style>
    <script src="/page.js" defer></script>
    </head>
    <body>
    <main>
    <header>
      <h1>lightorgan</h1>
      <span id="receiver-name"></span>
      <span id="conn" role="status">connecting…</span>
    </header>

    <p id="access" class="notice" role="status" hidden></p>

    <section class="lamps" aria-label="Lamps">
      <figure class="lamp" id="lamp-bass" data-level="0">
        <div class="bulb" aria-hidden="true"><div class="glow"></div></div>
        <figcaption>Bass<span class="num">0</span></figcaption>
      </figure>
      <figure class="lamp" id="lamp-mid" data-level="0">
        <div class="bulb" aria-hidden="true"><div class="glow"></div></div>
        <figcaption>Mid<span class="num">0</span></figcaption>
      </figure>
      <figure class="lamp" id="lamp-treble" data-level="0">
        <div class="bulb" aria-hidden="true"><div class="glow"></div></div>
        <figcaption>Treble<span class="num">0</span></figcaption>
      </figure>
    </section>

    <section class="card" id="sender" aria-labelledby="status-title">
      <h2 id="status-title">Status</h2>
      <p id="sender-text" class="idle">Waiting for the receiver…</p>
      <div class="tiles">
        <div><b id="st-fps">–</b><span>frames/s</span></div>
        <div class="wide"><b id="st-age">–</b><span>frame age p50 / p99, ms</span></div>
        <div><b id="st-drops">–</b><span>drops</span></div>
        <div><b id="st-reconnects">–</b><span>reconnects</span></div>
        <div><b id="st-connections">–</b><span>connections</span></div>
      </div>
      <dl class="facts">
        <dt>Output</dt><dd id="st-output">–</dd>
        <dt>Mode</dt><dd id="st-mode">–</dd>
        <dt>GPIO chip</dt><dd id="st-chip">–</dd>
        <dt>Lines</dt><dd id="st-lines">–</dd>
        <dt>Uptime</dt><dd id="st-uptime">–</dd>
        <dt>Version</dt><dd id="st-version">–</dd>
      </dl>
    </section>

    <section class="card" id="audio" aria-labelledby="audio-title">
      <h2 id="audio-title">This device as the sound source</h2>
      <p class="hint">Send this device's sound to the receiver; it lights the lamps like any sender.</p>
      <div class="buttons">
        <button id="mic" type="button" class="primary">Use this device's microphone</button>
        <button id="tab" type="button" hidden>Share a tab's audio</button>
        <button id="stop-audio" type="button" disabled>Stop</button>
      </div>
      <div class="level"><span>Input</span><div class="meter" aria-hidden="true"><span id="meter-fill"></span></div><span id="meter-db">–</span></div>
      <p id="audio-note" class="hint" hidden></p>
      <p id="audio-msg" role="status"></p>
    </section>

    <section class="card" id="settings" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <p id="settings-note" class="hint" hidden>View only: the values as the receiver runs them.</p>
      <div id="settings-list"></div>
    </section>

    <section class="card" id="wiring" aria-labelledby="wiring-title" hidden>
      <h2 id="wiring-title">Wiring check</h2>
      <p class="hint">Lights one GPIO line alone for up to 10 s, to see which lamp is on which pin.</p>
      <div id="wiring-buttons" class="buttons"></div>
      <div class="buttons"><button id="check-stop" type="button">Stop</button></div>
      <p id="checking" class="hint" role="status"></p>
      <p id="check-msg" class="message"></p>
    </section>

    <details class="card">
      <summary>About the certificate warning</summary>
      <p>The receiver made its own certificate; your browser warns once. Choose Advanced → Proceed. The address and its key are in the receiver's log.</p>
    </details>
    </main>
    </body>
    </html>
    """#

    /// `GET /page.js`
    static let script = #"""
    // lightorgan receiver page. /live: hello, then 3-byte lamp levels and status; set and check.
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

    const state = { levels: [0, 0, 0], updates: 0, status: null, control: false, audio: null };
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
    const KINDS = { lightorgan: 'lightorgan sender', '2016 app': '2016 app', browser: 'browser' };

    // ---- Lamps and the input meter: drawn once per animation frame, newest values only.
    const lamps = ['bass', 'mid', 'treble'].map((band) => {
      const root = $('#lamp-' + band);
      return { root, glow: $('.glow', root), number: $('.num', root), shown: -1 };
    });
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
        lamp.glow.style.opacity = (value / 255).toFixed(3);
        lamp.number.textContent = String(value);
      });
      if (meter.db !== meter.shown) {
        const db = meter.shown = meter.db;
        meter.fill.style.transform = `scaleX(${db == null ? 0 : Math.min(1, Math.max(0, (db + 60) / 60)).toFixed(3)})`;
        meter.text.textContent = db == null ? '–' : db <= -90 ? '−∞ dB' : `${Math.round(db)} dB`;
      }
    }

    // ---- /live, reconnecting with backoff 1, 2, 4, 8, 10, 10… s.
    const wsURL = (path) => (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + path;
    let live = null;
    let liveFailures = 0;
    let liveTimer = 0;
    let helloDone = false;
    let nextId = 1;
    const pending = new Map();  // set id → settings row

    function setConnection(text, kind) {
      const node = $('#conn');
      node.textContent = text;
      node.className = kind || '';
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
        dropLive();
        if (event.code === 4001) { forgetKey(); liveTimer = setTimeout(connectLive, 300); }
        else { refreshAccess(); retryLive(); }
      };
    }

    function dropLive() {
      const socket = live;
      live = null;
      helloDone = false;
      state.control = false;
      for (const row of pending.values()) { row.busy = false; say(row.message, 'not saved: the connection dropped', 'err'); }
      pending.clear();
      state.levels.fill(0);
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
        if (bytes.length !== 3) return;
        state.levels[0] = bytes[0];
        state.levels[1] = bytes[1];
        state.levels[2] = bytes[2];
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
      show('#st-fps', count(s.fps));
      show('#st-age', s.frameAge ? `${ms(s.frameAge.p50)} / ${ms(s.frameAge.p99)}` : '–');
      show('#st-drops', count(s.drops));
      show('#st-reconnects', count(s.reconnects));
      show('#st-connections', count(s.connections));
      show('#st-output', receiver.output || '–');
      show('#st-mode', receiver.mode || '–');
      show('#st-chip', receiver.chip || '–');
      const lines = Array.isArray(receiver.lines) ? receiver.lines : [];
      show('#st-lines', lines.map((l) => `${l.band} ${l.line} (${pinText(l.pin)})`).join(', ') || 'none');
      show('#st-uptime', typeof s.uptime === 'number' ? duration(s.uptime) : '–');
      show('#st-version', s.version || '–');
      renderSettings(Array.isArray(s.settings) ? s.settings : []);
      renderWiring(lines, s.checking || null);
    }

    // ---- Settings: one form per key. A value being edited is never overwritten by a status.
    const rows = new Map();
    const WORDS = /^[\w.+-]+(\s*,\s*[\w.+-]+)+$/;

    function renderSettings(list) {
      const seen = new Set();
      for (const item of list) {
        if (!item || typeof item.key !== 'string') continue;
        seen.add(item.key);
        let row = rows.get(item.key);
        if (!row) {
          row = makeRow(item);
          rows.set(item.key, row);
          $('#settings-list').append(row.form);
        }
        updateRow(row, item);
      }
      for (const [name, row] of rows) {
        if (!seen.has(name)) { row.form.remove(); rows.delete(name); }
      }
    }

    function makeRow(item) {
      const id = 'setting-' + item.key.replace(/[^\w]+/g, '-');
      const allowed = String(item.allowed || '').trim();
      const words = WORDS.test(allowed) ? allowed.split(/\s*,\s*/) : null;
      let input;
      if (words) {
        input = el('select', { class: 'value', id });
        for (const word of words) input.append(el('option', { value: word }, word));
      } else {
        input = el('input', { class: 'value', id, type: 'text', autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false' });
        if (/^[\d.]/.test(allowed)) input.setAttribute('inputmode', 'decimal');  // (no minus key on iOS)
      }
      const apply = el('button', { class: 'apply', type: 'submit' }, 'Apply');
      const edit = el('div', { class: 'edit' });
      edit.append(input, apply);
      const form = el('form', { class: 'setting', 'data-key': item.key, novalidate: '' });
      const row = {
        form, input, apply, words, item, dirty: false, busy: false, timer: 0,
        summary: el('p', { class: 'summary' }),
        current: el('p', { class: 'current' }),
        locked: el('p', { class: 'locked' }),
        message: el('p', { class: 'message', 'aria-live': 'polite' }),
      };
      form.append(el('label', { class: 'key', for: id }, item.key), row.summary, row.current, edit, row.locked, row.message);
      input.addEventListener('input', () => { row.dirty = true; });
      input.addEventListener('change', () => { row.dirty = true; });
      input.addEventListener('blur', () => { if (input.value === String(row.item.value)) row.dirty = false; });
      form.addEventListener('submit', (event) => { event.preventDefault(); applyRow(row); });
      return row;
    }

    function showValue(row, value) {
      const text = value == null ? '' : String(value);
      if (row.words && ![...row.input.options].some((o) => o.value === text)) {
        row.input.append(el('option', { value: text }, text || '(empty)'));
      }
      row.input.value = text;
    }

    function updateRow(row, item) {
      row.item = item;
      row.summary.textContent = item.summary || '';
      const value = item.value == null || item.value === '' ? '(empty)' : String(item.value);
      const allowed = !row.words && item.allowed ? ` · allowed: ${item.allowed}` : '';
      row.current.replaceChildren('Now ', el('b', {}, value), `${item.source ? ' · from ' + item.source : ''}${allowed}`);
      if (!row.dirty && document.activeElement !== row.input) showValue(row, item.value);
      refreshRow(row);
    }

    function refreshRow(row) {
      const locked = row.item.locked ? String(row.item.locked) : '';
      row.locked.textContent = locked ? `Locked: ${locked}` : '';
      row.locked.hidden = !locked;
      const off = !!locked || !state.control;
      if (row.input.disabled !== off) row.input.disabled = off;
      row.apply.disabled = off || row.busy;
    }

    function applyRow(row) {
      if (row.busy) return;
      const id = nextId++;
      clearTimeout(row.timer);
      if (!send({ type: 'set', id, key: row.item.key, value: row.input.value.trim() })) {
        say(row.message, 'not sent: not connected, or view only', 'err');
        return;
      }
      pending.set(id, row);
      row.busy = true;
      say(row.message, 'saving…');
      refreshRow(row);
    }

    function finishSet(row, reply) {
      if (!row) return;
      row.busy = false;
      if (reply.ok) {
        row.dirty = false;
        if (reply.value != null) showValue(row, reply.value);
        say(row.message, 'saved', 'ok');
        row.timer = setTimeout(() => { if (row.message.textContent === 'saved') say(row.message, ''); }, 4000);
      } else {
        say(row.message, String(reply.error || 'not saved'), 'err');
      }
      refreshRow(row);
    }

    // ---- Wiring check: light one line alone.
    let wiringKey = '';
    let checking = null;

    function renderWiring(lines, nowChecking) {
      checking = nowChecking;
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
      $('#check-stop').disabled = !state.control || !checking;
      show('#checking', checking
        ? `Lighting ${checking.band || 'line'} alone — line ${checking.line} (${pinText(checking.pin)}), for up to 10 s.`
        : 'No check running.');
    }

    function check(line) {
      const sent = send({ type: 'check', id: nextId++, line });
      say($('#check-msg'), sent ? '' : 'not sent: not connected, or view only', 'err');
    }
    $('#check-stop').addEventListener('click', () => check(null));

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
      const a = { source, context, stream: null, socket: null, node: null, input: null, started: false, stopped: false, sent: 0, dropped: 0 };
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
          audioSay(`Sending ${a.source === 'tab' ? "the tab's sound" : 'the microphone'} to the receiver (${a.context.sampleRate} Hz).`, 'ok');
        }
      };
      socket.onclose = (event) => {
        if (audio !== a) return;
        if (event.code === 4001) { stopAudio('The key was not accepted.', 'err'); forgetKey(); return; }
        const why = { 1003: 'the receiver refused the audio data', 1007: 'the receiver refused a message', 1008: 'not allowed', 1009: 'a message was too big' }[event.code]
          || (a.started ? 'the connection dropped' : 'the receiver is not reachable');
        stopAudio(`Stopped: ${why}${event.reason ? ` (${event.reason})` : ''}.`, 'err');
      };
    }

    function stopAudio(text, kind) {
      const a = audio;
      if (!a) return;
      audio = null;
      a.stopped = true;
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
    """#

    /// `GET /worklet.js`: the AudioWorkletProcessor `lightorgan-capture`.
    static let worklet = #"""
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
    """#
}
