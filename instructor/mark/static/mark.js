// course mark: grading one question, keyboard first. The answers' cards come from the server as
// HTML it escaped (autograder/handgrading.py); this script builds everything else with textContent.
"use strict";
(function () {
  const app = document.getElementById("app");
  const Q = app.dataset.q;
  const $ = (id) => document.getElementById(id);
  let state = null;          // {items, answers, points, auto_points}
  let list = [];             // indices of the answers the filters keep
  let at = 0;                // position in list
  let all = false;           // every answer on one page, or one at a time
  let stale = false;         // someone changed the current answer since it was loaded
  let outdated = false;      // the class was re-graded since: nothing is sent until r reloads it
  const refused = new Map(); // answer id -> what this TA typed that another TA's save refused

  async function api(path, body) {
    // every change names the rows the page read: the server refuses it after a re-grade
    if (body !== undefined && state) body = {rows: state.rows, ...body};
    const opts = body === undefined ? {} : {method: "POST", body: JSON.stringify(body),
      headers: {"Content-Type": "application/json", "X-Mark": "1"}};
    const r = await fetch(path, opts);
    const data = r.headers.get("Content-Type").startsWith("application/json") ? await r.json() : await r.text();
    return {status: r.status, data: data};
  }

  function current() { return list.length ? state.answers[list[at]] : null; }
  function fmt(x) { return (x >= 0 ? "+" : "") + String(+x.toFixed(4)); }

  function filter() {
    const how = $("filter").value, item = $("item-filter").value;
    const lo = parseFloat($("auto-min").value), hi = parseFloat($("auto-max").value);
    const keep = state.answers.filter((a) =>
      (how === "all" || (how === "ungraded") === (a.grade === null)) &&
      (item === "" || a.items.includes(+item)) &&
      (isNaN(lo) || a.auto >= lo) && (isNaN(hi) || a.auto <= hi));
    const was = current();
    list = keep.map((a) => a.n);
    at = was && list.includes(was.n) ? list.indexOf(was.n) : 0;
  }

  function banner(text, info) {
    $("banner").textContent = text || "";
    $("banner").className = info ? "info" : "";
  }

  function renderPanel() {
    const a = current();
    // an unreadable upload has no answer to grade: shown, never counted as one left
    const gradable = state.answers.filter((x) => x.gradable);
    const graded = gradable.filter((x) => x.grade !== null).length;
    const none = state.answers.length - gradable.length;
    $("progress").textContent = `${graded} / ${gradable.length} graded` +
      (none ? ` (${none} unreadable: nothing to grade)` : "");
    const sel = $("item-filter"), keep = sel.value;
    sel.replaceChildren(new Option("any", ""));
    state.items.forEach((it, k) => sel.add(new Option(`${k + 1}: ${it.text.slice(0, 30)}`, it.id)));
    sel.value = keep;
    $("where").textContent = a ? `${a.label}: answer ${at + 1} of ${list.length} shown` +
      (a.file ? ` (${a.file})` : "") : "no answer matches the filters";
    const g = $("grade");
    g.replaceChildren();
    if (a) {
      const span = document.createElement("span");
      span.className = a.grade === null ? "none" : "";
      span.textContent = a.grade === null ? `not graded / ${state.points}` :
        `${a.grade} / ${state.points}` + (a.typed !== null ? " (typed)" : "");
      g.append(span);
      if (a.who) {
        const by = document.createElement("small");
        by.textContent = ` by ${a.who}`;
        g.append(by);
      }
    }
    const ol = $("items");
    ol.replaceChildren();
    state.items.forEach((it, k) => {
      const li = document.createElement("li");
      li.dataset.id = it.id;
      if (a && a.items.includes(it.id)) li.className = "on";
      const used = state.answers.filter((x) => x.items.includes(it.id)).length;
      for (const [cls, text] of [["key", k < 9 ? String(k + 1) : ""], ["pts", fmt(it.points)],
                                 ["text", it.text]]) {
        const s = document.createElement("span");
        s.className = cls;
        s.textContent = text;
        li.append(s);
      }
      const tools = document.createElement("span");
      const count = document.createElement("span");
      count.className = "count";
      count.textContent = `${used}× `;
      const edit = document.createElement("button");
      edit.type = "button";
      edit.textContent = "edit";
      edit.addEventListener("click", (e) => { e.stopPropagation(); editItem(li, it); });
      const del = document.createElement("button");
      del.type = "button";
      del.textContent = "×";
      del.title = "delete (only when applied to no answer)";
      del.setAttribute("aria-label", `delete item ${k + 1}`);
      del.addEventListener("click", (e) => {
        e.stopPropagation();
        if (confirm(`Delete rubric item ${k + 1} (${fmt(it.points)}: ${it.text})?`)) changeItem(it, {delete: true});
      });
      tools.append(count, edit, del);
      li.append(tools);
      li.addEventListener("click", () => toggle(k));
      ol.append(li);
    });
    if (document.activeElement !== $("comment")) $("comment").value = a ? a.comment : "";
    if (document.activeElement !== $("typed")) $("typed").value = a && a.typed !== null ? a.typed : "";
  }

  function sameRows(answers) {          // the rows the page shows are still the class's rows
    return answers.map((x) => x.id).join() === state.answers.map((x) => x.id).join();
  }

  function regraded() {
    stale = true;
    outdated = true;
    banner("The class was re-graded since this page was loaded: nothing is saved until you press r " +
           "to load the answers again.");
  }

  function refuseOutdated() {             // true (and says so) when the page must reload first
    if (outdated) regraded();
    return outdated;
  }

  function showMerge() {                  // a refused save of the answer on screen, beside theirs
    const a = current(), mine = a ? refused.get(a.id) : null;
    $("merge").hidden = !mine;
    if (!mine) return;
    $("merge-who").textContent = mine.who;
    $("merge-theirs").value = a.comment;
    if (document.activeElement !== $("merge-yours")) $("merge-yours").value = mine.comment || "";
    $("merge-points").textContent = mine.points !== null && mine.points !== undefined ?
      `Your points typed: ${mine.points} (now: ${a.grade === null ? "not graded" : a.grade}).` : "";
    $("merge-comment").hidden = mine.comment === null || mine.comment === undefined;
  }

  async function merged(how) {
    const a = current(), mine = a ? refused.get(a.id) : null;
    if (!mine) return;
    const yours = $("merge-yours").value;
    const body = {};
    if (how !== "theirs" && mine.comment !== null && mine.comment !== undefined) {
      body.comment = how === "both" && a.comment.trim() ? `${a.comment}\n${yours}` : yours;
    }
    if (how !== "theirs" && mine.points !== null && mine.points !== undefined) body.points = mine.points;
    refused.delete(a.id);
    showMerge();
    if (Object.keys(body).length) await save(body);
  }

  async function card(n) {
    const r = await api(`/api/q/${Q}/${n}/card?id=${encodeURIComponent(state.answers[n].id)}` +
                        `&rows=${encodeURIComponent(state.rows)}`);
    const box = document.createElement("div");
    if (r.status === 409) {              // another row holds this position now: show nothing of it
      regraded();
      const p = document.createElement("section");
      p.className = "answer";
      p.textContent = "Re-graded since this page was loaded: press r.";
      box.append(p);
    } else {
      box.innerHTML = r.data;            // escaped by the server; the page's CSP runs no script in it
    }
    const section = box.firstElementChild;
    section.dataset.n = n;
    section.addEventListener("click", () => { at = list.indexOf(n); show(false); });
    return section;
  }

  async function renderCards(scroll) {
    const cards = $("cards");
    const wanted = all ? list : (list.length ? [list[at]] : []);
    const have = Array.from(cards.children).map((c) => +c.dataset.n);
    if (have.join() !== wanted.join()) {
      const made = [];
      for (const n of wanted) made.push(await card(n));
      cards.replaceChildren(...made);
    }
    for (const c of cards.children) c.classList.toggle("current", list.length > 0 && +c.dataset.n === list[at]);
    const here = cards.querySelector(".current");
    if (here && scroll) here.scrollIntoView({block: all ? "center" : "start"});
  }

  async function refreshCard(n) {        // its points changed: the card says so
    const old = $("cards").querySelector(`[data-n="${n}"]`);
    if (old) {
      const fresh = await card(n);
      fresh.classList.toggle("current", old.classList.contains("current"));
      old.replaceWith(fresh);
    }
  }

  async function show(scroll = true) {
    stale = outdated;
    renderPanel();
    showMerge();
    await renderCards(scroll);
  }

  function apply(data) {
    state = data;
    const keep = list.slice(), was = at;
    filter();
    if (keep.length && list.join() !== keep.join() && $("filter").value === "ungraded") {
      // grading an answer takes it out of "ungraded": stay where the next one is
      at = Math.min(was, Math.max(list.length - 1, 0));
    }
  }

  async function save(body) {
    const a = current();
    if (!a || refuseOutdated()) return;
    const n = a.n;
    const r = await api(`/api/q/${Q}/${n}`, {id: a.id, version: a.version, ...body});
    if (r.status === 409 && r.data.regraded) { regraded(); return; }
    if (r.status === 409) {
      state.answers[n] = r.data.answer;
      const who = [...new Set(r.data.by.map((h) => `${h.who} at ${h.at}`))].join(", ");
      const yours = r.data.yours || {};
      const typed = (yours.comment !== null && yours.comment !== undefined && yours.comment !== r.data.answer.comment) ||
        (yours.points !== null && yours.points !== undefined);
      if (typed) {                       // nothing typed is lost: it waits beside theirs, to merge
        refused.set(a.id, {comment: yours.comment, points: yours.points, who: r.data.answer.who});
      }
      banner(`Not saved: ${r.data.error}. Changed by ${who}; here is what they saved` +
             (typed ? "; yours is beside it, to merge." : "."));
      renderPanel();
      showMerge();
      await refreshCard(n);
      return;
    }
    if (r.status !== 200) { banner(r.data.error || "not saved"); return; }
    banner("");
    apply(r.data);
    await refreshCard(n);
    await show(false);
  }

  function toggle(k) {                    // a click: on, or off again
    const a = current(), it = state.items[k];
    if (!a || !it) return;
    const items = a.items.includes(it.id) ? a.items.filter((i) => i !== it.id) : a.items.concat([it.id]);
    return save({items: items});
  }

  // A number key only ever applies its item (pressed twice, the answer keeps it); taking one off is
  // Shift with the number, so a stray key never leaves an answer ungraded without a word.
  function applyKey(k) {
    const a = current(), it = state.items[k];
    if (!a || !it) return;
    if (a.items.includes(it.id)) {
      banner(`Item ${k + 1} is already applied: Shift+${k + 1} takes it off.`, true);
      return;
    }
    return save({items: a.items.concat([it.id])});
  }

  function removeKey(k) {
    const a = current(), it = state.items[k];
    if (!a || !it) return;
    if (!a.items.includes(it.id)) {
      banner(`Item ${k + 1} is not applied to this answer.`, true);
      return;
    }
    return save({items: a.items.filter((i) => i !== it.id)});
  }

  async function changeItem(it, body) {
    if (refuseOutdated()) return;
    const r = await api(`/api/items/${it.id}`, {version: it.version, ...body});
    if (r.status === 409 && r.data.regraded) { regraded(); return; }
    if (r.status === 409) { banner(`Not saved: ${r.data.error}.`); await reload(); return; }
    if (r.status !== 200) { banner(r.data.error || "not saved"); return; }
    banner(body.delete ? "" : "Changed: every answer with this item follows.", true);
    apply(r.data);
    const cards = Array.from($("cards").children).map((c) => +c.dataset.n);
    for (const n of cards) await refreshCard(n);
    renderPanel();
  }

  function editItem(li, it) {
    li.replaceChildren();
    const pts = document.createElement("input");
    pts.value = it.points;
    pts.setAttribute("aria-label", "points");
    const text = document.createElement("input");
    text.value = it.text;
    text.setAttribute("aria-label", "text");
    const ok = document.createElement("button");
    ok.type = "button";
    ok.textContent = "save";
    const go = () => changeItem(it, {points: pts.value, text: text.value});
    ok.addEventListener("click", (e) => { e.stopPropagation(); go(); });
    for (const input of [pts, text]) {
      input.addEventListener("click", (e) => e.stopPropagation());
      input.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); go(); } });
    }
    li.append(document.createElement("span"), pts, text, ok);
    text.focus();
  }

  async function reload() {
    const r = await api(`/api/q/${Q}`);
    if (r.status !== 200) { banner(r.data.error || "the answers could not be loaded"); return; }
    outdated = false;
    banner("");
    apply(r.data);
    await show(true);
  }

  function move(step) {
    if (!list.length) return;
    at = Math.max(0, Math.min(list.length - 1, at + step));
    banner("");
    show(true);
  }

  function nextUngraded() {
    for (let k = 1; k <= list.length; k++) {
      const j = (at + k) % list.length;
      const a = state.answers[list[j]];
      if (a.gradable && a.grade === null) { at = j; banner(""); show(true); return; }
    }
    banner("Every answer shown is graded.", true);
  }

  $("new-item").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (refuseOutdated()) return;
    const r = await api(`/api/q/${Q}/items`, {points: $("new-points").value || "0", text: $("new-text").value});
    if (r.status === 409 && r.data.regraded) { regraded(); return; }
    if (r.status !== 200) { banner(r.data.error || "not added"); return; }
    $("new-points").value = "";
    $("new-text").value = "";
    $("new-text").blur();
    banner("");
    apply(r.data);
    renderPanel();
  });
  $("comment").addEventListener("change", () => save({comment: $("comment").value}));
  $("typed").addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); save({points: $("typed").value.trim() || null}); $("typed").blur(); }
  });
  $("to-rubric").addEventListener("click", () => save({points: null}));
  $("merge-both").addEventListener("click", () => merged("both"));
  $("merge-mine").addEventListener("click", () => merged("mine"));
  $("merge-drop").addEventListener("click", () => merged("theirs"));
  for (const id of ["filter", "item-filter", "auto-min", "auto-max"]) {
    $(id).addEventListener("change", () => { filter(); show(true); });
  }
  $("view").addEventListener("click", () => {
    all = !all;
    $("view").textContent = all ? "one at a time" : "all on one page";
    show(true);
  });

  document.addEventListener("keydown", (e) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
    if (e.key === "Escape") { document.activeElement.blur(); return; }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key, digit = /^(Digit|Numpad)[1-9]$/.test(e.code) ? +e.code.slice(-1) : 0;
    if (e.shiftKey && digit) { removeKey(digit - 1); e.preventDefault(); return; }
    if (k === "j" || k === "ArrowRight" || k === "n") move(1);
    else if (k === "k" || k === "ArrowLeft" || k === "p") move(-1);
    else if (k === "u") nextUngraded();
    else if (/^[1-9]$/.test(k)) applyKey(+k - 1);
    else if (k === "a") $("new-points").focus();
    else if (k === "c") $("comment").focus();
    else if (k === "t") $("typed").focus();
    else if (k === "v") $("view").click();
    else if (k === "r") reload();
    else return;
    e.preventDefault();
  });

  // other TAs' work: the counts follow; the answer on screen is never replaced under you
  setInterval(async () => {
    if (!state) return;
    const r = await api(`/api/q/${Q}`);
    if (r.status !== 200) return;
    if (r.data.rows !== state.rows || !sameRows(r.data.answers)) {   // a re-grade changed rows
      if (!outdated) regraded();
      return;
    }
    const mine = current();
    const theirs = mine ? r.data.answers[mine.n] : null;
    if (mine && theirs && theirs.version !== mine.version && !stale) {
      stale = true;
      banner(`${theirs.who} changed this answer: press r to load it.`);
    }
    const keep = mine ? state.answers[mine.n] : null;
    state.items = r.data.items;
    state.answers = r.data.answers.map((x) => (keep && x.n === keep.n ? keep : x));
    if (!$("panel").contains(document.activeElement)) renderPanel();
  }, 4000);

  // the bar wraps onto more lines on a narrow screen (or with long filters): what sticks below it
  // (the rubric's panel, the answer scrolled to) starts under it, not behind it
  const bar = document.querySelector(".bar");
  new ResizeObserver(() => {
    document.documentElement.style.setProperty("--bar", `${bar.offsetHeight}px`);
  }).observe(bar);

  reload();
}());
