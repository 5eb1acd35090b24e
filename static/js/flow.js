// Adds browser evidence to a task form: pastes, time with the tab hidden, focus lost.
// The flow works without this script; it only fills the hidden client_events field.
(function () {
  "use strict";
  var form = document.getElementById("answer-form");
  if (!form) { return; }
  var field = form.querySelector("input[name=client_events]");
  var answer = form.querySelector("textarea[name=answer]");
  var counter = document.getElementById("answer-counter");
  var t0 = Date.now();
  var state = { paste_count: 0, paste_chars: 0, hidden_ms: 0, blur_count: 0, events: [] };
  var hiddenSince = document.hidden ? Date.now() : null;
  var MAX_EVENTS = 200;

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
    var update = function () {
      if (counter && max) { counter.textContent = answer.value.length + " of at most " + max + " characters."; }
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
