// shirube chat page. Plain script, no dependencies, loaded with defer.
// Answer HTML comes from the server already rendered and sanitised; text
// typed by the user or streamed from the model is only ever set as text.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const root = document.documentElement;
  root.classList.add('js');

  // The sidebar sticks just below the sticky header, and answers scrolled
  // into view must clear both the header and the sticky question box: tell
  // the stylesheet how tall they are.
  const top = document.querySelector('header.top');
  const form = $('ask');
  const setHeights = () => {
    root.style.setProperty('--top-h', top.offsetHeight + 'px');
    root.style.setProperty('--ask-h', form.offsetHeight + 'px');
  };
  setHeights();
  window.addEventListener('resize', setHeights);
  if (window.ResizeObserver) new ResizeObserver(setHeights).observe(form);

  const chat = $('chat');
  const question = $('question');
  const send = $('send');
  const stop = $('stop');
  const k = $('k');
  const bm25 = $('bm25_weight');
  const bm25Out = $('bm25_out');
  const vectorOut = $('vector_out');
  const dataFolder = $('data_folder_path');
  const rebuild = $('rebuild');
  const progress = $('rebuild_progress');
  const status = $('index_status');
  const reset = $('reset');
  const settings = $('settings');
  const settingsToggle = $('settings_toggle');
  const maxHistory = Number(chat.dataset.max || 5);
  const canRebuild = !rebuild.disabled;
  let busy = false;
  let inflight = null; // AbortController of the answer being streamed

  // Settings live for the browser tab, like Streamlit's session_state. The
  // data folder is the server's choice and is not kept.
  const saved = (name, el) => {
    const v = sessionStorage.getItem('shirube.' + name);
    if (v !== null) el.value = v;
    el.addEventListener('change', () => sessionStorage.setItem('shirube.' + name, el.value));
  };
  saved('k', k);
  saved('bm25_weight', bm25);

  // On a phone the settings are folded away behind the 設定 button.
  settingsToggle.addEventListener('click', () => {
    const open = settingsToggle.getAttribute('aria-expanded') !== 'true';
    settingsToggle.setAttribute('aria-expanded', String(open));
    settings.classList.toggle('open', open);
    setHeights();
  });

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

  // A 401 means the login expired (or the server restarted): go back to
  // the login page instead of showing the API's message in the chat.
  function loginExpired(resp) {
    if (resp.status !== 401) return false;
    window.location.assign('/login?expired=1');
    return true;
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
    ask(question.value.trim(), true);
  });
  stop.addEventListener('click', () => {
    if (inflight) inflight.abort();
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

  // actions are the copy and regenerate buttons under an answer (the
  // server renders the same for the exchanges it keeps).
  function actions() {
    const bar = el('div', 'actions');
    const copy = el('button', 'secondary copy', 'コピー');
    const again = el('button', 'secondary regenerate', '再生成');
    copy.type = 'button';
    again.type = 'button';
    bar.append(copy, again);
    return bar;
  }

  function setBusy(on) {
    busy = on;
    send.disabled = on;
    send.hidden = on;
    stop.hidden = !on;
    if (on) form.setAttribute('aria-busy', 'true');
    else form.removeAttribute('aria-busy');
    setHeights();
  }

  // ask sends text as a question and streams the answer into a new
  // exchange at the end of the chat.
  async function ask(text, fromBox) {
    if (!text || busy) return;
    setBusy(true);

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
    if (fromBox) question.value = '';

    const ctl = new AbortController();
    inflight = ctl;
    let answered = false;
    try {
      const resp = await fetch('/api/ask', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Accept': 'text/event-stream' },
        // The weight is sent only once the user has moved the slider; until
        // then the server chooses it per question (its default).
        body: JSON.stringify({ question: text, k: clampK(), bm25_weight: sessionStorage.getItem('shirube.bm25_weight') === null ? undefined : Number(bm25.value) }),
        signal: ctl.signal,
      });
      if (loginExpired(resp)) return;
      if (!resp.ok) {
        const err = await resp.json().catch(() => ({ error: resp.status + ' ' + resp.statusText }));
        showError(reply, err.error);
        return;
      }
      await readEvents(resp, (name, data) => {
        if (name === 'danger') {
          // Decided from the question before any text: the banner leads.
          const banner = el('div', 'banner', data.banner);
          banner.setAttribute('role', 'alert');
          reply.insertBefore(banner, live);
        } else if (name === 'delta') {
          live.textContent += data.text;
        } else if (name === 'done') {
          reply.innerHTML = data.html; // rendered and sanitised by the server
          answered = true;
        } else if (name === 'error') {
          showError(reply, data.error);
        }
      });
    } catch (err) {
      if (err.name === 'AbortError') {
        live.removeAttribute('aria-busy');
        reply.append(el('p', 'stopped', '（回答を停止しました）'));
        li.dataset.stopped = 'true';
      } else {
        showError(reply, '通信に失敗しました: ' + err.message);
      }
    } finally {
      inflight = null;
      if (answered) li.append(actions());
      setBusy(false);
      li.scrollIntoView({ block: 'end' });
      question.focus();
      li.dataset.done = 'true'; // the exchange is finished (tests wait for this)
    }
  }

  // answerText is what the copy button copies: the answer as shown, then
  // its sources.
  function answerText(li) {
    const body = li.querySelector('.answer .body');
    const parts = [(body || li.querySelector('.reply')).innerText.trim()];
    const cites = Array.from(li.querySelectorAll('details.citation summary'), (s) => s.textContent.trim());
    if (cites.length) parts.push(cites.join('\n'));
    return parts.join('\n\n');
  }

  // copyText puts text on the clipboard. The Clipboard API exists only in
  // secure contexts (HTTPS, localhost); a LAN address over plain HTTP falls
  // back to copying a hidden text field.
  async function copyText(text) {
    if (window.isSecureContext && navigator.clipboard) {
      await navigator.clipboard.writeText(text);
      return;
    }
    const area = el('textarea', 'visually-hidden');
    area.value = text;
    area.setAttribute('readonly', '');
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    if (!ok) throw new Error('copy refused');
  }

  chat.addEventListener('click', async (e) => {
    const btn = e.target.closest('button');
    if (!btn) return;
    const li = btn.closest('li.exchange');
    if (btn.classList.contains('copy')) {
      const label = btn.textContent;
      try {
        await copyText(answerText(li));
        btn.textContent = 'コピーしました';
      } catch (err) {
        btn.textContent = 'コピーできませんでした';
      }
      setTimeout(() => { btn.textContent = label; }, 1500);
    } else if (btn.classList.contains('regenerate')) {
      ask(li.querySelector('.question').textContent, false);
    }
  });

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
      if (loginExpired(resp) || !resp.ok) return;
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
      if (loginExpired(resp)) return;
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

  // 会話をクリア forgets the conversation on the server too, so a reload
  // does not bring it back.
  reset.addEventListener('click', async () => {
    const resp = await fetch('/api/session/reset', { method: 'POST' });
    if (loginExpired(resp)) return;
    chat.replaceChildren();
    question.focus();
  });

  pollStatus();
})();
