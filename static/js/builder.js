// The study builder's two small helpers. The pages work without them.
// 1. Unsaved input survives a reload and Back: every input writes the form's values to the
//    tab's sessionStorage, under the page's draft, section and draft version; the next load of
//    the same page at the same version puts them back (and says so). Submitting removes the copy.
//    A copy of an older version is dropped: the server's newer save wins.
// 2. The live pattern check: typing tokens asks the server how many texts of each group hold
//    them, on the texts in the boxes now (saved or not), as the validation counts them.
(function () {
  "use strict";
  var form = document.querySelector("form[data-builder]");
  if (!form || !window.sessionStorage) { return; }
  var key = "builder:" + form.getAttribute("data-builder");
  var version = form.getAttribute("data-version");

  function fields() {
    return Array.prototype.filter.call(form.elements, function (el) {
      return el.name && el.name !== "csrfmiddlewaretoken" && el.name !== "version" && el.type !== "file" &&
        el.type !== "submit" && el.type !== "hidden";
    });
  }
  function snapshot() {
    var values = {};
    fields().forEach(function (el) {
      var id = el.name + (el.type === "checkbox" || el.type === "radio" ? "=" + el.value : "");
      values[id] = (el.type === "checkbox" || el.type === "radio") ? el.checked : el.value;
    });
    return values;
  }
  function store() {
    try { sessionStorage.setItem(key, JSON.stringify({version: version, values: snapshot()})); } catch (e) { /* full */ }
  }
  function restore() {
    var raw = sessionStorage.getItem(key);
    if (!raw) { return; }
    var copy;
    try { copy = JSON.parse(raw); } catch (e) { sessionStorage.removeItem(key); return; }
    if (!copy || copy.version !== version) { sessionStorage.removeItem(key); return; }
    var changed = false;
    fields().forEach(function (el) {
      var id = el.name + (el.type === "checkbox" || el.type === "radio" ? "=" + el.value : "");
      if (!(id in copy.values)) { return; }
      if (el.type === "checkbox" || el.type === "radio") {
        if (el.checked !== copy.values[id]) { el.checked = copy.values[id]; changed = true; }
      } else if (el.value !== copy.values[id]) { el.value = copy.values[id]; changed = true; }
    });
    if (changed) { document.getElementById("builder-restored").hidden = false; }
  }
  restore();
  form.addEventListener("input", store);
  form.addEventListener("change", store);
  form.addEventListener("submit", function () { sessionStorage.removeItem(key); });
  window.addEventListener("pageshow", function (event) { if (event.persisted) { restore(); } });

  var checkUrl = form.getAttribute("data-pattern-check");
  if (!checkUrl || !window.fetch) { return; }
  function check(row) {
    var tokens = row.querySelector("input[name$='-tokens']");
    var out = row.querySelector("[data-pattern-count]");
    if (!tokens || !out) { return; }
    var body = new URLSearchParams();
    body.set("csrfmiddlewaretoken", form.elements.csrfmiddlewaretoken.value);
    body.set("tokens", tokens.value);
    body.set("group1", form.elements.group1.value);
    body.set("group2", form.elements.group2.value);
    var fmt = form.querySelector("input[name='text_format']:checked");
    body.set("text_format", fmt ? fmt.value : "lines");
    fetch(checkUrl, {method: "POST", body: body, credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) { if (data) { out.textContent = data.count; } })
      .catch(function () { /* the saved count stays */ });
  }
  var timer = null;
  form.addEventListener("input", function (event) {
    var row = event.target.closest(".pattern-row");
    var rows = row ? [row] : (/^group[12]$/.test(event.target.name) ? form.querySelectorAll(".pattern-row") : []);
    if (!rows.length) { return; }
    clearTimeout(timer);
    timer = setTimeout(function () { Array.prototype.forEach.call(rows, check); }, 400);
  });
}());
