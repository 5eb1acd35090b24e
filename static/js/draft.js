// Typed drafts of the participant pages. Optional for the flow (it works without JavaScript),
// and a draft is never an answer: only the page's own submit saves one.
// A form marked data-draft="<url>" (a task's answer form, the survey) sends what has been typed
// or chosen so far to that URL, as the form itself would post it (CSRF token, page token, its
// text boxes, number fields and checked radio buttons and checkboxes), with the draft's mark
// (below):
// - after a pause in typing (DELAY_MS), and
// - when the page is hidden, frozen, left, reloaded or closed (visibilitychange, freeze,
//   beforeunload, pagehide), with a request that outlives the page (fetch keepalive, else
//   sendBeacon), since a phone may discard a hidden tab without any further event.
// The server keeps the latest draft on the participant's row and renders it into the step's
// next GET: reload, Back/Forward, a second tab, the study link opened again, a discarded tab.
// Nothing is ever shown to the participant: a stale page (409), a refusal (4xx) or a network
// error only leaves the last kept draft. The form's data-draft-state says where the draft is
// ("ready", "typing", "saving", "saved", "stale", "refused", "failed"), for the browser tests.
//
// The tab's copy. The draft sent as the page unloads can be stored after the reload's GET was
// answered (by another server worker), so the reloaded page would show the server's older text.
// So every input also writes the form's values to the tab's sessionStorage, under a key of this
// study's draft URL and the page's step token (which names the participant, the step and the
// task), and the next load of the same page puts them back when they are newer than the server's
// draft, then sends them as a draft. "Newer" is decided by marks, never by clocks:
// - each page load picks a random writer id; each draft it sends carries the mark
//   "<writer>.<edits so far>", which the server stores with the draft and renders on the form
//   (data-draft-mark: "" for no draft, "?" for one stored without a mark);
// - the copy lists the marks its text supersedes: the mark the page was loaded with, this load's
//   own sends (its writer up to its edit count), and the same list of any copy it put back;
// - the copy is put back only when the server's mark is on that list. A draft stored by anyone
//   else since (a second tab, another device, a refused submit) has a mark the copy never saw,
//   and the server's draft wins: the server stays the truth across tabs and devices.
// The copy is removed when the page is submitted or turns out to be stale, and a page of the
// study removes every other page's copy in this tab (a submitted step never comes back).
// This file must run before flow.js (its script comes first): text put back is then already in
// the box when flow.js starts, so it counts as neither typed nor inserted.
(function () {
  "use strict";
  var form = document.querySelector("form[data-draft]");
  if (!form || !window.URLSearchParams) { return; }
  var url = form.getAttribute("data-draft");
  var DELAY_MS = 1000;
  var LEAVING_EVENTS_MAX_BYTES = 60000; // keepalive requests share a 64 KiB budget
  var KEY_PREFIX = "spotlight.draft|"; // tests/e2e/drafts.py reads the copies by this prefix
  var MAX_WRITERS = 20; // marks a copy remembers; beyond that the oldest go (the server then wins)
  var timer = null;
  var sent = null; // the form body of the last save sent; an unchanged form is not sent again
  var done = false; // submitted, or the page turned out to be stale: send and keep nothing more

  function fields() {
    return form.querySelectorAll("textarea[name], input[type=radio][name], input[type=checkbox][name], input[type=number][name]");
  }
  function choosable(el) { return el.type === "radio" || el.type === "checkbox"; }
  function hidden(name) {
    var el = form.querySelector('input[type=hidden][name="' + name + '"]');
    return el ? el.value : "";
  }
  function state(value) { form.setAttribute("data-draft-state", value); }
  function own(object, name) { return Object.prototype.hasOwnProperty.call(object, name); }

  // --- the tab's copy ----------------------------------------------------------------------
  var storage = null;
  try {
    storage = window.sessionStorage;
    storage.getItem(KEY_PREFIX); // throws where storage is blocked
  } catch (e) { storage = null; } // no copy: the server's draft is all there is
  var studyKey = KEY_PREFIX + url + "|";
  var key = studyKey + hidden("token");
  var writer = randomWriter();
  var edits = 0; // this load's edits (inputs, and a copy put back)
  var writers = []; // [[writer, edits]]: the server drafts this page's text supersedes

  function randomWriter() {
    var bytes = new Uint8Array(8);
    if (window.crypto && crypto.getRandomValues) {
      crypto.getRandomValues(bytes);
    } else {
      for (var i = 0; i < bytes.length; i++) { bytes[i] = Math.floor(Math.random() * 256); }
    }
    return Array.prototype.map.call(bytes, function (b) { return (b + 256).toString(16).slice(1); }).join("");
  }
  function parseMark(mark) {
    var dot = mark.lastIndexOf(".");
    return dot < 0 ? [mark, 0] : [mark.slice(0, dot), parseInt(mark.slice(dot + 1), 10) || 0];
  }
  function supersede(who, upTo) {
    for (var i = 0; i < writers.length; i++) {
      if (writers[i][0] === who) { writers[i][1] = Math.max(writers[i][1], upTo); return; }
    }
    writers.push([who, upTo]);
  }
  function supersedes(list, mark) {
    var m = parseMark(mark);
    for (var i = 0; i < list.length; i++) {
      if (list[i][0] === m[0]) { return m[1] <= list[i][1]; }
    }
    return false;
  }
  function values() {
    var out = [];
    Array.prototype.forEach.call(fields(), function (el) {
      if (!choosable(el) || el.checked) { out.push([el.name, el.value]); }
    });
    return out;
  }
  function keep() {
    if (!storage || done) { return; }
    supersede(writer, edits);
    while (writers.length > MAX_WRITERS) {
      writers.splice(writers[0][0] === writer ? 1 : 0, 1);
    }
    try {
      storage.setItem(key, JSON.stringify({ writers: writers, fields: values() }));
    } catch (e) { /* storage full: the copy is stale, and its marks make the server win */ }
  }
  function forget() {
    if (!storage) { return; }
    try { storage.removeItem(key); } catch (e) { /* nothing kept */ }
  }
  function read() {
    if (!storage) { return null; }
    try {
      var copy = JSON.parse(storage.getItem(key));
      if (copy && Array.isArray(copy.writers) && Array.isArray(copy.fields)) {
        var pair = function (p) { return Array.isArray(p) && typeof p[0] === "string"; };
        copy.writers = copy.writers.filter(function (w) { return pair(w) && typeof w[1] === "number"; });
        copy.fields = copy.fields.filter(function (f) { return pair(f) && typeof f[1] === "string"; });
        return copy;
      }
    } catch (e) { /* unreadable: as if there were none */ }
    return null;
  }
  function forgetOtherPages() {
    if (!storage) { return; }
    try {
      for (var i = storage.length - 1; i >= 0; i--) {
        var other = storage.key(i);
        if (other && other.indexOf(studyKey) === 0 && other !== key) { storage.removeItem(other); }
      }
    } catch (e) { /* left as they are: never read by this page */ }
  }
  // Puts the copy's values into the form; whether anything changed. A field the participant is
  // already typing in (before this file arrived) is left alone.
  function putBack(list) {
    var want = {}; // name -> the values kept under it (a checkbox group keeps several)
    list.forEach(function (f) { (own(want, f[0]) ? want[f[0]] : (want[f[0]] = [])).push(f[1]); });
    var changed = false;
    Array.prototype.forEach.call(fields(), function (el) {
      if (el === document.activeElement && el.value !== el.defaultValue) { return; }
      if (choosable(el)) {
        var on = own(want, el.name) && want[el.name].indexOf(el.value) >= 0;
        if (el.checked !== on) { el.checked = on; changed = true; }
      } else if (own(want, el.name) && el.value !== want[el.name][0]) {
        el.value = want[el.name][0];
        changed = true;
      }
    });
    return changed;
  }

  // --- on load -----------------------------------------------------------------------------
  // The server's draft is what the page shows unless the tab's copy is newer: after a reload or
  // Back/Forward, undo a browser's own form restoration (autocomplete="off" should prevent it),
  // which would bring back an older text than either. A field the participant is already in
  // (typing before this file arrived) is left alone.
  var nav = window.performance && performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  if (nav && (nav.type === "reload" || nav.type === "back_forward")) {
    Array.prototype.forEach.call(fields(), function (el) {
      if (el === document.activeElement) { return; }
      if (choosable(el)) {
        el.checked = el.defaultChecked;
      } else if (el.value !== el.defaultValue) {
        el.value = el.defaultValue;
      }
    });
  }

  function formBody() {
    var data = new URLSearchParams();
    data.append("csrfmiddlewaretoken", hidden("csrfmiddlewaretoken"));
    data.append("token", hidden("token"));
    Array.prototype.forEach.call(fields(), function (el) {
      if (!choosable(el) || el.checked) { data.append(el.name, el.value); }
    });
    return data.toString();
  }

  // What the page shows came from the server: leaving it unchanged sends nothing (and so never
  // replaces a later draft that another tab of the same page kept).
  sent = formBody();
  var serverMark = form.getAttribute("data-draft-mark") || "";
  forgetOtherPages();
  var copy = read();
  var putBackNow = false;
  if (copy && supersedes(copy.writers, serverMark)) {
    writers = copy.writers; // oldest first, as MAX_WRITERS drops them
    putBackNow = putBack(copy.fields);
  } else if (copy) {
    forget(); // the server holds a later draft (another tab or device): its text wins
  }
  var base = parseMark(serverMark);
  supersede(base[0], base[1]);

  // --- sending -----------------------------------------------------------------------------
  function answered(text, status) {
    if (status === 204) {
      if (text === sent && timer === null) { state("saved"); }
      return;
    }
    if (status === 409 || status === 403) { forget(); done = true; state("stale"); return; }
    if (status === 429 || status >= 500) { if (text === sent) { sent = null; } state("failed"); return; }
    state("refused"); // 400 or 413: the same body would be refused again
  }

  function beacon(body) {
    var blob = new Blob([body], { type: "application/x-www-form-urlencoded" });
    if (navigator.sendBeacon && navigator.sendBeacon(url, blob)) { return; }
    sent = null;
  }

  function send(leaving) {
    clearTimeout(timer);
    timer = null;
    if (done) { return; }
    var text = formBody();
    if (text === sent) { return; }
    sent = text;
    state("saving");
    var body = text + "&draft_mark=" + encodeURIComponent(writer + "." + edits);
    if (!window.fetch) { beacon(body); return; }
    var request;
    try {
      request = fetch(url, {
        method: "POST",
        body: body,
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        credentials: "same-origin",
        redirect: "error",
        keepalive: leaving && body.length <= LEAVING_EVENTS_MAX_BYTES,
      });
    } catch (e) { // a keepalive request over the browser's budget
      beacon(body);
      return;
    }
    request.then(function (response) { answered(text, response.status); }, function () {
      if (text === sent) { sent = null; }
      if (!leaving) { state("failed"); }
    });
  }

  function later() {
    if (done) { return; }
    state("typing");
    clearTimeout(timer);
    timer = setTimeout(function () { send(false); }, DELAY_MS);
  }

  function edited() {
    if (done) { return; }
    edits += 1;
    keep();
    later();
  }

  state("ready");
  if (putBackNow) {
    // The copy is shown: keep it under this load's writer and send it at once, so that the
    // server holds it even if the tab is closed now.
    edits += 1;
    keep();
    send(false);
  }
  form.addEventListener("input", edited);
  form.addEventListener("change", edited);
  form.addEventListener("submit", function () { done = true; clearTimeout(timer); timer = null; forget(); });
  function leave() { send(true); }
  document.addEventListener("visibilitychange", function () { if (document.hidden) { leave(); } });
  document.addEventListener("freeze", leave);
  window.addEventListener("beforeunload", leave);
  window.addEventListener("pagehide", leave);
})();
