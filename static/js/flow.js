// Participant pages. Three jobs, all optional for the flow (it works without JavaScript):
// 1. A page brought back from the browser's back-forward cache is an old step: reload it, so
//    the participant sees (and can only submit) the step they are on now.
// 2. After Back or Forward to a history entry that showed an earlier step, say that step is
//    saved and which one this is (participation/page_place.py).
// 3. On a task form (marked data-telemetry), add browser evidence to the hidden client_events
//    field: pastes, time with the tab hidden, focus lost, and how the text came into the box,
//    from each input event's inputType (typed, pasted, dropped, inserted otherwise), never the
//    keys themselves; and keep the character counter. Nothing is sent while typing: the field
//    is filled in on submit (and when the page is hidden), so a keystroke costs no request.
// 5. An info page's minimum time (data-wait-seconds): count the "you can continue in N seconds"
//    line down each second and hide it at zero; the server still refuses an early Continue.
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
  // Numbers as the server writes them on this page: the counter's data-number-sample is one
  // million in the page's language ("1,000,000", "1.000.000", "1000000"), so the counter and the
  // limit line never differ; the browser's Intl data and Django's formats disagree for some
  // languages (Spanish "5000" against "5 000", Arabic "5,000" against "5000").
  function number(n) {
    var el = document.querySelector("[data-number-sample]");
    var sample = el ? el.getAttribute("data-number-sample") || "" : "";
    var digits = String(n);
    if (sample.length <= 7) { return digits; }
    return digits.replace(/\B(?=(\d{3})+(?!\d))/g, sample.charAt(1));
  }

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

  var wait = document.querySelector("[data-wait-seconds]");
  if (wait) {
    var left = parseInt(wait.getAttribute("data-wait-seconds") || "0", 10);
    var tick = function () {
      left -= 1;
      if (left <= 0) { wait.hidden = true; return; }
      wait.textContent = fill(wait.getAttribute(left === 1 ? "data-wait-one" : "data-wait-many") || "",
                              { n: number(left) });
      window.setTimeout(tick, 1000);
    };
    if (left > 0) { window.setTimeout(tick, 1000); }
  }
  var form = document.querySelector("form[data-telemetry]");
  if (!form) { return; }
  var field = form.querySelector("input[name=client_events]");
  var answer = form.querySelector("textarea[data-answer]");
  var counter = document.getElementById("answer-counter");
  var t0 = Date.now();
  var state = { paste_count: 0, paste_chars: 0, hidden_ms: 0, blur_count: 0, events: [],
                typed_chars: 0, dropped_chars: 0, replaced_chars: 0, insertions: 0, deletions: 0,
                typing_ms: 0, largest_insert_chars: 0, away_before_paste_ms: 0 };
  var COUNTS = ["paste_count", "paste_chars", "hidden_ms", "blur_count", "typed_chars",
                "dropped_chars", "replaced_chars", "insertions", "deletions", "typing_ms",
                "largest_insert_chars", "away_before_paste_ms"];
  var MAX_EVENTS = 200;
  // A gap between keystrokes longer than this is a pause, not typing time.
  var PAUSE_MS = 2000;
  // A keystroke inserts one character (two for a surrogate pair, a dead key's pair); more at
  // once is a block (autocomplete, dictation, a script).
  var TYPED_BLOCK_MAX = 3;
  // A paste this soon after the participant came back to the page follows their time away.
  var RECENT_AWAY_MS = 30000;

  // After a refused submit the server sends back what this page had recorded so far; continue
  // from it so that, e.g., a paste before an over-long answer is not forgotten.
  if (field && field.value) {
    try {
      var kept = JSON.parse(field.value);
      COUNTS.forEach(function (k) {
        if (typeof kept[k] === "number" && kept[k] > 0) { state[k] = kept[k]; }
      });
      if (Array.isArray(kept.events)) { state.events = kept.events.slice(0, MAX_EVENTS); }
      // Event times stay relative to the first load of this task page.
      var last = state.events.length ? state.events[state.events.length - 1].t : 0;
      if (typeof last === "number" && last > 0) { t0 -= last; }
    } catch (e) { /* malformed: start afresh */ }
  }
  var hiddenSince = document.hidden ? Date.now() : null;
  // Away: the tab hidden or the window without focus (another window in front of it).
  var awaySince = null;
  var lastAway = null; // { ms: length of the last time away, back: when it ended }
  function awayStarts() { if (awaySince === null) { awaySince = Date.now(); } }
  function awayEnds() {
    if (awaySince === null || document.hidden) { return; }
    lastAway = { ms: Date.now() - awaySince, back: Date.now() };
    awaySince = null;
  }

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
      awayStarts();
      log("hidden");
    } else if (hiddenSince !== null) {
      state.hidden_ms += Date.now() - hiddenSince;
      hiddenSince = null;
      awayEnds();
      log("visible");
    }
    save();
  });
  window.addEventListener("blur", function () { state.blur_count += 1; awayStarts(); log("blur"); save(); });
  window.addEventListener("focus", function () { awayEnds(); });
  if (answer) {
    answer.addEventListener("paste", function (ev) {
      var data = ev.clipboardData || window.clipboardData;
      var text = (data && data.getData("text")) || "";
      state.paste_count += 1;
      state.paste_chars += text.length;
      awayEnds();
      if (lastAway && Date.now() - lastAway.back <= RECENT_AWAY_MS && lastAway.ms > state.away_before_paste_ms) {
        state.away_before_paste_ms = lastAway.ms;
      }
      log("paste", { chars: text.length });
      save();
    });
    // How each change came: beforeinput sees the box before it (its length and selection, which
    // the change replaces), input after it; the difference is what was inserted.
    var lastLen = answer.value.length;
    var before = null;
    var lastKeyAt = null;
    var keystroke = function (now) {
      if (lastKeyAt !== null && now - lastKeyAt <= PAUSE_MS) { state.typing_ms += now - lastKeyAt; }
      lastKeyAt = now;
    };
    answer.addEventListener("beforeinput", function () {
      before = { len: answer.value.length, sel: Math.abs((answer.selectionEnd || 0) - (answer.selectionStart || 0)) };
    });
    answer.addEventListener("input", function (ev) {
      var type = typeof ev.inputType === "string" ? ev.inputType : "";
      var len = answer.value.length;
      var inserted = Math.max(0, len - (before ? before.len - before.sel : lastLen));
      before = null;
      lastLen = len;
      var now = Date.now();
      if (type.indexOf("delete") === 0) { state.deletions += 1; keystroke(now); return; }
      if (inserted === 0) { return; }
      state.insertions += 1;
      if (inserted > state.largest_insert_chars) { state.largest_insert_chars = inserted; }
      if (type === "insertFromPaste" || type === "insertFromPasteAsQuotation") {
        return; // counted by the paste event
      }
      if (type === "insertFromDrop") {
        state.dropped_chars += inserted;
        log("drop", { chars: inserted });
      } else if ((type === "insertText" || type === "insertLineBreak" || type === "insertParagraph" ||
                  type === "insertCompositionText") && inserted <= TYPED_BLOCK_MAX) {
        state.typed_chars += inserted;
        keystroke(now);
      } else {
        // Autocomplete, spelling replacement, dictation, undo of a deletion, a script.
        state.replaced_chars += inserted;
        log("insert", { chars: inserted });
      }
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
