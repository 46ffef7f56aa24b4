// tpctl report: the per-trial table, the task table, the trajectory viewer
// and the side-by-side view of one trial in two rounds. Plain DOM, no
// framework. Every value from the snapshot is put into the page with
// textContent (never innerHTML), so task names, messages and tool output
// stay text; values used as keys (task names, call IDs, reasons) go into
// Maps, never plain objects, so "__proto__" or "constructor" is a key
// like any other.
(function () {
  'use strict';
  var DATA = JSON.parse(document.getElementById('tp-data').textContent);
  var ROW_H = 30, VIEW_MAX = 440, OVERSCAN = 8, PAGE = DATA.page_size, PRINT_MAX = DATA.print_max;
  var STATUSES = ['success', 'failure', 'infra_error', 'unscored', 'missing'];
  var GLYPH = { success: '✓', failure: '✗', infra_error: '⚠', unscored: '?', missing: '∅' };
  var ROLES = ['system', 'user', 'assistant', 'tool'];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return parent;
  }
  function show(v) { return v === null || v === undefined ? '—' : String(v); }
  function href(side, id, attempt) {
    return '#' + side + '/' + encodeURIComponent(id) + (attempt === undefined ? '' : '/' + attempt);
  }
  function statusCell(st) {
    var s = el('span', 'status');
    add(s, el('span', 'glyph st-' + st, GLYPH[st] || '·'), st);
    return s;
  }
  function option(sel, value, text) {
    var o = el('option', null, text);
    o.value = value;
    sel.appendChild(o);
  }
  function labelled(text, control) {
    var l = el('label', null, text);
    l.appendChild(control);
    return l;
  }
  function counter(list, key) {
    var m = new Map();
    list.forEach(function (t) { var k = key(t); if (k !== null && k !== undefined) m.set(k, (m.get(k) || 0) + 1); });
    return m;
  }
  function sortedKeys(m) { return Array.from(m.keys()).sort(); }
  function n(x) { return Number(x).toLocaleString('en-US'); }
  function typing(e) {
    var t = e.target;
    return t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA' || t.isContentEditable);
  }


  // Round wraps one round's embedded data (report/pagedata.go): trial
  // fields as columns with text in a string table; each trial's evidence
  // and history, the search text and the bodies are lines of their own
  // blocks, read only when first needed.
  function Round(r) {
    this.r = r;
    this.side = r.side;
    this.n = r.n;
    this.S = r.strings;
    var bodies = new Map();
    r.trajectories.forEach(function (t, k) {
      if (t.trial < 0) return;
      if (!bodies.has(t.trial)) bodies.set(t.trial, []);
      bodies.get(t.trial).push(k);
    });
    this.bodies = bodies;
    this.blocks = new Map();
  }
  Round.prototype.task = function (i) { return this.S[this.r.task[i]]; };
  Round.prototype.id = function (i) { return this.S[this.r.task[i]] + '#' + this.r.repeat[i]; };
  Round.prototype.status = function (i) { return STATUSES[this.r.status[i]]; };
  Round.prototype.str = function (k) { return k < 0 ? null : this.S[k]; };
  Round.prototype.reason = function (i) { return this.str(this.r.reason[i]); };
  Round.prototype.exc = function (i) { return this.str(this.r.exception[i]); };
  Round.prototype.why = function (i) { return this.r.detail[i] < 0 ? '' : this.S[this.r.detail[i]]; };
  Round.prototype.bodiesOf = function (i) { return this.bodies.get(i) || []; };
  // text returns a block's text and where each of its lines starts (read
  // and found once, on first use).
  Round.prototype.text = function (name) {
    if (!this.blocks.has(name)) {
      var e = document.getElementById('tp-' + name + '-' + this.side);
      var text = e ? e.textContent : '';
      var starts = [0];
      for (var at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
      this.blocks.set(name, { text: text, starts: starts });
    }
    return this.blocks.get(name);
  };
  // packed returns (a promise of) the lines of block k of a packed data
  // element: each of its lines is a gzip-compressed block of JSON lines in
  // base64, inflated when first needed.
  Round.prototype.packed = function (name, k) {
    var key = name + '/' + k;
    if (!this.blocks.has(key)) {
      var b = this.text(name);
      var b64 = b.text.slice(b.starts[k], b.starts[k + 1] - 1);
      this.blocks.set(key, inflate(b64).then(function (text) { return text.split('\n'); }));
    }
    return this.blocks.get(key);
  };
  // full returns (a promise of) one trial as the detail panel shows it.
  Round.prototype.full = function (i) {
    var r = this.r, st = this.status(i);
    var t = { i: i, id: this.id(i), task: this.task(i), repeat: r.repeat[i], status: st, reason: this.reason(i), reward: r.reward[i],
      exception_type: this.exc(i), detail: this.why(i), attempts: r.attempts[i], trainable: !!(r.flags[i] & 2), bodies: this.bodiesOf(i),
      trial_attempt: 0, evidence: null, history: [] };
    t.trajs = [];
    if (st === 'missing') return Promise.resolve(t);
    var per = r.pack_lines, self = this;
    return this.packed('detail', Math.floor(i / per)).then(function (lines) {
      var d = JSON.parse(lines[i % per]);
      if (d) { t.trial_attempt = d.trial_attempt; t.evidence = d.evidence; t.history = d.history; }
      return Promise.all(t.bodies.map(function (k) { return self.traj(k); }));
    }).then(function (trajs) {
      t.trajs = trajs;
      return t;
    });
  };
  // traj returns (a promise of) one body with its messages (one block
  // each).
  Round.prototype.traj = function (k) {
    var m = this.r.trajectories[k];
    return this.packed('traj', k).then(function (lines) {
      return { file: m.file, trial_id: m.trial_id, trial_attempt: m.trial_attempt, embedded: m.embedded, messages: JSON.parse(lines[0]).messages,
        kept: m.kept, total_messages: m.total_messages, truncated: m.truncated, complete: m.complete, capture_policy: m.capture_policy };
    });
  };
  Round.prototype.indexOf = function (id) {
    if (!this.ids) {
      this.ids = new Map();
      for (var i = 0; i < this.n; i++) this.ids.set(this.id(i), i);
    }
    return this.ids.has(id) ? this.ids.get(id) : -1;
  };
  // hits marks the trials whose search text holds q: their fields and
  // attempts' details (a line each in #tp-search-SIDE), and their bodies'
  // message text (a line each in #tp-tsearch-SIDE).
  Round.prototype.hits = function (q) {
    // One array for every search, cleared: no garbage per keystroke.
    var hit = this.hit || (this.hit = new Uint8Array(this.n)), tr = this.r.trajectories;
    hit.fill(0);
    q = searchText(q);
    var mark = function (b, f) {
      var text = b.text, starts = b.starts, line = 0;
      for (var at = text.indexOf(q); at >= 0;) {
        // The line holding at: starts only grow, so search on from line.
        var lo = line, hi = starts.length - 1;
        while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (starts[mid] <= at) lo = mid; else hi = mid - 1; }
        line = lo;
        f(line);
        if (line + 1 >= starts.length) break;
        at = text.indexOf(q, starts[line + 1]);
      }
    };
    mark(this.text('search'), function (i) { if (i < hit.length) hit[i] = 1; });
    mark(this.text('tsearch'), function (k) { if (k < tr.length && tr[k].trial >= 0) hit[tr[k].trial] = 1; });
    return hit;
  };

  // searchText is what is typed, made as the search blocks hold their
  // text (report/pagedata.go searchText): lowercased, control characters,
  // U+2028 and U+2029 as spaces, '<' as U+E000 U+E001, '>' as U+E000 U+E002 and U+E000 as
  // U+E000 U+E000.
  var SEARCH_ESC = new Map([['<', '\ue000\ue001'], ['>', '\ue000\ue002'], ['\ue000', '\ue000\ue000']]);
  function searchText(q) {
    return q.toLowerCase().replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, ' ').replace(/[\ue000<>]/g, function (c) { return SEARCH_ESC.get(c); });
  }

  // inflate decodes base64 and gunzips it (no network: a stream in memory).
  function inflate(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
  }

  var explorers = new Map();

  function countBy(n, col) {
    var m = new Map();
    for (var i = 0; i < n; i++) { var k = col[i]; if (k >= 0) m.set(k, (m.get(k) || 0) + 1); }
    return m;
  }

  function Explorer(root, rd) {
    var self = this, r = rd.r;
    this.side = rd.side;
    this.round = rd;
    this.view = [];
    this.sel = -1;
    root.textContent = '';

    var controls = el('div', 'controls');
    controls.setAttribute('role', 'search');
    var status = el('select');
    option(status, '', 'all statuses');
    var byStatus = countBy(rd.n, r.status), shared = 0;
    for (var i = 0; i < rd.n; i++) if (r.flags[i] & 1) shared++;
    STATUSES.forEach(function (s, k) { option(status, s, GLYPH[s] + ' ' + s + ' (' + n(byStatus.get(k) || 0) + ')'); });
    option(status, 'shared', 'shared verifier (' + n(shared) + ')');
    var byText = function (col) {
      var m = countBy(rd.n, col), out = new Map();
      m.forEach(function (c, k) { out.set(rd.S[k], c); });
      return out;
    };
    var reason = el('select');
    option(reason, '', 'all reasons');
    var byReason = byText(r.reason);
    sortedKeys(byReason).forEach(function (x) { option(reason, x, x + ' (' + n(byReason.get(x)) + ')'); });
    var exc = el('select');
    option(exc, '', 'all exceptions');
    var byExc = byText(r.exception);
    sortedKeys(byExc).forEach(function (x) { option(exc, x, x + ' (' + n(byExc.get(x)) + ')'); });
    // The task filter is type-ahead: a list of suggestions, and any text
    // narrows the rows to the tasks containing it.
    var task = el('input');
    task.type = 'search';
    task.placeholder = 'type a task';
    task.autocomplete = 'off';
    var tasks = el('datalist');
    tasks.id = 'tasks-list-' + this.side;
    task.setAttribute('list', tasks.id);
    this.byTask = byText(r.task);
    var names = sortedKeys(this.byTask), listed = false;
    // A long list of suggestions is made when the box is first used.
    var fill = function () {
      if (listed) return;
      listed = true;
      var frag = document.createDocumentFragment();
      names.forEach(function (k) { var o = el('option'); o.value = k; frag.appendChild(o); });
      tasks.appendChild(frag);
    };
    if (names.length <= 2000) fill(); else task.addEventListener('focus', fill);
    var search = el('input');
    search.type = 'search';
    search.placeholder = 'status, reason, exception, detail, message text';
    var sort = el('select');
    [['canonical', 'task, repeat'], ['status', 'status'], ['reason', 'reason'], ['reward', 'reward'], ['attempts', 'attempts (most first)'],
      ['duration', 'duration (longest first)'], ['tokens', 'tokens (most first)'], ['cost', 'cost (highest first)']].forEach(function (o) { option(sort, o[0], o[1]); });
    add(controls, labelled('Status', status), labelled('Reason', reason), labelled('Exception', exc), labelled('Task', task), tasks,
      labelled('Search (/)', search), labelled('Sort by', sort));
    this.controls = { status: status, reason: reason, exception: exc, task: task, search: search, sort: sort };

    this.shown = el('p', 'shown');
    this.shown.setAttribute('aria-live', 'polite');
    var head = el('div', 'grid-head');
    head.setAttribute('aria-hidden', 'true');
    ['status', 'trial', 'reason', 'reward', 'exception', 'attempts', 'body', 'detail'].forEach(function (h) { head.appendChild(el('span', 'c-' + h, h)); });
    this.viewport = el('div', 'viewport');
    this.viewport.tabIndex = 0;
    this.viewport.setAttribute('role', 'listbox');
    this.viewport.setAttribute('aria-label', 'Trials (arrow keys or j/k move, Enter opens, n/p open the next or previous trial, Esc closes)');
    this.viewport.id = 'vp-' + this.side;
    this.spacer = el('div', 'spacer');
    this.viewport.appendChild(this.spacer);
    this.printRows = el('table', 'printrows');
    this.detail = el('section', 'detail');
    this.detail.id = 'detail-' + this.side;
    this.detail.tabIndex = -1;
    this.detail.hidden = true;
    add(root, controls, this.shown, head, this.viewport, this.printRows, this.detail);

    var refilter = function () { self.apply(); };
    [status, reason, exc, sort].forEach(function (c) { c.addEventListener('change', refilter); });
    search.addEventListener('input', refilter);
    task.addEventListener('input', refilter);
    var pending = false;
    this.viewport.addEventListener('scroll', function () {
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () { pending = false; self.draw(); });
    });
    this.viewport.addEventListener('keydown', function (e) { self.key(e); });
    this.viewport.addEventListener('click', function (e) {
      var row = e.target.closest('.row');
      if (row) { self.select(Number(row.dataset.pos)); self.open(); }
    });
    this.apply();
  }

  // sortKey returns, for a sort choice, a function of a trial index that
  // orders it (smaller first), unknown values last.
  Explorer.prototype.sortKey = function (key) {
    var rd = this.round, r = rd.r;
    if (key === 'status') return function (i) { return r.status[i]; };
    if (key === 'reason') {
      var names = [];
      for (var k = 0; k < rd.S.length; k++) names.push(k);
      var rank = new Map();
      names.sort(function (a, b) { return rd.S[a] < rd.S[b] ? -1 : rd.S[a] > rd.S[b] ? 1 : 0; }).forEach(function (k, pos) { rank.set(k, pos); });
      return function (i) { return r.reason[i] < 0 ? Infinity : rank.get(r.reason[i]); };
    }
    if (key === 'reward') return function (i) { return r.reward[i] === null ? Infinity : r.reward[i]; };
    if (key === 'attempts') return function (i) { return -r.attempts[i]; };
    var col = key === 'duration' ? r.duration : key === 'tokens' ? r.tokens : r.cost;
    return function (i) { var x = col[i]; return x === null || x < 0 ? Infinity : -x; };
  };

  // order returns every trial index in the order of a sort choice (null
  // for the canonical order), computed once per choice: ties keep the
  // canonical order.
  Explorer.prototype.order = function (key) {
    if (key === 'canonical') return null;
    this.orders = this.orders || new Map();
    if (!this.orders.has(key)) {
      var nrows = this.round.n, f = this.sortKey(key), keys = new Float64Array(nrows), o = new Int32Array(nrows);
      for (var i = 0; i < nrows; i++) { keys[i] = f(i); o[i] = i; }
      o.sort(function (a, b) { return keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : a - b; });
      this.orders.set(key, o);
    }
    return this.orders.get(key);
  };

  Explorer.prototype.apply = function (keepSel) {
    var rd = this.round, r = rd.r, c = this.controls, st = c.status.value, nrows = rd.n;
    var sti = STATUSES.indexOf(st);
    var rs = c.reason.value, ex = c.exception.value;
    var S = rd.S;
    var tk = c.task.value.trim(), exactTask = this.byTask.has(tk), tkl = tk.toLowerCase();
    var q = c.search.value.trim();
    // The tasks that match the task box, decided once per task.
    var taskOK = null;
    if (tk) {
      taskOK = new Uint8Array(S.length);
      for (var k = 0; k < S.length; k++) taskOK[k] = exactTask ? S[k] === tk : S[k].toLowerCase().indexOf(tkl) >= 0;
    }
    var hit = q ? rd.hits(q) : null;
    // The trials in the chosen order (sorted once per key), then filtered:
    // a keystroke never sorts.
    var order = this.order(c.sort.value);
    var buf = this.buf || (this.buf = new Int32Array(nrows)), count = 0;
    for (var p = 0; p < nrows; p++) {
      var i = order ? order[p] : p;
      if (st === 'shared') { if (!(r.flags[i] & 1)) continue; }
      else if (st && r.status[i] !== sti) continue;
      if (rs && (r.reason[i] < 0 || S[r.reason[i]] !== rs)) continue;
      if (ex && (r.exception[i] < 0 || S[r.exception[i]] !== ex)) continue;
      if (taskOK && !taskOK[r.task[i]]) continue;
      if (hit && !hit[i]) continue;
      buf[count++] = i;
    }
    var v = buf.slice(0, count);
    var prev = keepSel && this.sel >= 0 ? this.view[this.sel] : -1;
    this.view = v;
    this.sel = v.length ? Math.max(0, prev >= 0 ? v.indexOf(prev) : 0) : -1;
    this.shown.textContent = 'Showing ' + n(v.length) + ' of ' + n(nrows) + ' planned trials.';
    this.spacer.style.height = (v.length * ROW_H) + 'px';
    // The list is as tall as its rows, up to a screenful.
    this.viewport.style.height = Math.min(VIEW_MAX, Math.max(1, v.length) * ROW_H + 2) + 'px';
    this.viewport.scrollTop = 0;
    if (this.sel > 0) this.select(this.sel); else this.draw();
  };

  // setFilter shows the list narrowed to the given values (a triage or
  // table link: status, reason, exception, task), clearing the rest.
  Explorer.prototype.setFilter = function (f) {
    var c = this.controls;
    var choose = function (sel, v) {
      sel.value = v || '';
      if (sel.value !== (v || '')) { option(sel, v, v + ' (0)'); sel.value = v; }
    };
    choose(c.status, f.get('status'));
    choose(c.reason, f.get('reason'));
    choose(c.exception, f.get('exception'));
    c.task.value = f.get('task') || '';
    c.search.value = '';
    this.apply();
    this.shown.scrollIntoView({ block: 'start' });
    this.viewport.focus({ preventScroll: true });
  };

  Explorer.prototype.row = function (pos) {
    var rd = this.round, r = rd.r, i = this.view[pos], st = rd.status(i), why = rd.why(i), id = rd.id(i), nb = rd.bodiesOf(i).length;
    var row = el('div', 'row');
    row.id = 'row-' + this.side + '-' + pos;
    row.dataset.pos = String(pos);
    row.setAttribute('role', 'option');
    row.setAttribute('aria-selected', pos === this.sel ? 'true' : 'false');
    row.setAttribute('aria-setsize', String(this.view.length));
    row.setAttribute('aria-posinset', String(pos + 1));
    row.style.top = (pos * ROW_H) + 'px';
    add(row, statusCell(st), el('span', 'mono tid', id), el('span', 'mono', show(rd.reason(i))),
      el('span', 'num', show(r.reward[i])), el('span', 'mono', show(rd.exc(i))),
      el('span', 'num', st === 'missing' ? '0' : String(r.attempts[i])),
      el('span', null, nb ? 'body ×' + nb : 'no body'), el('span', 'why', why));
    row.title = why ? id + ': ' + why : id;
    return row;
  };

  Explorer.prototype.draw = function () {
    var top = this.viewport.scrollTop, h = this.viewport.clientHeight || 440;
    var first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    var last = Math.min(this.view.length, Math.ceil((top + h) / ROW_H) + OVERSCAN);
    var frag = document.createDocumentFragment();
    for (var i = first; i < last; i++) frag.appendChild(this.row(i));
    this.spacer.textContent = '';
    this.spacer.appendChild(frag);
    if (this.sel >= first && this.sel < last) this.viewport.setAttribute('aria-activedescendant', 'row-' + this.side + '-' + this.sel);
    else this.viewport.removeAttribute('aria-activedescendant');
  };

  Explorer.prototype.select = function (pos) {
    if (!this.view.length) return;
    this.sel = Math.max(0, Math.min(this.view.length - 1, pos));
    var y = this.sel * ROW_H, vp = this.viewport;
    if (y < vp.scrollTop) vp.scrollTop = y;
    else if (y + ROW_H > vp.scrollTop + vp.clientHeight) vp.scrollTop = y + ROW_H - vp.clientHeight;
    this.draw();
  };

  Explorer.prototype.key = function (e) {
    var page = Math.max(1, Math.floor(this.viewport.clientHeight / ROW_H) - 1);
    var moves = new Map([['ArrowDown', 1], ['ArrowUp', -1], ['j', 1], ['k', -1], ['PageDown', page], ['PageUp', -page]]);
    if (moves.has(e.key)) this.select(this.sel + moves.get(e.key));
    else if (e.key === 'Home') this.select(0);
    else if (e.key === 'End') this.select(this.view.length - 1);
    else if (e.key === 'Enter' || e.key === ' ') this.open();
    else return;
    e.preventDefault();
  };

  Explorer.prototype.open = function () {
    if (this.sel >= 0 && this.sel < this.view.length) location.hash = href(this.side, this.round.id(this.view[this.sel]));
  };

  // step opens the next (+1) or previous (-1) trial of the list.
  Explorer.prototype.step = function (d) {
    if (!this.view.length) return;
    this.select(this.sel + d);
    this.open();
  };

  // close hides the detail and puts the focus back on its row.
  Explorer.prototype.close = function () {
    if (this.detail.hidden) return false;
    this.detail.hidden = true;
    this.detail.textContent = '';
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
    this.select(this.sel);
    this.viewport.focus({ preventScroll: true });
    var row = document.getElementById('row-' + this.side + '-' + this.sel);
    (row || this.viewport).scrollIntoView({ block: 'nearest' });
    return true;
  };

  Explorer.prototype.reveal = function (id, attempt, msg) {
    var i = this.round.indexOf(id);
    var pos = i < 0 ? -1 : this.view.indexOf(i);
    if (i >= 0 && pos < 0) {
      // The trial is filtered out: clear the filters so the row shows.
      var c = this.controls;
      c.status.value = c.reason.value = c.exception.value = c.task.value = c.search.value = '';
      this.apply();
      pos = this.view.indexOf(i);
    }
    if (pos >= 0) this.select(pos);
    var d = this.detail, side = this.side, round = this.round, turn = this.turn = (this.turn || 0) + 1, self = this;
    this.find(id).then(function (t) {
      if (self.turn !== turn) return; // another trial was asked for since
      d.hidden = false;
      renderTrial(d, side, round, t, id, attempt, msg, true);
    });
  };

  // find returns (a promise of) the trial with the given ID as the panel
  // shows it, or null.
  Explorer.prototype.find = function (id) {
    var i = this.round.indexOf(id);
    return i < 0 ? Promise.resolve(null) : this.round.full(i);
  };

  // renderTrial writes one trial into the panel d: result, the judge's
  // detail, evidence, attempt history with timings, tokens, cost and
  // model, and the trajectory. focus moves the focus to the panel.
  function renderTrial(d, side, round, t, id, attempt, msg, focus) {
    var focusTop = focus ? focusPanel : function () {};
    d.textContent = '';
    if (!t) {
      add(d, el('h4', null, 'Trial not in this round'), el('p', null, 'The plan of this round has no trial ' + id + '.'));
      focusTop(d);
      return;
    }
    var h = el('h4');
    add(h, statusCell(t.status), ' ', el('span', 'mono', t.id));
    var link = el('a', null, 'permalink');
    link.href = href(side, t.id);
    var close = el('button', 'close', 'close (Esc)');
    close.type = 'button';
    close.addEventListener('click', function () { var ex = explorers.get(side); if (ex && ex.detail === d) ex.close(); else closePair(); });
    add(d, add(el('div', 'dhead'), h, close), add(el('p', 'note'), (side === 'round' ? '' : side + ' round · ') + 'task ', el('code', null, t.task), ', repeat ' + t.repeat + ' · ', link));
    if (t.detail) add(d, add(el('p', 'banner why-banner'), el('strong', null, 'Why: '), t.detail));
    if (t.status === 'missing') {
      add(d, el('p', 'banner', 'Missing: the plan lists this trial but no attempt ran. It stays in the denominator.'));
      focusTop(d);
      return;
    }
    var kv = el('table', 'kv');
    var rows = [['status', t.status], ['reason', t.reason], ['reward', show(t.reward)], ['exception', show(t.exception_type)],
      ['current attempt', 'retry ' + t.trial_attempt + ' (' + t.attempts + ' attempt(s) planned)'], ['trainable', t.trainable ? 'yes' : 'no'],
      ['result_sha256', show(t.evidence.result_sha256)], ['task_checksum', show(t.evidence.task_checksum)],
      ['verifier_environment_mode', show(t.evidence.verifier_environment_mode) + (t.evidence.verifier_environment_mode === 'shared' ? ' ⚠ the agent could write its own reward' : '')]];
    var tb = el('tbody');
    rows.forEach(function (r) { var tr = el('tr'); var th = el('th', null, r[0]); th.scope = 'row'; add(tr, th, add(el('td'), el('code', null, r[1]))); tb.appendChild(tr); });
    add(d, add(el('div', 'scroll'), add(kv, tb)));

    add(d, el('h4', null, 'Attempt history (' + t.history.length + ')'));
    var ht = el('table', 'hist');
    var hh = el('tr');
    ['retry', 'status', 'reason', 'reward', 'exception', 'detail', 'timing', 'tokens · cost', 'agent · model', 'result_sha256', 'body'].forEach(function (c) { var th = el('th', null, c); th.scope = 'col'; hh.appendChild(th); });
    add(ht, add(el('thead'), hh));
    var hb = el('tbody');
    t.history.forEach(function (a) {
      var tr = el('tr');
      var body = t.bodies.filter(function (b) { return round.r.trajectories[b].trial_attempt === a.retry; });
      var cell = el('td');
      if (body.length) { var l = el('a', null, 'view'); l.href = href(side, t.id, a.retry); cell.appendChild(l); } else cell.textContent = 'no body';
      add(tr, el('td', 'num', a.retry + (a.retry === t.trial_attempt ? ' (current)' : '')), add(el('td'), statusCell(a.status)),
        add(el('td'), el('code', null, a.reason)), el('td', 'num', show(a.reward)), add(el('td'), el('code', null, show(a.exception_type))),
        el('td', 'wrap', show(a.detail || null)), el('td', null, timing(a.timing)), el('td', null, usage(a.usage)),
        el('td', null, a.agent ? a.agent.name + (a.agent.model ? ' · ' + a.agent.model : '') : '—'),
        add(el('td'), el('code', 'hash', show(a.result_sha256))), cell);
      hb.appendChild(tr);
    });
    add(d, add(el('div', 'scroll'), add(ht, hb)));
    add(d, el('p', 'note', 'The current result is the highest retry, whatever the lower ones said. task_checksum and verifier_environment_mode are stored for the current attempt only.'));

    add(d, el('h4', null, 'Trajectory'));
    if (!t.bodies.length) {
      add(d, el('p', 'banner', 'No body exported for this trial. A missing body is not a failed trial: transcripts are off by default, and at most --trace-limit attempts are exported.'));
      focusTop(d);
      return;
    }
    var bodies = t.trajs;
    var chosen = bodies.find(function (b) { return b.trial_attempt === attempt; }) || bodies[bodies.length - 1];
    var list = el('div', 'traj-list');
    bodies.forEach(function (b) {
      var btn = el('button', null, 'retry ' + b.trial_attempt + ': ' + (b.embedded ? b.messages.length + ' messages' : 'not embedded'));
      btn.type = 'button';
      btn.setAttribute('aria-pressed', b === chosen ? 'true' : 'false');
      btn.addEventListener('click', function () { location.hash = href(side, t.id, b.trial_attempt); });
      list.appendChild(btn);
    });
    d.appendChild(list);
    var viewer = el('div', 'viewer');
    d.appendChild(viewer);
    renderTrajectory(viewer, chosen, msg, function (i) { return href(side, t.id, chosen.trial_attempt) + '/' + (i + 1); });
    // A message permalink focuses its message; otherwise the panel.
    if (!(msg >= 0 && msg < chosen.kept && chosen.embedded)) focusTop(d);
  }

  function focusPanel(e) {
    e.focus({ preventScroll: true });
    e.scrollIntoView({ block: 'start' });
  }

  // span shows a long time as the page's summary does: s, min or h.
  function span(v) { return v >= 3600 ? (v / 3600).toFixed(1) + ' h' : v >= 60 ? (v / 60).toFixed(1) + ' min' : v.toFixed(1) + ' s'; }
  function secs(v) { return v === null || v === undefined ? '—' : v.toFixed(1) + ' s'; }
  function timing(t) {
    if (!t) return '—';
    return 'env ' + secs(t.environment_setup_sec) + ' · setup ' + secs(t.agent_setup_sec) + ' · agent ' + secs(t.agent_execution_sec) + ' · verifier ' + secs(t.verifier_sec);
  }
  function usage(u) {
    if (!u) return '—';
    var tok = function (x) { return x === null || x === undefined ? '—' : n(x); };
    return tok(u.input_tokens) + ' in · ' + tok(u.output_tokens) + ' out' + (u.cost_usd === null || u.cost_usd === undefined ? '' : ' · $' + u.cost_usd);
  }

  // toolArgs renders a tool call's arguments (JSON text) as code, with
  // the members an agent types into a shell (keystrokes, command) shown as
  // the text they are; anything that is not a JSON object stays as is.
  function toolArgs(content) {
    var v;
    try { v = JSON.parse(content); } catch (e) { return null; }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
    var box = el('div', 'args');
    Object.keys(v).forEach(function (k) {
      var val = v[k];
      var text = typeof val === 'string' && (k === 'keystrokes' || k === 'command' || k === 'cmd' || k === 'code') ? val : JSON.stringify(val, null, 2);
      add(box, el('div', 'arg-name mono', k), add(el('pre', 'arg'), el('code', null, text)));
    });
    return box;
  }

  function renderTrajectory(root, tr, focusMsg, msgHref) {
    add(root, el('p', 'banner', 'Sampled body (capture_policy: ' + tr.capture_policy + ', complete: ' + tr.complete +
      '): a redacted sample from ' + tr.file + '. It cannot prove the full original context, token count or training consumption.'));
    if (tr.truncated) add(root, el('p', 'banner warn', 'Truncated: ' + tr.kept + ' of ' + tr.total_messages + ' messages kept; the rest were counted, not stored.'));
    if (!tr.embedded) {
      add(root, el('p', 'banner warn', 'This body is not embedded in the page (size limit); read ' + tr.file + ' in the snapshot.'));
      return;
    }
    var msgs = tr.messages;
    var calls = new Map(), results = new Map();
    msgs.forEach(function (m, i) {
      if (m.call_id == null) return;
      if (m.role === 'tool') { if (!results.has(m.call_id)) results.set(m.call_id, []); results.get(m.call_id).push(i); }
      else if (m.tool_name != null && !calls.has(m.call_id)) calls.set(m.call_id, i);
    });
    var on = {};
    ROLES.forEach(function (r) { on[r] = true; });
    var roles = el('fieldset', 'roles');
    add(roles, el('legend', null, 'Roles shown'));
    var counts = counter(msgs, function (m) { return m.role; });
    var page = 0, visible = [];
    ROLES.forEach(function (r) {
      var cb = el('input');
      cb.type = 'checkbox';
      cb.checked = true;
      cb.addEventListener('change', function () { on[r] = cb.checked; page = 0; refresh(-1); });
      roles.appendChild(add(el('label'), cb, ' ' + r + ' (' + (counts.get(r) || 0) + ')'));
    });
    var pager = el('div', 'pager');
    var prev = el('button', null, '← previous'), next = el('button', null, 'next →'), where = el('span');
    prev.type = next.type = 'button';
    where.setAttribute('aria-live', 'polite');
    add(pager, prev, where, next);
    var box = el('div', 'msgs');
    add(root, roles, pager, box);
    prev.addEventListener('click', function () { page--; refresh(-1); });
    next.addEventListener('click', function () { page++; refresh(-1); });

    function jump(i) {
      if (!on[msgs[i].role]) { on[msgs[i].role] = true; roles.querySelectorAll('input')[ROLES.indexOf(msgs[i].role)].checked = true; }
      visible = msgs.map(function (m, k) { return k; }).filter(function (k) { return on[msgs[k].role]; });
      page = Math.floor(visible.indexOf(i) / PAGE);
      refresh(i);
    }
    function pairLink(text, i) {
      var b = el('button', 'pair', text);
      b.type = 'button';
      b.addEventListener('click', function () { jump(i); });
      return b;
    }
    function message(m, i) {
      var a = el('article', 'msg r-' + m.role);
      a.id = 'msg-' + i;
      a.tabIndex = -1;
      var hd = el('header');
      var num = el('a', 'num-link', '#' + (i + 1));
      num.href = msgHref(i);
      num.setAttribute('aria-label', 'link to message ' + (i + 1));
      add(hd, num, el('span', 'role', m.role));
      if (m.tool_name != null) add(hd, el('span', 'mono', 'tool ' + m.tool_name));
      if (m.call_id != null) add(hd, el('span', 'mono', 'call_id ' + m.call_id));
      var tok = [];
      if (m.prompt_tokens != null) tok.push('prompt ' + m.prompt_tokens + ' tokens');
      if (m.completion_tokens != null) tok.push('completion ' + m.completion_tokens + ' tokens');
      if (m.duration_ms != null) tok.push(m.duration_ms + ' ms');
      if (tok.length) add(hd, el('span', null, tok.join(' · ')));
      if (m.call_id != null && m.role !== 'tool' && calls.get(m.call_id) === i) {
        var rs = results.get(m.call_id) || [];
        if (rs.length) rs.forEach(function (k) { hd.appendChild(pairLink('result #' + (k + 1), k)); });
        else add(hd, el('span', null, 'no result in this body'));
      }
      if (m.role === 'tool' && m.call_id != null) {
        if (calls.has(m.call_id)) hd.appendChild(pairLink('answers call #' + (calls.get(m.call_id) + 1), calls.get(m.call_id)));
        else add(hd, el('span', null, 'its call is not in this body'));
      }
      var args = m.role === 'assistant' && m.tool_name != null ? toolArgs(m.content) : null;
      add(a, hd, args || el('pre', null, m.content));
      return a;
    }
    function refresh(focus) {
      visible = msgs.map(function (m, k) { return k; }).filter(function (k) { return on[msgs[k].role]; });
      var pages = Math.max(1, Math.ceil(visible.length / PAGE));
      page = Math.max(0, Math.min(pages - 1, page));
      var from = page * PAGE, to = Math.min(visible.length, from + PAGE);
      where.textContent = visible.length ? 'messages ' + (from + 1) + '–' + to + ' of ' + visible.length + ' shown (' + msgs.length + ' in the body), page ' + (page + 1) + ' of ' + pages : 'no messages of the chosen roles';
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
      box.textContent = '';
      for (var k = from; k < to; k++) box.appendChild(message(msgs[visible[k]], visible[k]));
      if (focus >= 0) {
        var target = document.getElementById('msg-' + focus);
        if (target) { target.classList.add('hl'); target.focus({ preventScroll: true }); target.scrollIntoView({ block: 'center' }); }
      }
    }
    if (focusMsg >= 0 && focusMsg < msgs.length) jump(focusMsg); else refresh(-1);
  }

  function route() {
    var h = location.hash.slice(1);
    if (h.indexOf('filter/') === 0) {
      var q = h.slice(7), i = q.indexOf('?');
      var fx = explorers.get(i < 0 ? q : q.slice(0, i));
      if (fx) fx.setFilter(new URLSearchParams(i < 0 ? '' : q.slice(i + 1)));
      return;
    }
    var parts = h.split('/');
    var id;
    if (parts.length < 2) return;
    try { id = decodeURIComponent(parts[1]); } catch (e) { return; } // a hand-edited, malformed link
    if (parts[0] === 'pair') { showPair(id); return; }
    var ex = explorers.get(parts[0]);
    if (!ex) return;
    var attempt = parts.length > 2 ? Number(parts[2]) : undefined;
    var msg = parts.length > 3 ? Number(parts[3]) - 1 : -1;
    ex.reveal(id, attempt, msg);
  }

  // showPair opens one trial of the comparison in both rounds side by
  // side, with the next and previous transition.
  function showPair(id) {
    var pv = document.getElementById('pairview');
    var base = explorers.get('base'), cand = explorers.get('candidate');
    if (!pv || !base || !cand) return;
    pv.textContent = '';
    pv.hidden = false;
    var at = DATA.pairs.indexOf(id);
    var nav = el('div', 'pairnav');
    var mk = function (text, to) {
      var a = el('a', null, text);
      if (to) a.href = '#pair/' + encodeURIComponent(to); else a.setAttribute('aria-disabled', 'true');
      return a;
    };
    var close = el('button', 'close', 'close (Esc)');
    close.type = 'button';
    close.addEventListener('click', closePair);
    add(nav, el('strong', 'mono', id), ' ', mk('← previous transition (p)', at > 0 ? DATA.pairs[at - 1] : null), ' ',
      el('span', 'note', at >= 0 ? 'transition ' + (at + 1) + ' of ' + DATA.pairs.length : 'not a transition'), ' ',
      mk('next transition (n) →', at >= 0 && at < DATA.pairs.length - 1 ? DATA.pairs[at + 1] : null), ' ', close);
    var cols = el('div', 'pair');
    [base, cand].forEach(function (ex) {
      var col = el('div', 'paircol');
      // The checkpoint is page text only (never in the embedded data).
      var ck = document.querySelector('#sec-' + ex.side + ' .headline code');
      add(col, el('h4', null, (ex.side === 'base' ? 'Base' : 'Candidate') + ' · ' + (ck ? ck.textContent : '')));
      var panel = el('div', 'detail');
      col.appendChild(panel);
      cols.appendChild(col);
      ex.find(id).then(function (t) { renderTrial(panel, ex.side, ex.round, t, id, undefined, -1, false); });
    });
    add(pv, nav, cols);
    pv.dataset.at = String(at);
    focusPanel(pv);
  }

  function closePair() {
    var pv = document.getElementById('pairview');
    if (!pv || pv.hidden) return false;
    pv.hidden = true;
    pv.textContent = '';
    history.replaceState(null, '', location.pathname + location.search);
    return true;
  }

  function stepPair(d) {
    var pv = document.getElementById('pairview');
    var at = Number(pv.dataset.at) + d;
    if (at >= 0 && at < DATA.pairs.length) location.hash = '#pair/' + encodeURIComponent(DATA.pairs[at]);
  }

  // The task table: one row per task, worst first; a header sorts, a row
  // filters the trial list to its task. It is computed when the page is
  // written (snapshot.TaskTable) and drawn a page of rows at a time.
  var TASK_COLS = [['task', 'task', 'text'], ['planned', 'planned', 'desc'], ['scored', 'scored', 'desc'], ['success', 'success', 'asc'],
    ['failure', 'failure', 'desc'], ['infra_error', 'infra', 'desc'], ['unscored', 'unscored', 'desc'], ['missing', 'missing', 'desc'],
    ['success_rate', 'rate', 'asc'], ['pass_hat_k', 'pass^k', 'asc'], ['cost_usd', 'cost', 'desc'], ['duration_sec', 'time', 'desc'], ['flags', 'flags', 'desc']];
  var TASK_FLAGS = ['flaky', 'always_fail', 'infra_prone', 'low_coverage'];
  var TASK_PAGE = 100;
  function flagsOf(bits) {
    return TASK_FLAGS.filter(function (f, k) { return bits & (1 << k); });
  }
  function usd(v) { return v >= 1 ? '$' + v.toFixed(2) : '$' + Number(v.toPrecision(4)); }
  function TaskTable(root, ex) {
    var T = ex.round.r.tasks, S = ex.round.S, count = T.task.length;
    var rows = [];
    for (var i = 0; i < count; i++) rows.push(i);
    var key = 'success_rate', page = 0;
    root.textContent = '';
    var tbl = el('table', 'counts tasktable');
    var hr = el('tr');
    var body = el('tbody');
    var pager = el('div', 'pager');
    var prev = el('button', null, '← previous'), next = el('button', null, 'next →'), where = el('span');
    prev.type = next.type = 'button';
    where.setAttribute('aria-live', 'polite');
    add(pager, prev, where, next);
    var pct = function (v) { return v === null ? '—' : (100 * v).toFixed(1) + '%'; };
    var draw = function () {
      var pages = Math.max(1, Math.ceil(count / TASK_PAGE));
      page = Math.max(0, Math.min(pages - 1, page));
      var from = page * TASK_PAGE, to = Math.min(count, from + TASK_PAGE);
      where.textContent = count > TASK_PAGE ? 'tasks ' + n(from + 1) + '–' + n(to) + ' of ' + n(count) + ' (… and ' + n(count - (to - from)) + ' more on other pages)' : '';
      pager.hidden = count <= TASK_PAGE;
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
      body.textContent = '';
      var frag = document.createDocumentFragment();
      rows.slice(from, to).forEach(function (k) {
        var tr = el('tr');
        tr.tabIndex = 0;
        var name = S[T.task[k]];
        var cost = T.cost_usd[k] === null ? (T.attempts[k] ? 'unknown' : '—') : usd(T.cost_usd[k]) + (T.with_cost[k] < T.attempts[k] ? ' (' + T.with_cost[k] + ' of ' + T.attempts[k] + ')' : '');
        add(tr, add(el('td', 'task'), el('code', null, name)), el('td', 'num', n(T.planned[k])), el('td', 'num', n(T.scored[k])), el('td', 'num', n(T.success[k])),
          el('td', 'num', n(T.failure[k])), el('td', 'num', n(T.infra_error[k])), el('td', 'num', n(T.unscored[k])), el('td', 'num', n(T.missing[k])),
          el('td', 'num', pct(T.success_rate[k])), el('td', 'num', pct(T.pass_hat_k[k])), el('td', 'num', cost),
          el('td', 'num', T.duration_sec[k] === null ? '—' : span(T.duration_sec[k])), el('td', 'flags', flagsOf(T.flags[k]).join(' ') || '—'));
        var go = function () { ex.setFilter(new URLSearchParams([['task', name]])); };
        tr.addEventListener('click', go);
        tr.addEventListener('keydown', function (e) { if (e.key === 'Enter') { e.preventDefault(); go(); } });
        frag.appendChild(tr);
      });
      body.appendChild(frag);
    };
    prev.addEventListener('click', function () { page--; draw(); });
    next.addEventListener('click', function () { page++; draw(); });
    var sortBy = function (k, dir) {
      var col = k === 'task' ? null : T[k];
      var val = k === 'task' ? function (i) { return S[T.task[i]]; } : k === 'flags' ? function (i) { return flagsOf(T.flags[i]).length; } : function (i) { return col[i]; };
      var name = function (i) { return S[T.task[i]]; };
      rows.sort(function (a, b) {
        var x = val(a), y = val(b), c = 0;
        if (dir === 'text') c = x < y ? -1 : x > y ? 1 : 0;
        else if (x === null && y !== null) c = dir === 'asc' ? -1 : 1;
        else if (y === null && x !== null) c = dir === 'asc' ? 1 : -1;
        else if (x !== y) c = dir === 'asc' ? x - y : y - x;
        if (c) return c;
        var p = name(a), q = name(b);
        return p < q ? -1 : p > q ? 1 : 0;
      });
      key = k;
      page = 0;
      hr.querySelectorAll('th').forEach(function (th) { th.setAttribute('aria-sort', th.dataset.key === key ? (dir === 'desc' ? 'descending' : 'ascending') : 'none'); });
      draw();
    };
    TASK_COLS.forEach(function (c) {
      var th = el('th');
      th.scope = 'col';
      th.dataset.key = c[0];
      if (c[2] !== 'text') th.className = 'num';
      var b = el('button', 'sort', c[1]);
      b.type = 'button';
      b.addEventListener('click', function () { sortBy(c[0], c[2]); });
      th.appendChild(b);
      hr.appendChild(th);
    });
    add(tbl, add(el('thead'), hr), body);
    var counts = [0, 0, 0, 0];
    for (var j = 0; j < count; j++) for (var f = 0; f < 4; f++) if (T.flags[j] & (1 << f)) counts[f]++;
    add(root, el('p', 'note', n(count) + ' tasks, worst success rate first (a task with nothing scored first) · ' + n(counts[0]) + ' flaky · ' +
      n(counts[1]) + ' always_fail · ' + n(counts[2]) + ' infra_prone · ' + n(counts[3]) + ' low_coverage (mostly not scored). Cost is every attempt\'s known cost (of how many attempts, when not all); unknown is not 0. A header sorts; a row shows its trials.'),
      add(el('div', 'scroll tasks-scroll'), tbl), pager);
    sortBy(key, 'asc');
  }

  // The triage block is one Tab stop: its links take turns being the one
  // Tab reaches (a roving tabindex), and ↑ ↓ Home End move between them.
  function roving(list) {
    var links = Array.prototype.slice.call(list.querySelectorAll('a'));
    if (!links.length) return;
    var cur = 0;
    var set = function (k) {
      links[cur].tabIndex = -1;
      cur = k;
      links[cur].tabIndex = 0;
    };
    links.forEach(function (a, k) { a.tabIndex = k === 0 ? 0 : -1; a.addEventListener('focus', function () { set(k); }); });
    list.addEventListener('keydown', function (e) {
      var to = e.key === 'ArrowDown' ? cur + 1 : e.key === 'ArrowUp' ? cur - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? links.length - 1 : null;
      if (to === null) return;
      e.preventDefault();
      e.stopPropagation();
      set(Math.max(0, Math.min(links.length - 1, to)));
      links[cur].focus();
    });
  }

  // The keyboard: / focuses the search, Esc closes the open detail (back
  // to its row), j/k move in the list, n/p open the next or previous
  // trial (or transition, in the side-by-side view).
  function current() {
    var a = document.activeElement, best = null;
    explorers.forEach(function (ex) {
      if (!best && (ex.viewport === a || ex.detail.contains(a) || ex.controls.search === a || !ex.detail.hidden)) best = ex;
    });
    return best || explorers.values().next().value;
  }
  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var pv = document.getElementById('pairview');
    var inPair = pv && !pv.hidden;
    if (e.key === 'Escape') {
      if (inPair && closePair()) { e.preventDefault(); return; }
      var ex0 = current();
      if (ex0 && ex0.close()) e.preventDefault();
      return;
    }
    if (typing(e)) return;
    var ex = current();
    if (!ex) return;
    if (e.key === '/') { e.preventDefault(); ex.controls.search.focus(); ex.controls.search.select(); return; }
    if (e.key === 'n' || e.key === 'p') {
      e.preventDefault();
      if (inPair) stepPair(e.key === 'n' ? 1 : -1); else ex.step(e.key === 'n' ? 1 : -1);
      return;
    }
    if ((e.key === 'j' || e.key === 'k') && e.target !== ex.viewport) {
      e.preventDefault();
      ex.select(ex.sel + (e.key === 'j' ? 1 : -1));
      ex.viewport.focus({ preventScroll: true });
    }
  });

  function printRows(ex) {
    var t = ex.printRows;
    t.textContent = '';
    var hr = el('tr');
    ['status', 'trial', 'reason', 'reward', 'exception', 'attempts'].forEach(function (c) { hr.appendChild(el('th', null, c)); });
    t.appendChild(add(el('thead'), hr));
    var b = el('tbody');
    var rd = ex.round;
    ex.view.slice(0, PRINT_MAX).forEach(function (i) {
      var tr = el('tr'), st = rd.status(i);
      add(tr, el('td', null, GLYPH[st] + ' ' + st), el('td', null, rd.id(i)), el('td', null, show(rd.reason(i))),
        el('td', null, show(rd.r.reward[i])), el('td', null, show(rd.exc(i))), el('td', null, String(rd.r.attempts[i])));
      b.appendChild(tr);
    });
    t.appendChild(b);
    if (ex.view.length > PRINT_MAX) t.appendChild(add(el('caption', null, 'First ' + PRINT_MAX + ' of ' + ex.view.length + ' trials as filtered; tpctl snapshot show DIR --trials prints all.')));
  }

  DATA.rounds.forEach(function (r) {
    var root = document.querySelector('.explorer[data-side="' + r.side + '"]');
    if (root) explorers.set(r.side, new Explorer(root, new Round(r)));
    var tt = document.querySelector('.tasks[data-side="' + r.side + '"]');
    if (tt && explorers.has(r.side)) new TaskTable(tt, explorers.get(r.side));
  });
  document.querySelectorAll('.triage-list').forEach(roving);
  // The skip links put the focus on their trial list.
  document.querySelectorAll('a.skip[data-skip]').forEach(function (a) {
    a.addEventListener('click', function (e) {
      var ex = explorers.get(a.dataset.skip);
      if (!ex) return;
      e.preventDefault();
      ex.viewport.focus({ preventScroll: true });
      ex.shown.scrollIntoView({ block: 'start' });
    });
  });
  window.addEventListener('hashchange', route);
  window.addEventListener('beforeprint', function () { explorers.forEach(function (ex) { printRows(ex); }); });
  route();
  // Read by the browser test and benchmark: the page is interactive, and
  // (idleAt, ms from navigation start) when it was first idle after.
  var bySide = Object.create(null); // sides are the page's own names
  explorers.forEach(function (ex, side) { bySide[side] = ex; });
  window.tpctlReport = { ready: true, explorers: bySide, idleAt: null };
  var idle = window.requestIdleCallback || setTimeout;
  idle(function () {
    window.tpctlReport.idleAt = performance.now();
    // Then, while nothing else happens, find the search text's lines, so
    // the first keystroke does not wait for it.
    idle(function () { explorers.forEach(function (ex) { ex.round.text('search'); ex.round.text('tsearch'); }); });
  });
})();
