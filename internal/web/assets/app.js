// shirube chat page. Plain script, no dependencies, loaded with defer.
// Answer HTML comes from the server already rendered and sanitised; text
// typed by the user or streamed from the model is only ever set as text
// (the streaming Markdown view below builds elements, never HTML).
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
  const kError = $('k_error');
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
  const jump = $('jump');
  const welcome = $('welcome');
  const convList = $('conv_list');
  const convSearch = $('conv_search');
  const newConv = $('new_conv');
  const card = $('cite_card');
  const viewer = $('viewer');
  const maxHistory = Number(chat.dataset.max || 5);
  const canRebuild = rebuild && !rebuild.disabled;
  let busy = false;
  let inflight = null; // AbortController of the answer being streamed
  let convs = false; // the server keeps conversations (GET /api/conversations answered)
  let convID = sessionStorage.getItem('shirube.conv') || '';
  let admin = true; // until GET /api/me says otherwise
  let auto = false; // the server chooses the BM25 weight per question

  function el(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function button(cls, text, label) {
    const b = el('button', cls, text);
    b.type = 'button';
    if (label) b.setAttribute('aria-label', label);
    return b;
  }
  // icon is an inline SVG (no emoji font needed); paths are fixed here.
  const paths = {
    up: 'M2 9h3v11H2zM7 20h9.5a2 2 0 0 0 2-1.6l1.4-7A2 2 0 0 0 18 9h-5l.8-4.2A1.6 1.6 0 0 0 11 4L7 9z',
    down: 'M2 4h3v11H2zM7 4h9.5a2 2 0 0 1 2 1.6l1.4 7A2 2 0 0 1 18 15h-5l.8 4.2A1.6 1.6 0 0 1 11 20l-4-5z',
  };
  function icon(name) {
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', '0 0 22 24');
    svg.setAttribute('aria-hidden', 'true');
    svg.setAttribute('class', 'svg');
    const p = document.createElementNS(ns, 'path');
    p.setAttribute('d', paths[name]);
    svg.append(p);
    return svg;
  }

  // ---- settings (administrators only; absent from an employee's page) ----
  if (k && bm25) {
    // Settings live for the browser tab. The data folder is the server's
    // choice and is not kept.
    const saved = (name, input) => {
      const v = sessionStorage.getItem('shirube.' + name);
      if (v !== null) input.value = v;
      input.addEventListener('change', () => sessionStorage.setItem('shirube.' + name, input.value));
    };
    saved('k', k);
    saved('bm25_weight', bm25);
    bm25.addEventListener('input', showWeights);
    showWeights();
    k.addEventListener('input', checkK);
  }
  function showWeights() {
    const w = Math.round(Number(bm25.value) * 100) / 100;
    bm25Out.value = w.toFixed(2);
    vectorOut.value = (1 - w).toFixed(2);
  }
  // showApplied shows the weight the server applied (search in the ask
  // reply) while the slider has not been moved: with an automatic weight
  // the sidebar must not claim a fixed one.
  function showApplied(search) {
    if (!bm25 || sessionStorage.getItem('shirube.bm25_weight') !== null) return;
    if (search && typeof search.bm25_weight === 'number') {
      bm25Out.value = search.bm25_weight.toFixed(2) + (search.auto_weight ? '（自動）' : '');
      vectorOut.value = (1 - search.bm25_weight).toFixed(2);
    } else if (auto) {
      bm25Out.value = '自動（質問ごと）';
      vectorOut.value = '自動';
    }
  }
  // checkK shows a k outside 1–max in the field (never silently clamped)
  // and returns the valid k, or null.
  function checkK() {
    if (!k) return undefined;
    const max = Number(k.max || 20);
    const n = Number(k.value);
    const bad = k.value.trim() === '' || !Number.isInteger(n) || n < 1 || n > max;
    k.setAttribute('aria-invalid', String(bad));
    kError.hidden = !bad;
    kError.textContent = bad ? 'k は 1〜' + max + ' の整数で指定してください' : '';
    return bad ? null : n;
  }

  // On a phone the sidebar is folded away behind the メニュー button.
  settingsToggle.addEventListener('click', () => {
    const open = settingsToggle.getAttribute('aria-expanded') !== 'true';
    settingsToggle.setAttribute('aria-expanded', String(open));
    settings.classList.toggle('open', open);
    setHeights();
  });

  // A 401 means the login expired (or the server restarted): go back to
  // the login page instead of showing the API's message in the chat.
  function loginExpired(resp) {
    if (resp.status !== 401) return false;
    window.location.assign('/login?expired=1');
    return true;
  }
  // errorText reads the API's error body, old ({"error":"…"}) or new
  // ({"error":{"code","message"}}) shape.
  async function errorText(resp) {
    const body = await resp.json().catch(() => null);
    const e = body && body.error;
    if (e && typeof e === 'object') return e.message || e.code;
    return e || resp.status + ' ' + resp.statusText;
  }
  async function api(method, url, body) {
    const opt = { method, headers: { 'Accept': 'application/json' } };
    if (body !== undefined) {
      opt.headers['Content-Type'] = 'application/json';
      opt.body = JSON.stringify(body);
    }
    const resp = await fetch(url, opt);
    if (loginExpired(resp)) throw new Error('ログインの有効期限が切れました');
    if (!resp.ok) {
      const err = new Error(await errorText(resp));
      err.status = resp.status;
      throw err;
    }
    return resp.status === 204 ? null : resp.json().catch(() => null);
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
    ask(question.value.trim(), { fromBox: true });
  });
  stop.addEventListener('click', () => {
    if (inflight) inflight.abort();
  });

  function trimHistory() {
    // With server-side conversations the whole conversation is shown.
    if (convs) return;
    while (chat.children.length > maxHistory) chat.firstElementChild.remove();
  }
  function showWelcome() {
    if (welcome) welcome.hidden = chat.children.length > 0;
  }

  // ---- following a streaming answer ----
  // The view keeps the newest text in view unless the reader scrolled up;
  // then a 「最新へ移動」 button brings them back.
  let following = true;
  let followTarget = null;
  function bottomGap(node) {
    const r = node.getBoundingClientRect();
    return r.bottom - (window.innerHeight - form.offsetHeight);
  }
  function follow() {
    if (!followTarget || !following) return;
    const gap = bottomGap(followTarget);
    if (gap > 0) window.scrollBy(0, gap + 8);
  }
  // Our own scrolling leaves the end in view (following stays on); a
  // reader's scroll up leaves it below (following goes off).
  window.addEventListener('scroll', () => {
    if (!followTarget) return;
    following = bottomGap(followTarget) <= 40;
    jump.hidden = following;
  }, { passive: true });
  jump.addEventListener('click', () => {
    following = true;
    jump.hidden = true;
    if (followTarget) follow();
    else window.scrollTo(0, document.documentElement.scrollHeight);
  });

  // ---- Markdown while streaming ----
  // mdBlocks turns (partial) Markdown into elements: headings, paragraphs,
  // lists, block quotes, fenced code and tables, with **bold**, `code` and
  // [n] chips inside. Text is only ever set as text. The server's final
  // render (goldmark + bluemonday) produces the same elements, so the swap
  // at the end does not move the layout.
  function inline(parent, text, cites) {
    const re = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\[\d+(?:\s*[,，、]\s*\d+)*\])/g;
    let last = 0;
    let m;
    while ((m = re.exec(text))) {
      if (m.index > last) parent.append(text.slice(last, m.index));
      if (m[1]) parent.append(el('code', '', m[1].slice(1, -1)));
      else if (m[2]) parent.append(el('strong', '', m[2].slice(2, -2)));
      else parent.append(...chips(m[3], cites));
      last = re.lastIndex;
    }
    if (last < text.length) parent.append(text.slice(last));
  }
  function lineBreaks(parent, lines, cites) {
    lines.forEach((l, i) => {
      if (i) parent.append(el('br'));
      inline(parent, l, cites);
    });
  }
  const isRow = (l) => /^\s*\|.*\|\s*$/.test(l);
  const isDelim = (l) => /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(l) && l.includes('-');
  const cells = (l) => l.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
  function mdBlocks(text, cites) {
    const frag = document.createDocumentFragment();
    const lines = text.split('\n');
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if (!line.trim()) { i++; continue; }
      if ((m = /^\s*(```+|~~~+)/.exec(line))) {
        const fence = m[1];
        const body = [];
        for (i++; i < lines.length && !lines[i].trim().startsWith(fence); i++) body.push(lines[i]);
        i++;
        const pre = el('pre');
        pre.append(el('code', '', body.join('\n')));
        frag.append(pre);
        continue;
      }
      if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
        const h = el('h' + m[1].length);
        inline(h, m[2], cites);
        frag.append(h);
        i++;
        continue;
      }
      if (isRow(line) && i + 1 < lines.length && isDelim(lines[i + 1])) {
        const table = el('table');
        const head = el('thead');
        const tr = el('tr');
        cells(line).forEach((c) => { const th = el('th'); inline(th, c, cites); tr.append(th); });
        head.append(tr);
        table.append(head);
        const tbody = el('tbody');
        for (i += 2; i < lines.length && isRow(lines[i]); i++) {
          const row = el('tr');
          cells(lines[i]).forEach((c) => { const td = el('td'); inline(td, c, cites); row.append(td); });
          tbody.append(row);
        }
        if (tbody.children.length) table.append(tbody);
        frag.append(table);
        continue;
      }
      if ((m = /^\s*([-*+]|\d+[.)])\s+/.exec(line))) {
        const ordered = /\d/.test(m[1]);
        const list = el(ordered ? 'ol' : 'ul');
        if (ordered && parseInt(m[1], 10) !== 1) list.start = parseInt(m[1], 10);
        while (i < lines.length && (m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]))) {
          const item = el('li');
          inline(item, m[2], cites);
          list.append(item);
          i++;
        }
        frag.append(list);
        continue;
      }
      if (/^\s*>/.test(line)) {
        const q = el('blockquote');
        const body = [];
        for (; i < lines.length && /^\s*>/.test(lines[i]); i++) body.push(lines[i].replace(/^\s*>\s?/, ''));
        q.append(mdBlocks(body.join('\n'), cites));
        frag.append(q);
        continue;
      }
      const para = [];
      for (; i < lines.length && lines[i].trim() && !/^\s*(```|~~~|#{1,6}\s|[-*+]\s|\d+[.)]\s|>)/.test(lines[i]) &&
        !(isRow(lines[i]) && i + 1 < lines.length && isDelim(lines[i + 1])); i++) para.push(lines[i]);
      if (!para.length) { para.push(line); i++; }
      const p = el('p');
      lineBreaks(p, para, cites);
      frag.append(p);
    }
    return frag;
  }

  // ---- citations: [n] chips, a hover/focus card, the source viewer ----
  function chips(marker, cites) {
    const out = [];
    const nums = marker.slice(1, -1).split(/\s*[,，、]\s*/);
    for (const s of nums) {
      const n = Number(s);
      const c = cites && cites.get(n);
      if (!c) {
        out.push('[' + s + ']');
        continue;
      }
      const b = button('cite', String(n), '引用元 ' + n + ': ' + c.label);
      b.dataset.n = String(n);
      if (c.chunk) b.dataset.chunk = c.chunk;
      b.setAttribute('aria-describedby', 'cite_card');
      out.push(b);
    }
    return out;
  }
  // citeMap indexes the citations of an answer by number. Without the JSON
  // (an exchange the server rendered) they are read from the sources list,
  // whose entries carry data-n, data-chunk, data-label, data-title and
  // data-page.
  function citeMap(li, list) {
    const m = new Map();
    if (list && list.length) {
      for (const c of list) {
        m.set(c.n, {
          n: c.n, chunk: c.chunk_id || '', excerpt: c.excerpt || '', page: c.page || 0,
          title: c.title || c.file || '', label: c.label || ((c.title || c.file || '') + (c.page ? ' p.' + c.page : '')),
        });
      }
    } else {
      li.querySelectorAll('details.citation').forEach((d, i) => {
        const n = Number(d.dataset.n || i + 1);
        const meta = d.querySelector('.meta');
        const ex = d.querySelector('.excerpt');
        m.set(n, {
          n, chunk: d.dataset.chunk || '', page: Number(d.dataset.page || 0), title: d.dataset.title || '',
          label: d.dataset.label || (meta ? meta.textContent.replace(/^\[\d+\]\s*/, '') : ''),
          excerpt: ex ? ex.textContent.trim() : '',
        });
      });
    }
    li.cites = m;
    return m;
  }
  // enhance turns the [n] markers of a rendered answer into chips (never
  // inside code), and gives code blocks a copy button.
  function enhance(li, list) {
    const cites = citeMap(li, list);
    li.querySelectorAll('details.citation').forEach((d, i) => {
      const c = cites.get(Number(d.dataset.n || i + 1));
      if (c) d.id = li.dataset.key + '-src-' + c.n;
    });
    const body = li.querySelector('.answer .body');
    if (body) {
      const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT, {
        acceptNode: (n) => (n.parentElement.closest('pre, code, a, .cite') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
      });
      const hits = [];
      for (let n = walker.nextNode(); n; n = walker.nextNode()) if (/\[\d/.test(n.data)) hits.push(n);
      for (const n of hits) {
        // Only the markers become chips; the rest stays the text it was.
        const parts = [];
        const re = /\[\d+(?:\s*[,，、]\s*\d+)*\]/g;
        let last = 0;
        let m;
        while ((m = re.exec(n.data))) {
          parts.push(n.data.slice(last, m.index), ...chips(m[0], cites));
          last = re.lastIndex;
        }
        parts.push(n.data.slice(last));
        n.replaceWith(...parts.filter((p) => p !== ''));
      }
      body.querySelectorAll('pre').forEach(addCodeCopy);
    }
    // Excerpts come as plain text: show their **bold** and `code` as such.
    li.querySelectorAll('details.citation .excerpt').forEach((q) => {
      if (q.children.length || !/[*`]/.test(q.textContent)) return;
      const t = q.textContent;
      q.replaceChildren();
      inline(q, t, null);
    });
  }
  function addCodeCopy(pre) {
    if (pre.parentElement.classList.contains('code')) return;
    const wrap = el('div', 'code');
    pre.replaceWith(wrap);
    const b = button('secondary copy-code', 'コピー', 'コードをコピー');
    wrap.append(b, pre);
  }

  // citeOf is what a chip cites: the exchange's citation with its number,
  // the chunk id taken from the chip itself when it carries one (chips the
  // server rendered always do).
  function citeOf(chip) {
    const li = chip.closest('li.exchange');
    const n = Number(chip.dataset.n);
    const c = li && li.cites && li.cites.get(n);
    const chunk = chip.dataset.chunk || (c && c.chunk) || '';
    if (!c && !chunk) return null;
    const label = (chip.getAttribute('aria-label') || '').replace(/^引用元 \d+: /, '');
    return Object.assign({ n, label, title: label, excerpt: '', page: 0 }, c, { chunk });
  }

  let cardFor = null;
  function showCard(chip) {
    const c = citeOf(chip);
    if (!c) return;
    cardFor = chip;
    card.replaceChildren(el('strong', 'card-title', c.label || c.title), el('p', 'card-excerpt', c.excerpt));
    card.hidden = false;
    const r = chip.getBoundingClientRect();
    const w = Math.min(360, window.innerWidth - 16);
    card.style.width = w + 'px';
    card.style.left = Math.max(8, Math.min(r.left, window.innerWidth - w - 8)) + window.scrollX + 'px';
    const below = r.bottom + 6;
    card.style.top = below + window.scrollY + 'px';
    const h = card.offsetHeight;
    if (below + h > window.innerHeight - form.offsetHeight && r.top - h - 6 > 0) card.style.top = r.top - h - 6 + window.scrollY + 'px';
  }
  function hideCard() {
    cardFor = null;
    card.hidden = true;
  }
  chat.addEventListener('mouseover', (e) => { const c = e.target.closest('.cite'); if (c && c !== cardFor) showCard(c); });
  chat.addEventListener('mouseout', (e) => { if (e.target.closest('.cite') && !e.relatedTarget?.closest?.('.cite')) hideCard(); });
  chat.addEventListener('focusin', (e) => { if (e.target.classList.contains('cite')) showCard(e.target); });
  chat.addEventListener('focusout', (e) => { if (e.target.classList.contains('cite')) hideCard(); });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && !card.hidden) hideCard(); });

  // openSource shows a citation in the viewer: the page from the page
  // database with the passage highlighted and scrolled into view.
  async function openSource(c) {
    hideCard();
    const title = $('viewer_title');
    const body = $('viewer_body');
    const links = $('viewer_links');
    title.textContent = c.label || c.title;
    links.replaceChildren();
    body.replaceChildren(el('p', 'muted', '読み込み中…'));
    if (!viewer.open) viewer.showModal();
    if (!c.chunk) {
      body.replaceChildren(el('p', 'muted', 'このサーバーは引用元のページを表示できません。抜粋:'), el('blockquote', 'excerpt', c.excerpt));
      return;
    }
    try {
      const src = await api('GET', '/api/source/' + c.chunk.split('/').map(encodeURIComponent).join('/'));
      title.textContent = src.label || c.label;
      const tab = el('a', '', '新しいタブで開く');
      tab.href = '/source/' + c.chunk.split('/').map(encodeURIComponent).join('/');
      tab.target = '_blank';
      tab.rel = 'noopener';
      links.append(tab);
      if (src.file_url) {
        const f = el('a', '', '元のファイル');
        f.href = src.file_url;
        f.target = '_blank';
        f.rel = 'noopener';
        links.append(f);
      }
      const page = el('div', 'source-page');
      page.innerHTML = src.html; // rendered and sanitised by the server
      body.replaceChildren(page);
      if (src.image_url) {
        // A PDF: the original page as an image beside the text.
        const fig = el('figure', 'source-image');
        const img = el('img');
        img.src = src.image_url;
        img.alt = (src.label || c.label) + ' の元のページ';
        img.loading = 'lazy';
        fig.append(img);
        body.append(fig);
        body.classList.add('with-image');
      } else {
        body.classList.remove('with-image');
      }
      const hit = page.querySelector('mark#hit, mark');
      if (hit) {
        hit.tabIndex = -1;
        hit.scrollIntoView({ block: 'center' });
      }
    } catch (err) {
      body.replaceChildren(el('p', 'error', '引用元を表示できませんでした: ' + err.message), el('blockquote', 'excerpt', c.excerpt));
    }
  }
  $('viewer_close').addEventListener('click', () => viewer.close());
  viewer.addEventListener('click', (e) => { if (e.target === viewer) viewer.close(); });

  // ---- exchanges ----
  let keys = 0;
  function exchangeShell(text) {
    const li = el('li', 'exchange');
    li.dataset.key = 'x' + ++keys;
    const user = el('div', 'msg user');
    const ic = el('span', 'icon icon-user', 'Q');
    ic.setAttribute('aria-hidden', 'true');
    user.append(ic, el('p', 'question', text), button('secondary edit', '編集', '質問を編集して送り直す'));
    const bot = el('div', 'msg assistant');
    const ia = el('span', 'icon icon-assistant', 'A');
    ia.setAttribute('aria-hidden', 'true');
    bot.append(ia, el('div', 'reply'));
    li.append(user, bot);
    return li;
  }
  // actions are the buttons under an answer: copy, regenerate, versions,
  // feedback, and 再試行 when the answer did not arrive whole.
  function actions(li) {
    li.querySelector(':scope > .actions')?.remove();
    const bar = el('div', 'actions');
    bar.append(button('secondary copy', 'コピー'), button('secondary regenerate', '再生成'));
    const vs = li.versions || [];
    if (vs.length > 1) {
      const nav = el('span', 'versions');
      nav.setAttribute('role', 'group');
      nav.setAttribute('aria-label', '回答の版');
      const prev = button('secondary prev', '<', '前の版');
      const next = button('secondary next', '>', '次の版');
      prev.disabled = li.current === 0;
      next.disabled = li.current === vs.length - 1;
      nav.append(prev, el('span', 'count', li.current + 1 + '/' + vs.length), next);
      bar.append(nav);
    }
    const fb = el('span', 'feedback');
    fb.setAttribute('role', 'group');
    fb.setAttribute('aria-label', 'この回答の評価');
    const up = button('secondary thumb up', '', '役に立った');
    const down = button('secondary thumb down', '', '役に立たなかった');
    up.append(icon('up'));
    down.append(icon('down'));
    const rated = li.dataset.rating || '';
    up.setAttribute('aria-pressed', String(rated === 'up'));
    down.setAttribute('aria-pressed', String(rated === 'down'));
    fb.append(up, down);
    bar.append(fb);
    if (li.dataset.status === 'incomplete' || li.dataset.status === 'error') bar.append(button('retry', '再試行'));
    li.append(bar);
  }
  // showVersion puts version i of an exchange in place.
  function showVersion(li, i) {
    const v = li.versions[i];
    li.current = i;
    li.querySelector('.question').textContent = v.question;
    const reply = li.querySelector('.reply');
    if (v.html) reply.innerHTML = v.html; // rendered and sanitised by the server
    else reply.replaceChildren(answerDiv(v.answer || '', citeMap(li, v.citations)));
    if (v.status === 'incomplete' || v.status === 'stopped') reply.append(statusLine(v.status));
    li.dataset.status = v.status || 'complete';
    if (v.id) li.dataset.id = v.id;
    if (v.request) li.dataset.request = v.request;
    li.querySelector('.rewritten')?.remove();
    if (v.rewritten && v.rewritten !== v.question) {
      const r = el('p', 'rewritten', '検索した内容: ' + v.rewritten);
      li.querySelector('.msg.user').after(r);
    }
    enhance(li, v.citations);
    actions(li);
  }
  function answerDiv(md, cites) {
    const a = el('div', 'answer');
    const b = el('div', 'body');
    b.append(mdBlocks(md, cites));
    a.append(b);
    return a;
  }
  function statusLine(st) {
    const p = el('p', 'status-line ' + st);
    p.append(el('span', 'ico-warn'), st === 'stopped' ? '回答を停止しました（ここまでの回答です）' : '回答が途中で途切れました（ここまでの回答です）');
    return p;
  }

  // ask sends text as a question and streams the answer, into a new
  // exchange at the end of the chat or (regenerate, edit) in place of an
  // exchange, as its next version.
  async function ask(text, opt) {
    if (!text || busy) return;
    let kv;
    if (k) {
      kv = checkK();
      if (kv === null) {
        k.focus();
        return;
      }
    }
    setBusy(true);
    let li = opt.replace;
    if (li) {
      li.querySelector('.question').textContent = text;
      li.querySelector(':scope > .actions')?.remove();
      li.querySelector('.rewritten')?.remove();
    } else {
      li = exchangeShell(text);
      chat.append(li);
      trimHistory();
    }
    showWelcome();
    li.dataset.done = 'false';
    li.dataset.status = 'streaming';
    const reply = li.querySelector('.reply');
    const live = el('div', 'answer streaming');
    const liveBody = el('div', 'body');
    live.append(liveBody);
    live.setAttribute('aria-busy', 'true');
    reply.replaceChildren(live);
    delete reply.dataset.bannerShown;
    // The question goes to the top of the view and stays there (sticky)
    // while its answer streams below it.
    li.scrollIntoView({ block: 'start' });
    following = true;
    followTarget = reply;
    jump.hidden = true;
    if (opt.fromBox) question.value = '';

    const ctl = new AbortController();
    inflight = ctl;
    let streamed = '';
    let frame = 0;
    let result = null;
    let failure = '';
    const draw = () => {
      frame = 0;
      liveBody.replaceChildren(mdBlocks(streamed, null));
      follow();
    };
    try {
      const body = { question: text };
      if (convs) {
        // "new" makes the server start a conversation titled after the question.
        body.conversation_id = convID || 'new';
        if (opt.replace && li.dataset.id) body.replace_exchange_id = li.dataset.id;
      }
      if (k && admin) {
        // The weight is sent only once the user has moved the slider; until
        // then the server chooses it per question (its default).
        body.k = kv;
        if (sessionStorage.getItem('shirube.bm25_weight') !== null) body.bm25_weight = Math.round(Number(bm25.value) * 100) / 100;
      }
      const resp = await fetch('/api/ask', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Accept': 'text/event-stream' },
        body: JSON.stringify(body),
        signal: ctl.signal,
      });
      if (loginExpired(resp)) return;
      if (!resp.ok) {
        failure = await errorText(resp);
        return;
      }
      await readEvents(resp, (name, data) => {
        if (name === 'danger') {
          // Decided from the question before any text: the banner leads.
          const banner = el('div', 'banner');
          banner.setAttribute('role', 'alert');
          banner.append(el('span', 'ico-warn'), String(data.banner || '').replace(/^[^\p{L}\p{N}]+/u, ''));
          live.prepend(banner);
          reply.dataset.bannerShown = 'true';
        } else if (name === 'meta') {
          // The answer's ids before its first word: a stream that ends
          // early can still be rated, regenerated and reloaded.
          if (data.exchange_id) li.dataset.id = data.exchange_id;
          if (data.request_id) li.dataset.request = data.request_id;
          if (data.conversation_id && data.conversation_id !== convID) {
            setConv(data.conversation_id);
            loadList();
          }
        } else if (name === 'delta') {
          // The first words show at once; later ones once per frame.
          const first = !streamed;
          streamed += data.text;
          if (first) draw();
          else if (!frame) frame = requestAnimationFrame(draw);
        } else if (name === 'done') {
          result = data;
        } else if (name === 'error') {
          if (data.exchange_id) li.dataset.id = data.exchange_id;
          if (data.request_id) li.dataset.request = data.request_id;
          failure = (data.error && data.error.message) || data.error || '回答を作成できませんでした';
        }
      });
      if (!result && !failure) failure = '回答の途中で接続が切れました';
    } catch (err) {
      if (err.name === 'AbortError') failure = 'stopped';
      else failure = '通信に失敗しました（' + err.message + '）';
    } finally {
      if (frame) cancelAnimationFrame(frame);
      inflight = null;
      try {
        finish(li, text, opt, result, streamed, failure, draw);
      } catch (err) {
        reply.append(el('p', 'error', '回答を表示できませんでした: ' + err.message));
      }
      setBusy(false);
      // The end of the answer (sources, buttons) comes into view unless
      // the reader scrolled away.
      followTarget = li;
      follow();
      followTarget = null;
      jump.hidden = true;
      question.focus();
      li.dataset.done = 'true'; // the exchange is finished (tests wait for this)
      $('announce').textContent = li.dataset.status === 'complete' ? '回答が届きました' : '回答は完全ではありません';
    }
  }

  // finish puts the outcome of an ask in place: the server's render, or
  // what was streamed marked stopped/incomplete, or the error — never
  // throwing away what was shown.
  function finish(li, text, opt, result, streamed, failure, draw) {
    const reply = li.querySelector('.reply');
    if (!li.versions) li.versions = [];
    if (result) {
      // Hold the height for one frame so that the swap does not move what
      // is below.
      reply.style.minHeight = reply.offsetHeight + 'px';
      const v = {
        id: result.exchange_id || li.dataset.id || '', question: text, html: result.html, citations: result.citations,
        status: result.status || (result.incomplete ? 'incomplete' : 'complete'), rewritten: result.rewritten_query || '',
        request: result.request_id || '',
      };
      if (result.conversation_id && result.conversation_id !== convID) {
        setConv(result.conversation_id);
        loadList();
      }
      li.versions.push(v);
      showVersion(li, li.versions.length - 1);
      showApplied(result.search);
      const banner = reply.querySelector('.banner');
      if (banner && !reply.dataset.bannerShown) banner.setAttribute('role', 'alert');
      requestAnimationFrame(() => { reply.style.minHeight = ''; });
      return;
    }
    // Nothing lost: the partial answer stays, marked; the question goes
    // back into the box if the box is empty.
    if (streamed) draw();
    const live = reply.querySelector('.streaming');
    if (live) {
      live.removeAttribute('aria-busy');
      live.classList.remove('streaming');
    }
    const stopped = failure === 'stopped';
    li.dataset.status = stopped ? 'stopped' : streamed ? 'incomplete' : 'error';
    if (stopped) {
      reply.append(statusLine('stopped'));
    } else {
      if (streamed) reply.append(statusLine('incomplete'));
      const p = el('p', 'error');
      p.setAttribute('role', 'alert');
      p.append(el('span', 'ico-warn'), failure);
      reply.append(p);
      if (!question.value.trim()) question.value = text;
    }
    const v = { id: li.dataset.id || '', question: text, answer: streamed, status: li.dataset.status };
    li.versions.push(v);
    li.current = li.versions.length - 1;
    if (!stopped && !streamed) {
      li.querySelector(':scope > .actions')?.remove();
      const bar = el('div', 'actions');
      bar.append(button('retry', '再試行'));
      li.append(bar);
      return;
    }
    enhance(li, null);
    actions(li);
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
  async function copyButton(btn, text) {
    const label = btn.textContent;
    try {
      await copyText(text);
      btn.textContent = 'コピーしました';
    } catch (err) {
      btn.textContent = 'コピーできませんでした';
    }
    setTimeout(() => { btn.textContent = label; }, 1500);
  }

  async function rate(li, rating, comment) {
    li.dataset.rating = rating;
    li.querySelectorAll('.thumb').forEach((b) => b.setAttribute('aria-pressed', String(b.classList.contains(rating))));
    const body = { rating, comment: comment || '' };
    if (li.dataset.id) body.exchange_id = li.dataset.id;
    else body.request_id = li.dataset.request || '';
    try {
      await api('POST', '/api/feedback', body);
      return true;
    } catch (err) {
      const bar = li.querySelector(':scope > .actions');
      bar.querySelector('.fb-error')?.remove();
      bar.append(el('span', 'fb-error error', '評価を送れませんでした: ' + err.message));
      return false;
    }
  }
  function commentForm(li, rating) {
    li.querySelector('.fb-form')?.remove();
    const f = el('form', 'fb-form');
    const id = li.dataset.key + '-comment';
    const label = el('label', '', rating === 'down' ? 'どこが良くなかったですか（任意）' : 'コメント（任意）');
    label.htmlFor = id;
    const input = el('input');
    input.type = 'text';
    input.id = id;
    input.maxLength = 1000;
    const ok = el('button', 'secondary', '送信');
    ok.type = 'submit';
    f.append(label, input, ok);
    f.addEventListener('submit', async (e) => {
      e.preventDefault();
      if (await rate(li, rating, input.value.trim())) f.replaceWith(el('p', 'fb-done', 'ご意見ありがとうございました'));
    });
    li.append(f);
    input.focus();
  }

  function editQuestion(li) {
    if (busy || li.querySelector('.edit-form')) return;
    const q = li.querySelector('.question');
    const f = el('form', 'edit-form');
    const area = el('textarea');
    area.value = q.textContent;
    area.rows = 2;
    area.setAttribute('aria-label', '質問を編集');
    const ok = el('button', '', '送信');
    ok.type = 'submit';
    const cancel = button('secondary', 'キャンセル');
    f.append(area, ok, cancel);
    q.hidden = true;
    q.after(f);
    area.focus();
    cancel.addEventListener('click', () => { f.remove(); q.hidden = false; });
    f.addEventListener('submit', (e) => {
      e.preventDefault();
      const t = area.value.trim();
      f.remove();
      q.hidden = false;
      if (t) ask(t, { replace: li });
    });
  }

  chat.addEventListener('click', async (e) => {
    const chip = e.target.closest('.cite');
    if (chip) {
      const c = citeOf(chip);
      if (c) openSource(c);
      return;
    }
    const btn = e.target.closest('button');
    if (!btn) return;
    const li = btn.closest('li.exchange');
    if (!li) return;
    const cl = btn.classList;
    if (cl.contains('copy')) copyButton(btn, answerText(li));
    else if (cl.contains('copy-code')) copyButton(btn, btn.parentElement.querySelector('pre').innerText.replace(/\n$/, ''));
    else if (cl.contains('regenerate') || cl.contains('retry')) {
      if (cl.contains('retry') && question.value.trim() === li.querySelector('.question').textContent) question.value = '';
      ask(li.querySelector('.question').textContent, { replace: li });
    } else if (cl.contains('edit')) editQuestion(li);
    else if (cl.contains('prev') || cl.contains('next')) {
      const i = li.current + (cl.contains('prev') ? -1 : 1);
      showVersion(li, i);
      li.querySelector(cl.contains('prev') ? '.prev' : '.next')?.focus();
      if (convs && convID && li.dataset.id) {
        api('POST', '/api/conversations/' + encodeURIComponent(convID) + '/exchanges/' + encodeURIComponent(li.dataset.id) + '/version', { version: i }).catch(() => {});
      }
    }
    else if (cl.contains('thumb')) {
      const rating = cl.contains('up') ? 'up' : 'down';
      rate(li, rating, '');
      commentForm(li, rating);
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

  // ---- conversations ----
  // setConv makes id this tab's conversation; the tab's address names it
  // (?c=), so that a reload gets it rendered by the server.
  function setConv(id) {
    convID = id || '';
    if (convID) sessionStorage.setItem('shirube.conv', convID);
    else sessionStorage.removeItem('shirube.conv');
    const url = new URL(location.href);
    if (convID) url.searchParams.set('c', convID);
    else url.searchParams.delete('c');
    if (url.href !== location.href) history.replaceState(history.state, '', url);
    convList?.querySelectorAll('.conv-open').forEach((b) => {
      if (b.closest('li').dataset.id === convID) b.setAttribute('aria-current', 'true');
      else b.removeAttribute('aria-current');
    });
  }
  async function loadList() {
    if (!convs) return;
    const q = convSearch.value.trim();
    let list;
    try {
      const r = await api('GET', '/api/conversations' + (q ? '?q=' + encodeURIComponent(q) : ''));
      list = Array.isArray(r) ? r : r.conversations;
    } catch (err) {
      return;
    }
    convList.replaceChildren();
    for (const c of list || []) {
      const item = el('li');
      item.dataset.id = c.id;
      const open = button('conv-open', c.title || '（無題）');
      if (c.id === convID) open.setAttribute('aria-current', 'true');
      const ren = button('secondary conv-rename', '名前', '名前を変更: ' + (c.title || ''));
      const del = button('secondary conv-delete', '削除', '削除: ' + (c.title || ''));
      item.append(open, ren, del);
      convList.append(item);
    }
    if (!convList.children.length) convList.append(el('li', 'muted', q ? '見つかりません' : 'まだ会話がありません'));
  }
  // versionsOf reads an exchange of GET /api/conversations/{id}.
  function versionsOf(x) {
    return (x.versions && x.versions.length ? x.versions : [x]).map((v) => ({
      id: x.id, question: v.question || x.question, html: v.html || '', answer: v.answer || '',
      citations: v.citations || [], status: v.status || 'complete', rewritten: v.rewritten_query || '',
      request: v.request_id || '',
    }));
  }
  function currentOf(x) {
    const n = x.versions && x.versions.length ? x.versions.length : 1;
    return Math.min(Number.isInteger(x.version) ? x.version : n - 1, n - 1);
  }
  // attachVersions gives the exchanges the server rendered (a reload of
  // this tab's conversation) their versions, for < 1/2 >, without drawing
  // them again.
  async function attachVersions(id, lis) {
    let c;
    try {
      c = await api('GET', '/api/conversations/' + encodeURIComponent(id));
    } catch (err) {
      return;
    }
    for (const x of c.exchanges || []) {
      const li = lis.find((l) => l.dataset.id === x.id && l.isConnected);
      if (!li || li.dataset.done !== 'true' || (li.versions && li.versions.length)) continue;
      li.versions = versionsOf(x);
      li.current = currentOf(x);
      // An answer stored before its chips carried chunk ids gets them from
      // the citations.
      if (!Array.from(li.cites ? li.cites.values() : [], (v) => v.chunk).some(Boolean)) citeMap(li, li.versions[li.current].citations);
      actions(li);
    }
  }
  async function openConv(id) {
    if (busy) return;
    chat.replaceChildren();
    setConv(id);
    if (id) {
      try {
        const c = await api('GET', '/api/conversations/' + encodeURIComponent(id));
        for (const x of c.exchanges || []) {
          const li = exchangeShell(x.question);
          li.dataset.id = x.id;
          if (x.feedback && x.feedback.rating) li.dataset.rating = x.feedback.rating;
          li.versions = versionsOf(x);
          li.dataset.done = 'true';
          chat.append(li);
          showVersion(li, currentOf(x));
        }
      } catch (err) {
        if (err.status === 404) setConv('');
      }
    }
    showWelcome();
    window.scrollTo(0, document.documentElement.scrollHeight);
  }
  convSearch?.addEventListener('input', () => loadList());
  newConv?.addEventListener('click', () => { openConv(''); question.focus(); });
  convList?.addEventListener('click', async (e) => {
    const btn = e.target.closest('button');
    if (!btn) return;
    const item = btn.closest('li');
    const id = item.dataset.id;
    const open = item.querySelector('.conv-open');
    if (btn.classList.contains('conv-open')) {
      openConv(id);
    } else if (btn.classList.contains('conv-rename')) {
      const f = el('form', 'conv-edit');
      const input = el('input');
      input.type = 'text';
      input.value = open.textContent;
      input.setAttribute('aria-label', '会話の名前');
      f.append(input, Object.assign(el('button', '', '保存'), { type: 'submit' }));
      item.replaceChildren(f);
      input.focus();
      input.select();
      f.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        try { await api('PATCH', '/api/conversations/' + encodeURIComponent(id), { title: input.value.trim() }); } catch (err) { /* list shows the old name */ }
        loadList();
      });
      input.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') loadList(); });
    } else if (btn.classList.contains('conv-delete')) {
      const ask = el('div', 'conv-confirm');
      ask.setAttribute('role', 'group');
      ask.setAttribute('aria-label', '削除の確認');
      ask.append(el('span', '', '「' + open.textContent + '」を削除しますか？'), button('danger conv-delete-yes', '削除する'), button('secondary conv-delete-no', 'キャンセル'));
      item.replaceChildren(ask);
      ask.querySelector('.conv-delete-no').focus();
    } else if (btn.classList.contains('conv-delete-yes')) {
      try {
        await api('DELETE', '/api/conversations/' + encodeURIComponent(id));
        if (id === convID) openConv('');
      } catch (err) { /* kept */ }
      loadList();
    } else if (btn.classList.contains('conv-delete-no')) {
      loadList();
    }
  });

  // ---- first screen: what the corpus holds and example questions ----
  async function loadCorpus() {
    if (!welcome) return;
    let c;
    try {
      c = await api('GET', '/api/corpus');
    } catch (err) {
      return;
    }
    const facts = $('corpus_facts');
    const parts = [];
    if (c.documents) parts.push('文書 ' + c.documents + ' 件');
    if (c.pages) parts.push(c.pages + ' ページ');
    if (c.updated_at) parts.push('最終更新 ' + new Date(c.updated_at).toLocaleDateString('ja-JP'));
    facts.textContent = parts.length ? 'この環境で検索できる手順書: ' + parts.join('・') : '';
    const list = $('examples');
    list.replaceChildren();
    for (const q of c.examples || []) {
      const item = el('li');
      item.append(button('secondary example', q));
      list.append(item);
    }
    $('examples_box').hidden = !list.children.length;
  }
  welcome?.addEventListener('click', (e) => {
    const b = e.target.closest('.example');
    if (b) ask(b.textContent, {});
  });

  // ---- index status and rebuild ----
  // Phase names the server reports, in Japanese.
  const phases = { extract: '抽出', chunk: '分割', embed: 'ベクトル化', index: '索引作成', write: '書き込み', done: '完了', load: '読み込み' };
  function showStatus(st) {
    if (!status) return;
    const ix = st.index;
    const rb = st.rebuild;
    const lines = [];
    let warn = false;
    if (ix.ready) {
      const built = new Date(ix.built_at);
      lines.push('チャンク数: ' + ix.chunks + '（文書 ' + ix.documents + '）');
      lines.push('最終更新: ' + built.toLocaleString('ja-JP'));
    } else {
      lines.push(ix.message || 'インデックスがありません — 再構築してください');
    }
    if (rb.running) {
      lines.push('再構築中: ' + (rb.phase_ja || phases[rb.phase] || rb.phase || '') + (rb.total ? ' ' + rb.done + '/' + rb.total : ''));
    } else if (rb.error) {
      lines.push(rb.error);
      warn = true;
    } else if (rb.phase === 'done') {
      lines.push('再構築が完了しました');
    }
    status.replaceChildren();
    lines.forEach((l, i) => {
      if (i) status.append(el('br'));
      if (warn && i === lines.length - 1) status.append(el('span', 'ico-warn'));
      status.append(l);
    });
    status.classList.toggle('missing', !ix.ready);
    if (!progress) return;
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

  rebuild?.addEventListener('click', async () => {
    rebuild.disabled = true;
    try {
      const resp = await fetch('/api/index/rebuild', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ data_folder_path: dataFolder.value.trim() }),
      });
      if (loginExpired(resp)) return;
      if (!resp.ok && resp.status !== 409) {
        status.replaceChildren(el('span', 'ico-warn'), await errorText(resp));
        rebuild.disabled = false;
        return;
      }
      await pollStatus();
    } catch (err) {
      status.replaceChildren(el('span', 'ico-warn'), '通信に失敗しました: ' + err.message);
      rebuild.disabled = false;
    }
  });

  // 会話をクリア asks first, then forgets the conversation on the server
  // too, so a reload does not bring it back.
  reset?.addEventListener('click', async () => {
    if (reset.dataset.confirm !== 'true') {
      reset.dataset.confirm = 'true';
      reset.textContent = '本当にクリアする';
      reset.classList.add('danger');
      setTimeout(() => { reset.dataset.confirm = ''; reset.textContent = '会話をクリア'; reset.classList.remove('danger'); }, 5000);
      return;
    }
    reset.dataset.confirm = '';
    reset.textContent = '会話をクリア';
    reset.classList.remove('danger');
    const resp = await fetch('/api/session/reset', { method: 'POST' });
    if (loginExpired(resp)) return;
    if (convs && convID) {
      // This tab's stored conversation goes too.
      try { await api('DELETE', '/api/conversations/' + encodeURIComponent(convID)); } catch (err) { /* gone already */ }
      setConv('');
      loadList();
    }
    chat.replaceChildren();
    showWelcome();
    question.focus();
  });

  // ---- start ----
  // Exchanges the server rendered (this tab's conversation, named in the
  // address, or the browser session's last ones): chips, actions; their
  // banners were announced when they were new and are not alerts again.
  const rendered = Array.from(chat.querySelectorAll(':scope > li.exchange'));
  const renderedConv = chat.dataset.conv || '';
  if (renderedConv) setConv(renderedConv);
  rendered.forEach((li) => {
    li.dataset.key = 'x' + ++keys;
    li.versions = [];
    li.current = Number(li.dataset.version || 0);
    enhance(li, null);
    actions(li);
  });
  showWelcome();
  (async () => {
    // Retrieval settings are an administrator's: a user's page does not
    // show them (and the server would ignore them).
    try {
      const me = await api('GET', '/api/me');
      admin = me.role === 'admin';
      if (admin && me.settings) {
        auto = !!me.settings.auto_weight;
        if (auto && sessionStorage.getItem('shirube.bm25_weight') === null) showApplied(null);
      }
    } catch (err) {
      admin = true; // an older server: it has no roles
    }
    const box = document.querySelector('.settings');
    if (box) box.hidden = !admin;
    try {
      await api('GET', '/api/conversations');
      convs = true;
    } catch (err) {
      convs = false;
    }
    $('convs')?.toggleAttribute('hidden', !convs);
    if (convs) {
      // Each tab has its own conversation; the server's per-browser
      // history is not this tab's. A question asked meanwhile stays.
      if (renderedConv) {
        await attachVersions(renderedConv, rendered);
      } else if (busy || chat.querySelector('li.exchange:not([data-rendered])')) {
        rendered.forEach((li) => li.remove());
      } else {
        await openConv(convID);
      }
      loadList();
    }
    root.dataset.ready = 'true'; // tests wait for this
  })();
  loadCorpus();
  if (status) pollStatus();
})();
