// Participant pages. Three jobs, all optional for the flow (it works without JavaScript):
// 1. A page brought back from the browser's back-forward cache is an old step: reload it, so
//    the participant sees (and can only submit) the step they are on now.
// 2. After Back or Forward to a history entry that showed an earlier step, say that step is
//    saved and which one this is (participation/page_place.py).
// 3. On a task form (marked data-telemetry), add browser evidence to the hidden client_events
//    field: pastes, time with the tab hidden, focus lost; and keep the character counter.
// 4. The survey's error summary links to the first refused question's first option: show the
//    question's text with it, not only the option (the browser would scroll the option to the top).
// Its words come from the page, in the study's language (data-place-note on <main>,
// data-counter on the counter: patterns with {braces}), and numbers are written the way the
// page's language (<html lang>) writes them, so this file is the same for every study.
(function () {
  "use strict";
  function fill(pattern, values) {
    return pattern.replace(/\{(\w+)\}/g, function (all, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? values[name] : all;
    });
  }
  var numbers = null;
  try { numbers = new Intl.NumberFormat(document.documentElement.lang || undefined); } catch (e) { numbers = null; }
  function number(n) { return numbers ? numbers.format(n) : String(n); }

  window.addEventListener("pageshow", function (ev) {
    if (ev.persisted) { window.location.reload(); }
  });

  // Every step has one URL, so Back asks the server again and gets the current step. The
  // entry's history.state (kept by the browser, never sent) remembers the place the entry
  // showed last; a later place found there means the earlier step was submitted.
  var main = document.querySelector("main[data-place-order]");
  if (main && window.history && typeof history.replaceState === "function") {
    var here = { order: parseInt(main.getAttribute("data-place-order"), 10),
                 saved: main.getAttribute("data-place-saved") };
    var kept = (history.state && typeof history.state === "object") ? history.state : {};
    var was = kept.spotlightPlace;
    var note = document.getElementById("place-note");
    if (note && was && typeof was.order === "number" && typeof was.saved === "string" &&
        was.order < here.order) {
      var line = document.createElement("p");
      line.textContent = fill(main.getAttribute("data-place-note") || "{saved}; {here}.",
                              { saved: was.saved, here: main.getAttribute("data-place-here") });
      note.appendChild(line);
    }
    // Back to this entry shows whatever step is current then, so the browser must not put back
    // this page's scroll position (its submit button, far below a note): each visit starts at
    // the top. It is the entry's setting, so it is made on the first visit, before any Back.
    if ("scrollRestoration" in history) { history.scrollRestoration = "manual"; }
    var state = {};
    for (var key in kept) { if (Object.prototype.hasOwnProperty.call(kept, key)) { state[key] = kept[key]; } }
    state.spotlightPlace = here;
    try { history.replaceState(state, ""); } catch (e) { /* state too large or refused: no note */ }
  }

  var toFirstError = document.querySelector(".error-summary a[href^='#']");
  if (toFirstError) {
    toFirstError.addEventListener("click", function (ev) {
      var target = document.getElementById(toFirstError.getAttribute("href").slice(1));
      if (!target) { return; }
      ev.preventDefault();
      // The question (a radio button's .item), else the box's label: what the participant reads.
      var shown = target.closest(".item") || (target.labels && target.labels[0]) || target;
      shown.scrollIntoView({ block: "start" });
      target.focus({ preventScroll: true });
    });
  }

  var form = document.querySelector("form[data-telemetry]");
  if (!form) { return; }
  var field = form.querySelector("input[name=client_events]");
  var answer = form.querySelector("textarea[data-answer]");
  var counter = document.getElementById("answer-counter");
  var t0 = Date.now();
  var state = { paste_count: 0, paste_chars: 0, hidden_ms: 0, blur_count: 0, events: [] };
  var MAX_EVENTS = 200;

  // After a refused submit the server sends back what this page had recorded so far; continue
  // from it so that, e.g., a paste before an over-long answer is not forgotten.
  if (field && field.value) {
    try {
      var kept = JSON.parse(field.value);
      ["paste_count", "paste_chars", "hidden_ms", "blur_count"].forEach(function (k) {
        if (typeof kept[k] === "number" && kept[k] > 0) { state[k] = kept[k]; }
      });
      if (Array.isArray(kept.events)) { state.events = kept.events.slice(0, MAX_EVENTS); }
      // Event times stay relative to the first load of this task page.
      var last = state.events.length ? state.events[state.events.length - 1].t : 0;
      if (typeof last === "number" && last > 0) { t0 -= last; }
    } catch (e) { /* malformed: start afresh */ }
  }
  var hiddenSince = document.hidden ? Date.now() : null;

  function log(type, extra) {
    if (state.events.length >= MAX_EVENTS) { return; }
    var e = { t: Date.now() - t0, type: type };
    if (extra) { for (var k in extra) { e[k] = extra[k]; } }
    state.events.push(e);
  }
  function save() {
    var snapshot = JSON.parse(JSON.stringify(state));
    if (hiddenSince !== null) { snapshot.hidden_ms += Date.now() - hiddenSince; }
    if (field) { field.value = JSON.stringify(snapshot); }
  }
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) {
      hiddenSince = Date.now();
      log("hidden");
    } else if (hiddenSince !== null) {
      state.hidden_ms += Date.now() - hiddenSince;
      hiddenSince = null;
      log("visible");
    }
    save();
  });
  window.addEventListener("blur", function () { state.blur_count += 1; log("blur"); save(); });
  if (answer) {
    answer.addEventListener("paste", function (ev) {
      var text = (ev.clipboardData || window.clipboardData).getData("text") || "";
      state.paste_count += 1;
      state.paste_chars += text.length;
      log("paste", { chars: text.length });
      save();
    });
    var max = parseInt(answer.getAttribute("maxlength") || "0", 10);
    // number() writes the counter's numbers as the limit line above it does ("5,000" in English,
    // "5.000" in German): the same limit must not appear in two formats.
    var update = function () {
      if (counter && max) {
        counter.textContent = fill(counter.getAttribute("data-counter") || "{count} / {max}",
                                   { count: number(answer.value.length), max: number(max) });
      }
    };
    answer.addEventListener("input", update);
    update();
  }
  var submitted = false;
  form.addEventListener("submit", function (ev) {
    // A second click while the first submit is under way would only be ignored by the server.
    if (submitted) { ev.preventDefault(); return; }
    submitted = true;
    save();
  });
  save();
})();
