// shirube chat page. Plain script, no dependencies, loaded with defer.
// Answer HTML comes from the server already rendered and sanitised; text
// typed by the user or streamed from the model is only ever set as text.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);

  // The sidebar sticks just below the sticky header: tell the stylesheet
  // how tall the header is.
  const top = document.querySelector('header.top');
  const setTop = () => document.documentElement.style.setProperty('--top-h', top.offsetHeight + 'px');
  setTop();
  window.addEventListener('resize', setTop);
  const chat = $('chat');
  const form = $('ask');
  const question = $('question');
  const send = $('send');
  const k = $('k');
  const bm25 = $('bm25_weight');
  const bm25Out = $('bm25_out');
  const vectorOut = $('vector_out');
  const dataFolder = $('data_folder_path');
  const rebuild = $('rebuild');
  const progress = $('rebuild_progress');
  const status = $('index_status');
  const reset = $('reset');
  const maxHistory = Number(chat.dataset.max || 5);
  const canRebuild = !rebuild.disabled;
  let busy = false;

  // Settings live for the browser tab, like Streamlit's session_state.
  const saved = (name, el) => {
    const v = sessionStorage.getItem('shirube.' + name);
    if (v !== null) el.value = v;
    el.addEventListener('change', () => sessionStorage.setItem('shirube.' + name, el.value));
  };
  saved('k', k);
  saved('bm25_weight', bm25);
  saved('data_folder_path', dataFolder);

  function showWeights() {
    const w = Number(bm25.value);
    bm25Out.value = w.toFixed(2);
    vectorOut.value = (1 - w).toFixed(2);
  }
  bm25.addEventListener('input', showWeights);
  showWeights();

  function clampK() {
    let n = Math.round(Number(k.value));
    if (!Number.isFinite(n) || n < 1) n = 1;
    if (n > 20) n = 20;
    return n;
  }

  // Enter sends, Shift+Enter is a new line; never while an IME is composing.
  question.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    ask();
  });

  function el(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function trimHistory() {
    while (chat.children.length > maxHistory) chat.firstElementChild.remove();
  }

  function showError(target, msg) {
    target.replaceChildren(el('p', 'error', '⚠️ ' + msg));
  }

  async function ask() {
    const text = question.value.trim();
    if (!text || busy) return;
    busy = true;
    send.disabled = true;
    form.setAttribute('aria-busy', 'true');

    const li = el('li', 'exchange');
    const user = el('div', 'msg user');
    user.append(el('span', 'icon icon-user', 'Q'), el('p', 'question', text));
    const bot = el('div', 'msg assistant');
    const reply = el('div', 'reply');
    const live = el('div', 'streaming', '');
    live.setAttribute('aria-busy', 'true');
    reply.append(live);
    bot.append(el('span', 'icon icon-assistant', 'A'), reply);
    bot.firstChild.setAttribute('aria-hidden', 'true');
    user.firstChild.setAttribute('aria-hidden', 'true');
    li.append(user, bot);
    chat.append(li);
    trimHistory();
    li.scrollIntoView({ block: 'end' });
    question.value = '';

    try {
      const resp = await fetch('/api/ask', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Accept': 'text/event-stream' },
        // The weight is sent only once the user has moved the slider; until
        // then the server chooses it per question (its default).
        body: JSON.stringify({ question: text, k: clampK(), bm25_weight: sessionStorage.getItem('shirube.bm25_weight') === null ? undefined : Number(bm25.value) }),
      });
      if (!resp.ok) {
        const err = await resp.json().catch(() => ({ error: resp.status + ' ' + resp.statusText }));
        showError(reply, err.error);
        return;
      }
      await readEvents(resp, (name, data) => {
        if (name === 'delta') {
          live.textContent += data.text;
        } else if (name === 'done') {
          reply.innerHTML = data.html; // rendered and sanitised by the server
        } else if (name === 'error') {
          showError(reply, data.error);
        }
      });
    } catch (err) {
      showError(reply, '通信に失敗しました: ' + err.message);
    } finally {
      busy = false;
      send.disabled = false;
      form.removeAttribute('aria-busy');
      li.scrollIntoView({ block: 'end' });
      question.focus();
      li.dataset.done = 'true'; // the exchange is finished (tests wait for this)
    }
  }

  // readEvents parses a text/event-stream response body.
  async function readEvents(resp, on) {
    const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let name = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) name = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trimStart();
        }
        if (data) on(name, JSON.parse(data));
      }
    }
  }

  // Index status and rebuild.
  function showStatus(st) {
    const ix = st.index;
    const rb = st.rebuild;
    const lines = [];
    if (ix.ready) {
      const built = new Date(ix.built_at);
      lines.push('チャンク数: ' + ix.chunks + '（文書 ' + ix.documents + '）');
      lines.push('最終更新: ' + built.toLocaleString('ja-JP'));
    } else {
      lines.push(ix.message || 'インデックスがありません — 再構築してください');
    }
    if (rb.running) {
      lines.push('再構築中: ' + (rb.phase || '') + (rb.total ? ' ' + rb.done + '/' + rb.total : ''));
    } else if (rb.error) {
      lines.push('⚠️ ' + rb.error);
    } else if (rb.phase === 'done') {
      lines.push('✅ 再構築が完了しました');
    }
    status.replaceChildren();
    lines.forEach((l, i) => {
      if (i) status.append(document.createElement('br'));
      status.append(document.createTextNode(l));
    });
    status.classList.toggle('missing', !ix.ready);
    progress.hidden = !rb.running;
    if (rb.running && rb.total) {
      progress.max = rb.total;
      progress.value = rb.done;
    } else if (rb.running) {
      progress.removeAttribute('value');
    }
    rebuild.disabled = rb.running || !canRebuild;
    rebuild.setAttribute('aria-busy', rb.running ? 'true' : 'false');
  }

  async function pollStatus() {
    for (;;) {
      const resp = await fetch('/api/status', { headers: { 'Accept': 'application/json' } });
      if (!resp.ok) return;
      const st = await resp.json();
      showStatus(st);
      if (!st.rebuild.running) return;
      await new Promise((r) => setTimeout(r, 400));
    }
  }

  rebuild.addEventListener('click', async () => {
    rebuild.disabled = true;
    try {
      const resp = await fetch('/api/index/rebuild', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ data_folder_path: dataFolder.value.trim() }),
      });
      if (!resp.ok && resp.status !== 409) {
        const err = await resp.json().catch(() => ({ error: resp.statusText }));
        status.textContent = '⚠️ ' + err.error;
        rebuild.disabled = false;
        return;
      }
      await pollStatus();
    } catch (err) {
      status.textContent = '⚠️ 通信に失敗しました: ' + err.message;
      rebuild.disabled = false;
    }
  });

  reset.addEventListener('click', async () => {
    await fetch('/api/session/reset', { method: 'POST' });
    chat.replaceChildren();
    question.focus();
  });

  pollStatus();
})();
